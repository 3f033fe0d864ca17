# MicroPython only: the board's web server's core (shove/httpd.py) in the
# unix port, over real loopback sockets, on a clock the test moves (step's
# `now`): its deadline, a request held back, a stream that falls behind,
# and an idle step that allocates nothing. The routes' end of it runs on
# the virtual board in tests/test_board_web.py.
import gc
import socket
import sys
import time

from shove import httpd, httpreq


def _server():
    """A server on a free port of 127.0.0.1 (the unix port has no getsockname: ports are tried)."""
    base = 20000 + time.ticks_us() % 20000
    for i in range(50):
        try:
            srv = httpd.Server(("127.0.0.1", base + i), lambda: None)
        except OSError:
            continue
        srv.port = base + i
        return srv
    raise AssertionError("no free port")


def _client(srv):
    s = socket.socket()
    s.connect(socket.getaddrinfo("127.0.0.1", srv.port)[0][-1])
    s.setblocking(False)
    return s


def _read(s, srv, now, steps=200, each=None):
    """What the server sent on s, stepping it until its answer is whole (its head and Content-Length bytes),
    the board's clock a ms on at each step from `now` (a request still arriving is read every httpd._WAIT_MS);
    each() after every step."""
    got = b""
    for i in range(steps):
        srv.step(now + i)
        if each is not None:
            each()
        try:
            b = s.recv(4096)
        except OSError:
            b = None
        if b:
            got += b
        i = got.find(b"\r\n\r\n")
        if i >= 0:
            head = got[:i].decode()
            n = 0
            for line in head.split("\r\n"):
                if line.lower().startswith("content-length:"):
                    n = int(line.split(":")[1])
            if len(got) >= i + 4 + n:
                return got
        time.sleep_ms(1)
    return got


def _until(srv, now, cond, steps=200):
    for i in range(steps):
        srv.step(now + i)
        if cond():
            return True
        time.sleep_ms(1)
    return False


def _served(srv, now=1000):
    """One request answered and its client gone: the server's request code loaded and kept."""
    srv.route("/", lambda req, now: req.reply(200, '"hi"'))
    s = _client(srv)
    s.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _read(s, srv, now).startswith(b"HTTP/1.1 200 ")
    s.close()
    assert _until(srv, now, lambda: srv.slots[0].state == httpd.FREE)


def test_a_slow_sender_is_told_408_at_the_deadline_on_the_boards_clock():
    srv = _server()
    try:
        s = _client(srv)
        s.send(b"GET / HTTP/1.1\r\nHo")
        assert _until(srv, 1000, lambda: srv.slots[0].n > 0)
        srv.step(1000 + httpd.DEADLINE_MS - 1)
        assert srv.slots[0].state == httpd.HEAD  # not yet
        got = _read(s, srv, 1000 + httpd.DEADLINE_MS)
        assert got.startswith(b"HTTP/1.1 408 ") and b'"too_slow"' in got, got
        assert srv.slow == 1
        s.close()
    finally:
        srv.close()


def test_a_request_held_back_is_answered_once_let_go():
    srv = _server()
    calls = []
    srv.route("/x", lambda req, now: (calls.append(bytes(req.body)), req.reply(200, "{}")), ("POST",))
    held = [True]
    srv.hold = lambda req: held[0]
    try:
        s = _client(srv)
        s.send(b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi")
        assert _until(srv, 0, lambda: srv.slots[0].state == httpd.BODY and srv.slots[0].n >= srv.slots[0].need)
        for _ in range(5):
            srv.step(0)
        assert calls == [] and srv.slots[0].state == httpd.BODY
        held[0] = False
        got = _read(s, srv, 0)
        assert got.startswith(b"HTTP/1.1 200 ") and calls == [b"hi"], got
        s.close()
    finally:
        srv.close()


def test_a_stream_that_falls_behind_is_closed_and_its_lines_are_not_copied():
    srv = _server()
    srv.route("/s", lambda req, now: req.stream("{}", now))
    try:
        s = _client(srv)
        s.send(b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
        assert _until(srv, 0, lambda: srv.slots[0].state == httpd.STREAM)
        line = '{"ev":"dart","seg":"T5"}' + " " * 1000
        c = srv.slots[0]
        gc.collect()
        before = gc.mem_alloc()
        srv.event(line)
        assert gc.mem_alloc() - before < 200  # a view of the line itself, no copy of its 1 KB
        assert bytes(c.out[-2]) == line.encode()
        for _ in range(httpd.QUEUE_MAX // len(line) + 2):
            srv.event(line)  # the client reads nothing and the server is not stepped meanwhile
        assert c.state == httpd.FREE and srv.overflows == 1
        s.close()
    finally:
        srv.close()


def test_an_idle_step_with_a_stream_and_a_listener_allocates_nothing():
    srv = _server()
    srv.route("/s", lambda req, now: req.stream("{}", now))
    try:
        s = _client(srv)
        s.send(b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
        assert _until(srv, 0, lambda: srv.slots[0].state == httpd.STREAM and not srv.slots[0].out)
        for _ in range(3):
            srv.step(1)
        gc.collect()
        before = gc.mem_alloc()
        for _ in range(100):
            srv.step(1)
        assert gc.mem_alloc() == before
        s.close()
    finally:
        srv.close()


def test_a_stream_gives_its_buffer_back_and_a_client_with_none_left_waits_its_turn():
    srv = _server()
    srv.route("/s", lambda req, now: req.stream("{}", now))
    srv.route("/a", lambda req, now: req.reply(200, "{}"))
    try:
        st = _client(srv)
        st.send(b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
        assert _until(srv, 0, lambda: srv.slots[0].state == httpd.STREAM)
        assert len(srv.pool) == httpd.BUFFERS  # the stream's buffer is back: it sends its queue
        a, b = _client(srv), _client(srv)
        a.send(b"GET /a HTTP/1.1\r\nHo")  # two requests under way hold both buffers
        b.send(b"GET /a HTTP/1.1\r\nHo")
        assert _until(srv, 0, lambda: srv.accepted == 3 and not srv.pool)
        c = _client(srv)
        c.send(b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
        for _ in range(20):
            srv.step(0)
        assert srv.accepted == 3 and srv.refused == 0  # not refused: waiting for a buffer
        a.send(b"st: h\r\n\r\n")
        assert _read(a, srv, 0).startswith(b"HTTP/1.1 200 ")
        a.close()
        assert _read(c, srv, 0).startswith(b"HTTP/1.1 200 ")  # its turn came
        for s in (b, c, st):
            s.close()
    finally:
        srv.close()


def test_the_request_code_stays_loaded_five_seconds_after_the_last_request_then_goes():
    """A module's load from the flash is tens of ms on the chip with no read of the
    matrix: httpreq is kept for a page's next file or a player's next command, and let
    go once no request has been under way for 5 s of the board's clock (httpd's _KEEP_MS)."""
    srv = _server()
    try:
        _served(srv)
        assert "shove.httpreq" in sys.modules and srv.loaded
        last = srv.asked  # the last step with a request under way
        srv.step(last + 4999)
        assert "shove.httpreq" in sys.modules and srv.loaded  # kept
        srv.step(last + 5000)
        assert "shove.httpreq" not in sys.modules and not srv.loaded  # let go
        s = _client(srv)  # and loaded again for the next request
        s.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _read(s, srv, last + 6000).startswith(b"HTTP/1.1 200 ")
        assert "shove.httpreq" in sys.modules
        s.close()
    finally:
        srv.close()


def test_the_servers_kept_code_is_not_let_go_by_anothers_release_until_the_server_lets_it_go():
    """While the server keeps its request code, a release from elsewhere leaves it: a
    state built for a serial line or a dart's event lets view go (Keeper.state), and
    view is also the server's (a snapshot's). Before, it went, and the server's next
    request loaded it again: some 35 ms of the chip's with no read of the matrix,
    mid-visit, where a tracer found the darts lost under web load (shove.keep)."""
    import shove

    srv = _server()
    srv.lazy = ("httpreq", "view")  # as the game's routes keep it (webroutes: httpreq, webpage, webgate, view)
    try:
        _served(srv)
        from shove import view  # noqa: F401  (the snapshot's builder, loaded as a request's answer loads it)

        shove.release("view", "httpreq")  # a line's, a state's
        assert "shove.view" in sys.modules and "shove.httpreq" in sys.modules  # the server's: kept
        shove.release("rules_probe_not_loaded")  # (others go as before: nothing to keep there)
        srv.step(srv.asked + 5000)  # the server lets its code go (no request for 5 s) ...
        assert "shove.view" not in sys.modules and "shove.httpreq" not in sys.modules
        from shove import view  # noqa: F401,F811

        shove.release("view")  # ... and from then on a release lets it go at once
        assert "shove.view" not in sys.modules
    finally:
        srv.close()
        shove.keep(())
    assert shove.KEPT == ()


def test_a_light_command_runs_beside_the_kept_request_code_and_any_other_lets_it_go():
    """Before a command runs, the request code is let go for its room (let_go_for),
    unless the command is one of the routes' light ones (webroutes.LIGHT: a state,
    the LEDs, the hello, which a page or `hapenny play` asks for after each dart):
    letting it go made the next request load it again, some 35 ms of the chip's with
    no read of the matrix, just after a dart."""
    from shove import webroutes

    srv = _server()
    srv.light = webroutes.LIGHT
    try:
        _served(srv)
        assert srv.loaded
        for line in (b'{"cmd":"state","id":3}', b'{"cmd":"leds","id":4}', b'{"cmd":"info"}'):
            assert srv.let_go_for(line) is False and srv.loaded and "shove.httpreq" in sys.modules, line
        # a light one spelt otherwise (spaces): let go, as any other command
        assert srv.let_go_for(b'{"cmd": "state", "id": 5}') is True and not srv.loaded
        assert "shove.httpreq" not in sys.modules
    finally:
        srv.close()


def test_a_request_still_arriving_is_read_again_no_sooner_than_10_ms_after_a_read_that_found_nothing():
    """A read is a select and a recv in lwIP (some 0.3 ms on the chip): a slow or silent client
    is not read at every step while the streams' output makes the loop step the server every round."""
    srv = _server()
    srv.route("/", lambda req, now: req.reply(200, "{}"))
    try:
        s = _client(srv)
        s.send(b"GET / HTTP/1.1\r\nHo")
        assert _until(srv, 1000, lambda: srv.slots[0].n > 0)
        c = srv.slots[0]
        srv.step(2000)  # a read that finds nothing
        assert c.state == httpd.HEAD and c.look == 2000
        s.send(b"st: h\r\n\r\n")  # the rest of the request, on the loopback at once
        time.sleep_ms(5)
        srv.step(2009)
        assert c.state == httpd.HEAD and c.look == 2000  # not read yet
        srv.step(2010)
        assert c.state not in (httpd.HEAD, httpd.BODY)  # read, and answered
        assert _read(s, srv, 2011).startswith(b"HTTP/1.1 200 ")
        s.close()
    finally:
        srv.close()


def test_the_request_code_has_the_cores_figures():
    """httpreq keeps copies of the core's figures (the core loads it: no import back)."""
    for name in ("HEAD_MAX", "BODY_MAX", "DEADLINE_MS", "HEAD", "BODY", "SEND", "STREAM", "EV_SNAPSHOT"):
        assert getattr(httpreq, name) == getattr(httpd, name), name


def test_a_requests_code_is_loaded_a_module_a_step_before_it_is_answered():
    # srv.needs(req): the lazy modules its answer needs, each imported in a server step of its
    # own (the collector frees each one's loading garbage before the next); the answer after
    from shove import release

    srv = _server()
    release("extra", "fault")
    srv.lazy = ("httpreq", "extra", "fault")
    srv.needs = lambda req: ("extra", "fault") if req.path == "/x" else ()
    answered = []

    def route(req, now):
        answered.append(("shove.extra" in sys.modules, "shove.fault" in sys.modules))
        req.reply(200, "{}")

    srv.route("/x", route)
    try:
        s = _client(srv)
        s.send(b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
        seen = []
        for i in range(200):
            srv.step(i)
            seen.append(("shove.extra" in sys.modules, "shove.fault" in sys.modules, len(answered)))
            if answered:
                break
            time.sleep_ms(1)
        assert answered == [(True, True)]
        # one module loaded in a step, the other in the next, the answer in the one after
        first = [x for x in seen if x[0]][0]
        assert first == (True, False, 0) and seen[-2] == (True, True, 0) and seen[-1] == (True, True, 1), seen
        s.close()
    finally:
        srv.close()
        release("extra", "fault")


class _Logged:
    """The listener, its accept() logged; what it accepts logged too (_LoggedConn)."""

    def __init__(self, s, log):
        self.s = s
        self.log = log

    def accept(self):
        s, peer = self.s.accept()
        self.log.append("accept")
        return _LoggedConn(s, self.log), peer

    def close(self):
        self.s.close()


class _LoggedConn:
    def __init__(self, s, log):
        self.s = s
        self.log = log

    def setblocking(self, flag):
        self.log.append("setblocking")
        self.s.setblocking(flag)

    def readinto(self, *a):
        self.log.append("readinto")
        return self.s.readinto(*a)

    def write(self, *a):
        return self.s.write(*a)

    def close(self):
        self.log.append("close")
        self.s.close()


def test_each_call_into_the_network_stack_that_begins_or_ends_a_connection_has_a_read_of_the_matrix_beside_it():
    """On the chip each is lwIP's (a message to its task and back): the
    bytecode around it and the call together left the matrix unread for
    more than a 0.5 ms contact (the web load's misses, docs/performance.md)."""
    log = []
    srv = _server()
    srv.tick = lambda: log.append("read")
    srv.sock = _Logged(srv.sock, log)
    try:
        _served(srv)
        i = log.index("accept")
        assert log[i:i + 4] == ["accept", "read", "setblocking", "read"], log
        assert log[log.index("readinto") - 1] == "read", log  # the request's first read
        assert log[log.index("close") - 1] == "read", log
    finally:
        srv.close()

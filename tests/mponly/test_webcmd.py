# MicroPython only: a page's command (POST /api/cmd, shove/webroutes.py's
# Routes.command) runs a piece a server step: the requests' code let go
# while it runs, the command's own code loaded, its answer the reply the
# serial port's handlers give, its events to the console as for a line.
import json
import socket
import sys

from test_alloc import _with_app
from test_httpd import _read, _server

from shove import httpd

CODE = "1234567891"
LAZY = ("shove.httpreq", "shove.webpage", "shove.webgate", "shove.view")


class Net:
    """The network's join, as the routes read it (shove/wifi.py's Joiner)."""
    name = "dartboard"
    code = CODE
    address = "127.0.0.1"

    def report(self):
        return {"state": "joined"}


def _post(srv, body):
    s = socket.socket()
    s.connect(socket.getaddrinfo("127.0.0.1", srv.port)[0][-1])
    s.setblocking(False)
    s.send(b"POST /api/cmd HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Hapenny-Code: %s\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (CODE.encode(), len(body), body))
    return s


def _answer(srv, body, first, each):
    """POST body, stepping the server (from step number `first`) until its answer is whole,
    each() after every step: the reply."""
    s = _post(srv, body)
    got = _read(s, srv, first, 400, each)
    s.close()
    head, text = got.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 "), head
    return json.loads(text)


def test_a_pages_command_runs_a_piece_a_step_with_the_requests_code_let_go():
    from shove import webroutes

    def body(a, row, col):
        srv = _server()
        sent = []
        put = a.tx.put
        a.tx.put = lambda ln: (sent.append(ln if isinstance(ln, str) else "".join(ln)), put(ln))
        try:
            w = webroutes.Routes(a.commands, Net(), srv)
            a.commands.web = srv
            seen = []  # at each step: the slot's state, the requests' code loaded, a command pending
            reply = _answer(srv, b'{"cmd":"new","players":["Ann","Bob"],"variant":"classic","id":7}', 0,
                            lambda: seen.append((srv.slots[0].state, [m for m in LAZY if m in sys.modules],
                                                 w.pending is not None)))
            assert reply["ok"] is True and reply["id"] == 7 and [x["name"] for x in reply["state"]["sides"]] == ["Ann", "Bob"]
            # its event went to the console, as a serial line's does
            assert any('"ev":"new"' in ln for ln in sent), sent
            running = [x for x in seen if x[0] == httpd.RUN]
            assert len(running) >= 3  # let go, its code loaded, run: a step each
            assert any(x[1] == [] for x in running)  # the requests' code let go while it ran
        finally:
            a.commands.web = None
            srv.close()

    _with_app(body)


def test_a_links_first_hello_runs_through_the_handlers_and_is_kept_the_next_answered_at_once():
    # (webgate.READS: `info` made in the request's own step loaded its module beside the
    # requests' code, more than a network update's first step could take on the chip's heap)
    from shove import webgate, webroutes

    assert webroutes.INFO == webgate.READS[0]

    def body(a, row, col):
        srv = _server()
        try:
            w = webroutes.Routes(a.commands, Net(), srv)
            a.commands.web = srv
            ran = []  # the steps its slot waited in RUN, its command handed over
            first = _answer(srv, webroutes.INFO, 0, lambda: ran.append(srv.slots[0].state == httpd.RUN))
            assert sum(ran) >= 3 and first["ok"] is True and first["board"]  # handed over: its steps in RUN
            assert w.info is not None and "wifi" not in w.info
            ran = []
            again = _answer(srv, webroutes.INFO, 1000, lambda: ran.append(srv.slots[0].state == httpd.RUN))
            assert sum(ran) == 0 and again["wifi"] == Net().report()  # kept: answered at once, the route's network
            again.pop("wifi")
            first.pop("wifi")  # (the handlers' from the board's own join: none here)
            assert again == first
        finally:
            a.commands.web = None
            srv.close()

    _with_app(body)

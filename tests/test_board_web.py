"""The board's own web server (firmware/shove/httpd.py, webroutes.py) on a
virtual board that has joined its virtual network: real loopback sockets to
the firmware running in the MicroPython unix port, the serial port beside
them. Every wait is for a condition (a reply, an event, a figure of the
board's `stats`); the board's deadlines (a slow request, the code's lock, a
stream's ping) are reached by moving the board's clock on (the test bench's
`advance`), never by sleeping.

One board for the file; the requests are raw HTTP/1.1 on sockets, as a
browser sends them, so that every header is the test's own."""
import gzip
import io
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hapenny import firmware
from hapenny.connect import connect
from boardsite import connect_when_up, until
from hapenny.sim.board import VirtualBoard

BIN = Path(sys.executable).parent
KEY = "correct-horse-battery"
HOME = {"home": {"key": KEY, "rssi": -57, "addr": "127.0.0.1"}}
TIMES = {"join_ms": 200, "refuse_ms": 200, "scan_ms": 200, "beacon_ms": 2000}
WAIT = 30.0  # generous: a loaded host slows the board with it
STATIC = firmware.STATIC


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


def read_answer(s):
    """One HTTP answer read off socket s: its head, then Content-Length bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(4096)
        assert got, "closed before an answer: %r" % data
        data += got
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", 0))
    while len(body) < n:
        got = s.recv(4096)
        assert got, "closed mid-answer"
        body += got
    return Answer(status, headers, body)


class Board:
    def __init__(self):
        self.log = io.BytesIO()  # every byte the board wrote to its serial port
        self.vb = VirtualBoard(fast=True, log=self.log).start()
        self.vb.air(HOME, TIMES)
        self.open()
        self.link.request("wifi", set={"ssid": "home", "key": KEY, "name": "dartboard"})
        end = time.monotonic() + WAIT
        while True:
            w = self.link.request("wifi")["wifi"]
            if w["state"] == "joined" and self.web() is not None:
                break
            assert time.monotonic() < end, w
            time.sleep(0.1)
        self.code = w["code"]
        self.host = "127.0.0.1:%d" % self.vb.web_port

    def open(self):
        self.link, self.info, self.ser = connect_when_up(self.vb.port)

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def web(self):
        return self.req("stats")["stats"]["web"]

    def until(self, what, cond):
        return until(what, self.web, cond)

    def connect(self):
        VirtualBoard.host_sends += 1  # the board's firmware is driven through this socket (the suite's summary)
        return socket.create_connection(("127.0.0.1", self.vb.web_port), timeout=WAIT)

    def http(self, method, path, body=None, headers=None, host=True, raw=None):
        """One request on a connection of its own; the answer."""
        if raw is None:
            h = {"Host": self.host} if host is True else ({"Host": host} if host else {})
            h.update(headers or {})
            if body is not None:
                h.setdefault("Content-Length", str(len(body)))
            raw = ("%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h.items())
                   + "\r\n").encode() + (body or b"")
        with self.connect() as s:
            s.sendall(raw)
            return read_answer(s)

    def cmd(self, obj, code=True, ctype="application/json", **headers):
        h = {"Content-Type": ctype}
        if code is True:
            h["X-Hapenny-Code"] = self.code
        elif code:
            h["X-Hapenny-Code"] = code
        h.update(headers)
        return self.http("POST", "/api/cmd", json.dumps(obj).encode(), h)

    def stream(self):
        return Stream(self)

    def dart(self, seg):
        """A dart at `seg`, closed at the matrix: the scanner finds it."""
        cells = {s: (r, c) for r, c, s in self.req("map")["cells"]}
        self.vb.wait_rearmed(WAIT)
        r, c = cells[seg]
        self.req("press", row=r, col=c, ms=30)


class Stream:
    """GET /api/events: the events as (name, data) in order."""

    def __init__(self, board):
        self.s = board.connect()
        self.s.sendall(("GET /api/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n"
                        % board.host).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            got = self.s.recv(4096)
            assert got, self.buf
            self.buf += got
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.head = head.decode()

    def next(self):
        while True:
            while b"\n\n" not in self.buf:
                got = self.s.recv(4096)
                assert got, "the stream ended"
                self.buf += got
            block, self.buf = self.buf.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.decode().split("\n"))
            if "event" in fields:
                return fields["event"], json.loads(fields["data"])

    def until(self, name, cond=lambda d: True):
        while True:
            ev, data = self.next()
            if ev == name and cond(data):
                return data

    def close(self):
        self.s.close()


@pytest.fixture(scope="module")
def board():
    b = Board()
    yield b
    b.ser.close()
    b.vb.stop()


@pytest.mark.parametrize("path, name, ctype", [("/", "index.html", "text/html"),
                                                ("/static/app.js", "app.js", "text/javascript"),
                                                ("/static/style.css", "style.css", "text/css")])
def test_the_page_comes_gzipped_from_the_flash_as_deploy_put_it(board, path, name, ctype):
    a = board.http("GET", path)
    assert a.status == 200 and a.headers["content-encoding"] == "gzip", a.headers
    assert a.headers["content-type"].startswith(ctype)
    assert a.body == firmware.gzipped((STATIC / name).read_bytes())  # the bytes deploy wrote
    assert gzip.decompress(a.body) == (STATIC / name).read_bytes()  # the page's own files


@pytest.mark.parametrize("path", ["/static/nope.js", "/static/../wifi.json", "/static/", "/wifi.json", "/favicon.ico"])
def test_anything_else_is_not_found(board, path):
    a = board.http("GET", path)
    assert a.status == 404 and a.json()["ok"] is False


def test_the_snapshot_is_what_the_serial_port_says(board):
    board.req("new", players=["Ann", "Bob"])
    snap = board.http("GET", "/api/snapshot").json()
    assert set(snap) == {"connected", "info", "config", "state", "visit", "last"}
    assert snap["connected"] is True and snap["visit"] == [] and snap["last"] is None
    info = board.req("info")
    assert snap["info"] == {k: v for k, v in info.items() if k not in ("id", "ok")}
    assert snap["info"]["wifi"]["state"] == "joined" and "code" not in snap["info"]["wifi"]
    assert snap["config"] == board.req("config")["config"]
    assert snap["state"] == board.req("state")["state"]
    assert [side["name"] for side in snap["state"]["sides"]] == ["Ann", "Bob"]


def test_a_network_links_reads_are_the_serial_ports_replies(board):
    """What a link over the network asks most (its hello, the state, the LEDs: webgate.READS, answered by
    the route without the handlers' code) is what the serial port answers; another form of the same
    command goes through the handlers and answers alike."""
    from hapenny.netlink import HttpTransport, parse_address

    board.req("new", players=["Ann", "Bob"])
    board.req("throw", seg="T5")
    t = HttpTransport(parse_address("http://%s" % board.host), code=board.code, events=False)
    try:
        for cmd in ("info", "state", "leds"):
            before = board.req(cmd)
            net, other = t.post({"cmd": cmd}), t.post({"cmd": cmd, "id": 7})
            after = board.req(cmd)
            assert other.pop("id") == 7 and net.pop("id") is None
            for usb in (before, after):
                usb.pop("id")
            assert net in (before, after) and other in (before, after), cmd
    finally:
        t.close()


def test_access_says_whether_the_page_may_play(board):
    assert board.http("GET", "/api/access").json() == {"ok": True, "code_needed": True, "play": False}
    a = board.http("GET", "/api/access", headers={"X-Hapenny-Code": board.code})
    assert a.json() == {"ok": True, "code_needed": True, "play": True}


def test_a_command_with_the_code_goes_through_the_serial_ports_handlers(board):
    board.req("new", players=["Ann", "Bob"])
    board.link.events.clear()
    a = board.cmd({"cmd": "throw", "seg": "T5"})
    assert a.status == 200
    rep = a.json()
    assert rep["ok"] is True and rep["id"] is None and rep["state"]["visit"][0][0] == "T5"
    ev = board.link.wait_event("dart", WAIT)  # its event went to the serial port too
    assert ev["seg"] == "T5" and ev["src"] == "host"
    assert board.req("state")["state"] == rep["state"]
    bad = board.cmd({"cmd": "throw", "seg": "T99"}).json()  # the board's refusal: HTTP 200, its reply as is
    assert bad["ok"] is False and bad["error"] == "bad_seg"


def test_a_command_without_the_code_changes_nothing(board):
    before = board.req("state")["state"]
    for code in (None, ""):
        a = board.cmd({"cmd": "undo"}, code=code)
        assert a.status == 403 and a.json()["error"] == "pairing"
    assert board.req("state")["state"] == before


@pytest.mark.parametrize("name", ["wifi", "reset", "diag", "press"])
def test_usb_only_commands_are_refused_over_the_network(board, name):
    boots = board.vb.boots
    a = board.cmd({"cmd": name, "row": 0, "col": 0, "ms": 5} if name == "press" else {"cmd": name})
    assert a.status == 403 and a.json()["error"] == "usb_only" and "USB" in a.json()["msg"]
    assert board.vb.boots == boots


def test_a_command_no_page_may_send_is_refused(board):
    a = board.cmd({"cmd": "learn"})
    assert a.status == 400 and a.json()["error"] == "unknown_cmd"
    a = board.cmd([1, 2])
    assert a.status == 400 and a.json()["error"] == "bad_json"


def test_wrong_codes_are_locked_out_on_the_boards_clock(board):
    rates = []
    for _ in range(8):  # wrong guesses until they meet the lock (after the first: the next second)
        a = board.cmd({"cmd": "state"}, code="wrongcode1")
        rates.append(a.status)
        if a.status == 429:
            break
    assert rates[0] == 403 and rates[-1] == 429, rates
    assert a.json()["error"] == "slow_down" and int(a.headers["retry-after"]) >= 1
    right = board.cmd({"cmd": "state"})  # while locked, not even the right code is looked at
    assert right.status == 429
    assert board.http("GET", "/api/access", headers={"X-Hapenny-Code": board.code}).json()["play"] is False
    board.vb.advance(31000)  # the longest lock, gone by on the board's clock
    assert board.cmd({"cmd": "state"}).status == 200  # and the right code ends the lock's growth
    assert board.cmd({"cmd": "state"}, code="wrongcode1").status == 403  # a first wrong one again: a second's lock
    board.vb.advance(1500)
    assert board.cmd({"cmd": "state"}).status == 200


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.2", "dartboard.local.evil.example", "", "a b"])
def test_a_host_that_is_not_the_boards_is_refused(board, host):
    a = board.http("GET", "/api/snapshot", host=host)
    assert a.status == 421 and a.json()["error"] == "wrong_host"


@pytest.mark.parametrize("host", ["dartboard.local", "DartBoard.local.", "dartboard", "localhost"])
def test_the_boards_own_names_are_served(board, host):
    assert board.http("GET", "/api/access", host=host + ":%d" % board.vb.web_port).status == 200


def test_no_host_at_all_is_refused(board):
    assert board.http("GET", "/api/access", host=None).status == 421


def test_another_origin_is_refused(board):
    a = board.cmd({"cmd": "state"}, Origin="http://evil.example")
    assert a.status == 403 and a.json()["error"] == "wrong_origin"
    a = board.http("GET", "/api/snapshot", headers={"Origin": "http://127.0.0.1:1"})
    assert a.status == 403
    assert board.cmd({"cmd": "state"}, Origin="http://" + board.host).status == 200


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_command_must_be_json(board, ctype):
    a = board.cmd({"cmd": "state"}, ctype=ctype)
    assert a.status == 415 and a.json()["error"] == "not_json"


def test_too_large_heads_and_bodies_are_refused(board):
    a = board.http("GET", "/api/access", headers={"X-Padding": "x" * 1100})
    assert a.status == 413 and a.json()["error"] == "too_large"
    a = board.cmd({"cmd": "new", "players": ["x" * 300, "y" * 300]})
    assert a.status == 413 and "512" in a.json()["msg"]
    a = board.http("POST", "/api/cmd", b"{}", {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    assert a.status == 501
    for raw in (b"GARBAGE\r\n\r\n", b"GET /api/access\r\n\r\n", b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
                b"GET /\xff\xfe HTTP/1.1\r\nHost: " + board.host.encode() + b"\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: \xc3\x28\r\n\r\n", b"\r\n\r\n"):
        assert board.http(None, None, raw=raw).status == 400
    a = board.http("POST", "/api/access", b"{}", {"Content-Type": "application/json"})
    assert a.status == 405 and a.headers["allow"] == "GET"
    assert board.web()["faults"] == 0  # each refused by the server's checks, none by a fault


def test_a_page_loading_its_files_at_once_beside_two_streams_gets_them_all_in_turn(board):
    board.until("no one connected", lambda w: w["open"] == 0)
    streams = [board.stream() for _ in range(2)]
    for st in streams:
        st.until("snapshot")
    refused = board.web()["refused"]
    socks = [board.connect() for _ in range(4)]  # a browser's parallel requests: one slot is left for them
    for s, path in zip(socks, ("/static/app.js", "/static/style.css", "/api/access", "/favicon.ico")):
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, board.host)).encode())
    answers = [read_answer(s).status for s in socks]
    for s in socks:
        s.close()
    assert answers == [200, 200, 200, 404] and board.web()["refused"] == refused
    for st in streams:
        st.close()
    board.until("the streams closed", lambda w: w["open"] == 0)


def test_a_slow_sender_is_dropped_at_the_boards_deadline(board):
    before = board.web()
    s = board.connect()
    s.sendall(b"GET /api/access HTTP/1.1\r\nHost: ")  # half a head, then nothing
    board.until("the connection taken", lambda w: w["accepted"] > before["accepted"])
    board.vb.advance(11000)
    a = read_answer(s)
    s.close()
    assert a.status == 408 and a.json()["error"] == "too_slow"
    assert board.web()["slow"] == before["slow"] + 1


def test_a_stream_starts_with_a_snapshot_then_carries_every_event_line_unchanged(board):
    board.req("new", players=["Ann", "Bob"])
    st = board.stream()
    assert "text/event-stream" in st.head
    snap = st.until("snapshot")
    assert snap["state"] == board.req("state")["state"]
    board.link.events.clear()
    board.req("throw", seg="D7")  # over the serial port
    serial = board.link.wait_event("dart", WAIT)
    assert st.until("event", lambda d: d.get("ev") == "dart") == serial
    board.dart("S3")  # a dart at the matrix
    serial = board.link.wait_event("dart", WAIT)
    assert serial["seg"] == "S3" and st.until("event", lambda d: d.get("ev") == "dart") == serial
    # events carrying the whole state (queued as their chunks: shove/protocol.py) come whole too
    for cmd, name in (("next", "visit"), ("undo", "undo")):
        board.req(cmd)
        serial = board.link.wait_event(name, WAIT)
        assert serial["state"]["sides"] and st.until("event", lambda d, n=name: d.get("ev") == n) == serial
    board.req("config", set={"auto_next_ms": 0})  # the settings changed: a new snapshot
    assert st.until("snapshot")["config"] == board.req("config")["config"]
    board.vb.advance(10500)  # ten seconds with nothing: a ping
    assert st.until("ping") == {}
    st.close()
    board.until("the stream closed", lambda w: w["streams"] == 0)


def test_a_fourth_client_is_refused_and_the_three_others_are_served_while_the_game_scans_on(board):
    board.until("no one connected", lambda w: w["open"] == 0)
    board.req("new", players=["Ann", "Bob"])
    streams = [board.stream() for _ in range(3)]
    for st in streams:
        st.until("snapshot")
    refused = board.web()["refused"]
    with board.connect() as s:
        got = s.recv(4096)
        while got and b"\r\n\r\n" not in got:
            more = s.recv(4096)
            got += more
            if not more:
                break
    # told 503 busy, or, where ESP-IDF has no room left for a fourth connection (the virtual
    # classic ESP32's model counts each at its worst), closed at once: never left hanging
    assert got == b"" or got.startswith(b"HTTP/1.1 503 ") and b'"busy"' in got, got
    assert board.web()["refused"] == refused + 1
    board.link.events.clear()
    for seg in ("T5", "D3", "S7"):
        board.dart(seg)
        ev = board.link.wait_event("dart", WAIT)
        assert ev["seg"] == seg
        for st in streams:
            assert st.until("event", lambda d: d.get("ev") == "dart") == ev
    stats = board.req("stats")["stats"]
    assert stats["darts"] >= 3 and stats["errors"] == 0 and stats["web"]["faults"] == 0
    for st in streams:
        st.close()
    board.until("the streams closed", lambda w: w["open"] == 0)
    assert board.http("GET", "/api/access").status == 200  # room again


def test_hapenny_sim_wifi_prints_the_boards_own_page(tmp_path):
    proc = subprocess.Popen([str(BIN / "hapenny"), "sim", "--wifi", "--fast", "--board-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = [proc.stdout.readline().split() for _ in range(3)]
        assert [w[0] for w in lines] == ["PORT", "CONTROL", "WEB"], lines
        url = lines[2][1]
        assert url.startswith("http://127.0.0.1:") and "#code=" in url
        base, code = url.split("#code=")
        port = int(base.split(":")[2].rstrip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as s:
            s.sendall(("GET /api/access HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Hapenny-Code: %s\r\n\r\n"
                       % (port, code)).encode())
            assert read_answer(s).json()["play"] is True
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_stream_that_stops_reading_is_closed_and_catches_up_when_it_comes_back(board):
    board.until("no one connected", lambda w: w["open"] == 0)
    board.req("new", players=["Ann", "Bob"])
    before = board.web()["overflows"]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # a page on a phone that went to sleep
    s.settimeout(WAIT)
    VirtualBoard.host_sends += 1
    s.connect(("127.0.0.1", board.vb.web_port))
    s.sendall(("GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n" % board.host).encode())
    board.until("the stream", lambda w: w["streams"] == 1)
    sent = 0
    while board.web()["overflows"] == before:  # the game goes on: its events pile up for the sleeper
        assert sent < 400, "the sleeping stream was never closed"
        for _ in range(5):
            board.req("throw", seg="S1")
            board.req("undo")  # with the whole state: some 1 KB an event
            sent += 1
    assert board.web()["streams"] == 0
    s.close()
    st = board.stream()  # it comes back: the game as it is now, whole
    assert st.until("snapshot")["state"] == board.req("state")["state"]
    st.close()


def test_nothing_a_request_carries_reaches_the_serial_port(board):
    """Paths, headers, bodies and wrong codes: none of it is in any line the board wrote."""
    mark = "zq7mark"
    board.http("GET", "/%s?%s=1" % (mark, mark), headers={"User-Agent": mark, "Cookie": mark})
    board.http("GET", "/api/access", host=mark + ".example")
    board.cmd({"cmd": "state", "x": mark}, code=mark)  # a wrong code
    board.cmd({"cmd": mark})
    board.cmd({"cmd": "state", mark: 1})  # handled by the board, whose reply names no field it ignores
    board.vb.advance(31000)  # the wrong code's lock over
    board.req("state")  # the port's output caught up
    seen = board.log.getvalue()
    assert b'"ev"' in seen  # the log did catch the board's lines
    assert mark.encode() not in seen  # (the code is there: the wifi command's reply over USB, which is trusted)


def test_a_port_the_board_cannot_have_is_said_in_an_event_and_the_game_goes_on():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    vb = VirtualBoard(fast=True, web_port=taken.getsockname()[1]).start()
    try:
        end = time.monotonic() + WAIT
        while True:
            try:
                link, _, ser = connect(vb.port)
                break
            except Exception:
                assert time.monotonic() < end
                time.sleep(0.3)
        vb.air(HOME, TIMES)
        link.request("wifi", set={"ssid": "home", "key": KEY})
        ev = link.wait_event("web", WAIT)
        assert "not served" in ev["error"]
        assert link.request("wifi")["wifi"]["state"] == "joined" and link.request("stats")["stats"]["web"] is None
        link.request("new", players=["Ann", "Bob"])
        assert link.request("throw", seg="T5")["state"]["visit"][0][0] == "T5"
        ser.close()
    finally:
        vb.stop()
        taken.close()


def test_the_network_transport_plays_through_the_boards_own_server(board):
    """hapenny's network transport (netlink), as `--port http://...` uses it: commands and events
    through the board's own web API, as through its serial port."""
    board.until("no one connected", lambda w: w["open"] == 0)
    link, info, t = connect("http://%s/#code=%s" % (board.host, board.code), timeout=WAIT)
    try:
        assert info["board"] == board.info["board"]
        link.request("new", players=["Ann", "Bob"])
        serial = board.link
        serial.events.clear()
        board.dart("T5")  # at the matrix: the same event on both ways in
        ev = serial.wait_event("dart", WAIT)
        assert link.wait_event("dart", WAIT) == ev
        assert link.request("state")["state"] == board.req("state")["state"]
        rep = link.request("reset", check=False)  # the cable's alone: refused in words, the board goes on
        assert rep.get("ok") is not True
    finally:
        t.close()
    assert board.req("stats")["stats"]["web"]["faults"] == 0

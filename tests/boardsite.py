"""A virtual board that has joined its virtual network and serves its own
page on a real loopback port (firmware/shove/httpd.py, webroutes.py), as the
browser tests, the hostile run and the latency bench drive it: its serial
link beside the server, one raw HTTP request, a wait on the server's figures.

Every wait is for a condition with a generous bound; the board's deadlines
are reached by moving its clock on (`advance`), never by sleeping."""
import json
import socket
import time

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard

KEY = "correct-horse-battery"
HOME = {"home": {"key": KEY, "rssi": -57, "addr": "127.0.0.1"}}
TIMES = {"join_ms": 200, "refuse_ms": 200, "scan_ms": 200, "beacon_ms": 2000}
WAIT = 30.0  # a bound on waiting only: a loaded host slows the board with it


def read_answer(s):
    """(status, headers, body) of one HTTP answer on socket s, or None if the
    server closed the connection without one."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(4096)
        if not got:
            assert not data or data.startswith(b"HTTP/1.1 "), data[:200]
            return None
        data += got
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, v in (line.split(":", 1) for line in lines[1:]))
    n = int(headers.get("content-length", 0))
    while len(body) < n:
        got = s.recv(4096)
        assert got, "closed mid-answer"
        body += got
    return int(lines[0].split()[1]), headers, body


def connect_when_up(port, timeout=WAIT):
    """(link, info, serial) of the board on `port` once it answers: a board
    still starting (or resetting) is asked again every 0.3 s until `timeout`."""
    end = time.monotonic() + timeout
    while True:
        try:
            return connect(port)
        except Exception:
            if time.monotonic() > end:
                raise
            time.sleep(0.3)


def until(what, look, ok=bool, timeout=WAIT, pause=0.05, also=None):
    """look()'s value once ok(value) holds, asked every `pause` s. Past `timeout`
    a failure that shows the last value seen, and also() when given (what else
    may say why): a wait that runs out says what it saw, not only that it ran out."""
    end = time.monotonic() + timeout
    while True:
        got = look()
        if ok(got):
            return got
        if time.monotonic() >= end:
            raise AssertionError("no %s: last seen %r%s" % (what, got, "" if also is None else "; %r" % (also(),)))
        time.sleep(pause)


class BoardSite:
    """The board (fast: no timing measured here) on the network "home" as
    `dartboard`, its page at `url`, its pairing code `code`."""

    def __init__(self, board_dir=None, fast=True, log=None):
        kw = {"log": log} if log is not None else {}
        self.vb = VirtualBoard(board_dir=board_dir, fast=fast, **kw).start()
        self.vb.air(HOME, TIMES)
        self.open()
        self.req("wifi", set={"ssid": "home", "key": KEY, "name": "dartboard"})
        w = self.joined()
        self.code = w["code"]
        self.host = "127.0.0.1:%d" % self.vb.web_port
        self.url = "http://%s/" % self.host

    def open(self):
        self.link, self.info, self.ser = connect_when_up(self.vb.port)

    def joined(self):
        """The wifi reply once the board has joined and its server runs."""
        got = until("join", lambda: (self.req("wifi")["wifi"], self.web()),
                    lambda g: g[0]["state"] == "joined" and g[1] is not None)
        return got[0]

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def web(self):
        return self.req("stats")["stats"]["web"]

    def until(self, what, cond, also=None):
        """The server's figures once cond(figures) holds."""
        return until(what, self.web, lambda w: w is not None and cond(w), also=also)

    def connect(self):
        VirtualBoard.host_sends += 1  # the board's firmware is driven through this socket (the suite's summary)
        return socket.create_connection(("127.0.0.1", self.vb.web_port), timeout=WAIT)

    def http(self, raw):
        """One raw request on a connection of its own, its sending end shut
        after it (a head cut short ends there): (status, headers, body) or None."""
        with self.connect() as s:
            s.sendall(raw)
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            try:
                return read_answer(s)
            except ConnectionResetError:
                return None

    def get(self, path, **headers):
        h = dict({"Host": self.host}, **headers)
        got = self.http(("GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h.items())
                         + "\r\n").encode())
        assert got is not None, path
        return got

    def cells(self):
        return {s: (r, c) for r, c, s in self.req("map")["cells"]}

    def dart(self, seg, cells=None):
        """A dart at `seg`, closed at the virtual matrix: the scanner finds it."""
        r, c = (cells or self.cells())[seg]
        self.vb.wait_rearmed(WAIT)
        self.vb.close(r, c, ms=30)

    def close(self):
        try:
            self.ser.close()
        finally:
            self.vb.stop()


def snapshot(site):
    st, _, body = site.get("/api/snapshot")
    assert st == 200, st
    return json.loads(body)

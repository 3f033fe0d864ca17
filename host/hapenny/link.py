"""Host side of the board protocol: JSON lines over any byte transport."""
import json
import os
import select
import time
from collections import deque

from hapenny import PROTOCOL


def wire(obj):
    """A protocol object as a link sends it: compact JSON (on the UART a byte is 87 us at
    115200 baud, and the board's light commands, webroutes.LIGHT, are named so)."""
    return json.dumps(obj, separators=(",", ":"))


class LinkError(Exception):
    """The board could not be reached or did not answer."""


class BoardError(Exception):
    """The board refused a command: `code` is the protocol's error code."""

    def __init__(self, reply):
        self.reply = reply
        self.code = reply.get("error")
        super().__init__("%s: %s" % (self.code, reply.get("msg")))


class FdTransport:
    """Reads and writes raw file descriptors (pipes, a pty master)."""

    def __init__(self, rfd, wfd):
        self.rfd = rfd
        self.wfd = wfd

    def read(self, timeout):
        r, _, _ = select.select([self.rfd], [], [], max(0.0, timeout))
        if not r:
            return b""
        try:
            data = os.read(self.rfd, 4096)
        except OSError:
            data = b""
        if not data:
            raise LinkError("the board closed the connection")
        return data

    def write(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.wfd, view)
            view = view[n:]


class SerialTransport:
    """A pyserial port."""

    def __init__(self, ser):
        self.ser = ser

    def read(self, timeout):
        self.ser.timeout = max(0.0, timeout)
        first = self.ser.read(1)
        if not first:
            return b""
        return first + self.ser.read(self.ser.in_waiting)

    def write(self, data):
        self.ser.write(data)
        self.ser.flush()


class Link:
    """Commands and replies, with events queued as they arrive. Lines that
    are not JSON objects (boot noise, a REPL) are kept in `noise`."""

    def __init__(self, transport):
        self.t = transport
        self.buf = b""
        self.events = deque()
        self.noise = deque(maxlen=200)
        self._id = 0
        self.lines_in = 0  # lines read so far
        self.line_of = None  # a dict to fill: id(event) -> its line's number (from 1), for a test bench

    def _lines(self, timeout):
        data = self.t.read(timeout)
        if data:
            self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.lines_in += 1
            yield line.rstrip(b"\r")

    def _pump(self, timeout):
        """Read what arrives within timeout; return replies (events are queued)."""
        replies = []
        for raw in self._lines(timeout):
            try:
                obj = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                obj = None
            if not isinstance(obj, dict):
                self.noise.append(raw)
            elif "ev" in obj:
                self.events.append(obj)
                if self.line_of is not None:
                    self.line_of[id(obj)] = self.lines_in
            elif "ok" in obj:
                replies.append(obj)
            else:
                self.noise.append(raw)
        return replies

    def send_line(self, line):
        self.t.write(line if isinstance(line, bytes) else line.encode())

    def request(self, cmd, timeout=5.0, check=True, **fields):
        """Send one command and return its reply; BoardError if refused."""
        return self._request(cmd, timeout, check, None, fields)

    def _request(self, cmd, timeout, check, give_up, fields):
        """request's; `give_up`: a test of what has arrived, true once no reply can come (LinkError then)."""
        self._id += 1
        rid = self._id
        msg = dict(fields, cmd=cmd, id=rid)
        self.send_line(wire(msg) + "\n")
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise LinkError("no reply to %r within %.1f s" % (cmd, timeout))
            for rep in self._pump(left):
                if rep.get("id") == rid:
                    if check and not rep.get("ok"):
                        raise BoardError(rep)
                    return rep
            if give_up is not None and give_up(self):
                raise LinkError("no reply to %r: what the board sent says none will come" % cmd)

    def wait_event(self, name, timeout=5.0, where=None):
        """The next event called `name` (others stay queued in order)."""
        end = time.monotonic() + timeout
        while True:
            for ev in list(self.events):
                if ev.get("ev") == name and (where is None or where(ev)):
                    self.events.remove(ev)
                    return ev
            left = end - time.monotonic()
            if left <= 0:
                raise LinkError("no %r event within %.1f s" % (name, timeout))
            self._pump(min(left, 0.2))

    def drain(self, settle=0.05):
        """Collect everything that arrives until the line is quiet."""
        while True:
            before = (len(self.events), len(self.buf))
            self._pump(settle)
            if (len(self.events), len(self.buf)) == before:
                return

    def set_map(self, cells, limit=480):
        """Store a whole map, in as many lines as the 512-byte limit needs."""
        chunks, cur = [], []
        for cell in cells:
            if cur and len(wire({"cmd": "map", "set": cur + [cell], "more": True, "id": 99999})) > limit:
                chunks.append(cur)
                cur = []
            cur.append(cell)
        chunks.append(cur)
        for chunk in chunks[:-1]:
            self.request("map", set=chunk, more=True)
        return self.request("map", set=chunks[-1])

    def hello(self, timeout=5.0, give_up=None):
        """`info`, checking that this is hapenny firmware speaking our protocol.
        `give_up(link)`: true once what the board sent shows no reply will come."""
        rep = self._request("info", timeout, True, give_up, {})
        if rep.get("protocol") != PROTOCOL:
            raise LinkError("the board speaks protocol %r; this hapenny speaks %d: deploy matching firmware"
                            % (rep.get("protocol"), PROTOCOL))
        return rep

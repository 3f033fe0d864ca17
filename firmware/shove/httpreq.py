# A request on the board's own server (shove/httpd.py): its reading, its
# head's parsing, its route's call and the answer's making. Loaded while
# requests are under way and let go once only streams are left (the
# server's core stays in the heap: this code, and the routes', does not).
import json
import sys

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import ticks_diff

# httpd's, the same (it loads this module: no import back; tests/mponly/test_httpd.py holds them equal)
HEAD_MAX = const(1024)
BODY_MAX = const(512)
DEADLINE_MS = const(10000)
HEAD = const(1)
BODY = const(2)
SEND = const(3)
STREAM = const(4)
RUN = const(6)
EV_SNAPSHOT = b"event: snapshot\ndata: "

_REASONS = ("200 OK\n204 No Content\n302 Found\n400 Bad Request\n403 Forbidden\n404 Not Found\n405 Method Not Allowed\n408 Request Timeout\n"
            "413 Content Too Large\n415 Unsupported Media Type\n421 Misdirected Request\n429 Too Many Requests\n"
            "500 Internal Server Error\n501 Not Implemented\n503 Service Unavailable\n")
_HEAD = ("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nCache-Control: no-cache\r\n"
         "X-Content-Type-Options: nosniff\r\nConnection: close\r\n%s\r\n")
_STREAM = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
           b"X-Content-Type-Options: nosniff\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\nretry: 1000\n\n")


def _status(code):
    """"403 Forbidden": a status line's code and reason."""
    i = _REASONS.find("%d " % code)
    return _REASONS[i:_REASONS.find("\n", i)] if i >= 0 else "%d Error" % code


def host_name(value):
    """A Host header's name (lower case, port and a final dot taken off), or None."""
    v = value.lower()
    for ch in "/?#@ \t[]":
        if ch in v:
            return None
    i = v.rfind(":")
    if i >= 0:
        port = v[i + 1:]
        if not port or not port.isdigit():
            return None
        v = v[:i]
    if v.endswith("."):
        v = v[:-1]
    return v or None


class Req:
    """The request a slot (httpd.Conn) reads, as the routes get it."""

    # what a request's head may set, unset until it does: the class's, so that making a Req
    # (one a request, and one an answer) stores two fields, not thirteen (ms of the chip's each)
    method = path = host = origin = ctype = code = body = None
    query = owner = None  # the text after "?"; X-Hapenny-Owner (the update routes')
    length = 0
    answered = False

    def __init__(self, c, tick=None):
        self.c = c
        self.tick = tick  # a read of the matrix (the server's), inside a route's long work

    def _answer(self):
        if self.answered:
            raise RuntimeError("answered twice")
        self.answered = True
        self.c.state = SEND

    def reply(self, status, text, ctype="application/json", extra=""):
        """`text` (a str: on MicroPython its bytes are sent as they are; or
        a line carrying a state: the list of its chunks, shove/protocol.py)
        with its head."""
        self._answer()
        c = self.c
        if isinstance(text, list):
            n = 0
            for t in text:
                n += len(memoryview(t))  # its bytes: a str's length counts characters
            c.put((_HEAD % (_status(status), ctype, n, extra)).encode())
            for t in text:
                if t:
                    c.put(memoryview(t))
            return
        b = memoryview(text)
        c.put((_HEAD % (_status(status), ctype, len(b), extra)).encode())
        if len(b):
            c.put(b)

    def later(self):
        """Answered later: its slot waits (httpd.RUN) while its command runs in
        the server's steps (webroutes.Routes.command), then answered by reply
        on a Req made for it anew."""
        self._answer()
        self.c.state = RUN

    def error(self, status, code, msg, extra=""):
        """A refusal, as both servers give it: {"ok": false, "error": CODE, "msg": TEXT}."""
        self.reply(status, json.dumps({"ok": False, "error": code, "msg": msg}, separators=(",", ":")),
                   "application/json", extra)

    def send_file(self, path, ctype, gzip=True):
        """A file from the flash, sent a CHUNK at a time from the slot's buffer. False if there is none."""
        try:
            f = open(path, "rb")  # (a look-up in littlefs, ms on the chip: one, not a stat's and the open's)
        except OSError:
            return False
        if self.tick is not None:
            self.tick()
        size = f.seek(0, 2)  # (littlefs keeps the open file's size: no flash read, extmod/vfs_lfsx_file.c)
        f.seek(0)
        self.send(f, size, ctype, "Content-Encoding: gzip\r\n" if gzip else "")
        return True

    def send(self, f, size, ctype, extra=""):
        """A body of `size` bytes from f.readinto(the slot's buffer), a
        CHUNK a step: a file, or a body made a slice at a time, whose
        readinto gives None while it has nothing yet. f.close() at its end."""
        self._answer()
        self.c.put((_HEAD % ("200 OK", ctype, size, extra)).encode())
        self.c.file = f

    def stream(self, first, now):
        """This connection becomes an event stream: its head, then `first`
        (a snapshot's JSON text), then every event line (Server.event)."""
        self._answer()
        c = self.c
        c.state = STREAM
        c.look = now
        c.put(_STREAM)
        c.push(EV_SNAPSHOT, first, now)


def work(srv, c, now):
    """A slot reading its request: its deadline, a read, and once it is
    whole its route (unless the server's `hold` holds it back a step)."""
    r = c.req
    if r is None:
        r = c.req = Req(c, srv.tick)
    if ticks_diff(now, c.since) >= DEADLINE_MS:
        srv.slow += 1
        _refuse(c, 408, "too_slow", "the request did not arrive within %d s" % (DEADLINE_MS // 1000))
        return
    if c.state == HEAD or c.n < c.need:
        n = c.n
        top = c.need if c.state == BODY else len(c.buf)
        srv.tick()  # (the request's way here, then the read: a call into the network stack)
        k = c.sock.readinto(c.mv[n:top])
        if k is None:
            return
        if k == 0:  # the client gave up
            srv.close_conn(c)
            return
        c.n = n + k
        if c.state == HEAD:
            end = c.buf.find(b"\r\n\r\n", n - 3 if n > 3 else 0, c.n if c.n < HEAD_MAX else HEAD_MAX)
            if end < 0:
                if c.n >= HEAD_MAX:
                    _refuse(c, 413, "too_large", "a request's head is at most %d bytes" % HEAD_MAX)
                return
            srv.tick()  # (a read of the matrix between the socket's read and the head's parsing, and after it)
            try:
                why = _head(r, bytes(c.mv[:end]))
            except (UnicodeError, ValueError):  # bytes that are not text where text must be
                why = 400, "bad_request", "a request's head is text"
            if why is not None:
                srv.tick()  # (between the head's parsing and the refusal's making)
                _refuse(c, why[0], why[1], why[2])
                return
            c.need = end + 4 + r.length
            c.state = BODY
            srv.tick()
        if c.n < c.need:
            return
        r.body = c.mv[c.need - r.length:c.need]
    # it waits a step while the requests' code is loaded, or held (its deadline still runs)
    if not _stage(srv, r) and (srv.hold is None or not srv.hold(r)):
        _dispatch(srv, c, r, now)


def _stage(srv, r):
    """The code a request read whole needs (srv.needs(r): the routes') loaded
    a module a step before it is answered: the collector can free each
    module's loading garbage before the next, and before the answer's own
    (a snapshot's: 10 KB). True: one was loaded now, the request waits a step."""
    if srv.needs is None:
        return False
    for name in srv.needs(r):
        if "shove." + name not in sys.modules:
            srv.loaded = True
            __import__("shove." + name)
            return True
    return False


def _refuse(c, status, code, msg):
    r = c.req = Req(c)  # what was read of the request is forgotten
    c.out.clear()
    c.size = 0
    r.error(status, code, msg)
    c.req = None


def _head(r, head):
    """The request line and the headers the routes read; (status, code, msg) when refused."""
    lines = head.split(b"\r\n")
    first = lines[0].split(b" ")
    if len(first) != 3 or not first[2].startswith(b"HTTP/1."):
        return 400, "bad_request", "not an HTTP/1 request"
    r.method = first[0].decode()
    target = first[1]
    q = target.find(b"?")
    if q >= 0:
        r.query = target[q + 1:].decode()
        target = target[:q]
    r.path = target.decode()
    length = None
    for i in range(1, len(lines)):
        line = lines[i]
        j = line.find(b":")
        if j <= 0:
            return 400, "bad_request", "a malformed header"
        name = line[:j].strip().lower()
        value = line[j + 1:].strip()
        if name == b"host":
            if r.host is not None:
                return 400, "bad_request", "two Host headers"
            r.host = value.decode()
        elif name == b"origin":
            r.origin = value.decode()
        elif name == b"content-type":
            r.ctype = value.decode()
        elif name == b"x-hapenny-code":
            r.code = value
        elif name == b"x-hapenny-owner":
            r.owner = value
        elif name == b"content-length":
            if length is not None or not value or len(value) > 6 or not value.isdigit():
                return 400, "bad_request", "a malformed Content-Length"
            length = int(value)
        elif name == b"transfer-encoding":
            return 501, "chunked", "send a body with a Content-Length"
    if length is not None:
        if length > BODY_MAX:
            return 413, "too_large", "a request's body is at most %d bytes" % BODY_MAX
        r.length = length
    return None


def _dispatch(srv, c, r, now):
    fn = None
    if srv.guard is None or srv.guard(r, now):
        srv.tick()  # (between the checks and the route's work)
        routes = srv.routes
        x = routes.get(r.path)
        if x is None:
            for p in routes:
                if p.endswith("*") and r.path.startswith(p[:-1]):
                    x = routes[p]
                    break
        if x is None:
            r.error(404, "not_found", "no such page")
        elif r.method not in x[1]:
            r.error(405, "bad_method", "this address takes %s" % " or ".join(x[1]), "Allow: %s\r\n" % ", ".join(x[1]))
        else:
            fn = x[0]
    if fn is not None:
        try:
            fn(r, now)
        except MemoryError:
            if not r.answered:
                c.out.clear()
                c.size = 0
                r.error(503, "no_memory", "the request did not fit in memory")
        if not r.answered:
            r.error(500, "fault", "the request was not answered")
    c.req = None  # answered: the request is done with (a file is sent from the slot's buffer)
    if c.state == STREAM:  # a stream needs no buffer: it sends its queue
        srv.give_back(c)

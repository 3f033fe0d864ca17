# The board's own HTTP server: a small core the main loop steps, routes
# outside it (shove/webroutes.py adds the page's). Loaded only once the
# board has joined a network (shove/wifi.py starts it), never on a board
# without one.
#
# Made for the chip, not the PC:
# - no asyncio and no blocking call: every socket is non-blocking (an
#   accepted one set so again: on the ESP32 it starts blocking,
#   ports/esp32/modsocket.c), and step() does at most one accept and one
#   bounded piece of work a socket (a read into the slot's buffer, or one
#   write of at most CHUNK bytes), with a read of the matrix between two
#   sockets (tick);
# - a fixed number of sockets: the listener and SLOTS clients (lwIP's
#   buffers and ESP-IDF's heap are the budget). One more client waits in
#   listen's backlog while the slots serve requests (a page's files come in
#   turn); while all of them hold streams it is accepted only to be told
#   503 busy and closed at once;
# - BUFFERS buffers are made with the server, and a connection has one
#   while it reads its request and sends its answer: the request's head (at
#   most HEAD_MAX bytes) and body (at most BODY_MAX, the serial line's
#   bound) go into it, a file is sent from it CHUNK bytes at a time (never
#   read whole into the heap); a stream gives it back once its request is
#   read (two pages watching leave one for the rest), and none is ever
#   grown. A connection that finds no buffer waits as for a slot;
# - a request's head and body must arrive within DEADLINE_MS of the board's
#   clock (a slow sender is told 408 and dropped);
# - a stream (Server-Sent Events) keeps a queue of its own: pieces shared
#   with the console's queue, no copy; one that falls QUEUE_MAX bytes behind
#   is closed (its page reconnects and catches up from a snapshot), so a
#   slow client never slows the game or fills the heap;
# - nothing a request carries is written anywhere (no log), and a fault in
#   a request's handling closes that connection only.
#
# The interface (for the routes, and for pages added later beside them):
#   srv = Server(addr, tick)            listening at once, addr = (host, port)
#   srv.route(path, fn, methods)        fn(req, now) for that path ("/static/*": a prefix)
#   srv.guard = fn                      fn(req, now) -> True to go on (else it has answered)
#   srv.watch = fn                      fn(now) once a step (e.g. a config change's snapshot)
#   srv.hold = fn                       fn(req) -> True: a request read whole waits a step
#   srv.step(now)                       the loop's: now in board ms
#   srv.busy                            work waits (the loop then steps it every round)
#   srv.open                            clients connected (the loop then looks more often)
#   srv.event(line)                     a line for every stream (an event line)
#   srv.streams(), srv.drop(req)        the streams; one closed for falling behind
#   srv.close()
# and a request (Conn) answers with req.reply(status, text), req.error(status,
# code, msg), req.send_file(path, ctype) or req.stream(first, now), once.
import json
import select
import socket

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import ticks_diff

_HEAD_MAX = const(1024)  # a request's head (request line and headers)
_BODY_MAX = const(512)  # a command's body: the serial port's line (protocol.MAX_LINE)
_SLOTS = const(3)  # clients at once; with the listener, four sockets
BUFFERS = const(2)  # request buffers: a stream needs none once its request is read, nor an answered one
_CHUNK = const(1024)  # the most one write sends
DEADLINE_MS = const(10000)  # a request's head and body
_LINGER_MS = const(2000)  # after the answer, the client's close awaited (a reset would cut the answer short)
QUEUE_MAX = const(4096)  # bytes a stream may have waiting before it is closed
_PING_MS = const(10000)  # a stream silent this long gets a ping

FREE = const(0)  # a slot's states
HEAD = const(1)
BODY = const(2)
_SEND = const(3)
STREAM = const(4)
_LINGER = const(5)

# (constants as few objects as will do: each is heap on the chip while the server runs)
_REASONS = ("200 OK\n400 Bad Request\n403 Forbidden\n404 Not Found\n405 Method Not Allowed\n408 Request Timeout\n"
            "413 Content Too Large\n415 Unsupported Media Type\n421 Misdirected Request\n429 Too Many Requests\n"
            "500 Internal Server Error\n501 Not Implemented\n503 Service Unavailable\n")
_HEAD = ("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nCache-Control: no-cache\r\n"
         "X-Content-Type-Options: nosniff\r\nConnection: close\r\n%s\r\n")
_STREAM = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
           b"X-Content-Type-Options: nosniff\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\nretry: 1000\n\n")
EV_EVENT = b"event: event\ndata: "
EV_SNAPSHOT = b"event: snapshot\ndata: "
_END = b"\n\n"
_PING = b"event: ping\ndata: {}\n\n"
_CRLF2 = b"\r\n\r\n"


def _status(code):
    """"403 Forbidden": a status line's code and reason."""
    i = _REASONS.find("%d " % code)
    return _REASONS[i:_REASONS.find("\n", i)] if i >= 0 else "%d Error" % code


class Conn:
    """One client slot: its socket, the buffer it has from the server's
    (while it reads and answers a request) and the request read into it,
    which the routes get as `req`."""

    def __init__(self):
        self.pair = self.buf = self.mv = None  # [bytearray, its memoryview] from the server's pool
        self.sock = None
        self.state = FREE
        self.out = []  # what waits to be sent, oldest first: bytes, or memoryviews of str (their bytes)
        self.clear()

    def clear(self):
        self.n = 0  # bytes of the request in buf
        self.need = 0  # the whole request's length, once its head is read
        self.since = 0  # tick (ms) it was accepted, or its answer sent (LINGER)
        self.method = self.path = self.host = self.origin = self.ctype = self.code = None
        self.query = self.owner = None  # the text after "?"; X-Hapenny-Owner (the update routes')
        self.length = 0
        self.body = None  # a memoryview of the body in buf
        self.out.clear()
        self.pos = 0  # what of out[0] is written
        self.size = 0  # bytes in out
        self.file = None  # a file being sent, through buf: bytes buf[at:fn] wait
        self.at = self.fn = 0
        self.last = 0  # tick of a stream's last piece queued (its ping)
        self.answered = False

    # ---- the routes' answers ---------------------------------------------------------------
    def _answer(self):
        if self.answered:
            raise RuntimeError("answered twice")
        self.answered = True
        self.state = _SEND

    def reply(self, status, text, ctype="application/json", extra=""):
        """`text` (a str: on MicroPython its bytes are sent as they are) with its head."""
        self._answer()
        b = memoryview(text)  # its bytes: a str's length counts characters
        self._put((_HEAD % (_status(status), ctype, len(b), extra)).encode())
        if len(b):
            self._put(b)

    def error(self, status, code, msg, extra=""):
        """A refusal, as both servers give it: {"ok": false, "error": CODE, "msg": TEXT}."""
        self.reply(status, json.dumps({"ok": False, "error": code, "msg": msg}, separators=(",", ":")),
                   "application/json", extra)

    def send_file(self, path, ctype, gzip=True):
        """A file from the flash, sent a CHUNK at a time from the slot's buffer. False if there is none."""
        import os

        try:
            size = os.stat(path)[6]
            f = open(path, "rb")
        except OSError:
            return False
        self._answer()
        self._put((_HEAD % ("200 OK", ctype, size, "Content-Encoding: gzip\r\n" if gzip else "")).encode())
        self.file = f
        return True

    def stream(self, first, now):
        """This connection becomes an event stream: its head, then `first`
        (a snapshot's JSON text), then every event line (Server.event)."""
        self._answer()
        self.state = STREAM
        self._put(_STREAM)
        self.push(EV_SNAPSHOT, first, now)

    def push(self, kind, text, now):
        """A piece for a stream: `kind` (EV_EVENT, EV_SNAPSHOT), the text, a
        blank line. False if that overfills its queue (it is then closed)."""
        self._put(kind)
        if text is not None:
            self._put(memoryview(text))
            self._put(_END)
        self.last = now
        return self.size <= QUEUE_MAX

    def _put(self, b):
        self.out.append(b)
        self.size += len(b)


def _name(value):
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


host_name = _name


class Server:
    def __init__(self, addr, tick):
        self.tick = tick  # a read of the matrix, between two sockets' work
        self.routes = {}  # path -> (fn, methods); a path ending in "*" is a prefix
        self.guard = None
        self.watch = None
        self.hold = None
        self.slots = [Conn() for _ in range(_SLOTS)]
        self.pool = []
        for _ in range(BUFFERS):
            b = bytearray(_HEAD_MAX + _BODY_MAX)
            self.pool.append([b, memoryview(b)])
        self.busy = False  # work waits: a request under way, a stream's output
        self.open = 0  # clients connected
        self.now = 0  # the tick of the last step
        # figures (stats): connections accepted, refused busy, dropped for
        # slowness, streams closed for falling behind, requests that faulted
        self.accepted = self.refused = self.slow = self.overflows = self.faults = 0
        self._scratch = bytearray(256)  # a refused client's request, read and dropped
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(socket.getaddrinfo(addr[0], addr[1])[0][-1])
            s.listen(4)  # connections waiting for a slot (the network stack holds them, no socket of ours)
            s.setblocking(False)
        except OSError:
            s.close()
            raise
        self.sock = s
        # a poll of the listener alone: ipoll makes no list, and accept() raises no exception
        # (heap) while none waits. The unix port's poll takes the descriptor (given the virtual
        # board's socket, a subclass charged to the ESP-IDF model, it never finds it ready); the
        # ESP32's takes the socket itself and refuses a number, leaving that poll unusable
        # (extmod/modselect.c, poll_set_add_obj): a fresh one is made for the socket then.
        p = select.poll()
        try:
            p.register(s.fileno(), select.POLLIN)
        except (AttributeError, TypeError, ValueError, OSError):
            p = select.poll()
            p.register(s, select.POLLIN)
        self.poll = p

    def route(self, path, fn, methods=("GET",)):
        self.routes[path] = (fn, methods)

    def figures(self):
        return {"open": sum(1 for c in self.slots if c.state != FREE),
                "streams": sum(1 for c in self.slots if c.state == STREAM), "accepted": self.accepted,
                "refused": self.refused, "slow": self.slow, "overflows": self.overflows, "faults": self.faults,
                # its own heap: the slots' buffers, made with it, and what its streams' queues hold
                # (their lines are the console's too, shared)
                "buffers": BUFFERS * (_HEAD_MAX + _BODY_MAX), "queued": sum(c.size for c in self.slots)}

    def close(self):
        for c in self.slots:
            if c.state != FREE:
                self._close(c)
        self.sock.close()

    # ---- the loop's step -------------------------------------------------------------------
    def step(self, now):
        self.now = now
        for _ in self.poll.ipoll(0):
            self._accept(now)
            break
        busy = False
        n = 0
        for c in self.slots:
            if c.state == FREE:
                continue
            try:
                self._work(c, now)
            except OSError:  # the client reset the connection, or the network went: it ends
                self._close(c)
            except Exception:  # a fault (a MemoryError among them): this connection ends, nothing else
                self.faults += 1
                self._close(c)
            self.tick()
            if c.state != FREE:
                n += 1
                if c.state != STREAM or c.out:
                    busy = True
        if self.watch is not None:
            try:
                self.watch(now)
            except Exception:  # (a MemoryError making a snapshot): the streams keep their events
                self.faults += 1
        self.busy = busy
        self.open = n

    def event(self, line):
        """An event line for every stream, shared (no copy). A stream that
        is too far behind is closed."""
        for c in self.slots:
            if c.state == STREAM:
                if not c.push(EV_EVENT, line, self.now):
                    self.drop(c)
                else:
                    self.busy = True

    def drop(self, c):
        """A stream too far behind is closed (its page reconnects and catches up)."""
        self.overflows += 1
        self._close(c)

    def streams(self):
        return [c for c in self.slots if c.state == STREAM]

    def _accept(self, now):
        """A waiting connection into a free slot (or one whose answer is
        sent and only waits for its client's close). While every slot is
        taken by a request under way, it waits where the network stack
        keeps it (listen's backlog, no socket of ours) for one of them to
        end: a page loads its files at once, and they come in turn. Only
        when every slot holds a stream, which may last for hours, is it
        taken to be told 503 busy and closed."""
        slot = None
        lingering = None
        streams = 0
        for c in self.slots:
            st = c.state
            if st == FREE:
                slot = c
                break
            if st == _LINGER:
                lingering = c
            elif st == STREAM:
                streams += 1
        if slot is None and lingering is not None:
            self._close(lingering)
            slot = lingering
        if slot is None and streams < _SLOTS:
            return
        if slot is not None and not self.pool:  # every buffer in use: it waits as for a slot
            return
        try:
            s, _ = self.sock.accept()
        except OSError as e:
            # EAGAIN (11 on both ports): it went meanwhile. Else the network stack had no room
            # for it (ENOMEM: the virtual board's ESP-IDF model closes it, as its peer then sees)
            if e.args[0] != 11:
                self.refused += 1
            return
        s.setblocking(False)  # an accepted socket starts blocking on the ESP32
        if slot is None:
            self.refused += 1
            try:
                # what the client sent is read first: a socket closed with
                # bytes unread is reset, and the reset may overtake the answer
                for _ in range(4):
                    if not s.readinto(self._scratch):
                        break
                body = '{"ok":false,"error":"busy","msg":"the board serves %d clients at once"}' % _SLOTS
                s.write((_HEAD % (_status(503), "application/json", len(body), "Retry-After: 2\r\n") + body).encode())
            except OSError:
                pass
            s.close()
            return
        self.accepted += 1
        slot.clear()
        p = self.pool.pop()
        slot.pair = p
        slot.buf = p[0]
        slot.mv = p[1]
        slot.sock = s
        slot.state = HEAD
        slot.since = now

    def _give_back(self, c):
        p = c.pair
        if p is not None:
            self.pool.append(p)
            c.pair = c.buf = c.mv = c.body = None

    def _close(self, c):
        self._give_back(c)
        f = c.file
        if f is not None:
            f.close()
        s = c.sock
        c.sock = None
        c.state = FREE
        c.clear()
        if s is not None:
            try:
                s.close()
            except OSError:
                pass

    def _work(self, c, now):
        st = c.state
        if st == HEAD or st == BODY:
            if ticks_diff(now, c.since) >= DEADLINE_MS:
                self.slow += 1
                c.clear()
                c.error(408, "too_slow", "the request did not arrive within %d s" % (DEADLINE_MS // 1000))
                return
            if st == BODY and c.n >= c.need:  # read whole, held back (hold): its turn yet?
                self._ready(c, now)
            else:
                self._read(c, now)
        elif st == _SEND or st == STREAM:
            if c.out or c.file is not None:
                self._write(c)
                if st == _SEND and not c.out and c.file is None:  # all sent: the client's close awaited
                    c.state = _LINGER
                    c.since = now
                    self._give_back(c)
            else:
                if st == STREAM and ticks_diff(now, c.last) >= _PING_MS:
                    c.push(_PING, None, now)
                self._drain(c, now)
        else:  # LINGER
            if ticks_diff(now, c.since) >= _LINGER_MS:
                self._close(c)
            else:
                self._drain(c, now)

    def _drain(self, c, now):
        """What a client sends after its request is read and dropped; its close ends the connection."""
        k = c.sock.readinto(self._scratch)
        if k == 0:
            self._close(c)

    def _read(self, c, now):
        n = c.n
        top = c.need if c.state == BODY else len(c.buf)
        k = c.sock.readinto(c.mv[n:top])
        if k is None:
            return
        if k == 0:  # the client gave up
            self._close(c)
            return
        c.n = n + k
        if c.state == HEAD:
            end = c.buf.find(_CRLF2, n - 3 if n > 3 else 0, c.n if c.n < _HEAD_MAX else _HEAD_MAX)
            if end < 0:
                if c.n >= _HEAD_MAX:
                    c.clear()
                    c.error(413, "too_large", "a request's head is at most %d bytes" % _HEAD_MAX)
                return
            why = self._parse(c, end)
            if why is not None:
                c.clear()
                c.error(why[0], why[1], why[2])
                return
            c.need = end + 4 + c.length
            c.state = BODY
        if c.n >= c.need:
            c.body = c.mv[c.need - c.length:c.need]
            self._ready(c, now)

    def _ready(self, c, now):
        """A request read whole is handled, unless `hold` holds it back for
        a later step (its deadline still runs)."""
        if self.hold is None or not self.hold(c):
            self._dispatch(c, now)

    def _parse(self, c, end):
        """The request line and the headers the routes read; (status, code, msg) when refused."""
        try:
            return self._head(c, end)
        except (UnicodeError, ValueError):  # bytes that are not text where text must be
            return 400, "bad_request", "a request's head is text"

    def _head(self, c, end):
        lines = bytes(c.mv[:end]).split(b"\r\n")
        first = lines[0].split(b" ")
        if len(first) != 3 or not first[2].startswith(b"HTTP/1."):
            return 400, "bad_request", "not an HTTP/1 request"
        c.method = first[0].decode()
        target = first[1]
        q = target.find(b"?")
        if q >= 0:
            c.query = target[q + 1:].decode()
            target = target[:q]
        c.path = target.decode()
        length = None
        for i in range(1, len(lines)):
            line = lines[i]
            j = line.find(b":")
            if j <= 0:
                return 400, "bad_request", "a malformed header"
            name = line[:j].strip().lower()
            value = line[j + 1:].strip()
            if name == b"host":
                if c.host is not None:
                    return 400, "bad_request", "two Host headers"
                c.host = value.decode()
            elif name == b"origin":
                c.origin = value.decode()
            elif name == b"content-type":
                c.ctype = value.decode()
            elif name == b"x-hapenny-code":
                c.code = value
            elif name == b"x-hapenny-owner":
                c.owner = value
            elif name == b"content-length":
                if length is not None or not value or len(value) > 6 or not value.isdigit():
                    return 400, "bad_request", "a malformed Content-Length"
                length = int(value)
            elif name == b"transfer-encoding":
                return 501, "chunked", "send a body with a Content-Length"
        if length is not None:
            if length > _BODY_MAX:
                return 413, "too_large", "a request's body is at most %d bytes" % _BODY_MAX
            c.length = length
        return None

    def _dispatch(self, c, now):
        fn = None
        if self.guard is None or self.guard(c, now):
            r = self.routes.get(c.path)
            if r is None:
                for p in self.routes:
                    if p.endswith("*") and c.path.startswith(p[:-1]):
                        r = self.routes[p]
                        break
            if r is None:
                c.error(404, "not_found", "no such page")
            elif c.method not in r[1]:
                c.error(405, "bad_method", "this address takes %s" % " or ".join(r[1]),
                        "Allow: %s\r\n" % ", ".join(r[1]))
            else:
                fn = r[0]
        if fn is not None:
            try:
                fn(c, now)
            except MemoryError:
                if not c.answered:
                    c.clear()
                    c.error(503, "no_memory", "the request did not fit in memory")
            if not c.answered:
                c.error(500, "fault", "the request was not answered")
        if c.state == _SEND:  # the request is done with: the buffer sends from here on
            c.body = None
        elif c.state == STREAM:  # a stream needs no buffer: it sends its queue
            self._give_back(c)

    def _write(self, c):
        """One write: of what waits, else of the file's next chunk."""
        s = c.sock
        out = c.out
        if out:
            b = out[0]
            pos = c.pos
            k = len(b) - pos
            k = s.write(b, pos, k if k < _CHUNK else _CHUNK)
            if k:
                c.size -= k
                pos += k
                if pos == len(b):
                    out.pop(0)
                    pos = 0
                c.pos = pos
            return
        if c.at == c.fn:
            c.fn = c.file.readinto(c.buf)
            c.at = 0
            if not c.fn:
                c.file.close()
                c.file = None
                return
        k = s.write(c.buf, c.at, c.fn - c.at)
        if k:
            c.at += k

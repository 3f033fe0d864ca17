# The board's own HTTP server: a small core the main loop steps, kept in
# the heap while the board is on a network; a request's reading and
# answering (shove/httpreq.py) and the page's routes (shove/webpage.py,
# named by shove/webroutes.py) are loaded while requests are under way and
# let go once only streams are left (as request.py is for the serial lines:
# code a board runs now and then is not kept in the heap). Loaded only once
# the board has joined a network (shove/wifi.py starts it), never on a board
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
#   srv.lazy                            modules let go once no request is under way (httpreq's, the routes')
#   srv.needs = fn                      fn(req) -> the lazy modules its answer needs, each loaded in a
#                                       step of its own before it is answered (httpreq.work)
#   srv.let_go()                        the lazy modules let go now, if no request is being read
#   srv.light, srv.let_go_for(line)     the same before a command line, unless it names one of srv.light
#   srv.step(now)                       the loop's: now in board ms
#   srv.busy                            output waits (the loop then steps it every round)
#   srv.open                            clients connected (the loop then looks more often)
#   srv.event(line)                     a line for every stream (an event line)
#   srv.streams(), srv.drop(conn)       the streams; one closed for falling behind
#   srv.close()
# and a request (httpreq.Req: method, path, host, origin, ctype, code, body)
# answers with req.reply(status, text), req.error(status, code, msg),
# req.send_file(path, ctype), req.send(f, size, ctype) (a body from
# f.readinto, which may give None: nothing yet, asked again at the next
# step) or req.stream(first, now), once; req.c.peer is
# its client's address as the port gives it ((address, port) on the ESP32, a
# sockaddr's bytes on the unix port: peer_address() reads both).
import select
import socket

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import keep, release, ticks_diff

HEAD_MAX = const(1024)  # a request's head (request line and headers)
BODY_MAX = const(512)  # a command's body: the serial port's line (protocol.MAX_LINE)
_SLOTS = const(3)  # clients at once; with the listener, four sockets
BUFFERS = const(2)  # request buffers: a stream needs none once its request is read, nor an answered one
_CHUNK = const(1024)  # the most one write sends
DEADLINE_MS = const(10000)  # a request's head and body
_LINGER_MS = const(2000)  # after the answer, the client's close awaited (a reset would cut the answer short)
QUEUE_MAX = const(4096)  # bytes a stream may have waiting before it is closed
_PING_MS = const(10000)  # a stream silent this long gets a ping
# a stream with nothing to send has its socket looked at (its client's close) this often, not every
# step: a look is a call into the network stack, and streams last for hours
_LOOK_MS = const(250)
# the requests' code (srv.lazy) stays loaded this long after the last request: a module's load
# from the flash is tens of ms on the chip with no read of the matrix in it (docs/performance.md,
# "Under web load"), and a page's load, a player's commands or a hostile client come in bursts;
# the heap holds it as while a request is under way, only for longer (the Wi-Fi tour's peaks rose 5 to 12 KB)
_KEEP_MS = const(5000)
# a request still arriving whose last read found nothing is read again no sooner than this: a read is
# a select and a recv in lwIP (some 0.3 ms on the chip), and while streams have output the loop steps
# the server every round (a silent or slow client made each of those rounds a read for nothing)
_WAIT_MS = const(10)

FREE = const(0)  # a slot's states
HEAD = const(1)
BODY = const(2)
SEND = const(3)
STREAM = const(4)
_LINGER = const(5)
RUN = const(6)  # a command's answer waits while it runs in the server's steps (webroutes.Routes.command)

# (constants as few objects as will do: each is heap on the chip while the server runs)
# the answer to one client too many, made whole here: a flood of them loads nothing
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 70\r\n"
         b"Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\nRetry-After: 2\r\n\r\n"
         b'{"ok":false,"error":"busy","msg":"the board serves 3 clients at once"}')
_EV_EVENT = const(b"event: event\ndata: ")
EV_SNAPSHOT = b"event: snapshot\ndata: "
_END = b"\n\n"
_PING = b"event: ping\ndata: {}\n\n"


def peer_address(peer):
    """A client's IPv4 address as text, from what accept() gave: the ESP32's
    (address, port), CPython's likewise, the unix port's sockaddr_in bytes
    (family, port, then the address); None for anything else."""
    if isinstance(peer, tuple):
        return peer[0] if peer and isinstance(peer[0], str) else None
    # AF_INET (2) in the host's byte order, either way round
    if isinstance(peer, (bytes, bytearray)) and len(peer) >= 8 and (peer[0], peer[1]) in ((2, 0), (0, 2)):
        return "%d.%d.%d.%d" % (peer[4], peer[5], peer[6], peer[7])
    return None



class Conn:
    """One client slot: its socket, the buffer it has from the server's
    (while it reads and answers a request), the request under way (req:
    an httpreq.Req, from its first byte until it is answered) and what
    waits to be sent."""

    def __init__(self):
        self.pair = self.buf = self.mv = self.sock = self.file = None  # pair: [bytearray, its memoryview]
        self.peer = None  # the client's address, as accept() gave it
        self.state = FREE
        self.out = []  # what waits to be sent, oldest first: bytes, or memoryviews of str (their bytes)
        self.clear()

    def clear(self):
        self.n = 0  # bytes of the request in buf
        self.need = 0  # the whole request's length, once its head is read
        self.since = 0  # tick (ms) it was accepted, or its answer sent (LINGER)
        self.req = None
        self.out.clear()
        self.pos = 0  # what of out[0] is written
        self.size = 0  # bytes in out
        self.file = None  # a file being sent, through buf: bytes buf[at:fn] wait
        self.at = self.fn = 0
        self.last = 0  # tick of a stream's last piece queued (its ping)
        # tick a quiet stream's socket was last looked at (_LOOK_MS); a request's last read that
        # found nothing (_WAIT_MS); -1: none
        self.look = -1

    def push(self, kind, text, now):
        """A piece for a stream: `kind` (_EV_EVENT, EV_SNAPSHOT), the text, a
        blank line. False if that overfills its queue (it is then closed)."""
        self.put(kind)
        if text is not None:
            if isinstance(text, list):  # a line carrying a state: its chunks, in order
                for t in text:
                    if t:
                        self.put(memoryview(t))
            else:
                self.put(memoryview(text))
            self.put(_END)
        self.last = now
        return self.size <= QUEUE_MAX

    def put(self, b):
        self.out.append(b)
        self.size += len(b)


class Server:
    def __init__(self, addr, tick):
        self.tick = tick  # a read of the matrix, between two sockets' work
        self.routes = {}  # path -> (fn, methods); a path ending in "*" is a prefix
        self.guard = self.watch = self.hold = self.needs = None
        self.lazy = ("httpreq",)
        self.light = ()  # byte strings naming a line light enough to run beside the lazy code (let_go_for)
        self.loaded = False  # httpreq (and lazy) in use since the last release
        self.asked = 0  # the tick of the last step with a request under way (_KEEP_MS)
        self.slots = [Conn() for _ in range(_SLOTS)]
        self.pool = []
        for _ in range(BUFFERS):
            b = bytearray(HEAD_MAX + BODY_MAX)
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
                "buffers": BUFFERS * (HEAD_MAX + BODY_MAX), "queued": sum(c.size for c in self.slots)}

    def close(self):
        for c in self.slots:
            if c.state != FREE:
                self.close_conn(c)
        self.sock.close()
        keep(())
        release(*self.lazy)

    # ---- the loop's step -------------------------------------------------------------------
    def step(self, now):
        self.now = now
        for _ in self.poll.ipoll(0):
            self.tick()  # (the poll and an accept are calls into the network stack: a read of the matrix after each)
            self._accept(now)
            break
        self.tick()
        busy = False
        asks = False  # a request under way, or an answer: the request's code stays loaded
        n = 0
        for c in self.slots:
            st = c.state
            if st == FREE:
                continue
            try:
                if st <= BODY:
                    if c.look < 0 or ticks_diff(now, c.look) >= _WAIT_MS:
                        from shove import httpreq  # loaded for the requests (let go below once none is left)

                        self.loaded = True
                        k = c.n
                        httpreq.work(self, c, now)
                        # nothing came and the request is not whole: the next read waits _WAIT_MS
                        st = c.state
                        c.look = now if c.n == k and (st == HEAD or st == BODY and c.n < c.need) else -1
                else:
                    self._work(c, st, now)
            except OSError:  # the client reset the connection, or the network went: it ends
                self.close_conn(c)
            except Exception:  # a fault (a MemoryError among them): this connection ends, nothing else
                self.faults += 1
                self.close_conn(c)
            self.tick()
            st = c.state
            if st != FREE:
                n += 1
                if st != STREAM:
                    asks = True
                # something to send, or a request read whole and held: every round. One still
                # arriving (or a client's close awaited) is looked at as a stream is, at the loop's
                # pace while a client is connected (a slow sender made every round a call into
                # the network stack for nothing, for seconds)
                if c.out or c.file is not None or (st == BODY and c.n >= c.need) or st == RUN:
                    busy = True
        if self.watch is not None:
            try:
                self.watch(now)
            except Exception:  # (a MemoryError making a snapshot): the streams keep their events
                self.faults += 1
        if asks:
            self.asked = now
        elif self.loaded and ticks_diff(now, self.asked) >= _KEEP_MS:  # only streams left a while: the requests' code goes
            self.let_go()
        if self.loaded:  # kept from the others' releases meanwhile (shove.keep)
            keep(self.lazy)
        self.busy = busy
        self.open = n

    def let_go(self):
        """The requests' code (lazy) let go now, not _KEEP_MS on, if no request
        is being read: the board's own work needs the heap it holds (12 KB).
        True if it was."""
        if not self.loaded:
            return False
        for c in self.slots:
            if c.state == HEAD or c.state == BODY:
                return False
        self.loaded = False
        keep(())
        release(*self.lazy)
        return True

    def let_go_for(self, line):
        """let_go() before a command `line` runs, unless it names one of
        self.light (a state, the LEDs: a page's or `hapenny play`'s after each
        dart), which runs beside the kept code: letting it go made the next
        request load it again, some 35 ms of the chip's a module with no read
        of the matrix, just after a dart. True if it was let go."""
        if isinstance(line, bytes):  # (not an over-long line's mark)
            for k in self.light:
                if k in line:
                    return False
        return self.let_go()

    def event(self, line):
        """An event line for every stream, shared (no copy). A stream that
        is too far behind is closed."""
        for c in self.slots:
            if c.state == STREAM:
                if not c.push(_EV_EVENT, line, self.now):
                    self.drop(c)
                else:
                    self.busy = True

    def drop(self, c):
        """A stream too far behind is closed (its page reconnects and catches up)."""
        self.overflows += 1
        self.close_conn(c)

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
            self.close_conn(lingering)
            slot = lingering
        if slot is None and streams < _SLOTS:
            return
        if slot is not None and not self.pool:  # every buffer in use: it waits as for a slot
            return
        try:
            s, peer = self.sock.accept()
        except OSError as e:
            # EAGAIN (11 on both ports): it went meanwhile. Else the network stack had no room
            # for it (ENOMEM: the virtual board's ESP-IDF model closes it, as its peer then sees)
            if e.args[0] != 11:
                self.refused += 1
            return
        self.tick()  # (each of these is a call into the network stack: a read of the matrix between)
        s.setblocking(False)  # an accepted socket starts blocking on the ESP32
        self.tick()
        if slot is None:
            self.refused += 1
            try:
                # what the client sent is read first: a socket closed with
                # bytes unread is reset, and the reset may overtake the answer
                for _ in range(4):
                    if not s.readinto(self._scratch):
                        break
                s.write(_BUSY)
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
        slot.peer = peer  # as the port gives it: (address, port) on the ESP32, a sockaddr's bytes on unix
        slot.state = HEAD
        slot.since = now

    def give_back(self, c):
        p = c.pair
        if p is not None:
            self.pool.append(p)
            c.pair = c.buf = c.mv = None

    def close_conn(self, c):
        self.give_back(c)
        f = c.file
        if f is not None:
            f.close()
        s = c.sock
        c.sock = c.peer = None
        c.state = FREE
        c.clear()
        if s is not None:
            self.tick()  # (lwIP's close: a call into the network stack)
            try:
                s.close()
            except OSError:
                pass

    def _work(self, c, st, now):
        """An answer's or a stream's turn: one write; or, once all is sent, a look for the client's close.
        Nothing while its command runs (RUN): its answer is made first."""
        if st == RUN:
            return
        if st != _LINGER and (c.out or c.file is not None):
            self._write(c)
            if st == SEND and not c.out and c.file is None:  # all sent: the client's close awaited
                c.state = _LINGER
                c.since = now
                self.give_back(c)
            return
        if st == _LINGER and ticks_diff(now, c.since) >= _LINGER_MS:
            self.close_conn(c)
            return
        # a quiet stream's socket, or an answered one's, is looked at every _LOOK_MS, not every step
        if ticks_diff(now, c.look) < _LOOK_MS:
            return
        c.look = now
        if st == STREAM and ticks_diff(now, c.last) >= _PING_MS:
            c.push(_PING, None, now)
        # what a client sends after its request is read is dropped; its close ends the connection
        if c.sock.readinto(self._scratch) == 0:
            self.close_conn(c)

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
            n = c.file.readinto(c.buf)
            if n is None:  # a body made a slice a step (update.Hashes): nothing yet, again next step
                return
            c.fn = n
            c.at = 0
            if not n:
                c.file.close()
                c.file = None
                return
            self.tick()  # (a read from the flash, then the write)
        k = s.write(c.buf, c.at, c.fn - c.at)
        if k:
            c.at += k

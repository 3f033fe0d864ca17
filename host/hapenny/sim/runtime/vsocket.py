# The virtual classic ESP32's `socket`: the unix port's own sockets (real
# loopback sockets, which its `select` polls), each charged to the ESP-IDF
# heap model (idfheap.py, the runtime's `esp32`) as lwIP on the chip takes
# its memory: socket() its PCB, netconn and mailbox, listen() the accept
# mailbox, accept() a connection at its worst (its send buffer and receive
# window full). What the model refuses fails as on the chip: socket() with
# OSError(ENOBUFS), accept() with OSError(ENOMEM) after closing the
# connection (the client sees it closed, never a half-open socket). A
# socket's memory is handed back when it is closed (an accepted one's at
# the model's next look: the unix port's accepted sockets are its own
# objects, and a closed one reads fileno() -1).
# vboot.py runs this with `_real` (the unix port's socket module) and `esp32`
# given, or imports it compiled (a board with an air) after putting them in
# sys.modules.
try:
    _real  # noqa: F821
except NameError:
    import sys

    import esp32

    _real = sys.modules["_hp_real_socket"]

import time

from micropython import const

g = globals()
for k in dir(_real):  # noqa: F821  (given by vboot.py)  the unix port's names, as its own module has them
    if k[0] != "_" and k != "socket":
        g[k] = getattr(_real, k)  # noqa: F821
IPPROTO_IP = 0  # the ESP32's socket has these too (lwIP's values)
IPPROTO_TCP = 6
IPPROTO_UDP = 17
TCP_NODELAY = 1


# What a socket call costs the chip under the ESP32 timing model. The call
# here is a real loopback system call, 10 to 30 us of this machine's time,
# which the bytecode's factor would turn into milliseconds of the chip's:
# that time is the simulator's (as _model's is), and each call is charged
# instead what the ESP32 port's path through lwIP costs
# (ports/esp32/modsocket.c, MicroPython v1.29.0-preview):
# - every read (socket_stream_read -> _socket_read_data) first calls
#   select() on the socket with a zero timeout, then lwip_recvfrom; a poll
#   of a socket (socket_stream_ioctl, MP_STREAM_POLL) is such a select;
#   a write is lwip_write; accept is lwip_accept and then the new socket's
#   _socket_settimeout (two lwip_setsockopt and an lwip_fcntl), as is
#   setblocking; close is lwip_close;
# - _SELECT_US: lwip_select with a zero timeout measured on an ESP32 at
#   133 us a call (esphome/esphome#14249, four sockets; its cost is lwIP's
#   per-socket locking, get_socket/done_socket and SYS_ARCH_PROTECT: one
#   socket is charged as four, which errs slow);
# - _CALL_US: an lwIP socket call that reaches the TCP/IP core. The port's
#   sdkconfig leaves CONFIG_LWIP_TCPIP_CORE_LOCKING off, so lwip_recvfrom
#   (its window update), lwip_write, lwip_accept and lwip_close each post a
#   message to the tcpip task and wait for its answer: two task switches
#   and the same socket locking as select. No per-call figure for these was
#   found measured on a chip; they are charged as the select measured
#   beside them, which errs slow (the switches are a few us at 240 MHz);
# - _BYTE_NS: each byte sent or received is copied once (lwIP copies what is
#   written into its pbufs, NETCONN_COPY; a read copies out of them) and
#   summed for the TCP checksum in software: some 10 cycles a byte at
#   240 MHz; 50 ns (12 cycles) errs slow.
# docs/performance.md ("Under web load") says how much the rows move with them.
_SELECT_US = const(133)
_CALL_US = const(133)
_BYTE_NS = const(50)
# the figures of the socket calls (the test bench's stats): calls, bytes
# copied, the chip's us charged for them, and this machine's us spent in them
# (names the firmware has interned already, and consts: each new name here
# would take a place in the chip-sized heap's pools of names)
stats = [0, 0, 0, 0]


def clock(c=[]):
    """The board's clock, kept once found (a look-up each call would be charged as the firmware's)."""
    if c:
        return c[0]
    try:
        import machine

        c.append(machine.board_clock)
        return c[0]
    except (ImportError, AttributeError):
        return None


def _model(fn, *args):
    """fn(*args): the ESP-IDF heap model's bookkeeping (Python here, C
    inside lwIP and ESP-IDF on the chip), kept off the firmware's time: the
    board's clock charges the firmware's work up to this call, and not the
    model's (under the ESP32 timing model it would be charged at the
    bytecode's factor, milliseconds of the chip's time an accept)."""
    c = clock()
    if c is None or not hasattr(c, "scale"):  # (the plain timing model: the board's time is this machine's)
        return fn(*args)
    c.charge()
    try:
        return fn(*args)
    finally:
        c.sim(0)


def call(us, t, fn, *args):
    """fn(*args), a socket call, charged `us` of the chip's time and _BYTE_NS
    a byte it moved (its result's count, or recvfrom's data), its host time
    kept off the firmware's (as _model's). `t`: time.ticks_us() as the call
    entered this module, the firmware's work charged up to there: the
    Python path from there to the system call (a method, this function, a
    look-up of the clock: some 80 us of the chip's at the factor) is the
    simulator's, and a call into the port's C costs the chip no bytecode."""
    c = clock()
    if c is None:
        return fn(*args)
    f = stats
    f[0] += 1
    if not hasattr(c, "scale"):  # the plain timing model: the call's own time is the board's
        return fn(*args)
    c.charge(t)  # the firmware's work up to the call
    t0 = c.last
    n = 0
    try:
        r = fn(*args)
        if isinstance(r, int):
            n = r
        elif isinstance(r, tuple) and isinstance(r[0], bytes):  # recvfrom's (data, address)
            n = len(r[0])
        return r
    finally:
        us += n * _BYTE_NS // 1000
        f[1] += n
        f[2] += us
        f[3] += time.ticks_diff(time.ticks_us(), t0)
        c.sim(us)  # (this bookkeeping too is the simulator's)


class Conn:
    """An accepted connection: the unix port's own socket (accept makes
    one of its objects, not this module's class), each call charged as the
    chip's (call)."""

    def __init__(self, s):
        self.sock = s

    def fileno(self):
        return self.sock.fileno()

    def setblocking(self, n):
        return call(_CALL_US, time.ticks_us(), self.sock.setblocking, n)

    def readinto(self, buf, *n):
        return call(_SELECT_US + _CALL_US, time.ticks_us(), self.sock.readinto, buf, *n)

    def write(self, buf, *a):
        return call(_CALL_US, time.ticks_us(), self.sock.write, buf, *a)

    def close(self):
        call(_CALL_US, time.ticks_us(), self.sock.close)
        _model(esp32.heap().sweep)  # noqa: F821


def _adopt(conn):
    """An accepted connection into the heap model, wrapped (Conn); refused
    (ENOMEM), or the model's own fault: the client sees it closed, never hangs."""
    h = esp32.heap()  # noqa: F821
    h.sweep()
    try:
        ids = h.connection()
    except Exception:
        conn.close()
        raise
    conn = Conn(conn)
    h.sockets.append([conn, ids])
    return conn


class socket(_real.socket):  # noqa: F821
    def __init__(self, af=_real.AF_INET, type=_real.SOCK_STREAM, proto=0):  # noqa: F821
        super().__init__(af, type, proto)
        h = esp32.heap()  # noqa: F821
        _model(h.sweep)
        try:
            ids = _model(h.socket, type == _real.SOCK_DGRAM)  # noqa: F821
        except OSError:
            super().close()
            raise
        h.sockets.append([self, ids])

    def listen(self, backlog=2):
        h = esp32.heap()  # noqa: F821
        ids = _model(h.listening)
        for s in h.sockets:
            if s[0] is self:
                s[1] += ids
        super().listen(backlog)

    def accept(self):
        # lwip_accept, then the new socket's _socket_settimeout (modsocket.c)
        conn, addr = call(2 * _CALL_US, time.ticks_us(), super().accept)
        # its memory in the heap model, and the wrapper that charges its calls: the
        # simulator's bookkeeping, off the firmware's time as the model's own
        return _model(_adopt, conn), addr

    def recvfrom(self, n):
        return call(_SELECT_US + _CALL_US, time.ticks_us(), super().recvfrom, n)

    def sendto(self, buf, addr):
        return call(_CALL_US, time.ticks_us(), super().sendto, buf, addr)

    def close(self):
        call(_CALL_US, time.ticks_us(), super().close)
        _model(esp32.heap().sweep)  # noqa: F821

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

g = globals()
for k in dir(_real):  # noqa: F821  (given by vboot.py)  the unix port's names, as its own module has them
    if k[0] != "_" and k != "socket":
        g[k] = getattr(_real, k)  # noqa: F821
IPPROTO_IP = 0  # the ESP32's socket has these too (lwIP's values)
IPPROTO_TCP = 6
IPPROTO_UDP = 17
TCP_NODELAY = 1


def _model(fn, *args):
    """fn(*args): the ESP-IDF heap model's bookkeeping (Python here, C
    inside lwIP and ESP-IDF on the chip), kept off the firmware's time: the
    board's clock charges the firmware's work up to this call, and not the
    model's (under the ESP32 timing model it would be charged at the
    bytecode's factor, milliseconds of the chip's time an accept)."""
    try:
        import machine

        c = machine.board_clock
    except (ImportError, AttributeError):
        return fn(*args)
    c.ticks_us()
    try:
        return fn(*args)
    finally:
        c.sim(0)


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
        conn, addr = super().accept()
        h = esp32.heap()  # noqa: F821
        _model(h.sweep)
        try:
            ids = _model(h.connection)
        except OSError:
            conn.close()
            raise
        h.sockets.append([conn, ids])
        return conn, addr

    def close(self):
        super().close()
        _model(esp32.heap().sweep)  # noqa: F821

# The virtual board's `os`: the unix port's, with ilistdir() giving sizes as
# an ESP32's littlefs does (mpremote's `fs ls` shows them), and dupterm()
# and dupterm_notify(), which the unix port lacks. The REPL (vboot.py)
# reads the port's stdin ring first: bytes dupterm_notify() moved there
# (extmod/modos.c: mp_os_dupterm_notify puts what the streams give into
# stdin_ringbuf, on every release since v1.20). Then, when no serial byte
# is waiting, an attached stream, but only on a board whose release does so
# (ports/esp32/mphalport.c: mp_hal_stdin_rx_chr reads dupterm from v1.28.0
# on; HAPENNY_REPL_DUPTERM=0 is a v1.27 board, whose REPL never does).
from uos import *  # noqa: F401,F403
import uos

# The chip the board is (the simulator's HAPENNY_MCU): os.uname().machine as
# the ESP32 port gives it, "<board name> with <MCU name>" (extmod/modos.c).
_MCU = uos.getenv("HAPENNY_MCU")


class _Uname:  # the unix port has no os.uname(): the ESP32 port's fields
    def __init__(self, machine):
        import sys

        self.sysname = self.nodename = "esp32"
        self.release = ".".join(str(x) for x in sys.implementation.version[:3])
        self.version = "v" + self.release
        self.machine = machine


if _MCU:

    def uname():
        return _Uname(_MCU)


def ilistdir(path="."):
    for entry in uos.ilistdir(path):
        name, kind = entry[0], entry[1]
        size = 0
        if kind == 0x8000:
            try:
                size = uos.stat((path.rstrip("/") + "/" if path not in ("", ".") else "") + name)[6]
            except OSError:
                pass
        yield (name, kind, 0, size)


_dupterm = [None]


def dupterm(stream, index=0):
    prev = _dupterm[index]
    _dupterm[index] = stream
    return prev


_ring = bytearray()  # the bytes dupterm_notify() put into the stdin ring
REPL_READS_DUPTERM = uos.getenv("HAPENNY_REPL_DUPTERM") != "0"


def dupterm_notify(obj):
    """Move what the attached stream has into the stdin ring, as
    extmod/modos.c's mp_os_dupterm_notify does (it stops at the first read
    that gives nothing; a full ring drops the byte)."""
    while True:
        c = _stream_read()
        if c is None:
            return None
        if len(_ring) < 259:  # ports/esp32/mphalport.c: a ring of 260, one always free
            _ring.append(c)


def repl_read():
    """The REPL's next byte that is not a serial one, or None: the stdin
    ring's (what dupterm_notify put there), then the attached stream's if
    this release's REPL reads it."""
    if _ring:
        c = _ring[0]
        _ring[:1] = b""
        return c
    return _stream_read() if REPL_READS_DUPTERM else None


def _stream_read():
    """One byte from the attached stream, or None (extmod/os_dupterm.c:
    a read of None means no data now)."""
    s = _dupterm[0]
    if s is None:
        return None
    buf = bytearray(1)
    n = s.readinto(buf)
    if n is None:
        return None
    if n == 0:
        _dupterm[0] = None
        return None
    return buf[0]

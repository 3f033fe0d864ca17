# The virtual board's `os`: the unix port's, with ilistdir() giving sizes as
# an ESP32's littlefs does (mpremote's `fs ls` shows them), and dupterm(),
# which the unix port lacks: the REPL (vboot.py) reads an attached stream
# when no serial byte is waiting, as ports/esp32/mphalport.c does.
from uos import *  # noqa: F401,F403
import uos


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


def dupterm_read():
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

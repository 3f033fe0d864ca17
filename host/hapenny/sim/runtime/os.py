# The virtual board's `os`: the unix port's, with ilistdir() giving sizes as
# an ESP32's littlefs does (mpremote's `fs ls` shows them).
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

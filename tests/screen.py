"""Reading what a terminal program shows, for tests that drive one through a pty."""
import os
import select
import time


def read_screen(fd, until, timeout=8.0):
    """The last full screen (after the last clear) once `until(screen)` holds."""
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
            screen = buf.rsplit(b"\x1b[H\x1b[2J", 1)[-1].decode("utf-8", "replace")
            if until(screen):
                return screen
    raise AssertionError("screen never showed it:\n" + buf[-1500:].decode("utf-8", "replace"))

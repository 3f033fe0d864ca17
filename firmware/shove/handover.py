# Handing the serial port to the REPL. The main loop reads 0x03 as data
# (micropython.kbd_intr(-1)), so line noise cannot stop the board; only the
# documented sequences hand the port over:
#   Ctrl-C then Ctrl-A within a second: what mpremote sends ("\r\x03", a
#     flush, "\r\x01") to take the raw REPL;
#   Ctrl-C twice within a second: a person at a terminal.
# The loop has read the Ctrl-A by then, so it is given back to the REPL
# through os.dupterm (see OneShot).
import io
PASS = 0  # an ordinary byte: on to the line buffer
DROP = 1  # a control byte the loop keeps to itself
TO_REPL = 2  # hand over: the friendly REPL
TO_RAW = 3  # hand over, and give the Ctrl-A back: the raw REPL

CTRL_A = 1
CTRL_C = 3
WINDOW_MS = 1000


class Watch:
    def __init__(self):
        self.armed = False  # a Ctrl-C came, at `since`
        self.since = 0
        self.lone = 0  # Ctrl-Cs that handed nothing over (line noise)

    def feed(self, b, now_ms):
        """What to do with byte `b` arriving at `now_ms` (a wrapping ms tick)."""
        live = self.armed and ((now_ms - self.since) & 0x3FFFFFFF) < WINDOW_MS
        if b == CTRL_C:
            if live:
                self.armed = False
                return TO_REPL
            if self.armed:
                self.lone += 1  # the earlier one came to nothing
            self.armed = True
            self.since = now_ms
            return DROP
        if b == CTRL_A and live:
            self.armed = False
            return TO_RAW
        if self.armed and (not live or b not in (10, 13)):
            # only line ends may stand between the two bytes of a sequence
            self.armed = False
            self.lone += 1
        return PASS


class OneShot(io.IOBase):
    """A dupterm stream that gives the REPL `data` once, then nothing.
    ports/esp32/mphalport.c reads dupterm streams when the UART's ring is
    empty; extmod/os_dupterm.c takes a read of None as "no data now" (0 would
    be end of file, which detaches it with a message), and copies all
    console output to the stream's write(). A soft reset detaches it
    (py/runtime.c clears dupterm_objs)."""

    def __init__(self, data):
        self.data = data

    def readinto(self, buf):
        if not self.data:
            return None
        buf[0] = self.data[0]
        self.data = self.data[1:]
        return 1

    def write(self, buf):
        return len(buf)

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL: readable while there is data
            return arg & 1 if self.data else 0
        return 0


def give_back(data):
    import os

    os.dupterm(OneShot(data))

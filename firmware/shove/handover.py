# Handing the serial port to the REPL. The main loop reads 0x03 as data
# (micropython.kbd_intr(-1)), so line noise cannot stop the board; only the
# documented sequences hand the port over:
#   Ctrl-C then Ctrl-A within a second: what mpremote sends ("\r\x03", a
#     flush, "\r\x01") to take the raw REPL;
#   Ctrl-C twice within a second: a person at a terminal.
# The loop has read the Ctrl-A by then, so it is given back to the REPL
# (shove/giveback.py, loaded only then: its code needs no heap while the
# game runs).

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

PASS = 0  # an ordinary byte: on to the line buffer
DROP = 1  # a control byte the loop keeps to itself
TO_REPL = 2  # hand over: the friendly REPL
TO_RAW = 3  # hand over, and give the Ctrl-A back: the raw REPL

CTRL_A = 1
_CTRL_C = const(3)
WINDOW_MS = 1000


class Watch:
    def __init__(self):
        self.armed = False  # a Ctrl-C came, at `since`
        self.since = 0
        self.lone = 0  # Ctrl-Cs that handed nothing over (line noise)

    def feed(self, b, now_ms):
        """What to do with byte `b` arriving at `now_ms` (a wrapping ms tick)."""
        live = self.armed and ((now_ms - self.since) & 0x3FFFFFFF) < WINDOW_MS
        if b == _CTRL_C:
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

# Handing the serial port to the REPL. The main loop reads 0x03 as data
# (micropython.kbd_intr(-1)), so line noise cannot stop the board; only the
# documented sequences hand the port over:
#   Ctrl-C then Ctrl-A within a second: what mpremote sends ("\r\x03", a
#     flush, "\r\x01") to take the raw REPL;
#   Ctrl-C twice within a second: a person at a terminal.
# The loop has read the Ctrl-A by then, so it is given back to the REPL
# (give_back): put into the port's stdin ring through os.dupterm_notify,
# which every release reads, where the REPL of v1.27 and earlier never
# looks at a dupterm stream.
import io
import os
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
    """A dupterm stream that gives `data` once, then nothing.
    extmod/os_dupterm.c takes a read of None as "no data now" (0 would be
    end of file, which detaches it with a message), and copies all console
    output to the stream's write(). A soft reset detaches it (py/runtime.c
    clears dupterm_objs)."""

    def __init__(self, data):
        self.data = data
        self.at = 0

    def readinto(self, buf):
        if self.at >= len(self.data):
            return None
        buf[0] = self.data[self.at]
        self.at += 1
        return 1

    def write(self, buf):
        return len(buf)

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL: readable while there is data
            return arg & 1 if self.at < len(self.data) else 0
        return 0


def give_back(data, os_mod=os):
    """Put `data` where the REPL reads next. The ESP32's REPL reads a dupterm
    stream only from v1.28.0 on (ports/esp32/mphalport.c: v1.27.0's
    mp_hal_stdin_rx_chr reads the stdin ring alone), so the bytes go into
    the stdin ring itself: os.dupterm_notify() reads the attached streams
    into stdin_ringbuf (extmod/modos.c, mp_os_dupterm_notify; enabled by
    MICROPY_PY_OS_DUPTERM_NOTIFY in ports/esp32/mpconfigport.h of v1.27.0,
    v1.28.0 and v1.29). Call it while 0x03 is still data (kbd_intr(-1)):
    extmod/os_dupterm.c turns the interrupt character read from a stream
    into a KeyboardInterrupt and stops there. The stream is detached
    afterwards; a port without dupterm_notify keeps it attached for a REPL
    that reads it. (The UART's interrupt puts bytes into the same ring, so a
    byte arriving during these few microseconds could be lost; mpremote
    sends nothing until the raw REPL's prompt.)"""
    s = OneShot(data)
    os_mod.dupterm(s)
    notify = getattr(os_mod, "dupterm_notify", None)
    if notify is not None:
        notify(None)
        os_mod.dupterm(None)
    return s.at

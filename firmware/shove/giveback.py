# What the loop read after a hand-over to the REPL (shove/handover.py), given
# back to it: put into the port's stdin ring through os.dupterm_notify, which
# every release reads, where the REPL of v1.27 and earlier never looks at a
# dupterm stream. Loaded once, when the loop ends.
import io
import os


class OneShot(io.IOBase):
    """A dupterm stream that gives `data` once, then nothing.
    extmod/os_dupterm.c takes a read of None as "no data now" (0 would be
    end of file, which detaches it with a message), and copies all console
    output to the stream's write(). A soft reset detaches it (py/runtime.c
    clears dupterm_objs). Once drained it puts back the stream it displaced
    (see restore)."""

    def __init__(self, data):
        self.data = data
        self.at = 0
        self.os = None  # the os it was attached with, until restore()
        self.prev = None  # what os.dupterm returned: the stream attached before

    def readinto(self, buf):
        if self.at >= len(self.data):
            self.restore()
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

    def restore(self):
        """Attach again, once, the stream this one displaced: a WebREPL that
        boot.py started keeps its terminal. extmod/os_dupterm.c: os.dupterm
        returns the slot's previous stream (None if empty) and only replaces
        it, never closing it; the ESP32 has one slot (ports/esp32/
        mpconfigport.h: MICROPY_PY_OS_DUPTERM (1)). Safe from inside a read:
        mp_os_dupterm_rx_chr reads the slot afresh for each stream."""
        o = self.os
        if o is not None:
            self.os = None
            o.dupterm(self.prev)


def give_back(data, os_mod=os):
    """Put `data` where the REPL reads next. The ESP32's REPL reads a dupterm
    stream only from v1.28.0 on (ports/esp32/mphalport.c: v1.27.0's
    mp_hal_stdin_rx_chr reads the stdin ring alone), so the bytes go into
    the stdin ring itself: os.dupterm_notify() reads the attached streams
    into stdin_ringbuf (extmod/modos.c, mp_os_dupterm_notify; enabled by
    MICROPY_PY_OS_DUPTERM_NOTIFY in ports/esp32/mpconfigport.h of v1.27.0,
    v1.28.0 and v1.29). Call it while 0x03 is still data (kbd_intr(-1)):
    extmod/os_dupterm.c turns the interrupt character read from a stream
    into a KeyboardInterrupt and stops there. The stream is swapped out
    afterwards; a port without dupterm_notify keeps it attached for a REPL
    that reads it, and the stream puts the previous one back once drained.
    Either way the stream attached before (a WebREPL's) is attached again.
    (The UART's interrupt puts bytes into the same ring, so a byte arriving
    during these few microseconds could be lost; mpremote sends nothing
    until the raw REPL's prompt.)"""
    s = OneShot(data)
    s.prev = os_mod.dupterm(s)
    s.os = os_mod
    notify = getattr(os_mod, "dupterm_notify", None)
    if notify is not None:
        notify(None)
        s.restore()
    return s.at

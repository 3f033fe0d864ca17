# The virtual board's clock in its plain timing model: the board's time is
# this process's, less the pauses the operating system takes, and the slow
# parts (strip, flash) are waited for as on the chip unless HAPENNY_FAST is
# set. The ESP32 timing model (virtual_esp32.py) is this clock's subclass;
# the board picks one of the two when it is made and never asks again.
import os
import time

try:  # the simulator's runtime: the flash is mounted at "/", the host's files (pipes, /proc) through it
    from flashdev import host_open  # type: ignore[import-not-found]
except ImportError:  # a bare unix port (tests): the host's files are at "/"
    host_open = open

MASK = 0x3FFFFFFF  # the board's clocks wrap at 2**30, like the ESP32's
# An ESP32 running the scan loop is never paused by an operating system; this
# process is. A gap longer than this between two reads of the clock is the OS
# taking the CPU away, and the board's clock does not move during it. The
# modelled slow parts (strip, flash) advance the clock in full.
STALL_US = 500
# An unread stretch of the matrix longer than this is looked at (the
# board's stretch(): the flash's share of it, the OS's pauses in it); no
# contact the test bench throws is shorter.
STRETCH_US = 500
# esp32.py's matrix read on the chip: per row a drive, settle and recovery
# reads of the GPIO registers from viper code (docs/performance.md, "The
# scan on an ESP32"), about 1.7 us a row, plus calling it from bytecode.
READ_US = 20
# Between two viper calls of a long idle burst, esp32.py looks at the
# console (poll) and the buttons (three pin reads) in bytecode.
WAKE_US = 30
WAKE_EVERY = 16


def readable(poll):
    """Something to read on the poll's stream (ipoll: no list made per look)."""
    for _ in poll.ipoll(0):
        return True
    return False


class Clock:
    """The board's clock, unwrapped in `total` (us since start), and the
    hooks through which the board tells it whose work the time since its
    last reading was. In this model only the time itself counts: the hooks
    for the ESP32 model's charges do nothing."""

    def __init__(self):
        self.last = time.ticks_us()  # this process's clock at the last reading
        self.base = int(os.getenv("HAPENNY_TICKS0") or 0) & MASK
        self.total = 0  # board microseconds since start, unwrapped
        self.stalls = 0  # OS pauses the clock skipped
        self.stall_at = -1  # board time (unwrapped) the last one ended
        self.idles = 0  # idle waits (the board's IDLE_MS)
        self.idle_us = 0  # board time spent in them
        self.in_sim = False  # the test bench's control channel is being served
        self.slow = os.getenv("HAPENNY_FAST") is None  # wait for the slow strip and flash

    def ticks_us(self):
        raw = time.ticks_us()
        gap = time.ticks_diff(raw, self.last)
        self.last = raw
        if gap > STALL_US:
            gap = STALL_US
            self.stalls += 1
            self.stall_at = self.total + gap
        self.total += gap
        return (self.base + self.total) & MASK

    def ticks_ms(self):
        self.ticks_us()
        return (self.base + self.total // 1000) & MASK

    def now_us(self):
        """The board's time at the last reading, without reading again."""
        return (self.base + self.total) & MASK

    def look_ms(self):
        """The time in ms for a look between two bursts (the ESP32 model:
        without charging, the look's cost is its own)."""
        return self.ticks_ms()

    # The ESP32 model's charges (see virtual_esp32.py); nothing here.
    def work(self):
        """The firmware's work up to here is the chip's: a clock read."""

    def charge(self):
        """The firmware's work up to here, with the clock read inline."""

    def sim(self, us=0):
        """Since the last reading this process did the simulator's work:
        `us` of the chip's time stands for it."""

    def spent(self, us):
        """A modelled slow operation took `us` of board time."""
        self.total += us
        self.last = time.ticks_us()

    def busy(self, us):
        """The CPU is held for `us` (the strip's write blocks)."""
        if self.slow:
            self.ticks_us()
            end = time.ticks_add(time.ticks_us(), us)
            while time.ticks_diff(end, time.ticks_us()) > 0:
                pass
            self.spent(us)

    def io(self, us):
        """The flash takes `us` at this point of a write."""
        if self.slow:
            self.ticks_us()
            time.sleep_us(us)
            self.spent(us)

    def wait(self, poll, ms):
        """Wait up to `ms` for `poll` to find something; the wait counts on
        the board's clock (nothing the firmware could see happens meanwhile).
        Returns the us it took."""
        t0 = time.ticks_us()
        for _ in poll.ipoll(ms):
            break
        us = time.ticks_diff(time.ticks_us(), t0)
        if us > ms * 1000 + STALL_US:  # it overslept: the OS took the CPU away
            us = ms * 1000
            self.stalls += 1
            self.stall_at = self.total + us
        self.spent(us)
        self.idle_us += us
        self.idles += 1
        return us

    def burst(self, board, snap, n):
        """Up to `n` reads while all read open: read by read, each on its
        own clock reading."""
        rows = board.rows
        k = 0
        while k < n:
            board.read_matrix(snap)  # (called, not taken: a bound method taken is a new object)
            for r in range(rows):
                if snap[r]:
                    return k
            k += 1
        return k

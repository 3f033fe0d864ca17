# Virtual board layer for the MicroPython unix port: the matrix is an
# electrical model, the strip and the flash (littlefs) as slow as on an
# ESP32, and the simulator's test bench drives it through a control channel.
# Its parts, the timing model picked once here: virtual_clock (the plain
# model's clock), virtual_esp32 (the ESP32 model's) with virtual_uart (its
# UART), virtual_flash, virtual_bench (the control channel), matrix_model.
import os
import select
import sys
import time

from shove import RESET_MARK, call, scanner
from shove.boards.virtual_clock import MASK, STRETCH_US, WAKE_EVERY, WAKE_US, readable
from shove.scanner import WOKE_INPUT, WOKE_TIME

STRIP_US_PER_PIXEL = 30  # 24 bits at 800 kHz, as neopixel.write() blocks on an ESP32
RESET_EXIT = 12  # exit status the simulator reads as "power-cycle me"


class Serial:
    """The console in the plain timing model: the pseudo-terminal as it is
    (the ESP32 model's is virtual_uart.Uart, with the same interface)."""

    us_per_byte = 0  # nothing to pace the output to
    console = None  # the app writes to its own stdout
    rxq = b""  # nothing on its way in
    ring = sent_us = lines_out = blocked_us = dropped = arrived = peak = last_in = 0
    mid_line = False  # each line goes out whole
    on_take = None  # the test bench's act anchored to the next byte taken (virtual_bench.py)

    def __init__(self, poll):
        self.poll = poll
        self._b1 = bytearray(1)

    def ready(self):
        return readable(self.poll)

    waiting = ready

    def take(self, buf, most):
        n = 0
        b1 = self._b1
        while n < most and readable(self.poll):
            if sys.stdin.buffer.readinto(b1) != 1:
                break
            buf[n] = b1[0]
            n += 1
        if n and self.on_take is not None:
            act, self.on_take = self.on_take, None
            act()
        return n

    def line_times(self, lo):
        return []


class Board:
    def __init__(self, profile, esp32_scale=None):
        # made by start-up code of its own (virtual_setup.py), let go once
        # the board is made: that code is in the heap only meanwhile
        call("boards.virtual_setup", "build", self, profile, esp32_scale, Serial)

    # the figures the app's stats read from any board
    @property
    def stalls(self):
        return self.clock.stalls

    @property
    def idles(self):
        return self.clock.idles

    # ---- matrix ---------------------------------------------------------------
    def read_matrix(self, snap):
        c = self.clock
        now = c.ticks_us()
        gap = c.total - self.last_read
        m = self.model
        m.disturbed = gap > STRETCH_US and self.stretch(gap)
        self.last_read = c.total
        if gap > self.gap_max_us:  # the longest the matrix went unread (stats resets it)
            self.gap_max_us = gap
        full = self.full
        for r in range(self.rows):
            snap[r] = ~m.levels(r, now) & full

    def stretch(self, gap):
        """The matrix went unread for `gap` us up to this read (one longer
        than STRETCH_US): what was in that stretch, for the test bench.
        True if the OS took the CPU away inside it (the model then charged
        this process's CPU time in it as the firmware's, and that time can
        hold more than the firmware's work: docs/virtual-board.md)."""
        c = self.clock
        fl = self.flash
        if fl.run_from == self.last_read and fl.run_us > self.gap_flash_max_us:
            self.gap_flash_max_us = fl.run_us  # the flash's busy time inside one stretch
        if c.stall_at > self.last_read:
            if gap > self.gap_os_max_us:
                self.gap_os_max_us = gap
            return True
        if gap > self.gap_quiet_max_us:
            self.gap_quiet_max_us = gap
        return False

    def scan_idle(self, snap, n, until=-1, tx=None):
        """As esp32.py's (boards/__init__.py has the interface): bursts of up
        to WAKE_EVERY reads, between them a look at the console, the buttons
        and the clock, and the next load of `tx` into the UART's FIFO once it
        has sent everything."""
        self.woke = 0
        if self.crash and n > 1:
            # a test's stand-in for a bug outside the request handlers: in
            # the loop's own burst (a slice's single read is inside the
            # slices' catch-all, which reports a bug and goes on)
            self.crash = False
            raise RuntimeError("injected fault in the scan loop")
        c = self.clock
        # the firmware's work up to this call, with the clock read inline:
        # a call to ticks_us would be charged too, and on the chip there is none
        c.charge()
        c.in_sim = True  # (the ESP32 model's edge interrupt does not run its handler inside: Esp32Clock.handle)
        k = 0
        while True:
            m = n - k
            if m > WAKE_EVERY:
                m = WAKE_EVERY
            got = c.burst(self, snap, m)
            k += got
            if self.serial.rxq or readable(self.serial.poll):  # the host's bytes waited meanwhile: the
                self.input_reads += got  # test bench's count (a look must end the burst at them)
            c.sim(0)  # (that look, a system call, is the test bench's: the chip makes none here)
            if got < m or k >= n:
                break
            # between two viper calls on the chip: a look at the console, the buttons, the clock
            if self.buttons_down() or self.serial.waiting():
                self.woke = WOKE_INPUT
            elif until >= 0 and scanner.ticks_diff(until, c.look_ms()) <= 0:
                self.woke = WOKE_TIME
            c.sim(WAKE_US)
            if self.woke:
                break
            if tx is not None and scanner.ticks_diff(c.now_us(), tx.end) >= 0:
                # esp32.py's next FIFO load, step for step: its bytecode is
                # charged as the firmware's (the console's write charges
                # what came before it)
                c.sim(0)  # the look above is in WAKE_US
                m = tx.load()
                tx.sent_at(c.now_us(), m)  # from the write's end
                if not tx.q:
                    tx = None
                c.charge()
            if self.bench is not None:
                if not self._served:  # no loop to serve the test bench's lines with yet
                    self.woke = WOKE_INPUT
                    break
                k += self.bench.look(self._stats, n - k, until, tx)
        c.in_sim = False
        return k

    def line_test(self):
        """The doctor's line test (virtual_setup.py's, loaded for it)."""
        return call("boards.virtual_setup", "line_test", self)

    def press(self, row, col, ms):
        return self.close_us(row, col, ms * 1000, 0)

    def close_us(self, row, col, length_us, delay_us):
        on = (self.ticks_us() + delay_us) & MASK
        return self.model.close(row, col, on, (on + length_us) & MASK)

    # ---- the buttons ----------------------------------------------------------------
    def buttons_down(self):
        h = self.held
        return bool(h[0] or h[1] or h[2])  # button(i) lets a hold that has ended go

    def button(self, i):
        until = self.held[i]
        if not until:
            return False
        if time.ticks_diff(until, self.ticks_ms()) > 0:
            return True
        self.held[i] = 0
        return False

    # ---- strip ---------------------------------------------------------
    def strip_write(self, frame):
        c = self.clock
        c.busy(STRIP_US_PER_PIXEL * self.strip_count)
        if self.strip_fault == "dead":  # no data reaches the strip: it stays dark
            frame = bytes(len(frame))
        elif self.strip_fault == "shifted":  # the strip starts one LED later than the profile says
            frame = bytes(3) + bytes(frame)[:-3]
        self.frame = bytes(frame)
        self.strip_writes += 1
        if self.bench is not None:
            self.bench.frame(self.frame, c.total)
        c.sim(0)  # the copy and the report above are the simulator's

    # ---- the loop's housekeeping -------------------------------------------------
    def hooks(self, stats, quiet, scanner):
        self._stats = stats
        self.quiet = quiet
        self.scanner = scanner  # (the ESP32 model's edge interrupt steps it, as esp32.py's does)

    def service(self):
        # the chip's is a `pass` (esp32.py): its call is the firmware's,
        # the test bench's work here (virtual_bench.py) the simulator's
        self.clock.charge()
        if self.bench is not None:
            self.bench.service(self._stats, self.quiet)

    # The watchdog as on the ESP32 (esp32.py): armed once, fed from a timer
    # only while the loop checks in, and fed unconditionally once the loop
    # has stopped on purpose. The simulator's `machine` gives WDT and Timer
    # the ESP32 port's semantics (host/hapenny/sim/runtime/machine.py);
    # elsewhere (a bare unix port) there is no watchdog.
    def start_watchdog(self, timeout_ms=8000):
        call("boards.virtual_setup", "start_watchdog", self, timeout_ms)  # once, at the loop's start

    def _tick(self, _t):
        if self._free_run or time.ticks_diff(time.ticks_ms(), self._last_loop) < 3000:
            self._wdt.feed()

    def feed(self):
        self._last_loop = time.ticks_ms()
        if self._run_timers is not None:
            c = self.clock
            c.work()
            # scheduled callbacks run between the loop's passes, as on the chip
            self._timer_ms = self._run_timers()  # ms until the next is due
            c.sim(0)  # the timer emulation, not the chip's work

    def timer_wait(self, ms):
        """How long the board may wait idle: `ms`, or less if a timer callback is due sooner."""
        t = self._timer_ms
        if t is not None and t < ms:
            return t if t > 0 else 0
        return ms

    def stopped(self):
        self._free_run = True
        self.scanner = None  # the REPL has the board: no edge steps the game (esp32.py's edges off)

    def serial_raw(self, on):
        """0x03 as data (on) or as KeyboardInterrupt, like micropython.kbd_intr
        on the ESP32. The simulator turns 0x03 into SIGINT, and the unix port
        dies of SIGINT once kbd_intr(-1) is set, so the simulator is told
        instead and passes 0x03 through as a byte."""
        if self.bench is not None:
            self.bench.send({"kbd": -1 if on else 3})

    def reset(self, deliberate=False):
        if deliberate:  # as esp32.py: the runtime's RTC memory outlives the reset
            import machine

            machine.RTC().memory(RESET_MARK)
        sys.exit(RESET_EXIT)

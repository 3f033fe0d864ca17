# Virtual board layer for the MicroPython unix port: the matrix is an
# electrical model, the strip and the flash are as slow as on an ESP32, and
# a control channel (two pipes handed down by the simulator) lets the host close
# crossings, hold buttons and read the strip. Flash is the working directory.
import json
from binascii import hexlify
import os
import select
import sys
import time

from shove import scanner, store
from shove.boards.matrix_model import MatrixModel
from shove.scanner import WOKE_INPUT, WOKE_TIME

_MASK = 0x3FFFFFFF
STRIP_US_PER_PIXEL = 30  # 24 bits at 800 kHz, as neopixel.write() blocks on an ESP32
FLASH_BASE_MS = 8  # littlefs write + rename: a few to tens of ms
FLASH_MS_PER_KB = 4
FLASH_APPEND_US = 1500  # program a few bytes into an erased block + a metadata commit
RESET_EXIT = 12  # exit status the simulator reads as "power-cycle me"
# An ESP32 running the scan loop is never paused by an operating system; this
# process is. A gap longer than this between two reads of the clock is the OS
# taking the CPU away, and the board's clock does not move during it. The
# modelled slow parts (strip, flash) advance the clock in full.
STALL_US = 500
# Idle like a board, not a busy loop: with no closure scheduled, no button
# held and the scanner idle, wait for the serial port or the control channel
# this long at most. Nothing the firmware could see happens meanwhile, and
# the wait counts on the board's clock, so it is no stall.
IDLE_MS = 20

# The ESP32 timing model (HAPENNY_TIMING=esp32; `make bench` uses it). The
# board's clock then counts what the chip would spend, not what this PC does:
# - the firmware's own computation: this process's CPU time (so the OS taking
#   the CPU away never counts, a garbage collection or a long computation
#   always does) times ESP32_SCALE, how much slower MicroPython runs on a
#   240 MHz ESP32 than here (docs/virtual-board.md says where it comes from;
#   HAPENNY_ESP32_SCALE overrides it);
# - the UART: the REPL's console writes straight into the 128-byte hardware
#   FIFO and, when it is full, waits a whole RTOS tick (10 ms) before trying
#   again (ports/esp32/uart.c, uart_stdout_tx_strn); the FIFO drains at
#   87 us a byte at 115200 baud;
# - littlefs: a file rewritten beyond its inline size (128 bytes: cache_size
#   = 4 x 32-byte program size, extmod/vfs_lfsx.c) takes a freshly erased
#   4 KB block (an erase, ~45 ms typical) and its programming; bytes appended
#   to a file kept open are only programmed; every sync commits metadata;
# - the strip, as in the default model.
ESP32_SCALE = 100  # bench/esp32_scale.py: MicroPython's perf_bench, this machine vs a 240 MHz ESP32
UART_US_PER_BYTE = 87  # 10 bits at 115200 baud
UART_FIFO = 128
LINE_LOG = 64  # console lines whose time of sending the control channel can tell
RTOS_TICK_US = 10000
ERASE_US = 45000
PROGRAM_US_PER_KB = 2000
COMMIT_US = 1000
INLINE_MAX = 128
# esp32.py's matrix read on the chip: per row a drive, settle and recovery
# reads of the GPIO registers from viper code (docs/performance.md, "The
# scan on an ESP32"), about 1.7 us a row, plus calling it from bytecode.
READ_US = 20
# Reading the clock: a method call and time.ticks_us() in bytecode, a few us
# on the chip; the virtual clock's own bookkeeping is not charged.
TICKS_US = 3
# A look at the serial port's receive ring, or a byte taken from it, through
# the stream layer: C on the chip, a few us (here a system call each).
SERIAL_US = 5
# esp32.py's serial_take: per byte a look and a one-byte read from bytecode.
TAKE_US = 30
# Console output: a write call into the UART's FIFO (plus a little a byte).
CONSOLE_US = 20
# The port's stdin ring: 260 bytes (ports/esp32/mphalport.c), one always
# free (py/ringbuf.h); the UART's interrupt puts each byte into it and a
# full ring drops it (ports/esp32/uart.c, ringbuf_put).
RX_RING = 259
# Between two viper calls of a long idle burst, esp32.py looks at the
# console (poll) and the buttons (three pin reads) in bytecode.
WAKE_US = 30
WAKE_EVERY = 16
BUTTONS = ("next", "undo", "new")


def _readable(poll):
    """Something to read on the poll's stream (ipoll: no list made per look)."""
    for _ in poll.ipoll(0):
        return True
    return False


class _Console:
    """The console's byte stream under the ESP32 model: the write into the
    pseudo-terminal is this process's system call, while the chip copies the
    bytes into the UART's FIFO from C (the FIFO itself: Board._uart)."""

    def __init__(self, board):
        self.board = board
        self.raw = sys.stdout.buffer

    def write(self, data, off=0, n=-1):
        """As the stream's write(buf[, off, n]): the chip's console takes the
        slice without a copy, into the UART's FIFO (Board._uart)."""
        b = self.board
        b._charge()  # the firmware's work up to here
        if n < 0:
            n = len(data) - off
        n = self.raw.write(memoryview(data)[off:off + n])
        b._uart(n)
        # when each line finished going into the UART, for the test bench
        # (a host that reads a line cannot tell when the board sent it)
        i = data.find(b"\n", off, off + n)
        while i >= 0:
            b._line_t[b.lines_out % LINE_LOG] = b.sent_us
            b.lines_out += 1
            i = data.find(b"\n", i + 1, off + n)
        b._emulated(CONSOLE_US + n // 8)
        return n


class Board:
    def __init__(self, profile):
        self.name = profile.name
        self.rows = profile.rows
        self.cols = profile.cols
        self.model = MatrixModel(self.rows, self.cols, slots=64)
        self._full = (1 << self.cols) - 1
        led = profile.leds
        self.strip_count = led["beds"] * 2 * led["per_side"] + led["status"]
        self.frame = bytes(3 * self.strip_count)
        self.strip_writes = 0
        self._held = [0, 0, 0]  # button i held until this tick (ms); 0 = up
        self.dead_buttons = []  # wiring faults (the control channel's `wiring`)
        self.strip_fault = None
        self._last = time.ticks_us()
        self._base = int(os.getenv("HAPENNY_TICKS0") or 0) & _MASK
        self._total = 0  # board microseconds since start, unwrapped
        self.stalls = 0  # OS pauses the clock skipped
        self.idles = 0  # idle waits (see IDLE_MS)
        self.idle_us = 0  # board time spent in them
        self._last_total = 0  # board time of the last matrix read
        self._in_sim = False  # the control channel is being served (ESP32 model: not charged)
        self._spoll = select.poll()
        self._spoll.register(sys.stdin, select.POLLIN)
        self.gap_max_us = 0
        self._b1 = bytearray(1)
        self._rxq = bytearray()  # ESP32 model: bytes on the wire (after the first _rx_ring in the ring)
        self._rx_ring = 0
        self._rx_at = 0  # board time the next byte on the wire arrives
        self.rx_dropped = 0  # bytes lost to a full ring (ESP32 model)
        self.rx_peak = 0  # the most bytes the ring has held
        self.rx_last_us = 0  # board time the last byte came into the ring
        self.doze_reads = 0  # reads a doze stood for (counted in the app's scans, not done)
        self.woke = 0  # why scan_idle stopped early: WOKE_INPUT, WOKE_TIME (the loop clears it)
        self.tx_out = None  # the console's byte stream (the app's), fed inside quiet bursts
        self.tx_pos = 0  # where scan_idle's feeding of the UART got to ...
        self.tx_end = 0  # ... and when the FIFO will have sent it (us)
        self._app = None  # the loop, once it has served (scan_idle serves the control channel for it)
        self._ctl_in = None
        self._ctl_out = None
        ctl = os.getenv("HAPENNY_SIM_CTL")  # "rfd,wfd" handed down by the simulator
        if ctl:
            rfd, wfd = ctl.split(",")
            self._ctl_in = open("/dev/fd/" + rfd, "rb")
            self._ctl_out = open("/dev/fd/" + wfd, "wb")
            self._poll = select.poll()
            self._poll.register(self._ctl_in, select.POLLIN)
            self._wake = select.poll()  # what ends an idle wait: a serial byte or a control line
            self._wake.register(self._ctl_in, select.POLLIN)
            self._wake.register(sys.stdin, select.POLLIN)
        self.slow = os.getenv("HAPENNY_FAST") is None  # model slow strip and flash
        self.flash_full = False  # a test can make the flash refuse every write
        self.crash = False  # a test can make the scan loop raise once
        self._hold = None  # a test can stop the next flash write at a stage (_flash_wait)
        self._wdt = None
        self._run_timers = None
        self._timer_ms = None
        self._free_run = False
        self._last_loop = 0
        self._own = 0  # short gaps counted since the last look at the CPU time
        self.sent_us = 0  # board time the last line finished going into the UART (esp32 timing)
        self.lines_out = 0  # lines written to the console under the ESP32 model ...
        self._line_t = [0] * LINE_LOG  # ... and the board time each of the last few finished going out
        self.uart_blocked_us = 0  # time the firmware waited on a full UART FIFO (esp32 timing)
        self.esp32 = False
        self.uart_us_per_byte = 0  # the app paces its output at the UART's rate only where there is one
        if os.getenv("HAPENNY_TIMING") == "esp32":
            self.esp32_timing(int(os.getenv("HAPENNY_ESP32_SCALE") or ESP32_SCALE))

    def esp32_timing(self, scale):
        """Switch to the ESP32 timing model (see above), with the firmware's
        computation charged at `scale` times this process's."""
        self.esp32 = True
        self.uart_us_per_byte = UART_US_PER_BYTE
        self.slow = False  # the modelled costs are charged to the clock, not slept
        self._scale = scale
        self._cpu_f = open("/proc/self/schedstat", "rb")  # on-CPU time, ns
        self._cpu_buf = bytearray(64)
        self._cpu_last = self._cpu_ns()
        self._fifo_empty = 0  # board time the UART's FIFO runs dry
        self._last = time.ticks_us()
        self.console = _Console(self)

    # ---- clock: the board's own, wrapping at 2**30 like the ESP32's -----------
    def ticks_us(self):
        raw = time.ticks_us()
        gap = time.ticks_diff(raw, self._last)
        self._last = raw
        if self.esp32:
            if self._in_sim:  # the control channel reading the clock: its work is the simulator's
                self._emulated(0)
                return (self._base + self._total) & _MASK
            self._total += self._esp32_gap(gap)
            self._emulated(TICKS_US)
        else:
            if gap > STALL_US:
                gap = STALL_US
                self.stalls += 1
            self._total += gap
        return (self._base + self._total) & _MASK

    def _cpu_ns(self):
        """This process's time on the CPU (the first field of schedstat),
        parsed without allocating."""
        f = self._cpu_f
        f.seek(0)
        n = f.readinto(self._cpu_buf)
        v = 0
        b = self._cpu_buf
        for i in range(n):
            c = b[i]
            if c < 48 or c > 57:
                break
            v = v * 10 + c - 48
        return v

    def _charge(self):
        """The firmware's work since the last clock reading, charged (a clock
        read inline: on the chip there is none)."""
        raw = time.ticks_us()
        gap = time.ticks_diff(raw, self._last)
        self._last = raw
        self._total += self._esp32_gap(gap)

    def _esp32_gap(self, gap):
        # Short gaps are the firmware computing. Past STALL_US, ask the kernel
        # how much of the time since the last look this process really ran:
        # the rest was the OS's. Either way the chip would take _scale times as long.
        if gap <= STALL_US:
            self._own += gap
            return gap * self._scale
        cpu = self._cpu_ns()
        ran = (cpu - self._cpu_last) // 1000 - self._own  # of this gap, what was ours
        self._cpu_last = cpu
        self._own = 0
        if ran < gap:
            self.stalls += 1
            gap = ran if ran > 0 else 0
        return gap * self._scale

    def _emulated(self, charge_us):
        """Since the last tick, this process did the simulator's own work:
        count `charge_us` of board time for it instead of its CPU time."""
        t = time.ticks_us()
        self._own += time.ticks_diff(t, self._last)
        self._last = t
        self._total += charge_us

    def _uart(self, n):
        """`n` bytes went into the UART's FIFO (the console's write): a
        writer that finds no room waits whole RTOS ticks, as
        uart_stdout_tx_strn does (ports/esp32/uart.c)."""
        now = self._total
        backlog = (self._fifo_empty - now) // UART_US_PER_BYTE if self._fifo_empty > now else 0
        free = UART_FIFO - backlog
        block = 0
        if n > free:  # the writer waits whole RTOS ticks until the rest fits
            drain = (n - free) * UART_US_PER_BYTE
            block = (drain + RTOS_TICK_US - 1) // RTOS_TICK_US * RTOS_TICK_US
        self._fifo_empty = max(now, self._fifo_empty) + n * UART_US_PER_BYTE
        self.uart_blocked_us += block
        self._spent(block)
        self.sent_us = self._total

    def _flash_read_us(self, data):
        # littlefs reads at SPI flash speed (~10 MB/s with the cache): a
        # directory lookup and the file's blocks
        return COMMIT_US // 2 + (len(data) if data else 0) // 10

    def _flash_us(self, nbytes, append):
        if append:
            return COMMIT_US + PROGRAM_US_PER_KB * nbytes // 1024
        if nbytes <= INLINE_MAX:
            return 2 * COMMIT_US  # stored in the directory's metadata: the file and the rename
        return ERASE_US + PROGRAM_US_PER_KB * nbytes // 1024 + 2 * COMMIT_US

    def _idle(self):
        self.ticks_us()
        wait = IDLE_MS
        if self._timer_ms is not None and self._timer_ms < wait:
            wait = self._timer_ms if self._timer_ms > 0 else 0
        self._wait_input(wait)

    def _wait_input(self, wait):
        """Wait up to `wait` ms for a serial byte or a control line; the wait
        counts on the board's clock (nothing the firmware could see happens
        meanwhile). Returns the us it took."""
        t0 = time.ticks_us()
        for _ in self._wake.ipoll(wait):
            break
        us = time.ticks_diff(time.ticks_us(), t0)
        if us > wait * 1000 + STALL_US:  # it overslept: the OS took the CPU away
            us = wait * 1000
            self.stalls += 1
        self._spent(us)
        if self.esp32:
            # the CPU the wait itself took (the poll) is the simulator's, not
            # the firmware's: start counting the firmware's again from here
            self._cpu_last = self._cpu_ns()
            self._own = 0
        self.idle_us += us
        self.idles += 1
        return us

    def _spent(self, us):
        """A modelled slow operation took `us` of board time. The host's own
        time for it (a write into the pseudo-terminal, a file's I/O) is the
        simulator's: counted as seen, as _emulated does, or the next look at
        the CPU time (_esp32_gap, after the OS took the CPU away) would
        charge it to the firmware at the chip's factor."""
        t = time.ticks_us()
        self._own += time.ticks_diff(t, self._last)
        self._last = t
        self._total += us

    def ticks_ms(self):
        self.ticks_us()
        t = (self._base + self._total // 1000) & _MASK
        if self.esp32:
            self._emulated(0)  # one clock read (charged in ticks_us), not two
        return t

    # ---- matrix ---------------------------------------------------------------
    def read_matrix(self, snap):
        if self.crash:  # a test's stand-in for a bug outside the request handlers
            self.crash = False
            raise RuntimeError("injected fault in the scan loop")
        now = self.ticks_us()
        gap = self._total - self._last_total
        self._last_total = self._total
        if gap > self.gap_max_us:  # the longest the matrix went unread (stats resets it)
            self.gap_max_us = gap
        m = self.model
        full = self._full
        for r in range(self.rows):
            snap[r] = ~m.levels(r, now) & full
        if self.esp32:
            # the electrical model is this simulator's work, not the chip's:
            # charge what esp32.py's viper read costs there instead
            self._emulated(READ_US)
    def scan_idle(self, snap, n, until=-1, q=None, pos=0, tx_end=0):
        """Read the matrix up to `n` times while every crossing reads open;
        return how many reads found it open. Fewer than `n`: the last read
        found a closure and `snap` holds it, or (self.woke set) a serial byte,
        a button or the tick `until` (ms; -1: none) wants the loop (see
        esp32.py: a viper call of up to WAKE_EVERY reads, then a look at the
        console, the buttons and the clock, and the next load of `q` into the
        UART's FIFO once it has sent everything, at the tick `tx_end`)."""
        self.woke = 0
        self.tx_pos = pos
        self.tx_end = tx_end
        if self.esp32 and not self.crash:
            # the firmware's work up to this call, with the clock read inline:
            # a call to ticks_us would be charged too, and on the chip there is none
            raw = time.ticks_us()
            gap = time.ticks_diff(raw, self._last)
            self._last = raw
            self._total += self._esp32_gap(gap)
        k = 0
        while True:
            m = n - k
            if m > WAKE_EVERY:
                m = WAKE_EVERY
            got = self._burst(snap, m)
            k += got
            if got < m or k >= n:
                break
            # between two viper calls on the chip: a look at the console, the buttons, the clock
            if self.buttons_down() or (self._rx_ready() if self.esp32 else _readable(self._spoll)):
                self.woke = WOKE_INPUT
            elif until >= 0 and self._ms_left(until) <= 0:
                self.woke = WOKE_TIME
            if self.esp32:
                self._emulated(WAKE_US)
            if self.woke:
                break
            if q is not None and scanner.ticks_diff((self._base + self._total) & _MASK, tx_end) >= 0:
                # esp32.py's next FIFO load, step for step: its bytecode is
                # charged as the firmware's (the console's write charges
                # what came before it)
                self._emulated(0)  # the look above is in WAKE_US
                m = len(q) - pos
                if m > UART_FIFO:
                    m = UART_FIFO
                self.tx_out.write(q, pos, m)
                pos += m
                tx_end = scanner.ticks_add((self._base + self._total) & _MASK, m * UART_US_PER_BYTE)
                if pos >= len(q):
                    q = None
                self._charge()
                self.tx_pos = pos
                self.tx_end = tx_end
            if self._ctl_in is not None:
                if self._app is None:  # no loop to serve the test bench's lines with yet
                    self.woke = WOKE_INPUT
                    break
                # the test bench's lines, served here: the simulator's work,
                # not the chip's, and no reason for the loop to wake
                self._in_sim = True
                try:
                    self._control_poll(self._app)
                finally:
                    self._in_sim = False
                if self.esp32:
                    self._emulated(0)
                mm = self.model
                if mm.idle and not (mm.grounded or mm.shorts or self.crash or self.buttons_down() or self._rxq):
                    most = self._ms_left(until) if until >= 0 else IDLE_MS
                    if q is not None:  # until the FIFO has room for the next load
                        t = (scanner.ticks_diff(tx_end, (self._base + self._total) & _MASK) + 999) // 1000
                        if t < most:
                            most = t
                    k += self._doze(n - k, most)
        return k

    def _ms_left(self, until):
        """ms from the board's clock to the tick `until`, read without charging
        (the chip's look is in WAKE_US)."""
        now = (self._base + self._total // 1000) & _MASK if self.esp32 else self.ticks_ms()
        return scanner.ticks_diff(until, now)

    def _doze(self, left, most):
        """No closure is scheduled, so every read until the next serial byte
        or control line would find the matrix open: wait for one (at most
        the burst's remaining reads' time, `most` ms or IDLE_MS) instead of
        reading. Returns the reads it stands for."""
        per = READ_US + WAKE_US // WAKE_EVERY
        wait = left * per // 1000
        if wait > most:
            wait = most
        if wait > IDLE_MS:
            wait = IDLE_MS
        if self._timer_ms is not None and self._timer_ms < wait:
            wait = self._timer_ms if self._timer_ms > 0 else 0
        if wait <= 0:
            return 0
        r = self._wait_input(wait) // per
        if r > left:
            r = left
        self.doze_reads += r
        return r

    def _burst(self, snap, n):
        """Up to `n` reads while all read open (one viper call on the chip)."""
        if not self.esp32 or self.crash:  # read by read, each on its own clock reading
            k = 0
            while k < n:
                self.read_matrix(snap)
                if self._any(snap):
                    return k
                k += 1
            return k
        self._emulated(0)  # scan_idle's own steps between two bursts: the simulator's
        # the chip's viper loop: each read READ_US apart on the board's clock;
        # the electrical model is the simulator's work and is not charged
        m = self.model
        full = self._full
        rows = self.rows
        k = 0
        while k < n:
            now = (self._base + self._total) & _MASK
            gap = self._total - self._last_total
            if gap > self.gap_max_us:
                self.gap_max_us = gap
            self._last_total = self._total
            closed = 0
            for r in range(rows):
                v = ~m.levels(r, now) & full
                snap[r] = v
                closed |= v
            self._total += READ_US
            if closed:
                break
            k += 1
            if k == 1 and not m.idle and not (m.grounded or m.shorts) \
                    and scanner.ticks_diff(m.next_change, now) > n * READ_US:
                # the closures stand still until the model's next change, past
                # this burst: every other read gives what the first one did
                self._total += (n - 1) * READ_US
                self._last_total = self._total - READ_US
                k = n
        self._emulated(0)
        return k

    def _any(self, snap):
        for r in range(self.rows):
            if snap[r]:
                return True
        return False

    def line_test(self):
        """The doctor's line test (see boards/esp32.py): the lines reading
        low with none driven, then with each driven low in turn."""
        now = self.ticks_us()
        n = self.rows + self.cols
        return [self.model.line_levels(-1, now)] + [self.model.line_levels(i, now) & ~(1 << i) for i in range(n)]

    def press(self, row, col, ms):
        return self.close_us(row, col, ms * 1000, 0)

    def close_us(self, row, col, length_us, delay_us):
        on = (self.ticks_us() + delay_us) & _MASK
        return self.model.close(row, col, on, (on + length_us) & _MASK)

    # ---- the serial port ---------------------------------------------------------
    # The pseudo-terminal's system calls are the simulator's, not the chip's:
    # under the ESP32 model a look costs what the port's stdin ring does there.
    # Under the ESP32 model the UART is modelled too: bytes the host wrote
    # arrive one every UART_US_PER_BYTE on the board's clock (from when the
    # board first sees them) into the port's stdin ring (RX_RING), and a
    # byte arriving at a full ring is lost, as on the chip when the
    # firmware does not read fast enough.
    def serial_ready(self):
        if self.esp32:  # the clock read inline, as in scan_idle: there is none on the chip
            raw = time.ticks_us()
            gap = time.ticks_diff(raw, self._last)
            self._last = raw
            self._total += self._esp32_gap(gap)
            ready = self._rx_ready()
            self._emulated(SERIAL_US)
            return ready
        return _readable(self._spoll)

    def serial_take(self, buf, most):
        if not self.esp32:
            n = 0
            b1 = self._b1
            while n < most and _readable(self._spoll):
                if sys.stdin.buffer.readinto(b1) != 1:
                    break
                buf[n] = b1[0]
                n += 1
            return n
        self.ticks_us()
        self._rx_advance()
        q = self._rxq
        n = self._rx_ring
        if n > most:
            n = most
        for i in range(n):
            buf[i] = q[i]
        q[:n] = b""
        self._rx_ring -= n
        # esp32.py's loop: a look and a one-byte read each, and the look that finds none
        self._emulated(TAKE_US * n + SERIAL_US)
        return n

    def _rx_ready(self):
        self._rx_advance()
        return self._rx_ring > 0

    def _rx_advance(self):
        """Move what the host wrote into the wire model, then what has
        arrived by now into the ring, dropping what finds it full."""
        q = self._rxq
        b1 = self._b1
        while len(q) < 4096 and _readable(self._spoll):
            if sys.stdin.buffer.readinto(b1) != 1:
                break
            if len(q) == self._rx_ring and self._rx_at < self._total:
                self._rx_at = self._total  # nothing on the wire: this one starts now
            q.append(b1[0])
        while len(q) > self._rx_ring and self._rx_at <= self._total:
            if self._rx_ring < RX_RING:
                self._rx_ring += 1
                self.rx_last_us = self._rx_at
                if self._rx_ring > self.rx_peak:
                    self.rx_peak = self._rx_ring
            else:
                q[self._rx_ring:self._rx_ring + 1] = b""  # the ring is full: the byte is lost
                self.rx_dropped += 1
            self._rx_at += UART_US_PER_BYTE

    def buttons_down(self):
        h = self._held
        return bool(h[0] or h[1] or h[2])  # button(i) lets a hold that has ended go

    def button(self, i):
        until = self._held[i]
        if not until:
            return False
        if time.ticks_diff(until, self.ticks_ms()) > 0:
            return True
        self._held[i] = 0
        return False

    # ---- strip and flash ---------------------------------------------------------
    def strip_write(self, frame):
        if self.esp32:
            self.ticks_us()
            self._spent(STRIP_US_PER_PIXEL * self.strip_count)
        elif self.slow:
            self.ticks_us()
            us = STRIP_US_PER_PIXEL * self.strip_count
            end = time.ticks_add(time.ticks_us(), us)
            while time.ticks_diff(end, time.ticks_us()) > 0:
                pass
            self._spent(us)
        if self.strip_fault == "dead":  # no data reaches the strip: it stays dark
            frame = bytes(len(frame))
        elif self.strip_fault == "shifted":  # the strip starts one LED later than the profile says
            frame = bytes(3) + bytes(frame)[:-3]
        self.frame = bytes(frame)
        self.strip_writes += 1
        if self._ctl_out:  # with the board's time of writing it (unwrapped us)
            self._send({"frame": hexlify(self.frame).decode(), "at": self._total})
        if self.esp32:
            self._emulated(0)  # the copy and the report above are the simulator's

    def read_file(self, path):
        if not self.esp32:
            return store.read(path)
        self.ticks_us()
        data = store.read(path)
        self._emulated(self._flash_read_us(data))
        return data

    def _flash_check(self):
        if self.flash_full:
            raise OSError(28)  # ENOSPC, as littlefs reports a full or worn flash

    def _flash_wait(self, us, stage):
        """The chip spends `us` of flash time at this point of a write, so a
        power cut (the simulator killing this process) can land here. A test
        can hold the board at a stage (`hold` on the control channel) and cut
        the power there for certain."""
        if self._hold == stage:
            self._send({"held": stage})
            while True:  # until the power is cut
                time.sleep_ms(100)
        if self.esp32:
            self._emulated(us)  # the host's file I/O since the last tick is not the chip's
        elif self.slow:
            self.ticks_us()
            time.sleep_us(us)
            self._spent(us)

    def write_file(self, path, data):
        # Spent where the chip spends it: programming the temporary file
        # (a cut leaves it torn beside the committed one), then committing it
        # before the rename (a cut leaves a whole .tmp beside the old file).
        # littlefs itself would show an uncommitted file empty or not at all;
        # a torn one is the stricter case. store.write_atomic makes the
        # replace and calls back at those two points, so its logic is the one
        # a board runs.
        self._flash_check()
        n = len(data)
        if self.esp32:
            total = self._flash_us(n, False)
            commit = COMMIT_US
        else:
            total = 1000 * (FLASH_BASE_MS + FLASH_MS_PER_KB * n // 1024)
            commit = total // 4
        self._stages = [(total - 2 * commit, "tmp"), (commit, "rename")]
        if self.esp32:
            self.ticks_us()  # the firmware's work up to the write is the chip's
        store.write_atomic(path, data, self._flash_stage)
        self._flash_wait(commit, "written")

    def _flash_stage(self):
        us, stage = self._stages.pop(0)
        self._flash_wait(us, stage)

    def append_file(self, path, data):
        # Programmed byte by byte into the open block: a cut can tear the
        # record (littlefs would drop an unsynced append whole; torn is stricter).
        self._flash_check()
        us = self._flash_us(len(data), True) if self.esp32 else FLASH_APPEND_US
        half = len(data) // 2
        if self.esp32:
            self.ticks_us()
        store.append(path, data[:half])
        self._flash_wait(us, "append")
        store.append(path, data[half:])
        if self.esp32:
            self._emulated(0)

    # ---- control channel -----------------------------------------------------------
    def _send(self, obj):
        # unbuffered already; flush() would fsync, which a pipe refuses
        self._ctl_out.write(json.dumps(obj).encode() + b"\n")

    def service(self, app):
        self._app = app
        if not self._ctl_in:
            return
        if self.esp32:
            self.ticks_us()
            self._in_sim = True  # the control channel is the test bench, not the board
            try:
                self._control_poll(app)
            finally:
                self._in_sim = False
        else:
            self._control_poll(app)
        # nothing due: no closure scheduled, the scanner idle, no button
        # held, no output waiting for the UART, no byte on its way in (the
        # timers are fed by the loop and due no sooner than IDLE_MS)
        idle = (self.model.idle and app.scanner.state == scanner.IDLE and not app._outq and not self._rxq
                and not (self._held[0] or self._held[1] or self._held[2]))
        if self.esp32:
            self._emulated(0)  # the control channel and this check are the test bench's, not the board's
        if idle:
            self._idle()

    def _control_poll(self, app):
        # every line waiting: the test bench's messages are not the
        # firmware's to pace (the service polls this once in five slices).
        # The simulator writes each line with one write() to a pipe, which
        # is atomic (under PIPE_BUF), so a readable pipe holds whole lines;
        # reading them whole keeps the bench's garbage out of the board's heap.
        for _ in range(64):
            if not _readable(self._poll):
                return
            line = self._ctl_in.readline()
            if not line:  # the simulator went away: the power is off
                sys.exit(0)
            try:
                self._control(json.loads(line), app)
            except Exception as e:
                self._send({"error": str(e)})

    def _control(self, msg, app):
        op = msg.get("op")
        seq = msg.get("seq")
        if op == "close":
            ok = self.close_us(msg["row"], msg["col"], msg["us"], msg.get("delay_us", 0))
            self._send({"seq": seq, "ok": ok})
        elif op == "line_times":
            # the board time each console line from number `from` on finished
            # going into the UART (null for one too old to be kept)
            lo = msg["from"]
            self._send({"seq": seq, "times": [self._line_t[k % LINE_LOG] if self.lines_out - k <= LINE_LOG else None
                                              for k in range(lo, self.lines_out)]})
        elif op == "pulses":
            # a whole pattern against one board timestamp: [row, col, delay_us, us]
            now = self.ticks_us()
            ok = True
            for row, col, delay, length in msg["pulses"]:
                on = (now + delay) & _MASK
                ok = self.model.close(row, col, on, (on + length) & _MASK) and ok
            self._send({"seq": seq, "ok": ok, "at": self._total})
        elif op == "button":
            i = BUTTONS.index(msg["name"])
            if i not in self.dead_buttons:  # a broken wire: the press never reaches the pin
                self._held[i] = (self.ticks_ms() + msg["ms"]) & _MASK or 1
            self._send({"seq": seq, "ok": True})
        elif op == "wiring":
            # wiring faults for the doctor to find: lines (rows, then columns)
            # shorted together or to ground, a dead button, a strip fault
            m = self.model
            m.shorts = [tuple(p) for p in msg.get("shorts", [])]
            m.grounded = 0
            for line in msg.get("grounded", []):
                m.grounded |= 1 << line
            self.dead_buttons = [BUTTONS.index(n) for n in msg.get("dead_buttons", [])]
            self.strip_fault = msg.get("strip")
            self._send({"seq": seq, "ok": True})
        elif op == "frame":
            self._send({"seq": seq, "frame": hexlify(self.frame).decode()})
        elif op == "crash":
            self.crash = True
            self._send({"seq": seq, "ok": True})
        elif op == "hold":
            self._hold = msg["stage"]
            self._send({"seq": seq, "ok": True})
        elif op == "flash":
            self.flash_full = bool(msg["full"])
            self._send({"seq": seq, "ok": True})
        elif op == "stats":
            st = app.stats()
            self.ticks_us()
            st["board_us"] = self._total  # the board's clock since start, unwrapped
            st["sent_us"] = self.sent_us
            st["lines_out"] = self.lines_out
            st["uart_blocked_us"] = self.uart_blocked_us
            st["idle_us"] = self.idle_us
            st["gap_max_us"] = self.gap_max_us
            st["doze_reads"] = self.doze_reads
            st["rx_dropped"] = self.rx_dropped
            st["rx_peak"] = self.rx_peak  # since the last stats, like gap_max_us
            self.rx_peak = self._rx_ring
            st["rx_last_us"] = self.rx_last_us
            # a closure is scheduled or still closed: the scanner may not
            # have seen it yet, so "idle" alone does not mean "decided"
            st["closing"] = not self.model.idle
            self.gap_max_us = 0
            self._send({"seq": seq, "stats": st})
        else:
            self._send({"seq": seq, "error": "unknown op"})

    # The watchdog as on the ESP32 (esp32.py): armed once, fed from a timer
    # only while the loop checks in, and fed unconditionally once the loop
    # has stopped on purpose. The simulator's `machine` gives WDT and Timer
    # the ESP32 port's semantics (host/hapenny/sim/runtime/machine.py);
    # elsewhere (a bare unix port) there is no watchdog.
    def start_watchdog(self, timeout_ms=8000):
        try:
            import machine

            self._wdt = machine.WDT(timeout=timeout_ms)
            self._run_timers = machine._run_timers
        except (ImportError, AttributeError):
            return
        self._last_loop = time.ticks_ms()
        self._timer = machine.Timer(0)
        self._timer.init(period=1000, mode=machine.Timer.PERIODIC, callback=self._tick)

    def _tick(self, _t):
        if self._free_run or time.ticks_diff(time.ticks_ms(), self._last_loop) < 3000:
            self._wdt.feed()

    def feed(self):
        self._last_loop = time.ticks_ms()
        if self._run_timers is not None:
            if self.esp32:
                self.ticks_us()
            # scheduled callbacks run between the loop's passes, as on the chip
            self._timer_ms = self._run_timers()  # ms until the next is due
            if self.esp32:
                self._emulated(0)  # the timer emulation, not the chip's work

    def stopped(self):
        self._free_run = True

    def serial_raw(self, on):
        """0x03 as data (on) or as KeyboardInterrupt, like micropython.kbd_intr
        on the ESP32. The simulator turns 0x03 into SIGINT, and the unix port
        dies of SIGINT once kbd_intr(-1) is set, so the simulator is told
        instead and passes 0x03 through as a byte."""
        if self._ctl_out:
            self._send({"kbd": -1 if on else 3})

    def reset(self, deliberate=False):
        if deliberate:  # as esp32.py: the runtime's RTC memory outlives the reset
            import machine

            from shove import safeboot

            safeboot.mark_reset(machine)
        sys.exit(RESET_EXIT)

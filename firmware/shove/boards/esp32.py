# ESP32 board layer: open-drain rows, pulled-up columns read in one GPIO
# register access per row (viper), WS2812 strip, buttons, watchdog, flash.
# Between reads the rows are held low, so a closing crossing's column falls
# and its edge interrupt reads the matrix from wherever the loop is (_edge).
#
# Only `_scan` touches registers. It is written in the part of Python that
# viper and CPython share, so tests run this very function against a model
# of the GPIO registers and the ribbon's electricity (tests/esp32_models.py);
# everything else here is plain Python run in tests against models of Pin,
# WDT, Timer and neopixel.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import select
import sys
import time

import machine
import micropython

from shove import RESET_MARK, UART_US_PER_BYTE, call, store
from shove.scanner import WOKE_INPUT, WOKE_TIME

# The GPIO registers the scan drives are the running chip's: classic ESP32,
# ESP32-S3 or ESP32-C3, their addresses given in `io` (esp32_setup.gpio_io,
# which cites each chip's manual).
_MASK = 0x3FFFFFFF

# Electricity of a row change. Driving a row low pulls a closed crossing's
# column down through the membrane's contact; the profile's settle_us (its
# default is justified in profile.py) is spent in GPIO_IN reads of about
# 0.125 us each (READS_PER_US) before the columns are read. Releasing the row, the column recovers only
# through its ~45 kOhm internal pull-up into the ribbon's capacitance (about
# 10 us to read high with 150 pF), so before the next row is driven the scan
# waits until every column reads high again, at most _RECOVER reads (~50 us:
# a column still low then is held by something else, not by this row).
READS_PER_US = 8  # GPIO_IN reads from the CPU: ~0.125 us each (the APB bus runs at 80 MHz)
_RECOVER = const(400)
_CHECK_IN_MS = const(3000)  # the loop must check in this often for the watchdog to be fed
WAKE_EVERY = 16  # reads of a long idle burst between two looks at the console and the buttons


# On an image without the native emitter deploy sends this file as bytecode,
# the decorator off and the comment mark below taken away (firmware.py's
# "esp32bc" build): viper's casts are then esp32_mem32's functions, the
# registers reached through machine.mem32. A native build carries neither.
#bytecode: from shove.boards.esp32_mem32 import ptr8, ptr16, ptr32


@micropython.viper
def _scan(rows: ptr8, nrows: int, cols: ptr8, ncols: int, io: ptr32, snap: ptr16, settle: int,
          recover: int, times: int) -> int:
    """snap[r] = bitmask of the columns row r pulls low, read up to `times`
    times in a row while every crossing reads open (an idle board's burst:
    one call from bytecode for many reads). `io`: the columns' masks in IN
    and IN1, then the registers' addresses (OUT_W1TS, OUT_W1TC, OUT1_W1TS,
    OUT1_W1TC, IN, IN1: esp32_setup.gpio_io). The rows are released first
    and held low again at the end when all read open. Returns the reads that found
    everything open << 16 | the rows that left a column low past the
    recovery bound."""
    m0 = io[0]
    m1 = io[1]
    w1ts = ptr32(io[2])
    w1tc = ptr32(io[3])
    w1ts1 = ptr32(io[4])
    w1tc1 = ptr32(io[5])
    gin = ptr32(io[6])
    gin1 = ptr32(io[7])
    # Between two calls the rows are held low, so a closing crossing pulls its
    # column down at once and the column's edge interrupt reads it (Board._edge):
    # release them all (one write a bank) and let the columns recover before the first row
    rm0 = 0
    rm1 = 0
    for r in range(nrows):
        pin = rows[r]
        if pin < 32:
            rm0 |= 1 << pin
        else:
            rm1 |= 1 << (pin - 32)
    w1ts[0] = rm0
    w1ts1[0] = rm1
    n = 0
    while n < recover and ((gin[0] & m0) != m0 or (gin1[0] & m1) != m1):
        n += 1
    late = 0
    k = 0
    closed = 0
    while k < times:
        closed = 0
        for r in range(nrows):
            pin = rows[r]
            if pin < 32:
                w1tc[0] = 1 << pin  # drive the row low
            else:
                w1tc1[0] = 1 << (pin - 32)
            v0 = 0
            for _ in range(settle):
                v0 = gin[0]
            v0 = gin[0]
            v1 = gin1[0]
            if pin < 32:
                w1ts[0] = 1 << pin  # release: open drain floats
            else:
                w1ts1[0] = 1 << (pin - 32)
            n = 0
            while n < recover and ((gin[0] & m0) != m0 or (gin1[0] & m1) != m1):
                n += 1
            if n >= recover:
                late += 1
            m = 0
            for c in range(ncols):
                p = cols[c]
                lvl = (v0 >> p) & 1 if p < 32 else (v1 >> (p - 32)) & 1
                if lvl == 0:
                    m |= 1 << c
            snap[r] = m
            closed |= m
        if closed:
            break
        k += 1
    if not closed:  # all open: the rows held low until the next call (a closure leaves them released)
        w1tc[0] = rm0
        w1tc1[0] = rm1
    return (k << 16) | late


@micropython.viper
def _merge(snap: ptr16, more: ptr16, n: int):
    """snap[r] |= more[r]: an edge's read added to what the loop may hold unstepped."""
    for r in range(n):
        snap[r] = snap[r] | more[r]


def grb(frame, buf):
    """RGB frame bytes into the strip's wire order (WS2812: green, red, blue)."""
    for i in range(0, len(frame), 3):
        buf[i] = frame[i + 1]
        buf[i + 1] = frame[i]
        buf[i + 2] = frame[i + 2]


class _NoPress:
    """`press`'s closures before the first press: none. The matrix model
    that schedules them (boards/matrix_model.py, some 1.5 KB of heap as
    bytecode) is loaded by the first press, a test's or the doctor's, and
    kept from then on: a game never loads it."""
    idle = True


class Board:
    _inject = _NoPress  # the reads ask only `idle`

    def __init__(self, profile):
        # made by start-up code of its own (esp32_setup.py: the chip's check,
        # the pins, the strip), let go once the board is made, as the virtual
        # board's is: that code is in the heap only meanwhile
        call("boards.esp32_setup", "build", self, profile, READS_PER_US)

    def ticks_us(self):
        return time.ticks_us() & _MASK

    def ticks_ms(self):
        return time.ticks_ms() & _MASK

    def read_matrix(self, snap):
        self.late_rows += _scan(self._row_pins, self.rows, self._col_pins, self.cols, self._io, snap,
                                self._settle, _RECOVER, 1) & 0xFFFF
        inj = self._inject
        if not inj.idle:
            now = time.ticks_us() & _MASK
            full = self._full
            for r in range(self.rows):
                snap[r] |= ~inj.levels(r, now) & full

    def scan_idle(self, snap, n, until=-1, tx=None):
        """Read the matrix up to `n` times while every crossing reads open;
        return how many reads found it open. Fewer than `n`: the last read
        found a closure and `snap` holds it, or (self.woke set) a byte came
        in on the console, a button went down or the tick `until` (ms; -1:
        none) came, and the loop must serve it. Up to WAKE_EVERY reads are
        one viper call; the look at the console, the buttons and the clock
        between two calls is what a long quiet burst costs. `tx`: output
        waiting for the UART (a pacing.TxQueue): once its FIFO has sent
        everything, a look puts the next load in and the burst reads on."""
        self.woke = 0
        if not self._inject.idle:  # a closure from `press`: one read, through the model
            self.read_matrix(snap)
            return 0
        k = 0
        while True:
            m = n - k
            if m > WAKE_EVERY:
                m = WAKE_EVERY
            v = _scan(self._row_pins, self.rows, self._col_pins, self.cols, self._io, snap, self._settle, _RECOVER, m)
            self.late_rows += v & 0xFFFF
            got = v >> 16
            k += got
            if got < m or k >= n:
                break
            sc = self.scanner
            if sc is not None and not sc.calm:  # an edge's read began a dart between two calls: the loop steps it
                break
            if self.serial_ready() or self.buttons_down():
                self.woke = WOKE_INPUT
                break
            if until >= 0 and time.ticks_diff(until, time.ticks_ms()) <= 0:
                self.woke = WOKE_TIME
                break
            if tx is not None and time.ticks_diff(time.ticks_us(), tx.end) >= 0:
                # the FIFO has sent everything: the next load (a few
                # bytecodes, where the app's own pacing is a millisecond)
                m = tx.load()
                tx.sent_at(time.ticks_us(), m)  # from the write's end
                if not tx.q:
                    tx = None
        return k

    def line_test(self):
        """The doctor's line test (esp32_setup.py, loaded for it)."""
        return call("boards.esp32_setup", "line_test", self)

    def press(self, row, col, ms):
        inj = self._inject
        if inj is _NoPress:
            from shove.boards.matrix_model import MatrixModel

            inj = self._inject = MatrixModel(self.rows, self.cols)
        now = time.ticks_us() & _MASK
        return inj.close(row, col, now, (now + ms * 1000) & _MASK)

    def button(self, i):
        p = self._buttons[i]
        return p is not None and p.value() == 0

    def buttons_down(self):
        """Any button held (one call where the loop polls all three)."""
        for p in self._buttons:
            if p is not None and p.value() == 0:
                return True
        return False

    # ---- the serial port (the REPL's UART: sys.stdin while the app runs) ------------
    def serial_ready(self):
        """A byte is waiting (ipoll: no list made per look, unlike poll())."""
        p = self._spoll
        if p is None:
            p = self._spoll = select.poll()
            p.register(sys.stdin, select.POLLIN)
        for _ in p.ipoll(0):
            return True
        return False

    def serial_take(self, buf, most):
        """The bytes waiting on the console, up to `most`, into buf; how
        many. The port's stdin stream reads byte by byte and blocks for more
        (shared/runtime/sys_stdio_mphal.c), and nothing says how many wait
        (mp_hal_stdio_poll: only whether one does), so each byte is a look
        and a one-byte read."""
        b1 = self._b1
        rd = sys.stdin.buffer.readinto
        n = 0
        while n < most and self.serial_ready():
            if rd(b1) != 1:
                break
            buf[n] = b1[0]
            n += 1
        return n

    def strip_write(self, frame):
        np = self._np
        if np is None:
            return
        grb(frame, np.buf)
        np.write()

    def read_file(self, path):
        return store.read(path)

    def write_file(self, path, data):
        self._close_log()  # the rename replaces the file an open log points at
        store.write_atomic(path, data)

    # Bytes added to a file kept open, then synced: flush() is lfs2_file_sync
    # (extmod/vfs_lfsx_file.c, MP_STREAM_FLUSH). For a file within littlefs's
    # inline size (128 bytes here) that is one metadata commit, atomic and
    # without an erase (shove/jstore.py says why the journal relies on it).
    def sync_write(self, f, data):
        f.write(data)
        f.flush()

    def append_file(self, path, data):
        with open(path, "ab") as f:
            f.write(data)

    def _close_log(self):
        if self._log is not None:
            try:
                self._log.close()
            except OSError:
                pass
            self._log = None

    def hooks(self, stats, quiet, scanner=None):
        """The scanner a column's falling edge steps (_edge); nothing here serves the loop's figures."""
        self.scanner = scanner
        self.edges(True)

    def edges(self, on):
        """The columns' edge interrupt on (if a scanner is hooked) or off: off
        while something else reads the matrix (the doctor's line test, diag's
        recording), whose contacts are no darts. ports/esp32/machine_pin.c: the
        GPIO interrupt schedules the handler (a soft IRQ), which py/vm.c runs
        at the next jump in bytecode, wherever the loop is; not inside viper
        or a C call."""
        h = self._edge if on and self.scanner is not None else None
        for p in self._keep[self.rows:]:
            p.irq(h, machine.Pin.IRQ_FALLING)

    def _edge(self, _pin):
        """A column fell: a crossing closed while the rows were held low
        (between two reads). Read now, while the contact lasts, and step the
        scanner as a scan point would: a dart that lands during a web
        request's bytecode meets a read within a few bytecodes, not at the
        request's end. Only while calm: the scanner is idle (not in a step,
        step clears calm first) and the loop reads on every pass otherwise."""
        sc = self.scanner
        if not sc.calm:
            return
        e = self.snap
        v = _scan(self._row_pins, self.rows, self._col_pins, self.cols, self._io, e, self._settle, _RECOVER, 1)
        self.late_rows += v & 0xFFFF
        if not v >> 16:  # a closure: added to snap, which may hold one the loop read and has not stepped
            _merge(sc.snap, e, self.rows)
            sc.step(time.ticks_us() & _MASK)

    def service(self):
        pass

    # The watchdog is fed from a timer only while the main loop keeps
    # checking in; once main.py stops on purpose (Ctrl-C for the REPL) the
    # timer feeds it unconditionally, since an ESP32 watchdog cannot stop
    # (ports/esp32/machine_wdt.c). Timer(0) is the one boot.py feeds from
    # after a soft reset: re-initialising it replaces that feeder.
    def start_watchdog(self, timeout_ms=None):
        call("boards.esp32_setup", "start_watchdog", self, timeout_ms)  # once, at the loop's start

    def _tick(self, _t):
        if self._free_run or time.ticks_diff(time.ticks_ms(), self._last_loop) < _CHECK_IN_MS:
            self._wdt.feed()

    def feed(self):
        self._last_loop = time.ticks_ms()

    def stopped(self):
        self._free_run = True
        self.edges(False)  # the REPL's: no scan from an interrupt now

    # the app paces its output to it: on the S3 and C3 too, whose USB console has no baud rate, as
    # their stock images write the console to UART0 as well (ports/esp32/mphalport.c)
    uart_us_per_byte = UART_US_PER_BYTE
    web_addr = ("0.0.0.0", 80)  # where the web server listens once on a network (shove/httpd.py)
    radio = True  # every chip it drives has Wi-Fi (the set-up access point may open)
    dns_port = 53  # the set-up access point's DNS (shove/captive.py), on every interface
    dns_host = "0.0.0.0"

    def serial_raw(self, on):
        # 0x03 arriving on the UART raises KeyboardInterrupt wherever the
        # code is (ports/esp32/uart.c checks mp_interrupt_char on receive);
        # the main loop reads it as data instead and decides (handover.py)
        micropython.kbd_intr(-1 if on else 3)

    def reset(self, deliberate=False):
        if deliberate:  # not a bad start (safeboot reads the mark)
            machine.RTC().memory(RESET_MARK)
        machine.reset()

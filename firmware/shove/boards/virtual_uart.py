# The virtual board's console under the ESP32 timing model: the REPL UART
# with its transmit FIFO and the port's receive ring, on the board's clock.
# Loaded with that model only; in the plain one the console is the
# pseudo-terminal as it is (virtual.py's Serial).
# - transmit: the console's write copies into the 128-byte hardware FIFO and,
#   when it is full, waits whole RTOS ticks (10 ms) before trying again
#   (ports/esp32/uart.c, uart_stdout_tx_strn); the FIFO drains at 87 us a
#   byte at 115200 baud;
# - receive: bytes the host wrote arrive one every 87 us on the board's
#   clock (from when the board first sees them) into the port's stdin ring,
#   and a byte arriving at a full ring is lost, as on the chip when the
#   firmware does not read fast enough.
# The pseudo-terminal's system calls are the simulator's, not the chip's: a
# look costs what one at the port's stdin ring does there.
# On a board whose USB port is the chip's own (the C3's USB-Serial/JTAG, the
# S3's native USB: `usb`), the stock image still writes every byte of the
# console to UART0 as well (ports/esp32/mphalport.c, mp_hal_stdout_tx_strn:
# MICROPY_HW_ENABLE_UART_REPL is on in ESP32_GENERIC_S3 and _C3), so the
# transmit side is the same FIFO and the same pacing. The receive side is
# USB's: bytes come in packets of up to 64 (usb_serial_jtag.c) with no baud
# rate, and what finds the ring full stays in the peripheral (the ring takes
# only what it has room for), so the host's writes wait instead of a byte
# being lost.
import sys

from shove import UART_FIFO, UART_US_PER_BYTE
from shove.boards.virtual_clock import readable

LINE_LOG = 64  # console lines whose time of sending the control channel can tell
RTOS_TICK_US = 10000
# The port's stdin ring: 260 bytes (ports/esp32/mphalport.c), one always
# free (py/ringbuf.h); the UART's interrupt puts each byte into it and a
# full ring drops it (ports/esp32/uart.c, ringbuf_put).
RX_RING = 259
# A look at the serial port's receive ring, or a byte taken from it, through
# the stream layer: C on the chip, a few us (here a system call each).
SERIAL_US = 5
# A USB console's bytes on the wire: a 64-byte packet a 1 ms frame at worst.
USB_US_PER_BYTE = 16
# esp32.py's serial_take: per byte a look and a one-byte read from bytecode.
TAKE_US = 30
# Console output: a write call into the UART's FIFO (plus a little a byte).
CONSOLE_US = 20


class Uart:
    us_per_byte = UART_US_PER_BYTE  # the app paces its output at the UART's rate

    def __init__(self, clock, poll, usb=False):
        self.clock = clock
        self.usb = usb  # the host is on the chip's own USB: no bytes lost, no baud rate on the way in
        self._rx_us = USB_US_PER_BYTE if usb else UART_US_PER_BYTE
        self.poll = poll  # the pseudo-terminal's input
        self.raw = sys.stdout.buffer
        self.console = self  # the stream the app writes to
        self._b1 = bytearray(1)
        self._fifo_empty = 0  # board time the FIFO runs dry
        self.sent_us = 0  # board time the last line finished going into the FIFO
        self.lines_out = 0  # lines written to the console ...
        self.line_t = [0] * LINE_LOG  # ... and the board time each of the last few finished going out
        self.blocked_us = 0  # time the firmware waited on a full FIFO
        self.mid_line = False
        self.rxq = bytearray()  # bytes on the wire (after the first `ring` of them, in the ring)
        self.ring = 0
        self._rx_at = 0  # board time the next byte on the wire arrives
        self.dropped = 0  # bytes lost to a full ring
        self.arrived = 0  # bytes that went into the ring (since start)
        self.peak = 0  # the most bytes the ring has held
        self.last_in = 0  # board time the last byte came into the ring
        self.on_take = None  # the test bench's act anchored to the next byte taken (virtual_bench.py)

    # ---- transmit: the console's stream -------------------------------------------
    def write(self, data, off=0, n=-1):
        """As the stream's write(buf[, off, n]): the chip's console takes the
        slice without a copy, into the FIFO."""
        c = self.clock
        c.charge()  # the firmware's work up to here
        if n < 0:
            n = len(data) - off
        part = memoryview(data)[off:off + n]
        n = self.raw.write(part)
        self._fifo(n)
        self.mid_line = n > 0 and part[n - 1] != 10  # a line partly sent (a test's fault waits for one)
        # when each line finished going into the UART, for the test bench
        # (a host that reads a line cannot tell when the board sent it)
        for i in range(n):
            if part[i] == 10:
                self.line_t[self.lines_out % LINE_LOG] = self.sent_us
                self.lines_out += 1
        c.sim(CONSOLE_US + n // 8)
        return n

    def _fifo(self, n):
        """`n` bytes went into the FIFO: a writer that finds no room waits
        whole RTOS ticks, as uart_stdout_tx_strn does."""
        c = self.clock
        now = c.total
        backlog = (self._fifo_empty - now) // UART_US_PER_BYTE if self._fifo_empty > now else 0
        free = UART_FIFO - backlog
        block = 0
        if n > free:  # the writer waits whole RTOS ticks until the rest fits
            drain = (n - free) * UART_US_PER_BYTE
            block = (drain + RTOS_TICK_US - 1) // RTOS_TICK_US * RTOS_TICK_US
        self._fifo_empty = max(now, self._fifo_empty) + n * UART_US_PER_BYTE
        self.blocked_us += block
        c.spent(block)
        self.sent_us = c.total

    def line_times(self, lo):
        """The board time each console line from number `lo` on finished
        going into the UART (None for one too old to be kept)."""
        return [self.line_t[k % LINE_LOG] if self.lines_out - k <= LINE_LOG else None
                for k in range(lo, self.lines_out)]

    # ---- receive ---------------------------------------------------------------------
    def ready(self):
        c = self.clock
        c.charge()  # the clock read inline, as in scan_idle: there is none on the chip
        ready = self.waiting()
        c.sim(SERIAL_US)
        return ready

    def waiting(self):
        self.advance()
        return self.ring > 0

    def take(self, buf, most):
        c = self.clock
        c.ticks_us()
        self.advance()
        q = self.rxq
        n = self.ring
        if n > most:
            n = most
        for i in range(n):
            buf[i] = q[i]
        q[:n] = b""
        self.ring -= n
        if n and self.on_take is not None:
            act, self.on_take = self.on_take, None
            act()
        # esp32.py's loop: a look and a one-byte read each, and the look that finds none
        c.sim(TAKE_US * n + SERIAL_US)
        return n

    def advance(self):
        """Move what the host wrote into the wire model, then what has
        arrived by now into the ring, dropping what finds it full."""
        q = self.rxq
        b1 = self._b1
        total = self.clock.total
        while len(q) < 4096 and readable(self.poll):
            if sys.stdin.buffer.readinto(b1) != 1:
                break
            if len(q) == self.ring and self._rx_at < total:
                self._rx_at = total  # nothing on the wire: this one starts now
            q.append(b1[0])
        while len(q) > self.ring and self._rx_at <= total:
            if self.ring < RX_RING:
                self.ring += 1
                self.arrived += 1
                self.last_in = self._rx_at
                if self.ring > self.peak:
                    self.peak = self.ring
            elif self.usb:  # the ring is full: the rest waits in the peripheral (and the host)
                self._rx_at = total + self._rx_us
                break
            else:
                q[self.ring:self.ring + 1] = b""  # the ring is full: the byte is lost
                self.dropped += 1
            self._rx_at += self._rx_us

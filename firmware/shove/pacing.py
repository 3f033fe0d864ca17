# Output paced to the UART, written once for the loop and both boards.
#
# The ESP32's console write fills the REPL UART's 128-byte hardware FIFO and
# then blocks in whole 10 ms RTOS ticks until the rest fits
# (ports/esp32/uart.c, uart_stdout_tx_strn): a 600-byte reply written at
# once would stop the scanner for 50 ms. So lines wait in a queue, the loop
# writes only what the FIFO has drained since its last write (drain), and a
# board in a long quiet burst writes the next FIFO load itself once the FIFO
# has run dry (load, then sent_at), then reads on.
#
# The queue has a fixed capacity, so a reader slower than what the game
# makes (the computer throwing with no pause, a host polling the state)
# slows the game instead of running the heap out: what makes output only
# when it chooses to (the computer's turn, auto next, the next request, a
# button's action) first asks ready(), true while at most READY bytes wait,
# and otherwise waits for a later slice while the loop scans and drains.
# What cannot wait (a person's dart, the reply to a request already read,
# an error report) is queued anyway; a line that would take the queue past
# its capacity makes the loop wait on the UART for the room (counted in
# `waits`), so the queue never holds more and a line is never dropped or cut.
# The queue holds the lines themselves, no copy (MicroPython's str is a
# buffer of its UTF-8 bytes: a memoryview over it tells their count and the
# stream's write takes it), a long line as its chunks, each line followed
# by a shared newline: no buffer grows to hold them all (a growing one must
# find its whole length free in one piece, in a heap the game has cut up),
# and none is kept while nothing waits.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import sys

from shove import UART_FIFO, UART_US_PER_BYTE, ticks_add, ticks_diff  # noqa: F401 (the UART's, also this module's names)

# The most the queue holds (bytes): a step's output (the reply to `new`
# with its event, each with the state: about 1.2 KB each for eight sides of
# one player) fits beside READY bytes still waiting, so the loop waits on
# the UART only for the largest games' two-state replies.
_CAPACITY = const(4096)
# A step that makes output may start while at most this much waits (22 ms
# at 115200 baud: the next step's lines come before the UART runs dry).
READY = 256
_NL = memoryview(b"\n")
_COPY = sys.implementation.name != "micropython"  # CPython's str is no buffer: its bytes are a copy


class TxQueue:
    """Lines waiting for the console. `out`: a binary stream with
    write(buf, off, n) (none: `text`, a text stream, takes each line
    whole); `us_per_byte`: the UART's pace (0: a console that takes
    everything at once, nothing to pace); `ticks_us`: the board's clock;
    `cap`: the most bytes it holds (_CAPACITY).

    One queue is one reader's: a second one (the Wi-Fi clients) gets a
    queue of its own beside this, and the loop asks each for ready()."""

    def __init__(self, out, text, us_per_byte, ticks_us, cap=_CAPACITY):
        self.q = []  # what waits, oldest first: each line (memoryviews over its text or its chunks), then _NL
        self.pos = 0  # what of q[0] has been written
        self.size = 0  # bytes waiting, all lines
        self.end = 0  # tick (us) the FIFO will have sent all it was given
        self.out = out
        self.text = text
        self.per_byte = us_per_byte  # (a text console queues nothing: put writes each line at once)
        self.ticks_us = ticks_us
        self.cap = cap
        self.waits = 0  # lines that made the loop wait on the UART for room (stats)

    def ready(self):
        """Room for a step that makes output (see the module's head)."""
        return self.size <= READY

    def put(self, line):
        """Queue a line: its text (str), or the list of its chunks (str
        each: shove/protocol.py's lines that carry a state), sent one after
        the other and never joined on the chip."""
        if isinstance(line, str):
            line = (line,)
        if self.out is None:  # a text console takes each line whole, at once
            self.text.write("".join(line) + "\n")
            return
        q = self.q
        n = self.size + 1
        for c in line:
            b = memoryview(c.encode() if _COPY else c)
            q.append(b)
            n += len(b)
        q.append(_NL)
        self.size = n
        if n > self.cap and self.per_byte:  # (unpaced, drain writes it all now)
            # past the capacity: the oldest bytes go out now, the loop waiting
            # on the UART as the chip's console write does, until the queue
            # is back within it
            self.waits += 1
            self._write(n - self.cap)
            # the write returned once the rest fitted in the FIFO: it is full
            self.end = ticks_add(self.ticks_us(), UART_FIFO * self.per_byte)
        self.drain()

    def drain(self):
        """Write what the FIFO has room for: the fewest calls that will do
        (on the chip each is tens of us with the matrix unread). While more
        than half the FIFO (64 bytes) waits, nothing goes until the FIFO has
        room for that half: a write of a few bytes costs the scan as much as
        one of many, and the loop comes round far more often than the UART
        sends 64 bytes (5.6 ms)."""
        left = self.size
        if not left:
            return
        per_byte = self.per_byte
        if not per_byte:
            self._write(left)
            return
        # room in the FIFO: what is still in it (ticks wrap at 2**30), rounded up
        backlog = ticks_diff(self.end, self.ticks_us())
        half = UART_FIFO >> 1
        if backlog > half * per_byte and left > half:
            return
        if backlog < 0:
            backlog = 0
        n = UART_FIFO - (backlog + per_byte - 1) // per_byte
        if n <= 0:
            return
        if n > left:
            n = left
        self._write(n)
        # the FIFO empties once it has sent what it held and these bytes,
        # counted from the end of the write (bytes go in while it runs: from
        # its start, the FIFO could be overfilled by the next write, which
        # would then block for an RTOS tick)
        self.end = ticks_add(self.ticks_us(), backlog + n * per_byte)

    def load(self):
        """The FIFO has run dry: write its next load straight from the
        queue; how many bytes went (the caller then says when: sent_at)."""
        n = self.size
        if n > UART_FIFO:
            n = UART_FIFO
        self._write(n)
        return n

    def sent_at(self, now, n):
        """`n` bytes went into the empty FIFO by the tick `now` (us)."""
        self.end = ticks_add(now, n * self.per_byte)

    def flush(self):
        """Everything queued, now (before a reset or the REPL hand-over)."""
        if self.size:
            self._write(self.size)

    def _write(self, n):
        """The next `n` bytes, from the lines as they are (no slice to
        allocate: the stream's write(buf, off, n)); a call a line and one
        for its newline."""
        q = self.q
        out = self.out
        self.size -= n
        while n:
            b = q[0]
            pos = self.pos
            k = len(b) - pos
            if k > n:
                k = n
            out.write(b, pos, k)
            n -= k
            pos += k
            if pos == len(b):
                q.pop(0)
                pos = 0
            self.pos = pos

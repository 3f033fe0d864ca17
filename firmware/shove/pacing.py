# Output paced to the UART, written once for the loop and both boards.
#
# The ESP32's console write fills the REPL UART's 128-byte hardware FIFO and
# then blocks in whole 10 ms RTOS ticks until the rest fits
# (ports/esp32/uart.c, uart_stdout_tx_strn): a 600-byte reply written at
# once would stop the scanner for 50 ms. So lines wait in a queue, the loop
# writes only what the FIFO has drained since its last write (drain), and a
# board in a long quiet burst writes the next FIFO load itself once the FIFO
# has run dry (load, then sent_at), then reads on.
from shove import UART_FIFO, UART_US_PER_BYTE, ticks_add, ticks_diff  # noqa: F401 (the UART's, also this module's names)


class TxQueue:
    """Lines waiting for the console. `out`: a binary stream with
    write(buf, off, n) (none: `text`, a text stream, takes each write
    whole); `us_per_byte`: the UART's pace (0: a console that takes
    everything at once, nothing to pace); `ticks_us`: the board's clock."""

    def __init__(self, out, text, us_per_byte, ticks_us):
        self.q = bytearray()
        self.pos = 0  # what of q has been written
        self.end = 0  # tick (us) the FIFO will have sent all it was given
        self.out = out
        self.text = text
        self.per_byte = us_per_byte if out is not None else 0
        self.ticks_us = ticks_us

    def put(self, line):
        self.q.extend(line.encode())
        self.q.extend(b"\n")
        self.drain()

    def drain(self):
        """Write what the FIFO has room for: the fewest calls that will do
        (on the chip each is tens of us with the matrix unread)."""
        left = len(self.q) - self.pos
        if not left:
            return
        per_byte = self.per_byte
        if not per_byte:
            self._write(left)
            return
        # room in the FIFO: what is still in it (ticks wrap at 2**30), rounded up
        backlog = ticks_diff(self.end, self.ticks_us())
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
        n = len(self.q) - self.pos
        if n > UART_FIFO:
            n = UART_FIFO
        self._write(n)
        return n

    def sent_at(self, now, n):
        """`n` bytes went into the empty FIFO by the tick `now` (us)."""
        self.end = ticks_add(now, n * self.per_byte)

    def flush(self):
        """Everything queued, now (before a reset or the REPL hand-over)."""
        left = len(self.q) - self.pos
        if left:
            self._write(left)

    def _write(self, n):
        pos = self.pos
        if self.out is None:
            self.text.write(bytes(self.q[pos:pos + n]).decode())
        else:
            self.out.write(self.q, pos, n)  # the stream's write(buf, off, n): no slice to allocate
        pos += n
        if pos == len(self.q):
            self.q = bytearray()
            pos = 0
        self.pos = pos

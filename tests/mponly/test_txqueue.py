# MicroPython only: the output queue holds each line's own text, no copy.
# MicroPython's str is a buffer of its UTF-8 bytes, so a memoryview over it
# is all the queue keeps (shove/pacing.py); a copy of a long line would need
# a block of its size, in a heap a long game has cut up.
import gc

from shove.pacing import UART_US_PER_BYTE, TxQueue


class Sink:
    """The console: counts what it is given, allocating nothing."""

    def __init__(self):
        self.n = 0

    def write(self, buf, off, n):
        self.n += n
        return n


def _held(tx, line):
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        tx.put(line)
        return gc.mem_alloc() - before
    finally:
        gc.enable()


def test_a_queued_line_is_its_own_text_not_a_copy():
    now = [0]
    sink = Sink()
    tx = TxQueue(sink, None, UART_US_PER_BYTE, lambda: now[0])
    tx.put("warm")  # the queue's list has its first room
    got = _held(tx, "x" * 3000)
    assert got < 300, got  # a view and a slot in the list, never the line's 3 KB again
    assert tx.size + sink.n == 5 + 3000 + 1
    # a line in chunks: a view over each chunk's own text and nothing more
    # (str.encode() here would share the text but add an object a chunk,
    # held while the chunk waits)
    chunks = ["%02d" % i + "y" * 200 for i in range(16)]
    _held(tx, chunks)  # (the list grown for this many)
    got = _held(tx, chunks)
    views = [None] * len(chunks)
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        for i in range(len(chunks)):  # (no tuple a step, as enumerate's)
            views[i] = memoryview(chunks[i])
        each = gc.mem_alloc() - before
    finally:
        gc.enable()
    assert got <= each + 8 * len(chunks), (got, each)
    tx.flush()
    assert sink.n == 5 + 3000 + 1 + 2 * (16 * 202 + 1)

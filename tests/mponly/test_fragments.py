# MicroPython only: a line that carries a state is built and queued in a
# heap cut into small free blocks. A long game leaves the chip's heap so
# (eight computer sides at full speed with state polls: a largest free
# block of 2 to 7 KB with tens of KB free in all), and a `new` was then
# answered no_memory: its reply, joined whole, and the list of its pieces
# each needed a block of their own size. Here the heap is filled and every
# other block let go, so no free block is larger than HOLE bytes: the
# reply must still be made and queued, all of it, in order.
import gc
import json

from shove import protocol, rules
from shove.pacing import TxQueue

HOLE = 768  # the largest free block left (plus an object's header)


class Port:
    """The console: the bytes of each write, kept as memoryviews (no copy while the heap is cut up)."""

    def __init__(self):
        self.calls = []

    def write(self, buf, off, n):
        self.calls.append((buf, off, n))
        return n

    def bytes(self):
        return b"".join(bytes(buf[off:off + n]) for buf, off, n in self.calls)


def _fragment():
    """Cut the heap up: fill it with blocks of HOLE bytes, then every gap
    left with small pins, then let every other block go. The free heap is
    then holes of one block each (HOLE bytes and a header) between blocks
    still held. Returns what holds them."""
    gc.collect()
    held = [None] * (gc.mem_free() // HOLE + 16)
    n = 0
    try:
        while n < len(held):
            held[n] = bytearray(HOLE)
            n += 1
    except MemoryError:
        pass
    pins = None
    try:
        while True:
            pins = [pins]
    except MemoryError:
        pass
    for i in range(0, n, 2):
        held[i] = None
    gc.collect()
    return held, pins


def test_a_state_line_is_built_and_queued_in_a_heap_of_small_free_blocks():
    g = rules.new_game(["P%d" % i for i in range(8)], rules={"beds": list(range(1, 21)) + [25]})  # eight sides, 21 beds
    st = g.to_state()
    want = protocol.ok(1, {"state": st})  # one string: what the host must read
    assert len(want) > 2 * HOLE  # could never have been one block here
    port = Port()
    tx = TxQueue(port, None, 0, lambda: 0)  # a console that takes all at once: no pacing to wait for
    ticks = [0]

    def tick():
        ticks[0] += 1

    gc.collect()
    pins = _fragment()
    free = gc.mem_free()
    try:
        line = protocol.ok(1, {"state": st}, tick)
        tx.put(line)
        err = None
    except MemoryError as e:
        err = e
    pins = None  # the heap whole again for the checks
    gc.collect()
    assert err is None, "no_memory with %d KB free in blocks of %d bytes" % (free // 1024, HOLE)
    assert ticks[0] > 8  # built in pieces, with reads of the matrix between
    got = port.bytes()
    assert got == want.encode() + b"\n", (len(got), len(want))
    assert json.loads(got)["state"]["sides"][7]["name"] == "P7"

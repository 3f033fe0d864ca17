# Output paced to the UART (shove/pacing.py): a write never gives the FIFO
# more than it has room for (more would block the scan for RTOS ticks), and
# nothing queued is lost or reordered. Runs in both interpreters.
from shove.pacing import READY, UART_FIFO, UART_US_PER_BYTE, TxQueue


class Port:
    """The console: what each write call gave it."""

    def __init__(self):
        self.calls = []

    def write(self, buf, off, n):
        self.calls.append(bytes(buf[off:off + n]))
        return n


def queue(now):
    port = Port()
    return TxQueue(port, None, UART_US_PER_BYTE, lambda: now[0]), port


def test_a_long_reply_goes_a_fifo_load_at_a_time_as_the_uart_drains_it():
    now = [1000]
    tx, port = queue(now)
    line = "x" * 300
    tx.put(line)  # 301 bytes with the newline
    assert port.calls == [b"x" * UART_FIFO]  # the FIFO's worth, no more
    tx.drain()
    assert len(port.calls) == 1  # full: nothing more until it has sent some
    now[0] += 10 * UART_US_PER_BYTE  # ten bytes' time: room for ten, but a write waits for half the FIFO
    tx.drain()
    assert len(port.calls) == 1
    now[0] += (UART_FIFO // 2 - 10) * UART_US_PER_BYTE  # half the FIFO sent: that half goes
    tx.drain()
    assert [len(c) for c in port.calls] == [UART_FIFO, UART_FIFO // 2]
    now[0] += 1000000  # long after: the FIFO is empty and the rest (109 bytes) fits: it all goes
    tx.drain()
    tx.drain()
    assert [len(c) for c in port.calls] == [UART_FIFO, UART_FIFO // 2, 301 - UART_FIFO - UART_FIFO // 2 - 1, 1]
    assert b"".join(port.calls) == line.encode() + b"\n"
    n = len(port.calls)
    tx.drain()  # nothing queued: no write call at all (each costs the scan tens of us)
    assert len(port.calls) == n


def test_flush_writes_everything_queued_at_once_and_then_nothing():
    now = [0]
    tx, port = queue(now)
    tx.put("a" * 200)
    tx.put("b" * 50)
    tx.flush()  # before a reset or the hand-over: the rest now, whatever the FIFO holds
    assert b"".join(port.calls) == b"a" * 200 + b"\n" + b"b" * 50 + b"\n"
    # the FIFO's load at the put, then the rest: a call a line, one a newline
    assert len(port.calls) == 5
    tx.flush()
    assert len(port.calls) == 5
    tx.put("c")  # the queue starts afresh after it
    now[0] += 1000000
    tx.drain()
    assert port.calls[-2:] == [b"c", b"\n"]


def test_a_text_console_takes_each_line_whole_unpaced():
    got = []

    class Text:
        def write(self, s):
            got.append(s)

    tx = TxQueue(None, Text(), UART_US_PER_BYTE, lambda: 0)
    tx.put("é" * 100)
    tx.put("ok")
    assert got == ["é" * 100 + "\n", "ok\n"]
    tx.flush()
    assert len(got) == 2


def test_the_fifo_is_never_given_more_than_its_room_counted_in_whole_bytes():
    # (a long line waits: a write goes once half the FIFO has room)
    half = UART_FIFO // 2
    for still_sending_us, room in ((1, UART_FIFO - 1), (UART_US_PER_BYTE, UART_FIFO - 1),
                                   (UART_US_PER_BYTE + 1, UART_FIFO - 2),
                                   (half * UART_US_PER_BYTE, half), (half * UART_US_PER_BYTE + 1, 0),
                                   ((UART_FIFO - 1) * UART_US_PER_BYTE, 0)):
        now = [5000]
        tx, port = queue(now)
        tx.put("y" * 400)
        assert len(port.calls[0]) == UART_FIFO
        now[0] = tx.end - still_sending_us  # a part of a byte still in it counts as a byte
        tx.drain()
        got = len(port.calls[1]) if len(port.calls) > 1 else 0
        assert len(port.calls) <= 2 and got == room, (still_sending_us, got)


def test_the_last_bytes_of_the_queue_go_as_soon_as_they_fit():
    # what is left fits in the room there is: no wait for half the FIFO, so
    # a reply's end reaches the host without a pause
    now = [5000]
    tx, port = queue(now)
    tx.put("z" * (UART_FIFO + 19))  # with its newline, 20 bytes more than the FIFO takes
    assert len(port.calls) == 1
    now[0] = tx.end - (UART_FIFO - 20) * UART_US_PER_BYTE  # room for exactly those 20
    tx.drain()
    assert len(port.calls[0]) == UART_FIFO and sum(len(c) for c in port.calls[1:]) == 20 and tx.size == 0
    tx2, port2 = queue(now)
    tx2.put("z" * (UART_FIFO + UART_FIFO // 2))  # half a FIFO and a byte left, room for 20: it waits
    now[0] = tx2.end - (UART_FIFO - 20) * UART_US_PER_BYTE
    tx2.drain()
    assert len(port2.calls) == 1 and tx2.size == UART_FIFO // 2 + 1


def test_the_queue_never_holds_more_than_its_capacity_and_loses_or_cuts_nothing():
    # lines of every size put while the UART drains at its pace: after each
    # put the queue is within its capacity; a line that did not fit made
    # the loop wait on the UART for the room (counted), oldest bytes first
    now = [0]
    port = Port()
    tx = TxQueue(port, None, UART_US_PER_BYTE, lambda: now[0], cap=1000)
    sent = []
    for i, size in enumerate((10, 300, 600, 250, 990, 40, 1500, 5, 700, 700)):
        line = chr(65 + i) * size
        sent.append(line)
        before, held = tx.waits, tx.size
        tx.put(line)
        over = held + size + 1 > 1000
        assert tx.waits - before == (1 if over else 0), i
        # past the capacity: written down to it, the FIFO then full (nothing more goes)
        assert tx.size == 1000 if over else tx.size <= held + size + 1, (i, tx.size)
        now[0] += 20 * UART_US_PER_BYTE  # some bytes' time between two lines
        tx.drain()
    assert tx.waits >= 3  # 990 behind 600, 1500 alone, 700 behind 700
    tx.flush()
    assert b"".join(port.calls) == "".join(s + "\n" for s in sent).encode()
    assert tx.size == 0 and tx.q == []


def test_a_step_may_start_only_while_at_most_ready_bytes_wait():
    now = [0]
    tx, port = queue(now)
    assert tx.ready()
    tx.put("z" * (UART_FIFO + READY))  # the FIFO takes its load; READY and the newline wait
    assert tx.size == READY + 1 and not tx.ready()
    now[0] += UART_US_PER_BYTE  # a byte's time: one more fits the FIFO, but a write waits for half of it
    tx.drain()
    assert tx.size == READY + 1 and not tx.ready()
    now[0] += (UART_FIFO // 2 - 1) * UART_US_PER_BYTE  # half the FIFO's time: that half goes
    tx.drain()
    assert tx.size == READY + 1 - UART_FIFO // 2 and tx.ready()


def test_lines_in_utf8_are_queued_by_their_bytes():
    now = [0]
    tx, port = queue(now)
    tx.put("\u00e9" * 100)  # 200 bytes, 100 characters
    assert tx.size == 201 - UART_FIFO
    tx.flush()
    assert b"".join(port.calls).decode("utf-8") == "\u00e9" * 100 + "\n"


def test_a_line_in_chunks_goes_out_as_one_line_in_order_and_counts_whole():
    # a line carrying a state comes as its chunks (shove/protocol.py): queued
    # one after the other, never joined, each line's newline after its last
    now = [0]
    tx, port = queue(now)
    chunks = ["{\"a\":" + "1" * 200, ",\"é\":" + "2" * 300, "}"]
    tx.put(chunks)
    tx.put("x")
    n = sum(len(c.encode()) for c in chunks) + 1
    assert tx.size == n + 2 - UART_FIFO  # the FIFO took its load at once
    assert not tx.ready()
    tx.flush()
    assert b"".join(port.calls) == "".join(chunks).encode() + b"\nx\n"
    assert tx.size == 0 and tx.q == []
    got = []

    class Text:
        def write(self, s):
            got.append(s)

    tx = TxQueue(None, Text(), UART_US_PER_BYTE, lambda: 0)
    tx.put(chunks)
    assert "".join(got) == "".join(chunks) + "\n"


def test_a_line_that_fills_the_queue_exactly_to_its_capacity_waits_for_nothing():
    # the capacity is what the queue may hold: a line that brings it to just
    # that is queued as it is; one byte more and the loop waits on the UART
    now = [1000]
    port = Port()
    tx = TxQueue(port, None, UART_US_PER_BYTE, lambda: now[0], cap=1000)
    assert tx.waits == 0  # (stats' tx_waits, from the start)
    tx.put("a" * (UART_FIFO - 1))  # the FIFO's load with its newline: it is full now
    assert tx.size == 0 and len(port.calls) == 2
    end = tx.end
    tx.put("b" * 999)  # 1000 bytes with its newline: the capacity, to the byte
    assert tx.waits == 0 and tx.size == 1000 and tx.end == end
    assert len(port.calls) == 2  # the FIFO is still full: nothing more went
    tx.put("c")  # two bytes past it: those go out now, the loop waiting on the UART for them
    assert tx.waits == 1 and tx.size == 1000
    assert b"".join(port.calls) == b"a" * (UART_FIFO - 1) + b"\n" + b"bb"


def test_a_console_with_no_pace_takes_each_line_at_once_in_order():
    # us_per_byte 0 (a USB console that is no UART): nothing to pace or to
    # wait for, whatever the capacity; each line, its chunks and its newline
    # go out as they are put, in order
    port = Port()
    tx = TxQueue(port, None, 0, lambda: 0, cap=100)
    tx.put("x" * 300)
    assert port.calls == [b"x" * 300, b"\n"] and tx.size == 0 and tx.q == [] and tx.ready()
    tx.put(["{\"a\":1", ",\"b\":2}"])
    assert port.calls[2:] == [b"{\"a\":1", b",\"b\":2}", b"\n"]
    assert tx.waits == 0
    tx.drain()
    tx.flush()
    assert len(port.calls) == 5  # nothing waits: no write call more


def test_while_the_fifo_is_full_a_drain_writes_nothing_and_keeps_its_end():
    # the board's clock moves on between any two reads (on the chip tens of
    # us a call): a drain that finds no room must not count the FIFO's end
    # again from a later read, or the end would creep later with every
    # drain and the output slow down the longer the FIFO stays full
    now = [5000]

    def clock():
        now[0] += 3
        return now[0]

    port = Port()
    tx = TxQueue(port, None, UART_US_PER_BYTE, clock)
    tx.put("q" * 400)
    assert len(port.calls) == 1 and len(port.calls[0]) == UART_FIFO
    end = tx.end
    for _ in range(10):  # 60 us of reads: less than a byte's time, no room yet
        tx.drain()
    assert len(port.calls) == 1 and tx.end == end
    now[0] = end  # the FIFO has sent all it held: a whole load goes, counted from then
    tx.drain()
    assert len(port.calls[1]) == UART_FIFO and tx.end > end

"""The virtual classic ESP32's `socket` (hapenny/sim/runtime/vsocket.py) under
the ESP32 timing model: each call is charged the chip's fixed cost, lwIP's
path in the ESP32 port (ports/esp32/modsocket.c), and a cost a byte copied,
and the host's own time in the call is handed to the simulator (its clock's
sim) rather than left for the bytecode's factor. The module runs here on
CPython over stand-ins for the unix port's socket, time and machine, with a
clock that records what it is told: no host timing is read."""
import socket as host_socket
import sys
import types
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "host" / "hapenny" / "sim" / "runtime" / "vsocket.py"
SELECT_US = CALL_US = 133  # the module's, documented there (esphome/esphome#14249's select)
BYTE_NS = 50


class Clock:
    """The board's clock as vsocket uses it: charge(t) (the firmware's work
    up to host instant t, or to now) and sim(us) (the time since was the simulator's; `us` of the chip's)."""

    scale = 125  # the ESP32 timing model's clock has a factor

    def __init__(self):
        self.log = []
        self.last = 0
        self.entered = []  # the host instants the firmware's work was charged up to

    def charge(self, t=None):
        self.log.append("firmware")
        self.entered.append(t)

    def sim(self, us=0):
        self.log.append(us)


class Raw:
    """The unix port's connection socket, as a stand-in: what its calls return."""

    def __init__(self, reads=(), fail=None):
        self.reads = list(reads)
        self.fail = fail
        self.fd = 5
        self.log = []

    def fileno(self):
        return self.fd

    def readinto(self, buf, *n):
        self.log.append("readinto")
        if self.fail:
            raise OSError(self.fail)
        return self.reads.pop(0)

    def write(self, buf, *a):
        self.log.append("write")
        return len(buf) if not a else a[1]

    def setblocking(self, flag):
        self.log.append("setblocking")

    def close(self):
        self.log.append("close")
        self.fd = -1


@pytest.fixture
def vs(monkeypatch):
    clock = Clock()
    monkeypatch.setitem(sys.modules, "machine", types.SimpleNamespace(board_clock=clock))
    monkeypatch.setitem(sys.modules, "micropython", types.SimpleNamespace(const=lambda x: x))
    now = iter(range(0, 10 ** 6, 10))  # the host's clock: 10 us on at each reading
    monkeypatch.setitem(sys.modules, "time", types.SimpleNamespace(ticks_us=lambda: next(now), ticks_diff=lambda a, b: a - b))
    heap = types.SimpleNamespace(sweep=lambda: None, sockets=[])
    g = {"__name__": "vsocket", "_real": host_socket, "esp32": types.SimpleNamespace(heap=lambda: heap)}
    exec(compile(SOURCE.read_text(), str(SOURCE), "exec"), g)
    g["clock_"] = clock
    return g


def _charges(clock):
    """What each call was charged: the sim() after each firmware mark."""
    return [x for x in clock.log if x != "firmware"]


def test_a_read_is_a_select_and_a_recvfrom_and_its_bytes_copied(vs):
    raw = Raw(reads=[1000, 40])
    c = vs["Conn"](raw)
    assert c.readinto(bytearray(1024)) == 1000
    assert c.readinto(bytearray(1024)) == 40
    assert _charges(vs["clock_"]) == [SELECT_US + CALL_US + 1000 * BYTE_NS // 1000, SELECT_US + CALL_US + 40 * BYTE_NS // 1000]
    # the firmware's work is charged before each call, the call itself only at the fixed cost
    assert vs["clock_"].log == ["firmware", 316, "firmware", 268]


def test_a_write_is_one_call_and_its_bytes_copied(vs):
    c = vs["Conn"](Raw())
    assert c.write(b"x" * 1024) == 1024
    assert c.write(b"abcdef", 2, 3) == 3
    assert _charges(vs["clock_"]) == [CALL_US + 1024 * BYTE_NS // 1000, CALL_US]


def test_a_read_that_finds_nothing_is_charged_its_calls_and_raises_as_the_port(vs):
    c = vs["Conn"](Raw(fail=11))
    with pytest.raises(OSError):
        c.readinto(bytearray(16))
    assert _charges(vs["clock_"]) == [SELECT_US + CALL_US]
    assert vs["stats"][:3] == [1, 0, SELECT_US + CALL_US]  # calls, bytes, the chip's us


def test_setblocking_and_close_are_one_call_each(vs):
    raw = Raw()
    c = vs["Conn"](raw)
    c.setblocking(False)
    c.close()
    assert raw.log == ["setblocking", "close"] and c.fileno() == -1
    assert _charges(vs["clock_"]) == [CALL_US, CALL_US, 0]  # (the heap model's sweep: nothing)


def test_the_plain_timing_model_charges_nothing_and_leaves_the_calls_time_on_the_board(vs):
    del Clock.scale  # a clock without a factor: the plain model
    try:
        c = vs["Conn"](Raw(reads=[10]))
        assert c.readinto(bytearray(16)) == 10
        assert vs["clock_"].log == []
    finally:
        Clock.scale = 125


def test_the_firmware_is_charged_up_to_the_calls_entry_not_the_runtimes_way_to_it(vs):
    """On the chip the firmware's s.write() goes straight into C; here it
    passes this module's Python first (a method, call, the clock's
    look-up), host time the factor would make some 80 us of the chip's a
    call. The firmware is charged up to the method's first instant only."""
    c = vs["Conn"](Raw(reads=[3]))
    c.write(b"abc")
    c.readinto(bytearray(8))
    c.close()
    # each method reads the host clock once on entry (0, then 20 and 40: call's
    # own reading after the system call takes the 10s between); None: the heap
    # model's look after the close, the firmware charged up to it (none, here)
    assert vs["clock_"].entered == [0, 20, 40, None]

"""The virtual board's `network` (hapenny/sim/runtime/network.py) under the
ESP32 timing model: each call into it is charged the chip's cost of that call
into network_wlan.c, and the model's own Python (its air played up to now) is
handed to the simulator rather than charged at the bytecode's factor, which
read about a ms of the chip's time for a status() that the chip answers from
a kept value. The module runs here on CPython over a stand-in for the board's
clock that records what it is told: no host timing is read."""
import importlib.util
import sys
import types
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parent.parent / "host" / "hapenny" / "sim" / "runtime"


class Clock:
    """The board's clock as the model uses it: charge() (the firmware's work
    up to here), sim(us) (the time since was the simulator's; `us` of the
    chip's) and look_ms() (the time, charging nothing)."""

    def __init__(self):
        self.log = []
        self.ms = 0

    def charge(self):
        self.log.append("firmware")

    def sim(self, us=0):
        self.log.append(us)

    def look_ms(self):
        return self.ms


@pytest.fixture
def net(monkeypatch):
    clock = Clock()
    monkeypatch.setitem(sys.modules, "machine", types.SimpleNamespace(board_clock=clock))
    spec = importlib.util.spec_from_file_location("network_costs", RUNTIME / "network.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.set_air({"home": {"key": "secret-key", "rssi": -60, "addr": "10.0.0.9"}}, {"join_ms": 100})
    mod.clock_ = clock
    return mod


def test_each_call_is_charged_the_chips_cost_and_the_models_own_work_is_the_simulators(net):
    q, s, j, start = net._QUERY_US, net._SET_US, net._JOIN_US, net._START_US
    assert q < s < j < start  # a kept value, a configuration handed over, a join begun, the radio started
    w = net.WLAN(net.STA_IF)
    log = net.clock_.log
    assert w.active() is False and log == ["firmware", q]  # a query
    del log[:]
    assert w.active(True) is True and log == ["firmware", start]  # the radio started
    del log[:]
    assert w.active(True) is True and log == ["firmware", q]  # already on: nothing to start
    del log[:]
    w.config(reconnects=0)
    assert w.config("reconnects") == 0
    assert log == ["firmware", s, "firmware", q]
    del log[:]
    w.connect("home", "secret-key")
    assert w.status() == net.STAT_CONNECTING and not w.isconnected()
    net.clock_.ms = 150  # the join's time gone by on the board's clock
    assert w.status() == net.STAT_GOT_IP and w.isconnected() and w.ipconfig("addr4")[0] == "10.0.0.9"
    assert w.ifconfig()[0] == "10.0.0.9" and w.status("rssi") == -60
    # every call: the firmware's work charged before it, the call at its fixed cost after (no clock
    # read inside a call charges anything: the model looks at the time without charging)
    assert log == ["firmware", j] + ["firmware", q] * 7
    del log[:]
    w.disconnect()
    assert w.status() == net.STAT_IDLE and log == ["firmware", j, "firmware", q]


def test_a_refused_call_is_charged_as_one_that_answers(net):
    w = net.WLAN(net.STA_IF)
    del net.clock_.log[:]
    with pytest.raises(OSError):
        w.status("rssi")  # not connected: the chip's esp_wifi_sta_get_ap_info fails
    assert net.clock_.log == ["firmware", net._QUERY_US]


def test_without_the_boards_clock_the_model_reads_its_own_and_charges_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "machine", types.SimpleNamespace())
    spec = importlib.util.spec_from_file_location("network_plain", RUNTIME / "network.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    w = mod.WLAN(mod.STA_IF)
    assert w.active(True) is True and w.status() == mod.STAT_IDLE

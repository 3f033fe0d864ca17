# MicroPython only: the set-up AP's page work (shove/wifiap.py: scan, join,
# state, the close once joined) inside the unix port, against the virtual
# board's `network` model (a copy of hapenny/sim/runtime/network.py on the
# path) on a clock the test moves. The same logic's cases in CPython:
# tests/test_setup_ap.py; on the virtual board: tests/test_setup_board.py.
import json
import sys

import scratch

RUNTIME = "../../host/hapenny/sim/runtime/network.py"  # from tests/portable, the runner's folder


class Clock:
    t = 0

    def __call__(self):
        return self.t


class Board:
    dns_port = 0
    radio = True

    def __init__(self, clock):
        self.clock = clock
        self.files = {}

    def ticks_ms(self):
        return self.clock()

    def read_file(self, path):
        return self.files.get(path)

    def write_file(self, path, data):
        self.files[path] = bytes(data)


class Renderer:
    net = 0


class Keeper:
    game = None


class Parts:
    def __init__(self, board):
        self.board = board
        self.renderer = Renderer()
        self.keeper = Keeper()
        self.net = None
        self.web = None  # the board's server: none on this bench (its board has no web_addr)
        self.events = []

    def changed(self):
        pass

    def emit(self, name, fields):
        self.events.append(fields["state"])


def _network():
    d = scratch.folder("netmodel")
    with open(RUNTIME) as src, open(d + "/network.py", "w") as dst:
        dst.write(src.read())
    sys.path.insert(0, d)
    sys.modules.pop("network", None)
    try:
        import network
    finally:
        sys.path.pop(0)
    return network


def test_the_page_work_runs_in_micropython():
    net = _network()
    from shove import setupweb, wifi, wifiap, wifipage

    clock = Clock()
    net._clock = clock
    net.set_air({"home": {"key": "correct horse", "rssi": -60, "addr": "192.168.1.40"}, "cafe": {"rssi": -40},
                 "odd": {"key": "x" * 8, "rssi": -70, "hidden": True}},
                {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300})
    parts = Parts(Board(clock))
    wifiap.open_ap(parts, wifiap.NONE_SET)
    ap = parts.net

    def run(until):
        while clock.t <= until:
            parts.net.step(clock.t)
            clock.t += 50

    run(0)
    w = net.WLAN(net.AP_IF)
    assert w.active() and w.config("essid") == ap.name and w.config("authmode") == net.AUTH_WPA2_PSK
    assert wifipage.scan(parts) == {"ok": True, "networks": [{"ssid": "cafe", "rssi": -40, "secured": False},
                                                           {"ssid": "home", "rssi": -60, "secured": True}]}
    assert wifipage.join(parts, {"ssid": "home", "key": "wrong horse"})["state"] == "joining"
    run(500)
    st = wifipage.state(parts)
    assert (st["state"], st["reason"]) == ("failed", "wrong_password"), st
    assert wifipage.join(parts, {"ssid": "home", "key": "short"})["error"] == "bad_wifi"
    assert wifipage.join(parts, {"ssid": "home", "key": "correct horse"})["ok"]
    assert json.loads(parts.board.files["wifi.json"])["key"] == "correct horse"
    run(1000)
    st = wifipage.state(parts)
    assert (st["state"], st["address"]) == ("joined", "192.168.1.40"), st
    assert wifipage.online(parts) and setupweb.from_ap(parts, "192.168.4.7")
    run(1000 + wifiap.CLOSE_MS)
    from shove import wifi  # noqa: F811  the join's module as the page's join loaded it (the AP let go the one it read the code with)

    assert isinstance(parts.net, wifi.Joiner) and not w.active() and parts.renderer.net == wifi.JOINED
    assert "shove.wifiap" not in sys.modules and "shove.captive" not in sys.modules  # let go once closed
    assert parts.events == ["setup", "joining", "failed", "joining", "joined"]
    sys.modules.pop("network", None)

"""The network's join (firmware/shove/wifi.py) against the virtual board's
`network` model (hapenny/sim/runtime/network.py) on a clock the test
moves: what the board shows at each moment of a scenario, whatever the
host's load. The same pair runs on the virtual board through the serial
port in tests/test_wifi_board.py."""
import importlib.util
from pathlib import Path

import pytest

from shove import wifi

RUNTIME = Path(__file__).resolve().parent.parent / "host" / "hapenny" / "sim" / "runtime"
TIMES = {"join_ms": 1500, "refuse_ms": 1000, "scan_ms": 2000, "beacon_ms": 6000}
HOME = {"home": {"key": "correct horse", "rssi": -61, "addr": "192.168.1.40"}}


class Clock:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t & 0x3FFFFFFF


class Renderer:
    net = 0


@pytest.fixture
def net(monkeypatch):
    """A fresh `network` model on the test's clock, as the firmware imports it."""
    spec = importlib.util.spec_from_file_location("network", RUNTIME / "network.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    clock = Clock()
    mod._clock = clock
    mod.TIMES.update(TIMES)
    monkeypatch.setitem(__import__("sys").modules, "network", mod)
    mod.clock = clock
    return mod


def joiner(key="correct horse"):
    events = []
    r = Renderer()
    j = wifi.Joiner({"ssid": "home", "key": key, "name": "board-7", "code": "abcdefghjk"}, r, lambda: None,
                    lambda name, f: events.append(f))
    return j, r, events


def run(net, j, until_ms, air=None, every=100):
    """Step the joiner every `every` ms up to until_ms, changing the air at the given times."""
    air = dict(air or {})
    while net.clock.t <= until_ms:
        for at in sorted(air):
            if at <= net.clock.t:
                net.set_air(air.pop(at))
        j.step(net.clock())
        net.clock.t += every


@pytest.mark.parametrize("fails, ms", [(1, 1000), (2, 2000), (3, 5000), (4, 10000), (5, 20000), (6, 30000),
                                       (7, 60000), (8, 60000), (50, 60000)])
def test_backoff_grows_to_a_minute(fails, ms):
    assert wifi.backoff_ms(fails) == ms


@pytest.mark.parametrize("status, reason", [(201, "no_network"), (202, "wrong_password"), (204, "wrong_password"),
                                            (200, "lost"), (1001, "timeout"), (203, "error 203")])
def test_reasons(status, reason):
    assert wifi.reason_of(status) == reason


def test_joins_with_the_host_name_set_before_the_station_starts(net):
    net.set_air(HOME)
    j, r, events = joiner()
    run(net, j, 1400)
    assert (j.state, r.net) == (wifi.JOINING, wifi.JOINING)
    assert net.hostname() == "board-7" and net.WLAN().active()
    assert net.WLAN().config("reconnects") == 0  # the retries are the joiner's, not the port's
    run(net, j, 1600)
    assert (j.state, r.net, j.address) == (wifi.JOINED, wifi.JOINED, "192.168.1.40")
    rep = j.report()
    assert rep == {"state": "joined", "reason": None, "ssid": "home", "address": "192.168.1.40", "rssi": -61,
                   "name": "board-7", "tries": 1}
    assert events == [{"state": "joined", "reason": None, "address": "192.168.1.40"}]


# (ms, state, reason, attempts so far): a wrong password, retried with backoff. The
# first refusal is seen as it comes; a retry keeps the port's last reason in
# status() (network_wlan_status), so it ends after ATTEMPT_MS (15 s), then
# waits 1, 2, 5 s... (_BACKOFF_S).
WRONG = [(900, "joining", None, 1), (1000, "failed", "wrong_password", 1), (1900, "failed", "wrong_password", 1),
         (2000, "failed", "wrong_password", 2), (16900, "failed", "wrong_password", 2),
         (17000, "failed", "wrong_password", 2), (18900, "failed", "wrong_password", 2),
         (19000, "failed", "wrong_password", 3), (38900, "failed", "wrong_password", 3),
         (39000, "failed", "wrong_password", 4)]


def test_a_wrong_password_fails_and_is_retried_ever_later(net):
    net.set_air(HOME)
    j, r, events = joiner(key="wrong horse")
    for ms, state, reason, tries in WRONG:
        run(net, j, ms)
        assert (wifi._STATES[j.state], j.reason, j.tries) == (state, reason, tries), ms
    assert r.net == wifi.FAILED
    assert [e["state"] for e in events] == ["failed"]  # one event: the state did not change since


def test_no_network_in_reach_keeps_trying_then_joins_when_it_comes(net):
    net.set_air({})
    j, r, events = joiner()
    run(net, j, 2100)
    assert (wifi._STATES[j.state], j.reason, j.tries) == ("failed", "no_network", 1)
    run(net, j, 8000)
    assert j.tries == 2  # retried at 3 s (after 1 s); that attempt reads the old reason, so it runs 15 s
    run(net, j, 30000, air={8100: HOME})
    assert (wifi._STATES[j.state], j.address) == ("joined", "192.168.1.40")
    assert [e["state"] for e in events] == ["failed", "joined"]


def test_a_drop_is_noticed_and_the_network_rejoined_when_back(net):
    net.set_air(HOME)
    j, r, events = joiner()
    run(net, j, 2000)
    assert j.state == wifi.JOINED
    run(net, j, 7900, air={2000: {}})  # gone; beacons missed for 6 s
    assert j.state == wifi.JOINED
    run(net, j, 8100)  # the driver knows: the joiner's next look at it (once a second while joined) tells
    assert j.state == wifi.JOINED
    run(net, j, 8000 + wifi._LOOK_MS + 100)
    assert (wifi._STATES[j.state], j.reason, j.address) == ("joining", "lost", None)
    run(net, j, 12000)
    assert (wifi._STATES[j.state], j.reason) == ("failed", "no_network")
    run(net, j, 40000, air={20000: HOME})
    assert (wifi._STATES[j.state], j.address) == ("joined", "192.168.1.40")
    assert [e["state"] for e in events] == ["joined", "joining", "failed", "joined"]


def test_a_blip_shorter_than_the_beacon_time_goes_unnoticed(net):
    net.set_air(HOME)
    j, r, events = joiner()
    run(net, j, 10000, air={2000: {}, 5000: HOME})
    assert j.state == wifi.JOINED and len(events) == 1


def test_leave_stops_the_station(net):
    net.set_air(HOME)
    j, r, events = joiner()
    run(net, j, 2000)
    w = net.WLAN()
    j.leave()
    assert not w.active() and not w.isconnected() and r.net == wifi.OFF
    assert w.status() == net.STAT_IDLE  # disconnect(): reason ASSOC_LEAVE, shown as idle


def test_the_model_answers_as_the_esp32_port(net):
    w = net.WLAN(net.WLAN.IF_STA)
    assert w is net.WLAN() and w.status() == net.STAT_IDLE
    with pytest.raises(OSError):
        w.connect("home", "x")  # not started
    w.active(True)
    with pytest.raises(ValueError):
        w.config("rssi")  # not a config parameter on the ESP32: status('rssi') is
    with pytest.raises(OSError):
        w.status("rssi")  # not connected
    with pytest.raises(ValueError):
        net.hostname("x" * 33)
    net.set_air(HOME)
    w.connect("home", "correct horse")
    assert w.status() == net.STAT_CONNECTING and not w.isconnected()
    assert w.ipconfig("addr4") == ("0.0.0.0", "0.0.0.0")
    net.clock.t = 1500
    assert w.status() == net.STAT_GOT_IP and w.isconnected() and w.status("rssi") == -61
    assert w.ifconfig()[0] == "192.168.1.40"
    # without reconnects set the port retries a refused network at once, for ever
    w.connect("home", "wrong horse")
    net.clock.t = 2500
    assert w.status() == net.STAT_WRONG_PASSWORD
    net.set_air({"home": {"key": "wrong horse", "rssi": -61, "addr": "192.168.1.40"}})
    net.clock.t = 4000
    assert w.status() == net.STAT_GOT_IP


@pytest.mark.parametrize("ev, line", [
    ({"state": "joined", "reason": None, "address": "192.168.1.40"}, "Wi-Fi: joined, at 192.168.1.40"),
    ({"state": "failed", "reason": "wrong_password", "address": None},
     "Wi-Fi: joining failed (wrong_password); the board keeps trying"),
    ({"state": "joining", "reason": "lost", "address": None}, "Wi-Fi: the network was lost; joining again"),
    ({"state": "joining", "reason": None, "address": None}, "Wi-Fi: joining"),
    ({"state": "off", "reason": None, "address": None}, "Wi-Fi: off"),
])
def test_the_scoreboard_logs_the_wifi_event(ev, line):
    from hapenny.scoreboard import describe

    assert describe(dict(ev, ev="wifi"), None) == line


class FakeLink:
    """The board's side of `hapenny wifi`, for the CLI's own logic (the real board: tests/test_wifi_board.py)."""

    def __init__(self):
        self.sent = []

    def request(self, cmd, **fields):
        self.sent.append(dict(fields, cmd=cmd))
        return {"ok": True, "wifi": {"state": "joined", "reason": None, "ssid": "home", "address": "10.0.0.7",
                                     "rssi": -50, "name": "hapenny-1a01", "tries": 1, "code": "abcdefghjk"}}


def test_the_cli_asks_the_password_without_echo_and_never_prints_it(monkeypatch, capsys):
    from hapenny import cli

    link = FakeLink()
    asked = []
    monkeypatch.setattr(cli, "_connect", lambda args: (link, {}))
    monkeypatch.setattr("getpass.getpass", lambda prompt: asked.append(prompt) or "s3cret-words")
    assert cli.main(["wifi", "home"]) == 0
    assert asked and "home" in asked[0]
    assert link.sent == [{"cmd": "wifi", "set": {"ssid": "home", "key": "s3cret-words"}}]
    out = capsys.readouterr()
    assert "joined home as hapenny-1a01.local at 10.0.0.7 signal -50 dBm" in out.out
    assert "pairing code: abcdefghjk" in out.out and "s3cret" not in out.out + out.err


@pytest.mark.parametrize("argv", [["wifi", "home", "--forget"], ["wifi", "--password-stdin"],
                                  ["wifi", "--hostname", "x"]])
def test_the_cli_refuses_contradictions_before_touching_the_board(monkeypatch, argv):
    from hapenny import cli

    monkeypatch.setattr(cli, "_connect", lambda args: pytest.fail("connected"))
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert "hapenny wifi" in str(e.value)


def test_a_radio_that_refuses_to_start_is_retried_with_backoff(net):
    starts = []
    active = net.WLAN.active

    def refuse(self, on=None):
        starts.append(net.clock.t)
        raise OSError("Wifi Internal Error")

    net.WLAN.active = refuse  # this test's own copy of the model
    net.set_air(HOME)
    j, r, events = joiner()
    run(net, j, 3500)
    assert (wifi._STATES[j.state], j.reason) == ("failed", "error: Wifi Internal Error")
    assert starts == [0, 1000, 3000]  # after 1 s, then 2 s: never a busy retry
    net.WLAN.active = active
    run(net, j, 12000)
    assert j.state == wifi.JOINED


def test_a_release_before_ipconfig_reads_the_address_from_ifconfig(net):
    """v1.23 (the oldest release whose .mpy the firmware loads) has WLAN.ifconfig() but no ipconfig()."""
    net.set_air(HOME)
    ipconfig = net.WLAN.ipconfig
    del net.WLAN.ipconfig  # this test's own copy of the model
    try:
        j, r, events = joiner()
        run(net, j, 2000)
        assert (j.state, j.address) == (wifi.JOINED, "192.168.1.40")
    finally:
        net.WLAN.ipconfig = ipconfig

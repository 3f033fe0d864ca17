"""The set-up access point (firmware/shove/wifiap.py) and the join behind it
(shove/wifi.py) against the virtual board's `network` model
(hapenny/sim/runtime/network.py) on a clock the test moves: when the AP
opens, what it is called and locked with, the set-up page's scan, join and
state, and when it closes. The same on the virtual board through its
serial port and a real UDP socket: tests/test_setup_board.py."""
import json

import pytest

from shove import leds, setupweb, wifi, wifiap, wifipage, wifiset
from test_wifi_join import HOME, Renderer, net  # noqa: F401 (net: the model on the test's clock)

PASSWORD = "correct horse"


class Board:
    """The board's flash and clock as the network part uses them."""

    def __init__(self, clock, files=None):
        self.clock = clock
        self.files = dict(files or {})
        self.dns_port = 0  # no socket here: tests/test_setup_board.py has the DNS on a real one
        self.radio = True

    def ticks_ms(self):
        return self.clock()

    def read_file(self, path):
        return self.files.get(path)

    def write_file(self, path, data):
        self.files[path] = bytes(data)


class Keeper:
    game = None


class Parts:
    """What the handlers get (Commands), as far as the network uses it."""

    def __init__(self, board):
        self.board = board
        self.renderer = Renderer()
        self.keeper = Keeper()
        self.net = None
        self.web = None  # the board's server: none on this bench (its board has no web_addr)
        self.events = []
        self.frames = 0

    def changed(self):
        self.frames += 1

    def emit(self, name, fields):
        self.events.append(dict(fields, ev=name))


def run(net, parts, until_ms, every=100, air=None):
    air = dict(air or {})
    while net.clock.t <= until_ms:
        for at in sorted(air):
            if at <= net.clock.t:
                net.set_air(air.pop(at))
        parts.net.step(net.clock())
        net.clock.t += every


def stored(parts):
    return json.loads(parts.board.files["wifi.json"])


def test_the_model_has_the_esp32_ports_access_point(net):
    ap = net.WLAN(net.AP_IF)
    assert ap is net.WLAN(net.WLAN.IF_AP) and ap is not net.WLAN(net.STA_IF)
    assert ap.config("essid") == "ESP_5E1A02" and ap.config("authmode") == net.AUTH_OPEN
    assert ap.ifconfig() == ("192.168.4.1", "255.255.255.0", "192.168.4.1", "0.0.0.0")
    assert ap.ipconfig("addr4") == ("192.168.4.1", "255.255.255.0")
    ap.active(True)
    with pytest.raises(OSError):
        ap.config(essid="board", password="short", authmode=net.AUTH_WPA2_PSK)  # ESP_ERR_WIFI_PASSWORD
    assert ap.config("essid") == "ESP_5E1A02"  # refused whole
    ap.config(essid="board", password="abcdefgh23", authmode=net.AUTH_WPA2_PSK)
    assert (ap.config("essid"), ap.config("authmode")) == ("board", net.AUTH_WPA2_PSK)
    for k in ("password", "key"):
        with pytest.raises(ValueError):
            ap.config(k)  # no way to read it back
    with pytest.raises(OSError):
        net.WLAN(net.STA_IF).config(essid="x")  # "AP required"
    with pytest.raises(OSError):
        ap.config(reconnects=0)  # "STA required"
    assert ap.status() is None and ap.status("stations") == [] and not ap.isconnected()
    with pytest.raises(OSError):
        ap.scan()  # "STA must be active", though the AP is
    net.set_air({"home": {"key": PASSWORD, "rssi": -61}, "cafe": {"rssi": -40},
                 "secret": {"key": "x" * 8, "rssi": -50, "hidden": True}})
    net.WLAN(net.STA_IF).active(True)
    got = ap.scan()
    assert [(t[0], t[3], t[4]) for t in got] == [(b"cafe", -40, net.AUTH_OPEN), (b"", -50, net.AUTH_WPA2_PSK),
                                                 (b"home", -61, net.AUTH_WPA2_PSK)]
    assert all(len(t) == 6 and len(t[1]) == 6 for t in got)
    assert ap.active() and net.WLAN(net.STA_IF).active()  # both at once: the chip's APSTA mode


def opened(net, files=None, air=None):
    net.set_air(HOME if air is None else air)
    parts = Parts(Board(net.clock, files))
    wifiap.open_ap(parts, wifiap.NONE_SET)
    return parts


def test_a_board_with_no_network_opens_its_ap_named_after_it_and_locked_with_its_code(net):
    parts = opened(net)
    ap = parts.net
    assert isinstance(ap, wifiap.SetupAP) and parts.renderer.net == wifiap.SETUP
    # the name and code are read (made, kept) at the first step, out of the loop's making
    assert wifiset._PAIR_FILE not in parts.board.files and ap.code is None
    run(net, parts, 0)
    pair = json.loads(parts.board.files[wifiset._PAIR_FILE])
    assert (ap.name, ap.code) == (pair["name"], pair["code"]) and len(ap.code) == wifiset.CODE_LEN
    w = net.WLAN(net.AP_IF)
    assert w.active() and w.config("essid") == ap.name and w._ap_key == ap.code
    assert w.config("authmode") == net.AUTH_WPA2_PSK
    rep = ap.report()
    assert (rep["state"], rep["reason"], rep["ap"]["essid"], rep["ap"]["address"]) == (
        "setup", "none_set", ap.name, "192.168.4.1")
    assert "code" not in json.dumps(rep) and ap.code not in json.dumps(rep)
    assert parts.events[-1] == {"ev": "wifi", "state": "setup", "reason": "none_set", "address": None}
    # the same name and code at the next start: the passphrase a person learned holds
    again = Parts(Board(net.clock, parts.board.files))
    wifiap.open_ap(again, wifiap.NONE_SET)
    again.net.step(net.clock())
    assert (again.net.name, again.net.code) == (ap.name, ap.code)


def test_the_scan_lists_names_signal_and_security_never_a_password(net):
    air = {"home": {"key": PASSWORD, "rssi": -61}, "cafe": {"rssi": -40}, "hidden": {"key": "x" * 8, "hidden": True},
           "\u00e9t\u00e9 wifi": {"key": "y" * 9, "rssi": -80}}
    parts = opened(net, air=air)
    run(net, parts, 0)
    got = wifipage.scan(parts)
    assert got == {"ok": True, "networks": [{"ssid": "cafe", "rssi": -40, "secured": False},
                                            {"ssid": "home", "rssi": -61, "secured": True},
                                            {"ssid": "\u00e9t\u00e9 wifi", "rssi": -80, "secured": True}]}
    text = json.dumps(got)
    assert PASSWORD not in text and "x" * 8 not in text
    net.set_air(HOME)
    net.clock.t += wifipage.SCAN_MS - 100
    assert len(wifipage.scan(parts)["networks"]) == 3  # a scan is reused a while (it blocks the chip)
    net.clock.t += 100
    assert wifipage.scan(parts)["networks"] == [{"ssid": "home", "rssi": -61, "secured": True}]


def test_a_wrong_password_keeps_the_ap_with_the_reason_then_the_right_one_joins_and_closes_it(net):
    parts = opened(net)
    run(net, parts, 500)
    got = wifipage.join(parts, {"ssid": "home", "key": "wrong horse"})
    assert got == {"ok": True, "state": "joining", "reason": None, "ssid": "home", "address": None,
                   "name": parts.net.name}
    assert stored(parts) == {"ssid": "home", "key": "wrong horse", "name": parts.net.name, "code": parts.net.code}
    run(net, parts, 1400)
    assert wifipage.state(parts)["state"] == "joining"
    run(net, parts, 1700)  # the network refuses it after refuse_ms
    st = wifipage.state(parts)
    assert (st["state"], st["reason"]) == ("failed", "wrong_password")
    assert net.WLAN(net.AP_IF).active() and parts.renderer.net == wifiap.SETUP
    ap = parts.net
    assert wifipage.join(parts, {"ssid": "home", "key": PASSWORD})["state"] == "joining"
    assert stored(parts)["key"] == PASSWORD
    run(net, parts, 3200)
    assert wifipage.state(parts)["state"] == "joining"
    run(net, parts, 3400)  # join_ms after the asking
    st = wifipage.state(parts)
    assert (st["state"], st["address"]) == ("joined", "192.168.1.40")
    assert parts.renderer.net == wifi.JOINED  # the status pixels: joined, green
    assert net.WLAN(net.AP_IF).active() and parts.net is ap  # open a while: the page shows the address
    run(net, parts, 3300 + wifiap.CLOSE_MS - 100)
    assert net.WLAN(net.AP_IF).active()
    run(net, parts, 3300 + wifiap.CLOSE_MS)
    assert not net.WLAN(net.AP_IF).active()
    j = parts.net
    assert isinstance(j, wifi.Joiner) and (j.state, j.address, j.ssid) == (wifi.JOINED, "192.168.1.40", "home")
    assert j.renderer is parts.renderer and j.emit == parts.emit
    assert [e["state"] for e in parts.events] == ["setup", "joining", "failed", "joining", "joined"]
    assert "wrong horse" not in json.dumps(parts.events) and PASSWORD not in json.dumps(parts.events)
    assert wifipage.state(parts)["error"] == "not_setup"  # the page's routes: only while the AP is open


def test_a_game_in_play_closes_the_ap_as_soon_as_the_network_is_joined(net):
    parts = opened(net)
    run(net, parts, 0)
    wifipage.join(parts, {"ssid": "home", "key": PASSWORD})
    parts.keeper.game = object()
    run(net, parts, 2000)
    assert isinstance(parts.net, wifi.Joiner) and not net.WLAN(net.AP_IF).active()


@pytest.mark.parametrize("body, why", [
    ({"ssid": "home", "key": "short"}, "8 to 63"),
    ({"ssid": "", "key": PASSWORD}, "1 to 32"),
    ({"ssid": "home"}, "key"),
    ({"ssid": "home", "key": PASSWORD, "code": "x"}, "ssid and key only"),
    (["home", PASSWORD], "an object"),
])
def test_bad_input_is_refused_and_changes_nothing(net, body, why):
    parts = opened(net)
    run(net, parts, 0)
    files = dict(parts.board.files)
    got = wifipage.join(parts, body)
    assert got["ok"] is False and got["error"] == "bad_wifi" and why in got["msg"]
    assert parts.board.files == files and wifipage.state(parts)["state"] == "setup"


def test_the_routes_refuse_when_the_ap_is_not_open(net):
    parts = Parts(Board(net.clock))
    for got in (wifipage.scan(parts), wifipage.state(parts), wifipage.join(parts, {"ssid": "home", "key": PASSWORD})):
        assert got["ok"] is False and got["error"] == "not_setup"
    assert parts.board.files == {}


def started(net, key, air):
    """A board whose stored network is home/key, as loading starts its join."""
    net.set_air(air)
    cfg = {"ssid": "home", "key": key, "name": "board-7", "code": "abcdefghjk"}
    parts = Parts(Board(net.clock, {"wifi.json": json.dumps(cfg).encode()}))
    parts.net = wifi.Joiner(cfg, parts.renderer, parts.changed, parts.emit, parts, True)
    return parts


def test_a_stored_network_out_of_reach_opens_the_ap_and_is_still_tried_behind_it(net):
    parts = started(net, PASSWORD, {})
    run(net, parts, 2100)
    assert isinstance(parts.net, wifi.Joiner) and parts.net.fails == 1
    run(net, parts, 40000)
    ap = parts.net
    assert isinstance(ap, wifiap.SetupAP) and ap.joiner.fails == wifi.GIVE_UP
    assert (ap.name, ap.code) == ("board-7", "abcdefghjk")  # the stored network's: the same pairing code
    assert ap.report()["reason"] == "no_network" and parts.renderer.net == wifiap.SETUP
    assert net.WLAN(net.AP_IF).active()
    tries = ap.joiner.tries
    run(net, parts, 120000, air={50000: HOME})  # the router is back (it starts slower than the board)
    assert ap.joiner is None and isinstance(parts.net, wifi.Joiner)
    assert parts.net.state == wifi.JOINED and parts.net.tries > tries and not net.WLAN(net.AP_IF).active()


def test_a_wrong_stored_password_opens_the_ap_at_once(net):
    parts = started(net, "old password", HOME)
    run(net, parts, 1100)
    assert isinstance(parts.net, wifiap.SetupAP) and parts.net.report()["reason"] == "wrong_password"


def test_once_joined_a_lost_network_never_opens_the_ap(net):
    parts = started(net, PASSWORD, HOME)
    run(net, parts, 2000)
    j = parts.net
    assert j.state == wifi.JOINED
    run(net, parts, 200000, air={3000: {}})
    assert parts.net is j and j.fails > wifi.GIVE_UP and not net.WLAN(net.AP_IF).active()


def test_the_status_pixels_show_the_open_ap():
    r = leds.Renderer(beds=2, per_side=1, status=2, brightness=255)
    r.net = wifiap.SETUP
    f = r.render(None, 0)
    px = [tuple(f[i:i + 3]) for i in range(0, len(f), 3)]
    assert px[:4] == [(0, 0, 0)] * 4 and px[4] == px[5]
    others = []
    for state in (1, 2, 3):
        r.net = state
        g = r.render(None, 0)
        others.append(tuple(g[12:15]))
    assert px[4] not in others and px[4][2] > px[4][1]  # a colour of its own: violet


def test_the_host_tells_a_person_the_set_up_network_is_open():
    from hapenny import cli, doctor
    from hapenny.scoreboard import describe

    ev = {"ev": "wifi", "state": "setup", "reason": "wrong_password", "address": None}
    assert describe(ev, None) == ("Wi-Fi: the board's set-up network is open (the network refused the password): "
                                  "join it from a phone")
    w = {"state": "setup", "reason": "none_set", "ssid": None, "address": None, "rssi": None, "name": "hapenny-1a01",
         "tries": 0, "ap": {"essid": "hapenny-1a01", "address": "192.168.4.1", "page": "setup", "dns": True}}
    assert cli.wifi_line(w) == ("Wi-Fi: set-up network hapenny-1a01 open (no network set): join it from a phone "
                                "with the pairing code as its password")

    class Rep:
        def __init__(self):
            self.rows = []

        def add(self, *row):
            self.rows.append(row)

    rep = Rep()
    doctor.wifi_finding(dict(w, reason="button"), rep)
    assert rep.rows == [("about", True, "Wi-Fi: the set-up network hapenny-1a01 is open (NEW held at start); "
                                        "join it from a phone")]


def test_the_set_up_routes_answer_only_the_aps_clients(net):
    parts = opened(net)
    assert not setupweb.from_ap(parts, "192.168.4.2")  # not open yet: the first step opens it
    run(net, parts, 0)
    assert setupweb.from_ap(parts, "192.168.4.2") and setupweb.from_ap(parts, "192.168.4.200")
    for peer in ("192.168.4.1", "192.168.1.23", "192.168.40.2", "10.0.0.2", None, ""):
        assert not setupweb.from_ap(parts, peer), peer
    assert not wifipage.online(parts)
    wifipage.join(parts, {"ssid": "home", "key": PASSWORD})
    run(net, parts, 2000)
    assert wifipage.online(parts) and setupweb.from_ap(parts, "192.168.4.2")
    run(net, parts, 2000 + wifiap.CLOSE_MS)
    assert not setupweb.from_ap(parts, "192.168.4.2") and not wifipage.online(parts)


def test_new_held_at_start_tries_the_stored_network_only_after_a_while(net):
    net.set_air(HOME)
    cfg = {"ssid": "home", "key": PASSWORD, "name": "board-7", "code": "abcdefghjk"}
    parts = Parts(Board(net.clock, {"wifi.json": json.dumps(cfg).encode()}))
    j = wifi.Joiner(cfg, parts.renderer, parts.changed, parts.emit, parts)
    wifiap.open_ap(parts, wifiap.HELD, j, wifiap.HELD_WAIT_MS)
    ap = parts.net
    run(net, parts, wifiap.HELD_WAIT_MS - 100, every=500)
    assert j.tries == 0 and parts.net is ap and ap.report()["reason"] == "button"  # time to pick another
    assert net.WLAN(net.AP_IF).active() and not net.WLAN(net.STA_IF).isconnected()
    run(net, parts, wifiap.HELD_WAIT_MS + 2000)
    assert j.tries == 1 and j.state == wifi.JOINED and parts.net is ap  # joined: the AP closes a while later
    run(net, parts, wifiap.HELD_WAIT_MS + 2000 + wifiap.CLOSE_MS)
    assert parts.net is j and not net.WLAN(net.AP_IF).active()


@pytest.mark.parametrize("error", [OSError("Wifi Internal Error"), MemoryError("memory allocation failed")])
def test_a_radio_or_heap_that_refuses_the_ap_is_tried_again_later_not_at_every_step(net, error):
    parts = opened(net)
    tries = []
    active = net.WLAN.active

    def refuse(self, on=None):
        if self._if == net.AP_IF and on:
            tries.append(net.clock.t)
            raise error
        return active(self, on)

    net.WLAN.active = refuse  # this test's own copy of the model
    run(net, parts, 11000)
    assert tries == [0, 5000, 10000] and parts.net.report()["reason"] == "error: %s" % error
    net.WLAN.active = active
    run(net, parts, 15000)
    assert net.WLAN(net.AP_IF).active() and parts.net.report()["reason"] == "none_set"

# What the board does about the network at start-up (shove/loading.py's
# read_wifi), for each board and flash: a board with no radio loads nothing
# of the network, whatever is held or stored; with a radio, a stored network
# is joined (failing at start, the join opens the set-up access point), none
# stored opens the access point, NEW held at start opens it in front of the
# stored network's join, and its release is no press; a damaged wifi.json is
# set aside as wifi.json.bad with a notice naming it. The join and the access
# point are stood in for by recorders (their own tests are test_wifi*.py and
# test_setup_ap.py). Runs in CPython and MicroPython.
import json
import os

import scratch
from shove import buttons, loading, wifi, wifiap

GOOD = json.dumps({"ssid": "home", "key": "secret", "name": "dartboard", "code": "1234"})
NO_KEY = json.dumps({"ssid": "home", "name": "dartboard", "code": "1234"})
NEW = 2  # the game's buttons: next, undo, new


class Board:
    def __init__(self, radio, held):
        if radio is not None:  # None: a board class with no radio attribute at all
            self.radio = radio
        self.held = held

    def button(self, i):
        return self.held and i == NEW

    def read_file(self, name):
        try:
            with open(name, "rb") as f:
                return f.read()
        except OSError:
            return None


class Parts:
    def __init__(self):
        self.buttons = buttons.Buttons(("next", "undo", "new"))
        self.net = None


class App:
    def __init__(self, board):
        self.board = board
        self.renderer = object()
        self.changed = object()
        self.emit = object()
        self.notices = []


class Joiner:
    """Stands in for wifi.Joiner: keeps what it was made with."""

    def __init__(self, cfg, renderer, changed, emit, parts=None, fallback=False):
        self.args = (cfg, renderer, changed, emit, parts, fallback)


def _start(name, radio, held, data):
    """read_wifi on a fresh board in a scratch folder holding wifi.json =
    data (None: no file): (app, parts, [open_ap's calls], files left)."""
    here = os.getcwd()
    path = scratch.folder(name)
    if data is not None:
        with open(path + "/" + wifi.FILE, "wb") as f:
            f.write(data.encode())
    opened = []

    def open_ap(parts, why, joiner=None, wait_ms=0):
        opened.append((parts, why, joiner, wait_ms))

    real_joiner, real_open = wifi.Joiner, wifiap.open_ap
    wifi.Joiner, wifiap.open_ap = Joiner, open_ap
    os.chdir(path)
    try:
        app, c = App(Board(radio, held)), Parts()
        loading.read_wifi(app, c)
        return app, c, opened, sorted(os.listdir("."))
    finally:
        os.chdir(here)
        wifi.Joiner, wifiap.open_ap = real_joiner, real_open


def _joined(app, c, fallback):
    """c.net is a join of GOOD's network, made with the app's parts."""
    j = c.net
    assert isinstance(j, Joiner)
    cfg, renderer, changed, emit, parts, fb = j.args
    assert cfg == json.loads(GOOD)
    assert renderer is app.renderer and changed is app.changed and emit is app.emit and parts is c
    assert bool(fb) is fallback  # the join opens the access point when it fails at start: only on a board with a radio
    return j


def _untouched(c):
    bt = c.buttons
    assert bytes(bt.raw) == bytes(bt.stable) == bytes(bt.longed) == bytes(3) and bt.idle is True


def test_a_board_without_a_radio_loads_nothing_of_the_network():
    # (radio None: the board has no radio attribute; False: it says it has none)
    for name, radio, held in (("nr1", None, False), ("nr2", None, True), ("nr3", False, False), ("nr4", False, True)):
        app, c, opened, left = _start(name, radio, held, None)
        assert opened == [] and c.net is None and app.notices == [] and left == [], name
        _untouched(c)


def test_a_board_without_a_radio_joins_a_stored_network_without_the_fallback():
    for name, radio in (("nr5", None), ("nr6", False)):
        app, c, opened, left = _start(name, radio, True, GOOD)
        assert opened == [] and app.notices == [] and left == [wifi.FILE], name
        _joined(app, c, False)
        _untouched(c)


def test_a_stored_network_is_joined_with_the_access_point_as_its_fallback():
    app, c, opened, left = _start("r1", True, False, GOOD)
    assert opened == [] and app.notices == [] and left == [wifi.FILE]
    _joined(app, c, True)
    _untouched(c)


def test_no_stored_network_opens_the_access_point():
    app, c, opened, left = _start("r2", True, False, None)
    assert opened == [(c, wifiap.NONE_SET, None, 0)] and c.net is None and app.notices == [] and left == []
    _untouched(c)


def test_new_held_opens_the_access_point_in_front_of_the_stored_join():
    app, c, opened, left = _start("r3", True, True, GOOD)
    j = _joined(app, c, True)
    assert opened == [(c, wifiap.HELD, j, wifiap.HELD_WAIT_MS)] and app.notices == [] and left == [wifi.FILE]


def test_new_held_with_no_stored_network_opens_the_access_point_to_wait_for_none():
    app, c, opened, left = _start("r4", True, True, None)
    assert opened == [(c, wifiap.HELD, None, wifiap.HELD_WAIT_MS)] and c.net is None and left == []


def test_new_held_at_start_is_already_down_and_its_release_is_no_press():
    for name, data in (("h1", GOOD), ("h2", None)):
        _, c, _, _ = _start(name, True, True, data)
        bt = c.buttons
        assert not bt.idle, name  # the loop reads the buttons until NEW is seen up
        out = []
        for t in range(0, 3000, 10):  # still held for 3 s: no press, no long press (no variant change)
            bt.update(NEW, True, t, out)
        for t in range(3000, 3200, 10):  # let go
            bt.update(NEW, False, t, out)
        assert out == [] and bt.settled(), name
        for t in range(3200, 3400, 10):  # the next press and release is one, as ever
            bt.update(NEW, True, t, out)
        for t in range(3400, 3600, 10):
            bt.update(NEW, False, t, out)
        assert out == [("new", buttons.PRESS), ("new", buttons.SHORT)], name


def test_a_damaged_file_is_set_aside_with_a_notice_and_no_network_is_joined():
    # radio: the access point opens as for none stored; no radio: nothing more
    for name, radio, data in (("d1", True, NO_KEY), ("d2", False, NO_KEY), ("d3", True, "[1, 2]"), ("d4", True, "{no")):
        app, c, opened, left = _start(name, radio, False, data)
        assert c.net is None and left == [wifi.FILE + ".bad"], name
        assert opened == ([(c, wifiap.NONE_SET, None, 0)] if radio else []), name
        assert len(app.notices) == 1 and app.notices[0]["file"] == wifi.FILE, name
        msg = app.notices[0]["error"]
        assert msg.startswith("damaged (") and msg.endswith("); no network is joined"), name
        if data == NO_KEY:
            assert msg == "damaged (no key); no network is joined"
        if data == "[1, 2]":
            assert msg == "damaged (not an object); no network is joined"

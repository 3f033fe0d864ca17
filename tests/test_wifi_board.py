"""The board on the home Wi-Fi, end to end through the serial port of a
virtual board whose `network` models the ESP32's (hapenny/sim/runtime/
network.py): the test bench decides which networks are in reach, with what
password, and when one drops. Every byte the board sent (its port, the
CLI's output, the doctor's report) is searched for the password.

One board for the file; the network model's times are short (a few hundred
ms on the board's clock) and every wait is for an event or a state, never a
fixed time. The join's timing itself is table-tested in tests/test_wifi_join.py."""
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hapenny import doctor
from boardsite import connect_when_up, until
from hapenny.sim.board import VirtualBoard
from hapenny.web.server import qr_text

BIN = Path(sys.executable).parent
PASSWORD = "Tr0ub4dor&3-secret"
HOME = {"home": {"key": PASSWORD, "rssi": -57, "addr": "127.0.0.1"}}
TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300}
WAIT = 30.0  # generous: a loaded host slows the board's clock with it
# the network's modules: the join, its command, the web server and its routes (none without a network)
NETWORK_MODULES = ("shove.wifi", "shove.wifiset", "shove.httpd", "shove.webroutes")


class Wired:
    def __init__(self):
        self.log = io.BytesIO()  # every byte the board wrote to its port
        self.said = []  # the host tools' output
        self.vb = VirtualBoard(fast=True, log=self.log).start()
        self.vb.air({}, TIMES)
        self.open()

    def open(self):
        self.link, self.info, self.ser = connect_when_up(self.vb.port)

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def wifi(self):
        return self.req("wifi")["wifi"]

    def until(self, what, cond):
        """Poll `wifi` until cond(state) holds."""
        return until(what, self.wifi, cond, pause=0.2)

    def modules(self):
        return self.req("diag", op="about")["modules"]

    def status_pixels(self, cond=None):
        """The status pixels, once cond(pixels) holds (the strip is written in its own slice)."""
        end = time.monotonic() + WAIT
        while True:
            p = self.vb.pixels()[-3:]
            if cond is None or cond(p) or time.monotonic() > end:
                return p
            time.sleep(0.1)

    def cli(self, *args, stdin=""):
        self.ser.close()
        try:
            r = subprocess.run([str(BIN / "hapenny")] + list(args) + ["--port", self.vb.port], input=stdin,
                               capture_output=True, text=True, timeout=60)
        finally:
            self.open()
        self.said.append(r.stdout + r.stderr)
        return r


@pytest.fixture(scope="module")
def board():
    b = Wired()
    yield b
    b.ser.close()
    b.vb.stop()


def test_a_board_without_a_network_loads_nothing_of_it(board):
    assert board.req("info")["wifi"] == {"state": "off"}
    mods = board.modules()
    assert not set(NETWORK_MODULES) & set(mods)
    w = board.wifi()  # asking the state loads the command's module for the command only
    assert w["state"] == "off" and w["code"] is None and w["name"].startswith("hapenny-")
    assert not set(NETWORK_MODULES) & set(board.modules())
    assert board.req("stats")["stats"]["web"] is None  # no server: no socket was opened
    assert board.status_pixels() == [(0, 0, 0)] * 3


@pytest.mark.parametrize("bad, why", [
    ({"ssid": "home", "key": "short"}, "8 to 63"),
    ({"ssid": "", "key": PASSWORD}, "1 to 32"),
    ({"ssid": "x" * 33, "key": PASSWORD}, "1 to 32"),
    ({"ssid": "home", "key": PASSWORD, "name": "-bad"}, "name"),
    ({"ssid": "home", "key": PASSWORD, "pw": 1}, "ssid, key and name only"),
    ({"ssid": "home"}, "key"),
])
def test_bad_settings_are_refused_and_change_nothing(board, bad, why):
    rep = board.link.request("wifi", check=False, set=bad)
    assert rep["ok"] is False and rep["error"] == "bad_wifi" and why in rep["msg"], rep
    assert board.wifi()["state"] == "off" and "wifi.json" not in board.vb.names()


# ---- the pairing code on the strip, for a person at the board --------------------------------
BEDS, PS, STATUS = 9, 3, 3  # the virtual board's strip (hardware/profiles/generic-8x8.json)


def shown(frame):
    """What one frame written to the strip shows: "S" (the status pixels
    white: the code begins), a bed's number (both its squares white), "."
    (dark), or "other"."""
    px = [tuple(frame[i:i + 3]) for i in range(0, len(frame), 3)]
    lit = [i for i, p in enumerate(px) if any(p)]
    if not lit:
        return "."
    if not all(px[i][0] == px[i][1] == px[i][2] for i in lit):
        return "other"
    base = BEDS * 2 * PS
    if lit == list(range(base, base + STATUS)):
        return "S"
    for b in range(BEDS):
        if lit == list(range(b * 2 * PS, (b + 1) * 2 * PS)):
            return b + 1
    return "other"


def hold_next(board, ms):
    """Hold the next button `ms` (on the board's clock): what the strip
    showed from the code's start on, the dark gaps left out (a reading that
    does not depend on how often the loop drew), or [] if it never began."""
    board.vb.wait_buttons_up(WAIT)
    board.vb.frame_log.clear()
    board.vb.button("next", ms=ms)
    board.vb.wait_buttons_up(WAIT)
    seen = [shown(f) for f in list(board.vb.frame_log)]
    if "S" not in seen:
        return []
    out = []
    for x in seen[seen.index("S"):]:
        if x == "other":  # let go: the strip is back to the game or the network
            break
        if x != "." and (not out or out[-1] != x):
            out.append(x)
    return out


def test_holding_next_without_a_network_spells_nothing_and_says_why(board):
    assert board.wifi()["state"] == "off" and board.req("state")["state"] is None
    board.link.events.clear()
    assert hold_next(board, 1300) == []  # the long press comes at 1 s: the code would begin at once
    ev = board.link.wait_event("refused", WAIT, where=lambda e: e.get("error") == "no_network")
    assert ev["button"] == "next" and "hapenny wifi" in ev["msg"]


def test_set_by_the_cli_joins_and_shows_everywhere(board):
    board.vb.air(HOME)
    r = board.cli("wifi", "home", "--password-stdin", "--json", "--hostname", "Dartboard", stdin=PASSWORD + "\n")
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)
    assert (w["state"], w["address"], w["name"]) == ("joined", "127.0.0.1", "dartboard")
    assert len(w["code"]) == 10
    # the board's own page, the code in its fragment (the virtual board's server may sit on another port than 80)
    assert re.fullmatch(r"http://127\.0\.0\.1(:\d+)?/#code=%s" % w["code"], w["url"]), w["url"]
    info = board.req("info")["wifi"]
    assert info == {"state": "joined", "reason": None, "ssid": "home", "address": "127.0.0.1", "rssi": -57,
                    "name": "dartboard", "tries": 1}
    assert "code" not in info  # the pairing code is the wifi command's alone
    assert {"shove.wifi", "shove.httpd", "shove.webroutes"} <= set(board.modules())  # joined: the server is up
    p = board.status_pixels(lambda p: p[0][1] > p[0][2] > 0)  # no game: they show the network, green: joined
    assert p == [p[0]] * 3 and p[0][0] == 0 and p[0][1] > p[0][2] > 0
    lines = []
    rep = doctor.run(board.link, board.info, lambda q: True, lines.append, steps=("about",))
    board.said.append("\n".join(lines + [f.text + f.check for f in rep.findings]))
    assert any(f.ok and "joined home as dartboard.local at 127.0.0.1, signal -57 dBm" in f.text
               for f in rep.findings)
    r = board.cli("wifi")
    assert "joined home as dartboard.local at 127.0.0.1" in r.stdout and "pairing code: %s" % w["code"] in r.stdout
    # the page's addresses, at the board's address and its name, and the first one's QR code to scan:
    # the board's own server's, on the free port the simulator gave it
    assert w["web_port"] == board.vb.web_port and w["url"] == "http://127.0.0.1:%d/#code=%s" % (w["web_port"], w["code"])
    local = w["url"].replace("127.0.0.1", "dartboard.local")
    assert "  %s\n  %s\n" % (w["url"], local) in r.stdout
    assert qr_text(w["url"]) in r.stdout and qr_text(w["url"]).count("\n") > 10


def _no_game(b):
    b.req("end")


def _game_in_play(b):
    b.req("new", players=["Ann", "Bob"])


def _game_won(b):
    b.req("new", players=["Ann", "Bob"], rules={"beds": [20], "marks": 1})
    b.req("throw", seg="S20")
    assert b.req("state")["state"]["phase"] == "over"


# what is on, how long next is held (ms, the board's clock), whether the strip spells the code
SPELLS = [
    (_no_game, 4700, True),  # the long press at 1 s, the start 1.2 s, a gap 0.4 s, the first digit 1 s, a gap, the second
    (_game_in_play, 1300, False),  # its press was the player change: the hold is for that
    (_game_won, 3000, True),  # (the first digit only)
]


@pytest.mark.parametrize("setup, ms, spells", SPELLS, ids=["no game", "a game in play", "the game won"])
def test_holding_next_spells_the_pairing_code_on_the_beds(board, setup, ms, spells):
    w = board.wifi()
    assert w["state"] == "joined"
    setup(board)
    turn = (board.req("state")["state"] or {}).get("turn")
    seen = hold_next(board, ms)
    if not spells:
        assert seen == []
        assert board.req("state")["state"]["turn"] != turn  # the press passed the turn
        return
    digits = []
    for ch in w["code"]:
        if not digits or digits[-1] != int(ch):
            digits.append(int(ch))
    assert seen[:2] == ["S", digits[0]], seen
    assert seen[1:] == digits[:len(seen) - 1], (seen, w["code"])  # in order, as far as the hold went
    # let go: the strip shows what it showed (no game: the network's green on the status pixels)
    if setup is _no_game:
        p = board.status_pixels(lambda p: p[0][1] > p[0][0] == 0)
        assert p == [p[0]] * 3 and p[0][1] > p[0][0] == 0
    assert shown(board.vb.frame) == "other"
    board.req("end")  # as the tests after these find the board: no game


def test_the_board_joins_again_at_start(board):
    board.req("reset")
    board.ser.close()
    board.open()
    w = board.until("join after the reset", lambda w: w["state"] == "joined")
    assert w["name"] == "dartboard" and w["tries"] == 1


def test_a_drop_and_return_rejoins(board):
    board.vb.air({})
    w = board.until("the drop noticed", lambda w: w["state"] != "joined")
    assert w["address"] is None and w["reason"] in ("lost", "no_network")
    board.until("retries", lambda w: w["tries"] >= 2)
    board.vb.air(HOME)
    w = board.until("the rejoin", lambda w: w["state"] == "joined")
    assert w["address"] == "127.0.0.1"


def test_no_network_in_reach_keeps_trying(board):
    board.vb.air({})  # the router switched off
    w = board.until("no network", lambda w: w["reason"] == "no_network")
    assert w["state"] == "failed" and w["address"] is None
    tries = w["tries"]
    board.until("a retry", lambda w: w["tries"] > tries)
    assert board.wifi()["state"] == "failed"


def test_a_wrong_password_fails_and_retries_while_the_game_goes_on(board):
    board.vb.air(HOME)
    board.req("wifi", set={"ssid": "home", "key": "another-password"})  # mistyped: the network refuses it
    w = board.until("the refusal", lambda w: w["state"] == "failed")
    assert (w["reason"], w["address"], w["tries"]) == ("wrong_password", None, 1)
    r = board.cli("wifi")  # not on the network: no page to open yet, the code alone
    assert "pairing code: %s" % w["code"] in r.stdout and "http://" not in r.stdout
    p = board.status_pixels(lambda p: p[0][0] > 0)  # red, with no game
    assert p == [p[0]] * 3 and p[0][0] > 0 and p[0][1] == p[0][2] == 0
    board.req("new", players=["Ann", "Bob"])
    cells = {s: (r, c) for r, c, s in board.req("map")["cells"]}
    board.link.events.clear()
    for seg in ("T5", "D3", "S7"):
        board.vb.wait_rearmed(WAIT)  # the last dart's lockout over: the next closure is a new dart
        r, c = cells[seg]
        board.req("press", row=r, col=c, ms=30)
        ev = board.link.wait_event("dart", WAIT)
        assert ev["seg"] == seg
    board.until("a retry", lambda w: w["tries"] >= 2 and w["state"] == "failed")
    assert board.req("stats")["stats"]["darts"] == 3  # every dart scored while the network failed


def test_forget_leaves_and_clears(board):
    board.req("end")
    r = board.cli("wifi", "--forget", "--json")
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)
    assert (w["state"], w["ssid"], w["code"], w["url"]) == ("off", None, None, None)
    assert "wifi.json" not in board.vb.names()
    assert not set(NETWORK_MODULES) & set(board.modules())  # the server closed and let go with the join
    assert board.req("stats")["stats"]["web"] is None
    assert board.status_pixels(lambda p: p == [(0, 0, 0)] * 3) == [(0, 0, 0)] * 3
    assert board.req("info")["wifi"] == {"state": "off"}


def test_the_password_never_came_back(board):
    """After all of the above: every byte the board wrote to its port (replies, events,
    boot lines), the CLI's and the doctor's output. The flash holds it (wifi.json, now
    forgotten); nothing the board sent ever did."""
    seen = board.log.getvalue() + "".join(board.said).encode()
    assert b'"ev": "wifi"' in seen or b'"ev":"wifi"' in seen  # the log did catch the board's Wi-Fi lines
    assert b"dartboard.local" in seen  # and the tools' reports
    assert PASSWORD.encode() not in seen
    assert PASSWORD[:8].encode() not in seen  # not even a piece of it

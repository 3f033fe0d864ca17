"""The board's start-up as CPython can run it: the App made by its own
start-up code (shove/loading.py) on firmware/shove/boards/esp32.py against
the chip's models (tests/esp32_models.py), from files in a scratch
directory standing for the flash. What the files hold is what the board
uses: the profile it opens the board with and scans and lights by, the
configuration, the map a dart is read through, the game it goes on with;
and its replies reach the console it was given, paced to the UART."""
import json

import pytest

from esp32_models import Gpio, esp32
from shove import app as app_mod
from shove import journal, profile, rules, segments
from shove.pacing import UART_FIFO
from shove.scanner import LOCKOUT
from shove.settings import CONFIG_FILE, GAME_FILE, MAP_FILE, PROFILE_FILE


class Port:
    """The console's byte stream as MicroPython's has it: write(buf, off, n)."""

    def __init__(self):
        self.writes = []

    def write(self, buf, off=0, n=None):
        data = bytes(buf[off:off + (len(buf) - off if n is None else n)])
        self.writes.append(data)
        return len(data)

    def bytes(self):
        return b"".join(self.writes)


class Console:
    """A text stream with its byte stream under it (sys.stdout and .buffer)."""

    def __init__(self):
        self.buffer = Port()
        self.text = []

    def write(self, s):
        self.text.append(s)
        return len(s)


def _profile():
    d = profile.default_dict()
    d["name"] = "mine"
    d["brightness"] = 40
    d["leds"] = dict(d["leds"], per_side=2, status=3)
    d["timing"] = dict(d["timing"], window_us=2500, lockout_ms=70, rearm_ms=6, stuck_ms=2500)
    return d


@pytest.fixture
def flash(tmp_path, monkeypatch):
    """The flash: a profile of its own, a map that puts T5 where the
    profile has something else, a game with a dart thrown."""
    monkeypatch.chdir(tmp_path)
    d = _profile()
    (tmp_path / PROFILE_FILE).write_text(json.dumps(d))
    (tmp_path / MAP_FILE).write_text(json.dumps([[1, 2, "T5"]]))
    g = rules.new_game(["Ann", "Bob"])
    g.throw(segments.encode("T3"))
    (tmp_path / GAME_FILE).write_bytes(journal.encode(g))
    return tmp_path


def _start(monkeypatch, out, console=None, radio=None):
    """An App as main.py makes it (App(out=...)), its board opened by
    open_board with the profile read: the ESP32's, against the models.
    Returns (app, [profiles the board was opened with], machine clock)."""
    cm = esp32()
    mod, mach, ptrs = cm.__enter__()
    opened = []

    def open_board(prof):
        opened.append(prof)
        b = mod.Board(prof)
        ptrs.gpio = Gpio(mach.clock, prof.row_pins, prof.col_pins)
        if console is not None:
            b.console = console  # a board with a console stream of its own
        if radio is not None:
            b.radio = radio  # a board with Wi-Fi, or one without (as the virtual board may be)
        return b

    monkeypatch.setattr(app_mod, "open_board", open_board)
    try:
        a = app_mod.App(out=out)
    except BaseException:
        cm.__exit__(None, None, None)
        raise
    return a, opened, mach.clock, cm


class Lines:
    """What the console has sent, line by line, once the UART has sent it all."""

    def __init__(self, a, port, clock):
        self.a, self.port, self.clock = a, port, clock
        self.seen = 0  # bytes of the port's already read

    def sent(self):
        for _ in range(200):
            if not self.a.tx.q:
                break
            self.clock.advance_ms(5)  # the UART sends meanwhile: the queue goes on
            self.a.tx.drain()
        data = self.port.bytes()
        new, self.seen = data[self.seen:], len(data)
        return [json.loads(x) for x in new.decode().splitlines()]

    def ask(self, line):
        """Send a line as the console read it: the reply, and the events after it."""
        self.a.commands.handle_line(line)
        return self.sent()


def test_the_board_starts_from_what_its_flash_holds(flash, monkeypatch):
    out = Console()
    a, opened, clock, cm = _start(monkeypatch, out)
    try:
        d = _profile()
        # the board opened once, with the profile on flash, and kept as the App's board
        assert [p.name for p in opened] == ["mine"] and a.board is not None
        assert a.prof.name == "mine" and a.notices == []
        # the scanner times a dart by the profile's timing (ms in the file, us in the scanner)
        sc = a.scanner
        assert (sc.rows, sc.cols) == (len(d["matrix"]["rows"]), len(d["matrix"]["cols"]))
        assert (sc.window_us, sc.lockout_us, sc.rearm_us, sc.stuck_us) == (2500, 70000, 6000, 2500000)
        # the game on flash goes on: its state, as a client asks for it
        con = Lines(a, out.buffer, clock)
        (reply,) = con.ask(b'{"id":1,"cmd":"state"}')
        assert reply["id"] == 1 and reply["ok"] is True
        st = reply["state"]
        assert [s["marks"]["3"] for s in st["sides"]] == [3, 0] and st["moves"] == 1
        # ... through the byte stream, paced to the UART: a FIFO's load at a time
        assert out.text == [] and len(out.buffer.writes) > 1
        assert max(len(w) for w in out.buffer.writes) <= UART_FIFO
        # info: the board and its strip as the profile lays them out
        (reply,) = con.ask(b'{"id":2,"cmd":"info"}')
        assert reply["board"] == "mine" and reply["matrix"] == {"rows": sc.rows, "cols": sc.cols}
        assert reply["strip"] == {"beds": d["leds"]["beds"], "per_side": 2, "status": 3}
        # the configuration's brightness is -1 (none): the profile's is used
        assert a.renderer.brightness == 40
        # a dart on the matrix is read through the map on flash: T5 at (1, 2)
        a.keeper.hit(1, 2)
        (ev,) = con.sent()
        assert ev["ev"] == "dart" and ev["seg"] == "T5" and ev["marks"] == 3, ev
        (reply,) = con.ask(b'{"id":3,"cmd":"state"}')
        assert reply["state"]["sides"][0]["marks"]["5"] == 3 and reply["state"]["moves"] == 2
        # a client's dart: the reply, then its event for every client
        reply, ev = con.ask(b'{"id":5,"cmd":"throw","seg":"S5"}')
        assert reply["id"] == 5 and reply["state"]["moves"] == 3 and ev["ev"] == "dart" and ev["seg"] == "S5"
        (reply,) = con.ask(b'{"id":6,"cmd":"undo"}')[:1]
        assert reply["state"]["moves"] == 2
        # the strip is lit by the new state, on the board's own LEDs
        np = a.board._np
        sc.state = LOCKOUT  # (as in a dart's lockout: the frame goes at once)
        sc.t0 = clock.us()
        a.strip.step(clock.us() // 1000, a.keeper.game, False)
        assert len(np.wire[-1]) == 3 * a.board.strip_count and any(np.wire[-1])
        (reply,) = con.ask(b'{"id":4,"cmd":"leds"}')
        assert len(reply["pixels"]) == a.board.strip_count == 2 * d["leds"]["beds"] * 2 + 3
        # the dart went to flash: a start from it finds the game as it is now
        a.board._close_log()
        cm.__exit__(None, None, None)
        b, _, clock, cm = _start(monkeypatch, Console())
        assert bytes(b.keeper.game.marks) == bytes(a.keeper.game.marks) and b.keeper.game.moves() == 2
    finally:
        cm.__exit__(None, None, None)


class TextOnly:
    """A console with no byte stream under it (a StringIO, say)."""

    def __init__(self):
        self.writes = []

    def write(self, s):
        self.writes.append(s)
        return len(s)

    def bytes(self):
        return "".join(self.writes).encode()


# (the console given to the App, or none; the board's own console stream, or none;
# the damaged file; the configuration's brightness (None: the file is the damaged one))
ROUTES = [
    ("bytes", True, GAME_FILE, 0),  # a console given: its byte stream, whatever the board has
    ("text", False, PROFILE_FILE, 7),  # one with no byte stream: its text, each line whole
    (None, True, CONFIG_FILE, None),  # none given: the board's own console stream, where it has one ...
    (None, False, GAME_FILE, 255),  # ... else the byte stream under sys.stdout
]


@pytest.mark.parametrize("given,board_has,damaged,brightness", ROUTES)
def test_the_replies_go_to_the_console_the_board_starts_with(tmp_path, monkeypatch, given, board_has, damaged,
                                                            brightness):
    monkeypatch.chdir(tmp_path)
    if brightness is not None:
        (tmp_path / CONFIG_FILE).write_text(json.dumps({"brightness": brightness}))
    (tmp_path / damaged).write_bytes(b"HPJ2 not a journal" if damaged == GAME_FILE else b"{not json")
    out = Console() if given == "bytes" else TextOnly() if given == "text" else None
    own, stdout = Port(), Console()
    monkeypatch.setattr("sys.stdout", stdout)
    a, opened, clock, cm = _start(monkeypatch, out, own if board_has else None)
    try:
        # the built-in profile (none on flash, or a damaged one); the configuration's
        # brightness (0 too) over the profile's, which a damaged configuration leaves
        assert [p.name for p in opened] == ["generic-8x8"]
        assert a.renderer.brightness == (profile.default_dict()["brightness"] if brightness is None else brightness)
        # the damaged file is set aside, and said so in the notices sent after `boot`
        assert [n["file"] for n in a.notices] == [damaged] and a.keeper.game is None
        assert (tmp_path / (damaged + ".bad")).exists()
        port = out.buffer if given == "bytes" else out if given == "text" else own if board_has else stdout.buffer
        con = Lines(a, port, clock)
        (reply,) = con.ask(b'{"id":7,"cmd":"state"}')
        assert reply == {"id": 7, "ok": True, "state": None}
        for other in (own, stdout.buffer) + ((out.buffer,) if given == "bytes" else ()):
            assert other is port or other.writes == []
        assert stdout.text == [] and (given != "bytes" or out.text == [])
        if given == "text":  # nothing to pace the text to: each line whole
            assert out.writes == [w for w in out.writes if w.endswith("\n")] and len(out.writes) == 1
        # a brightness set by a client is lit at once and kept on flash
        (reply,) = con.ask(b'{"id":8,"cmd":"config","set":{"brightness":9}}')
        assert reply["ok"] is True and a.renderer.brightness == 9
        assert json.loads((tmp_path / CONFIG_FILE).read_text())["brightness"] == 9
    finally:
        cm.__exit__(None, None, None)


def test_a_file_the_flash_cannot_read_is_as_if_missing(tmp_path, monkeypatch):
    # a profile whose read fails (an I/O error, as a worn flash block gives:
    # here Linux's /proc/self/mem, which opens but refuses a read at 0) is
    # not damage: the built-in profile, no notice, nothing set aside. The
    # stored game is restored though its journal's directory cannot be
    # made now (a file stands where it would go): the next dart tries again.
    import os

    from shove import jstore

    monkeypatch.chdir(tmp_path)
    os.symlink("/proc/self/mem", str(tmp_path / PROFILE_FILE))
    g = rules.new_game(["Ann", "Bob"])
    g.throw(segments.encode("D4"))
    (tmp_path / GAME_FILE).write_bytes(journal.encode(g))
    (tmp_path / jstore.DIR).write_bytes(b"")
    a, opened, clock, cm = _start(monkeypatch, Console())
    try:
        assert [p.name for p in opened] == ["generic-8x8"] and a.notices == []
        # (the set-up access point a chip with no network set opens keeps its name and code,
        # pair.json, at its first step, not while the App is made)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([PROFILE_FILE, GAME_FILE, jstore.DIR])
        assert bytes(a.keeper.game.marks) == bytes(g.marks) and a.keeper.game.moves() == 1
    finally:
        cm.__exit__(None, None, None)


@pytest.mark.parametrize("radio, wifi, names", [(True, False, [True]), (True, True, [False]), (False, False, []),
                                                (False, True, [])])
def test_a_board_with_a_radio_interns_the_networks_names_first_and_the_set_up_aps_with_no_network_set(
        tmp_path, monkeypatch, radio, wifi, names):
    # (loading.names_first interns the names while the heap is whole: in MicroPython only; what
    # start-up decides is whether, and whether the set-up AP's too)
    from shove import loading

    monkeypatch.chdir(tmp_path)
    if wifi:
        (tmp_path / "wifi.json").write_text(json.dumps({"ssid": "home", "password": "secret-pass"}))
    asked = []
    monkeypatch.setattr(loading, "names_first", asked.append)
    a, _, _, cm = _start(monkeypatch, Console(), radio=radio)
    try:
        assert asked == names
    finally:
        cm.__exit__(None, None, None)


@pytest.mark.parametrize("ap, phase", [(True, "AP_PHASE"), (False, "NET_PHASE")])
def test_names_first_interns_the_set_up_aps_names_only_when_the_ap_opens(monkeypatch, ap, phase):
    # the AP's names (some 500 more) interned on a board that joins would be heap held for
    # nothing; the network's alone on a board that opens the AP would leave its pools to
    # grow later, in a heap the game has cut up
    import shove
    from shove import loading

    asked = []
    monkeypatch.setattr(loading, "intern_first", asked.append)
    loading.names_first(ap)
    assert asked == [getattr(shove, phase)]
    assert set(shove.NET_PHASE) < set(shove.AP_PHASE)

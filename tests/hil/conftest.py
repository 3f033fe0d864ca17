"""The `board` fixture: a real board with --port PATH (or $HAPENNY_PORT),
otherwise a virtual board started for the session. Tests that need the
simulator's electrical access call board.need_sim() and are skipped on
hardware; everything else runs on both."""
import os
import time

import pytest

from boardsite import connect_when_up
from hapenny.link import BoardError
from hapenny.sim.board import VirtualBoard

DEFAULT_CONFIG = {"learn": False, "auto_next_ms": 0, "brightness": -1, "variant": "classic",
                  "players": ["Home", "Away"]}


class Board:
    def __init__(self, port, sim=None):
        self.port = port
        self.sim = sim
        self.ser = None
        self.connect()

    def connect(self, timeout=15.0):
        if self.ser:
            self.ser.close()
        self.link, self.info, self.ser = connect_when_up(self.port, timeout)
        self.rows = self.info["matrix"]["rows"]
        self.cols = self.info["matrix"]["cols"]
        self.cells = {seg: (r, c) for r, c, seg in self.req("map")["cells"]}

    def close(self):
        if self.ser:
            self.ser.close()
            self.ser = None

    # ---- protocol helpers ----------------------------------------------------
    def req(self, cmd, **fields):
        return self.link.request(cmd, **fields)

    def err(self, cmd, **fields):
        """Send a command that must be refused; returns the error code."""
        rep = self.link.request(cmd, check=False, **fields)
        assert rep["ok"] is False, rep
        assert rep["msg"], rep
        return rep["error"]

    def state(self):
        return self.req("state")["state"]

    def new(self, players=("Ann", "Bob"), variant="classic", rules=None, teams=None):
        fields = {"variant": variant}
        if teams:
            fields["teams"] = teams
        else:
            fields["players"] = list(players)
        if rules:
            fields["rules"] = rules
        st = self.req("new", **fields)["state"]
        self.link.drain()
        self.link.events.clear()
        return st

    def wait(self, name, timeout=15.0, where=None):  # generous: a busy host slows the board
        return self.link.wait_event(name, timeout, where)

    def sync(self):
        """Every line the board sent before now is in: a request's reply
        comes after them on the serial line. (Waiting for the line to go
        quiet for a while instead misses an event a busy host passes on late.)"""
        self.req("config")

    def press_seg(self, seg, ms=30):
        """Close the crossing mapped to `seg` through the board's scanner;
        returns the resulting `dart` event."""
        r, c = self.cells[seg]
        self.req("press", row=r, col=c, ms=ms)
        return self.wait("dart")

    def settle(self, timeout=20.0):
        """Wait until the scanner is re-armed (its lockout runs on the board's
        clock, which a busy host can slow), so the next press is a new dart.
        On the virtual board, also until every closure scheduled has ended:
        the scanner says "idle" too before it has seen one just scheduled."""
        if self.sim is not None:
            self.sim.wait_rearmed(timeout)
            return
        end = time.monotonic() + timeout
        while self.req("stats")["stats"]["scanner"] != "idle":
            assert time.monotonic() < end, "the scanner never re-armed"
            time.sleep(0.01)

    def pixels(self):
        return [tuple(p) for p in self.req("leds")["pixels"]]

    # ---- reset -------------------------------------------------------------
    def reset(self):
        self.link.send_line(b'{"cmd":"reset","id":"rst"}\n')
        boot = self.wait("boot", timeout=20)
        return boot

    def need_sim(self):
        if self.sim is None:
            pytest.skip("needs the virtual board's electrical access")


@pytest.fixture(scope="session")
def hil_target(request):
    port = request.config.getoption("--port") or os.environ.get("HAPENNY_PORT")
    if port:
        b = Board(port)
        yield b
        b.close()
        return
    vb = VirtualBoard().start()
    b = Board(vb.port, vb)
    yield b
    b.close()
    vb.stop()


@pytest.fixture
def board(hil_target):
    """The session's board, with settings and map put back after each test."""
    b = hil_target
    cells = b.req("map")["cells"]
    b.link.events.clear()
    yield b
    try:
        b.link.drain()
        b.req("config", set=DEFAULT_CONFIG)
        if b.req("map")["cells"] != cells:
            b.link.set_map(cells)
            b.cells = {seg: (r, c) for r, c, seg in cells}
        b.link.events.clear()
    except (BoardError, Exception):
        b.connect()
        b.req("config", set=DEFAULT_CONFIG)
        b.link.set_map(cells)


@pytest.fixture
def fresh_sim(tmp_path):
    """A virtual board of its own on a fresh flash (for power and storage tests)."""
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    b = Board(vb.port, vb)
    yield b
    b.close()
    vb.stop()

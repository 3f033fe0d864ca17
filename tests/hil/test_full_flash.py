"""A full flash gets the documented refusal on every path that writes: a
request is answered `storage`, a button, a detected dart, auto next and the
computer's turn send a `refused` event with `error` "storage"; the game,
the settings and the map are as they were, and once the flash takes writes
again the same action works (nothing was lost). One row a path, on the
virtual board (its flash made full through the control channel). `end`
only deletes, which a full littlefs still does: it is not refused."""
import pytest

WAIT_S = 1.5  # auto next and the computer's pace in the rows that wait for them


@pytest.fixture
def fb(board):
    board.need_sim()
    yield board
    board.sim.flash_full(False)
    board.req("end")  # a computer side would play on
    board.req("config", set={"cpu_ms": 1500})
    board.link.drain()


def _refusal(b, where):
    """The `refused` event for `where` (its fields), with the storage error."""
    ev = b.wait("refused", timeout=15, where=lambda e: all(e.get(k) == v for k, v in where.items()))
    assert ev["error"] == "storage" and "nothing changed" in ev["msg"], ev
    return ev


def _request(cmd, **fields):
    def act(b):
        assert b.err(cmd, **fields) == "storage"

    def again(b):
        assert b.req(cmd, **fields)["ok"]
    return act, again


def _button(name, ms, event, check=None):
    def act(b):
        b.sim.button(name, ms=ms)
        _refusal(b, {"button": name})

    def again(b):
        b.sim.wait_buttons_up()  # the refused press let go (`next` and a long press are refused while held)
        b.sim.button(name, ms=ms)
        ev = b.wait(event, timeout=15)
        if check:
            check(b, ev)
    return act, again


def _dart(b):
    r, c = b.cells["S2"]
    b.sim.close(r, c, ms=20)
    _refusal(b, {"seg": "S2"})


def _dart_again(b):
    b.settle()
    assert b.press_seg("S2")["seg"] == "S2"


def _next_variant(b, ev):
    assert b.req("config")["config"]["variant"] == ev["state"]["variant"] != "classic"


def _auto_next_setup(b):
    b.req("config", set={"auto_next_ms": int(WAIT_S * 1000)})
    b.new()
    for _ in range(3):
        b.req("throw", seg="MISS")  # the visit's last dart: auto next is due WAIT_S later


def _cpu_setup(b, darts):
    """A computer side to throw, `darts` of its visit thrown by the host:
    its next dart, or (3) its player change, is due WAIT_S later."""
    b.req("config", set={"cpu_ms": int(WAIT_S * 1000)})
    b.req("new", players=["cpu:3", "Ann"], seed=77)
    for _ in range(darts):
        b.req("throw", seg="MISS")
    b.link.drain()
    b.link.events.clear()


ROWS = {
    "throw": _request("throw", seg="S1"),
    "next": _request("next"),
    "undo": _request("undo"),
    "new": _request("new", players=["X", "Y"]),
    "config": _request("config", set={"auto_next_ms": 500}),
    "map": _request("map", set=[[0, 0, "S20"]]),
    "dart on the matrix": (_dart, _dart_again),
    "next button": _button("next", 80, "visit"),
    "undo button": _button("undo", 80, "undo"),
    "new button": _button("new", 80, "new"),
    "new button held (the next variant)": _button("new", 1300, "new", lambda b, ev: _next_variant(b, ev)),
    "auto next": (lambda b: _refusal(b, {"src": "auto_next"}), lambda b: b.wait("visit", timeout=15)),
    "the computer's dart": (lambda b: _refusal(b, {"src": "cpu"}),
                            lambda b: b.wait("dart", timeout=15, where=lambda e: e["src"] == "cpu")),
    "the computer's player change": (lambda b: _refusal(b, {"src": "cpu"}),
                                     lambda b: b.wait("visit", timeout=15)),
}
SETUP = {
    "auto next": _auto_next_setup,
    "the computer's dart": lambda b: _cpu_setup(b, 0),
    "the computer's player change": lambda b: _cpu_setup(b, 3),
}


def _default_setup(b):
    b.req("config", set={"variant": "classic"})
    b.new()
    b.req("throw", seg="T5")  # something to undo
    b.link.drain()
    b.link.events.clear()


@pytest.mark.parametrize("path", list(ROWS))
def test_a_full_flash_refuses_every_write_and_changes_nothing(fb, path):
    b = fb
    act, again = ROWS[path]
    SETUP.get(path, _default_setup)(b)
    b.sim.flash_full()  # for the waiting rows: well inside the WAIT_S before they act
    st = b.state()
    cfg = b.req("config")["config"]
    cells = b.req("map")["cells"]
    act(b)
    assert b.state() == st, path
    assert b.req("config")["config"] == cfg, path
    assert b.req("map")["cells"] == cells, path
    b.sim.flash_full(False)
    again(b)  # the same action, the flash taking writes again: nothing was lost
    if path not in ("new", "map", "config", "new button", "new button held (the next variant)"):
        assert b.state()["moves"] != st["moves"], path

"""Whole games through the board's matrix input (`press`: scanner, map and
referee), with the LED frame checked after every dart."""
import time

import pytest
from hapenny import gamestate

VARIANTS = ["classic", "no-gift", "extended", "pub", "progressive", "piecepack"]


def lit_counts(pixels, layout):
    """Lit pixels in each chalk square: [(left, right)] per bed on the strip."""
    per = layout["per_side"]
    out = []
    for b in range(layout["beds"]):
        sq = []
        for slot in (0, 1):
            base = (b * 2 + slot) * per
            sq.append(sum(1 for p in pixels[base:base + per] if max(p) >= 10))
        out.append(tuple(sq))
    return out


def expected_counts(state, layout):
    full = state["rules"]["marks"]
    per = layout["per_side"]
    out = []
    for bed in state["rules"]["beds"][:layout["beds"]]:
        m = [s["marks"][str(bed)] for s in state["sides"]]
        out.append(tuple((x * per + full - 1) // full for x in m))
    return out + [(0, 0)] * (layout["beds"] - len(out))


def frame_shows(board, state, timeout=15.0):  # a bound on waiting: it returns once the frame shows
    layout = board.info["strip"]
    want = expected_counts(state, layout)
    end = time.monotonic() + timeout
    while True:
        got = lit_counts(board.pixels(), layout)
        if got == want or time.monotonic() > end:
            return got, want
        time.sleep(0.03)


def target(state):
    """The thrower's first open bed, as a treble."""
    me = state["sides"][state["turn"]]
    for bed in state["rules"]["beds"]:
        if me["marks"][str(bed)] < state["rules"]["marks"]:
            return "T%d" % bed
    raise AssertionError("no open bed but no winner")


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_played_to_a_win_through_the_matrix(board, variant):
    st = board.new(["Ann", "Bob"], variant=variant)
    darts = 0
    while st["phase"] != "over":
        if st["phase"] == "hold":
            st = board.req("next")["state"]
            continue
        seg = target(st)
        ev = board.press_seg(seg, ms=20)
        darts += 1
        assert ev["seg"] == seg and ev["src"] == "matrix"
        assert (ev["row"], ev["col"]) == board.cells[seg]
        st = gamestate.apply(st, ev)  # the compact event keeps a client's copy exact
        assert board.state() == st
        if st["phase"] != "over":
            got, want = frame_shows(board, st)
            assert got == want, "LED frame after dart %d" % darts
        board.settle()
        assert darts < 200
    win = board.wait("win")
    assert win["winner"] == st["winner"]
    assert all(m == st["rules"]["marks"] for m in st["sides"][st["winner"]]["marks"].values())


def test_status_pixels_show_darts_left_and_hold(board):
    board.new()
    status = board.info["strip"]["status"]

    def status_lit():
        px = board.pixels()[-status:]
        return [max(p) >= 10 for p in px]

    board.req("throw", seg="S1")
    end = time.monotonic() + 1
    while status_lit() != [True, True, False] and time.monotonic() < end:
        time.sleep(0.03)
    assert status_lit() == [True, True, False]
    board.req("throw", seg="S1")
    board.req("throw", seg="S1")
    end = time.monotonic() + 1
    while len(set(board.pixels()[-status:])) != 1 and time.monotonic() < end:
        time.sleep(0.03)
    px = board.pixels()[-status:]
    assert len(set(px)) == 1 and px[0][0] == px[0][1] == px[0][2] > 0  # all dim white: pull the darts


def test_bounce_out_is_undone_and_scored_as_miss(board):
    board.new()
    board.press_seg("T3")
    board.settle()
    st = board.req("undo")["state"]  # the dart fell out
    assert st["sides"][0]["marks"]["3"] == 0 and st["darts_left"] == 3
    st = board.req("throw", seg="MISS")["state"]
    assert st["darts_left"] == 2

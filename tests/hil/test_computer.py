"""The board as a player and as a coach: a computer side plays whole games
through the protocol and against a person using the buttons and the matrix
(LED frame checked after its darts), undo walks back through its darts, a
power cut in the middle of its visit loses nothing, and `hint` answers."""
import time

import pytest

from hapenny import gamestate
from shove import cpu, leds, rules, segments, throwing

SEED = 4242


@pytest.fixture
def cboard(board):
    """The shared board, left without a game (a computer side would keep playing)."""
    yield board
    board.req("end")
    board.req("config", set={"cpu_ms": 1500, "brightness": -1})
    board.link.drain()
    board.link.events.clear()


def events_until(b, stop, timeout=30.0):
    """Every event, in order, up to and including the first for which stop(ev)."""
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        while b.link.events:
            ev = b.link.events.popleft()
            got.append(ev)
            if stop(ev):
                return got
        b.link._pump(0.05)
    raise AssertionError("timed out; events so far: %s" % [e.get("ev") for e in got][-20:])


def predicted_dart(g):
    """The dart the board throws for the computer side to throw in `g`."""
    p = cpu.player(g.cpu[g.turn])
    rng = throwing.Rng(g.seed + 7919 * g.moves())
    return throwing.throw(throwing.face(throwing.DEFAULT_FACE), p.sigma, p.choose(g), rng)


def replay(st_setup, events):
    """The game the events describe, rebuilt with the firmware's referee."""
    g = rules.new_game(None, [s["members"] for s in st_setup["sides"]], st_setup["variant"], None,
                       st_setup.get("cpu"), SEED)
    for ev in events:
        if ev["ev"] == "dart":
            g.throw(segments.encode(ev["seg"]))
        elif ev["ev"] == "visit":
            g.next()
    return g


def test_the_board_plays_a_whole_game_by_itself_through_the_protocol(cboard):
    b = cboard
    b.req("config", set={"cpu_ms": 10})
    st = b.req("new", players=["cpu:6", "cpu:4"], seed=SEED)["state"]
    assert st["cpu"] == [6, 4] and [s["name"] for s in st["sides"]] == ["CPU 6", "CPU 4"]
    evs = events_until(b, lambda e: e["ev"] == "win", timeout=60)
    darts = [e for e in evs if e["ev"] == "dart"]
    assert darts and all(e["src"] == "cpu" for e in darts)
    assert any(e["ev"] == "visit" for e in evs)  # the player changes happened on their own
    # every dart is the one the throw model draws for that position
    g = rules.new_game(["A", "B"], cpu=[6, 4], seed=SEED)
    for e in evs:
        if e["ev"] == "dart":
            assert e["seg"] == segments.name(predicted_dart(g)), e
            g.throw(segments.encode(e["seg"]))
        elif e["ev"] == "visit":
            g.next()
    final = b.state()
    assert final["phase"] == "over" and final["winner"] == g.winner
    assert final["sides"][0]["marks"] == g.to_state()["sides"][0]["marks"]
    assert final["moves"] == g.moves()


def test_a_person_against_the_board_with_buttons_and_matrix_and_the_leds_follow(cboard):
    b = cboard
    b.need_sim()
    info = b.req("info")
    strip = info["strip"]
    b.req("config", set={"players": ["Solo", "cpu:5"], "cpu_ms": 1000, "brightness": 64})
    b.sim.button("new", ms=80)
    st = b.wait("new")["state"]
    assert st["cpu"] == [0, 5] and st["sides"][1]["name"] == "CPU 5"
    b.link.events.clear()
    g = rules.new_game(["Solo", "CPU 5"], cpu=[0, 5], seed=0)
    renderer = leds.Renderer(strip["beds"], strip["per_side"], strip["status"], 64)
    checked = 0
    for _ in range(40):  # visits
        if st["phase"] == "over":
            break
        if st["turn"] == 0:
            while st["phase"] == "play":  # Solo throws through the matrix: treble of the lowest open bed
                bed = next(x for x in st["rules"]["beds"] if st["sides"][0]["marks"][str(x)] < 3)
                ev = b.press_seg("T%d" % bed)
                assert ev["src"] == "matrix"
                g.throw(segments.encode(ev["seg"]))
                st = gamestate.apply(st, ev)
                b.settle()
            if st["phase"] == "over":
                break
            b.sim.button("next", ms=80)
            ev = b.wait("visit")
            g.next()
            st = ev["state"]
            continue
        # the board's visit: darts one by one, then its own player change
        evs = events_until(b, lambda e: e["ev"] in ("visit", "win") or (e["ev"] == "dart" and checked < 3), 30)
        for ev in evs:
            if ev["ev"] == "dart":
                assert ev["src"] == "cpu" and ev["side"] == 1
                g.throw(segments.encode(ev["seg"]))
                st = gamestate.apply(st, ev)
                if checked < 3 and not ev["gifts"]:
                    want = [tuple(renderer.render(g, 10 ** 6)[i:i + 3]) for i in range(0, 3 * renderer.count, 3)]
                    end = time.monotonic() + 0.9  # before its next dart, 1 s on (a busy host slows the frame)
                    while b.pixels() != want and time.monotonic() < end:
                        time.sleep(0.02)
                    assert b.pixels() == want, "LED frame after the board's dart %s" % ev["seg"]
                    checked += 1
                    if checked == 3:
                        b.req("config", set={"cpu_ms": 10})
            elif ev["ev"] == "visit":
                g.next()
                st = ev["state"]
            elif ev["ev"] == "win":
                st = ev["state"]
    assert st["phase"] == "over" and checked == 3
    assert b.state()["sides"] == g.to_state()["sides"]


def test_undo_walks_back_through_the_boards_darts(cboard):
    b = cboard
    b.req("config", set={"cpu_ms": 300})
    b.req("new", players=["Ann", "cpu:3"], seed=SEED)
    for seg in ("S1", "S2", "S3"):
        b.req("throw", seg=seg)
    before = b.req("next")["state"]
    b.link.events.clear()
    first = b.wait("dart", timeout=15)
    second = b.wait("dart", timeout=15)
    assert first["src"] == second["src"] == "cpu"
    b.req("undo")
    st = b.req("undo")["state"]
    assert st == dict(before, ignored=st["ignored"])
    # the board waits a while after an undo, then throws the same darts again
    again = b.wait("dart", timeout=15)
    assert again["seg"] == first["seg"] and again["moves"] == first["moves"]
    # undo the board's player change after its visit: it waits before making it again
    events_until(b, lambda e: e["ev"] == "visit" and e["turn"] == 0, timeout=10)
    t0 = time.monotonic()
    st = b.req("undo")["state"]
    assert st["turn"] == 1 and st["phase"] == "hold"
    b.wait("visit", timeout=15, where=lambda e: e["turn"] == 0)
    assert time.monotonic() - t0 >= 0.8  # three paces of 300 ms
    # walked back into Ann's visit, the board waits for her
    for _ in range(6):
        st = b.req("undo")["state"]
        if st["turn"] == 0 and st["phase"] == "play":
            break
    assert st["turn"] == 0 and st["phase"] == "play"
    b.link.events.clear()
    time.sleep(1.5)
    b.link._pump(0.05)
    assert not [e for e in b.link.events if e["ev"] == "dart"]


def test_a_power_cut_in_the_boards_visit_loses_nothing_and_it_goes_on(fresh_sim):
    b = fresh_sim
    b.req("config", set={"cpu_ms": 400})
    b.req("new", players=["Ann", "cpu:5"], seed=SEED)
    for seg in ("T1", "MISS", "S9"):
        b.req("throw", seg=seg)
    b.req("next")
    b.link.events.clear()
    acked = b.wait("dart", timeout=15)
    assert acked["src"] == "cpu"
    b.sim.power_cut()
    boot = b.wait("boot", timeout=20)
    assert boot["restored"] is True
    b.connect()
    st = b.state()
    assert st["moves"] >= acked["moves"] and st["cpu"] == [0, 5]
    # the visit goes on from where it was, with the darts the seed gives
    g = rules.new_game(["Ann", "CPU 5"], cpu=[0, 5], seed=SEED)
    for seg in ("T1", "MISS", "S9"):
        g.throw(segments.encode(seg))
    g.next()
    while g.moves() < st["moves"]:
        g.throw(predicted_dart(g))
    assert g.to_state()["sides"] == st["sides"]
    b.link.events.clear()
    evs = events_until(b, lambda e: e["ev"] == "visit", timeout=10)
    for e in evs:
        if e["ev"] == "dart":
            assert e["seg"] == segments.name(predicted_dart(g))
            g.throw(segments.encode(e["seg"]))
    assert evs[-1]["turn"] == 0 and evs[-1]["state"]["sides"] == dict(g.to_state())["sides"]


def test_hint_names_a_target_and_a_reason_and_blinks_it(cboard):
    b = cboard
    b.req("config", set={"brightness": 64})
    b.new(["Ann", "Bob"], rules={"beds": [4, 8]})
    for seg in ("D4", "MISS", "MISS"):
        b.req("throw", seg=seg)
    b.req("next")
    for seg in ("D4", "S8", "S8"):  # Bob: 2 on 4, 2 on 8
        b.req("throw", seg=seg)
    b.req("next")
    h = b.req("hint")["hint"]  # Ann needs one on 4, Bob too: a treble would close Bob's 4
    assert h["side"] == 0 and h["level"] == 3 and h["seg"] != "T4"
    assert h["reason"].startswith(h["seg"])
    assert b.err("hint", level=9) == "bad_level"
    b.req("throw", seg="MISS")
    b.req("throw", seg="MISS")
    b.req("throw", seg="MISS")
    assert b.err("hint") == "visit_over"


def test_hint_by_holding_undo_blinks_the_bed_on_the_strip(cboard):
    b = cboard
    b.need_sim()
    b.req("config", set={"brightness": 64})
    b.new(["Ann", "Bob"])
    b.link.events.clear()
    b.sim.button("undo", ms=1300)
    ev = b.wait("hint", timeout=15)
    h = ev["hint"]
    bed = int(h["seg"].lstrip("SDTI"))
    g = rules.new_game(["Ann", "Bob"])
    r = leds.Renderer(**{k: b.req("info")["strip"][k] for k in ("beds", "per_side", "status")}, brightness=64)
    plain = [tuple(r.render(g, 0)[i:i + 3]) for i in range(0, 3 * r.count, 3)]
    lit = r.per_side * (2 * g.rules.beds.index(bed))  # Ann's square of that bed
    seen = set()
    end = time.monotonic() + 10  # until it has blinked (a busy host slows the board)
    while not (plain[lit] in seen and len(seen) >= 2) and time.monotonic() < end:
        seen.add(b.pixels()[lit])
        time.sleep(0.05)
    assert plain[lit] in seen and len(seen) >= 2, seen  # it blinks
    assert b.state()["moves"] == 0  # holding undo did not undo


def test_cli_new_with_a_computer_side_hint_and_play(cboard):
    import subprocess
    import sys
    from pathlib import Path

    from screen import Terminal

    hapenny = str(Path(sys.executable).parent / "hapenny")
    b = cboard
    b.req("config", set={"cpu_ms": 10000})  # slow: the board's visit must not start during the test
    b.close()
    try:
        r = subprocess.run([hapenny, "new", "Alice", "cpu:3", "--json", "--port", b.port],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert '"cpu": [0, 3]' in r.stdout and "CPU 3" in r.stdout
        r = subprocess.run([hapenny, "hint", "--port", b.port], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip().startswith(("T", "S", "D")) and ":" in r.stdout, r.stdout
        with Terminal([hapenny, "play", "--port", b.port]) as t:
            t.read(lambda s: "To throw: " in s and "Alice" in s)
            t.write(b"h")
            t.read(lambda s: "Hint: T1: you need three marks on 1" in s)
            assert t.quit() == 0
    finally:
        b.connect()


def test_the_board_throws_its_bull_off_dart_and_a_team_side(cboard):
    b = cboard
    b.req("config", set={"cpu_ms": 10})
    st = b.req("new", teams=[["Ann", "Al"], ["Bots"]], cpu=[0, 6], seed=7, variant="piecepack",
               rules={"bull_off": True})["state"]
    assert st["phase"] == "bull_off" and st["cpu"] == [0, 6]
    b.req("throw", seg="MISS")  # Ann's bull-off dart; the board throws the other
    ev = b.wait("dart", where=lambda e: e["src"] == "cpu")
    assert ev["seg"] in ("DB", "SB", "MISS") or ev["seg"].startswith(("S", "D", "T"))
    assert b.err("new", players=["A", "B"], cpu=[0, 7]) == "bad_rules"
    assert b.err("new", players=["A", "B"], cpu=[0]) == "bad_rules"
    assert b.err("new", players=["A", "B"], cpu=[0, 3], seed=-1) == "bad_rules"

"""Soak: closures through the virtual board's matrix, as fast as the
scanner's lockout allows, with buttons and host commands (state, leds,
config) mixed in between visits. Every closure must come back as exactly one
event (a dart, or an ignored hit after a win) on the right crossing, and the
heap must stay flat. `make test` runs 100 closures; `make soak`
(HAPENNY_SOAK=1) 10,000; SOAK_DARTS sets any count."""
import os
import random
import time

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard
from hapenny.sim.pulses import match, percentile
from mphelp import figure

DARTS = int(os.environ.get("SOAK_DARTS") or (10000 if os.environ.get("HAPENNY_SOAK") else 100))
SPACING_US = 75000  # lockout 60 ms + re-arm 5 ms + a 3 ms contact, and a margin
PULSE_US = 3000
KINDS = ("dart", "ignored")


def test_match_counts_misses_doubles_and_order():
    p = [(1, 1, "S1"), (2, 2, "S2"), (1, 1, "S1")]
    ev = lambda r, c: {"row": r, "col": c}  # noqa: E731
    assert match(p, [ev(1, 1), ev(2, 2), ev(1, 1)])[1:] == (0, [])
    assert match(p, [ev(1, 1), ev(1, 1)])[1] == 1  # the middle one missed
    assert match(p, [ev(1, 1), ev(2, 2), ev(2, 2), ev(1, 1)])[1:] == (0, [ev(2, 2)])  # a double
    assert match(p, [ev(3, 3)])[1:] == (3, [ev(3, 3)])


def test_percentile_interpolates():
    xs = list(range(1, 201))  # 1..200
    assert percentile(xs, 50) == 100.5 and percentile(xs, 99) == 198.01 and percentile(xs, 100) == 200


def drain_events(link, seconds):
    got = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        link._pump(0.02)
    while link.events:
        ev = link.events.popleft()
        if ev["ev"] in KINDS:
            got.append(ev)
    return got


def test_soak():
    rnd = random.Random(10000)
    vb = VirtualBoard().start()
    try:
        link, info, ser = connect(vb.port)
        cells = link.request("map")["cells"]
        link.request("new", players=["Ann", "Bob"], rules={"darts": 9})
        sent = darts = ignored = missed = doubled = wrong = late = games = visits = configs = 0
        mem = []
        started = time.monotonic()
        while sent < DARTS:
            st = link.request("state")["state"]
            n = min(st["darts_left"], DARTS - sent)
            pick = [tuple(rnd.choice(cells)) for _ in range(n)]
            vb.wait_rearmed()
            late += len(drain_events(link, 0))  # anything still arriving from before this visit
            vb.pulses([(r, c, i * SPACING_US, PULSE_US) for i, (r, c, _) in enumerate(pick)])
            sent += n
            got = []
            end = time.monotonic() + n * SPACING_US / 1e6 + 5
            while len(got) < n and time.monotonic() < end:
                got += drain_events(link, 0.05)
            vb.wait_rearmed()  # the scanner is idle: every closure has been decided
            got += drain_events(link, 0.05)
            pairs, miss, extra = match(pick, got)
            missed += miss
            doubled += len(extra)
            wrong += sum(1 for (_, _, seg), ev in pairs if ev["seg"] != seg)
            darts += sum(1 for _, ev in pairs if ev["ev"] == "dart")
            ignored += sum(1 for _, ev in pairs if ev["ev"] == "ignored")
            st = link.request("state")["state"]
            visits += 1
            if st["phase"] == "over":  # a new game: the button, or the host
                games += 1
                if games % 2:
                    vb.button("new", ms=80)  # the configured players, classic, 3 darts a visit
                    link.wait_event("new", timeout=5)
                else:
                    link.request("new", players=["Ann", "Bob"], rules={"darts": 9})
                mem.append(link.request("stats")["stats"]["mem_alloc"])
            elif visits % 2:
                vb.button("next", ms=80)
                link.wait_event("visit", timeout=5)
            else:
                link.request("next")
            link.request("leds")
            if visits % 5 == 0:  # a setting changed between visits, stored on flash
                link.request("config", set={"brightness": rnd.choice([-1, 40, 200])})
                configs += 1
        late += len(drain_events(link, 0.3))
        elapsed = time.monotonic() - started
        stats = link.request("stats")["stats"]
        link.request("config", set={"brightness": -1})
        ser.close()
    finally:
        vb.stop()
    growth = (max(mem) - min(mem)) if mem else 0
    figure("soak", closures=sent, darts=darts, ignored_after_win=ignored, missed=missed, doubled=doubled,
           late_events=late, wrong_segment=wrong, games=games, visits=visits, config_writes=configs,
           heap_spread_bytes=growth, firmware_errors=stats["errors"], minutes=round(elapsed / 60, 1))
    assert missed == 0 and doubled == 0 and wrong == 0 and late == 0
    assert darts + ignored == sent
    assert stats["errors"] == 0
    assert growth < 8192, mem

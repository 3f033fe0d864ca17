"""Soak: 10,000 darts through the virtual board's matrix, as fast as the
scanner's lockout allows, with buttons and host commands mixed in. Every
closure must come back as exactly one event (a dart, or an ignored hit after
a win) with the right segment, and the heap must stay flat.
Run with `make soak` (HAPENNY_SOAK=1; SOAK_DARTS to change the count)."""
import os
import random
import time

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard
from mphelp import figure

DARTS = int(os.environ.get("SOAK_DARTS", "10000"))
SPACING_US = 75000  # lockout 60 ms + re-arm 5 ms + a 3 ms contact, and a margin
PULSE_US = 3000


def test_soak_ten_thousand_darts():
    rnd = random.Random(10000)
    vb = VirtualBoard().start()
    try:
        link, info, ser = connect(vb.port)
        cells = link.request("map")["cells"]
        link.request("new", players=["Ann", "Bob"], rules={"darts": 9})
        sent = darts = ignored = missed = doubled = wrong = games = visits = 0
        mem = []
        started = time.monotonic()
        while sent < DARTS:
            st = link.request("state")["state"]
            n = min(st["darts_left"], DARTS - sent)
            pick = [rnd.choice(cells) for _ in range(n)]
            vb.wait_rearmed()
            vb.pulses([(r, c, i * SPACING_US, PULSE_US) for i, (r, c, _) in enumerate(pick)])
            sent += n
            got = []
            end = time.monotonic() + n * SPACING_US / 1e6 + 5
            while len(got) < n and time.monotonic() < end:
                link._pump(0.05)
                while link.events:
                    ev = link.events.popleft()
                    if ev["ev"] in ("dart", "ignored"):
                        got.append(ev)
            time.sleep(0.15)  # anything doubled would show now
            link._pump(0.05)
            extra = [e for e in link.events if e["ev"] in ("dart", "ignored")]
            link.events.clear()
            doubled += len(extra)
            missed += n - len(got)
            wrong += sum(1 for ev, (_, _, seg) in zip(got, pick) if ev["seg"] != seg)
            darts += sum(1 for ev in got if ev["ev"] == "dart")
            ignored += sum(1 for ev in got if ev["ev"] == "ignored")
            st = link.request("state")["state"]
            visits += 1
            if st["phase"] == "over":  # a new game: the button, or the host
                games += 1
                if games % 2:
                    vb.button("new", ms=80)  # the configured players, classic, 3 darts a visit
                    link.wait_event("new", timeout=5)
                else:
                    link.request("new", players=["Ann", "Bob"], rules={"darts": 9})
                link.drain()
                link.events.clear()
                mem.append(link.request("stats")["stats"]["mem_alloc"])
            elif visits % 2:
                vb.button("next", ms=80)
                link.wait_event("visit", timeout=5)
            else:
                link.request("next")
            link.request("leds")
            link.events.clear()
        elapsed = time.monotonic() - started
        stats = link.request("stats")["stats"]
        ser.close()
    finally:
        vb.stop()
    growth = (max(mem) - min(mem)) if mem else 0
    figure("soak", closures=sent, darts=darts, ignored_after_win=ignored, missed=missed, doubled=doubled,
           wrong_segment=wrong, games=games, visits=visits, heap_spread_bytes=growth,
           firmware_errors=stats["errors"], minutes=round(elapsed / 60, 1))
    assert missed == 0 and doubled == 0 and wrong == 0
    assert darts + ignored == sent
    assert stats["errors"] == 0
    assert growth < 8192, mem

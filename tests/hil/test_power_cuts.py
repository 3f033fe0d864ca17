"""Power cuts at random moments and at each stage of a flash write: every
acknowledged change survives, no file is damaged, no firmware file is torn.
(Its own file, so that the test runner can run it beside the other
reliability tests.)"""
import io
import json
import os
import random
import threading
import time

from mphelp import figure
from hapenny import gamestate

# `make soak` (HAPENNY_SOAK=1) runs the full count; `make test` a short run
SOAK = bool(os.environ.get("HAPENNY_SOAK"))
COUNT = " (full count)" if SOAK else ""  # the figures' names, so both are kept

# make test: 24 cuts through the whole board (each a boot from the littlefs
# image); tests/test_flash_journal.py adds cuts inside littlefs's own
# operations, which cost a fraction of a second each
POWER_CUTS = 1000 if SOAK else 24
DEPLOY_EVERY = 10 if SOAK else 12  # every so many cuts, one lands in a deploy
BAD_EVERY = 10  # every so many cuts (and after the last), a look for files set aside as damaged
HELD = 0.25  # the share of cuts that stop the board inside the flash write the change causes
# the stage of the write to stop at, by the change: appended records, or files replaced
STAGES = {"dart": ["append"], "throw": ["append"], "next": ["append"], "undo": ["append", "tmp", "rename"],
          "config": ["tmp", "rename", "written"], "map": ["tmp", "rename", "written"]}
# The first cuts of every run: (change, stage held or None, delay before the
# cut or None), so that each stage of a write and a map cut before it is
# stored happen in every run, however few the random cuts after them. The
# throw gives the undo something to write.
FIRST_CUTS = [("throw", None, 0.3), ("undo", "append", None), ("config", "tmp", None), ("config", "rename", None),
              ("map", "written", None), ("map", None, 0.0), ("dart", "append", None)]
FIRMWARE_FILES = (".mpy", ".py", "profile.json")


def _firmware(sim):
    return {p: d for p, d in sim.files().items() if p.endswith(FIRMWARE_FILES)}


def _diff(want, got):
    return {k: (want.get(k), got.get(k)) for k in set(want) | set(got) if want.get(k) != got.get(k)}


def _deploy_cut(b, rnd):
    """Cut the power at a random moment of a whole deploy (every file
    copied again, as after an update). Returns (files torn, leftovers)."""
    from hapenny import deploy

    before = _firmware(b.sim)
    b.close()  # the deploy needs the port to itself
    done = threading.Event()

    def run():
        try:
            deploy.deploy(b.port, out=io.StringIO(), force=True)
        except Exception:
            pass  # the power went: the deploy fails, as it would
        done.set()

    threading.Thread(target=run, daemon=True).start()
    time.sleep(rnd.uniform(0.05, 1.5))  # a full deploy to the virtual board takes about a second
    b.sim.power_cut()
    assert done.wait(30), "the deploy never noticed the board had gone"
    after = _firmware(b.sim)
    # every firmware file is whole: old or new, which are the same build here
    torn = sorted(name for name, data in after.items() if name in before and data != before[name])
    parts = sorted(p.rsplit("/", 1)[-1] for p in b.sim.names() if p.endswith(".part"))
    return torn, parts


def _quiet(link, gap=0.3, limit=10.0):
    """Read until the port has been quiet for `gap` s: events after `boot`
    (a `storage` report of a damaged file) must be seen, not dropped."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        seen = len(link.events) + len(link.noise)
        if not link._pump(gap) and len(link.events) + len(link.noise) == seen:
            return


def _acknowledge(history, state):
    """Record an acknowledged game state; True if the game changed. The
    history is a stack of the states an undo can go back to: an undo's
    state (the one below the top: every other change adds a move) pops the
    top. Pushing it instead left the undone state where the next undo, in
    flight at a cut and kept, is looked for: a loss that was none."""
    if state is None or state == history[-1]:
        return False
    if len(history) > 1 and state == history[-2]:
        history.pop()
    else:
        history.append(state)
    return True


def test_acknowledged_undos_go_back_through_the_history():
    s = [{"moves": n} for n in range(4)]
    h = [s[0]]
    steps = [(s[1], True, [0, 1]), (s[2], True, [0, 1, 2]), (s[2], False, [0, 1, 2]), (s[1], True, [0, 1]),
             (s[0], True, [0]), (s[1], True, [0, 1]), (None, False, [0, 1])]
    for state, changed, moves in steps:
        assert _acknowledge(h, state) is changed
        assert [x["moves"] for x in h] == moves
    # two undos in a row: the second (in flight at a cut) lands on history[-2]
    h = [s[0], s[1], s[2], s[3]]
    _acknowledge(h, s[2])
    assert h[-2] == s[1]


def test_power_cuts_keep_every_acknowledged_change(fresh_sim, monkeypatch):
    """Every figure printed is counted from what was observed: each reply and
    dart event read before a cut is an acknowledged change, and the board
    must hold all of them after it, plus at most the one change whose reply
    had not been read. Some cuts land at a chosen stage of the flash write
    (the board is held there), some in the middle of a deploy."""
    b = fresh_sim
    rnd = random.Random(7)
    from hapenny import deploy

    monkeypatch.setattr(deploy, "STEP_S", 3.0)  # a deploy cut off gives up soon (the virtual board is quick)
    b.new(["Ann", "Bob"], rules={"darts": 9})
    history = [b.state()]  # acknowledged game states, oldest first (kept across cuts)
    acked_cfg = b.req("config")["config"]
    acked_map = sorted(b.req("map")["cells"])
    base_map = b.req("map")["cells"]
    exact = kept = lost = damaged = acked_changes = map_in_flight = torn_files = 0
    outcome = None  # how the previous cut ended: what a failure shows
    kinds = {}
    held = {}  # cuts made inside a write, by its stage
    losses = []  # (cut, kind, stage, what differed): what a failure shows
    for cut in range(POWER_CUTS):
        kind = rnd.choice(["dart", "dart", "throw", "next", "undo", "config", "map"])
        first = FIRST_CUTS[cut] if cut < len(FIRST_CUTS) else None
        if first:
            kind = first[0]
        elif cut % DEPLOY_EVERY == DEPLOY_EVERY - 1:
            kind = "deploy"
        kinds[kind] = kinds.get(kind, 0) + 1
        pending_cfg = pending_map = None
        acked, dart_seen, stage = [], False, None
        seen = []
        if kind == "deploy":
            torn, parts = _deploy_cut(b, rnd)
            torn_files += len(torn)
            assert not torn, torn
            b.connect(timeout=30)
            _quiet(b.link)
        else:
            stage = rnd.choice(STAGES[kind]) if rnd.random() < HELD else None
            delay = rnd.uniform(0, 0.03)
            if first:
                stage = first[1]
                delay = first[2]
            if stage:
                b.sim.hold_flash(stage)
            if kind == "dart":
                r, c = b.cells[rnd.choice(["S1", "T2", "D3", "S9"])]
                b.sim.close(r, c, ms=3)
            elif kind == "throw":
                b.link.send_line(json.dumps({"cmd": "throw", "seg": rnd.choice(["S4", "T6", "MISS"]), "id": "c"}) + "\n")
            elif kind in ("next", "undo"):
                b.link.send_line(json.dumps({"cmd": kind, "id": "c"}) + "\n")
            elif kind == "config":
                pending_cfg = dict(acked_cfg, auto_next_ms=rnd.randint(0, 9000))
                b.link.send_line(json.dumps({"cmd": "config", "set": {"auto_next_ms": pending_cfg["auto_next_ms"]},
                                             "id": "c"}) + "\n")
            else:  # a whole map in three lines, sent at once; the last reply acknowledges it
                shuffled = [[r, c, s] for (r, c, _), s in zip(base_map, rnd.sample([x[2] for x in base_map], len(base_map)))]
                pending_map = sorted(shuffled)
                third = len(shuffled) // 3 + 1
                parts = [shuffled[i:i + third] for i in range(0, len(shuffled), third)]
                lines = [json.dumps({"cmd": "map", "set": p, "more": True, "id": "m%d" % i}) for i, p in enumerate(parts[:-1])]
                lines.append(json.dumps({"cmd": "map", "set": parts[-1], "id": "c"}))
                b.link.send_line("\n".join(lines) + "\n")
                if not first:
                    delay = rnd.choice([0.0, rnd.uniform(0, 0.03)])  # often cut before the map is stored
            early = []  # replies read while waiting for the stage
            if stage:
                # the write this change causes stops there, however long a
                # loaded host takes to get the board there (an undo with
                # nothing to undo writes nothing: its reply comes instead,
                # and the cut is just late)
                end = time.monotonic() + 30
                while not b.sim.held.is_set() and time.monotonic() < end:
                    early += b.link._pump(0.02)
                    if any(r.get("id") == "c" for r in early):
                        break
                if b.sim.held.is_set():
                    held[stage] = held.get(stage, 0) + 1
            else:
                time.sleep(delay)  # the cut lands at a random moment of the change
            # what the board acknowledged before the cut
            replies = early + b.link._pump(0.0)
            acked = [r for r in replies if r.get("id") == "c"]
            seen = list(b.link.events)
            for ev in seen:
                # every event that changes the game: darts, and the player
                # change the board makes itself (auto-next: a `visit` event)
                if not _acknowledge(history, gamestate.apply(history[-1], ev)):
                    continue
                if ev["ev"] == "dart":
                    acked_changes += ev["src"] == "matrix"  # a host throw is counted by its reply
                    dart_seen = True
                elif ev["ev"] == "visit" and kind != "next":
                    acked_changes += 1
            if acked:
                rep = acked[0]
                if rep["ok"] and "state" in rep:
                    _acknowledge(history, rep["state"])
                elif rep["ok"] and "config" in rep:
                    acked_cfg, pending_cfg = rep["config"], None
                elif rep["ok"] and "cells" in rep:
                    acked_map, pending_map = sorted(rep["cells"]), None
                acked_changes += rep["ok"]
            elif kind == "map":
                map_in_flight += 1
            b.sim.power_cut()
            b.wait("boot", timeout=20)
            _quiet(b.link)
        bad = [e for e in b.link.events if e.get("ev") == "storage"]
        set_aside = []
        if cut % BAD_EVERY == BAD_EVERY - 1 or cut == POWER_CUTS - 1:  # they stay: a later look finds them
            set_aside = sorted(p for p in b.sim.names() if p.endswith(".bad"))  # what the board found damaged
        damaged += len(bad) + len(set_aside)
        assert not bad and not set_aside, (kind, bad, set_aside)
        b.connect()
        st = b.state()
        # the game: every acknowledged change, and perhaps the one in flight
        want = history[-1]
        in_flight = kind in ("throw", "next", "undo") and not acked or kind == "dart" and not dart_seen
        previous, outcome = outcome, "exact"
        if st == want:
            exact += 1
        elif in_flight and st["moves"] == want["moves"] + 1 and b.req("undo")["state"] == want:
            kept += 1  # the change in flight was stored: exactly one more action, nothing else
            st = b.state()
            outcome = "kept, undone by the test"
        elif in_flight and kind == "undo" and len(history) > 1 and st == history[-2]:
            kept += 1  # an undo in flight was stored
            history.pop()
            outcome = "undo kept"
        else:
            lost += 1
            losses.append({"cut": cut, "kind": kind, "stage": stage, "acked": acked, "in_flight": in_flight,
                           "events": [e["ev"] for e in seen], "previous": previous,
                           "history_moves": [h["moves"] for h in history[-4:]],
                           "vs_last": _diff(want, st),
                           "vs_before_last": _diff(history[-2], st) if len(history) > 1 else None})
            history.append(st)
            outcome = "lost"
        del history[:-50]  # the states an undo in flight can go back to
        cfg = b.req("config")["config"]
        if cfg != acked_cfg and not (pending_cfg and cfg == pending_cfg):
            lost += 1
            losses.append((cut, kind, stage, _diff(acked_cfg, cfg)))
        acked_cfg = cfg
        m = sorted(b.req("map")["cells"])
        if m != acked_map and not (pending_map and m == pending_map):
            lost += 1
            losses.append((cut, kind, stage, "map"))
        acked_map = m
        if st["phase"] in ("hold", "over"):
            history = [b.req("new", players=["Ann", "Bob"], rules={"darts": 9})["state"]]
        b.link.drain()
        b.link.events.clear()
    figure("power cuts" + COUNT, cuts=POWER_CUTS, acknowledged_changes=acked_changes, exact_acknowledged_state=exact,
           one_change_in_flight_kept=kept, map_cut_in_flight=map_in_flight, damaged_files=damaged,
           torn_firmware_files=torn_files, lost_acknowledged_changes=lost,
           cut_inside_a_write=" ".join("%s:%d" % kv for kv in sorted(held.items())),
           actions=" ".join("%s:%d" % kv for kv in sorted(kinds.items())))
    assert lost == 0 and damaged == 0 and torn_files == 0, json.dumps(losses[:3], indent=1)
    assert map_in_flight > 0  # the case the docs describe really happened
    assert kinds.get("deploy") and set(held) >= {"append", "tmp", "rename", "written"}

"""Reliability, with the figures printed at the end of the run:
hostile input, power cuts, and electrical faults repeated.
(The 10,000-dart soak is tests/soak, run by `make soak`.)"""
import io
import json
import os
import random
import threading
import time


from mphelp import figure
from hapenny import gamestate

# `make soak` (HAPENNY_SOAK=1) runs the full counts; `make test` a short run
SOAK = bool(os.environ.get("HAPENNY_SOAK"))
COUNT = " (full count)" if SOAK else ""  # the figures' names, so both are kept
HOSTILE_LINES = 100000 if SOAK else 5700  # about a tenth are blank lines, which are ignored

# well-formed JSON of the wrong types, and values out of range: each with the
# one error code the protocol gives it
TYPES = [
    ({"cmd": ["info"]}, "unknown_cmd"), ({"cmd": None}, "unknown_cmd"), ({"cmd": 3.5}, "unknown_cmd"),
    ({"cmd": {"x": 1}}, "unknown_cmd"),
    ({"cmd": "throw", "seg": 5}, "bad_seg"), ({"cmd": "throw", "seg": None}, "bad_seg"),
    ({"cmd": "throw", "seg": ["T5"]}, "bad_seg"),
    ({"cmd": "new", "players": "Ann"}, "bad_rules"), ({"cmd": "new", "players": [1, 2]}, "bad_rules"),
    ({"cmd": "new", "teams": "x"}, "bad_rules"),
    ({"cmd": "press", "row": "1", "col": 1, "ms": 5}, "bad_cell"), ({"cmd": "press", "row": 1.5, "col": 1, "ms": 5}, "bad_cell"),
    ({"cmd": "config", "set": [1]}, "bad_config"), ({"cmd": "config", "set": {"learn": "true"}}, "bad_config"),
    ({"cmd": "map", "set": 7}, "bad_map"),
    ({"cmd": "new", "players": ["A"], "rules": []}, "bad_rules"), ({"cmd": "new", "players": ["A"], "variant": 3}, "bad_rules"),
]
RANGES = [
    ({"cmd": "press", "row": 99, "col": 0, "ms": 5}, "bad_cell"), ({"cmd": "press", "row": 0, "col": 0, "ms": 0}, "bad_cell"),
    ({"cmd": "press", "row": 0, "col": -3, "ms": 5}, "bad_cell"), ({"cmd": "throw", "seg": "T21"}, "bad_seg"),
    ({"cmd": "throw", "seg": "S0"}, "bad_seg"), ({"cmd": "new", "players": ["P"] * 9}, "bad_rules"),
    ({"cmd": "new", "players": ["A"], "rules": {"marks": 10}}, "bad_rules"),
    ({"cmd": "config", "set": {"auto_next_ms": -5}}, "bad_config"),
    ({"cmd": "map", "set": [[0, 0, "S1"], [0, 0, "S2"]]}, "bad_map"), ({"cmd": "map", "set": [[40, 0, "S1"]]}, "bad_map"),
    ({"cmd": "config", "set": {"brightness": 999}}, "bad_config"),
    ({"cmd": "new", "players": ["A"], "variant": "x"}, "bad_rules"),
]


def hostile_lines(rnd, n):
    """n lines, each of which the contract says must be refused (or, for
    blank lines, ignored). Returns [(bytes, expected error or None)]."""
    out = []
    kinds = ["garbage", "utf8", "types", "numbers", "nesting", "control", "range", "blank", "notobj"]
    while len(out) < n:
        k = rnd.choice(kinds)
        if k == "garbage":
            s = "".join(rnd.choice("{}[]:,\"'abc123 \\") for _ in range(rnd.randint(1, 80)))
            try:
                json.loads(s)
                continue  # by chance valid JSON: not hostile enough
            except ValueError:
                out.append((s.encode(), "bad_json"))
        elif k == "utf8":
            junk = bytes(rnd.randint(0x80, 0xFF) for _ in range(rnd.randint(1, 20)))
            try:
                junk.decode("utf-8")
                continue  # valid by chance
            except UnicodeDecodeError:
                out.append((b'{"cmd": "info", "id": "' + junk + b'"}', "bad_json"))
        elif k == "types":
            cmd, code = rnd.choice(TYPES)
            out.append((json.dumps(cmd).encode(), code))
        elif k == "numbers":
            big = rnd.choice(["1e308", "-1e308", "1" + "0" * 300, "-" + "9" * 200, "1e999", "0.0000001"])
            out.append((('{"cmd": "press", "row": %s, "col": 0, "ms": 5}' % big).encode(), "bad_cell"))
        elif k == "nesting":
            d = rnd.randint(10, 200)
            out.append((b'{"cmd": "throw", "seg": ' + b"[" * d + b"]" * d + b"}", "bad_seg"))
        elif k == "control":
            body = bytes(rnd.choice([0, 1, 2, 4, 5, 7, 8, 9, 11, 12, 14, 27, 127]) for _ in range(rnd.randint(1, 30)))
            out.append((body, "bad_json"))
        elif k == "range":
            cmd, code = rnd.choice(RANGES)
            out.append((json.dumps(cmd).encode(), code))
        elif k == "blank":
            out.append((rnd.choice([b"", b" ", b"\t", b"\r"]), "ignored"))
        else:
            out.append((rnd.choice([b"[1,2]", b'"cmd"', b"42", b"null", b"true"]), "bad_json"))
    # a line of nothing but white space is ignored, whatever made it
    out = [(line, "ignored" if not line.strip() else exp) for line, exp in out]
    # Line noise with Ctrl-C in it: the board reads 0x03 as data and drops
    # it, so the line gets the reply it would get without. Only Ctrl-C
    # followed by Ctrl-A or another Ctrl-C (line ends may stand between)
    # hands the port to the REPL, so a Ctrl-C goes only before other bytes.
    for i in range(0, len(out), 5):
        line, exp = out[i]
        spots = [k for k in range(len(line)) if line[k] not in (1, 3, 10, 13)]
        if exp == "ignored" or not spots:
            continue
        for k in sorted(rnd.sample(spots, min(len(spots), rnd.randint(1, 3))), reverse=True):
            line = line[:k] + b"\x03" + line[k:]
        out[i] = (line, exp)
    return out


def _collect_replies(board, until_id, timeout=20.0):
    replies = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for rep in board.link._pump(0.2):
            if rep.get("id") == until_id:
                return replies
            replies.append(rep)
    raise AssertionError("the board stopped answering")


def test_hostile_input_gets_errors_and_changes_nothing(board):
    rnd = random.Random(2026)
    board.new(["Ann", "Bob"], variant="pub")
    board.req("throw", seg="T5")
    before = board.state()
    cfg = board.req("config")["config"]
    cells = board.req("map")["cells"]
    stats0 = board.req("stats")["stats"]
    mem0 = stats0["mem_alloc"]
    lines = hostile_lines(rnd, HOSTILE_LINES)
    ctrl_c = sum(line.count(b"\x03") for line, _ in lines)
    # and 10 KB lines with no newline until the end
    lines += [(b"x" * 10240, "too_long"), (b'{"cmd":"info","pad":"' + b"y" * 10000 + b'"}', "too_long")]
    errors = answered = ignored = 0
    codes = {}
    for start in range(0, len(lines), 40):
        batch = lines[start:start + 40]
        payload = b"".join(line + b"\n" for line, _ in batch)
        board.link.send_line(payload + b'{"cmd":"info","id":"sync%d"}\n' % start)
        replies = _collect_replies(board, "sync%d" % start)
        expected = [exp for _, exp in batch if exp != "ignored"]
        ignored += len(batch) - len(expected)
        assert len(replies) == len(expected), (start, replies[:3], batch[:3])
        for rep, exp in zip(replies, expected):
            assert rep["ok"] is False and rep["msg"], rep
            assert rep["error"] == exp, (rep, exp)
            codes[rep["error"]] = codes.get(rep["error"], 0) + 1
        errors += len(replies)
        answered += len(batch)
        if start == 0:
            # the first batch loads the on-demand modules once (a refused new
            # game's checks, the rare commands): their names stay interned, a
            # one-time cost; from here on the heap must stay flat
            mem0 = board.req("stats")["stats"]["mem_alloc"]
    assert board.state() == before
    assert board.req("config")["config"] == cfg
    assert board.req("map")["cells"] == cells
    mem1 = board.req("stats")["stats"]["mem_alloc"]
    assert mem1 - mem0 < 4096, (mem0, mem1)
    stats1 = board.req("stats")["stats"]
    assert stats1["errors"] == 0  # no unexpected exception inside
    assert ctrl_c > 0 and stats1["ctrl_c"] - stats0["ctrl_c"] == ctrl_c  # each seen, none handed over
    figure("hostile input" + COUNT, lines=answered, error_replies=errors, blank_ignored=ignored,
           ctrl_c_bytes=ctrl_c, state_unchanged=True, heap_growth_bytes=mem1 - mem0,
           codes=" ".join("%s:%d" % kv for kv in sorted(codes.items())))


# make test: 40 cuts through the whole board (each a boot from the littlefs
# image); tests/test_flash_journal.py adds cuts inside littlefs's own
# operations, which cost a fraction of a second each
POWER_CUTS = 1000 if SOAK else 40
DEPLOY_EVERY = 10 if SOAK else 20  # every so many cuts, one lands in a deploy
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
            if stage:
                # the write this change causes stops there (an undo with
                # nothing to undo writes nothing: then the cut is just late)
                if b.sim.held.wait(0.5):
                    held[stage] = held.get(stage, 0) + 1
            else:
                time.sleep(delay)  # the cut lands at a random moment of the change
            # what the board acknowledged before the cut
            replies = b.link._pump(0.0)
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


REPEATS = 20 if SOAK else 10  # each fault, every time: so many rounds


def test_electrical_faults_give_the_documented_outcome_every_time(board):
    board.need_sim()
    outcomes = {}
    wrong = {}  # what the board did instead, the first time it did

    def tally(name, ok, seen=None):
        good, total = outcomes.get(name, (0, 0))
        outcomes[name] = (good + (1 if ok else 0), total + 1)
        if not ok:
            wrong.setdefault(name, seen)

    def darts_after():
        board.settle()  # the scanner has decided every closure scheduled
        board.link.drain()
        got = [e for e in board.link.events if e["ev"] == "dart"]
        board.link.events.clear()
        return got

    for i in range(REPEATS):
        board.settle()
        board.new(rules={"darts": 9})
        (r, c), (r2, c2) = board.cells["D4"], board.cells["S9"]
        board.sim.pulses([(r, c, k * 700, 300) for k in range(12)])  # chatter burst
        d = darts_after()
        tally("chatter burst -> one dart", [e["seg"] for e in d] == ["D4"], d)
        board.sim.pulses([(r, c, 0, 8000), (r2, c2, 300, 500)])  # two crossings at once
        d = darts_after()
        tally("two crossings -> the longer", [e["seg"] for e in d] == ["D4"], d)
        board.sim.pulses([(0, 1, 0, 10000), (1, 0, 0, 10000), (1, 1, 0, 10000)])  # ghost at (0, 0)
        d = darts_after()
        first = {(rr, cc): s for s, (rr, cc) in board.cells.items()}[(0, 0)]
        tally("ghosting -> first in scan order", [e["seg"] for e in d] == [first], d)
        board.new(rules={"darts": 1})
        board.req("throw", seg="MISS")  # the visit is over: the board holds
        board.sim.pulses([(r2, c2, 0, 3000)])
        board.settle()
        board.link.drain()
        ign = [e for e in board.link.events if e["ev"] == "ignored"]
        board.link.events.clear()
        tally("hit while darts are pulled -> ignored", len(ign) == 1 and board.state()["ignored"] == 1)
    for _ in range(3):  # stuck switches take seconds each
        board.new()
        board.sim.close(r, c, ms=2600)
        # seconds on the board's clock, which a busy host slows: generous waits
        ok = board.wait("dart")["seg"] == "D4" and board.wait("fault", timeout=30)["kind"] == "stuck"
        board.settle(timeout=30)
        ok = ok and board.press_seg("S9")["seg"] == "S9"
        ok = ok and (board.wait("fault_cleared", timeout=30)["row"], ) == (r, )
        tally("stuck switch -> fault, masked, others score, released", ok)
        board.settle()
    for name, (good, total) in outcomes.items():
        figure("electrical: " + name, every_time="%d/%d" % (good, total))
    assert all(good == total for good, total in outcomes.values()), (outcomes, wrong)

"""Reliability, with the figures printed at the end of the run: hostile
input and electrical faults repeated. (Power cuts are tests/hil/test_power_cuts.py;
the 10,000-dart soak is tests/soak, run by `make soak`.)"""
import json
import os
import random
import time

from mphelp import figure

# `make soak` (HAPENNY_SOAK=1) runs the full counts; `make test` a short run
SOAK = bool(os.environ.get("HAPENNY_SOAK"))
COUNT = " (full count)" if SOAK else ""  # the figures' names, so both are kept
HOSTILE_LINES = 100000 if SOAK else 3000  # about a tenth are blank lines, which are ignored

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


REPEATS = 20 if SOAK else 6  # each fault, every time: so many rounds


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
        board.sync()
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
        board.sync()
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

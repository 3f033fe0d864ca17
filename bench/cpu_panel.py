"""The computer (and a player following the coach) against the panel of
strong rule-following players (bench/panel.py), at the same skill.

    python bench/cpu_panel.py [--games N] [--jobs J] [--levels 1,3] [--variants classic,pub]
                              [--only kinds] [--out FILE] [--resume] [--publish] [--table]

--resume goes on from the rows in FILE (build/cpu_panel.json); --publish
writes the table into docs/computer.md; --table only prints (and with
--publish writes) the table of what FILE holds.

Rows: for each variant (classic, pub, progressive, no-gift), level 1..6
and panel member, the computer against that member over N games (default
4,000), seats alternated (odd seeds: the member throws first); then the
coach's follower against the tips player; then 3- and 4-sided games of the
computer against a mixed panel, seated every way in turn (seat and order). Game i of a row uses seed
1000003 * (i + 1) for its darts, so a row can be rerun alone. The verdict
is the lower end of the Wilson 95 % interval of the computer's win rate.
"""
import itertools
import json
import math
import os
import sys
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))
sys.path.insert(0, str(ROOT / "bench"))

import panel  # noqa: E402
from shove import coach, cpu, rules, segments, throwing  # noqa: E402

FACE = throwing.DEFAULT_FACE
VARIANTS = ("classic", "pub", "progressive", "no-gift")
MIXED = {3: ("tips", "blocker"), 4: ("tips", "greedy", "blocker")}


def wilson(wins, n, z=1.96):
    """The Wilson score interval of a proportion (lower, upper)."""
    if not n:
        return 0.0, 1.0
    p = wins / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def _memo(f, last=False):
    """f(g), remembered by position: every player here chooses from the
    position alone (marks, whose turn, darts left, pending wins; the tips
    player also from its last aim), so a position met again is not worked
    out again. Only the time changes."""
    seen = {}

    def choose(g):
        key = bytes(g.marks) + bytes((g.turn, g.darts_left, g.pending))
        if last:
            key += bytes((panel._last.get((id(g), g.turn)) or 0,))
        c = seen.get(key)
        if c is None:
            if len(seen) > 400000:
                seen.clear()
            c = seen[key] = f(g)
        elif last:
            panel._last[(id(g), g.turn)] = segments.number(c) or 25
        return c
    choose.seen = seen
    return choose


def _chooser(kind, level):
    if kind == "cpu":
        return _memo(cpu.Player(level).choose)
    if kind == "coach":
        return _memo(lambda g: segments.encode(coach.hint(g, level)["seg"]))
    f = panel.MEMBERS[kind]
    aims = panel.Aims(level, FACE)
    return _memo(lambda g: f(g, aims), kind == "tips")


_CH = {}


def play(kinds, level, variant, seed):
    """One game between `kinds` (in seat order) at `level`; returns the winner's seat."""
    f = throwing.face(FACE)
    sig = throwing.sigma(level)
    g = rules.new_game(["P%d" % i for i in range(len(kinds))], variant=variant)
    if _CH.get("at") != (level, variant):  # remembered choices hold for one level and rule set
        _CH.clear()
        _CH["at"] = (level, variant)
    ch = []
    for k in kinds:
        if k not in _CH:
            _CH[k] = _chooser(k, level)
        ch.append(_CH[k])
    rng = throwing.Rng(seed)
    darts = 0
    while g.phase != rules.OVER:
        if g.phase == rules.HOLD:
            g.next()
            continue
        g.throw(throwing.throw(f, sig, ch[g.turn](g), rng))
        darts += 1
        if darts > 5000:
            raise RuntimeError("a game did not end")
    panel.forget(g)
    return g.winner, darts


def seating(first, others, seed):
    """The seat order of a game (kinds) and the seat of `first`: the seating
    numbered seed mod n! among every order of the n players, so a row plays
    each the same number of times (1000003 is prime to 2, 6 and 24). Two
    sides: even seeds put `first` first, odd ones second. With three or
    four, the players' order round the table matters as much as the
    computer's seat: under gift `next` a side takes the surplus of the side
    before it, and rotating the computer's seat alone (the opponents always
    in the same order) let the tips player, which gifts freely, gift to the
    same member in two games of three: a blocker in the computer's place
    won 30.9 % against tips and blocker that way (800 games, level 6),
    34.0 % seated every way (1,200 games)."""
    every = (first,) + tuple(others)
    orders = list(itertools.permutations(range(len(every))))
    p = orders[seed % len(orders)]
    return [every[j] for j in p], p.index(0)


def _run(args):
    first, others, level, variant, seed = args
    kinds, seat = seating(first, others, seed)
    w, d = play(kinds, level, variant, seed)
    return w == seat, d


def row(first, others, level, variant, games, pool, same=None, check=500):
    """One row: `first` against `others` over `games` games. With `same`, the
    results of the computer's row on the same seeds: the coach's follower
    throws the coach's target, which is the computer's choice, so its games
    are those games dart for dart. That is checked by playing the first
    `check` games through the coach; any game that differs and the whole
    row is played through the coach."""
    t = time.time()
    tasks = [(first, others, level, variant, 1000003 * (i + 1)) for i in range(games)]
    res = None
    if same is not None:
        part = tasks[:check]
        mine = pool.map(_run, part, chunksize=25) if pool else [_run(a) for a in part]
        if [tuple(r) for r in mine] == [tuple(r) for r in same[:check]]:
            res = same
    checked = check if res is not None else games
    if res is None:
        res = pool.map(_run, tasks, chunksize=25) if pool else [_run(a) for a in tasks]
    wins = sum(1 for r in res if r[0])
    lo, hi = wilson(wins, games)
    fair = 1.0 / (len(others) + 1)
    goal = 0.52 if len(others) == 1 else fair
    return {"side": first, "against": "+".join(others), "level": level, "variant": variant,
            "games": games, "wins": wins, "rate": wins / games, "lo": lo, "hi": hi, "goal": goal,
            "met": lo > goal, "darts": sum(r[1] for r in res) / games, "seconds": round(time.time() - t, 1),
            "played": checked if first == "coach" else games}, res


def plan(levels, variants):
    """Every row, in the order they run: (side, opponents, level, variant).
    Classic first, the coach's rows beside the computer's, the 3- and
    4-sided games (classic) once the first two levels are done; then the
    other rule sets."""
    out = []
    for v in variants:
        for j, lv in enumerate(levels):
            for m in panel.MEMBERS:
                out.append(("cpu", (m,), lv, v))
            out.append(("coach", ("tips",), lv, v))
            if v == variants[0] and j in (1, len(levels) - 1):
                for lm in levels[:2] if j == 1 else levels[2:]:
                    for n in (3, 4):
                        out.append(("cpu", MIXED[n], lm, v))
    return out


def select(rows, only):
    """The rows of `plan` of the kinds in `only`, comma-separated: cpu, coach,
    pairs (the computer against one member), multi (3 and 4 sides), multi3
    or multi4 (one of them), or a member's name (the computer against that
    member alone)."""
    kinds = only.split(",")
    return [r for r in rows if r[0] in kinds or ("multi" in kinds and len(r[1]) > 1)
            or "multi%d" % (len(r[1]) + 1) in kinds
            or ("pairs" in kinds and r[0] == "cpu" and len(r[1]) == 1)
            or (r[0] == "cpu" and len(r[1]) == 1 and r[1][0] in kinds)]


def main():
    a = sys.argv[1:]

    def opt(name, default):
        return a[a.index(name) + 1] if name in a else default

    games = int(opt("--games", 4000))
    jobs = int(opt("--jobs", 1))
    levels = [int(x) for x in opt("--levels", "3,6,1,5,2,4").split(",")]
    variants = opt("--variants", ",".join(VARIANTS)).split(",")
    only = opt("--only", "")
    out = Path(opt("--out", str(ROOT / "build" / "cpu_panel.json")))
    rows = plan(levels, variants)
    if only:
        rows = select(rows, only)
    try:
        os.nice(10)
    except OSError:
        pass
    done = json.loads(out.read_text()) if out.exists() and ("--resume" in a or "--table" in a) else []
    if "--table" in a:  # publish what a run (perhaps cut short) has written, playing nothing
        print(table(planned(done)))
        if "--publish" in a:
            publish(done, games)
        return
    have = {(r["side"], r["against"], r["level"], r["variant"], r["games"]) for r in done}
    pool = Pool(jobs) if jobs > 1 else None
    games_of = {}  # the computer's games against the tips player, for the coach's rows
    try:
        for side, others, lv, v in rows:
            if (side, "+".join(others), lv, v, games) in have:
                continue
            same = games_of.get((lv, v)) if side == "coach" else None
            if side == "coach" and same is None:
                same = row("cpu", others, lv, v, games, pool)[1]
            r, res = row(side, others, lv, v, games, pool, same)
            if side == "cpu" and others == ("tips",):
                games_of[(lv, v)] = res
            done.append(r)
            print(json.dumps(r), flush=True)
            out.parent.mkdir(exist_ok=True)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(done, indent=1))
            tmp.replace(out)
    finally:
        if pool:
            pool.close()
    print(table(done))
    if "--publish" in a:
        publish(done, games)


DOC = ROOT / "docs" / "computer.md"
BEGIN = "<!-- panel table: written by bench/cpu_panel.py --publish -->"
END = "<!-- end of panel table -->"


def summary(rows, games):
    """A paragraph: how many rows of each kind are met, and the worst of each."""
    out = []
    kinds = (("pairs", lambda r: r["side"] == "cpu" and "+" not in r["against"]),
             ("coach", lambda r: r["side"] == "coach"),
             ("multi", lambda r: "+" in r["against"]))
    for name, keep in kinds:
        rs = [r for r in rows if keep(r)]
        if not rs:
            continue
        met = sum(1 for r in rs if r["met"])
        worst = min(rs, key=lambda r: r["lo"] - r["goal"])
        out.append("- %s: %d of %d rows met; the furthest from its goal: %s against %s, level %d, %s: "
                   "%.1f %% (lower bound %.1f %%, goal above %.1f %%)." % (
                       {"pairs": "the computer against each member",
                        "coach": "the coach's follower against the tips player",
                        "multi": "3 and 4 sides against a mixed panel"}[name],
                       met, len(rs), worst["side"], worst["against"], worst["level"], worst["variant"],
                       100 * worst["rate"], 100 * worst["lo"], 100 * worst["goal"]))
    short = [r for r in rows if not r["met"]]
    if short:
        out.append("- Not met (lower bound against goal): " + "; ".join(
            "%s against %s, level %d, %s: %.1f %% < %.1f %%" % (
                r["side"], r["against"], r["level"], r["variant"], 100 * r["lo"], 100 * r["goal"]) for r in short) + ".")
    planned = len(plan([1, 2, 3, 4, 5, 6], VARIANTS))
    if len(rows) < planned:
        out.append("- %d of the %d planned rows were run (%d games each)." % (len(rows), planned, games))
    return "\n".join(out)


def planned(rows):
    """The rows of the full plan (every level and rule set): a run with a
    single rule set also plays its 3- and 4-sided rows under it, which the
    plan has under `classic` only, and those are left out of the table."""
    keys = {(s, "+".join(o), lv, v) for s, o, lv, v in plan([1, 2, 3, 4, 5, 6], VARIANTS)}
    return [r for r in rows if (r["side"], r["against"], r["level"], r["variant"]) in keys]


def publish(rows, games):
    """Write the table and its summary (the plan's rows) into docs/computer.md between the markers."""
    rows = planned(rows)
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit("docs/computer.md has no panel table markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    body = "\n%s\n\n%s\n" % (summary(rows, games), table(rows))
    tmp = DOC.with_suffix(".tmp")
    tmp.write_text(head + BEGIN + body + END + tail)
    tmp.replace(DOC)


def table(rows):
    lines = ["| side | against | level | variant | games | wins | win rate | 95 % (Wilson) | goal | met |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    members = list(panel.MEMBERS)

    def order(r):
        multi = "+" in r["against"]
        v = VARIANTS.index(r["variant"]) if r["variant"] in VARIANTS else 9
        who = members.index(r["against"]) if r["against"] in members else 9
        return (multi, v, r["level"], r["side"] == "coach", len(r["against"]), who)

    for r in sorted(rows, key=order):
        lines.append("| %s | %s | %d | %s | %d | %d | %.1f %% | %.1f-%.1f %% | > %.1f %% | %s |" % (
            r["side"], r["against"], r["level"], r["variant"], r["games"], r["wins"], 100 * r["rate"],
            100 * r["lo"], 100 * r["hi"], 100 * r["goal"], "yes" if r["met"] else "**no**"))
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""Evidence that the computer player plays well: simulated games, a table.

    python bench/cpu_evidence.py [--games N] [--jobs J]   (default 10,000 games a comparison)

1. At equal skill, the strategy against the naive player ("treble of the
   lowest open bed") in classic, pub and progressive.
2. Every level against the level below it (classic).
3. Throughout 1, every decision of the strategy is checked with a one-dart
   lookahead: a target whose exact hit hands an opponent the game, chosen
   while some other target would not, is a violation.
Each pairing plays half its games with each side starting, so the first
throw's advantage cancels; darts come from the throw model with a seeded
generator, so a run is reproducible.
"""
import json
import math
import sys
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))
sys.path.insert(0, str(ROOT / "tests" / "portable"))

from oracle import gives_game  # noqa: E402
from shove import cpu, rules, segments, throwing  # noqa: E402

FACE = throwing.DEFAULT_FACE
EQUAL_LEVEL = 3


def naive(g):
    """The baseline: the treble of the thrower's lowest open bed (the bull's centre for 25)."""
    if g.phase == rules.BULL_OFF:
        return segments.DB
    r = g.rules
    for i in range(g.nb):
        if g.need(g.turn, i):
            n = r.beds[i]
            return segments.DB if n == 25 else 3 + (n - 1) * 5 + 4
    return segments.MISS


def exact_targets(g):
    """Every segment a thrower can aim at: each ring of each number, the bull."""
    out = [segments.DB, segments.SB]
    for n in range(1, 21):
        for ring in ("S", "D", "T"):
            out.append(segments.encode(ring + str(n)))
    return out


def play(kinds, levels, variant, seed, check=False):
    """One game; kinds[i] 'cpu' or 'naive'. Returns (winner, darts, decisions, violations)."""
    f = throwing.face(FACE)
    g = rules.new_game(["P%d" % i for i in range(len(kinds))], variant=variant)
    players = [cpu.Player(lv) for lv in levels]  # the board's face: its tables from cpu.dat
    rng = throwing.Rng(seed)
    darts = decisions = violations = 0
    while g.phase != rules.OVER:
        if g.phase == rules.HOLD:
            g.next()
            continue
        s = g.turn
        if kinds[s] == "cpu":
            aim = players[s].choose(g)
            decisions += 1
            if check and gives_game(g, aim, s):
                if any(not gives_game(g, c, s) for c in exact_targets(g)):
                    violations += 1
        else:
            aim = naive(g)
        g.throw(throwing.throw(f, players[s].sigma, aim, rng))
        darts += 1
        if darts > 5000:
            raise RuntimeError("a game did not end")
    return g.winner, darts, decisions, violations


def _run(args):
    kinds, levels, variant, seed, check = args
    # seat swap on odd seeds: side 0 of the pairing starts half the games
    if seed % 2:
        w, d, n, v = play(kinds[::-1], levels[::-1], variant, seed, check)
        w = 1 - w
    else:
        w, d, n, v = play(kinds, levels, variant, seed, check)
    return w, d, n, v


def compare(name, kinds, levels, variant, games, jobs, check=False):
    t = time.time()
    tasks = [(kinds, levels, variant, 1000003 * (i + 1), check) for i in range(games)]
    if jobs > 1:
        with Pool(jobs) as pool:
            res = pool.map(_run, tasks, chunksize=50)
    else:
        res = [_run(a) for a in tasks]
    wins = sum(1 for r in res if r[0] == 0)
    p = wins / games
    half = 1.96 * math.sqrt(p * (1 - p) / games)
    return {"comparison": name, "variant": variant, "games": games, "wins": wins, "rate": p,
            "ci95": half, "darts_per_game": sum(r[1] for r in res) / games,
            "decisions": sum(r[2] for r in res), "violations": sum(r[3] for r in res),
            "seconds": round(time.time() - t, 1)}


def main():
    games = 10000
    jobs = 1
    args = sys.argv[1:]
    if "--games" in args:
        games = int(args[args.index("--games") + 1])
    if "--jobs" in args:
        jobs = int(args[args.index("--jobs") + 1])
    rows = []
    for variant in ("classic", "pub", "progressive"):
        rows.append(compare("strategy vs naive, level %d both" % EQUAL_LEVEL, ("cpu", "naive"),
                            (EQUAL_LEVEL, EQUAL_LEVEL), variant, games, jobs, check=True))
        print(json.dumps(rows[-1]), flush=True)
    for lv in range(2, len(throwing.LEVELS) + 1):
        rows.append(compare("level %d vs level %d" % (lv, lv - 1), ("cpu", "cpu"), (lv, lv - 1), "classic",
                            games, jobs))
        print(json.dumps(rows[-1]), flush=True)
    print()
    print("| comparison | variant | games | first side wins | 95 % interval | darts a game | lookahead violations |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        viol = "%d of %d decisions" % (r["violations"], r["decisions"]) if "naive" in r["comparison"] else ""
        print("| %s | %s | %d | %.1f %% | ±%.1f | %.0f | %s |" % (
            r["comparison"], r["variant"], r["games"], 100 * r["rate"], 100 * r["ci95"], r["darts_per_game"], viol))
    out = ROOT / "build" / "cpu_evidence.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

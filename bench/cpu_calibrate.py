"""Skill levels against cricket marks per round (MPR).

A cricket visit here: three darts, each aimed at the treble of the number
being worked on (20 down to 15, then the bull, aimed at its centre); the
thrower moves on once three marks are on it, and starts again at 20 after
the bull. Every mark on 15-20 or the bull counts (a treble 3, a double 2,
the bull 2, the outer bull 1), as it does in a league's MPR when marks on a
closed number score points.

    python bench/cpu_calibrate.py            # MPR of the shipped levels, every face
    python bench/cpu_calibrate.py --fit      # the sigma for each target MPR (15.5-inch face)
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))

from shove import segments, throwing  # noqa: E402

VISITS = 10000
TARGETS = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5)  # MPR the levels are fitted to
CRICKET = (20, 19, 18, 17, 16, 15, 25)


def mpr(face, sig, visits=VISITS, seed=12345):
    f = throwing.face(face)
    rng = throwing.Rng(seed)
    aims = [segments.DB if n == 25 else segments.encode("T%d" % n) for n in CRICKET]
    k = 0
    got = 0
    total = 0
    for _ in range(visits):
        for _ in range(3):
            code = throwing.throw(f, sig, aims[k], rng)
            n = segments.number(code)
            if n in CRICKET:
                m = segments.ring_marks(code)
                total += m
                if n == CRICKET[k]:
                    got += m
            if got >= 3:
                k = (k + 1) % len(CRICKET)
                got = 0
    return total / visits


def fit(target, face="soft15"):
    lo, hi = 3.0, 200.0
    for _ in range(18):
        mid = (lo + hi) / 2
        if mpr(face, mid, 4000) > target:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 1)


def model_gap(level, aim_name, throws=20000, face="soft15", seed=9):
    """Total variation distance between the strategy's table of where a dart
    aimed at `aim_name` lands (radius and angle taken apart) and the throw
    model itself (Monte Carlo)."""
    import cpu_tables
    from shove import cpu

    p = cpu.Player(level, cpu_tables.make(level, face))
    f = throwing.face(face)
    slot = {"SI": 0, "T": 1, "S": 2, "D": 3}[aim_name.rstrip("0123456789")]
    num = int(aim_name.lstrip("SITD"))
    lo, ang, rad = p.scatter[slot]
    pred = {"SB": rad[5] / cpu.ONE, "DB": rad[4] / cpu.ONE}
    for j, a in enumerate(ang):
        n = throwing.ORDER[(throwing.POS[num] + lo + j) % 20]
        for r, ring in ((0, "S"), (1, "T"), (2, "S"), (3, "D")):
            key = ring + str(n)
            pred[key] = pred.get(key, 0) + a * rad[r] / cpu.ONE / cpu.ONE
    pred["MISS"] = 1 - sum(pred.values())
    rng = throwing.Rng(seed)
    seen = {}
    aim = segments.encode(aim_name)
    for _ in range(throws):
        k = segments.name(throwing.throw(f, p.sigma, aim, rng))
        seen[k] = seen.get(k, 0) + 1 / throws
    return 0.5 * sum(abs(pred.get(k, 0) - seen.get(k, 0)) for k in set(pred) | set(seen))


def main():
    if "--fit" in sys.argv:
        sigmas = [fit(t) for t in TARGETS]
        print("LEVELS = (%s)" % ", ".join("%.1f" % s for s in sigmas))
        return
    rows = []
    print("| level | sigma (mm) | MPR 15.5-inch soft tip | MPR 13-inch soft tip | MPR steel tip |")
    print("|---|---|---|---|---|")
    for i, sig in enumerate(throwing.LEVELS):
        m = {face: mpr(face, sig) for face in ("soft15", "soft13", "steel")}
        rows.append({"level": i + 1, "sigma": sig, "mpr": m, "visits": VISITS})
        print("| %d | %.1f | %.2f | %.2f | %.2f |" % (i + 1, sig, m["soft15"], m["soft13"], m["steel"]))
    print()
    print("| level | T20 | S20 | D20 | SI20 |")
    print("|---|---|---|---|---|")
    for i in range(len(throwing.LEVELS)):
        gaps = [model_gap(i + 1, a) for a in ("T20", "S20", "D20", "SI20")]
        rows[i]["model_gap"] = gaps
        print("| %d | %s |" % (i + 1, " | ".join("%.3f" % x for x in gaps)))
    out = ROOT / "build" / "cpu_calibrate.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

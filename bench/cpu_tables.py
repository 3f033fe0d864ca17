"""The computer player's tables, made on the host and shipped to the board
as data (firmware/shove/cpu.dat): working them out needs floating point
and about 1.4 KB of bytecode the board would only run once per level.

For each level, on a board face: where a dart aimed at each ring slot (and
the bull) lands, and the darts a side needs to put k marks on one bed
(k = 0..9, the most a rule set allows) for each way marks can count, both
with every ring free and aiming at no ring worth more than it needs (while
an opponent could take the surplus).

    python bench/cpu_tables.py           # rewrite firmware/shove/cpu.dat
    python bench/cpu_tables.py --check   # exit 1 if the file is not what the model makes
"""
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))

from shove import throwing  # noqa: E402
from shove.cpu import ONE  # noqa: E402

DATA = ROOT / "firmware" / "shove" / "cpu.dat"
MAX_MARKS = 9  # rules.Rules refuses more
SLOTS = (throwing.R_SI, throwing.R_T, throwing.R_SO, throwing.R_D)  # the aims at a sector's rings
B_DB = 4  # ring chances: the four slots, then the bull and the outer bull
B_SB = 5
# the ways marks count, in the order the board indexes them: flat * 2 + progressive
KINDS = ((False, False), (False, True), (True, False), (True, True))


# Gauss-Legendre nodes and weights on [-1, 1], three points: exact for
# polynomials up to degree 5; on cells a spread across the tables come out
# the same, to the last 1/4096, as on cells a third as wide (every face and
# level), in a quarter of the time
_GL = ((-0.7745966692414834, 5 / 9), (0.0, 8 / 9), (0.7745966692414834, 5 / 9))


def _cells(lo, hi, most):
    """[lo, hi) cut into equal cells no wider than `most`."""
    n = max(1, int(math.ceil((hi - lo) / most)))
    w = (hi - lo) / n
    return [(lo + i * w, lo + (i + 1) * w) for i in range(n)]


def landing(f, sig, r):
    """Where a dart aimed at the point `r` mm straight above the bull lands:
    {(band, sector offset): chance}, bands as in `band` below (0..5), the
    offset counted clockwise from the aimed sector (-10..9). The 2-D normal
    is integrated over polar cells cut at every ring and sector edge (so the
    segments' edges fall between cells, never inside one), each cell no
    wider than the spread, by Gauss-Legendre in both directions."""
    edges = (0.0, f[0], f[1], f[2], f[3], f[4], f[5])
    step = sig
    far = 7 * sig
    out = {}
    c = 1 / (2 * math.pi * sig * sig)
    for b in range(6):
        for r0, r1 in _cells(edges[b], edges[b + 1], step):
            if r1 < r - far or r0 > r + far:
                continue
            rm, rh = (r0 + r1) / 2, (r1 - r0) / 2
            for o in range(-10, 10):
                t0 = (o - 0.5) * math.pi / 10
                # at most a spread along the cell's outer arc
                for a0, a1 in _cells(t0, t0 + math.pi / 10, step / max(r1, 1e-9)):
                    am, ah = (a0 + a1) / 2, (a1 - a0) / 2
                    x, y = rm * math.sin(am), rm * math.cos(am)
                    if x * x + (y - r) ** 2 > (far + rh + rm * ah) ** 2:
                        continue
                    acc = 0.0
                    for u, wu in _GL:
                        rho = rm + rh * u
                        for v, wv in _GL:
                            th = am + ah * v
                            x, y = rho * math.sin(th), rho * math.cos(th) - r
                            acc += wu * wv * rho * math.exp(-(x * x + y * y) / (2 * sig * sig))
                    k = (b, o)
                    out[k] = out.get(k, 0.0) + acc * c * rh * ah
    return out


def scatter(f, sig):
    """Per aim slot (SI, T, SO, D, then the bull): (first sector offset,
    chances of landing in each sector from it, chances of each ring), in
    1/ONE. The board works with the two apart (a sector's chance times a
    ring's), so each is the true share of the throw model's darts: the
    rings' over all darts, the sectors' over the darts that land in a
    numbered ring (integrated exactly, `landing`). A wide spread lands on
    the board's middle, where a sector is narrow, far more often than the
    aim's distance from the bull suggests: taking the sector from the
    aim's radius alone (as the tables once did) put a beginner's darts in
    the aimed sector half as often again as the model does."""
    keep = 1000 - f[6]  # the rest bounces out
    # ring index per band between edges: DB, SB, SI, T, SO, D
    band = (B_DB, B_SB, throwing.R_SI, throwing.R_T, throwing.R_SO, throwing.R_D)
    out = []
    for slot in SLOTS:
        land = landing(f, sig, throwing.aim_radius(f, slot))
        rad = [0.0] * 6
        ang = [0.0] * 20
        for (b, o), p in land.items():
            rad[band[b]] += p
            if b >= 2:
                ang[o + 10] += p
        tot = sum(ang)
        ang = [a / tot for a in ang]
        lo, hi = 0, 19
        while ang[lo] * ONE < 0.5:  # offsets nobody lands on are left out
            lo += 1
        while ang[hi] * ONE < 0.5:
            hi -= 1
        out.append([lo - 10, [int(ang[i] * ONE + 0.5) for i in range(lo, hi + 1)],
                    [int(p * keep * ONE / 1000 + 0.5) for p in rad]])
    # the bull aim: the radius alone decides the ring; sectors are equally likely
    edges = (0.0, f[0], f[1], f[2], f[3], f[4], f[5])
    rad = [0.0] * 7
    prev = 0.0
    for i in range(6):
        c = 1.0 - math.exp(-edges[i + 1] * edges[i + 1] / (2 * sig * sig))
        rad[band[i]] += c - prev
        prev = c
    out.append([-10, [ONE // 20] * 20, [int(p * keep * ONE / 1000 + 0.5) for p in rad[:6]]])
    return out


def mark_odds(sc, flat, bull):
    """For each aim at a bed's own number: chances (in 1) of 0, 1, 2, 3 marks."""
    if bull:
        rad = sc[4][2]
        one, two = rad[B_SB] / ONE, rad[B_DB] / ONE
        return [(1 - one - two, one + two, 0.0, 0.0) if flat else (1 - one - two, one, two, 0.0)]
    res = []
    for i in range(4):
        lo, ang, rad = sc[i]
        a = ang[-lo] / ONE if 0 <= -lo < len(ang) else 0.0
        s = a * (rad[throwing.R_SI] + rad[throwing.R_SO]) / ONE
        t = a * rad[throwing.R_T] / ONE
        d = a * rad[throwing.R_D] / ONE
        res.append((1 - s - t - d, s + t + d, 0.0, 0.0) if flat else (1 - s - t - d, s, d, t))
    return res


def darts_needed(sc, flat, progressive, bull, safe=False):
    """Expected darts (x16) to put k marks on one bed, k = 0..MAX_MARKS; under
    `progressive` only the darts that score nothing for the thrower count.
    `safe`: while an opponent can take the surplus, so the thrower aims at
    no ring worth more marks than it needs (the single for the last mark,
    the single or double for the last two; the bull has no other ring).
    Each entry depends only on those before it, so a game of fewer marks
    reads the start of the list."""
    odds = mark_odds(sc, flat, bull)
    most = (2,) if bull else (1, 3, 1, 2)  # SI, T, SO, D
    e = [0.0]
    for k in range(1, MAX_MARKS + 1):
        best = 1e9
        for j, p in enumerate(odds):
            if p[0] > 0.999 or safe and not flat and not bull and most[j] > k:
                continue
            acc = p[0] if progressive else 1.0
            for j in (1, 2, 3):
                acc += p[j] * e[max(0, k - j)]
            best = min(best, acc / (1 - p[0]))
        e.append(best)
    return [int(x * 16 + 0.5) for x in e]


def close_odds(sc):
    """For each aim at a bed's own number (SI, T, SO, D): chances (x ONE) of
    0, 1, 2, 3 marks there, for the close-out (cpu.Player._close)."""
    out = []
    for p in mark_odds(sc, False, False):
        q = [int(x * ONE + 0.5) for x in p[1:]]
        out.append([ONE - sum(q)] + q)
    return out


def make(level, face=throwing.DEFAULT_FACE):
    """The tables of `level` on `face`, as cpu.Player takes them."""
    sc = scatter(throwing.face(face), throwing.sigma(level))
    return [face, level, sc, [[darts_needed(sc, fl, pr, False), darts_needed(sc, fl, pr, True),
                               darts_needed(sc, fl, pr, False, True)] for fl, pr in KINDS], close_odds(sc)]


def text(face=throwing.DEFAULT_FACE):
    """The data file: one JSON line per level, level 1 first."""
    return "".join(json.dumps(make(lv, face), separators=(",", ":")) + "\n"
                   for lv in range(1, len(throwing.LEVELS) + 1))


def main():
    want = text()
    if "--check" in sys.argv:
        ok = DATA.exists() and DATA.read_text() == want
        print("%s is %s" % (DATA.relative_to(ROOT), "current" if ok else "stale: run python bench/cpu_tables.py"))
        sys.exit(0 if ok else 1)
    DATA.write_text(want)
    print("wrote %s (%d B)" % (DATA.relative_to(ROOT), len(want)))


if __name__ == "__main__":
    main()

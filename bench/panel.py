"""A panel of strong rule-following players, kept apart from the computer's
code, for the evidence that the computer plays well (bench/cpu_panel.py).

Each member is a function (game, Aims) -> the segment code to aim at for the
thrower's next dart. Every member throws with the same throw model
(throwing.throw) at the same skill as its opponent; what a member knows of
its own hand is `Aims`: how often a dart aimed at a number's single, double
or treble lands in that number's single, double and treble, measured once
per level by throwing darts with the model (as a player knows their own
game from practice).

- tips: the strategy tips of the darts adaptation, literally: close the
  awkward beds (1 and 2) first, then work round the board from where the
  last dart was aimed; count what you need before aiming at a treble: a
  treble for three, a deliberate single for one; a treble wherever the
  surplus harms nobody (the opponent has closed the bed, or gifts are off);
  keep the beds whose surplus is harmless for last; never throw a dart whose
  exact hit hands an opponent the game.
- greedy: cheapest bed first (fewest marks needed; ties by the surer hit),
  and on it the ring with the most expected marks for itself; it gifts
  freely unless the exact hit hands an opponent the game.
- blocker: denies the side nearest its win: it never gifts marks to an
  opponent as close to winning as itself, and gifts elsewhere only where it
  costs little; among the rest the bed where its expected marks are
  highest, preferring beds the leading opponent has closed (where nothing
  can be given away).
- cautious: never gifts at all: on a bed an opponent still needs it aims
  at a ring that cannot carry more than it needs; trebles only where every
  opponent has closed the bed or gifts are off.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))

from shove import rules, segments, throwing  # noqa: E402

S, D, T = 0, 3, 4  # code offsets of the single (outer, the larger), double and treble


def code(num, off):
    return segments.DB if num == 25 else 3 + (num - 1) * 5 + off


class Aims:
    """A thrower's own odds: for an aim at the single, double or treble of a
    number, the chance that the dart scores 0, 1, 2 or 3 marks on that
    number (measured with the throw model), and for the bull's centre the
    chance of 0, 1 or 2 marks on 25."""

    _cache = {}

    def __init__(self, level, face=throwing.DEFAULT_FACE, darts=6000):
        key = (level, face)
        if key not in Aims._cache:
            f = throwing.face(face)
            sig = throwing.sigma(level)
            rng = throwing.Rng(977 + level)
            odds = {}
            for off in (S, D, T):
                c = [0, 0, 0, 0]
                aim = code(20, off)
                for _ in range(darts):
                    hit = throwing.throw(f, sig, aim, rng)
                    if segments.number(hit) == 20:
                        c[segments.ring_marks(hit)] += 1
                    else:
                        c[0] += 1
                odds[off] = [x / darts for x in c]
            c = [0, 0, 0, 0]
            for _ in range(darts):
                hit = throwing.throw(f, sig, segments.DB, rng)
                c[2 if hit == segments.DB else 1 if hit == segments.SB else 0] += 1
            odds["bull"] = [x / darts for x in c]
            Aims._cache[key] = odds
        self.odds = Aims._cache[key]

    def own(self, num, off, need, flat=False):
        """Expected marks for itself of an aim at ring `off` of `num` when it needs `need`."""
        p = self.odds["bull"] if num == 25 else self.odds[off]
        if flat:
            return 1 - p[0] if need else 0.0
        return sum(p[k] * min(k, need) for k in (1, 2, 3))

    def surplus(self, num, off, need, flat=False):
        """Expected marks beyond `need` (what the rules may gift)."""
        if flat:
            return (1 - (self.odds["bull"] if num == 25 else self.odds[off])[0]) if not need else 0.0
        p = self.odds["bull"] if num == 25 else self.odds[off]
        return sum(p[k] * max(0, k - need) for k in (1, 2, 3))


def _exact(g, c):
    """What the exact hit `c` does, by the referee: (gifts [(side, marks)],
    hands an opponent the game, the thrower wins)."""
    me = g.turn
    before = g.pending
    _, _, gifts, _ = g.throw(c)
    try:
        won = g.winner == me
        hands = (g.phase == rules.OVER and g.winner != me) or bool(g.pending & ~before & ~(1 << me))
        return gifts, hands, won
    finally:
        g.undo()


def _dead(g):
    """A target that scores nothing under these rules (a dart thrown away)."""
    beds = g.rules.beds
    for n in (20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9):
        if n not in beds:
            return code(n, S)
    return segments.SB if 25 not in beds else segments.MISS


def _harmless(g, bi):
    """Nobody can take surplus marks on bed `bi`: gifts off, or every opponent closed it."""
    if g.n == 1 or g.rules.gift == rules.GIFT_OFF:
        return True
    return all(g.need(s, bi) == 0 for s in range(g.n) if s != g.turn)


def _open(g):
    me = g.turn
    return [i for i in range(g.nb) if g.need(me, i)]


def _first_safe(g, choices):
    """The first (bed index, offset) whose exact hit does not hand an opponent the game."""
    beds = g.rules.beds
    for bi, off in choices:
        c = code(beds[bi], off)
        if not _exact(g, c)[1]:
            return c
    return _dead(g)


def _rings(g, bi):
    n = g.rules.beds[bi]
    if n == 25:
        return (D,)
    return (T, D, S)


# ---- the members ----------------------------------------------------------------------
_last = {}  # id(game) -> the number the thrower aimed at last (tips: batch by geography)


def tips(g, aims):
    me = g.turn
    beds = g.rules.beds
    op = _open(g)
    if not op:
        return _dead(g)
    prev = _last.get((id(g), me))
    # the order the tips give: the awkward beds (1 and 2) first; then the bed
    # nearest on the board to the last aim; the beds whose surplus is
    # harmless last of all (finish where gifting cannot hurt)
    def dist(bi):
        n = beds[bi]
        if prev is None or n == 25 or prev == 25:
            return 0 if prev == n else 10
        a = throwing.POS[n] - throwing.POS[prev]
        return min(a % 20, -a % 20)

    def key(bi):
        n = beds[bi]
        return (_harmless(g, bi) and len(op) > 1, n not in (1, 2), dist(bi), n)

    order = sorted(op, key=key)
    choices = []
    for bi in order:
        need = g.need(me, bi)
        if beds[bi] == 25:
            choices.append((bi, D))
            continue
        if g.rules.flat:
            choices.append((bi, S))
            continue
        if need >= 3 or _harmless(g, bi):
            choices.append((bi, T))
        elif need == 1:
            choices.append((bi, S))  # a deliberate single when one mark is enough
        else:
            # two short: a treble gifts one; the tips say look at the opponent's
            # board: not when that mark closes the opponent's bed
            gifts = _exact(g, code(beds[bi], T))[0]
            closes = any(g.need(s, bi) <= k for s, k in gifts)
            choices.append((bi, S if closes else T))
        choices.append((bi, S))
    c = _first_safe(g, choices)
    _last[(id(g), me)] = segments.number(c) or 25
    return c


def _aims(g):
    """Every aim at an open bed of the thrower: (bed index, ring offset, number, marks it needs there)."""
    me = g.turn
    beds = g.rules.beds
    for bi in _open(g):
        need = g.need(me, bi)
        for off in _rings(g, bi):
            yield bi, off, beds[bi], need


def _best(g, cands):
    """The first safe aim of `cands` [(key, bed index, ring offset)] by key, highest first."""
    if not cands:
        return _dead(g)
    cands.sort(reverse=True)
    return _first_safe(g, [(bi, off) for _, bi, off in cands])


def greedy(g, aims):
    flat = g.rules.flat
    # fewest marks needed first, then the most expected marks, then the lowest bed and ring
    # offset (the keys are negated: _best takes the highest first)
    return _best(g, [((-need, aims.own(num, off, need, flat), -bi, -off), bi, off) for bi, off, num, need in _aims(g)])


def _missing(g, s):
    return g.missing(s)


def blocker(g, aims):
    me = g.turn
    flat = g.rules.flat
    mine = _missing(g, me)
    opps = [s for s in range(g.n) if s != me]
    # the opponent nearest its win
    lead = min(opps, key=lambda s: _missing(g, s)) if opps else None
    cands = []
    for bi, off, num, need in _aims(g):
        e = aims.own(num, off, need, flat)
        sur = aims.surplus(num, off, need, flat)
        cost = 0.0
        if sur and not _harmless(g, bi):
            gifts, hands, _ = _exact(g, code(num, off))
            if hands:
                continue
            for s, k in gifts:
                # a gift to a side as near its win as the blocker is denied outright;
                # to one further behind it costs in proportion to how near it is
                if _missing(g, s) <= mine:
                    cost = 9.0
                else:
                    cost += sur * 3.0 / (1 + _missing(g, s) - mine)
        shut = lead is not None and g.need(lead, bi) == 0
        cands.append((e - cost + (0.05 if shut else 0.0), bi, off))
    return _best(g, cands)


def cautious(g, aims):
    flat = g.rules.flat
    cands = []
    for bi, off, num, need in _aims(g):
        most = 1 if flat else 2 if num == 25 and off == D else (3, 0, 0, 2, 3)[off] if off != S else 1
        if most > need and not _harmless(g, bi):
            continue  # it could carry a surplus an opponent takes
        cands.append((aims.own(num, off, need, flat), bi, off))
    return _best(g, cands)


MEMBERS = {"tips": tips, "greedy": greedy, "blocker": blocker, "cautious": cautious}


def forget(g):
    """Drop what the panel remembers of game `g` (the last aims)."""
    for k in [k for k in _last if k[0] == id(g)]:
        del _last[k]


# The computer player's strategy: where to aim the next dart.
#
# For every target it could aim at (each ring of each bed, one dead number,
# the bull) it weighs where a dart of its own level lands (the scatter of
# the throw model, tabulated once per level) by how good the game is after
# it. The game after a dart is found by the referee itself (throw, look,
# undo), so every rule variation is played exactly: gift next/all/off, the
# pub rule, pending wins, breaks, flat, 1-mark games, 25 as a bed. "How
# good" is an estimate of the chance to win from the darts each side still
# needs (a table per level and rule set) and whose turn it is. A target
# whose exact hit would hand an opponent the game is never chosen while
# another target would not. Arithmetic in the hot loops is on small ints.
import math

from shove import board_geom, rules, segments, throwing

ORDER = board_geom.ORDER
POS = board_geom.POS
ONE = 4096  # probabilities in 1/4096
SLOTS = (board_geom.R_SI, board_geom.R_T, board_geom.R_SO, board_geom.R_D)
SLOT_CODE = (1, 4, 0, 3)  # code offsets (segments: S SI SO D T) of the aims SI, T, S (outer), D
# rad[] index: the four slots, then the bull, the outer bull, off the board
B_DB = 4
B_SB = 5
B_OFF = 6
# logistic 1000/(1+exp(-x/4)) for x = -32..32
WIN = 1000


def _logistic_table():
    t = []
    for i in range(-32, 33):
        t.append(int(1000 / (1 + math.exp(-i / 4.0)) + 0.5))
    return tuple(t)


_SIG = _logistic_table()


def _phi(x):
    """Standard normal CDF (Abramowitz and Stegun 7.1.26: error below 1.5e-7)."""
    z = abs(x) / 1.4142135623730951
    t = 1.0 / (1.0 + 0.3275911 * z)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * math.exp(-z * z)
    return 0.5 * (1.0 + y) if x >= 0 else 0.5 * (1.0 - y)


def _scatter(f, sig):
    """Per aim slot: (angular spread over sector offsets -K..K, ring chances),
    both in 1/ONE, and for the bull aim its ring chances. The scatter is taken
    as independent along the radius and across it (exact at the bull)."""
    keep = 1000 - f[6]  # the rest bounces out
    edges = (0.0, f[0], f[1], f[2], f[3], f[4], f[5])
    # ring index per band between edges: DB, SB, SI, T, SO, D
    band = (B_DB, B_SB, board_geom.R_SI, board_geom.R_T, board_geom.R_SO, board_geom.R_D)
    out = []
    for slot in SLOTS:
        r = board_geom.aim_radius(f, slot)
        rad = [0.0] * 7
        for i in range(6):
            a, b = edges[i], edges[i + 1]
            # |radial position| in [a, b): the far side of the bull folds back
            p = _phi((b - r) / sig) - _phi((a - r) / sig) + _phi((-a - r) / sig) - _phi((-b - r) / sig)
            rad[band[i]] += p
        s = sig / r * (10 / math.pi)  # sectors
        ang = []
        for o in range(-10, 10):
            p = 0.0
            for w in (-20, 0, 20):
                p += _phi((o + w + 0.5) / s) - _phi((o + w - 0.5) / s)
            ang.append(p)
        lo = 0
        hi = 19
        while ang[lo] * ONE < 0.5:  # offsets nobody lands on are left out
            lo += 1
        while ang[hi] * ONE < 0.5:
            hi -= 1
        ai = [int(ang[i] * ONE + 0.5) for i in range(lo, hi + 1)]
        ri = [int(p * keep * ONE / 1000 + 0.5) for p in rad[:6]]
        out.append((lo - 10, ai, ri))
    # the bull aim: the radius alone decides the ring; sectors are equally likely
    rad = [0.0] * 7
    prev = 0.0
    for i in range(6):
        c = 1.0 - math.exp(-edges[i + 1] * edges[i + 1] / (2 * sig * sig))
        rad[band[i]] += c - prev
        prev = c
    out.append((0, None, [int(p * keep * ONE / 1000 + 0.5) for p in rad[:6]]))
    return out


class Player:
    """A computer thrower of `level` (1..6) on a board `face`."""

    def __init__(self, level=3, face=board_geom.DEFAULT_FACE):
        self.level = level
        self.sigma = throwing.sigma(level)
        self.face = board_geom.face(face)
        self.scatter = _scatter(self.face, self.sigma)
        self._key = None  # the rules the darts-needed tables were made for

    # ---- how many darts a side still needs ------------------------------------------
    def _tables(self, r):
        key = (r.marks, r.flat, r.progressive)
        if key == self._key:
            return
        self._key = key
        self.e_num = self._darts_needed(r, False)
        self.e_bull = self._darts_needed(r, True)

    def _mark_odds(self, r, bull):
        """For each aim at a bed's own number: chances (in 1) of 0, 1, 2, 3 marks."""
        res = []
        if bull:
            rad = self.scatter[4][2]
            one, two = rad[B_SB] / ONE, rad[B_DB] / ONE
            res.append((1 - one - two, one + two, 0.0, 0.0) if r.flat else (1 - one - two, one, two, 0.0))
            return res
        for i in range(4):
            lo, ang, rad = self.scatter[i]
            a = ang[-lo] / ONE if 0 <= -lo < len(ang) else 0.0
            s = a * (rad[board_geom.R_SI] + rad[board_geom.R_SO]) / ONE
            t = a * rad[board_geom.R_T] / ONE
            d = a * rad[board_geom.R_D] / ONE
            if r.flat:
                res.append((1 - s - t - d, s + t + d, 0.0, 0.0))
            else:
                res.append((1 - s - t - d, s, d, t))
        return res

    def _darts_needed(self, r, bull):
        """Expected darts (x16) to put k marks on one bed, k = 0..marks; under
        `progressive` only the darts that score nothing for the thrower count."""
        odds = self._mark_odds(r, bull)
        e = [0.0]
        for k in range(1, r.marks + 1):
            best = 1e9
            for p in odds:
                if p[0] > 0.999:
                    continue
                acc = p[0] if r.progressive else 1.0
                for j in (1, 2, 3):
                    acc += p[j] * e[max(0, k - j)]
                v = acc / (1 - p[0])
                if v < best:
                    best = v
            e.append(best)
        return [int(x * 16 + 0.5) for x in e]

    def remaining(self, g, side):
        """Expected darts (x16) `side` needs to close every bed."""
        m = g.rules.marks
        beds = g.rules.beds
        base = side * g.nb
        t = 0
        for i in range(g.nb):
            k = m - g.marks[base + i]
            if k:
                t += self.e_bull[k] if beds[i] == 25 else self.e_num[k]
        return t

    # ---- how good a position is for `me` ----------------------------------------------
    def value(self, g, me):
        """0..1000: an estimate of `me`'s chance to win, `me` being the side that threw last."""
        if g.phase == rules.OVER:
            return WIN if g.winner == me else 0
        r = g.rules
        mine = self.remaining(g, me)
        dl = g.darts_left if g.phase == rules.PLAY and g.turn == me else 0
        if g.pending & ~(1 << me):
            # an opponent has won unless `me` closes out with the darts left
            return _sig((dl * 16 - mine) * 2 // 3)
        n = g.n
        if n == 1:
            return WIN * 1600 // (1600 + mine)
        scale = 48 + mine // 8  # the spread of the finish, x16 darts
        v = WIN
        D = r.darts
        for d in range(1, n):
            s = (me + d) % n
            adv = self.remaining(g, s) - mine + 16 * dl - 16 * D + 16 * d * D // n
            v = v * _sig(adv * 4 // scale) // WIN
        return v

    # ---- choosing a target ---------------------------------------------------------------
    def _outcomes(self, g, me):
        """Value after each kind of dart: dead, and per bed a single, double
        and treble; plus which of those newly give an opponent the game."""
        r = g.rules
        nb = g.nb
        before = g.pending
        v1 = [0] * nb
        v2 = [0] * nb
        v3 = [0] * nb
        bad = 0  # bit 3*bed+k-1: that hit gives an opponent the game
        for i in range(nb):
            n = r.beds[i]
            for k in (1, 2, 3):
                if n == 25:
                    if k == 3:
                        v3[i] = v2[i]
                        break
                    code = segments.SB if k == 1 else segments.DB
                elif r.flat and k > 1:
                    (v2 if k == 2 else v3)[i] = v1[i]
                    if bad & (1 << (3 * i)):
                        bad |= 1 << (3 * i + k - 1)
                    continue
                else:
                    code = 3 + (n - 1) * 5 + (0, 0, 3, 4)[k]
                v, lost = self._try(g, code, me, before)
                (v1, v2, v3)[k - 1][i] = v
                if lost:
                    bad |= 1 << (3 * i + k - 1)
        dead, _ = self._try(g, segments.MISS, me, before)
        return dead, v1, v2, v3, bad

    def _try(self, g, code, me, before):
        g.throw(code)
        try:
            v = self.value(g, me)
            lost = (g.phase == rules.OVER and g.winner != me) or bool(g.pending & ~before & ~(1 << me))
        finally:
            g.undo()
        return v, lost

    def choose(self, g):
        """The segment code to aim at for the thrower's next dart."""
        return self.rank(g)[0]

    def rank(self, g):
        """(best code, its expected value, every candidate as (value, code, gives_game))."""
        if g.phase == rules.BULL_OFF:
            return segments.DB, 0, []
        r = g.rules
        self._tables(r)
        me = g.turn
        dead, v1, v2, v3, bad = self._outcomes(g, me)
        bedidx = bytearray(26)  # number -> bed index + 1
        for i in range(g.nb):
            bedidx[r.beds[i]] = i + 1
        cands = []
        for num in range(1, 21):
            slots = (0, 1, 2, 3) if bedidx[num] else (2,)
            for slot in slots:
                lo, ang, rad = self.scatter[slot]
                p0 = POS[num] + lo
                ev = 0
                live = 0
                rs = rad[board_geom.R_SI] + rad[board_geom.R_SO]
                rt = rad[board_geom.R_T]
                rd = rad[board_geom.R_D]
                for j in range(len(ang)):
                    b = bedidx[ORDER[(p0 + j) % 20]]
                    if b:
                        a = ang[j]
                        ps = a * rs >> 12
                        pt = a * rt >> 12
                        pd = a * rd >> 12
                        ev += ps * v1[b - 1] + pt * v3[b - 1] + pd * v2[b - 1]
                        live += ps + pt + pd
                b = bedidx[25]
                if b:
                    ev += rad[B_SB] * v1[b - 1] + rad[B_DB] * v2[b - 1]
                    live += rad[B_SB] + rad[B_DB]
                ev += (ONE - live) * dead
                i = bedidx[num] - 1
                gives = i >= 0 and bad & (1 << (3 * i + (0, 2, 0, 1)[slot])) != 0
                cands.append((ev // ONE, 3 + (num - 1) * 5 + SLOT_CODE[slot], gives))
        # the bull aim
        rad = self.scatter[4][2]
        b = bedidx[25]
        ev = 0
        live = 0
        for slot in SLOTS:
            p = rad[slot]  # spread evenly over the twenty numbers
            for num in range(1, 21):
                i = bedidx[num]
                if i:
                    q = p // 20
                    ev += q * (v3 if slot == board_geom.R_T else v2 if slot == board_geom.R_D else v1)[i - 1]
                    live += q
        if b:
            ev += rad[B_SB] * v1[b - 1] + rad[B_DB] * v2[b - 1]
            live += rad[B_SB] + rad[B_DB]
        ev += (ONE - live) * dead
        gives = b and bad & (1 << (3 * (b - 1) + 1)) != 0
        cands.append((ev // ONE, segments.DB, bool(gives)))
        safe = [c for c in cands if not c[2]]
        pool = safe or cands
        best = pool[0]
        for c in pool:
            if c[0] > best[0]:
                best = c
        return best[1], best[0], cands


def _sig(x):
    if x <= -32:
        return _SIG[0]
    if x >= 32:
        return _SIG[64]
    return _SIG[x + 32]


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

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
import json
import math
from array import array

from shove import Refused, cpuloops, rules, segments, throwing, ticks_diff

ONE = 4096  # probabilities in 1/4096
WIN = cpuloops.WIN
# logistic WIN/(1+exp(-x/4)) for x = -32..32
_SIG = tuple(int(WIN / (1 + math.exp(-i / 4.0)) + 0.5) for i in range(-32, 33))


class Player:
    """A computer thrower of `level` (1..6). Its tables (`tables`: as a line
    of cpu.dat) are the board face's, made on the host by bench/cpu_tables.py."""

    def __init__(self, level=3, tables=None):
        self.sigma = throwing.sigma(level)  # refuses a level outside 1..6
        # _co: per aim slot (SI, T, S, D), the chance x ONE of 0..3 marks on the aimed bed (_close)
        face, lv, self.scatter, self._e, self._co = tables or _load(level)
        if lv != level:
            raise ValueError("cpu.dat: level %d found" % lv)
        # per aim slot, for cpuloops.dot: the chances, how many, the bias
        # its sum carries, and the first sector's offset
        self._ang = [(array("H", a), len(a), sum(a) * cpuloops.BIAS, lo) for lo, a, _ in self.scatter]
        self.level = level
        # what a gifted mark costs, as a multiple of the darts it saves the
        # taker: a steady hand gifts only by choice, and three times held it
        # level with the panel's blocker at level 6 (less lost there); a
        # beginner's darts land anywhere, and weighed three times the gifts
        # drove it off its own beds (level 1 against the cautious player:
        # 44.6 % at three times, 53.6 % at once, 500 games each)
        self._gw = (1, 2, 3, 3, 3, 3)[level - 1]  # cpuloops.after
        self.face = throwing.face(face)
        self._key = -1  # the way marks count the darts-needed tables are for
        self._v = []
        self._bad = bytearray(0)
        self._cnt = None  # sides open on each bed (_open)
        self._tabs = []  # each bed's darts table (_open)
        self._col = bytearray(0)  # the opponents' needs on a bed (_outcomes)
        self._mm = [0] * 16  # values of darts that gift nothing, after their keys (_outcomes)

    # ---- how many darts a side still needs ------------------------------------------
    def _tables(self, r):
        key = r.flat * 2 + r.progressive
        if key != self._key:
            self._key = key
            self.e_num, self.e_bull, self.e_safe = self._e[key]

    def _open(self, g):
        """The marks each side still misses (a list); self._cnt[bed]: how
        many sides have the bed open, when gifts go anywhere (else None:
        every ring is free); and self._tabs[bed]: the darts table every side
        is counted with on that bed (as it stands before the next dart). A
        side open on a bed that another side also has open aims no higher
        than it needs there: its darts for the bed come from the safe table.
        This is the one place that choice is made (after _tables)."""
        nb = g.nb
        r = g.rules
        m = r.marks
        marks = g.marks
        cnt = None if g.n < 2 or r.gift == rules.GIFT_OFF else bytearray(nb)
        self._cnt = cnt
        miss = []
        self._pk = pk = []  # each side's beds needing 1, 2, 3 marks, 4 bits a count (_close)
        c = 0
        for _ in range(g.n):
            t = 0
            q = 0
            for i in range(nb):
                k = m - marks[c]
                if k:
                    t += k
                    q += 1 << 4 * k - 4
                    if cnt:
                        cnt[i] += 1
                c += 1
            miss.append(t)
            pk.append(q)
        tabs = self._tabs
        if len(tabs) != nb:
            tabs = self._tabs = [None] * nb
        beds = r.beds
        en = self.e_num
        es = self.e_safe
        for i in range(nb):
            tabs[i] = self.e_bull if beds[i] == 25 else es if cnt and cnt[i] > 1 else en
        return miss

    # ---- how good a position is for `me` ----------------------------------------------
    def _order(self, me, rem, n, D):
        """The opponents in throwing order and, for the value below, the darts
        (x16) each needs plus how far it is behind in turn."""
        self._opp = opp = []
        self._rb = rb = []
        for d in range(1, n):
            s = (me + d) % n
            opp.append(s)
            rb.append(rem[s] + 16 * d * D // n)
        self._dd = 16 * D

    _after = cpuloops.after  # (self, mine, left, sur, e, pend): cpuloops.py
    _sig = _SIG  # the logistic's points, for cpuloops.after

    # ---- choosing a target ---------------------------------------------------------------
    def _outcomes(self, g, me):
        """self._v[3*bed + k-1]: value after a dart of k marks on a bed;
        self._bad[bed] bit k-1: that hit hands an opponent the game (bit 3:
        so does a dead dart). Returns the value after a dead dart. Each dart
        is worked out here as the referee scores it (own marks, surplus to
        the opponents by the gift rule, the pub rule's withheld last mark,
        pending wins, breaks); tests/test_cpu_properties.py checks every
        value against the referee itself."""
        r = g.rules
        nb = g.nb
        n = g.n
        if len(self._bad) != nb:
            self._v = [0] * (3 * nb)
            self._bad = bytearray(nb)
        v = self._v
        bad = self._bad
        marks = g.marks
        miss = self._open(g)
        m = r.marks
        beds = r.beds
        # each bed's darts table (_open), the thrower's and a gift's taker's
        # alike; remaining() for every side, in one pass
        tabs = self._tabs
        rem = []
        c = 0
        for s in range(n):
            t = 0
            for i in range(nb):
                k = m - marks[c]
                if k:
                    t += tabs[i][k]
                c += 1
            rem.append(t)
        pend = g.pending
        other = pend & ~(1 << me)
        gifts = n > 1 and r.gift != rules.GIFT_OFF
        self._order(me, rem, n, r.darts)
        # what _after reads for the gift, in the opponents' order
        opp = self._opp
        col = self._col
        if len(col) != n - 1:
            col = self._col = bytearray(n - 1)
        self._miss = miss
        self._pub = not r.win_by_gift
        self._nxt = r.gift == rules.GIFT_NEXT
        flat = r.flat
        prog = r.progressive
        dl = g.darts_left
        mine = rem[me]
        after = self._after
        # values of darts that gift nothing, which depend on the thrower's
        # darts and the darts left alone: a few such pairs in a decision
        mm = self._mm
        nm = 0
        for i in range(nb):
            bed = beds[i]
            e = tabs[i]
            need = m - marks[me * nb + i]
            was_me = e[need]
            # the opponents' needs on this bed (top: the most any needs): a
            # hit whose surplus fills every one of them is worth what the
            # next smaller one is, when that one's surplus fills them too
            top = 0
            if gifts:
                for d in range(n - 1):
                    c = m - marks[opp[d] * nb + i]
                    col[d] = c
                    if c > top:
                        top = c
            bad[i] = 0
            for k in (1, 2, 3):
                j = 3 * i + k - 1
                if bed == 25 and k == 3 or flat and k > 1 or k > need and k > 1 and k - 1 - need >= top:
                    v[j] = v[j - 1]  # no treble bull; flat: every ring one mark; or the same gift
                    if bad[i] & (1 << (k - 2)):
                        bad[i] |= 1 << (k - 1)
                    continue
                own = k if k < need else need
                if own == miss[me]:
                    v[j] = WIN  # the thrower closes its last bed: an outright win
                    continue
                left = dl - (0 if prog and own else 1)
                sur = k - own if top else 0
                mn = mine + e[need - own] - was_me
                if sur:
                    x = after(mn, left, sur, e, other)
                    new = self.new
                else:  # no gift: the value depends on the thrower's darts alone
                    key = mn * 16 + left  # left: at most 9 darts a visit
                    q = 0
                    while q < nm and mm[q] != key:
                        q += 1
                    if q < nm:
                        x = mm[q + 8]
                    else:
                        x = after(mn, left, 0, e, other)
                        if nm < 8:
                            mm[nm] = key
                            mm[nm + 8] = x
                            nm += 1
                    new = 0
                if left == 0 and (other or new):
                    v[j] = 0  # the visit ends with an opponent's win pending
                    bad[i] |= 1 << (k - 1)
                else:
                    v[j] = x
                    if new & ~pend:
                        bad[i] |= 1 << (k - 1)
        # a dead dart is always used up
        self._dead_bad = dl == 1 and other != 0
        if self._dead_bad:
            return 0
        return after(mine, dl - 1, 0, None, other)

    # ---- the finish: the best chance to close out within the visit -----------------------
    def _close(self, n, d):
        """The chance x ONE of closing every bed within d darts, times 64,
        plus the aim that gets it (need x 4 + slot), from n: the counts of
        beds needing 1, 2 and 3 marks, 4 bits each. A dynamic programme
        over those counts, each aim's own marks only (a dart of m marks on
        a bed needing k moves one bed from k to k - m)."""
        if not n:
            return ONE << 6
        if (n & 15) + (n >> 4 & 15) + (n >> 8) > d:
            return 0  # a dart closes one bed at most
        cm = self._cm
        key = n << 4 | d  # (a visit has at most 9 darts: n * 4 + d let 4 or more run into the next n's keys)
        if key in cm:
            return cm[key]
        best = 0
        z = self._close(n, d - 1) >> 6  # after a dart that scores nothing, whatever it aimed at
        for a in range(4, 16):
            k = a >> 2
            if n >> 4 * k - 4 & 15:
                p = self._co[a & 3]
                b = n - (1 << 4 * k - 4)
                acc = p[0] * z
                q = 0
                for m in (1, 2, 3):
                    if m < k:
                        acc += p[m] * (self._close(b + (1 << 4 * (k - m) - 4), d - 1) >> 6)
                    else:
                        q += p[m]  # the bed closed, whatever the surplus
                acc += q * (self._close(b, d - 1) >> 6)
                acc = acc >> 12 << 6 | a
                if acc > best:
                    best = acc
        cm[key] = best
        return best

    def choose(self, g):
        """The segment code to aim at for the thrower's next dart."""
        return self.rank(g, False)[0]

    def rank(self, g, every=True):
        """(best code, its expected value 0..WIN, and when `every` each
        candidate as (value, code, its exact hit hands an opponent the game))."""
        if g.phase == rules.BULL_OFF:
            return segments.DB, 0, []
        r = g.rules
        self._tables(r)
        dead = self._outcomes(g, g.turn)
        v = self._v
        bad = self._bad
        order = throwing.ORDER
        bias = cpuloops.BIAS
        pos = throwing.POS
        bedidx = bytearray(26)  # number -> bed index + 1
        for i in range(g.nb):
            bedidx[r.beds[i]] = i + 1
        bull = bedidx[25]
        # Per aim slot, what a landing in each sector is worth over a dead
        # dart (its rings' chances times the value after each kind of hit),
        # laid out twice round from ten sectors back (entry j is sector
        # j - 10, modulo 20): a window's offsets run -10..9
        # (bench/cpu_tables.py), so it needs no modulo. An aim's value is
        # then one multiply-add per sector it can reach (cpuloops.dot, which
        # reads each value plus its BIAS).
        global _W
        if _W is None:
            _W = ([array("H", bytes(80)) for _ in range(5)], [0] * 5)
        w, bw = _W
        for slot in range(5):
            lo, ang, rad = self.scatter[slot]
            rs = rad[0] + rad[2]
            rt = rad[1]
            rd = rad[3]
            ws = w[slot]
            for q in range(20):
                b = bedidx[order[q]]
                if b:
                    b = 3 * b - 3
                    x = rs * (v[b] - dead) + rd * (v[b + 1] - dead) + rt * (v[b + 2] - dead) >> 12
                else:
                    x = 0
                x += bias
                ws[q + 10] = x
                ws[q - 10 if q >= 10 else q + 30] = x
            # what the bull adds (outer bull, bull), x ONE, less the bias of cpuloops.dot's sum
            x = rad[5] * (v[3 * bull - 3] - dead) + rad[4] * (v[3 * bull - 2] - dead) >> 12 if bull else 0
            bw[slot] = (x << 12) - self._ang[slot][2]
        cands = [] if every else None
        # The finish: when an opponent may win at its next visit (its chance
        # of closing out then, by this player's hand, at least a fifth; or
        # its win pending) and the thrower can still close out now, the aim
        # with the best chance to close out in this visit (fin: need x 4 +
        # slot) beats the race's value. In the exact race model of
        # bench/race_ceiling.py (level 6, no gifts, against the cautious
        # player) it takes the computer from 49.7 to 51.0 %; the best any
        # play can do there is 51.6 %.
        fin = -1
        if not (self._key or r.marks > 3 or bull):  # _key: flat or progressive (_tables)
            self._cm = {}
            pk = self._pk  # (_open)
            hit = g.pending  # only others' wins wait during the thrower's visit
            for s in range(g.n):
                if not hit and s != g.turn and (self._close(pk[s], r.darts) >> 6) * 5 >= ONE:
                    hit = 1
            c = self._close(pk[g.turn], g.darts_left)
            if hit and c > 63:
                fin = c & 63
        fin_ev = -ONE * WIN - 1
        fin_code = -1
        dot = cpuloops.dot
        angs = self._ang
        best = -ONE * WIN - 1
        best_code = 0
        best_safe = -ONE * WIN - 1
        safe_code = 0
        for num in range(21):  # 0: the bull
            bi = bedidx[num] - 1 if num else bull - 1
            for slot in (0, 1, 2, 3) if bi >= 0 and num else (2,) if num else (4,):
                a, na, _, lo = angs[slot]
                ev = dot(a, w[slot], pos[num] + lo + 10, na) + bw[slot]  # x ONE, over a dead dart's value
                # code offsets (segments: S SI SO D T) of the aims SI, T, S (outer), D
                code = 3 + (num - 1) * 5 + (1, 4, 0, 3)[slot] if num else segments.DB
                # the exact hit's bit in bad[]: a single, treble, single, double; the bull's double
                gives = bad[bi] & (1 << (0, 2, 0, 1, 1)[slot]) != 0 if bi >= 0 else self._dead_bad
                if every:
                    cands.append((ev, code, gives))
                if ev > best:
                    best = ev
                    best_code = code
                if not gives and ev > best_safe:
                    best_safe = ev
                    safe_code = code
                if fin >= 0 <= bi and not gives and ev > fin_ev and fin == (r.marks - g.marks[g.turn * g.nb + bi]) * 4 + slot:
                    fin_ev = ev
                    fin_code = code
        # values over a dead dart, x ONE: compared unrounded, reported in 0..WIN
        if fin_code >= 0:
            return fin_code, fin_ev // ONE + dead, cands
        if best_safe > -ONE * WIN:
            return safe_code, best_safe // ONE + dead, cands
        return best_code, best // ONE + dead, cands


_players = {}  # type: dict  # level -> Player: its tables are read once
_W = None  # rank's work space, shared by every player (one decision at a time)


def _load(level):
    """Level `level`'s line of the data file beside this module (a module
    loaded from a .mpy has __file__ too: py/builtinimport.c)."""
    with open(__file__.rsplit("/", 1)[0] + "/cpu.dat") as f:
        for _ in range(level):
            line = f.readline()
    return json.loads(line)


def player(level):
    p = _players.get(level)
    if p is None:
        p = _players[level] = Player(level)
    return p


# ---- the board as a player ------------------------------------------------------------
# When a side is a computer, the board throws its visit itself, one dart at a
# time at the configured pace (`cpu_ms`), and makes its player change. Each
# dart is stored and reported like any other (`dart` event, "src": "cpu"), so
# undo and a power cut treat it like a person's. The dart is drawn from the
# throw model with a generator seeded by the game's seed and its move count:
# after an undo or a reboot the same position gives the same dart, and a test
# can predict every one. The app imports this module only for such games.
UNDO_PAUSE = 3  # after an undo, wait this many paces: time for another undo
RETRY_MS = 1000  # after a step the flash refused, the least wait before the next try


class Autoplay:
    def __init__(self):
        self.game = None  # the game the clock below belongs to
        self.moves = 0
        self.since = 0
        self.wait = 0
        self.rng = None

    def step(self, keeper, now):
        """The game's keeper (shove/keeper.py) plays through it."""
        g = keeper.game
        if g is None:
            self.game = None
            return
        m = g.moves()
        pace = keeper.config["cpu_ms"]
        if g is not self.game or m != self.moves:
            # the game moved (whoever's turn it is): the pace starts again,
            # longer after an undo
            self.wait = pace * UNDO_PAUSE if g is self.game and m < self.moves else pace
            self.game = g
            self.moves = m
            self.since = now
            return
        if g.phase == rules.OVER or not g.cpu[g.turn] or ticks_diff(now, self.since) < self.wait:
            return
        self.since = now  # a refused step is tried again a pace later
        try:
            if g.phase == rules.HOLD:
                keeper.advance()
            else:
                keeper.announce(keeper.throw(self.dart(g), "cpu"))
        except Refused as e:  # the flash refused: nothing happened
            keeper.emit("refused", {"src": "cpu", "error": e.code, "msg": e.msg})
            if self.wait < RETRY_MS:  # a refusal a second, not one a slice
                self.wait = RETRY_MS
            return
        # its own move, counted now: an undo that comes before the next step
        # must still find the count lower and wait the longer pause
        self.moves = g.moves()
        self.wait = pace

    def dart(self, g):
        """Where the computer's next dart lands (a segment code)."""
        p = player(g.cpu[g.turn])
        aim = p.choose(g)
        if self.rng is None:
            self.rng = throwing.Rng()
        self.rng.seed(g.seed + 7919 * g.moves())
        return throwing.throw(p.face, p.sigma, aim, self.rng)  # on the face its tables are for

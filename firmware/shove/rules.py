# The Shove Ha'penny referee: a compact state machine that fits a microcontroller.
#
# State is a handful of small ints plus one bytearray of marks (side x bed).
# Every action (a dart or a `next`) appends one byte to `actions` (the journal
# replays these after a power cut) and one undo record of a few bytes to
# `_undo`, so undo is exact and needs no replay.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import segments
# the variants and limits a request is checked against, shared with the checks (shove/newgame.py)
from shove.variants import (BED_CHOICES, GIFTS, MAX_LEVEL, MAX_MEMBERS, MAX_NAME, MAX_SIDES, PHASES, RULE_KEYS,
                            VARIANTS, RuleError)

BULL_OFF = const(0)
PLAY = const(1)
HOLD = const(2)
OVER = const(3)

GIFT_NEXT = const(0)
GIFT_ALL = const(1)
GIFT_OFF = const(2)

NEXT_ACTION = const(255)  # action byte for `next`; darts use their segment code
NO_WINNER = const(255)
_FIELDS = const(7)  # the header fields an undo record may restore (Game._header; view.undo)
# ... each named here (by its bit in the record's mask); field 1 is the
# member of the side whose turn it was, an item of `member`, not an attribute
# (view.undo reads them as Game.HEADER)
_HEADER = ("turn", "member", "darts_left", "phase", "pending", "winner", "bo_alive")
_BULL_BIT = const(0x80)  # in an undo record's mask: the bull-off scores lead the record (view.BULL_BIT)

class ByteLog:
    """An append-only byte buffer that can be cut back (MicroPython's
    bytearray cannot delete a slice); grows by a quarter, never shrinks
    (doubling would leave up to half of a long game's undo log, some KB of
    heap, unused)."""

    def __init__(self, size=32):
        self.buf = bytearray(size)
        self.n = 0

    def append(self, b):
        if self.n == len(self.buf):
            self.buf.extend(bytes(len(self.buf) // 4 + 16))
        self.buf[self.n] = b
        self.n += 1

    def extend(self, data):
        for b in data:
            self.append(b)

    def cut(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.buf[i]

    def bytes(self):
        return bytes(self.buf[: self.n])


class Rules:
    """Validated rules: a named variant plus overrides."""

    def __init__(self, variant="classic", overrides=None, checks=None):
        if checks is not None:  # new_game's, loaded once for all its checks
            checks.check_rules(self, variant, overrides)
            return
        from shove import newgame, release  # the checks: loaded for them, let go after

        try:
            newgame.check_rules(self, variant, overrides)
        finally:
            release("newgame")

    # the protocol's view of a game is shove/view.py's, loaded for a reply or
    # an event that carries a state (or a journal's rules) and let go after:
    # none of it runs for a dart
    def to_dict(self):
        from shove import view

        return view.rules_dict(self)

    def overrides(self):
        """Only the fields that differ from the variant: what a journal must keep."""
        from shove import view

        return view.overrides(self)





class Game:
    HEADER = _HEADER  # for view.undo, which may not import this module

    def __init__(self, rules, sides, cpu=None, seed=0):
        self.rules = rules
        self.sides = sides
        # skill level of each side played by the board itself (0: people), and
        # the seed its darts are drawn from (the journal keeps both)
        self.cpu = cpu or bytes(len(sides))
        self.seed = seed
        self.names = [" & ".join(m) for m in sides]
        n = len(sides)
        self.n = n
        self.nb = len(rules.beds)
        self.marks = bytearray(n * self.nb)
        self.member = bytearray(n)  # whose turn it is within each side
        self.actions = ByteLog()
        self._undo = ByteLog()
        self._was = bytearray(_FIELDS)  # the header before the move being made (_begin)
        self._now = bytearray(_FIELDS)  # ... and after it (_commit)
        self.turn = 0
        self.pending = 0  # bitmask of sides whose gift-win waits for the visit's end
        self.winner = NO_WINNER
        self.darts_left = rules.darts
        self.phase = PLAY
        self.bo_alive = 0  # bull-off: bitmask of sides still in it
        self.bo_score = bytearray(n)
        if rules.bull_off and n > 1:
            self.phase = BULL_OFF
            self.bo_alive = (1 << n) - 1
            self.darts_left = 1

    # ---- queries -------------------------------------------------------
    def need(self, side, bi):
        return self.rules.marks - self.marks[side * self.nb + bi]

    def missing(self, side):
        m = self.rules.marks
        t = 0
        base = side * self.nb
        for i in range(self.nb):
            t += m - self.marks[base + i]
        return t

    def thrower(self):
        return self.sides[self.turn][self.member[self.turn]]

    def moves(self):
        return len(self.actions)

    def value(self, code):
        """(bed index, marks) a dart carries, or (-1, 0) when it is dead."""
        num = segments.number(code)
        if num == 0 or num not in self.rules.beds:
            return -1, 0
        k = segments.ring_marks(code)
        if self.rules.flat:
            k = 1
        return self.rules.beds.index(num), k

    # ---- undo records --------------------------------------------------
    # A move's record: [bo_score x n, in the bull-off] (cell, delta)* then
    # the old value of each header field the move changed, in field order,
    # a mask naming them (bit i: field i of _header; bit 7: the bull-off
    # scores lead the record) and the record's length. Only what changed is
    # kept: a dart is some 5 bytes, not 10, and a long game's undo log is
    # the largest thing the game holds in the heap.
    def _header(self, out, side):
        """The fields a move may change, into `out` (side: whose member counts)."""
        for i in range(_FIELDS):
            out[i] = self.member[side] if i == 1 else getattr(self, _HEADER[i])

    def _begin(self):
        u = self._undo
        start = len(u)
        self._header(self._was, self.turn)
        if self.phase == BULL_OFF:
            u.extend(self.bo_score)
        return start

    def _add(self, side, bi, delta):
        cell = side * self.nb + bi
        self.marks[cell] += delta
        self._undo.append(cell)
        self._undo.append(delta)

    def _commit(self, start, action):
        u = self._undo
        was = self._was
        now = self._now
        self._header(now, was[0])  # the member of the side whose turn it was
        mask = _BULL_BIT if was[3] == BULL_OFF else 0
        for i in range(_FIELDS):
            if now[i] != was[i]:
                u.append(was[i])
                mask |= 1 << i
        u.append(mask)
        u.append(len(u) - start + 1)
        self.actions.append(action)

    def undo(self):
        """Take the last move back from its undo record: view.undo (an undo,
        a replayed journal's, the coach's trial darts: never a dart's work)."""
        from shove import view

        view.undo(self)

    # ---- actions -------------------------------------------------------
    def _check_live(self):
        if self.phase == OVER:
            raise RuleError("game_over", "the game is over; undo or start a new one")

    def throw(self, code, replay=False):
        """Score one dart. Returns (marks, own, gifts[(side, n)], lost);
        with `replay` (the journal's, after a power cut) nothing: a restore
        replays up to hundreds of darts, and their results would all be
        garbage for the heap at once."""
        if not segments.valid(code):
            raise RuleError("bad_seg", "unknown segment code")
        self._check_live()
        if self.phase == HOLD:
            raise RuleError("visit_over", "the visit is over; press next")
        if self.phase == BULL_OFF:
            self._bull_off_dart(2 if code == segments.DB else 1 if code == segments.SB else 0, code)
            return None if replay else (0, 0, [], 0)
        start = self._begin()
        a = self.turn
        bi, k = self.value(code)
        own = 0
        gifts = None if replay else []
        lost = 0
        # under `all` every opponent draws on the same surplus, so what is
        # lost is the surplus nobody took: surplus - the largest take
        top = 0
        if k:
            own = min(k, self.need(a, bi))
            if own:
                self._add(a, bi, own)
            surplus = k - own
            if surplus and self.n > 1 and self.rules.gift != GIFT_OFF:
                for step in range(1, self.n):
                    r = (a + step) % self.n
                    take = min(surplus, self.need(r, bi))
                    if not take:
                        continue
                    if not self.rules.win_by_gift and take == self.missing(r):
                        take -= 1  # the last mark of a game must be scored, never given
                    if take:
                        self._add(r, bi, take)
                        if gifts is not None:
                            gifts.append((r, take))
                        if take > top:
                            top = take
                        if self.missing(r) == 0:
                            self.pending |= 1 << r
                    if self.rules.gift == GIFT_NEXT:
                        break
            lost = k - own - top
        if self.missing(a) == 0:
            self.winner = a
            self.phase = OVER
            self.pending = 0
            self.darts_left = 0
        else:
            if not (self.rules.progressive and own):
                self.darts_left -= 1
            if self.darts_left == 0:
                self._end_visit()
        self._commit(start, code)
        if replay:
            return None
        return k, own, gifts, lost

    def _end_visit(self):
        if self.pending:
            self.winner = self._first_pending()
            self.phase = OVER
            self.pending = 0
        else:
            self.phase = HOLD

    def _first_pending(self):
        for step in range(1, self.n + 1):
            s = (self.turn + step) % self.n
            if self.pending & (1 << s):
                return s
        return NO_WINNER  # pragma: no cover - called only while some side is pending

    def next(self):
        """Player change: ends the visit (forfeiting darts left) and passes the turn."""
        self._check_live()
        if self.phase == BULL_OFF:
            # the thrower gives up the bull-off dart: it counts as a miss
            self._bull_off_dart(0, NEXT_ACTION)
            return
        start = self._begin()
        if self.pending:
            self._end_visit()
        else:
            t = self.turn
            self.member[t] = (self.member[t] + 1) % len(self.sides[t])
            self.turn = (t + 1) % self.n
            self.darts_left = self.rules.darts
            self.phase = PLAY
        self._commit(start, NEXT_ACTION)

    def _bull_off_dart(self, score, action):
        start = self._begin()
        t = self.turn
        self.bo_score[t] = score
        nxt = -1
        for s in range(t + 1, self.n):
            if self.bo_alive & (1 << s):
                nxt = s
                break
        if nxt >= 0:
            self.turn = nxt
        else:  # the round is complete
            best = 0
            for s in range(self.n):
                if self.bo_alive & (1 << s) and self.bo_score[s] > best:
                    best = self.bo_score[s]
            alive = 0
            for s in range(self.n):
                if self.bo_alive & (1 << s) and self.bo_score[s] == best:
                    alive |= 1 << s
            self.bo_alive = alive
            for s in range(self.n):
                self.bo_score[s] = 0
            first = 0
            while not alive & (1 << first):
                first += 1
            self.turn = first
            if alive == 1 << first:  # one winner: it starts
                self.phase = PLAY
                self.darts_left = self.rules.darts
                self.bo_alive = 0
        self._commit(start, action)

    def apply(self, action):
        """Replay one journal byte."""
        if action == NEXT_ACTION:
            self.next()
        else:
            self.throw(action, True)

    # ---- serialisation -------------------------------------------------
    def visit(self, tick=None):
        """The darts of the visit being thrown (or just over): view.visit."""
        from shove import view

        return view.visit(self, tick)

    def to_state(self, tick=None):
        """The game as the protocol's state object: view.to_state."""
        from shove import view

        return view.to_state(self, tick)

# A new game's request is checked by shove/newgame.py, loaded for it and let
# go after (its code would otherwise hold heap all game long). These keep
# the names callers use.
def _call(name, *args):
    from shove import newgame, release

    try:
        return getattr(newgame, name)(*args)
    finally:
        release("newgame")


def make_sides(players=None, teams=None):
    """players (names) or teams (lists of names) -> list of member lists."""
    return _call("make_sides", players, teams)


def new_game(players=None, teams=None, variant="classic", rules=None, cpu=None, seed=0):
    """Validate everything first, so a refused request changes nothing.
    The checks' module is loaded once for both checks (each load reads its
    code from flash into the heap anew)."""
    from shove import newgame, release

    try:
        r = Rules(variant, rules, newgame)
        sides, levels, seed = newgame.check_game(players, teams, cpu, seed)
    finally:
        release("newgame")
    return Game(r, sides, levels, seed)

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

BULL_OFF = const(0)
PLAY = const(1)
HOLD = const(2)
OVER = const(3)
PHASES = ("bull_off", "play", "hold", "over")

GIFT_NEXT = const(0)
GIFT_ALL = const(1)
GIFT_OFF = const(2)
GIFTS = ("next", "all", "off")

NEXT_ACTION = const(255)  # action byte for `next`; darts use their segment code
NO_WINNER = const(255)
VISIT_MAX = const(12)  # the state's `visit` names at most this many darts, the latest

MAX_SIDES = const(8)
MAX_MEMBERS = const(4)
MAX_NAME = const(16)
BED_CHOICES = tuple(range(1, 21)) + (25,)

_NINE = (1, 2, 3, 4, 5, 6, 7, 8, 9)
# name: (beds, marks, darts, gift, win_by_gift, progressive, flat)
VARIANTS = {
    "classic": (_NINE, 3, 3, "next", True, False, False),
    "no-gift": (_NINE, 3, 3, "off", True, False, False),
    "extended": (tuple(range(1, 16)), 3, 3, "next", True, False, False),
    "pub": (_NINE, 3, 3, "next", False, False, False),
    "progressive": (_NINE, 3, 3, "next", False, True, False),
    # every coin scores one in the piecepack game
    "piecepack": ((1, 2, 3, 4, 5, 6, 7), 1, 3, "next", False, False, True),
}
RULE_KEYS = ("beds", "marks", "darts", "gift", "win_by_gift", "progressive", "flat", "bull_off")


class ByteLog:
    """An append-only byte buffer that can be cut back (MicroPython's
    bytearray cannot delete a slice); grows by doubling, never shrinks."""

    def __init__(self, size=32):
        self.buf = bytearray(size)
        self.n = 0

    def append(self, b):
        if self.n == len(self.buf):
            self.buf.extend(bytes(len(self.buf)))
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


class RuleError(Exception):
    """A refused request; `code` is the protocol's error code."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


def _bad(msg):
    return RuleError("bad_rules", msg)


def _int_in(value, lo, hi, what):
    if not isinstance(value, int) or isinstance(value, bool) or value < lo or value > hi:
        raise _bad("%s must be a whole number from %d to %d" % (what, lo, hi))
    return value


def _flag(value, what):
    if not isinstance(value, bool):
        raise _bad("%s must be true or false" % what)
    return value


class Rules:
    """Validated rules: a named variant plus overrides."""

    def __init__(self, variant="classic", overrides=None):
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise _bad("unknown variant %r; choose one of %s" % (str(variant)[:20], ", ".join(sorted(VARIANTS))))
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            raise _bad("rules must be an object")
        for key in overrides:
            if key not in RULE_KEYS:
                raise _bad("unknown rule %r" % (str(key)[:20],))
        beds, marks, darts, gift, wbg, prog, flat = VARIANTS[variant]
        self.variant = variant
        beds = overrides.get("beds", beds)
        if not isinstance(beds, (list, tuple)) or not 1 <= len(beds) <= 21:
            raise _bad("beds must be a list of 1 to 21 numbers")
        for b in beds:
            if not isinstance(b, int) or isinstance(b, bool) or b not in BED_CHOICES:
                raise _bad("beds are numbers from 1 to 20 and 25")
        if len(set(beds)) != len(beds):
            raise _bad("beds must be distinct")
        self.beds = tuple(sorted(beds))
        self.marks = _int_in(overrides.get("marks", marks), 1, 9, "marks")
        self.darts = _int_in(overrides.get("darts", darts), 1, 9, "darts")
        g = overrides.get("gift", gift)
        if g not in GIFTS:
            raise _bad("gift must be next, all or off")
        self.gift = GIFTS.index(g)
        self.win_by_gift = _flag(overrides.get("win_by_gift", wbg), "win_by_gift")
        self.progressive = _flag(overrides.get("progressive", prog), "progressive")
        self.flat = _flag(overrides.get("flat", flat), "flat")
        self.bull_off = _flag(overrides.get("bull_off", False), "bull_off")

    def to_dict(self):
        return {
            "beds": list(self.beds),
            "marks": self.marks,
            "darts": self.darts,
            "gift": GIFTS[self.gift],
            "win_by_gift": self.win_by_gift,
            "progressive": self.progressive,
            "flat": self.flat,
            "bull_off": self.bull_off,
        }

    def overrides(self):
        """Only the fields that differ from the variant: what a journal must keep."""
        base = Rules(self.variant).to_dict()
        mine = self.to_dict()
        return {k: mine[k] for k in RULE_KEYS if mine[k] != base[k]}


# Code points a name may not hold, as inclusive ranges: controls, the soft
# hyphen, zero-width and direction marks, line and paragraph separators,
# invisible operators, surrogates (a JSON "\\ud800" would be written out as
# invalid UTF-8), the byte-order mark and the specials' block.
_UNPRINTABLE = (
    (0, 31), (127, 0x9F), (0xAD, 0xAD), (0x34F, 0x34F), (0x600, 0x605), (0x61C, 0x61C),
    (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x206F),
    (0x3164, 0x3164), (0xD800, 0xDFFF), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFF), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
# Spaces: a name of these alone is blank. Listed because MicroPython's
# str.strip() knows only the ASCII ones.
_SPACES = (0x20, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
           0x2008, 0x2009, 0x200A, 0x202F, 0x205F, 0x3000)


def _check_name(name):
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        raise _bad("names are 1 to %d characters" % MAX_NAME)
    blank = True
    for ch in name:
        o = ord(ch)
        for lo, hi in _UNPRINTABLE:
            if lo <= o <= hi:
                raise _bad("names must be printable (U+%04X is not)" % o)
        if o not in _SPACES:
            blank = False
    if blank:
        raise _bad("a name cannot be blank")
    return name


def make_sides(players=None, teams=None):
    """players (names) or teams (lists of names) -> list of member lists."""
    if (players is None) == (teams is None):
        raise _bad("give either players or teams")
    if players is not None:
        if not isinstance(players, list):
            raise _bad("players must be a list of names")
        teams = [[p] for p in players]
    if not isinstance(teams, list) or not 1 <= len(teams) <= MAX_SIDES:
        raise _bad("a game has 1 to %d sides" % MAX_SIDES)
    sides = []
    for team in teams:
        if not isinstance(team, list) or not 1 <= len(team) <= MAX_MEMBERS:
            raise _bad("a side has 1 to %d members" % MAX_MEMBERS)
        sides.append([_check_name(m) for m in team])
    return sides


MAX_LEVEL = const(6)  # computer players' skill levels 1..6


def check_cpu(cpu, n):
    """A side's computer level for each side (0: people), or None for none."""
    if cpu is None:
        return bytes(n)
    if not isinstance(cpu, list) or len(cpu) != n:
        raise _bad("cpu is a list with a level for each side (0 for people, 1 to %d)" % MAX_LEVEL)
    for v in cpu:
        _int_in(v, 0, MAX_LEVEL, "a computer level")
    return bytes(cpu)


def computer_names(players):
    """Players named cpu:N (N 1..6) become computer sides: (names, levels) or
    (players, None) when there are none. A name like cpu:x stays a name."""
    levels = []
    names = []
    for p in players:
        if isinstance(p, str) and len(p) == 5 and p[:4].lower() == "cpu:" and p[4] in "123456":
            levels.append(int(p[4]))
            names.append("CPU " + p[4])
        else:
            levels.append(0)
            names.append(p)
    if not any(levels):
        return players, None
    return names, levels


class Game:
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
    # header: turn, member[turn], darts_left, phase, pending, winner, bo_alive
    # [bo_score x n when in bull-off] (cell, delta)* ; last byte: record length
    def _begin(self):
        u = self._undo
        start = len(u)
        u.append(self.turn)
        u.append(self.member[self.turn])
        u.append(self.darts_left)
        u.append(self.phase)
        u.append(self.pending)
        u.append(self.winner)
        u.append(self.bo_alive)
        if self.phase == BULL_OFF:
            u.extend(self.bo_score)
        return start

    def _add(self, side, bi, delta):
        cell = side * self.nb + bi
        self.marks[cell] += delta
        self._undo.append(cell)
        self._undo.append(delta)

    def _commit(self, start, action):
        self._undo.append(len(self._undo) - start + 1)
        self.actions.append(action)

    def undo(self):
        u = self._undo
        if not u:
            raise RuleError("nothing_to_undo", "nothing to undo")
        end = len(u) - 1
        start = end - u[end] + 1
        self.turn = u[start]
        self.member[self.turn] = u[start + 1]
        self.darts_left = u[start + 2]
        self.phase = u[start + 3]
        self.pending = u[start + 4]
        self.winner = u[start + 5]
        self.bo_alive = u[start + 6]
        i = start + 7
        if self.phase == BULL_OFF:
            for s in range(self.n):
                self.bo_score[s] = u[i + s]
            i += self.n
        while i < end:
            self.marks[u[i]] -= u[i + 1]
            i += 2
        u.cut(start)
        self.actions.cut(len(self.actions) - 1)

    # ---- actions -------------------------------------------------------
    def _check_live(self):
        if self.phase == OVER:
            raise RuleError("game_over", "the game is over; undo or start a new one")

    def throw(self, code):
        """Score one dart. Returns (marks, own, gifts[(side, n)], lost)."""
        if not segments.valid(code):
            raise RuleError("bad_seg", "unknown segment code")
        self._check_live()
        if self.phase == HOLD:
            raise RuleError("visit_over", "the visit is over; press next")
        if self.phase == BULL_OFF:
            self._bull_off_dart(2 if code == segments.DB else 1 if code == segments.SB else 0, code)
            return 0, 0, [], 0
        start = self._begin()
        a = self.turn
        bi, k = self.value(code)
        own = 0
        gifts = []
        lost = 0
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
                        gifts.append((r, take))
                        if self.missing(r) == 0:
                            self.pending |= 1 << r
                    if self.rules.gift == GIFT_NEXT:
                        break
            # under `all` every opponent draws on the same surplus, so what is
            # lost is the surplus nobody took: surplus - the largest take
            top = 0
            for g in gifts:
                if g[1] > top:
                    top = g[1]
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
        return NO_WINNER

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
            self.throw(action)

    # ---- serialisation -------------------------------------------------
    def visit(self):
        """The darts of the visit being thrown (or just over), oldest first,
        each [seg, side, own, gifts, lost] as in its `dart` event: read back
        from the actions and their undo records, so nothing more is kept and
        a client that starts late, or a board that restarted, still has them.
        A visit ends at a `next`; the bull-off's darts are a visit of their own."""
        u = self._undo
        acts = self.actions
        bull = self.phase == BULL_OFF
        nb = self.nb
        out = []
        end = len(u) - 1
        j = len(acts) - 1
        while j >= 0 and len(out) < VISIT_MAX:
            a = acts[j]
            start = end - u[end] + 1
            if a == NEXT_ACTION or (u[start + 3] == BULL_OFF) != bull:
                break
            side = u[start]
            own = 0
            gifts = []
            top = 0
            i = start + 7 + (self.n if bull else 0)
            while i < end:  # (cell, delta): the thrower's own marks first, then each gift
                s = u[i] // nb
                d = u[i + 1]
                if s == side:
                    own += d
                else:
                    gifts.append([s, d])
                    if d > top:
                        top = d
                i += 2
            k = 0 if bull else self.value(a)[1]
            out.append([segments.name(a), side, own, gifts, k - own - top if k else 0])
            end = start - 1
            j -= 1
        out.reverse()
        return out

    def to_state(self, tick=None):
        """The game as the protocol's state object; with `tick`, tick() is
        called every few beds (the firmware reads the matrix there)."""
        beds = self.rules.beds
        sides = []
        for s in range(self.n):
            marks = {}
            base = s * self.nb
            for i in range(self.nb):
                marks[str(beds[i])] = self.marks[base + i]
                if tick is not None and i & 7 == 7:
                    tick()
            sides.append({"name": self.names[s], "members": list(self.sides[s]), "marks": marks})
            if tick is not None:
                tick()
        pending = [s for s in range(self.n) if self.pending & (1 << s)]
        st = {
            "sides": sides,
            "turn": self.turn,
            "thrower": self.thrower(),
            "darts_left": self.darts_left,
            "winner": None if self.winner == NO_WINNER else self.winner,
            "phase": PHASES[self.phase],
            "rules": self.rules.to_dict(),
            "variant": self.rules.variant,
            "pending": pending,
            "moves": len(self.actions),
            "visit": self.visit(),
        }
        if self.phase == BULL_OFF:
            st["contenders"] = [s for s in range(self.n) if self.bo_alive & (1 << s)]
        if any(self.cpu):
            st["cpu"] = list(self.cpu)
        return st


def new_game(players=None, teams=None, variant="classic", rules=None, cpu=None, seed=0):
    """Validate everything first, so a refused request changes nothing."""
    r = Rules(variant, rules)
    if cpu is None and isinstance(players, list):
        players, cpu = computer_names(players)
    sides = make_sides(players, teams)
    levels = check_cpu(cpu, len(sides))
    seed = _int_in(seed, 0, 0x3FFFFFFF, "seed")
    return Game(r, sides, levels, seed)

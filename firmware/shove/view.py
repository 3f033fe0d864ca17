# The game read back and taken back, for the protocol: its state object
# (the sides' marks, the turn, the rules, the darts of the visit read from
# the undo log), its rules as a journal keeps them, and an undo (the undo
# log unwound). Loaded for a reply or an event that carries a state, a
# journal written whole or replayed, an undo, and let go after
# (Keeper.state, Keeper._rewrite, the end of a command line, App's start):
# none of it runs for a dart, so none of it holds heap while darts are
# thrown (docs/performance.md, the heap). rules.Game.to_state and the
# other methods of the same names call these.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import segments
from shove.variants import GIFTS, PHASES, RULE_KEYS, VARIANTS, RuleError

# rules' values (this module must not import rules: rules loads it)
_BULL_OFF = const(0)  # rules.BULL_OFF
_NEXT_ACTION = const(255)  # rules.NEXT_ACTION
_NO_WINNER = const(255)  # rules.NO_WINNER
_FIELDS = const(7)  # rules._FIELDS: the header fields an undo record may restore
_BULL_BIT = const(0x80)  # rules._BULL_BIT: in an undo record's mask, the bull-off scores lead the record
VISIT_MAX = const(12)  # the state's `visit` names at most this many darts, the latest


def rules_dict(r):
    return {
        "beds": list(r.beds),
        "marks": r.marks,
        "darts": r.darts,
        "gift": GIFTS[r.gift],
        "win_by_gift": r.win_by_gift,
        "progressive": r.progressive,
        "flat": r.flat,
        "bull_off": r.bull_off,
    }


def overrides(r):
    """Only the fields that differ from the variant: what a journal must keep.
    The variant's own fields come from VARIANTS as Rules would set them
    (no second Rules: that would load the checks, shove/newgame.py)."""
    beds, marks, darts, gift, wbg, prog, flat = VARIANTS[r.variant]
    base = {"beds": sorted(beds), "marks": marks, "darts": darts, "gift": gift, "win_by_gift": wbg,
            "progressive": prog, "flat": flat, "bull_off": False}
    mine = rules_dict(r)
    return {k: mine[k] for k in RULE_KEYS if mine[k] != base[k]}


def visit(g, tick=None):
    """The darts of the visit being thrown (or just over), oldest first,
    each [seg, side, own, gifts, lost] as in its `dart` event: read back
    from the actions and their undo records, so nothing more is kept and
    a client that starts late, or a board that restarted, still has them.
    A visit ends at a `next`; the bull-off's darts are a visit of their own.
    With `tick`, tick() is called after each dart (see to_state)."""
    u = g._undo
    acts = g.actions
    bull = g.phase == _BULL_OFF
    nb = g.nb
    out = []
    end = len(u) - 1
    j = len(acts) - 1
    turn = g.turn  # whose turn it was after the move read (read newest first)
    while j >= 0 and len(out) < VISIT_MAX:
        a = acts[j]
        start = end - u[end] + 1
        mask = u[end - 1]
        if a == _NEXT_ACTION or bool(mask & _BULL_BIT) != bull:
            break
        cells = _olds(u, end)
        side = u[cells] if mask & 1 else turn  # the thrower: the turn before the move
        turn = side
        own = 0
        gifts = []
        top = 0
        i = start + (g.n if bull else 0)
        while i < cells:  # (cell, delta): the thrower's own marks first, then each gift
            s = u[i] // nb
            d = u[i + 1]
            if s == side:
                own += d
            else:
                gifts.append([s, d])
                top = max(top, d)
            i += 2
        k = 0 if bull else g.value(a)[1]
        out.append([segments.name(a), side, own, gifts, k - own - top])  # (a miss: all 0)
        end = start - 1
        j -= 1
        if tick is not None:
            tick()
    out.reverse()
    return out


def to_state(g, tick=None):
    """The game as the protocol's state object; with `tick`, tick() is
    called every two beds, after each dart of the visit and between the
    parts after the sides (the firmware reads the matrix there: on the
    chip each part is some hundreds of microseconds of bytecode, and a
    0.5 ms contact must meet a read)."""
    if tick is not None:
        tick()
    # One set of bed names for all sides, and each side's marks a copy of
    # one dict made at its full size: a dict grown a key at a time leaves
    # its smaller tables behind, and a name made per side is an object per
    # bed and side (eight sides on 20 beds: some 8 KB of garbage a state
    # on the chip). The copy keeps the key order a fresh dict would have.
    keys = []
    blank = {}
    for b in g.rules.beds:
        k = str(b)
        keys.append(k)
        blank[k] = 0
        if tick is not None and len(keys) & 1:
            tick()
    sides = []
    for s in range(g.n):
        marks = blank.copy()
        base = s * g.nb
        for i in range(g.nb):
            marks[keys[i]] = g.marks[base + i]
            if tick is not None and i & 1:
                tick()
        sides.append({"name": g.names[s], "members": list(g.sides[s]), "marks": marks})
        if tick is not None:
            tick()
    pending = [s for s in range(g.n) if g.pending & (1 << s)]
    rules = rules_dict(g.rules)
    if tick is not None:
        tick()
    st = {
        "sides": sides,
        "turn": g.turn,
        "thrower": g.thrower(),
        "darts_left": g.darts_left,
        "winner": None if g.winner == _NO_WINNER else g.winner,
        "phase": PHASES[g.phase],
        "rules": rules,
        "variant": g.rules.variant,
        "pending": pending,
        "moves": len(g.actions),
        "visit": visit(g, tick),
    }
    if g.phase == _BULL_OFF:
        st["contenders"] = [s for s in range(g.n) if g.bo_alive & (1 << s)]
    if any(g.cpu):
        st["cpu"] = list(g.cpu)
    return st


def _olds(u, end):
    """Where the old header values of the undo record ending at `end` begin
    (one value a bit set in its mask, just before the mask)."""
    j = end - 1
    mask = u[j]
    for i in range(_FIELDS):
        if mask & (1 << i):
            j -= 1
    return j


def undo(g):
    """The last move taken back from its undo record (rules.Game's `_commit`
    wrote it): the header fields it changed, the bull-off's scores, each
    cell's marks, then the record and the action cut off the logs."""
    u = g._undo
    if not u:
        raise RuleError("nothing_to_undo", "nothing to undo")
    end = len(u) - 1
    start = end - u[end] + 1
    mask = u[end - 1]
    cells = j = _olds(u, end)
    names = g.HEADER
    for i in range(_FIELDS):  # the turn first: the member's field is its side's
        if mask & (1 << i):
            if i == 1:
                g.member[g.turn] = u[j]
            else:
                setattr(g, names[i], u[j])
            j += 1
    i = start
    if mask & _BULL_BIT:
        for s in range(g.n):
            g.bo_score[s] = u[i + s]
        i += g.n
    while i < cells:
        g.marks[u[i]] -= u[i + 1]
        i += 2
    u.cut(start)
    g.actions.cut(len(g.actions) - 1)

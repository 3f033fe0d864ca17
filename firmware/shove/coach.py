# The coach: where the thrower should aim next, and why, in one line.
# The target is the computer player's own choice for a thrower of the given
# level; the reason compares it with the obvious big ring (treble, or the
# bull) by playing that exact hit through the referee.
from shove import cpu, rules, segments

_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
def _marks(n):
    return _WORDS[n] + (" mark" if n == 1 else " marks")


def _gift(g, code, what):
    """What an exact hit of `code` would give away, as words; '' for nothing."""
    me = g.turn
    before = g.pending
    _, _, gifts, _ = g.throw(code)
    try:
        if g.winner == me:
            return ""  # it would win: what it gives away no longer matters
        if (g.phase == rules.OVER and g.winner != me) or g.pending & ~before & ~(1 << me):
            return "%s would hand %s the game" % (what, g.names[gifts[0][0]] if gifts else "an opponent")
        if not gifts:
            return ""
        s, k = gifts[0]
        shut = g.need(s, g.value(code)[0]) == 0
    finally:
        g.undo()
    return "%s would gift %s %s%s" % (what, g.names[s], _marks(k), " and close that bed" if shut else "")


def hint(g, level=3):
    """{"seg": target, "reason": one line} for the thrower of game `g`."""
    if g.phase == rules.OVER:
        raise rules.RuleError("game_over", "the game is over")
    if g.phase == rules.HOLD:
        raise rules.RuleError("visit_over", "the visit is over; press next")
    if g.phase == rules.BULL_OFF:
        return {"seg": "DB", "reason": "DB: the bull-off; the dart nearest the middle starts"}
    code, _, cands = cpu.player(level).rank(g)
    return {"seg": segments.name(code), "reason": reason(g, code, cands)}


def reason(g, code, cands):
    label = segments.name(code)
    bi, k = g.value(code)
    if bi < 0:
        if code == segments.DB and [c for c in cands if c[1] == code and c[0] > 0]:
            return label + ": aim at the middle; with your spread a dart there finds an open bed more often than one aimed at a bed"
        if [c for c in cands if c[2]]:
            return label + ": throw this dart away; a hit on a bed could hand an opponent the game"
        return label + ": throw this dart away; every bed would help an opponent more than you"
    r = g.rules
    n = r.beds[bi]
    need = g.need(g.turn, bi)
    big = segments.DB if n == 25 else segments.encode("T%d" % n)
    head = "%s: you need %s on %d" % (label, _marks(need), n)
    if need == g.missing(g.turn):
        head += ", all you need to win"  # what it sets up
    if r.flat:
        return head + "; every ring is worth one mark"
    if code != big:
        why = _gift(g, big, "a bull" if n == 25 else "a treble")
        if why:
            # what it denies: the smaller ring keeps the spare marks at home
            return "%s, not %s: you need %s on %d; %s, so aim smaller and give nothing away" % (
                label, segments.name(big), _marks(need), n, why)
        return head + "; for your aim the %s is the surer way" % ("outer bull" if n == 25 else label[0] == "D" and
                                                                 "double" or "single")
    if need >= k:
        return head + ("; a treble closes it in one dart" if need == 3 else "")
    why = _gift(g, code, "a hit")
    if why:
        return head + "; worth it even though " + why
    if r.gift == rules.GIFT_OFF:
        return head + "; gifts are off"
    if [s for s in range(g.n) if s != g.turn and g.need(s, bi)]:
        return head + "; nobody can take the spare marks, so a treble risks nothing"
    # what it denies no one: every other side has closed the bed
    return head + "; %s closed %d, so the spare marks help nobody" % (
        g.names[(g.turn + 1) % g.n] + " has" if g.n == 2 else "everyone else has", n)

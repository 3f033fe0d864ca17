# The "gives a win away" oracle, apart from the strategy it judges: the
# referee itself says whether one exact hit hands an opponent the game.
# Used by the computer player's tests (both interpreters) and its evidence
# script.
from shove import rules


def gives_game(g, code, me=None):
    """True when the exact hit `code` by the thrower (or side `me`) newly
    hands an opponent the game: it ends the game for someone else, or makes
    a new pending win for an opponent."""
    if me is None:
        me = g.turn
    before = g.pending
    g.throw(code)
    try:
        return (g.phase == rules.OVER and g.winner != me) or bool(g.pending & ~before & ~(1 << me))
    finally:
        g.undo()


def remaining(p, g, side):
    """Expected darts (x16) `side` needs to close every bed, by the darts
    table the player `p` counts each bed with (p._open chooses them): the
    sum the strategy makes for every side at the start of a decision."""
    m = g.rules.marks
    return sum(p._tabs[i][m - g.marks[side * g.nb + i]] for i in range(g.nb))

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

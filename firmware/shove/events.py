# The `dart` event: what one dart did and what it changed, small enough to
# send while the scanner waits (at most 256 bytes on the wire; at 115200 baud
# each byte costs the scan loop 87 us). The full state is one `state` away.
from shove import rules, segments

MAX_DART_EVENT = 256


def dart(game, code, src, side, result, cell=None):
    """Fields of the `dart` event for `code` just thrown by `side`; `result`
    is what Game.throw returned. Left out because a client can tell them:
    names (up to 64 bytes; the thrower changes only with `turn`: a `visit`
    event names it, and in the bull-off each side throws with its first
    member) and `pending` (the sides other than the winner that have closed
    every bed while no side has won)."""
    k, own, gifts, lost = result
    ev = {"seg": segments.name(code), "src": src}
    if cell:
        ev["row"], ev["col"] = cell
    ev["side"] = side
    ev["marks"] = k
    ev["own"] = own
    ev["gifts"] = [[r, n] for r, n in gifts]
    ev["lost"] = lost
    bi, _ = game.value(code)
    if k:  # a live dart: the bed, and the marks on it now of the thrower
        nb = game.nb  # and of each side in `gifts`, in that order
        ev["bed"] = game.rules.beds[bi]
        tally = [game.marks[side * nb + bi]]
        for r, _ in gifts:
            tally.append(game.marks[r * nb + bi])
        ev["tally"] = tally
    else:
        ev["bed"] = None
        ev["tally"] = []
    ev["turn"] = game.turn
    ev["darts_left"] = game.darts_left
    ev["phase"] = rules.PHASES[game.phase]
    ev["winner"] = None if game.winner == rules.NO_WINNER else game.winner
    ev["moves"] = game.moves()
    if game.phase == rules.BULL_OFF:
        ev["contenders"] = [s for s in range(game.n) if game.bo_alive & (1 << s)]
    return ev

# The variants, the rule keys and the limits a game's request is checked
# against, and the error a refused one gets: shared by the referee
# (shove/rules.py) and its request checks (shove/newgame.py), which is loaded
# only for a new game.
from shove import Refused as RuleError  # noqa: F401 (the package's refusal, by the referee's name)

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

PHASES = ("bull_off", "play", "hold", "over")  # indexed by rules.BULL_OFF, PLAY, HOLD, OVER
GIFTS = ("next", "all", "off")  # indexed by rules.GIFT_NEXT, GIFT_ALL, GIFT_OFF
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
MAX_LEVEL = const(6)  # computer players' skill levels 1..6

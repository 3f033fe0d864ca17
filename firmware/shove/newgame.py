# What a new game's request is checked with: the variant and its
# overrides, the names, the computer sides. Loaded for a new game (and for
# the journal's game at boot), let go after: rules.Rules and rules.new_game
# call into it, so its code holds no heap while a game is played. It imports
# the shared limits, not the referee: rules.py builds the game from what it checks.
from shove.variants import (BED_CHOICES, GIFTS, MAX_LEVEL, MAX_MEMBERS, MAX_NAME, MAX_SIDES, RULE_KEYS, VARIANTS,
                            RuleError)


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


def check_rules(r, variant="classic", overrides=None):
    """Fill Rules `r` from a variant and overrides, each checked."""
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
    r.variant = variant
    beds = overrides.get("beds", beds)
    if not isinstance(beds, (list, tuple)) or not 1 <= len(beds) <= 21:
        raise _bad("beds must be a list of 1 to 21 numbers")
    for b in beds:
        if not isinstance(b, int) or isinstance(b, bool) or b not in BED_CHOICES:
            raise _bad("beds are numbers from 1 to 20 and 25")
    if len(set(beds)) != len(beds):
        raise _bad("beds must be distinct")
    r.beds = tuple(sorted(beds))
    r.marks = _int_in(overrides.get("marks", marks), 1, 9, "marks")
    r.darts = _int_in(overrides.get("darts", darts), 1, 9, "darts")
    g = overrides.get("gift", gift)
    if g not in GIFTS:
        raise _bad("gift must be next, all or off")
    r.gift = GIFTS.index(g)
    r.win_by_gift = _flag(overrides.get("win_by_gift", wbg), "win_by_gift")
    r.progressive = _flag(overrides.get("progressive", prog), "progressive")
    r.flat = _flag(overrides.get("flat", flat), "flat")
    r.bull_off = _flag(overrides.get("bull_off", False), "bull_off")


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


def check_cpu(cpu, n):
    """A side's computer level for each side (0: people), or None for none."""
    if cpu is None:
        return bytes(n)
    if not isinstance(cpu, list) or len(cpu) != n:
        raise _bad("cpu is a list with a level for each side (0 for people, 1 to %d)" % MAX_LEVEL)
    for v in cpu:
        _int_in(v, 0, MAX_LEVEL, "each level in cpu")
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


def check_game(players, teams, cpu, seed):
    """A new game's sides, computer levels and seed, each checked (the rules
    are checked by rules.Rules): (sides, levels, seed)."""
    if cpu is None and isinstance(players, list):
        players, cpu = computer_names(players)
    sides = make_sides(players, teams)
    levels = check_cpu(cpu, len(sides))
    return sides, levels, _int_in(seed, 0, 0x3FFFFFFF, "seed")

# Segment notation <-> one-byte codes.
# A code fits a byte so the game journal and undo log stay one byte a dart.
# 0 MISS, 1 SB, 2 DB, then five codes a number: S, SI, SO, D, T.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

MISS = const(0)
SB = const(1)
DB = const(2)
_FIRST = const(3)
_RINGS = ("S", "SI", "SO", "D", "T")
# marks a ring carries before the flat rule: S, SI, SO single; D double; T treble
_RING_MARKS = b"\x01\x01\x01\x02\x03"
COUNT = const(103)  # codes 0..102


class SegError(ValueError):
    pass


def encode(text):
    """'t5' -> code; raises SegError for anything not in the notation."""
    if not isinstance(text, str):
        raise SegError("segment must be a string")
    for ch in text:
        # ASCII only: CPython's upper() and isdigit() know letters and digits
        # ("\u017f5" upper-cases to "S5", "\u0665" is a digit) that MicroPython's do not
        if ord(ch) > 126:
            raise SegError("unknown segment (the notation is ASCII: S1..S20, SI5, SO5, D1..D20, T1..T20, SB, DB, MISS)")
    s = text.upper()
    if s == "MISS":
        return MISS
    if s == "SB":
        return SB
    if s == "DB":
        return DB
    i = 0
    while i < len(s) and s[i] in "SIODT":
        i += 1
    ring = s[:i]
    digits = s[i:]
    if ring not in _RINGS or not digits or len(digits) > 2 or digits[0] not in "123456789" or digits[-1] not in "0123456789":
        raise SegError("unknown segment %r (use S1..S20, SI5, SO5, D1..D20, T1..T20, SB, DB, MISS)" % (text[:12],))
    n = int(digits)
    if n < 1 or n > 20:
        raise SegError("no number %d on a dartboard" % n)
    return _FIRST + (n - 1) * 5 + _RINGS.index(ring)


def name(code):
    if code == MISS:
        return "MISS"
    if code == SB:
        return "SB"
    if code == DB:
        return "DB"
    c = code - _FIRST
    return "%s%d" % (_RINGS[c % 5], c // 5 + 1)


def number(code):
    """The number hit: 1..20, 25 for either bull, 0 for a miss."""
    if code == MISS:
        return 0
    if code <= DB:
        return 25
    return (code - _FIRST) // 5 + 1


def ring_marks(code):
    """Marks the ring carries (before bed and flat rules): 1, 2 or 3; 0 for a miss."""
    if code == MISS:
        return 0
    if code == SB:
        return 1
    if code == DB:
        return 2
    return _RING_MARKS[(code - _FIRST) % 5]


def valid(code):
    return isinstance(code, int) and 0 <= code < COUNT

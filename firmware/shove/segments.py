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


def _is(b, word):
    """Bytes `b`, upper-cased, are `word`."""
    if len(b) != len(word):
        return False
    for i in range(len(word)):
        c = b[i]
        if 97 <= c <= 122:
            c -= 32
        if c != word[i]:
            return False
    return True


def encode(text):
    """'t5' -> code; raises SegError for anything not in the notation.
    Worked on the text's byte values, no string made: a profile's map is
    read at every start, a cell a call (no upper-cased copy and slices,
    some 4 KB of garbage for a board's map)."""
    if not isinstance(text, str):
        raise SegError("segment must be a string")
    b = text.encode()
    for c in b:
        # ASCII only: CPython's upper() and isdigit() know letters and digits
        # ("\u017f5" upper-cases to "S5", "\u0665" is a digit) that MicroPython's do not
        if c > 126:
            raise SegError("unknown segment (the notation is ASCII: S1..S20, SI5, SO5, D1..D20, T1..T20, SB, DB, MISS)")
    if _is(b, b"MISS"):
        return MISS
    if _is(b, b"SB"):
        return SB
    if _is(b, b"DB"):
        return DB
    n = len(b)
    i = 0
    while i < n and (b[i] & 0xDF) in b"SIODT":  # & 0xDF: upper case (and no other byte of these becomes one)
        i += 1
    ring = -1  # its index in _RINGS: S, SI, SO, D, T
    c = b[0] & 0xDF if i else 0
    if i == 1:
        ring = 0 if c == 83 else 3 if c == 68 else 4 if c == 84 else -1  # S, D, T
    elif i == 2 and c == 83:
        c = b[1] & 0xDF
        ring = 1 if c == 73 else 2 if c == 79 else -1  # SI, SO
    k = n - i
    if ring < 0 or not 1 <= k <= 2 or not 49 <= b[i] <= 57 or not 48 <= b[n - 1] <= 57:
        raise SegError("unknown segment %r (use S1..S20, SI5, SO5, D1..D20, T1..T20, SB, DB, MISS)" % (text[:12],))
    num = b[i] - 48 if k == 1 else (b[i] - 48) * 10 + b[i + 1] - 48
    if num < 1 or num > 20:
        raise SegError("no number %d on a dartboard" % num)
    return _FIRST + (num - 1) * 5 + ring


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

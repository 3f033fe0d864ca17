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


# the ring letters, in code order (as _RINGS)
_RING_BYTES = (b"S", b"SI", b"SO", b"D", b"T")


def _is(b, word, n):
    """The first `n` bytes of `b` are `word` (upper-case letters) in either case.
    `& 0xDF` upper-cases a letter and makes no other byte one: a digit,
    a sign or a byte of a non-ASCII character never matches."""
    if n != len(word):
        return False
    for j in range(n):
        if (b[j] & 0xDF) != word[j]:
            return False
    return True


def encode(text):
    """'t5' -> code; raises SegError for anything not in the notation.
    Worked on the text's byte values, no string made: a profile's map is
    read at every start, a cell a call (no upper-cased copy and slices,
    some 4 KB of garbage for a board's map). ASCII only: CPython's upper()
    and isdigit() know letters and digits ("\u017f5" upper-cases to "S5",
    "\u0665" is a digit) that MicroPython's do not, and no byte of a
    non-ASCII character passes the tests below."""
    if not isinstance(text, str):
        raise SegError("segment must be a string")
    b = text.encode()
    n = len(b)
    if _is(b, b"MISS", n):
        return MISS
    if _is(b, b"SB", n):
        return SB
    if _is(b, b"DB", n):
        return DB
    # the number: the digits at the end; the ring: the letters before them
    i = n
    while i and 48 <= b[i - 1] <= 57:
        i -= 1
    ring = 0
    while ring < 5 and not _is(b, _RING_BYTES[ring], i):
        ring += 1
    if ring == 5 or i == n or b[i] == 48:  # no ring, no number, or a leading zero
        raise SegError("unknown segment %r (use S1..S20, SI5, SO5, D1..D20, T1..T20, SB, DB, MISS)" % (text[:12],))
    num = 0
    for j in range(i, n):
        num = num * 10 + b[j] - 48
        if num > 20:  # (and a long run of digits is refused at its third)
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

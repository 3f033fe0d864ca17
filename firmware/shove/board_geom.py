# Dartboard faces: where each segment lies, for the throw model and the
# computer player. Units are millimetres from the bull, y up, 20 at the top.
# Sources for every figure are in docs/computer.md.
import math

from shove import segments

# numbers clockwise from the top
ORDER = (20, 1, 18, 4, 13, 6, 10, 15, 2, 17, 3, 19, 7, 16, 8, 11, 14, 9, 12, 5)
# position of each number in ORDER (index 0 unused)
POS = bytes([0] + [ORDER.index(n) for n in range(1, 21)])

# Ring radii (outer edge of: bull, outer bull, inner single = treble's inner
# edge, treble, outer single = double's inner edge, double), then the chance
# in 1000 that a dart bounces out or fails to register.
FACES = {
    "steel": (6.35, 15.9, 99.0, 107.0, 162.0, 170.0, 10),
    "soft15": (7.35, 18.4, 114.6, 123.9, 187.6, 196.85, 20),
    "soft13": (6.5, 17.5, 94.5, 103.5, 155.5, 164.5, 20),
}
DEFAULT_FACE = "soft15"

# ring slots, as the strategy indexes them
R_SI = 0  # inner single
R_T = 1
R_SO = 2  # outer single
R_D = 3
_SLOT_CODE = (1, 4, 2, 3)  # code offset (segments: S SI SO D T) of each slot
_CODE_SLOT = (2, 0, 2, 3, 1)  # slot aimed at for each code offset: S aims at the outer single


def face(name):
    f = FACES.get(name)
    if f is None:
        raise ValueError("unknown board face %r; faces: %s" % (name, ", ".join(sorted(FACES))))
    return f


def ring_at(f, r):
    """Ring slot at radius r: -2 bull, -1 outer bull, 0..3 as R_*, 4 off the scoring area."""
    i = 0
    while i < 6 and r >= f[i]:
        i += 1
    return (-2, -1, R_SI, R_T, R_SO, R_D, 4)[i]


def segment_at(f, x, y):
    """The segment code a dart landing at (x, y) scores (MISS off the scoring area)."""
    slot = ring_at(f, math.sqrt(x * x + y * y))
    if slot < 0:
        return segments.DB if slot == -2 else segments.SB
    if slot == 4:
        return segments.MISS
    # angle clockwise from the top in sectors of 18 degrees, 20 centred on 0
    i = int(math.floor(math.atan2(x, y) * (10.0 / math.pi) + 0.5)) % 20
    return 3 + (ORDER[i] - 1) * 5 + _SLOT_CODE[slot]


def aim_radius(f, slot):
    """Radius of the middle of a ring slot."""
    return (f[slot + 1] + f[slot + 2]) / 2


def aim_point(f, code):
    """Where to aim for a segment: the middle of its area (the bull's centre for SB and DB)."""
    if code <= segments.DB:
        return 0.0, 0.0
    r = aim_radius(f, _CODE_SLOT[(code - 3) % 5])
    a = POS[segments.number(code)] * (math.pi / 10)
    return r * math.sin(a), r * math.cos(a)

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
RING_NAMES = ("SI", "T", "SO", "D")


def face(name):
    f = FACES.get(name)
    if f is None:
        raise ValueError("unknown board face %r; faces: %s" % (name, ", ".join(sorted(FACES))))
    return f


def ring_at(f, r):
    """Ring slot at radius r: -2 bull, -1 outer bull, 0..3 as R_*, 4 off the scoring area."""
    if r < f[0]:
        return -2
    if r < f[1]:
        return -1
    if r < f[2]:
        return R_SI
    if r < f[3]:
        return R_T
    if r < f[4]:
        return R_SO
    if r < f[5]:
        return R_D
    return 4


def code_of(number, slot):
    """Segment code of a number's ring slot."""
    return segments.encode(RING_NAMES[slot] + str(number))


def segment_at(f, x, y):
    """The segment code a dart landing at (x, y) scores (MISS off the scoring area)."""
    r = math.sqrt(x * x + y * y)
    slot = ring_at(f, r)
    if slot == -2:
        return segments.DB
    if slot == -1:
        return segments.SB
    if slot == 4:
        return segments.MISS
    # angle clockwise from the top, in sectors of 18 degrees, 20 centred on 0
    a = math.atan2(x, y) * (10.0 / math.pi)  # -10..10 sectors
    i = int(math.floor(a + 0.5)) % 20
    return code_of(ORDER[i], slot)


def aim_point(f, code):
    """Where to aim for a segment: the middle of its area (the bull's centre for SB and DB)."""
    if code == segments.DB or code == segments.SB or code == segments.MISS:
        return 0.0, 0.0
    name = segments.name(code)
    n = segments.number(code)
    ring = name[:-len(str(n))]
    if ring == "T":
        r = (f[2] + f[3]) / 2
    elif ring == "D":
        r = (f[4] + f[5]) / 2
    elif ring == "SI":
        r = (f[1] + f[2]) / 2
    else:  # S and SO: the larger outer single
        r = (f[3] + f[4]) / 2
    a = POS[n] * (math.pi / 10)
    return r * math.sin(a), r * math.cos(a)


def aim_radius(f, slot):
    """Radius of a ring slot's middle."""
    if slot == R_SI:
        return (f[1] + f[2]) / 2
    if slot == R_T:
        return (f[2] + f[3]) / 2
    if slot == R_SO:
        return (f[3] + f[4]) / 2
    return (f[4] + f[5]) / 2

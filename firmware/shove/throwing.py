# Where a dart lands: the dartboard faces (where each segment lies) and the
# throw model. Units are millimetres from the bull, y up, 20 at the top;
# sources for every figure are in docs/computer.md.
#
# A dart lands at the aim point plus a 2-D normal scatter whose spread
# (sigma, mm, the same on both axes) is the thrower's skill; some darts
# bounce out. The segment comes from the board face's geometry.
#
# The random generator is Wichmann-Hill's three small congruential
# generators in integers: every intermediate stays below 2**30, a small int
# on the ESP32 (no heap), and a seed gives the same darts in CPython and
# MicroPython.
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

# Skill levels 1..6: sigma in mm, calibrated on the 15.5-inch soft-tip face to
# cricket marks per round (bench/cpu_calibrate.py; table in docs/computer.md).
LEVELS = (77.2, 36.0, 24.8, 19.1, 15.8, 13.6)


def sigma(level):
    if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= len(LEVELS):
        raise ValueError("level is 1 to %d" % len(LEVELS))
    return LEVELS[level - 1]


class Rng:
    def __init__(self, seed=1):
        self.seed(seed)

    def seed(self, seed):
        seed = int(seed) & 0x3FFFFFFF
        self.s1 = seed % 30268 + 1
        self.s2 = (seed // 30268) % 30306 + 1
        self.s3 = (seed // 917300) % 30322 + 1

    def bits15(self):
        """0..32767, uniform."""
        self.s1 = 171 * self.s1 % 30269
        self.s2 = 172 * self.s2 % 30307
        self.s3 = 170 * self.s3 % 30323
        return ((self.s1 << 15) // 30269 + (self.s2 << 15) // 30307 + (self.s3 << 15) // 30323) & 0x7FFF

    def below(self, n):
        """0..n-1 (n <= 32768)."""
        return self.bits15() * n >> 15

    def normal(self):
        """A standard normal deviate (Irwin-Hall: twelve uniforms; tails cut at 6 sigma)."""
        t = 0
        for _ in range(12):
            t += self.bits15()
        return (t - 196602) / 32768.0


def throw(f, sig, code, rng):
    """Where a dart aimed at segment `code` lands, as a segment code."""
    if rng.below(1000) < f[6]:
        return segments.MISS  # a bounce-out (soft tip: also a dart the board did not register)
    x, y = aim_point(f, code)
    hit = segment_at(f, x + sig * rng.normal(), y + sig * rng.normal())
    if hit > segments.DB and (hit - 3) % 5 in (1, 2):
        hit -= (hit - 3) % 5  # inner or outer single: reported as the single, as most boards do
    return hit

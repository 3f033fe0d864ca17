# The throw model: a dart lands at the aim point plus a 2-D normal scatter
# whose spread (sigma, mm, the same on both axes) is the thrower's skill;
# some darts bounce out. The segment comes from the board face's geometry.
#
# The random generator is Wichmann-Hill's three small congruential
# generators in integers: every intermediate stays below 2**30, a small int
# on the ESP32 (no heap), and a seed gives the same darts in CPython and
# MicroPython.
from shove import board_geom, segments

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
    x, y = board_geom.aim_point(f, code)
    hit = board_geom.segment_at(f, x + sig * rng.normal(), y + sig * rng.normal())
    if hit > segments.DB and (hit - 3) % 5 in (1, 2):
        hit -= (hit - 3) % 5  # inner or outer single: reported as the single, as most boards do
    return hit

# The built-in profile, used when the board has none (or a refused one).
# It imports nothing: profile.default_dict() hands it the timing defaults,
# which profile.py owns.

# The default: an 8 x 8 matrix with inner and outer single on one crossing
# (62 segments), crossings listed single, double, treble in dial order.
DIAL = (20, 1, 18, 4, 13, 6, 10, 15, 2, 17, 3, 19, 7, 16, 8, 11, 14, 9, 12, 5)


def build(timing):
    segs = [ring + str(n) for ring in ("S", "D", "T") for n in DIAL] + ["SB", "DB"]
    return {
        "name": "generic-8x8",
        "description": "8 x 8 matrix, inner and outer single on one crossing: 62 segments",
        "matrix": {"rows": [16, 17, 18, 19, 21, 22, 23, 25], "cols": [4, 13, 14, 26, 27, 32, 33, 15]},
        "map": [[i // 8, i % 8, s] for i, s in enumerate(segs)],
        "leds": {"pin": 5, "beds": 9, "per_side": 3, "status": 3},
        "buttons": {"next": 34, "undo": 35, "new": 39},
        "pullups": [34, 35, 39],
        "brightness": 64,
        "timing": dict(timing),
    }

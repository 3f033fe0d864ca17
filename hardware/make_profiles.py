"""Writes the shipped board profiles. The maps list every crossing in wiring
order; a real board's map comes from `hapenny learn`."""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "profiles"
NUMBERS = [20, 1, 18, 4, 13, 6, 10, 15, 2, 17, 3, 19, 7, 16, 8, 11, 14, 9, 12, 5]  # clockwise from the top
# settle_us: from driving a row to reading the columns (why 1: firmware/shove/profile.py)
TIMING = {"window_us": 3000, "lockout_ms": 60, "rearm_ms": 5, "stuck_ms": 2000, "debounce_ms": 30, "long_press_ms": 1000,
          "settle_us": 1}


def cells(segs, cols):
    return [[i // cols, i % cols, s] for i, s in enumerate(segs)]


def main():
    shared = [r + str(n) for r in ("S", "D", "T") for n in NUMBERS] + ["SB", "DB"]
    split = [r + str(n) for r in ("SI", "SO", "D", "T") for n in NUMBERS] + ["SB", "DB"]
    profiles = {
        "generic-8x8": {
            "name": "generic-8x8",
            "description": "8 x 8 matrix, inner and outer single on one crossing: 62 segments "
                           "(rows on GPIO 16/17: an ESP32-WROOM-32, not a WROVER)",
            "matrix": {"rows": [16, 17, 18, 19, 21, 22, 23, 25], "cols": [4, 13, 14, 26, 27, 32, 33, 15]},
            "map": cells(shared, 8),
            "leds": {"pin": 5, "beds": 9, "per_side": 3, "status": 3},
            "buttons": {"next": 34, "undo": 35, "new": 39},
            "pullups": [34, 35, 39],  # 10 kOhm each to 3.3 V: input-only pins have none inside
            "brightness": 64,
            "timing": TIMING,
        },
        "split-12x7": {
            "name": "split-12x7",
            "description": "12 x 7 matrix, inner and outer single apart: 82 segments "
                           "(rows on GPIO 16/17: an ESP32-WROOM-32, not a WROVER)",
            # 23 signals take every usable pin but GPIO 12 (it sets the flash
            # voltage at reset). Rows need drivers; the DevKit's LED on GPIO 2
            # would load a floating row or a pulled-up input, so it carries the
            # strip's data; GPIO 0 (the BOOT button) is a column, never a
            # button one might hold at power-up.
            "matrix": {"rows": [4, 13, 14, 16, 17, 18, 19, 21, 22, 23, 25, 26], "cols": [27, 32, 33, 0, 5, 15, 34]},
            "map": cells(split, 7),
            "leds": {"pin": 2, "beds": 9, "per_side": 3, "status": 3},
            "buttons": {"next": 35, "undo": 36, "new": 39},
            "pullups": [34, 35, 36, 39],  # 10 kOhm each to 3.3 V
            "brightness": 64,
            "timing": TIMING,
        },
    }
    for name, prof in profiles.items():
        (HERE / (name + ".json")).write_text(json.dumps(prof, indent=1) + "\n")


if __name__ == "__main__":
    main()

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
        # An ESP32-S3-DevKitC-1 (WROOM-1 module; the N8R8's octal PSRAM takes
        # GPIO 35-37, its native USB port GPIO 19/20, its UART port 43/44).
        # The generic 8 x 8 ribbon on the J1 header's run of GPIOs; the
        # buttons on 39-41 use the S3's internal pull-ups (it has no
        # input-only pins), the strip's data on 1. The on-board RGB LED (GPIO
        # 38 or 48, by the board's revision) and the strapping pins 0, 3, 45
        # and 46 stay free.
        "s3-devkitc-8x8": {
            "name": "s3-devkitc-8x8",
            "description": "ESP32-S3-DevKitC-1 on the 8 x 8 matrix of generic-8x8 (62 segments); "
                           "buttons with the S3's own pull-ups",
            "chip": "esp32s3",
            "matrix": {"rows": [4, 5, 6, 7, 15, 16, 17, 18], "cols": [8, 9, 10, 11, 12, 13, 14, 21]},
            "map": cells(shared, 8),
            "leds": {"pin": 1, "beds": 9, "per_side": 3, "status": 3},
            "buttons": {"next": 39, "undo": 40, "new": 41},
            "pullups": [],
            "brightness": 64,
            "timing": TIMING,
        },
        # An ESP32-C3 SuperMini (or DevKitM-1): of its 22 GPIOs, 11-17 are the
        # flash's, 18/19 the USB-Serial/JTAG console's and 20/21 UART0's, so
        # GPIO 0-10 are all a matrix can have: 11 lines, short of the 15 or 16
        # of a whole dartboard's ribbons. They carry the beds a game scores:
        # single, double and treble 1 to 9 (27 crossings, 5 x 6 lines), so a
        # dart anywhere else is not seen (the player's next, from the host,
        # ends the visit). No strip and no buttons: no pin is left. The
        # strapping pins 2, 8 (the SuperMini's LED, the DevKitM-1's RGB LED)
        # and 9 (BOOT) are columns: inputs, pulled low only by a driven row.
        "c3-supermini-beds": {
            "name": "c3-supermini-beds",
            "description": "ESP32-C3 SuperMini or DevKitM-1: beds 1-9 only (27 crossings on 5 x 6 lines), "
                           "no strip, no buttons: the C3 has 11 free GPIOs",
            "chip": "esp32c3",
            "matrix": {"rows": [0, 1, 3, 4, 5], "cols": [6, 7, 10, 2, 8, 9]},
            "map": cells([r + str(n) for r in ("S", "D", "T") for n in range(1, 10)], 6),
            "leds": {"pin": -1, "beds": 9, "per_side": 3, "status": 3},
            "buttons": {},
            "pullups": [],
            "brightness": 64,
            "timing": TIMING,
        },
    }
    for name, prof in profiles.items():
        (HERE / (name + ".json")).write_text(json.dumps(prof, indent=1) + "\n")


if __name__ == "__main__":
    main()

# Board profiles: pins, the (row, col) -> segment map, LED layout, buttons,
# brightness and timing. Validated whole; a bad profile is refused.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import json

from shove import segments

# settle_us: from driving a row low to reading the columns. A closed
# crossing pulls its column down through the membrane's contact against the
# column's ~45 kOhm pull-up, into the line's capacitance (ribbon, trace and
# pin: about 50 to 250 pF): V(t) = Vt + (Vdd - Vt) exp(-t / RC), where Vt is
# the divider's level and RC = (Rcontact || Rpull) C. It reads low below
# V_IL = 0.25 Vdd (ESP32 datasheet). A 2 kOhm contact on 250 pF gets there
# in 0.73 us (RC 0.48 us, Vt 0.04 Vdd); 1 us covers it with a third to spare,
# at 8 GPIO reads a row (2 us a scan of 8 rows). A worn or dirty membrane
# (5 kOhm on 250 pF: 2.0 us) wants 2 or 3; `hapenny doctor` shows rows
# it misses.
TIMING = {"window_us": 3000, "lockout_ms": 60, "rearm_ms": 5, "stuck_ms": 2000,
          "debounce_ms": 30, "long_press_ms": 1000, "settle_us": 1}
_SETTLE_MAX_US = const(20)  # the scan is blind to other rows meanwhile
BUTTONS = ("next", "undo", "new")
UNMAPPED = 255


# GPIOs by what they can do, per chip. Classic ESP32: its datasheet,
# "Peripheral Pin Configurations"; MicroPython's ports/esp32/machine_pin.c
# leaves 24 and 28-31 out of its pin table because the chip has no such
# pads (it keeps 20, MICROPY_HW_ENABLE_GPIO20, but only the ESP32-PICO-V3
# package brings that pad out, and no die this firmware accepts has it, so
# 20 is refused by name). ESP32-S3 and ESP32-C3: their datasheets' pin lists and strapping
# tables, and machine_pin.h, which leaves out what the stock images use
# (S3: 19/20 for the USB console, 33-37 on octal-PSRAM images; C3: 14-17,
# and 18/19 for the USB-Serial/JTAG console).
CHIPS = ("esp32", "esp32s3", "esp32c3")
_FLASH = const((6, 7, 8, 9, 10, 11))  # wired to the module's SPI flash
UART0 = (1, 3)  # the USB serial port: the REPL and the host link
_INPUT_ONLY = const((34, 35, 36, 37, 38, 39))  # no output driver, no internal pull-up
_STRAPPING = const((0, 2, 5, 12, 15))  # read by the boot ROM at reset


def chip_pins(chip):
    """(GPIOs, {pin: why it is never usable}, input-only pins, {strapping pin:
    the level nothing may pull it to at reset}) for one chip."""
    never = {}
    if chip == "esp32s3":
        gpios = tuple(range(0, 22)) + tuple(range(26, 49))
        for p in range(26, 33):  # SPICS1, SPIHD, SPIWP, SPICS0, SPICLK, SPIQ, SPID
            never[p] = "wired to the module's flash (and PSRAM select)"
        for p in range(33, 38):  # SPIIO4-7, SPIDQS
            never[p] = "wired to the octal PSRAM on ESP32-S3 modules that have it (N8R8, N16R8: the DevKitC-1's)"
        for p in (19, 20):
            never[p] = "the native USB port's D-/D+, the console's port on a stock image: leave it alone"
        for p in (43, 44):
            never[p] = "the serial console's UART0 (the DevKitC-1's UART port): leave it alone"
        return gpios, never, (), {0: "low", 3: "high or low", 45: "high", 46: "high"}
    if chip == "esp32c3":
        for p in range(11, 18):  # VDD_SPI, SPIHD, SPIWP, SPICS0, SPICLK, SPID, SPIQ
            never[p] = "wired to the flash chip, never usable"
        for p in (18, 19):
            never[p] = "the native USB port's D-/D+, the USB-Serial/JTAG console: leave it alone"
        for p in (20, 21):
            never[p] = "the serial console's UART0: leave it alone"
        return tuple(range(0, 22)), never, (), {2: "low", 8: "low", 9: "low"}
    never[20] = ("MicroPython lists it, but only the ESP32-PICO-V3 package brings it out; the ESP32 modules "
                 "this firmware runs on have no such pin")
    for p in _FLASH:
        never[p] = "wired to the flash chip, never usable"
    for p in UART0:
        never[p] = "the USB serial port's line, leave it alone"
    gpios = tuple(range(0, 20)) + (21, 22, 23, 25, 26, 27) + tuple(range(32, 40))
    return gpios, never, _INPUT_ONLY, {0: "low", 2: "high", 5: "low", 12: "high", 15: "low"}


NAMES = {"esp32": "ESP32", "esp32s3": "ESP32-S3", "esp32c3": "ESP32-C3"}


class ProfileError(ValueError):
    pass


def check_pins(rows, cols, led, buttons, pullups, chip):
    """Each pin fit for its role on `chip` (one of CHIPS): raises
    ProfileError for a pin that cannot work, returns warnings (strapping
    pins) for pins that work with care. led < 0: no strip; buttons: {name:
    pin}; pullups: GPIOs with an external pull-up resistor fitted."""
    gpios, never, input_only, strapping = chip_pins(chip)
    roles = [(p, "row") for p in rows] + [(p, "column") for p in cols]
    if led >= 0:
        roles.append((led, "LED strip"))
    for name in sorted(buttons):
        roles.append((buttons[name], name + " button"))
    seen = {}
    warn = []
    for p, role in roles:
        if p in never:
            raise ProfileError("GPIO %d (%s): %s" % (p, role, never[p]))
        if p not in gpios:
            raise ProfileError("GPIO %d (%s): the %s has no such pin" % (p, role, NAMES[chip]))
        if p in seen:
            raise ProfileError("GPIO %d is both %s and %s" % (p, seen[p], role))
        seen[p] = role
        if p in input_only:
            if role in ("row", "LED strip"):
                raise ProfileError("GPIO %d (%s): input-only, it cannot drive" % (p, role))
            if p not in pullups:
                raise ProfileError("GPIO %d (%s): input-only, no internal pull-up: fit 10 kOhm to 3.3 V "
                                   "and list it in \"pullups\"" % (p, role))
        if p in strapping:
            warn.append("GPIO %d (%s) is a strapping pin: nothing may pull it %s while the board starts"
                        % (p, role, strapping[p]))
    for p in pullups:
        if p not in seen:
            raise ProfileError("pullups: GPIO %d is not used by the profile" % p)
    return warn


def _pins(v, what, lo, hi):
    if not isinstance(v, list) or not lo <= len(v) <= hi:
        raise ProfileError("%s: a list of %d to %d pins" % (what, lo, hi))
    for p in v:
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 48:
            raise ProfileError("%s: pins are GPIO numbers" % what)
    return v


def _in_matrix(v, n, what, rows, cols):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < n:
        raise ProfileError("map: %s %r outside the %d x %d matrix" % (what, v, rows, cols))


def parse_map(cells, rows, cols):
    """[[row, col, seg], ...] -> bytearray rows*cols of segment codes."""
    if not isinstance(cells, list):
        raise ProfileError("map: a list of [row, col, segment]")
    out = bytearray([UNMAPPED] * (rows * cols))
    for cell in cells:
        if not isinstance(cell, list) or len(cell) != 3:
            raise ProfileError("map: each cell is [row, col, segment]")
        r, c, seg = cell
        # each checked in its own call, not in a loop over tuples: that
        # loop made three tuples a cell, some 5 KB of garbage for a board's map
        _in_matrix(r, rows, "row", rows, cols)
        _in_matrix(c, cols, "col", rows, cols)
        try:
            code = segments.encode(seg)
        except segments.SegError as e:
            raise ProfileError("map: %s" % e)
        if code == segments.MISS:
            raise ProfileError("map: MISS is not a crossing")
        if out[r * cols + c] != UNMAPPED:
            raise ProfileError("map: crossing (%d, %d) given twice" % (r, c))
        out[r * cols + c] = code
    return out


def map_cells(table, cols):
    return [[i // cols, i % cols, segments.name(code)] for i, code in enumerate(table) if code != UNMAPPED]


class Profile:
    def __init__(self, d):
        if not isinstance(d, dict):
            raise ProfileError("a profile is a JSON object")
        name = d.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 32:
            raise ProfileError("name: 1 to 32 characters")
        self.name = name
        chip = d.get("chip", "esp32")
        if chip not in CHIPS:
            raise ProfileError("chip: one of %s" % ", ".join(CHIPS))
        self.chip = chip
        m = d.get("matrix")
        if not isinstance(m, dict):
            raise ProfileError("matrix: {\"rows\": [pins], \"cols\": [pins]}")
        self.row_pins = _pins(m.get("rows"), "matrix.rows", 1, 16)
        self.col_pins = _pins(m.get("cols"), "matrix.cols", 1, 16)
        self.rows = len(self.row_pins)
        self.cols = len(self.col_pins)
        self.map = parse_map(d.get("map", []), self.rows, self.cols)
        leds = {"pin": -1, "beds": 9, "per_side": 3, "status": 3}  # the defaults (no strip)
        keys = tuple(leds)
        leds.update(d.get("leds") or {})
        for k in leds:
            if k not in keys or not isinstance(leds[k], int) or isinstance(leds[k], bool):
                raise ProfileError("leds.%s: a whole number" % k)
        if not (1 <= leds["beds"] <= 21 and 1 <= leds["per_side"] <= 9 and 0 <= leds["status"] <= 9):
            raise ProfileError("leds: beds 1-21, per_side 1-9, status 0-9")
        self.leds = leds
        buttons = d.get("buttons") or {}
        for k in buttons:
            if k not in BUTTONS:
                raise ProfileError("buttons: one of %s" % ", ".join(BUTTONS))
            _pins([buttons[k]], "buttons." + k, 1, 1)
        self.buttons = buttons
        b = d.get("brightness", 64)
        if not isinstance(b, int) or isinstance(b, bool) or not 0 <= b <= 255:
            raise ProfileError("brightness: 0 to 255")
        self.brightness = b
        pullups = d.get("pullups") or []
        _pins(pullups, "pullups", 0, 16)
        self.pullups = pullups
        check_pins(self.row_pins, self.col_pins, leds["pin"], buttons, pullups, chip)
        timing = dict(TIMING)
        timing.update(d.get("timing") or {})
        for k in timing:
            v = timing[k]
            if k not in TIMING or not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 60000:
                raise ProfileError("timing.%s: a whole number of %s" % (k, "microseconds" if k.endswith("_us") else "ms"))
        if timing["settle_us"] > _SETTLE_MAX_US:
            raise ProfileError("timing.settle_us: 0 to %d microseconds" % _SETTLE_MAX_US)
        self.timing = timing
        # the parsed JSON (its map alone is ~3 KB of small lists) is not kept


    def warnings(self):
        """Pins that work with care (strapping pins); made on request, not kept."""
        return check_pins(self.row_pins, self.col_pins, self.leds["pin"], self.buttons, self.pullups, self.chip)


def load(text):
    try:
        d = json.loads(text)
    except Exception:
        raise ProfileError("not valid JSON")
    return Profile(d)


def default_dict():
    """The built-in generic-8x8 profile (its own module: loaded only when the
    board has no valid profile.json, so its code takes no heap otherwise)."""
    from shove import profile_default

    return profile_default.build(TIMING)

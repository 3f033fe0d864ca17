# Pins checked for their role on a classic ESP32. Runs in both interpreters.
import json

from shove import profile


def _prof(**over):
    d = profile.default_dict()
    for k, v in over.items():
        if k in ("rows", "cols"):
            d["matrix"] = dict(d["matrix"])
            d["matrix"][k] = v
        else:
            d[k] = v
    return d


def _refused(d, words):
    try:
        profile.Profile(d)
    except profile.ProfileError as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError("accepted: %r" % words)


def _shipped():
    import os

    for base in ("hardware/profiles", "../../hardware/profiles"):  # CPython's cwd, MicroPython's
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        out = []
        for n in names:
            if n.endswith(".json"):
                with open(base + "/" + n) as f:
                    out.append((n[:-5], f.read()))
        assert len(out) >= 2
        return out
    raise AssertionError("no hardware/profiles folder")


ROWS = [16, 17, 18, 19, 21, 22, 23, 25]
COLS = [4, 13, 14, 26, 27, 32, 33, 15]


def test_pins_that_can_never_work_are_refused_in_any_role():
    # (where, pin, words in the message)
    table = []
    for pin, why in ((6, "flash"), (9, "flash"), (11, "flash"), (1, "serial"), (3, "serial"),
                     (20, "only the ESP32-PICO-V3"), (24, "no such pin"), (30, "no such pin"), (40, "no such pin")):
        table.append(("rows", ROWS[:-1] + [pin], why))
        table.append(("cols", COLS[:-1] + [pin], why))
        table.append(("leds", {"pin": pin}, why))
        table.append(("buttons", {"next": pin}, why))
    for where, value, why in table:
        _refused(_prof(**{where: value}), ["GPIO", why])


def test_input_only_pins_cannot_drive_rows_or_the_strip():
    for pin in (34, 35, 36, 39):
        _refused(_prof(rows=ROWS[:-1] + [pin], pullups=[pin, 34, 35, 39][: 1 if pin in (34, 35, 39) else 4]),
                 ["GPIO %d" % pin, "input-only"])
        _refused(_prof(leds={"pin": pin}), ["GPIO %d" % pin, "input-only"])


def test_input_only_inputs_need_a_declared_pull_up():
    _refused(_prof(pullups=[]), ["GPIO", "pull-up", "pullups"])
    _refused(_prof(pullups=[34, 35]), ["GPIO 39", "pull-up"])
    _refused(_prof(cols=COLS[:-1] + [36]), ["GPIO 36", "pull-up"])
    p = profile.Profile(_prof(cols=COLS[:-1] + [36], pullups=[34, 35, 36, 39]))
    assert p.pullups == [34, 35, 36, 39]


def test_a_pin_in_two_roles_or_a_stray_pull_up_is_refused():
    _refused(_prof(cols=COLS[:-1] + [16]), ["GPIO 16", "row", "column"])
    _refused(_prof(buttons={"next": 5}), ["GPIO 5", "LED strip", "next button"])
    _refused(_prof(pullups=[34, 35, 39, 36]), ["pullups", "36"])


def test_strapping_pins_warn_but_work():
    p = profile.Profile(profile.default_dict())
    assert sorted(int(w.split()[1]) for w in p.warnings()) == [5, 15]
    assert all("strapping" in w for w in p.warnings())
    p = profile.Profile(_prof(rows=ROWS[:-1] + [12]))
    assert any(w.startswith("GPIO 12 (row)") and "high" in w for w in p.warnings())


def test_shipped_profiles_pass_and_match_their_parts_list():
    for name, text in _shipped():
        p = profile.load(text)
        assert p.name == name
        d = json.loads(text)
        inputs = set(p.col_pins) | set(d.get("buttons", {}).values())
        _, _, input_only, strapping = profile.chip_pins(p.chip)
        assert sorted(x for x in inputs if x in input_only) == sorted(p.pullups)
        assert len(p.pullups) <= 4  # the parts list's resistors
        # a button held at reset must not pick the boot mode: GPIO 0 (9 on the C3) is BOOT
        assert not set(d.get("buttons", {}).values()) & set(strapping), name
        if p.chip == "esp32":
            assert 2 not in p.row_pins + p.col_pins  # the DevKit's LED loads GPIO 2
            assert 12 not in p.row_pins + p.col_pins  # sets the flash voltage at reset
        else:  # nothing drives a strapping pin: only columns (inputs) may be on them
            assert not set(p.row_pins) & set(strapping) and p.leds["pin"] not in strapping, name
    chips = sorted(set(profile.load(t).chip for _, t in _shipped()))
    assert chips == ["esp32", "esp32c3", "esp32s3"]  # a profile for each chip the firmware runs on


def test_every_malformed_profile_is_refused_naming_what_is_wrong():
    # (a change to the built-in profile, words the refusal must hold)
    cells = profile.default_dict()["map"]
    table = [
        ({"name": "x", "matrix": None}, ["matrix"]),
        ({"rows": "16"}, ["matrix.rows"]), ({"rows": []}, ["matrix.rows"]), ({"cols": [4] * 17}, ["matrix.cols"]),
        ({"rows": [16, 17, True]}, ["matrix.rows"]), ({"cols": [4, 49]}, ["matrix.cols"]),
        ({"map": {"0": "S20"}}, ["map"]), ({"map": [[0, 0]]}, ["map"]), ({"map": [(0, 0, "S20")]}, ["map"]),
        ({"map": [[8, 0, "S20"]]}, ["map", "row 8"]), ({"map": [[0, -1, "S20"]]}, ["map", "col -1"]),
        ({"map": [[0, True, "S20"]]}, ["map", "col"]), ({"map": [[0, 0, "Q7"]]}, ["map"]),
        ({"map": [[0, 0, "MISS"]]}, ["map", "MISS"]), ({"map": cells + [[0, 0, "S1"]]}, ["map", "(0, 0)"]),
        ({"leds": {"pin": 5, "beds": "9"}}, ["leds.beds"]), ({"leds": {"pin": 5, "colour": 1}}, ["leds.colour"]),
        ({"leds": {"pin": 5, "beds": 22}}, ["leds"]), ({"leds": {"pin": 5, "per_side": 0}}, ["leds"]),
        ({"leds": {"pin": 5, "per_side": 10}}, ["leds"]),
        ({"leds": {"pin": 5, "status": 10}}, ["leds"]),
        ({"buttons": {"next": 34, "start": 35}}, ["buttons"]), ({"buttons": {"next": "34"}}, ["buttons.next"]),
        ({"brightness": 256}, ["brightness"]), ({"brightness": -1}, ["brightness"]),
        ({"brightness": True}, ["brightness"]),
    ]
    for change, words in table:
        _refused(_prof(**change), words)
    for d in ([], "generic"):
        _refused(d, ["object"])


def test_a_map_table_lists_back_the_cells_it_was_made_from():
    cells = [[0, 0, "S20"], [2, 5, "T3"], [7, 7, "DB"], [3, 1, "SI5"]]
    table = profile.parse_map(cells, 8, 8)
    assert profile.map_cells(table, 8) == sorted(cells)
    assert profile.map_cells(profile.parse_map([], 4, 4), 4) == []


def test_each_pin_is_named_with_its_role_and_strapping_pins_say_which_way_not_to_pull():
    _refused(_prof(cols=[4, 13, 14, 26, 27, 32, 33, 6]), ["GPIO 6", "column"])
    _refused(_prof(rows=[16, 17, 18, 19, 21, 22, 23, 7]), ["GPIO 7", "row"])
    # the strip on GPIO 0 is checked like any pin: a strapping pin, and not also a row
    cols = COLS[:-1] + [34]  # no strapping pin among them (34: input-only, with its pull-up)
    warn = profile.check_pins(ROWS, cols, 0, {}, [34], "esp32")
    assert len(warn) == 1 and "GPIO 0" in warn[0] and "LED strip" in warn[0], warn
    try:
        profile.check_pins(ROWS[:7] + [0], cols, 0, {}, [34], "esp32")
    except profile.ProfileError as e:
        assert "GPIO 0" in str(e)
    else:
        raise AssertionError("GPIO 0 taken twice")
    # GPIO 2 and 12 must not be pulled high while the chip starts, 0, 5 and 15 not low
    for pin, way in ((2, "high"), (12, "high"), (0, "low"), (5, "low"), (15, "low")):
        warn = profile.check_pins(ROWS, cols, pin, {}, [34], "esp32")
        assert len(warn) == 1 and way in warn[0].split() and "GPIO %d" % pin in warn[0], (pin, warn)


def test_every_profile_limit_takes_its_edge_and_refuses_one_beyond():
    def ok(d):
        return profile.Profile(d)

    assert ok(_prof(name="x" * 32)).name == "x" * 32
    _refused(_prof(name="x" * 33), ["name"])
    p = ok(_prof(rows=[16], map=[[0, 0, "S20"]]))
    assert p.rows == 1
    p = ok(_prof(cols=[4], map=[[0, 0, "S20"]]))
    assert p.cols == 1
    # sixteen rows are the most (17 pins that could each drive a row: only the count is wrong),
    # and a refusal starts with the field as the profile spells it
    rows = [0, 2, 4, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 25, 26, 27]
    assert ok(_prof(rows=rows[:16], cols=[32, 33], map=[[0, 0, "S20"]])).rows == 16
    # pull-ups: sixteen at most, on pins the profile uses
    d = profile.default_dict()
    used = d["matrix"]["rows"] + d["matrix"]["cols"] + sorted(d["buttons"].values())
    assert ok(_prof(pullups=used[-16:])).rows == 8
    for change, field in (({"rows": rows}, "matrix.rows:"), ({"rows": []}, "matrix.rows:"),
                          ({"cols": []}, "matrix.cols:"), ({"cols": "4"}, "matrix.cols:"),
                          ({"pullups": used[-17:]}, "pullups:"), ({"pullups": "34"}, "pullups:")):
        try:
            profile.Profile(_prof(map=[[0, 0, "S20"]], **change))
        except profile.ProfileError as e:
            assert str(e).split()[0] == field, (change, str(e))
        else:
            raise AssertionError("accepted %r" % (change,))
    d = _prof()
    del d["map"]  # no map: every crossing unmapped (learn one later)
    assert set(ok(d).map) == {profile.UNMAPPED}
    for leds in ({"beds": 1, "per_side": 1, "status": 0}, {"beds": 21, "per_side": 9, "status": 9}):
        leds["pin"] = 5
        assert ok(_prof(leds=leds)).leds == leds
    for b in (0, 255):
        assert ok(_prof(brightness=b)).brightness == b
    d = _prof()
    del d["brightness"]
    assert ok(d).brightness == 64  # the default
    for t, good in ((60000, True), (60001, False), (True, False), (0, True)):
        timing = dict(profile.TIMING, lockout_ms=t)
        if good:
            assert ok(_prof(timing=timing)).timing["lockout_ms"] == t
        else:
            _refused(_prof(timing=timing), ["timing.lockout_ms"])
    _refused(_prof(timing={"bogus_ms": 5}), ["timing.bogus_ms"])
    _refused(_prof(pullups=[34, "35"]), ["pullups"])


def test_the_built_in_profile_is_the_shipped_generic_8x8():
    shipped = dict((n, json.loads(t)) for n, t in _shipped())["generic-8x8"]
    built_in = profile.default_dict()
    for k in built_in:
        if k != "description":  # the shipped file's says more (the module to buy)
            assert built_in[k] == shipped[k], k


def _chip(chip, rows, cols, led=-1, buttons=None):
    d = profile.default_dict()
    d.update({"chip": chip, "matrix": {"rows": rows, "cols": cols}, "map": [], "leds": {"pin": led},
              "buttons": buttons or {}, "pullups": []})
    return d


S3_ROWS = [4, 5, 6, 7]
S3_COLS = [8, 9, 10, 11]
C3_ROWS = [0, 1, 3]
C3_COLS = [4, 5, 6, 7]


def test_each_chip_refuses_its_flash_psram_usb_and_console_pins_and_pins_it_lacks():
    # (chip, pin, words): every pin is tried as a row, a column, the strip and a button
    table = [("esp32s3", p, "flash") for p in range(26, 33)]
    table += [("esp32s3", p, "octal PSRAM") for p in (33, 34, 35, 36, 37)]
    table += [("esp32s3", 19, "USB"), ("esp32s3", 20, "USB"), ("esp32s3", 43, "UART0"), ("esp32s3", 44, "UART0")]
    table += [("esp32s3", p, "ESP32-S3 has no such pin") for p in (22, 23, 24, 25)]
    table += [("esp32c3", p, "flash") for p in range(11, 18)]
    table += [("esp32c3", 18, "USB-Serial/JTAG"), ("esp32c3", 19, "USB-Serial/JTAG"), ("esp32c3", 20, "UART0"),
              ("esp32c3", 21, "UART0")]
    table += [("esp32c3", p, "ESP32-C3 has no such pin") for p in (22, 25, 32, 39, 48)]
    for chip, pin, words in table:
        rows, cols = (S3_ROWS, S3_COLS) if chip == "esp32s3" else (C3_ROWS, C3_COLS)
        for d in (_chip(chip, rows + [pin], cols), _chip(chip, rows, cols + [pin]), _chip(chip, rows, cols, led=pin),
                  _chip(chip, rows, cols, buttons={"next": pin})):
            _refused(d, ["GPIO %d" % pin, words])


def test_the_classic_chips_rules_stay_its_own():
    # pins the classic chip refuses are fine on the S3, and the other way round
    p = profile.Profile(_chip("esp32s3", [1, 2, 38, 47], [40, 41, 42, 48], led=21, buttons={"next": 39}))
    assert p.chip == "esp32s3" and p.warnings() == []
    _refused(_chip("esp32", [16, 17, 18, 19], [4, 13, 14, 47]), ["GPIO 47", "ESP32 has no such pin"])
    _refused(_chip("esp32", [16, 17, 18, 19], [4, 13, 14, 43]), ["GPIO 43", "ESP32 has no such pin"])
    # the S3 and the C3 have no input-only pins: no external pull-up asked for
    profile.Profile(_chip("esp32s3", S3_ROWS, [38, 39, 40, 41]))
    _refused(_chip("esp32s5", S3_ROWS, S3_COLS), ["chip", "esp32s3", "esp32c3"])
    d = _chip("esp32s3", [4, 5, 13, 14], [15, 16, 17, 18])
    del d["chip"]
    assert profile.Profile(d).chip == "esp32"  # a profile without one is a classic ESP32's, as before


def test_each_chips_strapping_pins_warn_which_way_not_to_pull():
    for chip, rows, cols, pins in (("esp32s3", S3_ROWS, S3_COLS, {0: "low", 45: "high", 46: "high", 3: "high or low"}),
                                   ("esp32c3", C3_ROWS, C3_COLS, {2: "low", 8: "low", 9: "low"})):
        for pin, way in pins.items():
            warn = profile.Profile(_chip(chip, rows, cols + [pin])).warnings()
            assert len(warn) == 1 and warn[0].startswith("GPIO %d (column) is a strapping pin" % pin), warn
            assert warn[0].endswith("pull it %s while the board starts" % way), warn


FLASH_S3 = "wired to the module's flash (and PSRAM select)"
PSRAM_S3 = "wired to the octal PSRAM on ESP32-S3 modules that have it (N8R8, N16R8: the DevKitC-1's)"
USB_S3 = "the native USB port's D-/D+, the console's port on a stock image: leave it alone"
UART_S3 = "the serial console's UART0 (the DevKitC-1's UART port): leave it alone"
FLASH_ANY = "wired to the flash chip, never usable"
USB_C3 = "the native USB port's D-/D+, the USB-Serial/JTAG console: leave it alone"
UART_C3 = "the serial console's UART0: leave it alone"
UART_ESP32 = "the USB serial port's line, leave it alone"
PICO_20 = ("MicroPython lists it, but only the ESP32-PICO-V3 package brings it out; the ESP32 modules "
           "this firmware runs on have no such pin")
# chip: (its GPIOs, {pin never usable: why, word for word}, input-only pins, {strapping pin: the level not to pull it to})
CHIP_PINS = {
    "esp32s3": (list(range(0, 22)) + list(range(26, 49)),
                {26: FLASH_S3, 27: FLASH_S3, 28: FLASH_S3, 29: FLASH_S3, 30: FLASH_S3, 31: FLASH_S3, 32: FLASH_S3,
                 33: PSRAM_S3, 34: PSRAM_S3, 35: PSRAM_S3, 36: PSRAM_S3, 37: PSRAM_S3,
                 19: USB_S3, 20: USB_S3, 43: UART_S3, 44: UART_S3},
                [], {0: "low", 3: "high or low", 45: "high", 46: "high"}),
    "esp32c3": (list(range(0, 22)),
                {11: FLASH_ANY, 12: FLASH_ANY, 13: FLASH_ANY, 14: FLASH_ANY, 15: FLASH_ANY, 16: FLASH_ANY,
                 17: FLASH_ANY, 18: USB_C3, 19: USB_C3, 20: UART_C3, 21: UART_C3},
                [], {2: "low", 8: "low", 9: "low"}),
    "esp32": (list(range(0, 20)) + [21, 22, 23, 25, 26, 27] + list(range(32, 40)),
              {20: PICO_20, 6: FLASH_ANY, 7: FLASH_ANY, 8: FLASH_ANY, 9: FLASH_ANY, 10: FLASH_ANY, 11: FLASH_ANY,
               1: UART_ESP32, 3: UART_ESP32},
              [34, 35, 36, 37, 38, 39], {0: "low", 2: "high", 5: "low", 12: "high", 15: "low"}),
}


def test_chip_pins_gives_each_chips_pins_and_why_the_unusable_ones_are():
    # the reasons are what a refused profile and the wiring diagram's notes say, word for word
    assert sorted(profile.CHIPS) == sorted(CHIP_PINS)
    for chip, (gpios, never, input_only, strapping) in CHIP_PINS.items():
        g, n, i, s = profile.chip_pins(chip)
        assert list(g) == gpios, chip
        assert sorted(n.items()) == sorted(never.items()), chip
        assert list(i) == input_only and s == strapping, chip
    assert 49 not in profile.chip_pins("esp32s3")[0] and 26 in profile.chip_pins("esp32s3")[0]


def test_a_refused_pin_is_named_with_the_whole_reason():
    rows = {"esp32s3": S3_ROWS, "esp32c3": C3_ROWS, "esp32": [16, 17, 18, 19]}
    cols = {"esp32s3": S3_COLS, "esp32c3": C3_COLS, "esp32": [4, 13, 14, 21]}
    for chip, (_, never, _, _) in CHIP_PINS.items():
        for pin, why in never.items():
            try:
                profile.Profile(_chip(chip, rows[chip], cols[chip], buttons={"undo": pin}))
            except profile.ProfileError as e:
                assert str(e) == "GPIO %d (undo button): %s" % (pin, why), (chip, str(e))
            else:
                raise AssertionError("accepted: %s GPIO %d" % (chip, pin))

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
        assert sorted(x for x in inputs if x in profile.INPUT_ONLY) == sorted(p.pullups)
        assert len(p.pullups) <= 4  # the parts list's resistors
        assert 0 not in d.get("buttons", {}).values()  # held at reset, GPIO 0 means download mode
        assert 2 not in p.row_pins + p.col_pins  # the DevKit's LED loads GPIO 2
        assert 12 not in p.row_pins + p.col_pins  # sets the flash voltage at reset


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
    warn = profile.check_pins(ROWS, cols, 0, {}, [34])
    assert len(warn) == 1 and "GPIO 0" in warn[0] and "LED strip" in warn[0], warn
    try:
        profile.check_pins(ROWS[:7] + [0], cols, 0, {}, [34])
    except profile.ProfileError as e:
        assert "GPIO 0" in str(e)
    else:
        raise AssertionError("GPIO 0 taken twice")
    # GPIO 2 and 12 must not be pulled high while the chip starts, 0, 5 and 15 not low
    for pin, way in ((2, "high"), (12, "high"), (0, "low"), (5, "low"), (15, "low")):
        warn = profile.check_pins(ROWS, cols, pin, {}, [34])
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

"""bench/chip_names.py: the pools of names the firmware makes on the ESP32
(py/qstr.c's rule: each pool twice the last; the image's pools declare room
for 10, so the first a .mpy makes holds 20 however many names are frozen),
and only the names the chip's image lacks go into them."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import chip_names  # noqa: E402


@pytest.mark.parametrize("frozen, names, pools", [
    (382, 0, []),
    (382, 1, [20]),  # the frozen pool's declared room is min(len, 10) (tools/mpy-tool.py)
    (382, 20, [20]),  # full to the last
    (382, 21, [20, 40]),  # one more: a pool twice the last
    (382, 1260, [20, 40, 80, 160, 320, 640]),
    (382, 1261, [20, 40, 80, 160, 320, 640, 1280]),
    (0, 5, [20]),  # none frozen: the static pool's room, MICROPY_ALLOC_QSTR_ENTRIES_INIT
    (3, 5, [10]),  # a frozen pool of 3: twice it, but MICROPY_ALLOC_QSTR_ENTRIES_INIT at least
])
def test_each_pool_holds_twice_the_last_from_the_images_declared_room(frozen, names, pools):
    assert chip_names.chip_pools(frozen, names) == pools


def test_a_name_with_punctuation_is_found_in_the_image_by_its_c_name():
    image = {"const": {"_lt_lambda_gt_", "_comma__space_", "print"}, "frozen": {"sleep_ms"}}
    assert chip_names.c_name("<lambda>") == "_lt_lambda_gt_"  # py/makeqstrdata.py's qstr_escape
    assert chip_names.c_name("%s\\") == "_percent_s_backslash_"
    assert chip_names.c_name("é") == "_0xe9_"
    assert [chip_names.in_image(n, image) for n in ("<lambda>", ", ", "print", "sleep_ms", "-", "keeper")] \
        == [True, True, True, True, False, False]


def test_a_paths_names_are_its_loaded_modules_as_the_chip_has_them_less_the_images():
    image = {"const": {"print", "append"}, "frozen": set()}
    sim = {"shove/keeper.py": {"keeper", "tally", "print"}, "shove/rules.py": {"rules"},
           "shove/boards/virtual.py": {"Virtual", "tally"}}
    chip = {"shove/keeper.py": {"keeper", "tally", "append", "now"}, "shove/rules.py": {"rules"},
            "shove/boards/esp32.py": {"Esp32", "grb"}}
    # the tour's run loaded keeper and the virtual board (their paths among its names), not rules;
    # "now" is in the tour's image, so not among what it interned: keeper's table brings it
    interned = {"keeper", "tally", "shove.keeper", "shove/keeper.mpy", "Virtual", "shove.boards.virtual",
                "shove/boards/virtual.mpy", "H", "print"}
    assert chip_names.chip_count(interned, image, sim, chip) == {
        "keeper", "tally", "now", "shove.keeper", "shove/keeper.mpy", "H",
        "Esp32", "grb", "esp32", "shove.boards.esp32", "shove/boards/esp32.mpy"}


def test_a_rows_chip_and_tour_pools_are_priced_alike():
    r = chip_names.row(60, set("abcdefghij"), 382)
    assert r["tour"]["pools"] == [20, 40] and r["chip"]["pools"] == [20]
    assert r["chip"]["room_left"] == 10
    assert r["chip"]["bytes"] == 176  # 7 bytes a name and a 32-byte head, in 16-byte blocks


def test_the_images_names_are_read_in_their_two_parts():
    image = chip_names.image_names()
    assert {"print", "socket", "sleep_ms", "_lt_lambda_gt_"} <= image["const"]  # py/ and the port's C
    assert "" not in image["const"] | image["frozen"]
    assert not image["const"] & image["frozen"]  # the frozen pool holds only what the image lacks
    assert 100 < len(image["frozen"]) < len(image["const"])


# The names the tour's runs made beyond the modules' tables and imports: bench/chip_names.py's
# every_module against the tables alone (1,258 against 1,244). Most are the short literals of
# the tour's own steps, which the chip never compiles, so this errs high.
RUN_TIME_NAMES = 14
# The pools the tour charges the firmware on each Wi-Fi path (docs/performance.md)
TOUR_POOLS = 6


def test_with_every_module_loaded_the_chips_names_fit_the_pools_the_tour_charges():
    """A power-on that loads every module (first set-up, games with pages, an update, the doctor,
    a fault report) must not open a seventh pool of names (1,280 names, 9 KB in one block)."""
    image = chip_names.image_names()
    names = len(chip_names.every_module(chip_names.chip_tables(), image)) + RUN_TIME_NAMES
    pools = chip_names.chip_pools(len(image["frozen"]), names)
    assert len(pools) <= TOUR_POOLS, (
        "%d names with every module loaded on the chip (%d made beside the modules'): they open pool %d of "
        "%d names; make constants only their module reads private const(), or see `python bench/chip_names.py`"
        % (names, RUN_TIME_NAMES, len(pools), pools[-1]))

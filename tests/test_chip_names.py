"""bench/chip_names.py: the pools of names the firmware's modules make on the
ESP32 (py/qstr.c's rule: the first pool twice the frozen pool, each next twice
the last), and only the names the image lacks go into them."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import chip_names  # noqa: E402


@pytest.mark.parametrize("frozen, names, pools", [
    (382, 0, []),
    (382, 1, [764]),
    (382, 764, [764]),  # full to the last
    (382, 765, [764, 1528]),  # one more: a pool twice the last
    (382, 1242, [764, 1528]),
    (382, 764 + 1528 + 1, [764, 1528, 3056]),
    (3, 5, [10]),  # a small frozen pool: MICROPY_ALLOC_QSTR_ENTRIES_INIT at least
])
def test_each_pool_holds_twice_the_last_and_the_first_twice_the_frozen_one(frozen, names, pools):
    assert chip_names.chip_pools(frozen, names) == pools


def test_only_the_names_the_image_lacks_are_interned_and_charged():
    image = {"const": {"print", "append"}, "frozen": {"sleep_ms"}}
    r = chip_names.report({"print", "sleep_ms", "keeper", "tally"}, image, tour_names=60)
    assert r["chip"]["interned"] == 2
    assert r["chip"]["pools"] == [10]  # (a frozen pool of one name: the floor of 10)
    assert r["chip"]["room_left"] == 8
    assert r["tour"]["pools"] == [20, 40]
    assert r["chip"]["bytes"] == 112  # 7 bytes a name and a 32-byte head, in 16-byte blocks


def test_the_images_names_are_read_in_their_two_parts():
    image = chip_names.image_names()
    assert {"print", "socket", "sleep_ms"} <= image["const"]  # py/ and the port's C
    assert "" not in image["const"] | image["frozen"]
    assert not image["const"] & image["frozen"]  # the frozen pool holds only what the image lacks
    assert 100 < len(image["frozen"]) < len(image["const"])

"""The chip of the suite's virtual board (hapenny test --sim --chip: $HAPENNY_CHIP)
and the profile it runs, whose pins and map the tests read rather than assume;
a test of something that profile has not (a strip, buttons, a segment) is
skipped and says why, as it would be on such a board."""
import json
import os

import pytest

from hapenny import firmware
from hapenny.sim.board import CHIPS

CHIP = os.environ.get("HAPENNY_CHIP") or "esp32"
PROFILE = json.loads(firmware.profile_path(CHIPS[CHIP]["profile"]).read_text())
SEGMENTS = {seg for _, _, seg in PROFILE["map"]}


def need_segments(*segs):
    """Skip a test that throws segments the board's profile does not map (a C3's beds-only one)."""
    missing = [s for s in segs if s not in SEGMENTS]
    if missing:
        pytest.skip("the board's profile (%s) maps no %s" % (PROFILE["name"], ", ".join(missing)))


def need_strip():
    if PROFILE["leds"]["pin"] < 0:
        pytest.skip("the board's profile (%s) has no LED strip" % PROFILE["name"])


def need_buttons():
    if not PROFILE.get("buttons"):
        pytest.skip("the board's profile (%s) has no buttons" % PROFILE["name"])


"""The journal on the virtual board's real flash (MicroPython's littlefs on
the counting block device, host/hapenny/sim/runtime/flashdev.py), driven
through the firmware's own App in the MicroPython unix port
(tests/flash_game_mp.py): what a dart costs the flash over a long game, and
power cuts at random block-device operations."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hapenny.sim.board import micropython_path

ROOT = Path(__file__).resolve().parent.parent
SOAK = bool(os.environ.get("HAPENNY_SOAK"))


def run_game(tmp_path, mode, n, seed):
    shutil.copyfile(ROOT / "hardware" / "profiles" / "generic-8x8.json", tmp_path / "profile.json")
    env = dict(os.environ, HAPENNY_FAST="1",
               MICROPYPATH="%s:%s" % (ROOT / "firmware", ROOT / "host" / "hapenny" / "sim" / "runtime"))
    env.pop("HAPENNY_TIMING", None)
    r = subprocess.run([micropython_path(), "-X", "heapsize=4M", str(ROOT / "tests" / "flash_game_mp.py"),
                        str(tmp_path), mode, str(n), str(seed)], env=env, capture_output=True, text=True,
                       timeout=1800)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    assert r.returncode == 0 and lines, r.stdout[-2000:] + r.stderr[-2000:]
    return json.loads(lines[-1])


def test_a_long_game_erases_a_block_at_most_every_20_darts_and_never_for_a_dart(tmp_path):
    r = run_game(tmp_path, "wear", 600, 1)
    assert r["darts"] == 600
    # every erase the flash made, new games included, against the darts thrown
    assert r["erases"] * 20 <= r["darts"], r
    # no dart erases (another may come within 250 ms, and an erase can stall
    # the CPU for 400 ms): the erases come at player changes and new games
    assert r["erases_on_darts"] == 0, r
    assert r["erases_on_nexts"] > 0, r
    # one commit of 64 bytes a dart, into the segment kept open: a few
    # reads (the commit checked), no path looked up
    assert r["prog_bytes"] <= 64 * r["darts"], r
    assert r["max_dart_reads"] <= 4, r
    # so the flash stalls the CPU inside a visit (a dart or an undo) for a few
    # ms even at worst-case timings: far inside the 60 ms lockout
    assert r["max_visit_ops"]["erases"] == 0, r
    assert 0 < r["max_visit_flash_us"][0] <= r["max_visit_flash_us"][1] < 20000, r


@pytest.mark.parametrize("seed", [11] if not SOAK else [11, 12, 13, 14])
def test_power_cuts_at_random_flash_operations_lose_nothing_acknowledged(tmp_path, seed):
    n = 250 if SOAK else 60  # make soak: 1,000 cuts over the four seeds
    r = run_game(tmp_path, "cuts", n, seed)
    assert r["cuts"] == n
    assert r["lost"] == 0, r
    assert r["kinds"].get("throw", 0) > n // 3, r  # the cuts landed in darts' writes, mostly

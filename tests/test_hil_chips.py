"""A few of the hardware-in-the-loop suite's tests on a virtual ESP32-S3 and
ESP32-C3 (hapenny test --sim --chip runs all of it: some four minutes a
chip, too long for make test): a game through the matrix, the chip's pins,
the BOOT button held at power-up (GPIO 9 on the C3), the doctor on a healthy
board (its console) and the REPL hand-over with mpremote."""
import os
import subprocess
import sys

import pytest

from mphelp import ROOT

SUBSET = ["tests/hil/test_play.py::test_variant_played_to_a_win_through_the_matrix[classic]",
          "tests/hil/test_esp32_semantics.py::test_pins_refuse_what_the_chip_cannot_do",
          "tests/hil/test_esp32_semantics.py::test_boot_held_at_power_up_starts_in_safe_mode",
          "tests/hil/test_doctor.py::test_a_healthy_board_passes_every_step",
          "tests/hil/test_repl.py::test_mpremote_exec_run_and_files",
          "tests/hil/test_repl.py::test_two_ctrl_c_hand_the_port_to_a_person_and_ctrl_d_restarts_main"]


@pytest.mark.parametrize("chip", ["esp32s3", "esp32c3"])
def test_a_subset_of_the_suite_passes_on_each_chips_virtual_board(chip):
    env = dict(os.environ, HAPENNY_CHIP=chip)
    env.pop("HAPENNY_PORT", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *SUBSET],
                       cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "%d passed" % len(SUBSET) in r.stdout, r.stdout[-2000:]

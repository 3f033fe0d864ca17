"""The suite's last line says what ran where: a hardware-in-the-loop test runs
on the host under CPython and drives the board's firmware, which runs under
MicroPython; a portable test also runs inside MicroPython; the rest run under
CPython alone (`hapenny test --sim` prints the same line)."""
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# (test id, where it runs); the hardware-in-the-loop one on a virtual board of the run's own
PICK = (("hil/test_protocol.py::test_info_names_board_protocol_and_matrix", "board"),
        ("portable/test_chip.py::test_other_chips_are_refused_with_the_chips_that_are_supported", "cpython"),
        ("test_portable_on_micropython.py::test_under_micropython[test_chip-test_other_chips_are_refused_with_the_chips_that_are_supported]",
         "micropython"))


def test_the_summary_counts_tests_that_drive_the_firmware_apart_from_cpython_alone():
    """With the tests in xdist workers, their reports crossing to the
    controller, as under make test."""
    ids = [i for i, _ in PICK]
    for how in (["-n", "2"],):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + how + ids,
                           cwd=str(TESTS), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("interpreters: ")]
        assert line == ["interpreters: 3 tests passed: 1 ran on the host under CPython, driving the board's "
                        "firmware running under MicroPython; 1 ran inside MicroPython; 1 under CPython alone"], (
            how, r.stdout[-2000:])
        assert not re.search(r"0 under MicroPython", r.stdout)

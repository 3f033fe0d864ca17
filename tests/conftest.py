"""Shared test set-up: firmware on the path, the MicroPython interpreter, and
a summary of how many tests ran under each interpreter."""
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
TESTS = ROOT / "tests"
PORTABLE = TESTS / "portable"
for p in (FIRMWARE, PORTABLE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def pytest_addoption(parser):
    parser.addoption("--port", action="store", default=None,
                     help="run the hardware-in-the-loop suite on the board at this serial port "
                          "(default: $HAPENNY_PORT, else a virtual board)")


def micropython_path():
    env = os.environ.get("HAPENNY_MICROPYTHON")
    if env and os.access(env, os.X_OK):
        return env
    venv = ROOT / ".venv" / "bin" / "micropython"
    if venv.exists():
        return str(venv)
    return shutil.which("micropython")


@pytest.fixture(scope="session")
def micropython():
    path = micropython_path()
    if not path:
        pytest.fail("no micropython interpreter: run `make setup` or set HAPENNY_MICROPYTHON")
    return path


def mp_env(*paths):
    """Environment for a micropython child: firmware and the given folders on its path."""
    env = dict(os.environ)
    env["MICROPYPATH"] = ":".join([str(p) for p in paths] + [str(FIRMWARE), ".frozen"])
    return env


_counts = {"cpython": 0, "micropython": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        key = "micropython" if "micropython" in report.keywords else "cpython"
        _counts[key] += 1


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        "interpreters: %d tests passed under CPython, %d under MicroPython"
        % (_counts["cpython"], _counts["micropython"])
    )

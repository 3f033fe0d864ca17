"""Paths and the MicroPython interpreter, shared by the test modules."""
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
TESTS = ROOT / "tests"
PORTABLE = TESTS / "portable"
for p in (FIRMWARE, PORTABLE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def micropython_path():
    env = os.environ.get("HAPENNY_MICROPYTHON")
    if env and os.access(env, os.X_OK):
        return env
    venv = ROOT / ".venv" / "bin" / "micropython"
    if venv.exists():
        return str(venv)
    return shutil.which("micropython")


def mp_env(*paths):
    """Environment for a micropython child: firmware and the given folders on its path."""
    env = dict(os.environ)
    env["MICROPYPATH"] = ":".join([str(p) for p in paths] + [str(FIRMWARE), ".frozen"])
    return env

# Figures that reliability tests measure; printed at the end of the run and
# written to build/figures.json.
FIGURES = []


def figure(name, **values):
    FIGURES.append((name, values))

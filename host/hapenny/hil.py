"""`hapenny test`: the hardware-in-the-loop suite (tests/hil) on a board.

On a real board the tests that need the simulator's electrical access are
skipped and say so; with --sim the suite starts a virtual board itself."""
import subprocess
import sys

from hapenny import firmware

SUITE = firmware.ROOT / "tests" / "hil"


def run_suite(port=None, junit=None, extra=None, sim=False):
    from hapenny.connect import choose_port

    if not SUITE.is_dir():
        raise SystemExit("the suite is not here (%s): run hapenny from a clone of the repository" % SUITE)
    cmd = [sys.executable, "-m", "pytest", str(SUITE), "-v", "-rs", "--tb=short", "-p", "no:cacheprovider",
           "--rootdir", str(firmware.ROOT)]
    if not sim:
        port = choose_port(port)
        cmd += ["--port", port]
        print("hardware-in-the-loop suite on %s: the tests run here under CPython and drive the board's "
              "firmware, which runs under MicroPython on the chip, over the serial port" % port, flush=True)
    else:
        print("hardware-in-the-loop suite on a virtual board: the tests run here under CPython and drive the "
              "board's firmware, which runs under MicroPython (its unix port), over a serial port", flush=True)
    if junit:
        cmd += ["--junitxml", str(junit)]
    extra = [a for a in (extra or []) if a != "--"]
    return subprocess.call(cmd + extra)

"""`hapenny test`: the hardware-in-the-loop suite (tests/hil) on a board.

On a real board the tests that need the simulator's electrical access are
skipped and say so; with --sim the suite starts a virtual board itself."""
import subprocess
import sys

from hapenny import firmware

SUITE = firmware.ROOT / "tests" / "hil"


def where(port):
    """Where the firmware on `port` runs, as its `info` says (sys.platform:
    "esp32" on the chip): "on the chip", "on a virtual board (the unix
    port)"; a board that does not answer: "on the board"."""
    from hapenny.connect import connect

    try:
        link, info, ser = connect(port)
        ser.close()
    except Exception:  # the suite's own first test says what is wrong with the port
        return "on the board"
    return "on the chip" if info.get("platform") == "esp32" else "on a virtual board (the unix port)"


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
              "firmware, which runs under MicroPython %s, over the serial port" % (port, where(port)), flush=True)
    else:
        print("hardware-in-the-loop suite on a virtual board: the tests run here under CPython and drive the "
              "board's firmware, which runs under MicroPython (its unix port), over a serial port", flush=True)
    if junit:
        cmd += ["--junitxml", str(junit)]
    extra = [a for a in (extra or []) if a != "--"]
    return subprocess.call(cmd + extra)

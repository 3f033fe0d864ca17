"""The computer's decision time on the ESP32, estimated from instructions
instead of from this PC's clock.

bench/cpu_player.py multiplies a decision's best-of-ten time on the unix
port by the factor bench/esp32_scale.py measured minutes earlier; on this
shared machine the two readings move apart (the same code read 27 to 67 ms
from one run to the next). Instructions do not depend on the load: valgrind
(callgrind) counts what the unix port executes for each of MicroPython's
perf_bench benchmarks (the run and its result, less a run of the set-up
alone) and for a decision (eleven decisions minus one, over ten).
The ESP32's published time for each benchmark (bench/esp32_scale.py) over
its instructions gives microseconds on the chip per million unix-port
instructions; their geometric mean times a decision's instructions is the
estimate. Slow (about five minutes: every program runs under valgrind).

    python bench/cpu_instructions.py [SCENARIO ...]   # writes build/cpu_instructions.json
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "host"))

import esp32_scale  # noqa: E402
from hapenny.sim.board import micropython_path  # noqa: E402

DRIVER = """
import sys
cur = (0, 0)
param = None
for nm, p in bm_params.items():
    if 10 * nm[0] <= 12 * 100 and nm[1] <= 100 and nm > cur:
        cur = nm
        param = p
run, result = bm_setup(param)
if sys.argv[-1] == "run":
    run()
    norm, out = result()
    print(norm)
"""


def instructions(argv, env=None):
    """Instructions valgrind's callgrind counts for the whole program, and its stdout."""
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                       capture_output=True, text=True, check=True, env=env)
    return int(re.search(r"Collected : (\d+)", p.stderr).group(1)), p.stdout


def calibrate(mp):
    """ESP32 microseconds per million unix-port instructions, per benchmark."""
    d = esp32_scale.perf_bench_dir()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, score in esp32_scale.ESP32.items():
            f = Path(tmp) / (name + ".py")
            f.write_text((d / (name + ".py")).read_text() + DRIVER)
            ran, stdout = instructions([mp, str(f), "run"])
            setup, _ = instructions([mp, str(f), "setup"])
            norm = int(stdout.split()[-1])
            chip_us = 1e6 * norm / score  # score = 1e6 * norm / time_us
            out[name] = {"instructions": ran - setup, "esp32_us": round(chip_us),
                         "us_per_minstr": round(chip_us / ((ran - setup) / 1e6))}
    return out


def decision(mp, scenario):
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    script = str(ROOT / "bench" / "mp_cpu_decide.py")
    one, _ = instructions([mp, script, scenario, "1"], env)
    eleven, _ = instructions([mp, script, scenario, "11"], env)
    return (eleven - one) // 10


def measure(scenarios=None):
    mp = micropython_path()
    cal = calibrate(mp)
    per = math.exp(sum(math.log(c["us_per_minstr"]) for c in cal.values()) / len(cal))
    lo = min(c["us_per_minstr"] for c in cal.values())
    hi = max(c["us_per_minstr"] for c in cal.values())
    if not scenarios:
        text = (ROOT / "bench" / "mp_cpu_decide.py").read_text()
        scenarios = re.findall(r'^    "([^"]+)": \(', text, re.M)
    rows = []
    for s in scenarios:
        n = decision(mp, s)
        rows.append({"scenario": s, "instructions": n, "esp32_ms": round(n * per / 1e9, 1),
                     "esp32_ms_range": [round(n * lo / 1e9, 1), round(n * hi / 1e9, 1)]})
    return {"calibration": cal, "us_per_minstr": round(per), "decisions": rows}


def report(res):
    print("ESP32 time per million unix-port instructions: %d us (geometric mean of %d benchmarks, %d to %d)" % (
        res["us_per_minstr"], len(res["calibration"]),
        min(c["us_per_minstr"] for c in res["calibration"].values()),
        max(c["us_per_minstr"] for c in res["calibration"].values())))
    print("| decision | unix-port instructions | ESP32 estimate | over the benchmarks' range |")
    print("|---|---|---|---|")
    for r in res["decisions"]:
        print("| %s | %.2f M | %.1f ms | %.1f-%.1f ms |" % (
            r["scenario"], r["instructions"] / 1e6, r["esp32_ms"], *r["esp32_ms_range"]))


if __name__ == "__main__":
    r = measure(sys.argv[1:])
    report(r)
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "cpu_instructions.json").write_text(json.dumps(r, indent=1))

"""The ESP32-S3's and ESP32-C3's rows beside the classic chip's, measured
now, alone, into bench/results.json and docs/performance.md (the rest of
the table stays the last whole `make bench` run's):

    python bench/chips_record.py [capture] [scan] [heap]      (make bench-chips)

capture: the ESP32 factor measured now (as `make bench` does), then on the
ESP32 timing model each chip's board, the classic one too, measured the same
way in the same run: the loop's period and 3,000 contacts of 0.5 ms
(esp32_model.measure_chip; about 5 minutes a chip, so not in `make bench`,
which must stay under ten). scan: a matrix read's cost on each chip, by its
native and its bytecode path (bench/chip_scan.py), at the same factor when
measured with capture. heap: the 32-bit heap tour at the S3's and C3's caps
on their own profiles (wasm_heap.chip_caps). Each part records the commit,
the load and the time it came from."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402
import run  # noqa: E402

CHIPS = ("esp32", "esp32s3", "esp32c3")


def _factor():
    argv = sys.argv[:]
    del sys.argv[1:]  # (bench/esp32_scale.py takes a first argument as its benchmarks' folder)
    try:
        return run.esp32_factor()
    finally:
        sys.argv[:] = argv


def capture():
    """{chip: esp32_model.measure_chip's figures, "run": where they came from}."""
    import esp32_model

    t0 = time.monotonic()
    factor = _factor()
    factor_s = round(time.monotonic() - t0, 1)
    old = os.environ.get("HAPENNY_ESP32_SCALE")
    os.environ["HAPENNY_ESP32_SCALE"] = str(factor["factor"])
    try:
        out = {chip: esp32_model.measure_chip(chip) for chip in CHIPS}
    finally:
        if old is None:
            del os.environ["HAPENNY_ESP32_SCALE"]
        else:
            os.environ["HAPENNY_ESP32_SCALE"] = old
    info = run.run_info()
    info.update(factor=factor["factor"], factor_source=factor["source"], factor_seconds=factor_s,
                seconds=round(time.monotonic() - t0, 1))
    out["run"] = info
    return out


def scan(factor=None, source="the capture's, measured in the same run"):
    """bench/chip_scan.py's figures at `factor` (None: measured now)."""
    import chip_scan

    t0 = time.monotonic()
    if factor is None:
        f = _factor()
        factor, source = f["factor"], f["source"]
    out = chip_scan.measure(factor)
    info = run.run_info()
    info.update(factor_source=source, seconds=round(time.monotonic() - t0, 1))
    out["run"] = info
    return out


def heap():
    import wasm_heap

    t0 = time.monotonic()
    out = wasm_heap.chip_caps()
    info = run.run_info()
    info["seconds"] = round(time.monotonic() - t0, 1)
    out["run"] = info
    return out


def record(parts):
    """The parts measured, then written into bench/results.json and the page
    at once (each part's run info taken before anything is written, so that
    it says whether the code was the commit's); each part kept in
    build/chips-partial.json as it is done."""
    results = json.loads(report.RESULTS.read_text())
    chips = results.setdefault("esp32_chips", {})
    partial = report.ROOT / "build" / "chips-partial.json"
    partial.parent.mkdir(exist_ok=True)
    got = {}
    if "capture" in parts:
        got["capture"] = capture()
        partial.write_text(json.dumps(got, indent=1))
    if "scan" in parts:
        # at the capture's factor, so that the rows price alike: measured in this run, or the recorded run's
        cap = got.get("capture", chips)
        rec = cap.get("run", {}).get("factor")
        got["scan"] = scan(rec, "the capture's, measured in the same run" if "capture" in got else
                           "the recorded capture's (commit %s)" % cap["run"]["commit"] if rec else None)
        partial.write_text(json.dumps(got, indent=1))
    if "heap" in parts:
        got["heap"] = heap()
        partial.write_text(json.dumps(got, indent=1))
    chips.update(got.get("capture", {}))
    if "scan" in got:
        chips["scan"] = got["scan"]
    if "heap" in got:
        results["wasm_heap"]["chip_caps"] = got["heap"]
    report.RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_docs()
    return results


if __name__ == "__main__":
    parts = [a for a in sys.argv[1:] if a in ("capture", "scan", "heap")] or ["capture", "scan", "heap"]
    r = record(parts)
    print(json.dumps({"esp32_chips": r.get("esp32_chips"), "chip_caps": r["wasm_heap"].get("chip_caps")}, indent=1))

"""The table's flash rows (bench/flash_costs.py) and its second-dart row
(bench/esp32_model.py) measured now, alone, without a whole `make bench`:
`python bench/flash_record.py`. Each row says the commit, the ESP32 factor
(measured in the same run, as `make bench` does) and the load it came from."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import esp32_model  # noqa: E402
import flash_costs  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402


def record():
    """These rows and the second-dart row measured now, alone, at the ESP32
    factor measured now, into bench/results.json (each with where it came
    from) and docs/performance.md's table: the rest of the table stays the
    last whole `make bench` run's."""
    argv = sys.argv[:]
    del sys.argv[1:]  # (bench/esp32_scale.py takes a first argument as its benchmarks' folder)
    try:
        factor = run.esp32_factor()
    finally:
        sys.argv[:] = argv
    old = os.environ.get("HAPENNY_ESP32_SCALE")
    os.environ["HAPENNY_ESP32_SCALE"] = str(factor["factor"])
    try:
        t0 = time.monotonic()
        res = flash_costs.measure()
        second = esp32_model.measure_second()
    finally:
        if old is None:
            del os.environ["HAPENNY_ESP32_SCALE"]
        else:
            os.environ["HAPENNY_ESP32_SCALE"] = old
    info = run.run_info()
    info.update(factor=factor["factor"], seconds=round(time.monotonic() - t0))
    res["run"] = second["run"] = info
    results = json.loads(report.RESULTS.read_text())
    results["flash"] = res
    results["esp32_model"]["second_dart_after_lockout"] = second
    report.RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_docs()
    return res, second


if __name__ == "__main__":
    for k, v in flash_costs.table_rows(record()[0]):
        print("%-45s %s" % (k, v))

"""The board's own web server under load on the ESP32 timing model
(bench/web_load.py), measured now, alone, into bench/results.json
("web_load") and docs/performance.md; the rest of the table stays the last
whole `make bench` run's:

    python bench/web_record.py          (make bench-web)

The ESP32 factor is measured first (as `make bench` does) and the rows run
at it. Some minutes (3 to 5 here: 3,000 contacts of 0.5 ms one at a time, under
the load), so not in `make bench`, which must stay under ten. The run's
commit, load and factor are recorded with the figures."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chips_record  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402


def measure():
    import web_load

    t0 = time.monotonic()
    factor = chips_record._factor()
    old = os.environ.get("HAPENNY_ESP32_SCALE")
    os.environ["HAPENNY_ESP32_SCALE"] = str(factor["factor"])
    try:
        info = run.run_info()  # the code as it was when the run began
        load_at_start = os.getloadavg()[0]
        out = web_load.measure()
    finally:
        if old is None:
            del os.environ["HAPENNY_ESP32_SCALE"]
        else:
            os.environ["HAPENNY_ESP32_SCALE"] = old
    info.update(factor=factor["factor"], factor_source=factor["source"], load_at_start=load_at_start,
                load_at_end=os.getloadavg()[0], seconds=round(time.monotonic() - t0, 1))
    out["run"] = info
    return out


def record():
    got = measure()
    (report.ROOT / "build").mkdir(exist_ok=True)
    (report.ROOT / "build" / "web-load.json").write_text(json.dumps(got, indent=1))
    results = json.loads(report.RESULTS.read_text())
    results["web_load"] = got
    report.RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_docs()
    return got


if __name__ == "__main__":
    print(json.dumps(record(), indent=1))

"""The board's own web server under load on the ESP32 timing model
(bench/web_load.py), measured now, alone, into bench/results.json and
docs/performance.md; the rest of the table stays the last whole `make
bench` run's:

    python bench/web_record.py [web] [net]          (make bench-web [LOADS=...])

`web`: issue 39's load (two pages, one reloading, a hostile client), into
"web_load"; `net`: issue 40's (`hapenny play` and a `state` poll over the
network, through the host's own link), into "net_play". Both by default.

The ESP32 factor is measured first (as `make bench` does) and the rows run
at it. Some minutes a load (3 to 5 here: 3,000 contacts of 0.5 ms one at a
time, under the load), so not in `make bench`, which must stay under ten.
Each load's run records its commit, the machine's load and the factor."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chips_record  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

# a load's name -> (its key in bench/results.json, web_load's clients' name)
LOADS = {"web": ("web_load", "WEB"), "net": ("net_play", "NET")}


def measure(names=tuple(LOADS)):
    """{results key: the load's figures} for each load named, at one factor measured first."""
    import web_load

    t0 = time.monotonic()
    factor = chips_record._factor()
    old = os.environ.get("HAPENNY_ESP32_SCALE")
    os.environ["HAPENNY_ESP32_SCALE"] = str(factor["factor"])
    got = {}
    try:
        for name in names:
            key, clients = LOADS[name]
            info = run.run_info()  # the code as it was when the run began
            load_at_start = os.getloadavg()[0]
            out = web_load.measure(clients=getattr(web_load, clients))
            info.update(factor=factor["factor"], factor_source=factor["source"], load_at_start=load_at_start,
                        load_at_end=os.getloadavg()[0], seconds=round(time.monotonic() - t0, 1))
            out["run"] = info
            got[key] = out
            t0 = time.monotonic()
    finally:
        if old is None:
            del os.environ["HAPENNY_ESP32_SCALE"]
        else:
            os.environ["HAPENNY_ESP32_SCALE"] = old
    return got


def record(names=tuple(LOADS)):
    got = measure(names)
    (report.ROOT / "build").mkdir(exist_ok=True)
    results = json.loads(report.RESULTS.read_text())
    for key, out in got.items():
        (report.ROOT / "build" / ("%s.json" % key.replace("_", "-"))).write_text(json.dumps(out, indent=1))
        results[key] = out
    report.RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_docs()
    return got


if __name__ == "__main__":
    bad = [a for a in sys.argv[1:] if a not in LOADS]
    if bad:
        sys.exit("bench/web_record.py: no load %s (the loads: %s)" % (", ".join(bad), ", ".join(LOADS)))
    print(json.dumps(record(tuple(sys.argv[1:]) or tuple(LOADS)), indent=1))

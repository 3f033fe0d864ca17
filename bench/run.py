"""`make bench`: every performance figure in one table, and build/bench.json.

1 scan cost (MicroPython), 2 pulse capture on the virtual board, 3 latency,
4 referee speed and memory, 5 footprint, 6 boot and deploy, 7 the ESP32 timing
model, 8 the computer player, 9 a dart to a web page.
PULSES=N changes the closures per length of row 2 (default 150).

It must stay under ten minutes on an idle two-core machine (the table's last
row says how long this run took, and results' step_seconds where the time
went). `make bench-long` (--long) runs the same
with the longer statistics of row 2 (500 closures a length) and writes
build/bench-long.json only; the committed table is always from `make bench`."""
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from hapenny import firmware  # noqa: E402
from hapenny.connect import connect  # noqa: E402
from hapenny.deploy import deploy  # noqa: E402
from hapenny.sim.board import VirtualBoard, micropython_path  # noqa: E402
from hapenny.sim.pulses import match, percentile  # noqa: E402
from table import table_rows  # noqa: E402

LONG = "--long" in sys.argv
# row 2 (default virtual board, no goal of its own) is paced by the wall
# clock, 75 ms a closure: 150 a length keeps it near two minutes
PULSES = int(os.environ.get("PULSES", "500" if LONG else "150"))
LENGTHS_US = (500, 1000, 2000, 5000)
SPACING_US = 75000  # the scanner's lockout (60 ms) and re-arm (5 ms), and a margin
BATCH = 9
HEAP_STEP = "32-bit heap beside the capture (WebAssembly port)"


def mp_json(script):
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([micropython_path(), str(ROOT / "bench" / script)], env=env, capture_output=True,
                         text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def collect(link, vb, kinds):
    """Every event of `kinds` until the scanner has decided every closure
    scheduled (it is idle again), and whatever arrived before."""
    vb.wait_rearmed()
    link._pump(0.05)
    got = [e for e in link.events if e["ev"] in kinds]
    link.events.clear()
    return got


def capture(vb, link, cells, length_us, n, game, rnd):
    """Closures of length_us at random phase, paired with events by crossing
    (hapenny.sim.pulses.match) -> (exactly one dart, ignored, missed, doubled).
    `ignored`: hits after a win, which cannot score; events still arriving
    from an earlier batch count as doubled."""
    one = ignored = missed = doubled = 0
    done = 0
    while done < n:
        if game:
            st = link.request("state")["state"]
            if st["phase"] == "over":
                link.request("new", players=["A", "B"], rules={"darts": 9})
                st = link.request("state")["state"]
            elif st["phase"] == "hold":
                link.request("next")
                st = link.request("state")["state"]
            k = min(st["darts_left"], n - done)
        else:
            k = min(BATCH, n - done)
        pick = []
        for _ in range(k):
            c = rnd.choice(cells)
            while pick and c[:2] == pick[-1][:2]:
                c = rnd.choice(cells)
            pick.append(c)
        pattern = [(r, c, i * SPACING_US + rnd.randrange(0, 1000), length_us) for i, (r, c, _) in enumerate(pick)]
        kinds = ("dart", "ignored") if game else ("raw",)
        doubled += len(collect(link, vb, kinds))  # late arrivals from before
        vb.pulses(pattern)
        end = time.monotonic() + k * SPACING_US / 1e6 + 3
        evs = []
        while len(evs) < k and time.monotonic() < end:
            link._pump(0.05)
            evs += [e for e in link.events if e["ev"] in kinds]
            link.events.clear()
        evs += collect(link, vb, kinds)
        pairs, miss, extra = match(pick, evs)
        one += sum(1 for _, e in pairs if e["ev"] != "ignored")
        ignored += sum(1 for _, e in pairs if e["ev"] == "ignored")
        missed += miss
        doubled += len(extra)
        done += k
    return one, ignored, missed, doubled


def _beside(results, name, fn):
    """Run fn(results) in a thread, its time kept under `name`: the 32-bit
    heap tour (CPU-bound, a measure of memory, not of time) beside row 2's
    capture (paced by the board's clock, the CPU mostly idle). Join it."""
    def run():
        t0 = time.monotonic()
        try:
            fn(results)
        except BaseException as e:  # raised again in the main thread at the join
            box.append(e)
        results["step_seconds"][name] = round(time.monotonic() - t0, 1)
        print("%-45s %6.1f s (beside the pulse capture)" % (name, results["step_seconds"][name]), flush=True)

    box = []
    t = threading.Thread(target=run, daemon=True)
    t.start()

    def join():
        t.join()
        if box:
            raise box[0]
    return join


def pulse_capture(results):
    vb = VirtualBoard().start()
    rnd = random.Random(1)
    join = _beside(results, HEAP_STEP, _heap)
    try:
        link, info, ser = connect(vb.port)
        cells = link.request("map")["cells"]
        rows = []
        link.request("config", set={"learn": True})
        t0 = time.monotonic()
        for length in LENGTHS_US:
            one, ignored, missed, doubled = capture(vb, link, cells, length, PULSES, False, rnd)
            rows.append({"ms": length / 1000, "condition": "strip idle (learn mode)", "pulses": PULSES,
                         "exactly_one": one, "ignored": ignored, "missed": missed, "doubled": doubled})
        link.request("config", set={"learn": False})
        link.request("new", players=["A", "B"], rules={"darts": 9})
        writes0 = vb.frames
        for length in LENGTHS_US:
            one, ignored, missed, doubled = capture(vb, link, cells, length, PULSES, True, rnd)
            rows.append({"ms": length / 1000, "condition": "game: frame rewritten after every dart",
                         "pulses": PULSES, "exactly_one": one, "ignored": ignored, "missed": missed,
                         "doubled": doubled})
        results["strip_writes_during_game_capture"] = vb.frames - writes0
        print("  %-42s %6.1f s" % ("pulse capture", time.monotonic() - t0), file=sys.stderr, flush=True)
        join()  # the latency, boot and deploy times below want the machine to themselves
        join = None
        t0 = time.monotonic()
        results["stalls_skipped"] = link.request("stats")["stats"]["stalls"]
        # 3: latency from a closure to the dart event on the host
        link.request("new", players=["A", "B"], rules={"darts": 9})
        lat = []
        for i in range(200):
            st = link.request("state")["state"]
            if st["phase"] != "play":
                link.request("new", players=["A", "B"], rules={"darts": 9})
            r, c, _ = cells[i % len(cells)]
            vb.wait_rearmed()
            link.events.clear()
            t0 = time.monotonic()
            vb.close(r, c, ms=5)
            link.wait_event("dart", timeout=5)
            lat.append((time.monotonic() - t0) * 1000)
        results["latency_ms"] = {"p50": round(percentile(lat, 50), 2), "p99": round(percentile(lat, 99), 2),
                                 "samples": len(lat), "percentiles": "linear interpolation between ranks"}
        # 5: footprint on the virtual board
        boots = []
        peak = 0
        for _ in range(5):
            t0 = time.monotonic()
            link.send_line(b'{"cmd":"reset"}\n')
            link.wait_event("boot", timeout=20)
            boots.append((time.monotonic() - t0) * 1000)
        link.drain()
        after_boot = link.request("stats")["stats"]["mem_alloc"]
        link.request("new", players=["Ann", "Bob"])
        for i in range(30):
            link.request("throw", seg=["T1", "S2", "D3", "MISS"][i % 4], check=False)
            if link.request("state")["state"]["phase"] == "hold":
                link.request("next")
            s = link.request("stats")["stats"]
            peak = max(peak, s["mem_alloc"])
        results["boot_ms"] = round(statistics.median(boots), 1)
        results["heap_after_boot"] = after_boot
        results["heap_peak_during_game"] = peak
        print("  %-42s %6.1f s" % ("latency, boot, heap", time.monotonic() - t0), file=sys.stderr, flush=True)
        ser.close()
        # 6: deploy to the virtual board, full and with nothing changed
        t0 = time.monotonic()
        full = deploy(vb.port, out=open(os.devnull, "w"), force=True)
        results["deploy_full_s"] = round(time.monotonic() - t0, 2)
        results["deploy_full_files"] = len(full["copied"])
        t0 = time.monotonic()
        same = deploy(vb.port, out=open(os.devnull, "w"))
        results["deploy_nochange_s"] = round(time.monotonic() - t0, 2)
        results["deploy_nochange_files"] = len(same["copied"])
    finally:
        vb.stop()
        if join is not None:
            join()
    results["pulse_capture"] = rows


def esp32_factor():
    """The ESP32 timing model's factor, measured now by bench/esp32_scale.py
    when a MicroPython checkout is at hand: this machine's speed drifts by a
    third from hour to hour, and every figure on the model with it, so the
    factor is taken in the same run as the figures. Otherwise the model's
    default, or HAPENNY_ESP32_SCALE if set."""
    env = os.environ.get("HAPENNY_ESP32_SCALE")
    if env:
        return {"factor": int(env), "source": "HAPENNY_ESP32_SCALE"}
    try:
        f = __import__("esp32_scale").measure()["geometric_mean"]
        return {"factor": int(round(f)), "source": "measured in this run (bench/esp32_scale.py)"}
    except Exception as e:  # no MicroPython checkout here
        return {"factor": int(__import__("cpu_player")._model_scale()),
                "source": "the model's default (not measured: %s)" % type(e).__name__}


def _esp32_rows(res):
    """Rows 7 and 8 run with the factor this run measured."""
    old_scale = os.environ.get("HAPENNY_ESP32_SCALE")
    os.environ["HAPENNY_ESP32_SCALE"] = str(res["esp32_factor"]["factor"])
    try:
        res["esp32_model"] = __import__("esp32_model").measure()  # the board on the ESP32 timing model
        res["cpu_player"] = __import__("cpu_player").measure()  # the computer player: decision time, size
        res["flash"] = __import__("flash_costs").measure()  # what a dart costs the flash, and the blind time
    finally:
        if old_scale is None:
            del os.environ["HAPENNY_ESP32_SCALE"]
        else:
            os.environ["HAPENNY_ESP32_SCALE"] = old_scale


def _heap(res):
    res["wasm_heap"] = __import__("wasm_heap").measure()  # 32-bit heap: MicroPython's WebAssembly port
    __import__("heap_rows").write_doc(res["wasm_heap"])  # its per-module table in docs/performance.md


def _footprint(res):
    files = firmware.build("esp32")
    res["mpy_bytes_esp32"] = sum(Path(p).stat().st_size for rel, p in files.items() if rel.endswith(".mpy"))
    res["source_py_bytes_esp32"] = sum(Path(p).stat().st_size for rel, p in files.items() if rel.endswith(".py"))


# The run, step by step: (name, function filling the results). Each step's
# wall time goes to results["step_seconds"], so the report shows where the
# ten minutes go; a new group of rows is a new step here.
STEPS = [
    ("scan", lambda res: res.__setitem__("scan", mp_json("mp_scan.py"))),
    ("referee", lambda res: res.__setitem__("referee", mp_json("mp_referee.py"))),
    ("footprint", _footprint),
    # the 32-bit heap (HEAP_STEP) runs beside this step's pulse capture, its own time kept apart
    ("virtual board: capture, latency, boot, deploy", pulse_capture),
    ("ESP32 factor", lambda res: res.__setitem__("esp32_factor", esp32_factor())),
    # what ROMFS would save (the unix port: the 32-bit one has none); not beside the capture, whose
    # timing the second core's load would move
    ("heap from ROMFS", lambda res: res.__setitem__("romfs_heap", __import__("romfs_heap").measure())),
    ("ESP32 timing model and computer player", _esp32_rows),
    ("web page latency", lambda res: res.__setitem__("web_latency", __import__("web_latency").measure())),
]


def main():
    started = time.monotonic()
    res = {"step_seconds": {}}
    for name, step in STEPS:
        t0 = time.monotonic()
        step(res)
        res["step_seconds"][name] = round(time.monotonic() - t0, 1)
        print("%-45s %6.1f s" % (name, res["step_seconds"][name]), flush=True)
    res["seconds"] = round(time.monotonic() - started, 1)
    res["run"] = run_info()
    out = ROOT / "build" / ("bench-long.json" if LONG else "bench.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    report(res)
    if LONG:
        print("\nwritten to %s" % out.relative_to(ROOT))
        return
    # the committed copy that docs/performance.md's table is made from; the chips' rows, which
    # `make bench-chips` measures (some 15 minutes: this run must stay under ten), kept with their run
    kept = json.loads((ROOT / "bench" / "results.json").read_text())
    if "esp32_chips" in kept:
        res["esp32_chips"] = kept["esp32_chips"]
    for key in ("web_load", "net_play"):  # the web server under its loads: make bench-web's (some ten minutes)
        if key in kept:
            res[key] = kept[key]
    if "chip_caps" in kept.get("wasm_heap", {}):  # the S3's and C3's heap caps: make bench-chips's too
        res["wasm_heap"]["chip_caps"] = kept["wasm_heap"]["chip_caps"]
    (ROOT / "bench" / "results.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    __import__("report").write_docs()
    print("\nwritten to %s, bench/results.json and docs/performance.md" % out.relative_to(ROOT))


def run_info():
    """Which run and machine the figures come from."""
    import platform

    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"date": time.strftime("%Y-%m-%d"), "commit": git("rev-parse", "--short", "HEAD"),
            # (the run's own outputs apart: the heap step writes its table into docs/performance.md mid-run)
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no", "--", ".",
                              ":!docs/performance.md", ":!bench/results.json")),
            "machine": "%s, %d cores, %s" % (platform.machine(), os.cpu_count() or 0, platform.system()),
            "python": platform.python_version(), "load_at_end": load}


def report(r):
    rows = table_rows(r)
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        print("%s  %s" % (a.ljust(w), b))


if __name__ == "__main__":
    main()

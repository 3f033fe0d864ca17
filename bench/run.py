"""`make bench`: every performance figure in one table, and build/bench.json.

1 scan cost (MicroPython), 2 pulse capture on the virtual board, 3 latency,
4 referee speed and memory, 5 footprint, 6 boot and deploy, 7 the ESP32 timing
model, 8 the computer player, 9 a dart to a web page.
PULSES=N changes the closures per length (default 500)."""
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from hapenny import firmware  # noqa: E402
from hapenny.connect import connect  # noqa: E402
from hapenny.deploy import deploy  # noqa: E402
from hapenny.sim.board import VirtualBoard, micropython_path  # noqa: E402
from hapenny.sim.pulses import match, percentile  # noqa: E402

PULSES = int(os.environ.get("PULSES", "500"))
LENGTHS_US = (500, 1000, 2000, 5000)
SPACING_US = 75000  # the scanner's lockout (60 ms) and re-arm (5 ms), and a margin
BATCH = 9


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


def pulse_capture(results):
    vb = VirtualBoard().start()
    rnd = random.Random(1)
    try:
        link, info, ser = connect(vb.port)
        cells = link.request("map")["cells"]
        rows = []
        link.request("config", set={"learn": True})
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


def main():
    started = time.monotonic()
    res = {}
    res["scan"] = mp_json("mp_scan.py")
    res["referee"] = mp_json("mp_referee.py")
    files = firmware.build("esp32")
    res["mpy_bytes_esp32"] = sum(Path(p).stat().st_size for rel, p in files.items() if rel.endswith(".mpy"))
    res["source_py_bytes_esp32"] = sum(Path(p).stat().st_size for rel, p in files.items() if rel.endswith(".py"))
    pulse_capture(res)
    res["wasm_heap"] = __import__("wasm_heap").measure()  # 32-bit heap: MicroPython's WebAssembly port
    res["esp32_factor"] = esp32_factor()
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
    res["web_latency"] = __import__("web_latency").measure()  # a dart to a web page's event stream
    res["seconds"] = round(time.monotonic() - started, 1)
    res["run"] = run_info()
    out = ROOT / "build" / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    report(res)
    # the committed copy that docs/performance.md's table is made from
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
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "machine": "%s, %d cores, %s" % (platform.machine(), os.cpu_count() or 0, platform.system()),
            "python": platform.python_version(), "load_at_end": load}


def _bound(c):
    """The highest miss rate the count still allows (95 % confidence), when recorded."""
    b = c.get("miss_rate_bound")
    return "" if b is None else "; miss rate under %.2f%% (95%% confidence)" % (100.0 * b)


def table_rows(r):
    """The figures as (measurement, result) rows: printed by `make bench` and
    written into docs/performance.md by bench/report.py."""
    s = r["scan"]
    rows = [
        ("1 scan (8x8, MicroPython unix)", "scanner core %.2f us/scan, naive %.2f us/scan: %.1fx" % (
            s["fast_us_per_scan"], s["naive_us_per_scan"], s["ratio"])),
        ("  heap per 10,000 scans", "scanner core %d B (goal 0), naive %d B" % (s["fast_heap_bytes"], s["naive_heap_bytes"])),
    ]
    for p in r["pulse_capture"]:
        live = p["pulses"] - p["ignored"]  # closures after a win cannot score
        share = 100.0 * p["exactly_one"] / live
        rows.append(("2 pulse %.1f ms, %s" % (p["ms"], p["condition"]),
                     "%.1f%% exactly one (%d/%d that could score; missed %d, doubled %d, after a win %d)" % (
                         share, p["exactly_one"], live, p["missed"], p["doubled"], p["ignored"])))
    rows += [
        ("  strip writes during the game capture", str(r["strip_writes_during_game_capture"])),
        ("3 latency closure -> dart event on host", "p50 %.1f ms, p99 %.1f ms (%d samples)" % (
            r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["latency_ms"]["samples"])),
        ("4 referee (MicroPython unix)", "%d darts/s" % r["referee"]["darts_per_s"]),
    ]
    for g in r["referee"]["games"]:
        rows.append(("  RAM, %d-player %s game" % (g["players"], g["variant"]),
                     "%d B new, %d B after %d darts (undo log %d B)" % (
                         g["bytes_new"], g["bytes_full"], g["darts"], g["undo_bytes"])))
    rows += [
        ("5 heap after boot (virtual board)", "%d B" % r["heap_after_boot"]),
        ("  heap peak during a game", "%d B (sampled after every dart)" % r["heap_peak_during_game"]),
        ("  heap, 32-bit port: boot / game", "%(heap_boot_32bit_B)d B / %(heap_play_max_32bit_B)d B (goal < 40,960)" % r["wasm_heap"]),
        ("  deployed firmware, ESP32", "%d B of .mpy + %d B boot.py/main.py" % (
            r["mpy_bytes_esp32"], r["source_py_bytes_esp32"])),
    ]
    m = r["esp32_model"]
    if "esp32_factor" in r:
        rows.append(("7 ESP32 timing model: factor", "x%(factor)d, %(source)s" % r["esp32_factor"]))
    rows.append(("  loop period" if "esp32_factor" in r else "7 ESP32 timing model: loop period",
                 "%.1f us a pass on average (goal <= 100)" % m["loop_period_us"]))
    for key in sorted(k for k in m if k.startswith("capture_")):
        c = m[key]
        us = key.split("_")[1]
        rows.append(("  pulse %s%s" % (us, ", a state request in flight" if key.endswith("traffic") else ""),
                     "%.2f%% scored (%d/%d), doubled %d%s" % (100.0 * c["scored"] / c["pulses"], c["scored"],
                                                              c["pulses"], c["doubled"], _bound(c))))
    for key in sorted(k for k in m if k.startswith("stress_")):
        c = m[key]
        rows.append(("  pulse %s, darts 80 ms apart, every segment" % key.split("_")[1],
                     "%.2f%% scored (%d/%d), doubled %d, wrong segment %d%s" % (
                         100.0 * c["scored"] / c["pulses"], c["scored"], c["pulses"], c["doubled"], c["wrong"],
                         _bound(c))))
    for key in ("latency_ms", "latency_traffic_ms"):
        rows.append(("  latency to the dart event%s" % (", with traffic" if "traffic" in key else ""),
                     "p50 %(p50).1f ms, p99 %(p99).1f ms (board clock)" % m[key]))
    rows.append(("  second dart right after the lockout", "%(lost)d lost of %(pairs)d" % m["second_dart_after_lockout"]))
    if "flash" in r:
        rows.extend(__import__("flash_costs").table_rows(r["flash"]))
    rows.append(("  idle board process", "%(default).1f%% of a core (%(esp32).1f%% on the model; goal < 5)" % m["idle_cpu_percent"]))
    rows += [
        ("6 boot (reset -> boot event)", "%.0f ms" % r["boot_ms"]),
        ("  deploy to the virtual board", "full %.2f s (%d files), no change %.2f s (%d files)" % (
            r["deploy_full_s"], r["deploy_full_files"], r["deploy_nochange_s"], r["deploy_nochange_files"])),
        ("run time", "%.0f s" % r["seconds"]),
    ]
    if "cpu_player" in r:
        rows.insert(-1, ("8 computer dart, slowest case, ESP32 estimate", "%(worst_esp32_ms).1f ms; %(mpy_total)d B .mpy" % r["cpu_player"]))
    if "web_latency" in r:
        rows.insert(-1, ("9 closure -> dart on a web page's stream", "p50 %(p50).1f ms, p99 %(p99).1f ms, max %(max).1f ms "
                                                                   "(%(samples)d darts; goal 200)" % r["web_latency"]))
    return rows


def report(r):
    rows = table_rows(r)
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        print("%s  %s" % (a.ljust(w), b))


if __name__ == "__main__":
    main()

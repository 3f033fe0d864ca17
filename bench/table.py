"""The bench's figures as table rows, from a run's results (build/bench.json,
bench/results.json): bench/run.py prints them, bench/report.py writes them
into docs/performance.md. A module of their own, so that report.py need not
import run.py (which imports report.py)."""


def _bound(c):
    """The highest miss rate the count still allows (95 % confidence), when recorded."""
    b = c.get("miss_rate_bound")
    return "" if b is None else "; miss rate under %.2f%% (95%% confidence)" % (100.0 * b)


def _unread(c):
    """How many closures no read of the matrix fell inside, when recorded."""
    u = c.get("unread")
    if u is None:
        return ""
    os_ = c.get("unread_os")  # in a stretch the OS took the CPU away in (the model's blind spot)
    return "; %d never read" % u + ("" if not u or os_ is None else " (%d in a stretch the OS interrupted)" % os_)


def _steps(r):
    """Where the run's time went: the steps of 20 s or more."""
    big = ["%s %.0f s" % (k.split(":")[0].split(" (")[0], v) for k, v in r.get("step_seconds", {}).items() if v >= 20]
    return " (%s)" % ", ".join(big) if big else ""


def _load(w):
    """The first of a load's rows: what the clients did, the run's commit, factor and the machine's load."""
    n, run = w["load"], w["run"]
    at = "; %s, x%d, load %.1f" % (run["commit"], run["factor"], run["load_at_start"])
    clock = " of the board's" if w.get("periods_on") == "board" else ""  # (earlier runs: the wall's)
    if "play" in w.get("clients", ()):
        return ("  under network commands (`make bench-web`)", "`hapenny play` (%d events, the LEDs asked %d times, "
                "%d sessions lost), `hapenny state` every %.0f s%s (%d, %d refused busy)%s" % (
                    n["play_events"], n["play_leds"], n["play_lost"], w["poll_s"], clock, n["polls"],
                    n["poll_refused"], at))
    return ("  under web load (`make bench-web`)", "two pages (one reloaded every %.0f s%s: %d reloads, %d files), a "
            "hostile client (%d connections)%s" % (w["reload_s"], clock, n["reloads"], n["files"], n["hostile"], at))


def web_load_rows(w):
    """`make bench-web`'s rows (bench/web_load.py), for one load: the board's own web server under it on the model."""
    if not w:
        return []
    rows = [_load(w),
            ("    loop period", "%.1f us a pass, median of %d windows (goal <= 100)" % (
                w["loop_period_us"], w["loop_windows"]))]
    for key in ("capture_500us", "capture_1000us"):
        c = w[key]
        rows.append(("    pulse %s" % key.split("_")[1], "%.2f%% scored (%d/%d), doubled %d%s%s" % (
            100.0 * c["scored"] / c["pulses"], c["scored"], c["pulses"], c["doubled"], _unread(c), _bound(c))))
    d = w["darts_250ms"]
    rows.append(("    darts 250 ms apart", "%(lost)d lost of %(darts)d" % d))
    st, lo = w["web_steps"], w["step_longest_us"]
    k = w.get("sockets")  # its socket calls at the chip's fixed costs (runtime/vsocket.py), when measured so
    calls = "; its socket calls %.1f a step, %.2f ms of it" % (k["calls"] / max(1, st["steps"]), k["chip_us"] / max(
        1, st["steps"]) / 1000) if k else ""
    g = w["slice_stretch_us"]
    rows.append(("    a server step with a client's work", "%.2f ms on average (%d steps%s), the longest p50 %.1f / "
                 "p99 %.1f / max %.1f ms; the matrix unread at most p50 %.1f / p99 %.1f ms a look (board clock)" % (
                     st["mean_us"] / 1000, st["steps"], calls, lo["p50"] / 1000, lo["p99"] / 1000, lo["max"] / 1000,
                     g["p50"] / 1000, g["p99"] / 1000)))
    return rows


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
    ]
    if "new_game_us" in r["referee"]:  # runs since the new game is timed apart
        rows += [("4 referee (MicroPython unix)", "%d darts/s (throw and next)" % r["referee"]["darts_per_s"]),
                 ("new game (MicroPython unix)", "%d us (its checks loaded from the filesystem and let go)"
                  % r["referee"]["new_game_us"])]
    else:
        rows.append(("4 referee (MicroPython unix)", "%d darts/s" % r["referee"]["darts_per_s"]))
    for g in r["referee"]["games"]:
        rows.append(("  RAM, %d-player %s game" % (g["players"], g["variant"]),
                     "%d B new, %d B after %d darts (undo log %d B)" % (
                         g["bytes_new"], g["bytes_full"], g["darts"], g["undo_bytes"])))
    rows += [
        ("5 heap after boot (virtual board)", "%d B" % r["heap_after_boot"]),
        ("  heap peak during a game", "%d B (sampled after every dart)" % r["heap_peak_during_game"]),
    ]
    rows += __import__("heap_rows").rows(r["wasm_heap"])  # the 32-bit heap tour (bench/heap_rows.py)
    rows += __import__("heap_rows").romfs_rows(r.get("romfs_heap"))
    rows += [
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
                     "%.2f%% scored (%d/%d), doubled %d%s%s" % (100.0 * c["scored"] / c["pulses"], c["scored"],
                                                                c["pulses"], c["doubled"], _unread(c), _bound(c))))
    for key in sorted(k for k in m if k.startswith("stress_")):
        c = m[key]
        rows.append(("  pulse %s, darts 80 ms apart, every segment" % key.split("_")[1],
                     "%.2f%% scored (%d/%d), doubled %d, wrong segment %d%s" % (
                         100.0 * c["scored"] / c["pulses"], c["scored"], c["pulses"], c["doubled"], c["wrong"],
                         _bound(c))))
    for key in ("latency_ms", "latency_traffic_ms"):
        rows.append(("  latency to the dart event%s" % (", with traffic" if "traffic" in key else ""),
                     "p50 %(p50).1f ms, p99 %(p99).1f ms (board clock)" % m[key]))
    sd = m["second_dart_after_lockout"]
    rows.append(("  second dart right after the lockout", "%(lost)d lost of %(pairs)d" % sd + _unread(sd)
                 + ("" if not sd["lost"] or "lost_os" not in sd else
                    "; %d lost with a stretch over 20 ms the OS interrupted in the pair" % sd["lost_os"])
                 + __import__("flash_costs").alone(sd)))
    if "line_512_ring" in m:
        rows.append(("  a 512-byte line at the full baud rate", "the UART's ring holds at most %(max)d of 259 B "
                     "(p50 %(p50)d, %(lines)d lines), %(dropped)d B lost" % m["line_512_ring"]))
    if "flash" in r:
        rows.extend(__import__("flash_costs").table_rows(r["flash"]))
    rows.append(("  idle board process", "%(default).1f%% of a core (%(esp32).1f%% on the model; goal < 5)" % m["idle_cpu_percent"]))
    rows += chip_rows(r.get("esp32_chips"), r.get("wasm_heap", {}).get("chip_caps"))
    rows += web_load_rows(r.get("web_load")) + web_load_rows(r.get("net_play"))
    rows += [
        ("6 boot (reset -> boot event)", "%.0f ms" % r["boot_ms"]),
        ("  deploy to the virtual board", "full %.2f s (%d files), no change %.2f s (%d files)" % (
            r["deploy_full_s"], r["deploy_full_files"], r["deploy_nochange_s"], r["deploy_nochange_files"])),
        ("run time", "%.0f s%s" % (r["seconds"], _steps(r))),
    ]
    if "cpu_player" in r:
        rows.insert(-1, ("8 computer dart, slowest case, ESP32 estimate", "%(worst_esp32_ms).1f ms; %(mpy_total)d B .mpy" % r["cpu_player"]))
    if "web_latency" in r:
        rows.insert(-1, ("9 closure -> dart on a web page's stream", "p50 %(p50).1f ms, p99 %(p99).1f ms, max %(max).1f ms "
                                                                   "(%(samples)d darts; goal 200)" % r["web_latency"]))
        if "board" in r["web_latency"]:
            rows.insert(-1, ("  the board-served page's stream", "p50 %(p50).1f ms, p99 %(p99).1f ms, max %(max).1f ms "
                                                                  "(%(samples)d darts; goal p99 100)" % r["web_latency"]["board"]
                             + (", --board alone on commit %s" % r["web_latency"]["board"]["commit"]
                                if "commit" in r["web_latency"]["board"] else "")))
    return rows


CHIP_LABEL = {"esp32": "ESP32 (240 MHz)", "esp32s3": "ESP32-S3 (240 MHz)", "esp32c3": "ESP32-C3 (160 MHz)"}


def chip_rows(k, caps=None):
    """`make bench-chips` (bench/chips_record.py): each chip's own board on
    the ESP32 model, the classic one measured again beside them in the same
    run (the first row says which run); a matrix read's price by its native
    and its bytecode path; the S3's and C3's heap caps (`caps`:
    wasm_heap.chip_caps), on their own boards' profiles."""
    if not k or "run" not in k:
        return []
    run = k["run"]
    sc = k.get("scan", {})
    rows = []
    for chip in ("esp32", "esp32s3", "esp32c3"):
        c = k.get(chip)
        if not c:
            continue
        p = c["capture_500us"]
        read = heap = ""
        if chip in sc:
            n, b = sc[chip]["native"], sc[chip]["bytecode"]
            read = " / a read %.1f us native, %.0f us bytecode (%d register accesses, %.2f us; %d B a bytecode read " \
                   "on 32 bits)" % (n["us"], b["us"], sc[chip]["accesses"], n["registers_us"], b["alloc_per_scan_32bit"])
        if caps and chip in caps:
            t, f = caps[chip]["tour_capped_128k"], caps[chip]["people_capped_64k"]
            heap = " / heap capped at 128 KB: whole tour %d MemoryError, at 64 KB: people %s (goal 0)" % (
                t["memory_errors"], ("%d" if f.get("reported", True) else "at least %d") % f["memory_errors"])
        later = sorted({x["run"]["commit"] for x in (sc, caps or {}) if x.get("run", {}).get("commit") not in
                        (None, run["commit"])})  # a read's price and the heap caps measured on another commit
        first = "" if rows else "10 (make bench-chips: x%d, commit %s%s, %s, load %.1f%s) " % (
            run["factor"], run["commit"], " with local changes" if run["dirty"] else "", run["date"],
            run["load_at_end"] or 0.0, "; a read, the heap: %s" % ", ".join(later) if later else "")
        rows.append(("%s%s, %s: loop period / pulse 500us%s%s" % (
            first or "  ", CHIP_LABEL[chip], c["profile"], " / a read" if read else "", " / heap" if heap else ""),
                     "%.1f us a pass, median of %d windows (goal <= 100) / %.2f%% scored (%d/%d), doubled %d%s%s%s%s" % (
                         c["loop_period_us"], c["loop_windows"], 100.0 * p["scored"] / p["pulses"], p["scored"],
                         p["pulses"], p["doubled"], _unread(p), _bound(p), read, heap)))
    return rows

"""The goals at the head of docs/performance.md, each with the last run's
figure and whether it is met, made from a run's results (bench/results.json)
by bench/report.py, so the summary cannot drift from the table under it."""

LOCKOUT_MS = 60  # the profile's lockout: a dart's flash stall and an unread stretch must fit it
NO = "**no**"


def _met(ok):
    return "yes" if ok else NO


def _kb(b):
    return "%.1f KB" % (b / 1024)


def _capture(m):
    c = m["capture_500us"]
    bound = c["miss_rate_bound"]
    return ("0.5 ms contacts scored, nothing else happening",
            "%d of %d: miss rate under %.2f %% at 95 %% confidence (goal 99.9 %%)" % (
                c["scored"], c["pulses"], 100.0 * bound),
            "ESP32 model", _met(bound <= 0.001))


def _longer(m):
    cs = [m["capture_1000us"], m["capture_2000us"]]
    return ("1 ms and 2 ms contacts scored", "%s (goal 100 %%)" % " and ".join(
        "%d of %d" % (c["scored"], c["pulses"]) for c in cs),
            "ESP32 model", _met(all(c["scored"] == c["pulses"] for c in cs)))


def _second(m):
    s = m["second_dart_after_lockout"]
    return ("a second dart right after the first one's lockout",
            "%d of %d lost (goal: none)" % (s["lost"], s["pairs"]), "ESP32 model", _met(not s["lost"]))


def _loop(m):
    return ("the main loop's period", "%.1f µs a pass on average (goal at most 100 µs)" % m["loop_period_us"],
            "ESP32 model", _met(m["loop_period_us"] <= 100))


def _idle(m):
    c = m["idle_cpu_percent"]
    return ("the idle board's CPU", "%.1f %% of a core, %.1f %% on the ESP32 model (goal under 5 %%)" % (
        c["default"], c["esp32"]), "`bench/esp32_model.py`", _met(max(c.values()) < 5))


def _scan(r):
    b = r["scan"]["fast_heap_bytes"]
    return ("heap the scanner allocates", "%d B per 10,000 scans (goal 0)" % b, "row 1", _met(b == 0))


def _erases(r):
    w = r["flash"]["wear"]
    return ("flash erases", "1 per %.1f darts over a long game, %d by a dart (goal at most 1 per 20, none by a "
            "dart)" % (w["darts_per_erase"], w["erases_on_darts"]), "`bench/flash_costs.py`",
            _met(w["darts_per_erase"] >= 20 and not w["erases_on_darts"]))


def _stall(r):
    v = r["flash"]["wear"]["visit_flash_ms"]
    return ("the flash's longest stall for a dart or an undo", "%.1f ms typical, %.1f ms worst case (goal: "
            "inside the %d ms lockout)" % (v["typical"], v["worst"], LOCKOUT_MS), "block-device counts",
            _met(v["worst"] < LOCKOUT_MS))


def _stretch(r):
    t, w = r["flash"]["blind"]["blind_quiet_ms"]["max"], r["flash"]["blind_worst"]["blind_quiet_ms"]["max"]
    return ("the longest unread stretch of the matrix in a visit, the OS's pauses apart",
            "%.1f ms at typical flash timings, %.1f ms at worst-case ones (goal: no longer than the %d ms "
            "lockout)" % (t, w, LOCKOUT_MS), "ESP32 model", _met(max(t, w) <= LOCKOUT_MS))


def _visits(r):
    t, w = r["flash"]["blind"], r["flash"]["blind_worst"]
    return ("darts 250 ms apart while a visit is stored", "%d of %d lost at typical flash timings, %d of %d at "
            "worst-case ones (goal: none)" % (t["lost"], t["darts"], w["lost"], w["darts"]), "ESP32 model",
            _met(not t["lost"] and not w["lost"]))


def _heap(w, key, what):
    t, g = w["tour"], w["goals"]
    extra = ""
    if key == "people_peak" and w.get("people_peak_esp32_layer"):
        extra = ", about %s with the chip's board layer" % _kb(w["people_peak_esp32_layer"])
    return ("heap, %s" % what, "%s peak on 32 bits%s (goal at most %s)" % (_kb(t[key]), extra, _kb(g[key])),
            "`make wasm-heap`", _met(t[key] <= g[key]))


def _capped(w, key, what, cap, people=False):
    c = w[key]
    n = c["memory_errors"]
    return (what, "%s%d MemoryError (goal 0)" % ("" if c.get("reported", True) else "at least ", n),
            "`make wasm-heap HEAP=%d%s`" % (cap, " PEOPLE=1" if people else ""), _met(not n))


def _wifi_server(w):
    wi = w["wifi"]
    srv = wi["uncapped"]["server_two_viewers"]
    return ("heap, the board's own server with two pages watching", "%s on 32 bits (goal at most %s)" % (
        _kb(srv), _kb(wi["goals"]["server_two_viewers"])), "`make wasm-heap WIFI=1`", _met(wi["met"]["server_two_viewers"]))


def _wifi_capped(w):
    wi = w["wifi"]
    c = wi["capped_112k"]
    d, a = wi.get("deploy"), wi.get("ap")
    return ("the Wi-Fi phases inside the grown heap, never a second growth",
            "%s%d MemoryError (goal 0)%s%s; ESP-IDF side: %d growth%s" % (
                "at least " if __import__("heap_rows").stopped(c) else "", c["memory_errors"],
                "" if d is None else ", a network update %d" % d["capped_112k"]["memory_errors"],
                "" if a is None else ", the set-up AP %s%d" % ("at least " if __import__("heap_rows").stopped(a["capped_112k"])
                                                              else "", a["capped_112k"]["memory_errors"]),
                wi["idf"]["growths"], "" if wi["met"]["one_growth"] else ", a second: no"),
            "`make wasm-heap WIFI=1`", _met(wi["met"]["memory_errors_112k"] and wi["met"]["one_growth"]
                                            and wi["met"].get("deploy_112k", d is None)
                                            and wi["met"].get("ap_112k", a is None)))


LABEL = {"esp32": "ESP32", "esp32s3": "ESP32-S3", "esp32c3": "ESP32-C3"}


def _chip_loop(r, chip):
    k = r["esp32_chips"][chip]
    return ("the main loop's period, %s" % LABEL[chip], "%.1f µs a pass, median of %d windows (goal at most 100 µs)"
            % (k["loop_period_us"], k["loop_windows"]), "`make bench-chips`", _met(k["loop_period_us"] <= 100))


def _chip_capture(r, chip):
    goal, today, _, met = _capture(r["esp32_chips"][chip])
    return ("%s, %s" % (goal, LABEL[chip]), today, "`make bench-chips`", met)


def _chips_grown(r):
    """The S3's and C3's grown heap (128 KB, the same cap on both), each on its own board's profile."""
    caps = r["wasm_heap"]["chip_caps"]
    runs = [caps[c]["tour_capped_128k"] for c in ("esp32s3", "esp32c3")]
    return ("the whole tour inside the grown heap, ESP32-S3 and ESP32-C3", "%s MemoryError (goal 0)" % " and ".join(
        ("%d" if t.get("reported", True) else "at least %d") % t["memory_errors"] for t in runs),
            "`make wasm-heap HEAP=131072 PROFILE=%s`, `...=%s`" % (caps["esp32s3"]["profile"],
                                                                  caps["esp32c3"]["profile"]),
            _met(not any(t["memory_errors"] for t in runs)))


WEB = "under web load (two pages, one reloading, a hostile client)"
NET = "during `play` and a `state` poll over the network"
LOADS = (("web_load", WEB), ("net_play", NET))  # `make bench-web`'s loads: results key, the goals' words


def _web_goals(r, key="web_load", label=WEB):
    """`make bench-web`'s goals (bench/web_load.py) under one load: issue 39's, never a missed dart (issue
    40's: nor under the host's commands over the network)."""
    w = r[key]
    c, d = w["capture_500us"], w["darts_250ms"]
    one = w["capture_1000us"]
    return [("0.5 ms contacts scored, %s" % label, "%d of %d: miss rate under %.2f %% at 95 %% confidence (goal 99.9 %%)"
             % (c["scored"], c["pulses"], 100.0 * c["miss_rate_bound"]), "`make bench-web`",
             _met(c["pulses"] >= 3000 and c["miss_rate_bound"] <= 0.001)),
            ("1 ms contacts scored, %s" % label, "%d of %d (goal 100 %%)" % (one["scored"], one["pulses"]),
             "`make bench-web`", _met(one["scored"] == one["pulses"])),
            ("darts 250 ms apart, %s" % label, "%d of %d lost (goal: none)" % (d["lost"], d["darts"]),
             "`make bench-web`", _met(not d["lost"])),
            ("the main loop's period, %s" % label, "%.1f µs a pass (goal at most 100 µs)" % w["loop_period_us"],
             "`make bench-web`", _met(w["loop_period_us"] <= 100))]


def _cpu(r):
    c = r["cpu_player"]
    return ("a computer's dart, and its code", "%.1f ms on the ESP32 estimate, slowest case (goal 50 ms); "
            "%d B of .mpy (goal 12,288)" % (c["worst_esp32_ms"], c["mpy_total"]), "row 8; docs/computer.md",
            _met(c["worst_esp32_ms"] <= 50 and c["mpy_total"] <= 12288))


def _web(r):
    w = r["web_latency"]
    return ("a dart to a web page's stream", "at most %.1f ms, p99 %.1f ms (goal %d ms)" % (
        w["max"], w["p99"], w["goal_ms"]), "row 9", _met(w["max"] <= w["goal_ms"]))


def _web_board(r):
    b = r["web_latency"]["board"]
    return ("a dart to the board-served page's stream", "p99 %.1f ms, at most %.1f ms (goal: p99 at most %d ms)" % (
        b["p99"], b["max"], b["goal_ms"]), "row 9, `bench/web_latency.py --board`", _met(b["p99"] <= b["goal_ms"]))


def _bench(r):
    return ("`make bench` itself", "%.0f s, load average %.1f at its end (goal under 10 minutes on an idle "
            "two-core machine)" % (r["seconds"], r["run"]["load_at_end"] or 0.0), "last row",
            _met(r["seconds"] < 600))


def rows(r):
    """(goal, today, measured by, met) for each goal the run has figures for."""
    m, w = r.get("esp32_model", {}), r.get("wasm_heap", {})
    makers = [lambda: _capture(m), lambda: _longer(m), lambda: _second(m), lambda: _loop(m), lambda: _idle(m),
              lambda: _scan(r), lambda: _erases(r), lambda: _stall(r), lambda: _stretch(r), lambda: _visits(r),
              lambda: _heap(w, "people_peak", "a game between people (the first heap)"),
              lambda: _heap(w, "computer_peak", "against the computer, with hints"),
              lambda: _heap(w, "bringup_peak", "the bring-up tools"),
              lambda: _capped(w, "tour_capped_112k", "the whole tour inside the grown heap", 114688),
              lambda: _capped(w, "people_capped_56k", "a game between people inside the first heap", 57344, True),
              lambda: _wifi_server(w), lambda: _wifi_capped(w),
              lambda: _cpu(r), lambda: _web(r), lambda: _web_board(r)]
    for chip in ("esp32s3", "esp32c3"):  # `make bench-chips`: each chip's own board, beside the classic one
        makers += [lambda c=chip: _chip_loop(r, c), lambda c=chip: _chip_capture(r, c)]
    makers.append(lambda: _chips_grown(r))
    makers += [lambda i=i, k=k, t=t: _web_goals(r, k, t)[i] for k, t in LOADS for i in range(4)]
    makers.append(lambda: _bench(r))
    out = []
    for make in makers:
        try:
            out.append(make())
        except (KeyError, TypeError):  # a run from before that figure was measured
            continue
    return out


def render(r):
    lines = ["| goal | the last run | measured by | met |", "|---|---|---|---|"]
    lines += ["| %s | %s | %s | %s |" % row for row in rows(r)]
    return "\n".join(lines)

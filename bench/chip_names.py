"""The pools of interned names the firmware's modules make on the classic
ESP32, against what the 32-bit heap tour charges for them.

A .mpy's loading interns each name of its table that the image does not
already have (py/persistentcode.c). New names go into pools in the GC heap
(py/qstr.c, qstr_add_): each new pool holds twice the last one's names, and
the first after the image's own is twice the frozen modules' pool (at least
MICROPY_ALLOC_QSTR_ENTRIES_INIT, 10). A pool costs 7 bytes a name on the
ESP32 (a 4-byte address, a 2-byte hash: MICROPY_QSTR_BYTES_IN_HASH is 2 at
the port's feature level, py/mpconfig.h; a length byte) and its head, in
16-byte blocks. The WebAssembly port the tour runs on has almost nothing
frozen, so its pools start at 20 names (bench/wasm_heap.py QSTR_FIRST_POOL):
the same names cost another set of pools there. bench/esp32_names.txt lists
the names the chip's image has (see its head for how they were read).

    .venv/bin/python bench/chip_names.py [TOUR_NAMES]

TOUR_NAMES: the firmware's names the Wi-Fi tour counted (its names_pool's
"names" less "own"; default 1,260, the count of 2026-11-29). Prints JSON."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "bench")]

from wasm_heap import _pool_bytes, _pools, mpy_names  # noqa: E402

NAMES = Path(__file__).with_name("esp32_names.txt")
ENTRIES_INIT = 10  # MICROPY_ALLOC_QSTR_ENTRIES_INIT (py/mpconfig.h)
TOUR_NAMES = 1260


def image_names(path=NAMES):
    """{"const": set, "frozen": set} from bench/esp32_names.txt."""
    out = {}
    part = None
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") or not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            part = out.setdefault(line[1:-1], set())
        else:
            part.add(line)
    return out


def chip_pools(frozen, names):
    """[names each pool holds] that `names` new names make after a frozen pool of `frozen` names."""
    out = [max(ENTRIES_INIT, 2 * frozen)]
    while sum(out) < names:
        out.append(out[-1] * 2)
    return out if names else []


def firmware_names(tmp):
    """The names of the chip's firmware as `hapenny deploy` ships it (hapenny.firmware.build:
    its .mpy files; boot.py and main.py, which the chip compiles itself, compiled into tmp)."""
    from hapenny.firmware import build, tool

    names = set()
    for i, (rel, path) in enumerate(sorted(build("esp32").items())):
        if rel.endswith(".py"):
            mpy = Path(tmp) / ("%d.mpy" % i)
            subprocess.run([tool("mpy-cross"), "-o", str(mpy), str(path)], check=True)
            path = mpy
        if str(path).endswith(".mpy"):
            names |= mpy_names(Path(path).read_bytes())
    return names


def report(fw, image, tour_names=TOUR_NAMES):
    """The chip's pools for the firmware's names `fw` against the tour's for `tour_names`."""
    new = fw - image["const"] - image["frozen"]
    pools = chip_pools(len(image["frozen"]), len(new))
    tour = _pools(tour_names)
    return {
        "firmware_names": len(fw),
        "chip": {"frozen_pool": len(image["frozen"]), "interned": len(new), "pools": pools,
                 "bytes": sum(_pool_bytes(a) for a in pools), "largest_block": _pool_bytes(pools[-1]) if pools else 0,
                 "room_left": sum(pools) - len(new)},
        "tour": {"names": tour_names, "pools": tour, "bytes": sum(_pool_bytes(a) for a in tour)},
    }


def main(argv):
    tour_names = int(argv[0]) if argv else TOUR_NAMES
    with tempfile.TemporaryDirectory() as tmp:
        fw = firmware_names(tmp)
    print(json.dumps(report(fw, image_names(), tour_names), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])

"""The pools of interned names the firmware makes on the classic ESP32, on
each path of the Wi-Fi heap tour, against what the tour charges for them.

A .mpy's loading interns each name of its table that the image does not
already have (py/persistentcode.c), and an import interns the module's dotted
name and its file's path (py/builtinimport.c: `__file__`). New names go into
pools in the GC heap (py/qstr.c, qstr_add): each new pool holds twice the
last one's names. The image's own pools are declared with room for at most
10 (py/qstr.c's mp_qstr_const_pool; tools/mpy-tool.py gives the frozen pool
`min(len, 10)`), so the first pool a .mpy makes holds 20 names on the chip as
on the WebAssembly port the tour runs on: 20, 40, 80... on both, and the same
count of names costs the same. A pool costs 7 bytes a name (a 4-byte address,
a 2-byte hash: MICROPY_QSTR_BYTES_IN_HASH is 2 at the port's feature level,
py/mpconfig.h; a length byte) and its head, in 16-byte blocks.

What differs is the count: a name the chip's image has costs nothing there
(`network`'s, `machine`'s, the frozen modules'), and the chip runs
boards/esp32 where the tour runs the virtual board. For each path this
reads every name the tour's run interned (bench/wasm_heap.py names_pool),
swaps the virtual board's modules for the chip's, takes out the image's names
(bench/esp32_names.txt; see its head), and gives the pools that leaves.

    .venv/bin/python bench/chip_names.py     # prints JSON; some 3 minutes"""
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "bench")]

import wasm_heap as W  # noqa: E402

NAMES = Path(__file__).with_name("esp32_names.txt")
ENTRIES_INIT = 10  # MICROPY_ALLOC_QSTR_ENTRIES_INIT (py/mpconfig.h): the image's pools' declared room


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


# py/makeqstrdata.py's qstr_escape: the C name (MP_QSTR_...) of a name with other characters
# than letters, digits and "_" ("<lambda>" is MP_QSTR__lt_lambda_gt_), as esp32_names.txt has them
_ESCAPE = {"&": "amp", ">": "gt", "<": "lt", '"': "quot", "-": "hyphen", " ": "space", "'": "squot",
           ",": "comma", ".": "dot", ":": "colon", ";": "semicolon", "/": "slash", "%": "percent",
           "#": "hash", "(": "paren_open", ")": "paren_close", "[": "bracket_open", "]": "bracket_close",
           "{": "brace_open", "}": "brace_close", "*": "star", "!": "bang", "\\": "backslash", "+": "plus",
           "$": "dollar", "=": "equals", "?": "question", "@": "at_sign", "^": "caret", "|": "pipe",
           "~": "tilde"}


def c_name(name):
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else
                   "_%s_" % _ESCAPE.get(c, "0x%02x" % ord(c)) for c in name)


def in_image(name, image):
    """Whether the chip's image has `name` (its static pool by C name, its frozen pool)."""
    return name in image["frozen"] or c_name(name) in image["const"]


def chip_pools(frozen, names):
    """[names each pool holds] that `names` new names make after an image whose last pool,
    the frozen modules' (or, with none frozen, the static one), has `frozen` names."""
    room = min(frozen, ENTRIES_INIT) if frozen else ENTRIES_INIT
    out = [max(ENTRIES_INIT, 2 * room)]
    while sum(out) < names:
        out.append(out[-1] * 2)
    return out if names else []


def _module_names(rel):
    """The names importing the firmware's module `rel` ("shove/boards/esp32.py") makes
    beside its table's: its dotted name, its deployed file's path, and its own name (the
    attribute of its package that import binds)."""
    stem = rel[:-3]
    return {stem.replace("/", "."), stem + ".mpy", stem.rsplit("/", 1)[-1]}


def chip_tables():
    """{module: its table's names} as the chip runs them (`hapenny deploy`'s build)."""
    from hapenny import firmware

    return {rel[:-4] + ".py": W.mpy_names(Path(p).read_bytes()) for rel, p in firmware.build("esp32").items()
            if rel.startswith("shove/") and rel.endswith(".mpy")}


def tables(sim_files):
    """({module: its table's names} as the tour runs them, the same as the chip runs them):
    `sim_files`, the tour's staged files (wasm_heap.stage)."""
    sim = {k[len("/flash/"):-4] + ".py": W.mpy_names(v) for k, v in sim_files.items()
           if k.startswith("/flash/shove/") and k.endswith(".mpy")}
    return sim, chip_tables()


def every_module(chip, image):
    """The names the chip interns with every module of `chip` loaded (their tables and
    imports), less the image's: the doctor's, the learning's, the fault report's too."""
    out = set()
    for rel in chip:
        out |= chip[rel] | _module_names(rel)
    return {n for n in out if not in_image(n, image)}


def chip_count(interned, image, sim, chip):
    """The names the chip interns on a path whose run on the tour interned `interned`: every
    name of each module the run loaded (a loaded module's path is among them), as the chip has
    it, and of the chip's board modules for the virtual board's; the other names the run made
    (its imports', its steps'); less the image's. (A name the tour's image has and the chip's
    lacks is not among `interned`: the modules' tables bring it.)"""
    loaded = {rel for rel in sim if rel[:-3] + ".mpy" in interned}
    virtual = set(sim) - set(chip)
    out = set(interned)
    for rel in (loaded & set(chip)) | ((set(chip) - set(sim)) if loaded & virtual else set()):
        out |= chip[rel] | _module_names(rel)
    theirs = set()  # names only the virtual board's modules have
    for rel in virtual:
        theirs |= sim[rel] | _module_names(rel)
    for rel in chip:
        theirs -= chip[rel] | _module_names(rel)
    return {n for n in out - theirs if not in_image(n, image)}


def row(tour, chip, frozen):
    """One path's figures: the tour's count and pools against the chip's."""
    pools = chip_pools(frozen, len(chip))
    t = W._pools(tour)
    return {"tour": {"names": tour, "pools": t, "bytes": sum(W._pool_bytes(a) for a in t)},
            "chip": {"names": len(chip), "pools": pools, "bytes": sum(W._pool_bytes(a) for a in pools),
                     "room_left": sum(pools) - len(chip)}}


PATHS = {"wifi": dict(steps=W.wifi_steps, ap=False), "deploy": dict(steps=W.deploy_steps, ap=False),
         "ap": dict(steps=W.ap_steps, ap=True)}


def main():
    image = image_names()
    out = {}
    seen = set()
    with tempfile.TemporaryDirectory() as tmp:
        sim, chip = tables(W.stage(tmp, wifi=True))
        for name, p in PATHS.items():
            files = W.stage(tmp, wifi=True, ap=p["ap"])
            got = W.names_pool(p["steps"](), files, tmp)
            names = chip_count(got["interned"], image, sim, chip)
            seen |= names
            out[name] = row(got["names"] - got["own"], names, len(image["frozen"]))
    out["every_path"] = row(0, seen, len(image["frozen"]))["chip"]  # a board that has been down all three
    out["every_module"] = row(0, seen | every_module(chip, image), len(image["frozen"]))["chip"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

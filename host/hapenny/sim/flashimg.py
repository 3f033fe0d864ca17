"""The host's view of a virtual board's flash: the littlefs image in the
board's folder (runtime/flashdev.py), read and written by MicroPython's own
littlefs through runtime/flashtool.py. Never while that board runs."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hapenny import firmware

RUNTIME = Path(__file__).resolve().parent / "runtime"
IMAGE = "flash.img"
IFMISSING = ".ifmissing"


def image(board_dir):
    return Path(board_dir) / IMAGE


class NoInterpreter(OSError):
    pass


def micropython_path():
    """The MicroPython unix port that runs virtual boards (and reads their flash)."""
    env = os.environ.get("HAPENNY_MICROPYTHON")
    if env:
        if not os.access(env, os.X_OK):
            raise NoInterpreter("HAPENNY_MICROPYTHON=%s is not an executable micropython" % env)
        return env
    try:
        return firmware.tool("micropython")
    except firmware.FirmwareError:
        raise NoInterpreter("no micropython interpreter: run `make setup` (x86_64 Linux) or set HAPENNY_MICROPYTHON")


def _run(board_dir, *args):
    env = dict(os.environ, MICROPYPATH=str(RUNTIME))
    r = subprocess.run([micropython_path(), "-X", "heapsize=4M", str(RUNTIME / "flashtool.py"),
                        str(image(board_dir).resolve()), *args], env=env, capture_output=True, text=True,
                       timeout=120)
    if r.returncode:
        raise OSError("flash image %s: %s" % (image(board_dir), (r.stdout + r.stderr).strip()))
    return r.stdout


def names(board_dir):
    """Every file on the flash: {path: size}, without reading any (quicker than files())."""
    if not image(board_dir).exists():
        return {}
    out = {}
    for line in _run(board_dir, "ls").splitlines():
        size, path = line.split(" ", 1)
        out[path] = int(size)
    return out


def put(board_dir, files, if_missing=None, prune=None, remove=()):
    """Write {path: bytes} into the flash (and {path: bytes} only where it has
    none), remove the paths in `remove`; `prune`: a folder whose files not
    in `files` are removed."""
    Path(board_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hapenny-flash-") as tmp:
        (Path(tmp) / (IFMISSING + ".remove")).write_text("\n".join(remove))
        for base, items in (("", files), (IFMISSING, if_missing or {})):
            for rel, data in items.items():
                p = Path(tmp) / base / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
        _run(board_dir, "put", tmp, *([prune] if prune else []))


def files(board_dir):
    """Every file on the flash: {path: bytes} (empty for a flash never used)."""
    if not image(board_dir).exists():
        return {}
    with tempfile.TemporaryDirectory(prefix="hapenny-flash-") as tmp:
        _run(board_dir, "get", tmp)
        return {p.relative_to(tmp).as_posix(): p.read_bytes() for p in sorted(Path(tmp).rglob("*")) if p.is_file()}


def files_retry(board_dir, tries=5, read=None):
    """files() (or `read`) of a board that may be writing (a read can land mid-commit)."""
    import time

    for i in range(tries):
        try:
            return (read or files)(board_dir)
        except OSError:
            if i == tries - 1:
                raise
            time.sleep(0.2)


def read(board_dir, path):
    """One file's bytes, or None."""
    return files(board_dir).get(path)


def import_folder(board_dir):
    """A board folder from before the flash was an image (plain files): its
    files go into the image, so a game kept there survives."""
    d = Path(board_dir)
    old = {p.relative_to(d).as_posix(): p for p in d.rglob("*") if p.is_file() and p.name != IMAGE}
    if not old or image(d).exists():
        return
    put(d, {rel: p.read_bytes() for rel, p in old.items()})
    for p in old.values():
        p.unlink()
    for p in sorted((q for q in d.rglob("*") if q.is_dir()), reverse=True):
        shutil.rmtree(p, ignore_errors=True)


def install(board_dir, target="sim", profile="generic-8x8"):
    """Copy the current firmware into a virtual board's flash (the littlefs
    image in its folder), removing stale firmware files; the game, settings
    and map stay. The profile is written when the board has none."""
    files = {rel: Path(local).read_bytes() for rel, local in firmware.build(target).items()}
    put(board_dir, files, if_missing={"profile.json": firmware.profile_path(profile).read_bytes()},
        prune="shove")

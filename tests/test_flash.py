"""`hapenny flash` end to end: real esptool against a mock ESP32 ROM loader
on a pty (erase, write at the chip's offset, verify, read back), then the
deploy to a virtual board that follows a flash."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hapenny.sim.board import VirtualBoard

BIN = Path(sys.executable).parent
HAPENNY = str(BIN / "hapenny")
MOCK = BIN / "esp32-mock-bootloader"
ESPTOOL4 = BIN.parent / "esptool4"  # make setup: pip install --target .venv/esptool4 'esptool>=4.7,<5'


@pytest.fixture
def rom(tmp_path):
    """A mock classic-ESP32 ROM loader behind a pty; yields the pty's path."""
    if not MOCK.exists():
        pytest.fail("esp32-mock-bootloader is missing: make setup installs the dev dependencies")
    port_file = tmp_path / "pty"
    proc = subprocess.Popen([str(MOCK), "run", "--pty", "--port-file", str(port_file), "--chip", "esp32",
                             "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < end, "mock ROM loader did not start"
            time.sleep(0.05)
        yield port_file.read_text().strip()
    finally:
        proc.kill()
        proc.wait()


def _esptool(major):
    """The environment whose `python -m esptool` is esptool `major`: the venv's
    own (5), or the 4.x that make setup puts beside it (what Python 3.9 gets)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if major == 4:
        if not ESPTOOL4.is_dir():
            pytest.fail("no esptool 4.x at %s: make setup installs it" % ESPTOOL4)
        env["PYTHONPATH"] = str(ESPTOOL4)
    v = subprocess.run([sys.executable, "-c", "import esptool; print(esptool.__version__)"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.split(".")[0] == str(major), v.stdout + v.stderr
    return env


# esptool's commands and words by major version: 5 spells commands with hyphens, 4.x with underscores
SPELLING = {5: ("erase-flash", "write-flash", "verify-flash", ("Flash memory erased", "Verification successful")),
            4: ("erase_flash", "write_flash", "verify_flash", ("Chip erase completed", "verify OK"))}


@pytest.mark.parametrize("major", [5, 4])
def test_flash_erases_writes_at_0x1000_and_verifies(rom, tmp_path, major):
    env = _esptool(major)
    erase, write, verify, (erased, verified) = SPELLING[major]
    image = tmp_path / "micropython.bin"
    image.write_bytes(os.urandom(64 * 1024 + 17))  # not a multiple of a flash block
    r = subprocess.run([HAPENNY, "flash", str(image), "--port", rom, "--no-deploy"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "--baud 460800 %s\n" % erase in out and erased in out, out
    assert "esptool --chip esp32 --port %s --baud 460800 %s -z 0x1000" % (rom, write) in out, out
    assert "at 0x00001000" in out, out
    assert " %s 0x1000 " % verify in out and verified in out, out
    assert "Deprecated" not in out + r.stderr, out + r.stderr
    # read the chip back: the image sits at 0x1000 and the bytes before it are erased
    # (a second esptool session on the same mock: on a loaded machine the mock's
    # streamed read can fall out of step with esptool, so the read is tried again;
    # the flash above is what is under test, and it ran once)
    back = tmp_path / "back.bin"
    for _ in range(3):
        rb = subprocess.run([sys.executable, "-m", "esptool", "--chip", "esp32", "--port", rom,
                             "read-flash", "0", str(0x1000 + image.stat().st_size), str(back)],
                            capture_output=True, text=True, timeout=60)
        if rb.returncode == 0:
            break
    assert rb.returncode == 0, rb.stdout + rb.stderr
    data = back.read_bytes()
    assert data[:0x1000] == b"\xff" * 0x1000
    assert data[0x1000:] == image.read_bytes()


def test_flash_refuses_a_missing_image_and_runs_nothing(rom, tmp_path):
    r = subprocess.run([HAPENNY, "flash", str(tmp_path / "none.bin"), "--port", rom],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "no firmware image" in (r.stdout + r.stderr)
    assert "esptool" not in r.stdout


def test_flash_without_an_image_looks_for_the_stock_one_of_the_release(rom, tmp_path):
    """No image named: the stock image of the release the firmware is built
    for, in the current folder, with the name micropython.org gives it."""
    r = subprocess.run([HAPENNY, "flash", "--port", rom, "--dry-run"], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "no firmware image at ESP32_GENERIC-v1.29.0.bin" in r.stderr, r.stderr
    (tmp_path / "ESP32_GENERIC-v1.29.0.bin").write_bytes(b"\xe9" + bytes(4095))
    r = subprocess.run([HAPENNY, "flash", "--port", rom, "--dry-run"], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "write-flash -z 0x1000 ESP32_GENERIC-v1.29.0.bin" in r.stdout, r.stdout + r.stderr


def test_flash_then_deploy_to_a_virtual_board(rom, tmp_path):
    """The flash's second half: the same command deploys the firmware."""
    image = tmp_path / "micropython.bin"
    image.write_bytes(os.urandom(4096))
    r = subprocess.run([HAPENNY, "flash", str(image), "--port", rom, "--no-deploy"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        d = subprocess.run([HAPENNY, "deploy", "--port", vb.port, "--force"],
                           capture_output=True, text=True, timeout=120)
        assert d.returncode == 0, d.stdout + d.stderr
        files = vb.files()
        assert "main.py" in files or "main.mpy" in files
    finally:
        vb.stop()

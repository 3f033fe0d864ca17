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


# esptool's IMAGE_CHIP_ID of each chip (esptool/targets): the chip an image's header names
CHIP_IDS = {"esp32": 0, "esp32s2": 2, "esp32c3": 5, "esp32s3": 9, "esp32c6": 13}
OFFSETS = {"esp32": 0x1000, "esp32s3": 0x0, "esp32c3": 0x0}  # where each chip's bootloader starts


def image_bytes(chip, size):
    """An ESP firmware image's first bytes for `chip` (magic 0xE9, the chip id at 12-13), then noise."""
    head = bytes([0xE9, 3, 2, 0x20]) + bytes(8) + CHIP_IDS[chip].to_bytes(2, "little") + bytes(10)
    return head + os.urandom(size - len(head))


# The mock ROM loader on a pty never sees esptool close the port (it keeps a slave fd open) nor
# reset the chip (a pty has no RTS), so it ends a session _FLASH_END_IDLE_SEC (3 s) after a
# FLASH_END, the stub's end-of-run, and answers the next command as a fresh ROM. An esptool run
# that `hapenny flash` starts within those 3 s finds the stub running, and if the 3 s run out
# mid-conversation its MD5 was answered as the ROM's: esptool read two hex digits as the status
# ("Failed to calculate md5sum (result was 3334)"), once under the whole suite's load. So the
# session is kept: every run of one flash talks to one loader, its stub running after the first.
MOCK_RUN = ("import sys; from esp32_mock_bootloader import server; server._FLASH_END_IDLE_SEC = float('inf'); "
            "from esp32_mock_bootloader.cli import main; sys.argv[0] = 'esp32-mock-bootloader'; sys.exit(main())")


def mock_rom(tmp_path, chip):
    if not MOCK.exists():
        pytest.fail("esp32-mock-bootloader is missing: make setup installs the dev dependencies")
    port_file = tmp_path / ("pty-" + chip)
    return port_file, subprocess.Popen([sys.executable, "-c", MOCK_RUN, "run", "--pty", "--port-file", str(port_file),
                                        "--chip", chip, "--timeout", "120"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(params=["esp32"])
def rom(request, tmp_path):
    """A mock ROM loader of a chip (the classic ESP32 unless parametrized) behind a pty; yields the pty's path."""
    port_file, proc = mock_rom(tmp_path, request.param)
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


@pytest.mark.parametrize("rom,major", [("esp32", 5), ("esp32s3", 5), ("esp32c3", 5), ("esp32", 4), ("esp32c3", 4)],
                         indirect=["rom"])
def test_flash_reads_the_chip_erases_writes_at_its_offset_and_verifies(rom, tmp_path, request, major):
    chip = request.node.callspec.params["rom"]
    at = OFFSETS[chip]
    env = _esptool(major)
    erase, write, verify, (erased, verified) = SPELLING[major]
    image = tmp_path / "micropython.bin"
    image.write_bytes(image_bytes(chip, 64 * 1024 + 17))  # not a multiple of a flash block
    r = subprocess.run([HAPENNY, "flash", str(image), "--port", rom, "--no-deploy"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "the board is an %s (esptool)" % {"esp32": "ESP32", "esp32s3": "ESP32-S3", "esp32c3": "ESP32-C3"}[chip] in out, out
    assert "--chip %s --port %s --baud 460800 %s\n" % (chip, rom, erase) in out and erased in out, out
    assert "--chip %s --port %s --baud 460800 %s -z %#x" % (chip, rom, write, at) in out, out
    assert "at 0x%08x" % at in out, out
    assert " %s %#x " % (verify, at) in out and verified in out, out
    assert "Deprecated" not in out + r.stderr, out + r.stderr
    # the chip as a whole: the image sits at the chip's offset and the bytes
    # before it are erased. A second esptool session checks it by the flash's
    # own digest (verify-flash from 0: one MD5 command, nothing streamed, so a
    # loaded host cannot put the mock's read out of step with esptool)
    whole = tmp_path / "whole.bin"
    want = b"\xff" * at + image.read_bytes()
    whole.write_bytes(want)
    rb = subprocess.run([sys.executable, "-m", "esptool", "--chip", chip, "--port", rom,
                         "verify-flash", "0", str(whole)], capture_output=True, text=True, timeout=60)
    assert rb.returncode == 0 and "Verification successful" in rb.stdout, rb.stdout + rb.stderr
    # and the digest is no formality: one byte off is told
    whole.write_bytes(want[:-1] + bytes([want[-1] ^ 1]))
    for _ in range(2):
        rb = subprocess.run([sys.executable, "-m", "esptool", "--chip", chip, "--port", rom,
                             "verify-flash", "0", str(whole)], capture_output=True, text=True, timeout=60)
        # (the mock ROM's third session on a loaded host once answered the MD5 command out of
        # step: "Failed to calculate md5sum (result was 3132...)": the neighbour's hiccup, asked again)
        if "Failed to calculate md5sum" not in rb.stdout + rb.stderr:
            break
    assert rb.returncode != 0 and "Verification failed" in rb.stdout + rb.stderr, rb.stdout + rb.stderr


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
    (tmp_path / "ESP32_GENERIC-v1.29.0.bin").write_bytes(image_bytes("esp32", 4096))
    r = subprocess.run([HAPENNY, "flash", "--port", rom, "--dry-run"], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "write-flash -z 0x1000 ESP32_GENERIC-v1.29.0.bin" in r.stdout, r.stdout + r.stderr


def test_flash_then_deploy_to_a_virtual_board(rom, tmp_path):
    """The flash's second half: the same command deploys the firmware."""
    image = tmp_path / "micropython.bin"
    image.write_bytes(image_bytes("esp32", 4096))
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


@pytest.mark.parametrize("rom", ["esp32s3", "esp32c3"], indirect=True)
def test_each_chip_looks_for_its_own_stock_image(rom, tmp_path, request):
    name = {"esp32s3": "ESP32_GENERIC_S3-v1.29.0.bin", "esp32c3": "ESP32_GENERIC_C3-v1.29.0.bin"}[
        request.node.callspec.params["rom"]]
    r = subprocess.run([HAPENNY, "flash", "--port", rom, "--dry-run"], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "no firmware image at %s" % name in r.stderr, r.stderr
    assert "micropython.org/download/%s/" % name.split("-")[0] in r.stderr


@pytest.mark.parametrize("rom,image_for,words", [
    ("esp32s3", "esp32c3", "an image for the ESP32-C3, and this board is an ESP32-S3: download "
                           "ESP32_GENERIC_S3-v1.29.0.bin"),
    ("esp32c3", "esp32", "an image for the ESP32, and this board is an ESP32-C3: download ESP32_GENERIC_C3"),
    ("esp32", "esp32s3", "an image for the ESP32-S3, and this board is an ESP32: download ESP32_GENERIC-"),
    ("esp32s2", "esp32s2", "this board is an ESP32-S2; this firmware runs on the classic ESP32, the ESP32-S3 "
                           "and the ESP32-C3"),
    ("esp32c3", None, "is no ESP firmware image"),
], indirect=["rom"])
def test_an_image_for_another_chip_or_a_chip_it_cannot_run_is_refused_before_anything_is_erased(rom, tmp_path,
                                                                                                image_for, words):
    image = tmp_path / "micropython.bin"
    image.write_bytes(image_bytes(image_for, 8192) if image_for else os.urandom(8192))
    r = subprocess.run([HAPENNY, "flash", str(image), "--port", rom, "--no-deploy"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and words in r.stderr and "nothing was erased" in r.stderr, r.stdout + r.stderr
    assert "erase-flash" not in r.stdout  # no esptool command ran

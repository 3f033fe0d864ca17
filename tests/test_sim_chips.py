"""The virtual board as each chip (hapenny sim --chip): the MCU name
MicroPython gives it, its profile, its console, its clock; and a USB
console's receive side, which never loses a byte."""
import json
import subprocess
import sys
import time

import pytest

from hapenny.connect import connect
from hapenny.sim.board import CHIPS, ESP32_HEAP, VirtualBoard, chip_heap


@pytest.mark.parametrize("chip,mcu,console,profile,mhz", [
    ("esp32s3", "ESP32-S3", "usb-cdc", "s3-devkitc-8x8", 240),
    ("esp32c3", "ESP32-C3", "usb-serial-jtag", "c3-supermini-beds", 160),
])
def test_a_virtual_chip_names_itself_as_micropython_does_and_has_its_console_and_clock(tmp_path, chip, mcu, console,
                                                                                      profile, mhz):
    from hapenny import doctor

    vb = VirtualBoard(board_dir=tmp_path / "flash", chip=chip).start()
    try:
        link, info, ser = connect(vb.port)
        assert info["board"] == profile  # the chip's own profile, its pins checked for that chip
        about = link.request("diag", op="about")
        assert about["machine"].endswith(" with " + mcu) and about["chip"] == chip and about["console"] == console
        assert doctor.console(about).startswith("console: the chip's ") and "no baud rate" in doctor.console(about)
        ser.close()
        out = subprocess.run([sys.executable, "-m", "mpremote", "connect", vb.port, "exec",
                              "import os, machine\nprint(repr(os.uname().machine), machine.freq())"],
                             capture_output=True, text=True, timeout=60).stdout
        name, hz = out.strip().rsplit(" ", 1)
        assert eval(name).endswith("with " + mcu) and int(hz) == mhz * 1_000_000
    finally:
        vb.stop()


def test_each_chips_heap_is_its_first_heap_grown_once():
    # ports/esp32/mpconfigport.h: 56 KB first on the classic chip, 64 KB on the S3 and C3
    assert [CHIPS[c]["first_heap"] for c in ("esp32", "esp32s3", "esp32c3")] == [56 * 1024, 64 * 1024, 64 * 1024]
    assert chip_heap("esp32") == ESP32_HEAP
    assert chip_heap("esp32s3") == chip_heap("esp32c3") == ESP32_HEAP * 64 // 56


def test_an_unknown_chip_is_refused_by_name(tmp_path):
    with pytest.raises(Exception, match="esp32s2.*esp32, esp32s3, esp32c3"):
        VirtualBoard(board_dir=tmp_path, chip="esp32s2")


def test_a_usb_consoles_full_ring_holds_the_hosts_bytes_back_instead_of_losing_them(tmp_path):
    # Four lines of 512 bytes at once, under the ESP32 timing model: 2 KB against a
    # 259-byte ring. Over UART0 the ring drops what comes in faster than the
    # firmware reads; over the C3's USB-Serial/JTAG the peripheral keeps it until
    # the ring has room, so every line is read whole, whatever this machine's load.
    vb = VirtualBoard(board_dir=tmp_path / "flash", chip="esp32c3", timing="esp32").start()
    try:
        link, info, ser = connect(vb.port)
        s0 = vb.stats()
        ids = []
        burst = b""
        for k in range(4):
            id_ = "%d" % k + "x" * (512 - len('{"cmd":"info","id":""}') - 1)
            ids.append(id_)
            burst += json.dumps({"cmd": "info", "id": id_}, separators=(",", ":")).encode() + b"\n"
        link.send_line(burst)
        got = []
        end = time.monotonic() + 30
        while len(got) < 4 and time.monotonic() < end:
            got += [r.get("id") for r in link._pump(0.2) if "id" in r]
        assert got == ids
        s1 = vb.stats()
        assert s1["rx_dropped"] == s0["rx_dropped"]
        ser.close()
    finally:
        vb.stop()

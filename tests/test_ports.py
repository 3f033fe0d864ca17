"""`hapenny ports`: what sits behind each USB serial port, by its USB IDs."""
from types import SimpleNamespace

from hapenny import connect


def test_each_chips_usb_ids_are_named_and_marked(monkeypatch):
    from serial.tools import list_ports

    ports = [SimpleNamespace(device="/dev/ttyACM0", description="USB JTAG/serial debug unit", vid=0x303A, pid=0x1001),
             SimpleNamespace(device="/dev/ttyACM1", description="Espressif Device", vid=0x303A, pid=0x4001),
             SimpleNamespace(device="/dev/ttyUSB0", description="CP2102N USB to UART Bridge", vid=0x10C4, pid=0xEA60),
             SimpleNamespace(device="/dev/ttyUSB1", description="USB Serial", vid=0x1A86, pid=0x55D4),
             SimpleNamespace(device="/dev/ttyACM2", description="Arduino Uno", vid=0x2341, pid=0x0043),
             SimpleNamespace(device="/dev/ttyS0", description="n/a", vid=None, pid=None)]
    monkeypatch.setattr(list_ports, "comports", lambda: ports)
    monkeypatch.setattr(connect, "running_sims", lambda: [])
    rows = {dev: (desc, esp) for dev, desc, esp in connect.list_ports()}
    assert rows["/dev/ttyACM0"] == ("USB JTAG/serial debug unit [303a:1001] USB-Serial/JTAG (ESP32-C3 or -S3)", True)
    assert rows["/dev/ttyACM1"][0].endswith("[303a:4001] native USB (ESP32-S3 or -S2 stock image)")
    assert rows["/dev/ttyUSB0"] == ("CP2102N USB to UART Bridge [10c4:ea60] USB-UART bridge (UART0)", True)
    assert rows["/dev/ttyUSB1"][0].endswith("USB-UART bridge (UART0)") and rows["/dev/ttyUSB1"][1]
    assert rows["/dev/ttyACM2"] == ("Arduino Uno [2341:0043]", False)
    assert rows["/dev/ttyS0"] == ("n/a", False)
    assert connect.port_console("/dev/ttyACM0") == "usb-serial-jtag"
    assert connect.port_console("/dev/ttyUSB0") == "uart"
    assert connect.port_console("/dev/pts/9") is None  # a sim's pty: the board says which console it has


def test_the_doctor_says_which_console_it_found(monkeypatch):
    from hapenny import connect as c, doctor

    monkeypatch.setattr(c, "port_console", lambda port: {"/dev/ttyACM0": "usb-serial-jtag",
                                                         "/dev/ttyUSB0": "uart"}.get(port))
    c3 = {"console": "usb-serial-jtag+uart"}
    text = doctor.console(c3, "/dev/ttyACM0")
    assert text.startswith("console: the chip's USB-Serial/JTAG: no baud rate") and "UART0 as well" in text
    # the same C3 through a USB-UART bridge on its UART0 (a DevKitM-1's other port)
    assert doctor.console(c3, "/dev/ttyUSB0").startswith("console: UART0 behind the board's USB-UART bridge")
    assert doctor.console({"console": "uart"}).startswith("console: UART0")
    assert doctor.console({}).startswith("console: UART0")  # firmware from before: a classic ESP32's
    assert "native USB (TinyUSB CDC)" in doctor.console({"console": "usb-cdc"})

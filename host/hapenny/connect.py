"""Choosing a port and opening a protocol link to the board on it: a serial
port, or a board on the network (netlink.py) named by the same --port."""
import json
import os
import tempfile
import time
from collections import deque
from pathlib import Path

from hapenny.link import Link, LinkError, SerialTransport

# USB bridges found on ESP32 boards: CP210x, CH340/CH9102, FTDI, Espressif's own USB
ESP32_USB = {(0x10C4, 0xEA60), (0x1A86, 0x7523), (0x1A86, 0x55D4), (0x0403, 0x6001), (0x0403, 0x6010)}
ESPRESSIF_VID = 0x303A
# Espressif's own USB IDs: the USB-Serial/JTAG peripheral (ESP32-C3, -S3, -C6, -H2:
# 303a:1001, its ROM loader included), TinyUSB's CDC on the S2/S3's native USB
# (MicroPython's stock images: 303a:4001, 0x4000 | one bit a class,
# ports/esp32/mpconfigport.h) and the S2/S3 ROM loader's own CDC (303a:0002)
USB_SERIAL_JTAG = (ESPRESSIF_VID, 0x1001)


def console_kind(vid, pid):
    """What sits behind a USB serial port: "usb-serial-jtag", "usb-cdc"
    (an Espressif chip's own USB), "uart" (a USB-UART bridge to UART0), or
    None (not an ESP32's)."""
    if (vid, pid) == USB_SERIAL_JTAG:
        return "usb-serial-jtag"
    if vid == ESPRESSIF_VID:
        return "usb-cdc"
    if (vid, pid) in ESP32_USB:
        return "uart"
    return None


# a port's description in `hapenny ports`, by what sits behind it
CONSOLE_NAMES = {"usb-serial-jtag": "USB-Serial/JTAG (ESP32-C3 or -S3)",
                 "usb-cdc": "native USB (ESP32-S3 or -S2 stock image)", "uart": "USB-UART bridge (UART0)"}


class PortError(Exception):
    """No usable port: the message says what to do."""


def sims_dir():
    """Where `hapenny sim` registers its board for `ports` and the port choice:
    the user's, or $HAPENNY_SIMS_DIR (a registry of one's own: a test run's
    sims stay out of the user's list, and another sim out of the run's)."""
    own = os.environ.get("HAPENNY_SIMS_DIR")
    if own:
        return Path(own)
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / ("hapenny-sims-%d" % os.getuid())


def register_sim(port, control, pid=None):
    d = sims_dir()
    d.mkdir(parents=True, exist_ok=True)
    f = d / ("%d.json" % (pid or os.getpid()))
    f.write_text(json.dumps({"port": port, "control": control, "pid": pid or os.getpid()}))
    return f


def running_sims():
    """Virtual boards started by `hapenny sim` that are still alive."""
    out = []
    d = sims_dir()
    if not d.is_dir():
        return out
    for f in sorted(d.glob("*.json")):
        try:
            info = json.loads(f.read_text())
            os.kill(info["pid"], 0)
        except (OSError, ValueError, KeyError):
            try:
                f.unlink()
            except OSError:
                pass
            continue
        if os.path.exists(info["port"]):
            out.append(info)
    return out


def looks_like_esp32(p):
    return (p.vid, p.pid) in ESP32_USB or p.vid == ESPRESSIF_VID


def list_ports():
    """[(device, description, is_esp32)] for serial ports and running sims."""
    from serial.tools import list_ports

    rows = []
    for p in sorted(list_ports.comports(), key=lambda p: p.device):
        desc = p.description or ""
        if p.vid is not None:
            desc += " [%04x:%04x]" % (p.vid, p.pid)
            kind = console_kind(p.vid, p.pid)
            if kind:
                desc += " " + CONSOLE_NAMES[kind]
        rows.append((p.device, desc, looks_like_esp32(p)))
    for s in running_sims():
        rows.append((s["port"], "hapenny virtual board (sim pid %d)" % s["pid"], True))
    return rows


def choose_port(port=None):
    if port:
        return port
    env = os.environ.get("HAPENNY_PORT")
    if env:
        return env
    rows = list_ports()
    real = [r for r in rows if r[2] and not r[1].startswith("hapenny virtual")]
    sims = [r for r in rows if r[1].startswith("hapenny virtual")]
    pick = real or sims
    if len(pick) == 1:
        return pick[0][0]
    if not pick:
        raise PortError("no board found: plug in the ESP32 (a USB cable that carries data), "
                        "or start a virtual one with `hapenny sim`; `hapenny ports` lists what is there")
    raise PortError("several boards found (%s): choose one with --port or HAPENNY_PORT"
                    % ", ".join(r[0] for r in pick))


def open_serial(port, timeout=None):
    import serial

    try:
        return serial.Serial(port, 115200, timeout=timeout, exclusive=True)
    except serial.SerialException as e:
        msg = str(e)
        if "busy" in msg.lower() or "lock" in msg.lower() or "Resource temporarily" in msg:
            raise PortError("%s is busy: another program (a terminal, mpremote, a scoreboard) has it open" % port)
        if not os.path.exists(port):
            raise PortError("%s does not exist: is the board plugged in (or the sim running)?" % port)
        raise PortError("cannot open %s: %s" % (port, msg))


def network_address(port):
    """The board on the network that `port` names (netlink.Address), or None
    for a serial port; PortError for a network address that cannot be used."""
    from hapenny.netlink import parse_address

    try:
        return parse_address(port)
    except ValueError as e:
        raise PortError(str(e))


def connect_network(addr, port, timeout=3.0, code=None, events=True):
    """A link to the board on the network, through its web API. Returns
    (link, info, transport): the transport's close() ends it."""
    from hapenny.netlink import HttpTransport, board_code

    t = HttpTransport(addr, code=board_code(addr, code), events=events)
    link = Link(t)
    link.port = port
    try:
        info = link.hello(timeout=timeout)
    except LinkError as e:
        t.close()
        if "protocol" in str(e):
            raise PortError(str(e))
        raise
    return link, info, t


def at_repl(link):
    """The last the board sent is the MicroPython REPL's prompt (a board
    left there by mpremote, or whose main.py ended): it waits for a line of
    Python, and a hapenny reply will not come, so the hello stops waiting
    (its whole timeout, every time) and connect soft-resets the board. The
    firmware's own output is whole lines: it never ends in a prompt."""
    buf = link.buf
    return buf.endswith(b">>> ") or (buf == b">" and bool(link.noise) and link.noise[-1].startswith(b"raw REPL"))


def started(link):
    """The board has said it started (its boot event) since the link was made."""
    return any(ev.get("ev") == "boot" for ev in link.events)


def connect(port=None, timeout=3.0, code=None, events=True):
    """Open the port and check that hapenny firmware answers. Returns (link,
    info, serial); for a board on the network the third is its transport
    (close() ends both alike). `code`: the pairing code a board on the
    network needs; `events`: follow its events (a serial port always does)."""
    port = choose_port(port)
    addr = network_address(port)
    if addr is not None:
        return connect_network(addr, port, timeout, code=code, events=events)
    ser = open_serial(port)
    link = Link(SerialTransport(ser))
    link.port = port
    try:
        info = link.hello(timeout=timeout, give_up=lambda ln: at_repl(ln) or started(ln))
    except LinkError as first:
        # a board left at the REPL (after mpremote) runs main.py again on a soft reset
        noise = b"\n".join(link.noise) + b"\n" + link.buf
        if started(link) and not at_repl(link) and "protocol" not in str(first):
            # it started after the hello went (a reset, a power-up): the line may have come before
            # main.py read the port, and no reply would come. Asked again; the start is not this
            # link's news (a later wait for a boot is for a later one)
            link.events = deque(ev for ev in link.events if ev.get("ev") != "boot")
            try:
                info = link.hello(timeout=timeout, give_up=at_repl)
            except LinkError as again:
                ser.close()
                raise PortError(str(again) if "protocol" in str(again) else "the board on %s started and does "
                                "not answer hapenny commands: is the firmware deployed (hapenny deploy)? (%s)"
                                % (port, again))
        elif b">>>" in noise or b"raw REPL" in noise or b">" in noise[-4:]:
            link.send_line(b"\r\x02\x04")
            try:
                link.wait_event("boot", timeout=8)
                info = link.hello(timeout=timeout, give_up=at_repl)
            except LinkError:
                ser.close()
                raise PortError("the board on %s is at the MicroPython REPL and does not start hapenny: "
                                "deploy the firmware (hapenny deploy)" % port)
        else:
            ser.close()
            if "protocol" in str(first):
                raise PortError(str(first))
            raise PortError("the board on %s does not answer hapenny commands: is the firmware deployed "
                            "(hapenny deploy)? (%s)" % (port, first))
    return link, info, ser


def wait_for_port(port, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(port):
            return True
        time.sleep(0.1)
    return False


def port_console(port):
    """console_kind of a serial port by its USB IDs, or None (not USB, not found, a sim)."""
    try:
        from serial.tools import list_ports

        real = os.path.realpath(port)
        for p in list_ports.comports():
            if p.vid is not None and os.path.realpath(p.device) == real:
                return console_kind(p.vid, p.pid)
    except (ImportError, OSError):
        pass
    return None

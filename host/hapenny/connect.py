"""Choosing a serial port and opening a protocol link to a board on it."""
import json
import os
import tempfile
import time
from pathlib import Path

from hapenny.link import Link, LinkError, SerialTransport

# USB bridges found on ESP32 boards: CP210x, CH340/CH9102, FTDI, Espressif's own USB
ESP32_USB = {(0x10C4, 0xEA60), (0x1A86, 0x7523), (0x1A86, 0x55D4), (0x0403, 0x6001), (0x0403, 0x6010)}
ESPRESSIF_VID = 0x303A


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


def connect(port=None, timeout=3.0):
    """Open the port and check that hapenny firmware answers. Returns (link, info, serial)."""
    port = choose_port(port)
    ser = open_serial(port)
    link = Link(SerialTransport(ser))
    link.port = port
    try:
        info = link.hello(timeout=timeout)
    except LinkError as first:
        # a board left at the REPL (after mpremote) runs main.py again on a soft reset
        noise = b"\n".join(link.noise) + b"\n" + link.buf
        if b">>>" in noise or b"raw REPL" in noise or b">" in noise[-4:]:
            link.send_line(b"\r\x02\x04")
            try:
                link.wait_event("boot", timeout=8)
                info = link.hello(timeout=timeout)
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

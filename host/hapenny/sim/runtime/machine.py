# The virtual board's `machine`: the unix port's own module plus what an
# ESP32 has and the unix port lacks, with the ESP32 port's semantics
# (MicroPython v1.27.0, ports/esp32):
# - reset() is a power cycle and soft_reset() a soft reboot: the simulator
#   restarts this process on the exit status (see vboot.py);
# - reset_cause() tells why this start happened (modmachine.c: a soft
#   reboot reports SOFT_RESET whatever the chip's last reset was);
# - WDT cannot be stopped and outlives a soft reboot (machine_wdt.c keeps
#   one task-watchdog user for good; it has no deinit): the simulator holds
#   its deadline, since this process ends at every reboot;
# - Timer callbacks are scheduled, never hard (machine_timer.c), and every
#   timer is stopped by a soft reboot (main.c: machine_timer_deinit_all):
#   they run when the board layer services its loop or the REPL waits for
#   input (mphalport.c: MICROPY_EVENT_POLL_HOOK runs pending callbacks);
# - RTC().memory() survives every reset but a power cut (machine_rtc.c keeps
#   it in RTC_NOINIT memory): the simulator holds it across processes;
# - Pin refuses numbers the chip has not (machine_pin.h for the ESP32) and
#   output on input-only GPIO 34..39 (machine_pin.c); those pins have no
#   pull resistors, so a pull-up asked of them is silently not there.
import json
import os
import sys
import time

from umachine import *  # noqa: F401,F403  mem32, idle, ...

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5
_HARD_EXIT = 12
_SOFT_EXIT = 10

# machine.Pin's pins on each stock image (ports/esp32/machine_pin.h): the classic
# ESP32 without PSRAM; the S3 with its USB console (no 19/20) and quad PSRAM (no
# 26; its flash 27-32 left out); the C3 with its USB-Serial/JTAG (no 18/19; its
# flash 14-17 left out). Only the classic chip has input-only pins.
_CHIP = os.getenv("HAPENNY_CHIP") or "esp32"
if _CHIP == "esp32s3":
    _VALID = set(range(0, 19)) | {21} | set(range(33, 49))
    _INPUT_ONLY = 99
    _BOOT = 0  # the BOOT button
elif _CHIP == "esp32c3":
    _VALID = set(range(0, 14)) | {20, 21}
    _INPUT_ONLY = 99
    _BOOT = 9
else:
    _VALID = set(range(0, 24)) | {25, 26, 27} | set(range(32, 40))
    _INPUT_ONLY = 34
    _BOOT = 0
_MHZ = 160 if _CHIP == "esp32c3" else 240  # the fastest each runs at (modmachine.c refuses more)


def reset():
    sys.exit(_HARD_EXIT)


def soft_reset():
    sys.exit(_SOFT_EXIT)


def reset_cause():
    return int(os.getenv("HAPENNY_RESET_CAUSE") or PWRON_RESET)


def freq(hz=None):
    if hz is None:
        return _MHZ * 1000000
    if hz > _MHZ * 1000000:
        raise ValueError("frequency must be 20MHz, 40MHz, 80Mhz, 160MHz or 240MHz")
    return None


def unique_id():
    return b"\x24\x0a\xc4\x5e\x1a\x01"


_ctl = []


def _tell(msg):
    """A line to the simulator on the control pipe it handed down."""
    if not _ctl:
        ctl = os.getenv("HAPENNY_SIM_CTL")
        if not ctl:
            return
        from flashdev import host_open  # the flash is at "/": the pipe is the host's

        _ctl.append(host_open("/dev/fd/" + ctl.split(",")[1], "wb"))
    _ctl[0].write(json.dumps(msg).encode() + b"\n")


class Pin:
    """A GPIO with nothing wired to it: the virtual board's matrix, strip and
    buttons live in its board layer, not on pins. The BOOT button (GPIO 0;
    the C3's GPIO 9) reads held when the simulator started the board with it
    held."""

    IN = 1
    OUT = 3
    OPEN_DRAIN = 7
    PULL_UP = 2
    PULL_DOWN = 1
    IRQ_FALLING = 2
    IRQ_RISING = 1

    def __init__(self, pin, mode=-1, pull=-1, value=None):
        if not isinstance(pin, int) or pin not in _VALID:
            raise ValueError("invalid pin")
        self.id = pin
        self._pull = 0
        self._v = 1 if value is None else (1 if value else 0)
        self.init(mode, pull)

    def init(self, mode=-1, pull=-1, value=None):
        if mode not in (-1, None) and mode & 2 and self.id >= _INPUT_ONLY:
            raise ValueError("pin can only be input")
        if pull not in (-1, None):
            self._pull = 0 if self.id >= _INPUT_ONLY else pull
        if value is not None:
            self._v = 1 if value else 0

    def value(self, v=None):
        if v is None:
            if self.id == _BOOT and os.getenv("HAPENNY_BOOT_HELD"):
                return 0
            if self.id >= _INPUT_ONLY and not self._pull:
                return 0  # floating: nothing holds it high
            return self._v
        self._v = 1 if v else 0

    def on(self):
        self._v = 1

    def off(self):
        self._v = 0

    def irq(self, *args, **kw):
        return None

    def __call__(self, v=None):
        return self.value(v)


_rtc = [bytes.fromhex(os.getenv("HAPENNY_RTC_MEM") or "")]


class RTC:
    def memory(self, data=None):
        if data is None:
            return _rtc[0]
        data = bytes(data)
        if len(data) > 2048:  # MICROPY_HW_RTC_USER_MEM_MAX
            raise ValueError("buffer too long")
        _rtc[0] = data
        _tell({"rtc": data.hex()})


class WDT:
    def __init__(self, id=0, timeout=5000):
        if id != 0:
            raise ValueError()
        if timeout <= 0:
            raise ValueError("WDT timeout too short")
        _tell({"wdt": timeout})

    def feed(self):
        _tell({"wdt_feed": 1})


_timers = {}


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __new__(cls, id=-1, *args, **kw):
        t = _timers.get(id)  # Timer(id) is the same timer again (machine_timer.c)
        if t is None:
            t = object.__new__(cls)
            t.id = id
            t.cb = None
            _timers[id] = t
        return t

    def __init__(self, id=-1, *args, **kw):
        if args or kw:
            self.init(*args, **kw)

    def init(self, mode=PERIODIC, period=-1, callback=None, freq=-1):
        if freq > 0:
            period = 1000 // freq
        self.mode = mode
        self.period = max(1, period)
        self.cb = callback
        self.due = time.ticks_add(time.ticks_ms(), self.period)

    def deinit(self):
        self.cb = None


def _run_timers():
    """Run the callbacks that are due; returns ms until the next one (or None)."""
    now = time.ticks_ms()
    nxt = None
    for t in _timers.values():
        if t.cb is None:
            continue
        left = time.ticks_diff(t.due, now)
        if left <= 0:
            cb = t.cb
            if t.mode == Timer.PERIODIC:
                t.due = time.ticks_add(now, t.period)
            else:
                t.cb = None
            cb(t)
            left = t.period if t.cb is not None else None
        if left is not None and (nxt is None or left < nxt):
            nxt = left
    return nxt

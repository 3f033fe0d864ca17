# Virtual board layer for the MicroPython unix port: the matrix is an
# electrical model, the strip and the flash are as slow as on an ESP32, and
# a control channel (two pipes handed down by the simulator) lets the host close
# crossings, hold buttons and read the strip. Flash is the working directory.
import json
from binascii import hexlify
import os
import select
import sys
import time

from shove import store
from shove.boards.matrix_model import MatrixModel

_MASK = 0x3FFFFFFF
STRIP_US_PER_PIXEL = 30  # 24 bits at 800 kHz, as neopixel.write() blocks on an ESP32
FLASH_BASE_MS = 8  # littlefs write + rename: a few to tens of ms
FLASH_MS_PER_KB = 4
FLASH_APPEND_US = 1500  # program a few bytes into an erased block + a metadata commit
RESET_EXIT = 12  # exit status the simulator reads as "power-cycle me"
# An ESP32 running the scan loop is never paused by an operating system; this
# process is. A gap longer than this between two reads of the clock is the OS
# taking the CPU away, and the board's clock does not move during it. The
# modelled slow parts (strip, flash) advance the clock in full.
STALL_US = 500
BUTTONS = ("next", "undo", "new")


class Board:
    def __init__(self, profile):
        self.name = profile.name
        self.rows = profile.rows
        self.cols = profile.cols
        self.model = MatrixModel(self.rows, self.cols, slots=64)
        self._full = (1 << self.cols) - 1
        led = profile.leds
        self.strip_count = led["beds"] * 2 * led["per_side"] + led["status"]
        self.frame = bytes(3 * self.strip_count)
        self.strip_writes = 0
        self._held = [0, 0, 0]  # button i held until this tick (ms); 0 = up
        self._last = time.ticks_us()
        self._base = int(os.getenv("HAPENNY_TICKS0") or 0) & _MASK
        self._total = 0  # board microseconds since start, unwrapped
        self.stalls = 0  # OS pauses the clock skipped
        self._ctl_in = None
        self._ctl_out = None
        self._ctl_buf = b""
        ctl = os.getenv("HAPENNY_SIM_CTL")  # "rfd,wfd" handed down by the simulator
        if ctl:
            rfd, wfd = ctl.split(",")
            self._ctl_in = open("/dev/fd/" + rfd, "rb")
            self._ctl_out = open("/dev/fd/" + wfd, "wb")
            self._poll = select.poll()
            self._poll.register(self._ctl_in, select.POLLIN)
        self.slow = os.getenv("HAPENNY_FAST") is None  # model slow strip and flash
        self.flash_full = False  # a test can make the flash refuse every write
        self.crash = False  # a test can make the scan loop raise once
        self._wdt = None
        self._run_timers = None
        self._free_run = False
        self._last_loop = 0

    # ---- clock: the board's own, wrapping at 2**30 like the ESP32's -----------
    def ticks_us(self):
        raw = time.ticks_us()
        gap = time.ticks_diff(raw, self._last)
        self._last = raw
        if gap > STALL_US:
            gap = STALL_US
            self.stalls += 1
        self._total += gap
        return (self._base + self._total) & _MASK

    def _spent(self, us):
        """A modelled slow operation took `us` of board time."""
        self._total += us
        self._last = time.ticks_us()

    def ticks_ms(self):
        self.ticks_us()
        return (self._base + self._total // 1000) & _MASK

    # ---- matrix ---------------------------------------------------------------
    def read_matrix(self, snap):
        if self.crash:  # a test's stand-in for a bug outside the request handlers
            self.crash = False
            raise RuntimeError("injected fault in the scan loop")
        now = self.ticks_us()
        m = self.model
        full = self._full
        for r in range(self.rows):
            snap[r] = ~m.levels(r, now) & full

    def press(self, row, col, ms):
        return self.close_us(row, col, ms * 1000, 0)

    def close_us(self, row, col, length_us, delay_us):
        on = (self.ticks_us() + delay_us) & _MASK
        return self.model.close(row, col, on, (on + length_us) & _MASK)

    def button(self, i):
        until = self._held[i]
        if not until:
            return False
        if time.ticks_diff(until, self.ticks_ms()) > 0:
            return True
        self._held[i] = 0
        return False

    # ---- strip and flash ---------------------------------------------------------
    def strip_write(self, frame):
        if self.slow:
            self.ticks_us()
            us = STRIP_US_PER_PIXEL * self.strip_count
            end = time.ticks_add(time.ticks_us(), us)
            while time.ticks_diff(end, time.ticks_us()) > 0:
                pass
            self._spent(us)
        self.frame = bytes(frame)
        self.strip_writes += 1
        if self._ctl_out:
            self._send({"frame": hexlify(self.frame).decode()})

    def read_file(self, path):
        return store.read(path)

    def _flash_check(self):
        if self.flash_full:
            raise OSError(28)  # ENOSPC, as littlefs reports a full or worn flash

    def write_file(self, path, data):
        self._flash_check()
        if self.slow:
            self.ticks_us()
            ms = FLASH_BASE_MS + FLASH_MS_PER_KB * len(data) // 1024
            time.sleep_ms(ms)
            self._spent(ms * 1000)
        store.write_atomic(path, data)

    def append_file(self, path, data):
        self._flash_check()
        if self.slow:
            self.ticks_us()
            time.sleep_us(FLASH_APPEND_US)
            self._spent(FLASH_APPEND_US)
        store.append(path, data)

    # ---- control channel -----------------------------------------------------------
    def _send(self, obj):
        # unbuffered already; flush() would fsync, which a pipe refuses
        self._ctl_out.write(json.dumps(obj).encode() + b"\n")

    def service(self, app):
        if not self._ctl_in:
            return
        for _ in self._poll.ipoll(0):
            chunk = self._ctl_in.read(1)
            if not chunk:  # the simulator went away: the power is off
                sys.exit(0)
            if chunk != b"\n":
                self._ctl_buf += chunk
                continue
            line = self._ctl_buf
            self._ctl_buf = b""
            try:
                self._control(json.loads(line), app)
            except Exception as e:
                self._send({"error": str(e)})

    def _control(self, msg, app):
        op = msg.get("op")
        seq = msg.get("seq")
        if op == "close":
            ok = self.close_us(msg["row"], msg["col"], msg["us"], msg.get("delay_us", 0))
            self._send({"seq": seq, "ok": ok})
        elif op == "pulses":
            # a whole pattern against one board timestamp: [row, col, delay_us, us]
            now = self.ticks_us()
            ok = True
            for row, col, delay, length in msg["pulses"]:
                on = (now + delay) & _MASK
                ok = self.model.close(row, col, on, (on + length) & _MASK) and ok
            self._send({"seq": seq, "ok": ok})
        elif op == "button":
            self._held[BUTTONS.index(msg["name"])] = (self.ticks_ms() + msg["ms"]) & _MASK or 1
            self._send({"seq": seq, "ok": True})
        elif op == "frame":
            self._send({"seq": seq, "frame": hexlify(self.frame).decode()})
        elif op == "crash":
            self.crash = True
            self._send({"seq": seq, "ok": True})
        elif op == "flash":
            self.flash_full = bool(msg["full"])
            self._send({"seq": seq, "ok": True})
        elif op == "stats":
            self._send({"seq": seq, "stats": app.stats()})
        else:
            self._send({"seq": seq, "error": "unknown op"})

    # The watchdog as on the ESP32 (esp32.py): armed once, fed from a timer
    # only while the loop checks in, and fed unconditionally once the loop
    # has stopped on purpose. The simulator's `machine` gives WDT and Timer
    # the ESP32 port's semantics (host/hapenny/sim/runtime/machine.py);
    # elsewhere (a bare unix port) there is no watchdog.
    def start_watchdog(self, timeout_ms=8000):
        try:
            import machine

            self._wdt = machine.WDT(timeout=timeout_ms)
            self._run_timers = machine._run_timers
        except (ImportError, AttributeError):
            return
        self._last_loop = time.ticks_ms()
        self._timer = machine.Timer(0)
        self._timer.init(period=1000, mode=machine.Timer.PERIODIC, callback=self._tick)

    def _tick(self, _t):
        if self._free_run or time.ticks_diff(time.ticks_ms(), self._last_loop) < 3000:
            self._wdt.feed()

    def feed(self):
        self._last_loop = time.ticks_ms()
        if self._run_timers is not None:
            self._run_timers()  # scheduled callbacks run between the loop's passes, as on the chip

    def stopped(self):
        self._free_run = True

    def serial_raw(self, on):
        """0x03 as data (on) or as KeyboardInterrupt, like micropython.kbd_intr
        on the ESP32. The simulator turns 0x03 into SIGINT, and the unix port
        dies of SIGINT once kbd_intr(-1) is set, so the simulator is told
        instead and passes 0x03 through as a byte."""
        if self._ctl_out:
            self._send({"kbd": -1 if on else 3})

    def reset(self):
        sys.exit(RESET_EXIT)

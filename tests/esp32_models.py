"""Models of what firmware/shove/boards/esp32.py talks to, for running that
very file under CPython: the classic ESP32's GPIO registers with the matrix's
electricity behind them, `machine` (Pin, WDT, Timer, reset causes), `neopixel`
and the `time` ticks, all on one simulated clock.

Electricity of a column: a node of capacitance C (the ribbon and the pin)
pulled up to 3.3 V through the pin's ~45 kOhm; a closed crossing on a driven
row joins it to ground through the contact's resistance. Its voltage moves
exponentially towards the target with the RC of whichever path is active;
it reads high above 0.75 Vdd, low below 0.25 Vdd and keeps its last reading
in between (the ESP32 datasheet's V_IH / V_IL)."""
import builtins
import importlib.util
import math
import sys
import types
from contextlib import contextmanager

from mphelp import FIRMWARE

# the firmware modules esp32.py imports, loaded before the models stand in for `os` and `time`
from shove import chip, pacing, safeboot, store  # noqa: F401,E402
from shove.boards import matrix_model  # noqa: F401,E402

OUT_W1TS, OUT_W1TC, OUT1_W1TS, OUT1_W1TC, IN, IN1 = (0x3FF44008, 0x3FF4400C, 0x3FF44014, 0x3FF44018,
                                                      0x3FF4403C, 0x3FF44040)
# Each chip's GPIO registers (its TRM's register summary; ESP-IDF's soc/<chip> gpio_reg.h,
# reg_base.h), typed again here from those sources, not taken from the firmware: the
# registers a scan may touch, by name. The C3 has one bank (GPIO 0-21): no OUT1/IN1.
REGISTERS = {
    "esp32": {"OUT_W1TS": 0x3FF44008, "OUT_W1TC": 0x3FF4400C, "OUT1_W1TS": 0x3FF44014, "OUT1_W1TC": 0x3FF44018,
              "IN": 0x3FF4403C, "IN1": 0x3FF44040},
    "esp32s3": {"OUT_W1TS": 0x60004008, "OUT_W1TC": 0x6000400C, "OUT1_W1TS": 0x60004014, "OUT1_W1TC": 0x60004018,
                "IN": 0x6000403C, "IN1": 0x60004040},
    "esp32c3": {"OUT_W1TS": 0x60004008, "OUT_W1TC": 0x6000400C, "IN": 0x6000403C},
}
# machine.Pin's pins on each stock image (ports/esp32/machine_pin.h): the classic chip
# without PSRAM; the S3 with its USB console (no 19/20) and quad PSRAM (no 26); the C3
# with its USB-Serial/JTAG console (no 14-19).
PINS = {"esp32": set(range(0, 40)) - {20, 24, 28, 29, 30, 31},
        "esp32s3": set(range(0, 49)) - {19, 20, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
        "esp32c3": set(range(0, 22)) - {14, 15, 16, 17, 18, 19}}
NAMES = {"esp32": "Generic ESP32 module with ESP32", "esp32s3": "Generic ESP32S3 module with ESP32-S3",
         "esp32c3": "ESP32C3 module with ESP32-C3"}
VDD = 3.3


class Clock:
    def __init__(self, ns=0):
        self.ns = ns

    def us(self):
        return self.ns // 1000

    def advance_ms(self, ms):
        self.ns += int(ms * 1_000_000)


class Gpio:
    """GPIO registers of a chip (classic ESP32, ESP32-S3, ESP32-C3) with a switch matrix wired to them."""

    def __init__(self, clock, rows, cols, pull_ohm=45_000, cap_f=150e-12, contact_ohm=2_000, access_ns=125,
                 chip="esp32"):
        self.regs = {a: n for n, a in REGISTERS[chip].items()}
        self.clock = clock
        self.rows = list(rows)
        self.cols = list(cols)
        self.pull = pull_ohm
        self.cap = cap_f
        self.contact = contact_ohm
        self.access_ns = access_ns
        self.out = (1 << 64) - 1  # open-drain outputs: 1 = released
        self.closed = set()  # (row index, col index)
        self.v = {c: VDD for c in self.cols}
        self.level = {c: 1 for c in self.cols}
        self.t = clock.ns
        self.accesses = 0
        self.faults = []
        self.fell = []  # columns whose level went from high to low (a falling-edge interrupt), in order

    def _target(self, c):
        ci = self.cols.index(c)
        driven = [ri for ri, r in enumerate(self.rows) if not (self.out >> r) & 1 and (ri, ci) in self.closed]
        if driven:  # pulled down through the contact(s) against the pull-up
            rc = self.contact / len(driven)
            return VDD * rc / (rc + self.pull), (rc * self.pull / (rc + self.pull)) * self.cap
        return VDD, self.pull * self.cap

    def _settle_to(self, now):
        dt = (now - self.t) * 1e-9
        if dt > 0:
            for c in self.cols:
                target, tau = self._target(c)
                self.v[c] = target + (self.v[c] - target) * math.exp(-dt / tau)
                if self.v[c] >= 0.75 * VDD:
                    self.level[c] = 1
                elif self.v[c] <= 0.25 * VDD:
                    if self.level[c]:
                        self.fell.append(c)
                    self.level[c] = 0
        self.t = now

    def access(self, addr, value=None):
        self.clock.ns += self.access_ns
        self.accesses += 1
        self._settle_to(self.clock.ns)
        reg = self.regs.get(addr)
        if reg is None:
            raise AssertionError("%s of 0x%08X: no GPIO register of this chip" % ("read" if value is None else "write", addr))
        if value is None:
            if reg not in ("IN", "IN1"):
                raise AssertionError("read of 0x%08X" % addr)
            word = 0
            base = 0 if reg == "IN" else 32
            for b in range(32):
                p = base + b
                bit = self.level[p] if p in self.level else (self.out >> p) & 1
                word |= bit << b
            return word
        value &= 0xFFFFFFFF
        if reg == "OUT_W1TS":
            self.out |= value
        elif reg == "OUT_W1TC":
            self.out &= ~value
        elif reg == "OUT1_W1TS":
            self.out |= value << 32
        elif reg == "OUT1_W1TC":
            self.out &= ~(value << 32)
        else:
            raise AssertionError("write of 0x%08X" % addr)
        return None

    def recovery_us(self):
        """Time a column takes to read high again after its row is released."""
        v0, _ = VDD * self.contact / (self.contact + self.pull), 0
        return self.pull * self.cap * math.log((VDD - v0) / (0.25 * VDD)) * 1e6


class Reg:
    def __init__(self, gpio, addr):
        self.gpio = gpio
        self.addr = addr

    def __getitem__(self, i):
        assert i == 0
        return self.gpio.access(self.addr)

    def __setitem__(self, i, v):
        assert i == 0
        self.gpio.access(self.addr, v)


class Pointers:
    """viper's ptr8/ptr16/ptr32 as CPython sees them: an int is a register
    address (ours must be GPIO registers), a buffer is indexed as it is."""

    def __init__(self):
        self.gpio = None

    def ptr(self, x):
        if isinstance(x, int):
            assert self.gpio is not None, "register access with no GPIO model"
            return Reg(self.gpio, x)
        return x


# ---- machine, neopixel, time -------------------------------------------------------------
class Machine(types.ModuleType):
    PWRON_RESET, HARD_RESET, WDT_RESET, DEEPSLEEP_RESET, SOFT_RESET = 1, 2, 3, 4, 5

    def __init__(self, clock, chip="esp32"):
        super().__init__("machine")
        self.clock = clock
        self.chip = chip
        self.hz = None  # what machine.freq() was set to
        self.cause = self.PWRON_RESET
        self.boot_low = False  # the BOOT button (GPIO 0) held
        self.timers = {}
        self.wdt = None  # (timeout_ms, last feed ns): armed, survives soft reset
        self.resets = []
        self.pins = {}
        self.wiring = None  # a test's electrical model for Pin.value(), see Pin
        m = self

        self.irqs = {}  # pin -> (handler, trigger): machine_pin.c's handler table

        class Pin:
            IN, OUT, OPEN_DRAIN = 1, 2, 7
            PULL_UP, PULL_DOWN = 1, 2
            IRQ_RISING, IRQ_FALLING = 1, 2  # ESP-IDF's GPIO_INTR_POSEDGE, GPIO_INTR_NEGEDGE

            def irq(self, handler=None, trigger=3):
                if handler is None:  # machine_pin.c: no handler, no interrupt
                    m.irqs.pop(self.pin, None)
                else:
                    m.irqs[self.pin] = (handler, trigger)

            def __init__(self, pin, mode=-1, pull=-1, value=None):
                if pin not in PINS[m.chip]:
                    raise ValueError("invalid pin")
                self.pin = pin
                self.mode, self.pull, self.out = -1, -1, 1
                self.init(mode, pull, value)
                m.pins[pin] = self

            def init(self, mode=-1, pull=-1, value=None):
                if mode in (Pin.OUT, Pin.OPEN_DRAIN) and self.pin >= 34 and m.chip == "esp32":
                    raise ValueError("pin can only be input")
                if mode != -1:
                    self.mode = mode
                if pull != -1:
                    self.pull = pull
                if value is not None:
                    self.out = value

            def value(self):
                if self.pin == 0:
                    return 0 if m.boot_low else 1
                if m.wiring is not None:  # the pins driven low -> the pins that read low
                    driven = {p for p, o in m.pins.items()
                              if o.mode in (Pin.OUT, Pin.OPEN_DRAIN) and o.out == 0}
                    return 0 if self.pin in m.wiring(driven) else 1
                return 1

        class WDT:
            def __init__(self, id=0, timeout=5000):
                m.wdt = [timeout, m.clock.ns]

            def feed(self):
                m.wdt[1] = m.clock.ns

        class Timer:
            ONE_SHOT, PERIODIC = 0, 1

            def __new__(cls, id):
                if id not in m.timers:  # Timer(id) returns the existing timer (machine_timer.c)
                    t = super().__new__(cls)
                    t.id, t.period, t.callback, t.next = id, 0, None, None
                    m.timers[id] = t
                return m.timers[id]

            def init(self, period=1000, mode=1, callback=None):
                self.period, self.callback = period, callback
                self.next = m.clock.ns + period * 1_000_000

            def deinit(self):
                self.callback = None

        self.rtc_memory = b""  # the RTC's user memory: kept through a reset (ports/esp32/machine_rtc.c)

        class RTC:
            def memory(self, data=None):
                if data is None:
                    return m.rtc_memory
                m.rtc_memory = bytes(data)

        self.Pin, self.WDT, self.Timer, self.RTC = Pin, WDT, Timer, RTC

    def run_edges(self, gpio):
        """The GPIO interrupts since the last look, as the port delivers them:
        each falling edge on a pin with a falling-edge handler schedules that
        handler, and the VM runs it at the next jump in bytecode (here: now).
        Returns how many handlers ran."""
        gpio._settle_to(self.clock.ns)
        fell, gpio.fell = gpio.fell, []
        n = 0
        for c in fell:
            h = self.irqs.get(c)
            if h is not None and h[1] & self.Pin.IRQ_FALLING:
                h[0](self.pins[c])
                n += 1
        return n

    def reset_cause(self):
        return self.cause

    def freq(self, hz=None):
        top = 160_000_000 if self.chip == "esp32c3" else 240_000_000  # ports/esp32/modmachine.c refuses more
        if hz is not None:
            if hz > top:
                raise ValueError("frequency must be 20MHz, 40MHz, 80Mhz, 160MHz or 240MHz")
            self.hz = hz
        return self.hz or top

    def reset(self):
        self.resets.append(self.clock.ns)
        raise SystemExit("machine.reset()")

    def soft_reset(self):
        """The port's soft reset: timers deinitialised, the watchdog left armed."""
        self.timers.clear()
        self.cause = self.SOFT_RESET

    def run_for(self, ms, loop=None, every_ms=10):
        """Let time pass, firing timer callbacks when due; `loop()` is called
        every `every_ms` (the game loop's check-ins). Returns the time (ms) the
        watchdog expired, or None."""
        end = self.clock.ns + int(ms * 1e6)
        while self.clock.ns < end:
            self.clock.ns += int(every_ms * 1e6)
            for t in list(self.timers.values()):
                if t.callback is not None and t.next is not None and self.clock.ns >= t.next:
                    t.next += t.period * 1_000_000
                    t.callback(t)
            if loop is not None:
                loop()
            if self.wdt is not None and self.clock.ns - self.wdt[1] > self.wdt[0] * 1_000_000:
                return self.clock.ns / 1e6
        return None


class NeoPixel:
    def __init__(self, pin, n):
        self.pin, self.n = pin, n
        self.buf = bytearray(3 * n)
        self.wire = []

    def write(self):
        self.wire.append(bytes(self.buf))


def time_module(clock):
    t = types.ModuleType("time")
    t.ticks_us = lambda: (clock.ns // 1000) & 0x3FFFFFFF
    t.ticks_ms = lambda: (clock.ns // 1_000_000) & 0x3FFFFFFF

    def ticks_diff(a, b):
        d = (a - b) & 0x3FFFFFFF
        return d - 0x40000000 if d >= 0x20000000 else d

    t.ticks_diff = ticks_diff
    t.ticks_add = lambda a, d: (a + d) & 0x3FFFFFFF

    def sleep_us(us):
        clock.ns += us * 1000  # the model's time passes; nothing else happens meanwhile

    t.sleep_us = sleep_us
    return t


def micropython_module():
    m = types.ModuleType("micropython")
    m.viper = m.native = lambda f: f  # the body runs as Python against the register model
    m.const = lambda x: x
    return m


class Uname:
    def __init__(self, machine):
        self.machine = machine


@contextmanager
def esp32(clock=None, chip="Generic ESP32 module with ESP32", kind="esp32"):
    """Load firmware/shove/boards/esp32.py against the models. Yields
    (module, machine model, pointers); set pointers.gpio to a Gpio model.
    `chip`: os.uname().machine; `kind`: the chip whose pins the machine model has."""
    clock = clock or Clock(10**9)
    mach = Machine(clock, kind)
    ptrs = Pointers()
    neo = types.ModuleType("neopixel")
    neo.NeoPixel = NeoPixel
    fake_os = types.ModuleType("os")
    fake_os.uname = lambda: Uname(chip)
    saved = {k: sys.modules.get(k) for k in ("machine", "micropython", "neopixel", "time", "os")}
    saved_b = {k: getattr(builtins, k, None) for k in ("ptr8", "ptr16", "ptr32")}
    for k in ("ptr8", "ptr16", "ptr32"):
        setattr(builtins, k, ptrs.ptr)
    sys.modules.update({"machine": mach, "micropython": micropython_module(), "neopixel": neo,
                        "time": time_module(clock), "os": fake_os})
    try:
        spec = importlib.util.spec_from_file_location("esp32_under_test", FIRMWARE / "shove/boards/esp32.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        # the board's making (imported by Board() as shove.boards.esp32_setup), against the same models
        spec = importlib.util.spec_from_file_location("esp32_setup_under_test", FIRMWARE / "shove/boards/esp32_setup.py")
        setup = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(setup)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    import shove.boards

    # the chip's radio: the virtual board's model of the ESP32 port's `network`, with nothing
    # in the air (a board without a network set opens its set-up access point, as on the chip)
    # (from the installed package: the mutation run's copy of the tree has no host/)
    from hapenny.sim.board import RUNTIME

    spec = importlib.util.spec_from_file_location("network", RUNTIME / "network.py")
    net = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net)
    net._clock = lambda: (clock.ns // 1_000_000) & 0x3FFFFFFF  # the chip's ticks_ms
    had = {k: sys.modules.get(k) for k in ("neopixel", "shove.boards.esp32_setup", "network")}
    had_attr = getattr(shove.boards, "esp32_setup", None)
    sys.modules["neopixel"] = neo  # imported when a Board is made
    sys.modules["network"] = net
    sys.modules["shove.boards.esp32_setup"] = setup
    shove.boards.esp32_setup = setup
    try:
        yield mod, mach, ptrs
    finally:
        for k, v in had.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        if had_attr is None:
            del shove.boards.esp32_setup
        else:
            shove.boards.esp32_setup = had_attr
        for k, v in saved_b.items():
            if v is None:
                delattr(builtins, k)
            else:
                setattr(builtins, k, v)

# The ESP32 board's making (boards/esp32.py's Board) and the rest of its
# once-only work: the chip's check, the pins and the strip set up, the
# watchdog started, and the doctor's line test. Start-up and bring-up code,
# loaded for it and let go after (as the virtual board's virtual_setup.py):
# on a stock image a module's bytecode sits in the heap while it is loaded
# (docs/performance.md, the heap). The chip's check (`chip`) is imported here
# for the same reason and let go with it.
import array
import os
import time

import machine
from machine import Pin

from shove import FEED_MS, WDT_ARMED, WDT_MS, release


def check_chip():
    """Refuse any chip but the classic ESP32 before a register is touched."""
    from shove import chip

    try:
        why = chip.problem(os.uname().machine)
        if why:
            raise chip.ChipError(why)
    finally:
        release("chip")


def col_masks(pins):
    """The columns' bits in GPIO_IN (pins 0-31) and GPIO_IN1 (32-39)."""
    m0 = 0
    m1 = 0
    for p in pins:
        if p < 32:
            m0 |= 1 << p
        else:
            m1 |= 1 << (p - 32)
    return m0, m1


def build(board, profile, reads_per_us):
    """Board.__init__'s work; reads_per_us: esp32.py's READS_PER_US."""
    check_chip()
    board.name = profile.name
    board.rows = profile.rows
    board.cols = profile.cols
    machine.freq(240000000)
    board._row_pins = bytearray(profile.row_pins)
    board._col_pins = bytearray(profile.col_pins)
    board._colmask = array.array("I", col_masks(profile.col_pins))
    board._settle = profile.timing["settle_us"] * reads_per_us  # reads between driving a row and reading
    board._keep = []
    matrix_pins(board)
    board.late_rows = 0  # rows whose columns did not recover in time (a fault on the ribbon)
    # `press` injects closures at the scanner's input through the virtual board's model, loaded by the
    # first press (esp32.py's Board.press)
    board._full = (1 << board.cols) - 1
    board._buttons = []
    for name in ("next", "undo", "new"):
        pin = profile.buttons.get(name)
        pull = None if pin is None or pin >= 34 else Pin.PULL_UP
        board._buttons.append(Pin(pin, Pin.IN, pull) if pin is not None else None)
    board.strip_count = 0
    board._np = None
    led = profile.leds
    if led["pin"] >= 0:
        import neopixel

        board.strip_count = led["beds"] * 2 * led["per_side"] + led["status"]
        board._np = neopixel.NeoPixel(Pin(led["pin"], Pin.OUT), board.strip_count)
    board._wdt = None
    board._last_loop = time.ticks_ms()
    board._free_run = False
    board._timer = None
    board._spoll = None  # the console's poll, made on first use
    board._b1 = bytearray(1)
    board.woke = 0  # why scan_idle stopped early: WOKE_INPUT, WOKE_TIME (the loop clears it)
    board._log = None  # the journal file kept open for appends
    board._log_path = None


def matrix_pins(board):
    """The scan's pin set-up: rows open drain (released high), columns pulled up."""
    board._keep = [Pin(p, Pin.OPEN_DRAIN, value=1) for p in board._row_pins]
    # input-only pins have no pull-up to switch on (the profile says a resistor is
    # fitted); pull=None switches both pulls off (ports/esp32/machine_pin.c)
    board._keep += [Pin(p, Pin.IN, None if p >= 34 else Pin.PULL_UP) for p in board._col_pins]


def line_test(board):
    """The doctor's line test: every matrix line an input with its
    pull-up; read which are low with none driven (a short to ground),
    then drive each low in turn and read which follow it (a short
    between lines, or a crossing closed). Input-only pins (34-39)
    cannot drive: their entry is 0. The scan's pin set-up comes back."""
    pins = bytes(board._row_pins) + bytes(board._col_pins)
    lines = [Pin(p, Pin.IN, None if p >= 34 else Pin.PULL_UP) for p in pins]

    def low():
        time.sleep_us(200)  # the ribbon's capacitance through a ~45 kOhm pull-up
        m = 0
        for i in range(len(lines)):
            if not lines[i].value():
                m |= 1 << i
        return m

    out = [low()]
    for i in range(len(lines)):
        if pins[i] >= 34:
            out.append(0)
            continue
        lines[i].init(Pin.OUT, value=0)
        out.append(low() & ~(1 << i))
        lines[i].init(Pin.IN, Pin.PULL_UP)
    matrix_pins(board)
    return out


def start_watchdog(board, timeout_ms=None):
    """Armed once at the loop's start, fed from Timer(0) while the loop checks in (esp32.py's _tick)."""
    board._last_loop = time.ticks_ms()
    machine.RTC().memory(WDT_ARMED)  # the flag boot.py reads after a soft reset
    board._wdt = machine.WDT(timeout=timeout_ms or WDT_MS)
    board._timer = machine.Timer(0)
    board._timer.init(period=FEED_MS, mode=machine.Timer.PERIODIC, callback=board._tick)

# The ESP32 board's making (boards/esp32.py's Board) and the rest of its
# once-only work: the chip's check, the pins and the strip set up, the
# watchdog started, and the doctor's line test. Start-up and bring-up code,
# loaded for it and let go after (as the virtual board's virtual_setup.py):
# on a stock image a module's bytecode sits in the heap while it is loaded
# (docs/performance.md, the heap). The chip's check (`chip`) is imported here
# for the same reason and let go with it.
import array
import os
import sys
import time

import machine
from machine import Pin

from shove import FEED_MS, WDT_ARMED, WDT_MS, release


# The GPIO registers the scan reads and writes, per chip. Each chip's
# Technical Reference Manual, "IO MUX and GPIO Matrix", register summary,
# checked against ESP-IDF's components/soc/<chip>/.../soc/gpio_reg.h and
# reg_base.h (DR_REG_GPIO_BASE): the same offsets from two bases.
#   GPIO_OUT_W1TS +0x08, GPIO_OUT_W1TC +0x0C     pins 0-31 released / driven low
#   GPIO_OUT1_W1TS +0x14, GPIO_OUT1_W1TC +0x18   pins 32 and up
#   GPIO_IN +0x3C, GPIO_IN1 +0x40                pin levels 0-31, 32 and up
# Classic ESP32: base 0x3FF44000 (GPIO 0-39). ESP32-S3: 0x60004000 (GPIO
# 0-48: OUT1/IN1 hold 32-53). ESP32-C3: 0x60004000 with GPIO 0-21 only and
# no OUT1/IN1 registers (0x60004040 is none of its), so its OUT1 and IN1
# entries name OUT and IN again: no row is over 31 to write them, and IN
# read a second time holds no column bit of IN1's mask (0).
# The console on the board's USB port, as the stock image has it: UART0 behind
# a USB bridge on the classic chip; on the S3 TinyUSB's CDC on the native USB
# (ports/esp32/mpconfigport.h: MICROPY_HW_ENABLE_USBDEV where the chip has USB
# OTG), on the C3 the USB-Serial/JTAG (usb_serial_jtag.c); both keep the UART
# REPL on UART0 as well (MICROPY_HW_ENABLE_UART_REPL in their mpconfigboard.h).
# The fastest clock each runs at (the C3 refuses more than 160 MHz: machine.freq's ValueError).
GPIO_BASE = {"esp32": 0x3FF44000, "esp32s3": 0x60004000, "esp32c3": 0x60004000}
OUT_W1TS, OUT_W1TC, OUT1_W1TS, OUT1_W1TC, IN, IN1 = 0x08, 0x0C, 0x14, 0x18, 0x3C, 0x40


def check_chip():
    """Refuse a chip whose GPIO registers the scan does not know, before a
    register is touched; the chip's kind ("esp32", "esp32s3", "esp32c3")."""
    from shove import chip

    try:
        name = os.uname().machine
        why = chip.problem(name)
        if why:
            raise chip.ChipError(why)
        return chip.kind(name)
    finally:
        release("chip")


def col_masks(pins):
    """The columns' bits in GPIO_IN (pins 0-31) and GPIO_IN1 (32 and up)."""
    m0 = 0
    m1 = 0
    for p in pins:
        if p < 32:
            m0 |= 1 << p
        else:
            m1 |= 1 << (p - 32)
    return m0, m1


def gpio_io(kind, col_pins, bytecode=False):
    """The scan's `io` (esp32.py's _scan): the columns' masks, then the
    addresses of OUT_W1TS, OUT_W1TC, OUT1_W1TS, OUT1_W1TC, IN, IN1. For
    viper an array; for the bytecode build (`bytecode`) a list, whose
    integers are made once: an array makes one at every index, and the
    S3's and C3's addresses are long integers on 32 bits (a small int
    holds 31 bits), so each read of the matrix would allocate six."""
    base = GPIO_BASE[kind]
    one = kind == "esp32c3"  # one bank of 32: its OUT1/IN1 are OUT/IN again
    regs = (OUT_W1TS, OUT_W1TC, OUT_W1TS if one else OUT1_W1TS, OUT_W1TC if one else OUT1_W1TC, IN,
            IN if one else IN1)
    words = col_masks(col_pins) + tuple(base + r for r in regs)
    return list(words) if bytecode else array.array("I", words)


def pulls(kind):
    """The pins with no internal pull-up (a classic ESP32's 34-39); the S3's and C3's all have one."""
    return range(34, 40) if kind == "esp32" else ()


def build(board, profile, reads_per_us):
    """Board.__init__'s work; reads_per_us: esp32.py's READS_PER_US."""
    kind = board.chip = check_chip()
    board.console_kind = {"esp32": "uart", "esp32s3": "usb-cdc+uart", "esp32c3": "usb-serial-jtag+uart"}[kind]
    board.name = profile.name
    board.rows = profile.rows
    board.cols = profile.cols
    machine.freq({"esp32": 240000000, "esp32s3": 240000000, "esp32c3": 160000000}[kind])
    board._row_pins = bytearray(profile.row_pins)
    board._col_pins = bytearray(profile.col_pins)
    # the bytecode build's scan (esp32.py without viper) has loaded esp32_mem32 for its registers
    board._io = gpio_io(kind, profile.col_pins, "shove.boards.esp32_mem32" in sys.modules)
    board._no_pull = pulls(kind)
    board._settle = profile.timing["settle_us"] * reads_per_us  # reads between driving a row and reading
    board._keep = []
    matrix_pins(board)
    board.late_rows = 0  # rows whose columns did not recover in time (a fault on the ribbon)
    # `press` injects closures at the scanner's input through the virtual board's model, loaded by the
    # first press (esp32.py's Board.press)
    board._full = (1 << board.cols) - 1
    board.scanner = None  # the scanner a column's edge steps (Board.hooks)
    board.snap = array.array("H", bytes(2 * board.rows))  # that read's own snapshot
    board._buttons = []
    for name in ("next", "undo", "new"):
        pin = profile.buttons.get(name)
        pull = None if pin is None or pin in board._no_pull else Pin.PULL_UP
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
    board._keep += [Pin(p, Pin.IN, None if p in board._no_pull else Pin.PULL_UP) for p in board._col_pins]


def line_test(board):
    """The doctor's line test: every matrix line an input with its
    pull-up; read which are low with none driven (a short to ground),
    then drive each low in turn and read which follow it (a short
    between lines, or a crossing closed). Input-only pins (a classic
    ESP32's 34-39) cannot drive: their entry is 0. The scan's pin set-up comes back."""
    board.edges(False)  # the lines driven one by one must not set off a scan
    pins = bytes(board._row_pins) + bytes(board._col_pins)
    lines = [Pin(p, Pin.IN, None if p in board._no_pull else Pin.PULL_UP) for p in pins]

    def low():
        time.sleep_us(200)  # the ribbon's capacitance through a ~45 kOhm pull-up
        m = 0
        for i in range(len(lines)):
            if not lines[i].value():
                m |= 1 << i
        return m

    out = [low()]
    for i in range(len(lines)):
        if pins[i] in board._no_pull:  # input-only: cannot drive
            out.append(0)
            continue
        lines[i].init(Pin.OUT, value=0)
        out.append(low() & ~(1 << i))
        lines[i].init(Pin.IN, Pin.PULL_UP)
    matrix_pins(board)
    board.edges(True)
    return out


def start_watchdog(board, timeout_ms=None):
    """Armed once at the loop's start, fed from Timer(0) while the loop checks in (esp32.py's _tick)."""
    board._last_loop = time.ticks_ms()
    machine.RTC().memory(WDT_ARMED)  # the flag boot.py reads after a soft reset
    board._wdt = machine.WDT(timeout=timeout_ms or WDT_MS)
    board._timer = machine.Timer(0)
    board._timer.init(period=FEED_MS, mode=machine.Timer.PERIODIC, callback=board._tick)

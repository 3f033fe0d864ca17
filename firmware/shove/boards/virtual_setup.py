# The virtual board's making (boards/virtual.py's Board): its state, and the
# timing model picked once (its clock, console and flash); and its other
# once-only work, the watchdog's start and the doctor's line test. Start-up
# and bring-up code, loaded for each and let go after.
import os
import select
import sys
import time

from shove.boards.matrix_model import MatrixModel
from shove.boards.virtual_clock import Clock
from shove.boards.virtual_flash import Flash


def build(board, profile, esp32_scale, Serial):
    """Board.__init__'s work; Serial: the plain model's console class (boards/virtual.py)."""
    board.name = profile.name
    board.rows = profile.rows
    board.cols = profile.cols
    board.model = MatrixModel(board.rows, board.cols, slots=64)
    board.full = (1 << board.cols) - 1
    led = profile.leds
    board.strip_count = led["beds"] * 2 * led["per_side"] + led["status"]
    board.frame = bytes(3 * board.strip_count)
    board.strip_writes = 0
    board.held = [0, 0, 0]  # button i held until this tick (ms); 0 = up
    board.dead_buttons = []  # wiring faults (the control channel's `wiring`)
    board.strip_fault = None
    board.crash = False  # a test can make the scan loop raise once
    board.crash_mid = False  # ... or the service slice, with a line partly sent
    board.gap_max_us = 0  # the longest the matrix went unread (the bench's stats reset it) ...
    board.gap_quiet_max_us = 0  # ... of the stretches the OS did not interrupt, of those it did,
    board.gap_os_max_us = 0
    board.gap_flash_max_us = 0  # and the flash's longest busy time inside one (Board.stretch)
    board.last_read = 0  # board time of the last matrix read
    board.web_steps = None  # the web server's steps, timed once the test bench asks (virtual_bench.time_steps)
    board.doze_reads = 0  # reads a doze stood for (counted in the app's scans, not done)
    board.input_reads = 0  # idle reads made with a byte from the host on its way in or waiting
    board.woke = 0  # why scan_idle stopped early: WOKE_INPUT, WOKE_TIME (the loop clears it)
    board.scanner = None  # the loop's scanner, which the ESP32 model's edge interrupt steps (hooks) ...
    board._stats = None  # ... the loop's callbacks: its figures for the test bench ...
    board.quiet = None  # ... and whether nothing waits that the board cannot see
    board._served = False  # the loop has run a slice (scan_idle may serve the control channel for it)
    board._wdt = None
    board._run_timers = None
    board._timer_ms = None
    board._free_run = False
    board._last_loop = 0
    # the chip it is (the simulator's HAPENNY_CHIP) and the console the host finds on its
    # USB port: "uart" (a USB-UART bridge), "usb-serial-jtag" (the C3's), "usb-cdc" (the S3's native USB)
    board.chip = os.getenv("HAPENNY_CHIP") or "esp32"
    # a radio only where the simulator gave the board an air (the runtime's `network`): other
    # virtual boards never open the set-up access point. Its DNS answers on a port the
    # simulator picks (53 is privileged, and boards run side by side): 0, none
    board.radio = os.getenv("HAPENNY_AIR") is not None
    board.dns_port = int(os.getenv("HAPENNY_DNS_PORT") or 0)
    board.dns_host = "127.0.0.1"  # this computer's only: not a DNS for its whole network
    board.console_kind = os.getenv("HAPENNY_CONSOLE") or "uart"
    # the web server's address once on a network: this machine only, at the simulator's free port
    board.web_addr = ("127.0.0.1", int(os.getenv("HAPENNY_WEB_PORT") or 8080))
    # the timing model, picked once: its clock, console and flash
    poll = select.poll()
    poll.register(sys.stdin, select.POLLIN)
    if esp32_scale is None and os.getenv("HAPENNY_TIMING") == "esp32":
        from shove.boards.virtual_esp32 import ESP32_SCALE, chip_scale

        esp32_scale = chip_scale(int(os.getenv("HAPENNY_ESP32_SCALE") or ESP32_SCALE), board.chip)
    if esp32_scale:
        from shove.boards.virtual_esp32 import Esp32Clock, Esp32Flash
        from shove.boards.virtual_uart import Uart

        board.clock = Esp32Clock(esp32_scale, board)  # (with the board's reads and edge interrupt)
        board.serial = Uart(board.clock, poll, board.console_kind != "uart")
        board.flash = Esp32Flash(board.clock, board.serial)
    else:
        board.clock = Clock()
        board.serial = Serial(poll)
        board.flash = Flash(board.clock)
    board.flash.board = board
    board.uart_us_per_byte = board.serial.us_per_byte  # the app paces its output where there is a UART
    board.console = board.serial.console  # the console's byte stream, when the model has its own
    board.bench = None
    ctl = os.getenv("HAPENNY_SIM_CTL")  # "rfd,wfd" handed down by the simulator
    if ctl:
        from shove.boards.virtual_bench import Bench

        board.bench = Bench(board, ctl)  # (it takes the flash's reports too)
    # the parts' own methods, called straight
    board.ticks_us, board.ticks_ms = board.clock.ticks_us, board.clock.ticks_ms
    try:  # the runtime's `network` model keeps time by the board's clock (hapenny/sim/runtime/network.py)
        import machine

        machine.board_ticks_ms = board.ticks_ms
        machine.board_clock = board.clock  # (and runtime/vsocket.py keeps its model's bookkeeping off the chip's time)
    except (ImportError, AttributeError):  # the port's own machine (a test's), which takes no new names
        pass
    # buttons held as the board starts (the simulator's HAPENNY_HELD, names by commas): down
    # for the start's first seconds, as a finger on them while the board is plugged in
    for name in (os.getenv("HAPENNY_HELD") or "").split(","):
        if name in ("next", "undo", "new"):
            board.held[("next", "undo", "new").index(name)] = (board.ticks_ms() + 3000) & 0x3FFFFFFF or 1
    board.serial_ready, board.serial_take = board.serial.ready, board.serial.take
    fl = board.flash
    board.read_file, board.write_file, board.append_file, board.sync_write = (
        fl.read_file, fl.write_file, fl.append_file, fl.sync_write)


def start_watchdog(board, timeout_ms):
    """Armed once at the loop's start; fed from Timer(0) while the loop checks in (Board._tick)."""
    try:
        import machine

        board._run_timers = machine._run_timers
    except (ImportError, AttributeError):
        return
    from shove import WDT_ARMED

    machine.RTC().memory(WDT_ARMED)  # the flag boot.py reads after a soft reset, as on the chip
    board._wdt = machine.WDT(timeout=timeout_ms)
    board._last_loop = time.ticks_ms()
    board._timer = machine.Timer(0)
    board._timer.init(period=1000, mode=machine.Timer.PERIODIC, callback=board._tick)


def line_test(board):
    """The doctor's line test (see boards/esp32_setup.py): the lines reading
    low with none driven, then with each driven low in turn."""
    now = board.ticks_us()
    n = board.rows + board.cols
    return [board.model.line_levels(-1, now)] + [board.model.line_levels(i, now) & ~(1 << i) for i in range(n)]

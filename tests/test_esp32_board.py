"""firmware/shove/boards/esp32.py itself, run under CPython against models of
the chip (tests/esp32_models.py): the scan routine against the GPIO registers
and the ribbon's electricity, the strip's byte order, the watchdog's feeding,
the chip check."""
import array

import pytest

from esp32_models import Clock, Gpio, esp32
from shove import pacing, profile
from shove.scanner import WOKE_INPUT, WOKE_TIME

GENERIC = profile.Profile(profile.default_dict())


# a viper call's own register accesses, its reads apart, when every crossing reads open: the rows
# released (a write a bank) and the columns seen high (IN, IN1) first, the rows held low (a write a bank) after
CALL = 2 + 2 + 2


def _board(mod, ptrs, prof=GENERIC, chip="esp32", **electric):
    b = mod.Board(prof)
    ptrs.gpio = Gpio(_clock_of(mod), prof.row_pins, prof.col_pins, chip=chip, **electric)
    return b


def _clock_of(mod):
    return mod.machine.clock


def _scan(b):
    snap = array.array("H", bytes(2 * b.rows))
    b.read_matrix(snap)
    return list(snap)


def _closed(snap, cols):
    return {(r, c) for r, m in enumerate(snap) for c in range(cols) if m >> c & 1}


def test_every_crossing_reads_at_its_own_row_and_column():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        assert _scan(b) == [0] * 8
        for r in range(8):
            for c in range(8):
                ptrs.gpio.closed = {(r, c)}
                assert _closed(_scan(b), 8) == {(r, c)}, (r, c)
        assert b.late_rows == 0


def test_columns_on_both_input_registers_and_rows_on_both_output_registers():
    # rows on GPIO 32/33 (OUT1 registers), columns on 34-39 (GPIO_IN1) and 0-31 (GPIO_IN)
    d = profile.default_dict()
    d["matrix"] = {"rows": [32, 4, 33, 13], "cols": [34, 14, 35, 27, 36, 39]}
    d["map"] = []
    d["buttons"] = {}
    d["leds"] = {"pin": 5}
    d["pullups"] = [34, 35, 36, 39]
    prof = profile.Profile(d)
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs, prof)
        for r in range(4):
            for c in range(6):
                ptrs.gpio.closed = {(r, c), ((r + 1) % 4, (c + 2) % 6)}
                assert _closed(_scan(b), 6) == ptrs.gpio.closed
        # input-only columns get no internal pull-up (there is none); the others do
        assert mach.pins[34].pull is None and mach.pins[14].pull == mach.Pin.PULL_UP


@pytest.mark.parametrize("cap_pf", [50, 150, 250])
def test_a_closure_does_not_echo_into_the_next_row(cap_pf):
    # the ribbon's capacitance recharging through ~45 kOhm takes microseconds;
    # reading the next row sooner sees the last row's closure there too
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs, cap_f=cap_pf * 1e-12)
        for r in range(8):
            ptrs.gpio.closed = {(r, 3)}
            assert _closed(_scan(b), 8) == {(r, 3)}, (cap_pf, r)
        assert b.late_rows == 0


def test_the_model_shows_the_echo_when_the_scan_does_not_wait():
    # the same scan routine without the recovery wait (as before): the echo is real in the model
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        ptrs.gpio.closed = {(2, 5)}
        snap = array.array("H", bytes(16))
        mod._scan(b._row_pins, 8, b._col_pins, 8, b._io, snap, 2, 0, 1)
        assert {(2, 5), (3, 5)} <= _closed(snap, 8)
        assert ptrs.gpio.recovery_us() > 5  # why: 45 kOhm x 150 pF


def test_a_column_held_low_by_a_fault_is_bounded_and_counted():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        g = ptrs.gpio
        g.level[b._col_pins[1]] = 0
        g.v[b._col_pins[1]] = 0.0
        g.pull = 10**12  # a column shorted low: never recovers
        t0 = g.accesses
        _scan(b)
        assert b.late_rows == 8
        # (and once before the first row, all released: one read a turn, the first column low)
        assert g.accesses - t0 <= 8 * (mod._RECOVER + b._settle + 8) + 2 + mod._RECOVER + 1


def test_idle_scan_costs_a_few_register_accesses_a_row():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        _scan(b)
        t0 = ptrs.gpio.accesses
        _scan(b)
        assert ptrs.gpio.accesses - t0 == 8 * (b._settle + 2 + 2 + 2) + CALL


def test_an_idle_burst_reads_n_times_in_one_call_and_stops_at_a_closure():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        snap = array.array("H", bytes(16))
        t0 = ptrs.gpio.accesses
        assert b.scan_idle(snap, 16) == 16  # all open: every read done
        assert ptrs.gpio.accesses - t0 == 16 * 8 * (b._settle + 2 + 2 + 2) + CALL
        assert list(snap) == [0] * 8
        ptrs.gpio.closed = {(5, 2)}
        t0 = ptrs.gpio.accesses
        assert b.scan_idle(snap, 16) == 0  # the first read finds it: stop there, snap holds it
        assert _closed(snap, 8) == {(5, 2)}
        assert ptrs.gpio.accesses - t0 < 2 * 8 * (b._settle + 2 + 2 + 2 + mod._RECOVER)
        ptrs.gpio.closed = set()
        assert b._inject is mod._NoPress  # no model (its code) in the heap before the first press
        assert b.press(1, 6, 5)  # a closure injected through the model is read too
        assert b._inject is not mod._NoPress and not b._inject.idle
        assert b.scan_idle(snap, 16) == 0 and _closed(snap, 8) == {(1, 6)}
        assert b.late_rows == 0


def test_a_long_idle_burst_looks_at_the_console_buttons_and_clock_between_viper_calls():
    per_read = 8 * (GENERIC.timing["settle_us"] * 8 + 2 + 2 + 2)  # register accesses of one all-open read
    # (reads asked, what wants the loop, from which look on) -> (reads done, woke)
    table = [
        (64, None, 0, (64, 0)),  # nothing: four calls of 16, three looks between
        (64, "serial", 1, (16, WOKE_INPUT)),  # a byte waiting: the first look ends it
        (64, "button", 3, (48, WOKE_INPUT)),  # a button down at the third look
        (64, "clock", 2, (32, WOKE_TIME)),  # the tick asked for has come by the second look
        (20, "serial", 1, (16, WOKE_INPUT)),
        (16, "serial", 1, (16, 0)),  # one call's worth: no look at all
    ]
    for n, what, at, want in table:
        with esp32() as (mod, mach, ptrs):
            b = _board(mod, ptrs)
            look = [0]

            def serial():
                look[0] += 1  # the console is the first thing each look sees
                return what == "serial" and look[0] >= at
            b.serial_ready = serial
            b.buttons_down = lambda: what == "button" and look[0] >= at
            ticks_ms = mod.time.ticks_ms
            until = -1
            if what == "clock":
                until = 5000
                mod.time.ticks_ms = lambda: 5000 if look[0] >= at else 4999
            snap = array.array("H", bytes(16))
            t0 = ptrs.gpio.accesses
            try:
                k = b.scan_idle(snap, n, until)
            finally:
                mod.time.ticks_ms = ticks_ms
            assert (k, b.woke) == want, (n, what, k, b.woke)
            assert ptrs.gpio.accesses - t0 == k * per_read + k // 16 * CALL  # exactly the reads it reports
            assert list(snap) == [0] * 8


def test_a_quiet_burst_feeds_the_uart_between_viper_calls_and_reads_on():
    # A long reply needs a FIFO load every 11 ms: at a look where the FIFO
    # has sent everything, the burst writes the next load (the whole FIFO,
    # straight from the queue) and reads on, until the queue is all written
    per_read = 8 * (GENERIC.timing["settle_us"] * 8 + 2 + 2 + 2)
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        look = [0]

        def serial():
            look[0] += 1
            return False
        b.serial_ready = serial
        b.buttons_down = lambda: False
        writes = []

        class Out:
            def write(self, buf, off, n):
                writes.append((look[0], bytes(buf[off:off + n])))
                return n
        ticks_us = mod.time.ticks_us
        # each look is 10 ms after the one before: the FIFO (128 bytes, 11.1 ms)
        # has room again two looks after a load
        mod.time.ticks_us = lambda: 1000000 + 10000 * look[0]
        tx = pacing.TxQueue(Out(), None, b.uart_us_per_byte, b.ticks_us)
        tx.q = [bytearray(b"x" * 100 + bytes(range(200)))]
        tx.pos = 100
        tx.size = 200
        tx.end = 1010000
        snap = array.array("H", bytes(16))
        t0 = ptrs.gpio.accesses
        try:
            k = b.scan_idle(snap, 128, -1, tx)
        finally:
            mod.time.ticks_us = ticks_us
        assert (k, b.woke) == (128, 0)  # eight calls of 16, seven looks: the loads did not end it
        # from position 100: a load at the first look whose clock has reached
        # the FIFO's end, the next once that load is sent, the rest after it
        assert writes == [(1, bytes(range(128))), (3, bytes(range(128, 200)))]
        assert (tx.q, tx.pos, tx.size) == ([], 0, 0)  # all written: the queue starts afresh
        assert tx.end == 1000000 + 30000 + 72 * 87
        assert ptrs.gpio.accesses - t0 == k * per_read + k // 16 * CALL
        # nothing waiting: no write at all
        writes.clear()
        b.scan_idle(snap, 64)
        assert writes == []


def _rows_low(gpio, prof=GENERIC):
    """The rows the output registers drive low."""
    return [r for r, p in enumerate(prof.row_pins) if not gpio.out >> p & 1]


def _calm_scanner(b):
    from shove.scanner import Scanner

    sc = Scanner(b.rows, b.cols)
    b.read_matrix(sc.snap)
    sc.step(b.ticks_us())  # primed with everything open: calm
    assert sc.calm
    return sc


def _hooked_scanner(b):
    """A calm scanner handed to the board, as App.boot hands it its own."""
    sc = _calm_scanner(b)
    b.hooks(None, None, sc)
    return sc


def test_between_reads_every_row_is_held_low_and_a_closure_leaves_them_released():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        g = ptrs.gpio
        assert _rows_low(g) == []  # released from the start (open drain, high)
        _scan(b)
        assert _rows_low(g) == list(range(8))  # all open: held low until the next read
        g.closed = {(4, 1)}
        assert _closed(_scan(b), 8) == {(4, 1)}  # released first: read row by row as before
        assert _rows_low(g) == []  # a closure: released (no edges while the scanner votes)
        snap = array.array("H", bytes(16))
        g.closed = set()
        assert b.scan_idle(snap, 16) == 16 and _rows_low(g) == list(range(8))


def test_a_crossing_closing_between_reads_sets_off_its_columns_edge_and_is_read_at_once():
    # Table: (crossing, scanner state when the edge's handler runs) -> the handler's read steps it or not
    from shove import scanner

    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        g = ptrs.gpio
        sc = _calm_scanner(b)
        assert mach.irqs == {}  # none until the loop hands over its scanner
        b.hooks(None, None, sc)
        assert set(mach.irqs) == set(GENERIC.col_pins)  # every column, falling edge, nothing else
        assert {t for _, t in mach.irqs.values()} == {mach.Pin.IRQ_FALLING}
        scans = sc.scans
        g.closed = {(6, 2)}
        _clock_of(mod).ns += 2_000  # 2 us: the column falls through the contact
        assert mach.run_edges(g) == 1
        assert sc.state == scanner.WINDOW and sc.scans == scans + 1
        assert _closed(sc.snap, 8) == {(6, 2)}
        # its read drove row 6 alone: the column fell again, and that handler finds the scanner voting
        assert g.fell == [GENERIC.col_pins[2]]
        assert mach.run_edges(g) == 1 and sc.scans == scans + 1
        # the scanner votes now (not calm): an edge sets off no read
        _scan(b)  # the loop's read (a closure: rows released)
        g.closed = set()
        _scan(b)  # open: held low again
        scans = sc.scans
        assert mach.run_edges(g) == 1 and sc.scans == scans  # the loop's read of row 6 set one off
        g.closed = {(1, 1)}
        _clock_of(mod).ns += 2_000
        assert mach.run_edges(g) == 1 and sc.scans == scans
        # without the scanner (a board used outside the loop) there is no handler at all
        b.hooks(None, None)
        assert mach.irqs == {}


def test_a_burst_ends_at_the_next_look_once_an_edge_has_begun_a_dart():
    # the edge's handler runs in the burst's bytecode between two viper
    # calls; the burst must hand the loop the dart, not read on for a second
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        sc = _hooked_scanner(b)
        b.buttons_down = lambda: False
        looks = [0]

        def serial():  # the first thing a look sees: the edge fires before it
            looks[0] += 1
            if looks[0] == 2:
                ptrs.gpio.closed = {(0, 4)}
                _clock_of(mod).ns += 2_000
                mach.run_edges(ptrs.gpio)
                ptrs.gpio.closed = set()  # gone before the burst's next read
            return False
        b.serial_ready = serial
        k = b.scan_idle(sc.snap, 1000)
        # the edge came in the second look, after its look at the scanner: one call more (16
        # reads, some 0.3 ms of a 3 ms window), then the third look ends the burst, before the console
        assert k == 48 and b.woke == 0 and not sc.calm  # k < n and not woke: the loop steps the scanner next
        assert looks[0] == 2


def test_diags_recording_turns_the_edges_off_and_back_on():
    # `hapenny calibrate` records raw closures (diag.watch): they are no darts
    from shove import diag

    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        sc = _hooked_scanner(b)
        during = []

        def button(i):
            if i == 0 and not during:
                ptrs.gpio.closed = {(2, 3)}  # a contact while recording
                during.append(dict(mach.irqs))
            return False
        b.button = button
        b.service = lambda: None
        out = diag.watch(b, 8, 1)
        assert during == [{}]  # no handler while it records
        assert out["matrix"][0][1:] == [2, 1 << 3]  # recorded raw
        assert sc.calm and sc.scans == 1 and sc.qhead == sc.qtail  # the game's scanner untouched
        assert set(mach.irqs) == set(GENERIC.col_pins)  # on again after


def test_an_edge_whose_read_finds_the_contact_gone_changes_nothing():
    # the loop's read found a closure it has not stepped yet; the contact
    # opens before the edge's handler reads: what the loop holds stays
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        sc = _hooked_scanner(b)
        sc.snap[3] = 1 << 5  # the loop's unstepped read
        scans = sc.scans
        b._edge(mach.pins[GENERIC.col_pins[5]])  # a short contact, gone by the handler's read
        assert list(sc.snap) == [0, 0, 0, 1 << 5, 0, 0, 0, 0] and sc.scans == scans and sc.calm
        ptrs.gpio.closed = {(6, 0)}  # another closed meanwhile: added to it, then stepped
        b._edge(mach.pins[GENERIC.col_pins[0]])
        assert _closed(sc.snap, 8) == {(3, 5), (6, 0)} and sc.scans == scans + 1


def test_an_edge_during_a_step_does_not_step_again():
    # the handler runs at any jump in bytecode, the scanner's own bytecode
    # included (a window's start): step clears `calm` before anything else
    from shove import scanner

    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        sc = _hooked_scanner(b)
        ptrs.gpio.closed = {(2, 7)}
        seen = []
        start = sc._start_window

        def start_with_an_edge(now):
            seen.append(sc.calm)
            b._edge(mach.pins[GENERIC.col_pins[7]])  # as if it fell right here
            start(now)
        sc._start_window = start_with_an_edge
        b.read_matrix(sc.snap)
        sc.step(b.ticks_us())
        assert seen == [False] and sc.scans == 2 and sc.state == scanner.WINDOW


def test_the_edges_stop_for_the_repl_and_during_the_doctors_line_test():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        sc = _hooked_scanner(b)
        during = []
        ready = mach.Pin.value

        def value(pin):
            during.append(len(mach.irqs))
            return ready(pin)
        mach.Pin.value = value
        try:
            b.line_test()
        finally:
            mach.Pin.value = ready
        assert during and set(during) == {0}  # none while lines are driven one by one
        assert set(mach.irqs) == set(GENERIC.col_pins)  # and back on the new pins after
        b.stopped()  # main.py stopped on purpose: the REPL has the board
        assert mach.irqs == {}


def test_strip_bytes_go_out_in_grb_order():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        assert b.strip_count == 57
        frame = bytearray(3 * 57)
        frame[0:6] = bytes([10, 20, 30, 1, 2, 3])
        b.strip_write(frame)
        wire = b._np.wire[-1]
        assert wire[0:6] == bytes([20, 10, 30, 2, 1, 3])


def test_buttons_read_active_low_and_missing_ones_never_press():
    d = profile.default_dict()
    d["buttons"] = {"next": 0}
    d["pullups"] = []
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs, profile.Profile(d))
        assert [b.button(i) for i in range(3)] == [False, False, False]
        mach.boot_low = True
        assert [b.button(i) for i in range(3)] == [True, False, False]


def test_watchdog_is_fed_only_while_the_loop_checks_in():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        b.start_watchdog()
        assert mach.run_for(60_000, loop=b.feed) is None
        # the loop hangs: the timer stops feeding after _CHECK_IN_MS, the watchdog fires
        fired = mach.run_for(20_000)
        assert fired is not None
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        b.start_watchdog()
        mach.run_for(1000, loop=b.feed)
        b.stopped()  # the REPL has the port: fed for good
        assert mach.run_for(60_000) is None


def test_a_chip_the_scan_does_not_know_is_refused_before_any_register():
    from shove.chip import ChipError  # esp32.py imports it for the check only

    for name in ("Generic ESP32S2 module with ESP32-S2", "Generic ESP32C6 module with ESP32-C6",
                 "Generic ESP32H2 module with ESP32-H2", "Generic ESP32P4 module with ESP32-P4",
                 "Generic ESP32S2 module with ESP32S2"):
        with esp32(chip=name) as (mod, mach, ptrs):
            with pytest.raises(ChipError, match="runs on the classic ESP32, the ESP32-S3 and the ESP32-C3"):
                mod.Board(GENERIC)
            assert mach.pins == {} and ptrs.gpio is None and mach.hz is None
    with esp32(chip="Generic ESP32 module with SPIRAM with ESP32") as (mod, mach, ptrs):
        mod.Board(GENERIC)


S3 = {"chip": "esp32s3", "pullups": [], "matrix": {"rows": [4, 38, 47, 5], "cols": [39, 1, 40, 2, 48, 41]}, "leds": {"pin": 21},
      "buttons": {"next": 14}}
C3 = {"chip": "esp32c3", "pullups": [], "matrix": {"rows": [0, 1, 3, 4], "cols": [5, 6, 7, 10, 2]}, "leds": {"pin": 8},
      "buttons": {"next": 9}}


@pytest.mark.parametrize("kind,over,machine,hz", [
    ("esp32s3", S3, "Generic ESP32S3 module with ESP32-S3", 240_000_000),
    ("esp32s3", S3, "Generic ESP32S3 module with ESP32S3", 240_000_000),  # before v1.29.0's hyphen
    ("esp32c3", C3, "ESP32C3 module with ESP32-C3", 160_000_000),
    ("esp32c3", C3, "LOLIN_C3_MINI with ESP32-C3FH4", 160_000_000),
])
def test_the_s3_and_the_c3_scan_through_their_own_gpio_registers(kind, over, machine, hz):
    d = profile.default_dict()
    d.update(over)
    d["map"] = []
    prof = profile.Profile(d)
    with esp32(chip=machine, kind=kind) as (mod, mach, ptrs):
        b = _board(mod, ptrs, prof, chip=kind)  # the model refuses any address but this chip's registers
        assert b.chip == kind and mach.hz == hz
        assert _scan(b) == [0] * 4
        for r in range(4):
            for c in range(prof.cols):
                ptrs.gpio.closed = {(r, c), ((r + 1) % 4, (c + 2) % prof.cols)}
                assert _closed(_scan(b), prof.cols) == ptrs.gpio.closed, (r, c)
        assert b.late_rows == 0
        # every line has its internal pull-up: no input-only pins on these chips
        assert all(mach.pins[p].pull == mach.Pin.PULL_UP for p in prof.col_pins)
        assert b.line_test()[0] == 0


def test_the_classic_chips_registers_are_refused_on_an_s3_and_the_other_way_round():
    # the models answer only their own chip's registers: a scan given the wrong chip's fails
    d = profile.default_dict()
    d.update(S3)
    d["map"] = []
    prof = profile.Profile(d)
    with esp32(chip="Generic ESP32S3 module with ESP32-S3", kind="esp32s3") as (mod, mach, ptrs):
        b = _board(mod, ptrs, prof, chip="esp32")
        with pytest.raises(AssertionError, match="no GPIO register of this chip"):
            _scan(b)
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs, chip="esp32s3")
        with pytest.raises(AssertionError, match="no GPIO register of this chip"):
            _scan(b)


def _boot_py(mach):
    import sys

    from mphelp import FIRMWARE

    saved = sys.modules.get("machine")
    sys.modules["machine"] = mach
    try:
        exec(compile((FIRMWARE / "boot.py").read_text(), "boot.py", "exec"), {"__name__": "boot"})
    finally:
        sys.modules["machine"] = saved


def test_after_a_soft_reset_boot_py_feeds_until_the_games_checked_feeder_takes_over():
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        b.start_watchdog()
        mach.run_for(2000, loop=b.feed)
        mach.soft_reset()  # mpremote's first exec: timers gone, the watchdog still armed
        _boot_py(mach)
        assert mach.run_for(60_000) is None  # a REPL session of a minute is not cut off
        b2 = _board(mod, ptrs)  # Ctrl-D: main.py starts the game again
        b2.start_watchdog()
        assert len(mach.timers) == 1  # the same timer, its callback replaced
        assert mach.run_for(30_000, loop=b2.feed) is None
        assert mach.run_for(20_000) is not None  # the game hangs: the watchdog acts again


def test_the_doctors_line_test_finds_ground_and_a_short_and_gives_the_pins_back():
    from hapenny import doctor

    prof = GENERIC
    with esp32() as (mod, mach, ptrs):
        b = _board(mod, ptrs)
        grounded, pair = prof.col_pins[1], (prof.row_pins[1], prof.row_pins[2])

        def wiring(driven):
            low = set(driven) | {grounded}
            if low & set(pair):
                low |= set(pair)
            return low

        mach.wiring = wiring
        levels = b.line_test()
        pins = list(prof.row_pins) + list(prof.col_pins)
        bit = {p: 1 << i for i, p in enumerate(pins)}
        assert levels[0] == bit[grounded]
        assert levels[1 + 1] == bit[grounded] | bit[pair[1]]  # row 1 driven: row 2 follows
        assert levels[1 + 0] == bit[grounded]
        # input-only pins cannot drive: their entry is empty
        assert all(levels[1 + i] == 0 for i, p in enumerate(pins) if p >= 34)
        found = doctor.analyse_lines(pins, prof.rows, levels, [])
        texts = [t for ok, t, _ in found if not ok]
        assert len(texts) == 2
        assert "column 1 (GPIO %d) reads low" % grounded in texts[0]
        assert "row 1 (GPIO %d) and row 2 (GPIO %d)" % pair in texts[1]
        # the scan's set-up is back: rows open-drain released high, columns inputs
        for p in prof.row_pins:
            assert mach.pins[p].mode == mach.Pin.OPEN_DRAIN and mach.pins[p].out == 1
        for p in prof.col_pins:
            assert mach.pins[p].mode == mach.Pin.IN
        mach.wiring = None
        assert _scan(b) == [0] * 8


def _with_settle(us):
    d = profile.default_dict()
    d["timing"] = dict(d["timing"], settle_us=us)
    return profile.Profile(d)


# (contact, line capacitance, settle_us, the closure reads closed): the
# default (1 us) covers a 2 kOhm contact on 250 pF; a worn 5 kOhm contact
# on the same line needs 3; nothing settles in no time
SETTLE_CASES = [
    (2_000, 150, 1, True),
    (2_000, 250, 1, True),
    (5_000, 250, 1, False),
    (5_000, 250, 3, True),
    (2_000, 250, 0, False),
]


@pytest.mark.parametrize("contact_ohm,cap_pf,settle_us,reads", SETTLE_CASES)
def test_the_settle_time_is_the_profiles_in_microseconds(contact_ohm, cap_pf, settle_us, reads):
    with esp32() as (mod, mach, ptrs):
        prof = _with_settle(settle_us)
        b = _board(mod, ptrs, prof, contact_ohm=contact_ohm, cap_f=cap_pf * 1e-12)
        assert b._settle == settle_us * mod.READS_PER_US
        hits = 0
        for r in range(8):
            ptrs.gpio.closed = {(r, 4)}
            hits += _closed(_scan(b), 8) == {(r, 4)}
            ptrs.gpio.closed = set()
            _scan(b)
        assert (hits == 8) is reads and (hits == 0) is not reads, hits


def test_the_profile_refuses_a_settle_time_that_would_blind_the_scan():
    for us, ok in ((0, True), (1, True), (profile._SETTLE_MAX_US, True), (profile._SETTLE_MAX_US + 1, False), (-1, False)):
        try:
            _with_settle(us)
            assert ok, us
        except profile.ProfileError as e:
            assert not ok and "settle_us" in str(e), us

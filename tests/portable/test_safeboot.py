# Safe boot: the decision, the bad-start count, the health watch, the
# watchdog kept fed after a soft reset, and the start-up that ties them
# together, against a small model of `machine`. Both interpreters.
import os

import scratch

from shove import boards, safeboot, startup, store

P, H, W, D, S = (safeboot.PWRON_RESET, safeboot.HARD_RESET, safeboot.WDT_RESET, safeboot.DEEPSLEEP_RESET,
                 safeboot.SOFT_RESET)


def test_decide_table():
    L = safeboot.LIMIT
    # (cause, BOOT held, stored count, chip problem) -> (reason, count to store)
    table = (
        ((P, False, 0, None), (None, 0)),
        ((P, False, L + 5, None), (None, 0)),  # power-on: a fresh start
        ((D, False, 2, None), (None, 0)),
        ((H, False, 0, None), (None, 1)),
        ((W, False, 0, None), (None, 1)),
        ((W, False, L - 2, None), (None, L - 1)),
        ((W, False, L - 1, None), (safeboot.CRASHES, L)),
        ((H, False, L - 1, None), (safeboot.CRASHES, L)),
        ((S, False, L, None), (safeboot.CRASHES, L)),  # the REPL's soft reset keeps safe mode
        ((S, False, 1, None), (None, 1)),  # and changes no count
        ((P, True, 0, None), (safeboot.BUTTON, 0)),
        ((W, True, L + 1, None), (safeboot.BUTTON, 0)),
        ((S, True, 1, None), (safeboot.BUTTON, 0)),
        ((P, False, 0, "an S2"), (safeboot.CHIP, 0)),
        ((P, True, 0, "an S2"), (safeboot.CHIP, 0)),
    )
    for args, want in table:
        assert safeboot.decide(*args) == want, args
    # a reset asked for (marked in RTC memory) is no bad start; a mark cannot excuse a watchdog
    table = (
        ((H, False, L - 1), (None, L - 1)),
        ((H, False, L), (safeboot.CRASHES, L)),  # nor does it end safe mode
        ((W, False, L - 1), (safeboot.CRASHES, L)),
        ((P, False, 2), (None, 0)),
    )
    for args, want in table:
        assert safeboot.decide(*args, deliberate=True) == want, args


def test_parse_count_takes_anything():
    for data, n in ((None, 0), (b"", 0), (b"2", 2), (b"x", 0), (b"-4", 0), (b"99999", 0), (b"7\n", 7),
                    (b"999", 999), (b"1000", 0)):  # a count of a thousand or more is damage, not starts
        assert safeboot.parse_count(data) == n, data


def test_health_clears_once_after_the_loop_ran_long_enough():
    calls = []
    h = safeboot.Health(lambda: calls.append(1))
    wrap = 1 << 30
    t0 = wrap - 5000  # across the clock's wrap
    for ms in range(0, safeboot.HEALTHY_MS, 500):
        h.alive((t0 + ms) % wrap)
    assert calls == []
    h.alive((t0 + safeboot.HEALTHY_MS) % wrap)
    h.alive((t0 + safeboot.HEALTHY_MS + 9000) % wrap)
    h.cleared()
    assert calls == [1]
    # the first check-in at tick 0 (the clock reads 0 once a wrap): healthy
    # HEALTHY_MS after it, not a millisecond before
    calls = []
    h = safeboot.Health(lambda: calls.append(1))
    for ms in (0, 1, safeboot.HEALTHY_MS // 2, safeboot.HEALTHY_MS - 1):
        h.alive(ms)
    assert calls == []
    h.alive(safeboot.HEALTHY_MS)
    assert calls == [1]


# ---- a model of the ESP32 port's machine: what soft reset keeps and loses ----
class Machine:
    PWRON_RESET, HARD_RESET, WDT_RESET, DEEPSLEEP_RESET, SOFT_RESET = 1, 2, 3, 4, 5

    def __init__(self):
        self.now = 0
        self.cause = 1
        self.held = False
        self.wdt = None  # [timeout, last feed]
        self.timers = {}
        m = self

        class Pin:
            IN = 1
            PULL_UP = 1

            def __init__(self, pin, mode=-1, pull=-1):
                self.pin = pin

            def value(self):
                return 0 if (self.pin == 0 and m.held) else 1

        class WDT:
            def __init__(self, id=0, timeout=5000):
                m.wdt = [timeout, m.now]

            def feed(self):
                m.wdt[1] = m.now

        class Timer:
            PERIODIC = 1

            def __init__(self, id):
                self.id = id

            def init(self, period=0, mode=1, callback=None):
                m.timers[self.id] = [period, m.now + period, callback, self]

        class RTC:  # RTC_NOINIT memory: kept by reset(), lost by power_off()
            def memory(self, data=None):
                if data is None:
                    return m.rtc
                m.rtc = bytes(data)

        self.rtc = b""
        self.Pin = Pin
        self.WDT = WDT
        self.Timer = Timer
        self.RTC = RTC

    def reset_cause(self):
        return self.cause

    def soft_reset(self):
        self.timers = {}  # machine_timer_deinit_all(); the watchdog stays armed
        self.cause = self.SOFT_RESET

    def hard_reset(self, cause=2):
        """machine.reset(), a panic or the watchdog: the chip's watchdog and
        timers are gone, RTC memory is kept."""
        self.timers = {}
        self.wdt = None
        self.cause = cause

    def power_off(self):
        self.hard_reset(self.PWRON_RESET)
        self.rtc = b""

    def game_arms_watchdog(self):
        """What the game's start_watchdog does (boards/esp32_setup.py)."""
        self.RTC().memory(safeboot.WDT_ARMED)
        self.WDT(timeout=safeboot.WDT_MS)

    def run(self, ms):
        """Advance time; True if the watchdog would have reset the chip."""
        end = self.now + ms
        while self.now < end:
            self.now += 10
            for t in self.timers.values():
                if self.now >= t[1]:
                    t[1] += t[0]
                    t[2](t[3])
            if self.wdt and self.now - self.wdt[1] > self.wdt[0]:
                return True
        return False


def _read_firmware_file(name):
    for base in ("../../firmware", "firmware"):
        try:
            with open(base + "/" + name) as f:
                return f.read()
        except OSError:
            pass
    raise OSError("no firmware/" + name)


_SOURCES = {name: _read_firmware_file(name) for name in ("boot.py", "main.py")}  # before any chdir


def _firmware_file(name):
    return _SOURCES[name]


def _with_modules(mods, fn):
    """Run fn() with sys.modules entries standing in for `mods`."""
    import sys

    saved = {k: sys.modules.get(k) for k in mods}
    sys.modules.update(mods)
    try:
        return fn()
    finally:
        for k, v in saved.items():
            if v is None:
                del sys.modules[k]
            else:
                sys.modules[k] = v


BUILDER_LINE = "    pass  # start-up code of your own (Wi-Fi, ...) goes here: an error in it starts the board safe"


def _run_boot_py(machine, own_code=None):
    """firmware/boot.py as the port runs it, with `machine` the model and,
    where it says so, `own_code` (a builder's start-up code); -> its globals."""
    src = _firmware_file("boot.py")
    if own_code is not None:
        assert BUILDER_LINE in src
        src = src.replace(BUILDER_LINE, "    " + own_code)
    g = {"__name__": "__main__"}
    _with_modules({"machine": machine}, lambda: exec(src, g))
    return g


def test_a_soft_reset_leaves_the_watchdog_fed():
    m = Machine()
    m.game_arms_watchdog()  # armed by the game before the soft reset
    m.soft_reset()
    g = _run_boot_py(m)
    assert m.run(60000) is False
    assert m.wdt[0] == safeboot.WDT_MS and [t[0] for t in m.timers.values()] == [safeboot.FEED_MS]
    assert g["BOOT_ERROR"] is None


def test_boot_py_arms_nothing_on_a_real_start():
    for cause in (1, 2, 3, 4):
        for rtc in (b"", safeboot.RESET_MARK, safeboot.WDT_ARMED):
            m = Machine()
            m.cause = cause
            m.rtc = rtc
            g = _run_boot_py(m)
            assert m.wdt is None and m.timers == {} and g["BOOT_ERROR"] is None
            # the chip's reset disarmed the watchdog: its flag goes; a reset's mark stays for main.py
            assert m.rtc == (b"" if rtc == safeboot.WDT_ARMED else rtc), (cause, rtc)


def test_a_soft_reset_arms_no_watchdog_the_game_never_armed():
    """Safe mode, or a board whose game never started: mpremote's soft reset
    must not put the REPL session under a watchdog."""
    for rtc in (b"", b"something of a user's", safeboot.RESET_MARK):
        m = Machine()
        m.rtc = rtc
        m.soft_reset()
        g = _run_boot_py(m)
        assert m.wdt is None and m.timers == {} and g["BOOT_ERROR"] is None, rtc
        assert m.run(60000) is False


def test_the_watchdog_flag_follows_the_chip_through_resets():
    """The game arms it; soft resets keep it armed and fed (main.py's start
    leaves the flag); a reset of the chip disarms it and boot.py drops the
    flag, so the soft resets after it arm nothing; a power cut loses it."""
    assert ('b"%s"' % safeboot.WDT_ARMED.decode()) in _firmware_file("boot.py")  # the flag boot.py reads
    m = Machine()
    _run_boot_py(m)  # power on
    assert safeboot.take_mark(m) is False
    m.game_arms_watchdog()
    assert m.rtc == safeboot.WDT_ARMED
    for _ in range(3):  # mpremote, Ctrl-D at the REPL, ...
        m.soft_reset()
        _run_boot_py(m)
        assert safeboot.take_mark(m) is False and m.rtc == safeboot.WDT_ARMED  # main.py's start
        assert m.wdt is not None and m.run(30000) is False
    for cause in (m.HARD_RESET, m.WDT_RESET):
        m.game_arms_watchdog()
        m.hard_reset(cause)  # e.g. the board started safe after it: nothing arms the watchdog again
        _run_boot_py(m)
        assert m.rtc == b""
        m.soft_reset()
        _run_boot_py(m)
        assert m.wdt is None and m.timers == {}, cause
    # a reset asked for: the mark replaces the flag, main.py reads it and clears it
    m.game_arms_watchdog()
    m.RTC().memory(safeboot.RESET_MARK)  # as a board's reset(deliberate=True)
    m.hard_reset()
    _run_boot_py(m)
    assert safeboot.take_mark(m) is True and m.rtc == b""
    m.soft_reset()
    _run_boot_py(m)
    assert m.wdt is None
    m.game_arms_watchdog()
    m.power_off()
    _run_boot_py(m)
    m.soft_reset()
    _run_boot_py(m)
    assert m.wdt is None


def test_a_failing_boot_py_keeps_the_watchdog_fed_and_starts_safe():
    def body():
        m = Machine()
        m.game_arms_watchdog()
        m.soft_reset()
        g = _run_boot_py(m, "import no_such_wifi_module")  # a builder's code that fails
        assert "no_such_wifi_module" in g["BOOT_ERROR"]
        assert m.run(60000) is False  # fed all the same: no reset every 8 s
        m.cause = m.PWRON_RESET
        out = Out()
        ran = []
        reason = startup.start(m, lambda: ran.append(1), "esp32", "Generic ESP32 module with ESP32", out,
                               boot_error=g["BOOT_ERROR"])
        import json

        ev = json.loads(out.lines[0])
        assert (reason, ran, ev["safe"]) == (safeboot.BOOT_PY, [], "boot")
        assert "no_such_wifi_module" in ev["msg"] and "boot.py" in ev["msg"]

    _in_tmp(body)


def test_boot_py_feeds_from_the_timer_the_games_feeder_takes_over():
    m = Machine()
    m.game_arms_watchdog()
    m.soft_reset()
    _run_boot_py(m)
    seen = []
    m.Timer(0).init(period=1000, mode=1, callback=lambda _t: seen.append(m.now))
    assert m.run(20000) is True  # boot's feeder is gone: only the game's (which feeds nothing here) runs
    assert len(seen) >= 8


class _Micropython:
    def __init__(self, log):
        self.log = log

    def kbd_intr(self, c):
        self.log.append(("kbd_intr", c))


def test_main_py_makes_ctrl_c_data_before_it_loads_anything():
    log = []
    real = startup.main

    def model_main(boot_error=None):
        log.append(("startup", boot_error))

    startup.main = model_main
    try:
        g = {"__name__": "__main__", "BOOT_ERROR": "OSError: 5"}  # shared with boot.py
        _with_modules({"micropython": _Micropython(log)}, lambda: exec(_firmware_file("main.py"), g))
    finally:
        startup.main = real
    assert log == [("kbd_intr", -1), ("startup", "OSError: 5"), ("kbd_intr", 3)]


# ---- start-up: reads BOOT and the count, runs the game or stays safe -------
class Out:
    def __init__(self):
        self.lines = []

    def write(self, s):
        self.lines.append(s)


class FakeBoard:
    def __init__(self):
        self.now = 0
        self.fed = 0
        self.stops = 0

    def ticks_ms(self):
        return self.now

    def feed(self):
        self.fed += 1

    def stopped(self):
        self.stops += 1


def _in_tmp(fn):
    here = os.getcwd()
    os.chdir(scratch.folder("safeboot"))
    store.remove(safeboot.COUNT_FILE)
    try:
        fn()
    finally:
        store.remove(safeboot.COUNT_FILE)
        os.chdir(here)
        del boards.ON_OPEN[:]


def _start(m, chip="Generic ESP32 module with ESP32"):
    ran = []
    out = Out()
    reason = startup.start(m, lambda: ran.append(1), "esp32", chip, out)
    import json

    ev = json.loads(out.lines[0]) if out.lines else None
    return reason, bool(ran), ev


def test_three_bad_starts_then_safe_mode_and_a_power_cycle_clears_it():
    def body():
        m = Machine()
        for i in range(safeboot.LIMIT - 1):
            m.cause = m.WDT_RESET if i % 2 else m.HARD_RESET
            assert _start(m)[:2] == (None, True)
            del boards.ON_OPEN[:]
        m.cause = m.WDT_RESET
        reason, ran, ev = _start(m)
        assert (reason, ran) == (safeboot.CRASHES, False)
        assert ev["ev"] == "boot" and ev["safe"] == "crashes" and ev["boots"] == safeboot.LIMIT and ev["msg"]
        m.cause = m.SOFT_RESET  # the REPL's soft reset: still safe
        assert _start(m)[0] == safeboot.CRASHES
        m.cause = m.PWRON_RESET
        assert _start(m)[:2] == (None, True)
        assert store.read(safeboot.COUNT_FILE) is None

    _in_tmp(body)


def test_a_healthy_run_or_a_clean_stop_forgets_the_bad_starts():
    def body():
        m = Machine()
        m.cause = m.WDT_RESET
        assert _start(m)[1] is True
        assert store.read(safeboot.COUNT_FILE) == b"1"
        b = FakeBoard()
        for hook in boards.ON_OPEN:
            hook(b)
        for t in range(0, safeboot.HEALTHY_MS + 1000, 100):
            b.now = t
            b.feed()
        assert store.read(safeboot.COUNT_FILE) is None
        assert b.fed > 100
        del boards.ON_OPEN[:]
        assert _start(m)[1] is True  # another bad start: count 1 again
        b = FakeBoard()
        for hook in boards.ON_OPEN:
            hook(b)
        b.feed()
        b.stopped()  # the REPL hand-over
        assert store.read(safeboot.COUNT_FILE) is None and b.stops == 1

    _in_tmp(body)


def test_resets_asked_for_do_not_count_towards_safe_mode():
    def body():
        m = Machine()
        for _ in range(safeboot.LIMIT + 2):  # `reset` commands and deploys, seconds apart
            m.RTC().memory(safeboot.RESET_MARK)  # as a board's reset(deliberate=True)
            m.cause = m.HARD_RESET
            assert _start(m)[:2] == (None, True)
            assert m.rtc == b""  # the mark is read once
            assert startup.LAST == {"cause": m.HARD_RESET, "deliberate": True}
            del boards.ON_OPEN[:]
        assert store.read(safeboot.COUNT_FILE) is None
        for i in range(safeboot.LIMIT):  # the same resets unmarked: crashes
            m.cause = m.HARD_RESET
            reason = _start(m)[0]
            del boards.ON_OPEN[:]
        assert reason == safeboot.CRASHES and startup.LAST["deliberate"] is False

    _in_tmp(body)


def test_boot_button_and_a_foreign_chip_start_safe():
    def body():
        m = Machine()
        m.held = True
        reason, ran, ev = _start(m)
        assert (reason, ran, ev["safe"]) == ("button", False, "button")
        m.held = False
        reason, ran, ev = _start(m, "Generic ESP32S2 module with ESP32-S2")
        assert (reason, ran, ev["safe"]) == ("chip", False, "chip") and "ESP32-S2" in ev["msg"]
        assert "the classic ESP32, the ESP32-S3 and the ESP32-C3" in ev["msg"]

    _in_tmp(body)


def test_an_s3_or_c3_starts_with_a_profile_for_its_pins_and_says_so_otherwise():
    import json

    from shove import profile

    def body():
        m = Machine()
        for machine, chip in (("Generic ESP32S3 module with ESP32-S3", "esp32s3"),
                              ("ESP32C3 module with ESP32-C3", "esp32c3")):
            # no profile.json: the built-in one is a classic ESP32's, whose pins this chip has not
            reason, ran, ev = _start(m, machine)
            assert (reason, ran, ev["safe"]) == (safeboot.CHIP, False, "chip")
            assert ev["msg"].startswith("the board profile is for an ESP32, this board is an " + profile.NAMES[chip])
            d = profile.default_dict()
            d.update({"chip": chip, "matrix": {"rows": [0, 1, 3], "cols": [4, 5, 6]}, "map": [], "buttons": {},
                      "pullups": [], "leds": {"pin": 7}})
            store.write_atomic("profile.json", json.dumps(d).encode())
            try:
                assert _start(m, machine)[:2] == (None, True)
            finally:
                store.remove("profile.json")
            del boards.ON_OPEN[:]

    _in_tmp(body)


def test_the_virtual_board_counts_no_bad_starts():
    def body():
        m = Machine()
        m.cause = m.HARD_RESET
        store.write_atomic(safeboot.COUNT_FILE, b"7")
        ran = []
        assert startup.start(m, lambda: ran.append(1), "linux", "", Out()) is None
        assert ran == [1] and boards.ON_OPEN == []
        assert store.read(safeboot.COUNT_FILE) == b"7"  # untouched
        m.held = True
        assert startup.start(m, lambda: ran.append(1), "linux", "", Out()) == safeboot.BUTTON

    _in_tmp(body)


def _gpio_16_and_17_refused_until_the_profile_avoids_them(machine, words):
    """The built-in profile has rows on GPIO 16 and 17: the start is safe,
    saying why (`words`); with a profile that avoids them the game starts."""

    def body():
        m = Machine()
        reason, ran, ev = _start(m, machine)  # no profile.json: the built-in one
        assert (reason, ran, ev["safe"]) == (safeboot.CHIP, False, "chip")
        assert "GPIO 16 and 17" in ev["msg"] and all(w in ev["msg"] for w in words), ev
        import json

        from shove import profile

        d = profile.default_dict()
        d["matrix"]["rows"] = [4, 18, 19, 21, 22, 23, 25, 26]  # a profile that avoids them
        d["matrix"]["cols"] = [13, 14, 27, 32, 33, 15, 2, 12]
        store.write_atomic("profile.json", json.dumps(d).encode())
        try:
            assert _start(m, machine)[:2] == (None, True)
        finally:
            store.remove("profile.json")

    _in_tmp(body)


def test_a_spiram_image_with_rows_on_gpio_16_and_17_starts_safe_and_says_why():
    _gpio_16_and_17_refused_until_the_profile_avoids_them("Generic ESP32 module with SPIRAM with ESP32", ["WROOM"])


def test_a_pico_d4_with_rows_on_gpio_16_and_17_starts_safe_for_its_in_package_flash():
    _gpio_16_and_17_refused_until_the_profile_avoids_them("TinyPICO with ESP32-PICO-D4",
                                                           ["flash inside the chip's package"])


def test_a_port_without_rtc_memory_has_no_mark_and_every_reason_has_a_message():
    class NoRtc:  # a port whose machine module has no RTC
        pass

    class BadRtc:
        class RTC:
            def memory(self, *a):
                raise OSError(19)

    assert safeboot.take_mark(NoRtc()) is False and safeboot.take_mark(BadRtc()) is False
    for reason in (safeboot.BUTTON, safeboot.BOOT_PY, safeboot.CRASHES, safeboot.CHIP):
        assert "not started" in safeboot.message(reason, 7), reason
        # only the crashes' message tells the count of bad starts
        assert ("7" in safeboot.message(reason, 7)) == (reason == safeboot.CRASHES), reason

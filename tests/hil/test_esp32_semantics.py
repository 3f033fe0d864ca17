"""The virtual board keeps the ESP32 port's semantics where they bite a real
board: a watchdog that cannot be stopped and outlives a soft reset,
reset_cause(), and pins the chip has not or cannot drive. Real mpremote
drives it, as a bench tester would (virtual board only: these need the
simulator's view of resets)."""
import time

import pytest

from hapenny.connect import open_serial
from hapenny.link import Link, SerialTransport

from test_repl import mpremote


@pytest.fixture
def vboard(board):
    board.need_sim()
    yield board
    board.connect()  # back to main.py


def wait_quiet_for(seconds, sim, boots, wdt_resets):
    """Watch the board for `seconds` (the watchdog runs on the simulator's
    clock): no reset may happen."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert (sim.boots, sim.wdt_resets) == (boots, wdt_resets), "the board reset itself"
        time.sleep(0.1)


def test_watchdog_stays_fed_after_mpremote_soft_resets_the_board(vboard):
    b = vboard
    boots, resets = b.sim.boots, b.sim.wdt_resets
    assert mpremote(b, "exec", "print(6 * 7)").strip() == "42"  # a soft reset first
    # the game's watchdog (8 s) is still armed; nothing of main.py runs now
    wait_quiet_for(9.5, b.sim, boots + 1, resets)
    assert mpremote(b, "resume", "exec", "print('alive')").strip() == "alive"


WATCH = "import machine\nprint(machine.reset_cause(), machine.Timer(0).cb is not None, machine.RTC().memory())"


def test_a_soft_reset_arms_the_watchdog_only_if_the_game_had_armed_it(vboard):
    """mpremote soft-resets first: a game that armed the watchdog keeps it
    armed and fed from Timer(0); safe mode, or a start whose game never ran,
    leaves the REPL session without one, even after a reset of the chip
    that left the game's flag in RTC memory."""
    b = vboard
    b.new()
    assert b.sim.rtc_memory == b"hapenny:wdt" and b.sim.watchdog_ms == 8000
    assert mpremote(b, "exec", WATCH).split() == ["5", "True", "b'hapenny:wdt'"]
    b.connect()
    b.sim.boot_held = True  # every start from here on is safe mode
    try:
        b.sim.crash_loop()  # an error ends the game: machine.reset(), RTC memory kept
        assert b.wait("boot", timeout=20)["safe"] == "button"
        assert b.sim.watchdog_ms is None
        for _ in range(2):  # two sessions: the first one's process has ended before the second looks
            assert mpremote(b, "exec", WATCH).split() == ["5", "False", "b''"]
            assert b.sim.watchdog_ms is None
        ser = open_serial(b.port, timeout=0.1)
        try:
            b.sim.power_cut()  # and from a power-up
            assert Link(SerialTransport(ser)).wait_event("boot", timeout=20)["safe"] == "button"
        finally:
            ser.close()
        for _ in range(2):
            assert mpremote(b, "exec", WATCH).split() == ["5", "False", "b''"]
        assert b.sim.watchdog_ms is None and b.sim.wdt_resets == 0
    finally:
        b.sim.boot_held = False
    b.sim.power_cut()


def test_an_unfed_watchdog_resets_the_board_and_says_so(vboard):
    b = vboard
    resets = b.sim.wdt_resets
    mpremote(b, "exec", "import machine\nw = machine.WDT(timeout=300)")
    end = time.monotonic() + 10
    while b.sim.wdt_resets == resets:
        assert time.monotonic() < end, "the watchdog never fired"
        time.sleep(0.05)
    b.connect()  # main.py runs after a watchdog reset
    out = mpremote(b, "resume", "exec", "import machine\nprint(machine.reset_cause(), machine.WDT_RESET)")
    assert out.split() == ["3", "3"]


def test_pins_refuse_what_the_chip_cannot_do(vboard):
    out = mpremote(vboard, "exec", "\n".join([
        "from machine import Pin",
        "def t(f):",
        "    try:",
        "        return f()",
        "    except ValueError as e:",
        "        return 'ValueError: %s' % e",
        "print(t(lambda: Pin(24)))",
        "print(t(lambda: Pin(40)))",
        "print(t(lambda: Pin(34, Pin.OUT)))",
        "print(t(lambda: Pin(36, Pin.IN, Pin.PULL_UP).value()))",
        "print(t(lambda: Pin(4, Pin.IN, Pin.PULL_UP).value()))",
    ]))
    assert out.splitlines() == ["ValueError: invalid pin", "ValueError: invalid pin",
                                "ValueError: pin can only be input", "0", "1"]


def test_reset_cause_after_soft_and_hard_resets(vboard):
    b = vboard
    assert mpremote(b, "exec", "import machine\nprint(machine.reset_cause())").strip() == "5"  # soft
    mpremote(b, "reset")  # machine.reset(): the chip resets
    b.connect()
    out = mpremote(b, "resume", "exec", "import machine\nprint(machine.reset_cause())")
    assert out.strip() == "2"


def test_boot_held_at_power_up_starts_in_safe_mode(vboard):
    b = vboard
    b.new()
    b.req("throw", seg="T2")
    st = b.state()
    b.sim.boot_held = True
    try:
        b.sim.power_cut()
        boot = b.wait("boot", timeout=20)
        assert boot["safe"] == "button" and "BOOT" in boot["msg"]
        # the game is not running: the REPL is free for mpremote
        assert mpremote(b, "resume", "exec", "import sys\nprint('shove.app' in sys.modules)").strip() == "False"
    finally:
        b.sim.boot_held = False
    b.sim.power_cut()
    b.connect()  # the game runs again, as it was
    assert b.state() == st


def test_an_idle_board_waits_instead_of_spinning_and_still_catches_short_darts(vboard):
    b = vboard
    b.new()
    b.settle()
    s0 = b.req("stats")["stats"]
    b.sim.wait_rearmed()  # a control round trip: time passes with nothing to do
    s1 = b.req("stats")["stats"]
    assert s1["idles"] > s0["idles"]  # it waited for input rather than scanning an idle matrix
    # a 0.5 ms closure scheduled on an idle board wakes it and is scored
    r, c = b.cells["S7"]
    b.sim.pulses([(r, c, 20000, 500)])
    assert b.wait("dart")["seg"] == "S7"


def test_resets_asked_for_are_marked_and_a_crash_or_power_cut_is_not(board):
    """The `reset` command marks its reset in RTC memory, so safe mode does
    not count it as a bad start; the start after it reports why it happened."""
    b = board
    b.reset()
    assert b.req("diag", op="about")["reset"] == {"cause": 2, "deliberate": True}
    b.connect()  # (a second look finds the mark read and gone)
    if b.sim is None:
        return
    b.sim.crash_loop()
    assert b.wait("boot", timeout=20)
    b.connect()
    assert b.req("diag", op="about")["reset"] == {"cause": 2, "deliberate": False}
    b.close()
    b.sim.power_cut()
    b.connect()
    assert b.req("diag", op="about")["reset"] == {"cause": 1, "deliberate": False}


def test_the_mark_reaches_the_next_start_however_late_the_host_reads_it(fresh_sim, monkeypatch):
    """The virtual board tells the host its RTC memory on the control
    channel, read by a thread of the host's; a loaded machine can leave that
    thread behind the reset right after the write. The next start must still
    be given the mark: here every RTC message is read 0.3 s late."""
    import json as real_json

    from hapenny.sim import board as simboard

    class LateRtc:
        dumps = staticmethod(real_json.dumps)

        @staticmethod
        def loads(line):
            if b'"rtc"' in line:
                time.sleep(0.3)
            return real_json.loads(line)

    monkeypatch.setattr(simboard, "json", LateRtc)
    b = fresh_sim
    for _ in range(2):
        b.reset()
        b.connect()
        assert b.req("diag", op="about")["reset"] == {"cause": 2, "deliberate": True}


def test_a_failing_boot_py_starts_the_board_safe_and_the_repl_mends_it(vboard):
    """Code of a builder's own in boot.py that raises: the board starts safe
    ("safe": "boot", the error in msg) with the REPL free, instead of a game
    on a half-started board; mended, the game runs again as it was."""
    b = vboard
    b.new()
    b.req("throw", seg="T4")
    st = b.state()
    line = "    pass  # start-up code of your own (Wi-Fi, ...) goes here: an error in it starts the board safe"
    broken = "    import no_such_wifi_module"
    edit = "s=open('boot.py').read()\nassert %r in s\nopen('boot.py','w').write(s.replace(%r, %r))"
    mpremote(b, "exec", edit % (line, line, broken))  # leaves the board at the REPL
    try:
        ser = open_serial(b.port, timeout=0.1)
        try:
            link = Link(SerialTransport(ser))
            link.send_line(b"\r\x02\x04")  # the friendly REPL's soft reset: boot.py, then main.py
            boot = link.wait_event("boot", timeout=20)
        finally:
            ser.close()
        assert boot["safe"] == "boot" and "no_such_wifi_module" in boot["msg"], boot
        assert mpremote(b, "resume", "exec", "import sys\nprint('shove.app' in sys.modules)").strip() == "False"
    finally:
        mpremote(b, "resume", "exec", edit % (broken, broken, line))
    b.connect()
    assert b.state() == st

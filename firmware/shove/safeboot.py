# Safe boot, pure logic: whether this start runs the game or leaves the
# board at the REPL, and the small counter of bad starts kept in a file.
# Hardware comes in as arguments (the `machine` module, a pin level), so the
# same code runs in tests against models.
#
# machine.reset_cause() values of the ESP32 port (ports/esp32/modmachine.c:
# MP_PWRON_RESET = 1 ... MP_SOFT_RESET = 5). A task-watchdog panic reports
# WDT_RESET; machine.reset() and any other panic report HARD_RESET; a
# brownout reports PWRON_RESET (ESP_RST_BROWNOUT is mapped there), so a
# supply too weak for the strip looks like a fresh start (docs/reliability.md).
#
# The watchdog's timings (WDT_MS, FEED_MS), the mark a reset made on
# purpose leaves (RESET_MARK) and the flag of an armed watchdog (WDT_ARMED)
# are the package's (shove/__init__.py): the boards arm the watchdog and
# write the two marks, and may not import start-up's.
from shove import FEED_MS, RESET_MARK, WDT_ARMED, WDT_MS  # noqa: F401 (also this module's names)

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5

LIMIT = 3  # this many bad starts in a row: the next start is safe
HEALTHY_MS = 20000  # a start is good once the game loop has run this long
COUNT_FILE = "boots"

BUTTON = "button"  # BOOT held while starting
CRASHES = "crashes"  # LIMIT bad starts in a row
CHIP = "chip"  # not a chip this firmware knows
BOOT_PY = "boot"  # boot.py failed


def decide(cause, held, count, chip_problem=None, boot_error=None, deliberate=False):
    """-> (safe reason or None, bad-start count to store).

    A bad start is one that ends in a watchdog or other reset (HARD_RESET:
    machine.reset() after a crash, a panic) before the game loop has run
    HEALTHY_MS; the count of them survives resets in COUNT_FILE. A power-on
    starts afresh. A soft reset is the REPL's, not a start, and a reset
    marked `deliberate` (RESET_MARK) was asked for: nothing changes."""
    if cause == SOFT_RESET or (deliberate and cause == HARD_RESET):
        n = count
    elif cause in (WDT_RESET, HARD_RESET):
        n = count + 1
    else:
        n = 0
    if chip_problem:
        return CHIP, n
    if boot_error:
        return BOOT_PY, n
    if held:
        return BUTTON, 0  # someone is at the board: start counting afresh
    if n >= LIMIT:
        return CRASHES, n
    return None, n


def parse_count(data):
    """The stored count; anything unreadable counts as none."""
    try:
        n = int(data)
    except (TypeError, ValueError):
        return 0
    return n if 0 <= n < 1000 else 0


def message(reason, count):
    if reason == BUTTON:
        return "BOOT held at start: the game is not started; the REPL is free"
    if reason == BOOT_PY:
        return "boot.py failed: the game is not started; the REPL is free: mend boot.py"
    if reason == CRASHES:
        return ("%d bad starts in a row (crash or watchdog): the game is not started; "
                "deploy a fix, or power-cycle to try again" % count)
    return "the game is not started"


class Health:
    """Clears the bad-start count once the game loop has checked in for
    HEALTHY_MS, or when it stops on purpose (the REPL hand-over). `clear` is
    called at most once; `alive(now_ms)` is cheap enough for every loop pass."""

    def __init__(self, clear):
        self._clear = clear
        self.since = -1  # the first check-in's tick
        self.done = False

    def alive(self, now_ms):
        if self.since < 0:
            self.since = now_ms
        elif not self.done and ((now_ms - self.since) & 0x3FFFFFFF) >= HEALTHY_MS:
            self.cleared()

    def cleared(self):
        if not self.done:
            self.done = True
            self._clear()


def take_mark(machine):
    """Whether the reset before this start was marked; the mark is cleared
    (the watchdog's flag, WDT_ARMED, is left: boot.py reads it)."""
    try:
        rtc = machine.RTC()
        got = rtc.memory()
    except (AttributeError, OSError, ValueError):  # a port without RTC memory
        return False
    if got == RESET_MARK:
        rtc.memory(b"")
        return True
    return False

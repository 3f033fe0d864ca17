# The virtual board's `machine`: the unix port's own module plus what an
# ESP32 has and the unix port lacks. reset() is a power cycle and
# soft_reset() a soft reboot: the simulator restarts this process on the
# exit status (see vboot.py).
import sys

from umachine import *  # noqa: F401,F403  mem32, idle, ...

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5
_HARD_EXIT = 12
_SOFT_EXIT = 10


def reset():
    sys.exit(_HARD_EXIT)


def soft_reset():
    sys.exit(_SOFT_EXIT)


def reset_cause():
    return PWRON_RESET


def freq(hz=None):
    return 240000000 if hz is None else None


def unique_id():
    return b"\x24\x0a\xc4\x5e\x1a\x01"


class Pin:
    """A GPIO with nothing wired to it: the virtual board's matrix, strip and
    buttons live in its board layer, not on pins."""

    IN = 1
    OUT = 3
    OPEN_DRAIN = 7
    PULL_UP = 2
    PULL_DOWN = 1
    IRQ_FALLING = 2
    IRQ_RISING = 1

    def __init__(self, pin, mode=-1, pull=-1, value=None):
        self.id = pin
        self._v = 1 if value is None else value

    def init(self, *args, **kw):
        pass

    def value(self, v=None):
        if v is None:
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


class WDT:
    def __init__(self, id=0, timeout=5000):
        pass

    def feed(self):
        pass


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id=-1, *args, **kw):
        pass

    def init(self, *args, **kw):
        pass

    def deinit(self):
        pass

# What main.py runs: safe boot decides whether this start plays, then the
# game runs. The hardware (machine, the platform, the chip's name) comes in
# as arguments so that tests drive this with models.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import json

import shove
from shove import boards, safeboot, store

_BOOT_PIN = const(0)  # the DevKit's BOOT button: low while held (external pull-up)
_BOOT_PIN_C3 = const(9)  # the ESP32-C3's BOOT button (its strapping pin for the boot mode)


def button_held(machine, pin=_BOOT_PIN):
    try:
        return machine.Pin(pin, machine.Pin.IN, machine.Pin.PULL_UP).value() == 0
    except Exception:  # a board without such a pin: nothing is held
        return False


def _clear():
    store.remove(safeboot.COUNT_FILE)


def game_profile():
    """The profile the game will load (profile.json, or the built-in one
    when that is missing or refused, as the app does)."""
    from shove import profile
    from shove.settings import PROFILE_FILE

    try:
        return profile.load(store.read(PROFILE_FILE) or "")
    except profile.ProfileError:
        return profile.Profile(profile.default_dict())


def profile_pins():
    """The GPIOs of the profile the game will load."""
    p = game_profile()
    return list(p.row_pins) + list(p.col_pins) + [p.leds["pin"]] + [p.buttons[k] for k in p.buttons]


def watch(board, health):
    """Tell `health` about the game loop: its check-ins (board.feed, called
    every service pass) and its stopping on purpose (board.stopped). Once
    healthy, the board's own feed is put back: no cost from then on."""
    feed = board.feed
    stopped = board.stopped

    def fed():
        feed()
        health.alive(board.ticks_ms())
        if health.done:  # nothing refers to start-up's code any more: its heap is freed
            board.feed = feed
            board.stopped = stopped
            boards.ON_OPEN.clear()

    def stop():
        health.cleared()
        stopped()

    board.feed = fed
    board.stopped = stop


LAST = shove.START  # this start's reset cause and whether it was marked deliberate (diag reports them)


def start(machine, run_game, platform, machine_name, out=None, boot_error=None):
    """Safe mode: prints a `boot` event with `safe` and returns its reason.
    Otherwise runs the game (run_game()) and returns None. `boot_error`:
    what boot.py caught, if anything."""
    problem = None
    esp32 = platform == "esp32"
    if esp32:
        from shove import chip

        problem = chip.problem(machine_name)
        if problem is None and chip.pins_matter(machine_name):
            problem = chip.pins_problem(machine_name, profile_pins())
        if problem is None:  # a profile made for another chip's pins (an ESP32's on a C3...)
            problem = chip.profile_problem(machine_name, game_profile().chip)
    # Bad starts are counted on the chip only: the virtual board is reset on
    # purpose many times a minute by tests, and its crashes fail them anyway.
    deliberate = safeboot.take_mark(machine)
    real = machine.reset_cause()
    LAST["cause"] = real
    LAST["deliberate"] = deliberate
    cause = real if esp32 else safeboot.PWRON_RESET
    count = safeboot.parse_count(store.read(safeboot.COUNT_FILE)) if esp32 else 0
    c3 = "ESP32C3" in machine_name.split(" with ")[-1].replace("-", "").upper()  # as chip.kind, without loading it
    reason, n = safeboot.decide(cause, button_held(machine, _BOOT_PIN_C3 if c3 else _BOOT_PIN), count, problem,
                                boot_error, deliberate)
    if n != count:
        if n:
            store.write_atomic(safeboot.COUNT_FILE, str(n).encode())
        else:
            _clear()
    if reason is not None:
        msg = problem or safeboot.message(reason, n)
        if reason == safeboot.BOOT_PY:
            msg = "%s (%s)" % (msg, boot_error)
        line = json.dumps({"ev": "boot", "safe": reason, "boots": n, "msg": msg})
        if out is None:
            print(line)
        else:
            out.write(line + "\n")
        return reason
    if esp32:
        health = safeboot.Health(_clear)
        boards.ON_OPEN.append(lambda b: watch(b, health))
    run_game()
    return None


def main(boot_error=None):
    """True when the game is to run (main.py then starts it). Start-up's
    modules are let go first: the loop runs for hours, and their code would
    hold heap all along (on the chip safe boot's check-ins keep them until
    the start counts as good). `boot_error`: what boot.py caught, if anything."""
    import os
    import sys

    import machine

    from shove import release

    go = []
    try:
        name = os.uname().machine
    except AttributeError:
        name = ""
    start(machine, lambda: go.append(1), sys.platform, name, boot_error=boot_error)
    release("startup", "safeboot", "chip")
    return bool(go)

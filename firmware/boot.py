# Runs at every start, before main.py, and alone after a raw-REPL soft reset
# (ports/esp32/main.c runs boot.py in both REPL modes, main.py only in the
# friendly one). It must neither fail nor let the watchdog bite, or a soft
# reset (mpremote does one first) would end in a reset every 8 s with no
# REPL to mend it:
# - a soft reset leaves the ESP32's watchdog armed (ports/esp32/machine_wdt.c
#   has no deinit) but stops the timer that fed it (main.c's soft-reset path:
#   machine_timer_deinit_all), so it is fed from here first, inline, importing
#   nothing of the firmware (a half-copied deploy must not stop it). Only if
#   the game had armed it: the game writes b"hapenny:wdt" into RTC memory
#   first (shove/__init__.py: WDT_ARMED; machine_rtc.c keeps it through a
#   soft reset, not a power cut). Safe mode and a game never started arm
#   nothing, so a REPL session there runs without a watchdog. Any other reset
#   disarms the chip's watchdog, so the flag is cleared then. Timer(0)
#   is the one the game's own, checked feeder takes over (Timer(id) returns
#   the existing timer: machine_timer.c); its callback is scheduled and runs
#   while boot.py runs and while the REPL waits (mphalport.c's stdin loop
#   runs MICROPY_EVENT_POLL_HOOK). The numbers are safeboot.WDT_MS and FEED_MS.
# - any error is caught: main.py then starts safe (no game; the REPL is
#   free), reading BOOT_ERROR from the globals boot.py shares with main.py
#   and the REPL (pyexec runs every file in __main__'s dict).
# - an update over the network (shove/update.py) left whole and checked in
#   upd/ with its marker upd.go is moved into place here, before anything of
#   the firmware is imported: stale files removed, each staged file renamed
#   over the old one (littlefs: in one step), upd.go removed last. A cut in
#   the middle leaves upd.go, so the next start finishes the moves; no
#   marker, nothing of upd/ is used (the next update starts it afresh).
import machine

BOOT_ERROR = None


try:
    if machine.RTC().memory() == b"hapenny:wdt":
        if machine.reset_cause() == machine.SOFT_RESET:
            _wdt = machine.WDT(timeout=8000)
            machine.Timer(0).init(period=1000, mode=machine.Timer.PERIODIC, callback=lambda _t: _wdt.feed())
            _wdt.feed()
        else:
            machine.RTC().memory(b"")
    import os

    try:
        os.stat("upd.go")
    except OSError:
        pass
    else:  # its code only when an update waits (in this file it would sit in every start's heap)
        import shove.updswitch

        shove.updswitch.run()
        shove.release("updswitch")
    pass  # start-up code of your own (Wi-Fi, ...) goes here: an error in it starts the board safe
except Exception as _e:
    BOOT_ERROR = "%s: %s" % (type(_e).__name__, _e)
    print("boot.py:", BOOT_ERROR)

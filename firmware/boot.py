# Runs at every start, before main.py, and alone after a raw-REPL soft reset
# (ports/esp32/main.c runs boot.py in both REPL modes, main.py only in the
# friendly one). A soft reset (mpremote does one first) leaves the ESP32's
# watchdog armed but stops the timer that fed it: feed it from here.
import machine

if machine.reset_cause() == machine.SOFT_RESET:
    from shove import safeboot

    safeboot.keep_fed(machine)

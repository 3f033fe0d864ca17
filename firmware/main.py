# hapenny: safe boot decides whether this start plays (shove/startup.py);
# then the board runs the game until Ctrl-C hands the serial port to the
# REPL (mpremote does this for deploys).
import micropython

# First of all: 0x03 is data, not KeyboardInterrupt (ports/esp32/uart.c
# raises it wherever the code is), so line noise or a host's Ctrl-C while
# the firmware loads cannot leave it half started; the main loop reads 0x03
# itself and decides (shove/handover.py).
micropython.kbd_intr(-1)
try:
    from shove import startup

    go = startup.main(globals().get("BOOT_ERROR"))  # boot.py's error, if it had one
    del startup  # start-up's modules are let go before the game's are loaded
    if go:
        from shove import app

        app.main()
finally:
    micropython.kbd_intr(3)  # safe mode, or after the game: the REPL's Ctrl-C again

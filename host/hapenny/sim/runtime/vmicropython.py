# The virtual board's `micropython` (vboot.py puts it in sys.modules): the
# unix port's, with kbd_intr() as the ESP32 has it. There 0x03 arriving on
# the UART raises KeyboardInterrupt unless kbd_intr(-1) made it data
# (ports/esp32/uart.c); here the simulator turns the byte into SIGINT, so it
# is told, and passes 0x03 through as a byte while it is not 3. (The unix
# port's own kbd_intr(-1) would let SIGINT kill the process.)
from micropython import *  # noqa: F401,F403

import machine


def kbd_intr(c):
    machine._tell({"kbd": c})

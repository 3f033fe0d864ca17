# The board layer: everything that touches hardware comes through one object
# with this interface (see esp32.py and virtual.py):
#   name, rows, cols, strip_count
#   ticks_us(), ticks_ms()            30-bit wrapping clocks
#   read_matrix(snap)                 snap[row] = bitmask of closed columns
#   press(row, col, ms)               close a crossing at the scanner's input
#   button(i)                         True while button i is held
#   buttons_down()                    True while any is (may say so a moment late)
#   scan_idle(snap, n, until, tx, tx_at)  up to n reads while all read open; stops at a
#                                     closure, or (woke set) for input or at tick until;
#                                     calls tx() (the UART's refill) at tick tx_at, reads on
#   serial_ready()                    a byte waits on the console
#   serial_take(buf, most)            what waits, up to `most` bytes, into buf
#   strip_write(frame)                RGB bytes, 3 per pixel
#   read_file(path), write_file(path, data)   power-safe flash
#   service(app)                      per-loop housekeeping (control channel)
#   feed(), reset()                   watchdog, power cycle
import sys

WOKE_INPUT = 1  # board.woke: scan_idle stopped for a serial byte or a button
WOKE_TIME = 2  # ... at the tick it was given
ON_OPEN = []  # type: list  # start-up hooks, each called with the new board (safe boot watches the loop)


def open_board(profile):
    if sys.platform == "esp32":
        from shove.boards.esp32 import Board
    else:
        from shove.boards.virtual import Board
    b = Board(profile)
    for hook in ON_OPEN:
        hook(b)
    return b

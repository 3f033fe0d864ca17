# The board layer: everything that touches hardware comes through one object
# with this interface (see esp32.py and virtual.py):
#   name, rows, cols, strip_count
#   ticks_us(), ticks_ms()            30-bit wrapping clocks
#   read_matrix(snap)                 snap[row] = bitmask of closed columns
#   press(row, col, ms)               close a crossing at the scanner's input
#   button(i)                         True while button i is held
#   buttons_down()                    True while any is (may say so a moment late)
#   scan_idle(snap, n, until=-1, tx=None)   up to n reads while all read open;
#                                     returns how many found it open: fewer at a
#                                     closure (snap holds it) or when woke is set
#                                     (scanner.WOKE_*: input, or the tick `until`, ms);
#                                     meanwhile writes tx's next load (a
#                                     pacing.TxQueue) each time the UART's FIFO runs dry
#   uart_us_per_byte                  the UART's pace (0: none to pace output to)
#   console                           (optional) the board's own console stream
#   radio, dns_port, dns_host         Wi-Fi there (the set-up access point may open), and the
#                                     port and address its DNS answers on (53; 0: none)
#   serial_ready()                    a byte waits on the console
#   serial_take(buf, most)            what waits, up to `most` bytes, into buf
#   strip_write(frame)                RGB bytes, 3 per pixel
#   read_file(path), write_file(path, data), append_file(path, data)   power-safe flash
#   sync_write(f, data)               bytes added to an open file and synced (the journal)
#   hooks(stats, quiet, scanner)      the loop's callbacks, given once at boot: stats()
#                                     its figures, quiet() nothing waits the board cannot see;
#                                     the scanner an interrupt may step (esp32.py's _edge)
#   edges(on)                         (optional) that interrupt on or off (off while
#                                     something else reads the matrix: diag's recording)
#   service()                         per-loop housekeeping (the virtual one's control channel)
#   feed(), reset()                   watchdog, power cycle
#   start_watchdog(), serial_raw(on), stopped()   at the loop's start and end
# This module opens the board (open_board) and asks the chip what no board
# object models (idf_heap). The boards import nothing from it: it imports them.
import sys

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


def idf_heap():
    """The ESP-IDF heap MicroPython grows into (ports/esp32/modesp32.c:
    idf_heap_info(HEAP_DATA) gives (total, free, largest free block, least
    free ever) per region): [free, largest free block], or None off the chip."""
    try:
        import esp32
    except ImportError:
        return None
    free = 0
    largest = 0
    for region in esp32.idf_heap_info(esp32.HEAP_DATA):
        free += region[1]
        if region[2] > largest:
            largest = region[2]
    return [free, largest]

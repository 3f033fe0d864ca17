# On a stock ESP32 image a module's bytecode sits in the heap from import
# until the module is let go (docs/performance.md, the heap): code needed only
# at start-up, for a bring-up tool or a rare command is released after use.
import sys

# This start's reset cause and whether it was marked deliberate: written by
# startup, read by diag; kept here because startup is let go once the game runs.
START = {}  # type: dict


KEPT = ()  # modules a part keeps loaded for now (keep), which release() from elsewhere leaves


def keep(names):
    """`names` (a tuple) kept loaded until keep(()) : the web server's request
    code while requests come (shove/httpd.py). A state built for a serial
    line or a dart's event lets the state's builder (view) go once it is
    done; were that one of the server's, its next request (a page's
    snapshot) would load it again, some 35 ms of the chip's with no read of
    the matrix, mid-visit: the darts lost under web load fell there."""
    global KEPT
    KEPT = names


def release(*names):
    """Forget the modules shove.NAME (sys.modules and the package's
    attribute; NAME may be "boards.X"): their code is freed at the next
    collection once nothing else refers to them (a global of another
    module, a live object of a class of theirs). Importing one again loads
    it afresh. Only MicroPython lets go: in CPython (the host's tests and
    tools) code costs no board heap, and a fresh import each time would
    cost milliseconds a call."""
    if sys.implementation.name != "micropython":
        return
    for n in names:
        if n in KEPT:
            continue
        full = "shove." + n
        sys.modules.pop(full, None)
        i = full.rfind(".")  # the package that holds it: shove, or shove.boards for "boards.x"
        try:
            delattr(sys.modules[full[:i]], full[i + 1:])
        except (AttributeError, KeyError):  # not loaded (MicroPython raises KeyError)
            pass


# The modules of a board on a network, and every command's: their names
# interned at start on a board with a network set (intern_first) ...
NET_PHASE = ("request", "view", "extra", "httpd", "httpreq", "webroutes", "webpage", "webgate", "wifiset", "wifi")
# ... and the set-up AP's besides, before the AP opens
AP_PHASE = NET_PHASE + ("setupweb", "wifiap", "captive", "wifipage", "probes")


def intern_first(names):
    """Each module shove.NAME not yet loaded, imported once and let go.
    MicroPython interns every name a module uses in qstr pools that are
    never freed, each new pool twice the last and in one piece: past some
    1,200 names the next takes 1,280 entries (about 9 KB on the chip). The
    set-up AP's modules bring that many, and a command's later load met a
    MemoryError for that pool in a heap the game had cut up, with 90 KB
    free. Done while the heap is whole (start-up), or before the AP opens
    later, where a MemoryError here (caught by the caller) leaves it closed
    rather than open on a board that can then load nothing. The names are
    read from the .mpy's table (shove/names.py), its code never loaded
    (loading the AP's 14 modules for their names took 106 KB of the heap on
    32 bits); a module with no .mpy to read (sources, a frozen image) is
    imported once and let go."""
    import gc

    gc.collect()
    new = [m for m in names if "shove." + m not in sys.modules]
    d = globals().get("__file__") or ""
    d = d[:d.rfind("/") + 1]
    try:
        table = None
        if sys.implementation.name == "micropython":  # (in CPython names cost no board heap)
            from shove import names as table

        for m in new:
            if table is None or not table.read(d + m + ".mpy"):
                __import__("shove." + m)
    finally:
        release("names", *new)
        gc.collect()


def call(name, fn, *args):
    """shove.NAME's function FN(*args), the module loaded for the call and
    let go after (release): for code a board runs once in a while (its
    making, the watchdog's start, the doctor's line test). The fromlist
    makes __import__ return shove.NAME itself, not the package."""
    try:
        return getattr(__import__("shove." + name, None, None, (fn,)), fn)(*args)
    finally:
        release(name)


class Refused(Exception):
    """A request refused, and why: `code`, a word a program acts on, and
    `msg`, a sentence for a person. The game, the computer and the boards
    raise it (the referee's RuleError is this class); the protocol's handlers
    turn it into an error reply or a `refused` event, the code and the
    message as the wire's `error` and `msg` (docs/protocol.md)."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


# The console UART, as the boards drive it and the output's pacing
# (shove/pacing.py) fills it.
UART_FIFO = 128  # bytes the REPL UART's FIFO takes without blocking
UART_US_PER_BYTE = 87  # 10 bits at 115200 baud

# What the boards share with safe boot (shove/safeboot.py, start-up's):
WDT_MS = 8000  # the watchdog's timeout, everywhere it is armed (boot.py too)
FEED_MS = 1000  # how often a timer feeds it
# Written into RTC memory just before a reset made on purpose (the `reset`
# command, `hapenny deploy`), so that the start after it is not counted as
# a bad one. machine.RTC().memory() is RTC slow memory with RTC_NOINIT_ATTR
# in ports/esp32/machine_rtc.c: it survives machine.reset() and watchdog
# resets, not a power cut (its magic word is then wrong and it reads empty).
RESET_MARK = b"hapenny:reset"
# Written into the same RTC memory just before the game arms the watchdog:
# boot.py re-arms and feeds it after a soft reset only when this is there,
# since a soft reset leaves an armed watchdog armed and one never armed
# (safe mode, a board whose game never started) unarmed. Any other reset
# disarms it, so boot.py clears the flag at every start but a soft one. It
# is the literal in boot.py, which imports nothing of the firmware.
WDT_ARMED = b"hapenny:wdt"

# The time helpers every part uses (the scanner, the LEDs, the buttons, the
# output's pacing, the computer's pace, auto next), kept at the bottom so
# that none of them depends on another for its clock's arithmetic. Ticks
# wrap at 2**30, as on the ESP32: 0x3FFFFFFF is the mask, 0x20000000 half a
# turn (numbers written out: const() would cost this module an import).


def ticks_diff(a, b):
    """a - b on the wrapping 30-bit clock; stays within small ints (no heap)."""
    d = (a - b) & 0x3FFFFFFF
    if d >= 0x20000000:
        d -= 0x40000000
    return d


def ticks_add(a, d):
    """a + d on the wrapping 30-bit clock."""
    return (a + d) & 0x3FFFFFFF

# The firmware's main loop: scanner first, everything else in between scans.
#
# While the scanner is calm the loop reads the matrix in bursts (one board
# call, no heap use) and steps the scanner only on a read that finds a
# closure; while a dart is voted on it steps on every read. After each burst
# (every few reads otherwise) one service slice runs, in a fixed round:
# SERIAL, BOARD, BUTTONS, TIMERS, STRIP. When a round finds nothing to do,
# the next burst is a quiet one of up to a second that ends early for a
# serial byte, a button or the time a waiting frame or the UART's next bytes
# are due: the fewer trips back to bytecode, the fewer gaps a short contact
# can fall into. The slices act through parts of their own: the game's
# keeper, the strip, the console's queue (pacing), the commands.
import gc

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# the game's modules, loaded with the loop as main.py imports it (the App's
# parts are built from them by shove/loading.py, at start-up only)
from shove import keeper, leds, pacing, protocol, release, scanner, strip, ticks_add, ticks_diff  # noqa: F401
from shove.boards import open_board
from shove.commands import SERIAL_MORE, SERIAL_RUN, SERIAL_SLICE
from shove.scanner import WOKE_INPUT
from shove.settings import VERSION

_SERVICE_EVERY = const(8)  # scans between service slices while a dart is being read
# Reads in one call while nothing is closed (about 20 us each on the chip), then a service
# slice; five slices, so the matrix is never left unread for long (a 0.5 ms contact must meet a read).
_BURST = const(16)
# With nothing due (no timer, output, button or input; at most a frame only
# time makes due), read up to this many times (about a second on the chip,
# inside the watchdog's 3 s) or until the frame is due, then a lean round
# (serial, strip), unless a byte or a button wakes the loop (board.woke).
_QUIET = const(40000)
_SERIAL = const(0)  # the service slices, in the order they run
_BOARD = const(1)
_BUTTONS = const(2)
_TIMERS = const(3)
_STRIP = const(4)
_NEXT_SLICE = const((_BOARD, _BUTTONS, _TIMERS, _STRIP, _SERIAL))
_FEED_EVERY = const(16)  # serial slices between check-ins (each a few ms apart: well inside the 3 s allowed)
_DUE_TIMERS = const(1)  # the computer's visit or auto next may act (the TIMERS slice)
_DUE_STRIP = const(2)  # a frame to write or one that animates (the STRIP slice)
# While the board's web server runs, a quiet burst ends this soon (ms) for
# its step (a request waits no longer; on the chip a lean round is well
# under a ms of bytecode, so ten of them a second cost nothing a dart needs)
_WEB_IDLE_MS = const(100)
_WEB_OPEN_MS = const(20)  # ... and while a client is connected
# ... and while the network is being joined (shove/wifi.py's JOINING: the Joiner's state), for
# its step: the join is noticed, and the page served, within this of the address coming, not a
# whole quiet burst (about a second) later, at every start
_NET_JOINING = const(1)
_NET_JOINING_MS = const(100)

# What a profile keeps once read: its module (validation, 5 KB of heap as bytecode) is let go after boot.
_PROFILE_KEEPS = const(("name", "chip", "row_pins", "col_pins", "rows", "cols", "map", "leds", "buttons", "brightness", "pullups",
                         "timing"))


class Kept:  # a profile's fields, without its class (see _PROFILE_KEEPS)
    def __init__(self, obj):
        for n in _PROFILE_KEEPS:
            setattr(self, n, getattr(obj, n))


class App:
    def __init__(self, board=None, out=None):
        # the parts are made by start-up code (shove/loading.py), let go once
        # they are: that code is in the heap only while the board starts
        from shove import loading

        try:
            loading.build(self, board, out, open_board, Kept)
        finally:
            release("loading", "journal", "view", "profile", "profile_default", "settings")
        # slices with work until the game or the strip next changes: one attribute to check while idle
        self.due = _DUE_TIMERS | _DUE_STRIP
        self.passes = 0
        self.slice = _SERIAL  # the service slice that runs next
        self.slices = 0  # service slices run (stats), and how many of them while a dart could score
        self.armed_slices = 0
        self.lean = False  # the slice after a quiet burst is a lean one: serial, then the strip's only
        self.serial_run = 0  # serial slices run back to back
        self.feeds = 0  # serial slices since the last check-in with the watchdog
        self.errors = 0  # unexpected exceptions caught by the loop

    # ---- the parts' callbacks -----------------------------------------------------------
    def emit(self, name, fields=None):
        line = protocol.event(name, fields, self.tick)
        self.tx.put(line)
        web = self.commands.web
        if web is not None:  # the same line for the web server's streams (no copy)
            web.event(line)

    def report(self, e, errors, note=""):
        """An unexpected error as an `error` event (shove/fault.py): queued
        behind the lines already waiting, so it never cuts one (nothing is
        printed to the console directly). Without memory for it, a shorter
        line; without memory for that, nothing."""
        if isinstance(e, MemoryError):
            gc.collect()
        name = type(e).__name__
        try:
            from shove import fault

            try:
                f = fault.fields(e, errors, note)
            finally:
                release("fault")
            self.emit("error", f)
        except Exception:
            try:
                self.tx.put('{"ev":"error","msg":"%s%s","type":"%s","errors":%d}' % (name, note, name, errors))
            except Exception:
                pass

    def scan_point(self):
        """One read of the matrix from inside long work (ms of bytecode on the
        chip): a short contact meanwhile still meets a read, its dart queued."""
        sc = self.scanner
        board = self.board
        if sc.calm:
            if board.scan_idle(sc.snap, 1) == 1:
                return
        else:
            board.read_matrix(sc.snap)
        sc.step(board.ticks_us())

    def changed(self):
        """The game, the config or the strip's owner changed: a frame is due, the timers may act."""
        self.strip.changed()
        self.due = _DUE_TIMERS | _DUE_STRIP

    def figures(self):  # the loop's own, for `stats`
        sc = self.scanner
        return [sc.scans, sc.state, sc.dropped, sc.pending(), self.errors, self.commands.watch.lone, self.slices,
                self.armed_slices]

    def quiet(self):
        # nothing waits that a board cannot see: the scanner idle, no output queued, none for the
        # web server's clients (the virtual board's idle wait looks at no socket of its)
        web = self.commands.web
        return self.scanner.state == scanner.IDLE and not self.tx.q and (web is None or not web.busy)

    # ---- the service slices ------------------------------------------------------------------
    def _service(self):
        """One slice, in turn; each does little when nothing happens, so the matrix is
        never left unread for long (a 0.5 ms contact must meet a read). The UART is fed in every one."""
        if self.tx.q:
            self.tx.drain()
        board = self.board
        s = self.slice
        self.slice = _NEXT_SLICE[s]
        self.slices += 1
        if self.scanner.calm:
            self.armed_slices += 1
        if s == _SERIAL:
            self.scan_point()  # a request's first byte may have woken this with a dart landing
            if self.lean:  # right after a quiet burst: only the strip may have work
                self.lean = False
                self.slice = _STRIP if self.due & _DUE_STRIP else _SERIAL
            self.feeds += 1
            if self.feeds >= _FEED_EVERY:  # the watchdog's check-in is due within seconds, not every slice
                self.feeds = 0
                board.feed()
                net = self.commands.net
                if net is not None:  # the slow slice: the network's join (shove/wifi.py), never waiting
                    self.scan_point()  # (each part of it a piece of its own: a ms of bytecode together)
                    net.step(board.ticks_ms())
                web = self.commands.web
                if web is not None:  # and the web server's sockets (shove/httpd.py)
                    self.scan_point()
                    web.step(board.ticks_ms())
            else:
                web = self.commands.web
                if web is not None and web.busy:  # a request or a stream's output under way: every round
                    web.step(board.ticks_ms())
            if not self.tx.ready():  # no room for a reply: the input waits (in the UART's ring, as the chip's)
                self.serial_run = 0
            elif self.commands.read(SERIAL_MORE if self.serial_run else SERIAL_SLICE) and self.serial_run < SERIAL_RUN:
                # more input waiting: read on after the next burst (a flood
                # still lets the other slices have one turn in eight)
                self.serial_run += 1
                self.slice = _SERIAL
            else:
                self.serial_run = 0
        else:
            # a read on each side of the slice's own work: the way here and
            # the way back to the loop's reads are each a piece of their own
            # (together with the work over 0.5 ms of the chip's time)
            self.scan_point()
            if self.scanner.state == scanner.WINDOW:
                return  # a dart's first contact: its window is read, no slice in it (the work waits its turn)
            if s == _BOARD:
                board.service()
            elif s == _BUTTONS:
                self.commands.buttons_slice()
            elif s == _TIMERS:
                # the computer's turn and auto next wait for room in the console's queue
                if self.due & _DUE_TIMERS and self.tx.ready() and not self.keeper.timers():
                    self.due &= ~_DUE_TIMERS
            elif self.due & _DUE_STRIP:
                st = self.strip
                armed = self.scanner.state < scanner.LOCKOUT
                now = board.ticks_ms()
                # a frame that only time makes due, not yet: no step (a round
                # comes every burst while the console's queue keeps the timers due)
                if not (st.waits and armed and st.at >= 0 and ticks_diff(st.at, now) > 0):
                    st.step(now, self.keeper.game, armed)
                if st.idle():
                    self.due &= ~_DUE_STRIP
            self.scan_point()

    # ---- the loop ----------------------------------------------------------------------------
    def boot(self):
        self.emit("boot", {"version": VERSION, "protocol": protocol.PROTOCOL, "board": self.prof.name,
                           "restored": self.keeper.game is not None})
        for n in self.notices:
            self.emit("storage", n)
        self.board.hooks(self.commands.stats, self.quiet, self.scanner)
        self.board.start_watchdog()

    def run(self):
        """The main loop, until the serial port is handed to the REPL (see
        handover.py). Anything that escapes it resets the board: a board
        parked with its watchdog fed would be dead until unplugged."""
        self.boot()
        board = self.board
        try:
            board.serial_raw(True)  # 0x03 is data now: only the loop decides
            self._loop()
        except SystemExit:  # the virtual board's reset and power-off
            raise
        except BaseException as e:
            try:
                self.report(e, self.errors + 1, "; resetting")
                self.tx.flush()
            finally:
                board.reset()
        self.tx.flush()
        self.commands.give_back()  # the REPL's bytes, while 0x03 is still data
        board.serial_raw(False)
        board.stopped()

    def _loop(self):
        """Scan; between scans, the scanner's events and a service slice. Returns once the port is handed over."""
        board = self.board
        sc = self.scanner
        snap = sc.snap
        c = self.commands
        while True:
            if sc.calm:  # nothing to vote on: read in a burst, step on a closure
                if sc.qhead != sc.qtail:
                    # a scan point inside long work found a dart, and the
                    # scanner re-armed before the work ended: serve it now,
                    # not after a burst that may last a second
                    self._serve()
                    if c.leaving:
                        return
                    continue
                n = _BURST
                until = -1
                tx = None  # output the board feeds to the UART inside a quiet burst
                if not self.slice and not self.serial_run and c.buttons.idle and not c.waiting():
                    self.lean = False
                    due = self.due
                    if not due:  # a round of slices found nothing to do
                        n = _QUIET
                    elif due == _DUE_STRIP and self.strip.waits:  # nothing until the frame is due
                        n = _QUIET
                        until = self.strip.at
                    web = c.web
                    if web is not None and web.busy:
                        # the server has output (an answer, a listing's hashes, a stream's events): a
                        # round of slices, whose serial slice steps it, not a burst that ends for it
                        # only _WEB_OPEN_MS later (a piece a burst made a 9 KB listing take seconds)
                        n = _BURST
                        until = -1
                    if n == _QUIET:
                        if web is not None:  # the server's sockets are looked at however quiet the board
                            t = ticks_add(board.ticks_ms(), _WEB_OPEN_MS if web.open else _WEB_IDLE_MS)
                            if until < 0 or ticks_diff(t, until) < 0:
                                until = t
                        net = c.net
                        if net is not None and net.state == _NET_JOINING:
                            t = ticks_add(board.ticks_ms(), _NET_JOINING_MS)
                            if until < 0 or ticks_diff(t, until) < 0:
                                until = t
                        if self.tx.q and self.tx.per_byte:
                            # a long reply needs a FIFO load every 11 ms: the board writes each between
                            # two reads and reads on (ending the burst for it costs a ms of bytecode)
                            tx = self.tx
                        self.feeds = _FEED_EVERY  # the next serial slice checks in with the watchdog
                k = board.scan_idle(snap, n, until, tx)
                sc.scans += k
                if k == n or board.woke:  # all open: no step, so no event; a service slice
                    # a quiet burst that ran its course or reached its time:
                    # a lean round; input or a button: all five slices
                    self.lean = n == _QUIET and board.woke != WOKE_INPUT
                    board.woke = 0
                    self.passes = _SERVICE_EVERY
                    if n == _QUIET and not self.lean:  # input woke it: a read before the serial slice's way there
                        self.scan_point()
                    self._serve()
                    if c.leaving:
                        return
                    continue
                sc.step(board.ticks_us())  # a dart's first contact: its window, read without slices
                self.passes = 0
            else:
                board.read_matrix(snap)
                was = sc.state
                sc.step(board.ticks_us())
                st = sc.state
                if st >= scanner.LOCKOUT:
                    # no dart can score until the scanner re-arms: a slice every pass,
                    # so that what the dart set going is done before it can cost one
                    self.passes = _SERVICE_EVERY
                elif st == scanner.IDLE:  # re-armed, or idle with a stuck crossing masked
                    self.passes += 1
                    if was == scanner.RELEASE and not self.due and not self.serial_run and self.commands.buttons.idle:
                        # every slice served many times over in the lockout: the rest of
                        # the round would only leave the matrix unread while a dart may come
                        self.slice = _SERIAL
                # in the window (3 ms) a dart is being read: no slice until
                # its hit, so the reads decide it and its lockout starts on time
            if sc.qhead != sc.qtail or self.passes >= _SERVICE_EVERY:
                self._serve()
                if c.leaving:
                    return

    def _serve(self):
        """The scanner's events (a scan point may have left one, even a whole dart) and a
        service slice. A bug in serving a request must not stop the scanner: report it."""
        try:
            sc = self.scanner
            while sc.qhead != sc.qtail:
                w = sc.pop()
                kind = w >> 16
                row = (w >> 8) & 0xFF
                col = w & 0xFF
                if kind == scanner.EV_HIT:  # a dart: the game's keeper takes it from here
                    k = self.keeper
                    k.hit(row, col)
                    k.collect()  # first: its pause (no read in it) must fall in the lockout
                    if self.due & _DUE_STRIP and sc.state >= scanner.LOCKOUT:
                        # then its frame, before the other slices: it takes ms to make, and
                        # made after the lockout it waits, to be written while a dart can score
                        self.slice = _STRIP
                        self._service()
                else:
                    self.emit("fault" if kind == scanner.EV_STUCK else "fault_cleared",
                              {"kind": "stuck", "row": row, "col": col})
            if self.passes >= _SERVICE_EVERY:
                self.passes = 0
                self._service()
        except Exception as e:
            self.errors += 1
            self.passes = 0
            self.report(e, self.errors)


def main():
    App().run()

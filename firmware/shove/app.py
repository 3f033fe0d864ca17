# The firmware's main loop: scanner first, everything else in between scans.
#
# While the scanner is calm the loop reads the matrix in bursts (one board
# call, no heap use) and steps the scanner only on a read that finds a
# closure; while a dart is voted on it steps on every read. After each burst
# (every few reads otherwise) one slice of `_service` runs: the serial port,
# the board's housekeeping, the buttons, the computer's visit, the strip.
# When a round of slices finds nothing to do, the next burst is a quiet one
# of up to a second that ends early for a serial byte, a button or the time
# a waiting frame or the UART's next bytes are due: the fewer trips back to
# bytecode, the fewer gaps a short contact can fall into.
# Every change to the game, the configuration or the map is stored on
# flash before its reply or event goes out, so a power cut loses at most the
# change not yet acknowledged.
import gc
import sys

from shove import buttons, events, handover, journal, leds, protocol, release, rules, scanner, segments, store
from shove.commands import CPU_MODULES, Commands
from shove.settings import GAME_FILE, VERSION
from shove.boards import open_board
from shove.scanner import WOKE_INPUT

SERVICE_EVERY = 8  # scans between service slices while a dart is being read
# Reads in one call while nothing is closed (about 20 us each on the chip),
# then a service slice. The service runs in five slices, so that the matrix
# is never left unread for long: a 0.5 ms contact must meet a read.
BURST = 16
# With nothing due (no timer, output, button or input; at most a frame that
# only time makes due), a round of slices has nothing to do either: read up
# to this many times (about a second on the chip, well inside the
# watchdog's 3 s) or until the frame is due, then a lean round (the serial
# slice and the strip's). The board stops early when a serial byte or a
# button wants the loop (scan_idle sets board.woke); a full round follows.
QUIET = 40000
_NEXT_SLICE = (1, 2, 3, 4, 0)
FEED_EVERY = 16  # serial slices between check-ins (each a few ms apart: well inside the 3 s allowed)
DUE_TIMERS = 1  # the computer's visit or auto next may act (service slice 3)
DUE_STRIP = 2  # a frame to write or one that animates (service slice 4)
# Serial bytes taken in one slice (each a look and a one-byte read on the
# chip, then a step of the line buffer: some 60 us); a line is handled when
# its last byte is in. While more keeps coming, later slices take more at a
# time and follow each other (SERIAL_RUN in a row, then one other slice):
# bytes arrive every 87 us at 115200 baud into a 259-byte ring, and one
# left there when it is full is lost (tests/test_esp32_timing.py).
SERIAL_SLICE = 16
SERIAL_MORE = 64
SERIAL_RUN = 7
LED_QUIET_MS = 250  # write a pending frame anyway after this long
UART_FIFO = 128  # bytes the ESP32's REPL UART takes without blocking
# Past this many records the journal is rewritten whole (undone actions
# dropped): it keeps the file, read whole at boot, under 2 KB.
JOURNAL_MAX_RECORDS = 600
UNMAPPED = 255  # profile.UNMAPPED: a crossing with no segment
# What a profile keeps once read: its module (the validation, 5 KB of heap
# as bytecode) is let go after boot, so the App keeps plain data.
PROFILE_KEEPS = ("name", "row_pins", "col_pins", "rows", "cols", "map", "leds", "buttons", "brightness", "pullups",
                 "timing")


class Kept:
    """A profile's fields, without its class (see PROFILE_KEEPS)."""

    def __init__(self, obj, names):
        for n in names:
            setattr(self, n, getattr(obj, n))


class App(Commands):
    def __init__(self, board=None, out=None):
        self.out = out or sys.stdout
        self._bin = getattr(self.out, "buffer", None)  # bytes straight to the port
        self._outq = bytearray()  # lines waiting for the UART
        self._outpos = 0
        self._tx_end = 0  # tick (us) the UART's FIFO will have sent all it was given
        self.notices = []  # storage problems found at boot, sent after `boot` (see loading.py)
        from shove import loading  # start-up only: let go at the end of __init__

        self.prof = Kept(loading.read_profile(self), PROFILE_KEEPS)
        self.board = board or open_board(self.prof)
        if out is None:  # a board may bring its own console stream (the virtual one's ESP32 model)
            self._bin = getattr(self.board, "console", None) or self._bin
        # output paced to the UART's FIFO, which the board also feeds inside its quiet bursts
        self._paced = bool(self.board.uart_us_per_byte) and self._bin is not None
        self.board.tx_out = self._bin
        t = self.prof.timing
        self.scanner = scanner.Scanner(
            self.prof.rows, self.prof.cols, t["window_us"], t["lockout_ms"] * 1000,
            t["rearm_ms"] * 1000, t["stuck_ms"] * 1000)
        self.config = loading.read_config(self)
        self.map = loading.read_map(self)
        L = self.prof.leds
        self.renderer = leds.Renderer(L["beds"], L["per_side"], L["status"], self._brightness())
        self.buttons = buttons.Buttons(("next", "undo", "new"), t["debounce_ms"], t["long_press_ms"])
        self._btn_events = []
        self.jrecs = 0  # records in the journal file (the next one's sequence number)
        self.jdirty = False  # the file must be rewritten before the next append
        self.game = loading.read_game(self)
        self.lines = protocol.LineBuffer()
        self._sbuf = bytearray(SERIAL_MORE)  # the console's bytes of one serial slice
        self._sview = memoryview(self._sbuf)
        self.ignored = 0  # hits while darts are pulled (hold) or no game runs
        self.darts = 0
        self.frame_dirty = True
        self.anim_dirty = False  # only an animation's step is waiting (see _leds)
        self.animated = False  # the renderer was animating at the last look
        # slices with work until the game or the strip next changes: checked
        # with one attribute while nothing happens (see _service)
        self.due = DUE_TIMERS | DUE_STRIP
        self.frame_since = 0
        self.last_frame = bytes(3 * self.renderer.count)
        self.diag_frame = None  # the doctor holds the strip (diag led) while set
        self.hold_since = -1
        self.passes = 0
        self.slice = 0  # the service slice that runs next
        self.slices = 0  # service slices run (stats), and how many of them while a dart could score
        self.armed_slices = 0
        self.strip_waits = False  # the strip has a frame to write only once time passes (see _leds)
        self.strip_at = -1  # ... at this tick (ms); -1: no time set
        self.lean = False  # the slice after a quiet burst is a lean one: serial, then the strip's only
        self.serial_run = 0  # serial slices run back to back
        self.feeds = 0  # serial slices since the last check-in with the watchdog
        self.errors = 0  # unexpected exceptions caught by the loop
        self._map_staged = None  # cells of a map sent in several lines
        self.watch = handover.Watch()
        self.leaving = 0  # set to handover.TO_REPL or TO_RAW to end the loop
        self.left_over = b""  # bytes read after the hand-over's, given back to the REPL
        self.auto = None  # throws the visits of computer sides (cpu.Autoplay, loaded when needed)
        # boot's own modules are let go: they are loaded again only for a
        # command that needs them (shove/extra.py)
        release("loading", "profile", "profile_default", "settings")

    # ---- storage --------------------------------------------------------------------
    def _save_game(self, rollback=None):
        """Store a new game (or none) whole. If the flash refuses, undo the
        change in RAM too (rollback) and refuse the request, so RAM and flash
        never disagree."""
        try:
            if self.game is None:
                store.remove(GAME_FILE)
            else:
                self._rewrite_journal()
        except OSError as e:
            self.jdirty = True
            if rollback:
                rollback()
            raise protocol.ProtoError("storage", "the flash refused the write (%s); nothing changed" % e)

    def _rewrite_journal(self):
        self.board.write_file(GAME_FILE, journal.encode(self.game))
        self.jrecs = self.game.moves()
        self.jdirty = False

    def _log_action(self, action, rollback):
        """Store one action (already applied in RAM) by appending its record;
        a full rewrite after a failed append, or when the log has grown long."""
        try:
            if self.jdirty or self.jrecs >= JOURNAL_MAX_RECORDS:
                self._rewrite_journal()
            else:
                self.board.append_file(GAME_FILE, journal.record(action, self.jrecs))
                self.jrecs += 1
        except OSError as e:
            # part of the record may be on flash: the next save rewrites the file
            self.jdirty = True
            rollback()
            raise protocol.ProtoError("storage", "the flash refused the write (%s); nothing changed" % e)

    def _brightness(self):
        b = self.config["brightness"]
        return self.prof.brightness if b < 0 else b

    # ---- output ------------------------------------------------------------------------
    # Output goes out at the UART's pace. The ESP32's console write fills the
    # 128-byte hardware FIFO and then blocks in whole 10 ms RTOS ticks until
    # the rest fits (ports/esp32/uart.c, uart_stdout_tx_strn): a 600-byte
    # reply would stop the scanner for 50 ms. So lines are queued and each
    # pass writes only what the FIFO has drained since the last write.
    def send(self, line):
        self._outq.extend(line.encode())
        self._outq.extend(b"\n")
        self._drain()

    def _drain(self):
        """Write what the UART's FIFO has room for."""
        # the fewest calls that will do: on the chip each is tens of us
        # with the matrix unread
        q = self._outq
        pos = self._outpos
        left = len(q) - pos
        if not left:
            return
        board = self.board
        per_byte = board.uart_us_per_byte
        if not per_byte or self._bin is None:
            self._write(pos, left)
            return
        # room in the FIFO: what is still in it (ticks wrap at 2**30), rounded up
        backlog = scanner.ticks_diff(self._tx_end, board.ticks_us())
        if backlog < 0:
            backlog = 0
        n = UART_FIFO - (backlog + per_byte - 1) // per_byte
        if n <= 0:
            return
        if n > left:
            n = left
        self._write(pos, n)
        # the FIFO empties once it has sent what it held and these bytes,
        # counted from the end of the write (bytes go in while it runs: from
        # its start, the FIFO could be overfilled by the next write, which
        # would then block for an RTOS tick)
        self._tx_end = scanner.ticks_add(board.ticks_us(), backlog + n * per_byte)

    def _write(self, pos, n):
        if self._bin is None:
            self.out.write(bytes(self._outq[pos:pos + n]).decode())
        else:
            self._bin.write(self._outq, pos, n)  # the stream's write(buf, off, n): no slice to allocate
        self._sent(pos + n)

    def _sent(self, pos):
        self._outpos = pos
        if pos == len(self._outq):
            self._outq = bytearray()
            self._outpos = 0

    def flush(self):
        """Everything queued, now (before a reset or the REPL hand-over)."""
        left = len(self._outq) - self._outpos
        if left:
            self._write(self._outpos, left)

    def emit(self, name, fields=None):
        self.send(protocol.event(name, fields, self.scan_point))

    def scan_point(self):
        """One read of the matrix from inside long work (a request's
        parsing, a state's building and encoding: milliseconds of bytecode
        on the chip), so a short contact meanwhile still meets a read. The
        scanner queues what it finds; the loop serves it afterwards."""
        sc = self.scanner
        board = self.board
        if sc.calm:
            if board.scan_idle(sc.snap, 1) == 1:
                return
        else:
            board.read_matrix(sc.snap)
        sc.step(board.ticks_us())

    def state(self):
        st = self.game.to_state(self.scan_point)
        st["ignored"] = self.ignored
        return st

    def _changed(self):
        self.frame_dirty = True
        self.strip_waits = False
        self.due = DUE_TIMERS | DUE_STRIP

    # ---- the game ---------------------------------------------------------------------
    def _need_game(self):
        if self.game is None:
            raise rules.RuleError("no_game", "no game: start one with new")
        return self.game

    def do_throw(self, code, src, cell=None):
        """Score a dart (from the matrix or the host); store it, then report it."""
        g = self._need_game()
        turn = g.turn
        result = g.throw(code)
        self._log_action(code, g.undo)
        self.renderer.hint_at = -1  # a hint is for the dart just thrown
        self.darts += 1
        gifts = result[2]
        if gifts:
            self.renderer.gift(gifts, g.value(code)[0], self.board.ticks_ms())
        self._changed()
        self.hold_since = self.board.ticks_ms() if g.phase == rules.HOLD else -1
        return events.dart(g, code, src, turn, result, cell)

    def _after_dart(self, ev):
        self.emit("dart", ev)
        g = self.game
        if g.phase == rules.OVER:
            self.emit("win", self._win())

    def _win(self, st=None):
        g = self.game
        return {"winner": g.winner, "name": g.names[g.winner], "state": st or self.state()}

    def do_next(self):
        g = self._need_game()
        turn = g.turn
        g.next()
        self._log_action(rules.NEXT_ACTION, g.undo)
        self._changed()
        self.hold_since = -1
        st = self.state()
        evs = []
        if g.phase == rules.OVER:
            evs.append(("win", self._win(st)))
        elif g.turn != turn or g.phase == rules.PLAY:
            evs.append(("visit", {"turn": g.turn, "thrower": g.thrower(), "state": st}))
        return st, evs

    def do_undo(self):
        g = self._need_game()
        if not g.moves():
            raise rules.RuleError("nothing_to_undo", "nothing to undo")
        last = g.actions[g.moves() - 1]
        g.undo()
        self._log_action(journal.UNDO, lambda: g.apply(last))
        self._changed()
        self.hold_since = self.board.ticks_ms() if g.phase == rules.HOLD else -1
        return self.state()

    def do_new(self, players=None, teams=None, variant="classic", overrides=None, cpu=None, seed=None):
        if seed is None:  # the computer's darts: a new sequence each game unless the host picks one
            seed = self.board.ticks_us() & 0x3FFFFFFF
        g = rules.new_game(players, teams, variant, overrides, cpu, seed)  # validates; nothing changes on error
        old = self.game
        self.game = g
        self._save_game(lambda: setattr(self, "game", old))
        self._changed()
        self.hold_since = -1
        self.ignored = 0
        if not any(g.cpu):
            self.drop_cpu()
        return self.state()

    def drop_cpu(self):
        """No side of the board's any more: the computer's code and state go."""
        if self.auto is not None:
            self.auto = None
            release(*CPU_MODULES)

    # ---- scanner events ------------------------------------------------------------------
    def _scanner_event(self, w):
        kind = w >> 16
        row = (w >> 8) & 0xFF
        col = w & 0xFF
        if kind == scanner.EV_STUCK:
            self.emit("fault", {"kind": "stuck", "row": row, "col": col})
            return
        if kind == scanner.EV_CLEARED:
            self.emit("fault_cleared", {"kind": "stuck", "row": row, "col": col})
            return
        if self.config["learn"]:
            self.emit("raw", {"row": row, "col": col})
            return
        code = self.map[row * self.prof.cols + col]
        if code == UNMAPPED:
            self.emit("unmapped", {"row": row, "col": col})
            return
        g = self.game
        if g is None or g.phase in (rules.HOLD, rules.OVER) or g.cpu[g.turn]:
            self.ignored += 1  # (during the board's own visit the darts are its to throw)
            why = "no_game" if g is None else ("hold" if g.phase == rules.HOLD else "over" if g.phase == rules.OVER
                                               else "cpu")
            self.emit("ignored", {"seg": segments.name(code), "row": row, "col": col, "why": why,
                                  "ignored": self.ignored})
            return
        try:
            ev = self.do_throw(code, "matrix", (row, col))
        except protocol.ProtoError as e:  # the flash refused it: not scored
            self.emit("refused", {"seg": segments.name(code), "row": row, "col": col, "error": e.code, "msg": e.msg})
            return
        self._after_dart(ev)
        # collect now, inside the lockout, where the pause costs no dart:
        # otherwise a collection comes when the heap fills, at any moment
        gc.collect()

    # ---- buttons ----------------------------------------------------------------------------
    def _button(self, name, kind):
        try:
            if name == "next" and kind == buttons.PRESS:
                st, evs = self.do_next()
                for ev, fields in evs:
                    self.emit(ev, fields)
            elif name == "undo" and kind == buttons.SHORT:
                self.emit("undo", {"state": self.do_undo()})
            elif name == "undo" and kind == buttons.LONG:  # held: the coach blinks the bed to aim at
                self.emit("hint", {"hint": self.do_hint(3)})
            elif name == "new" and kind == buttons.SHORT:
                self.emit("new", {"state": self.do_new(self.config["players"], None, self.config["variant"])})
            elif name == "new" and kind == buttons.LONG:
                names = sorted(rules.VARIANTS)
                nxt = names[(names.index(self.config["variant"]) + 1) % len(names)]
                self.extra("config", {"set": {"variant": nxt}}, [])
                self.emit("new", {"state": self.do_new(self.config["players"], None, nxt)})
        except (rules.RuleError, protocol.ProtoError) as e:
            self.emit("refused", {"button": name, "error": e.code, "msg": e.msg})

    # ---- the loop ----------------------------------------------------------------------------
    def _read_serial(self, most):
        """Up to `most` bytes from the port; True when it stopped at that
        bound (more may be waiting: the next slice reads on, so input at the
        full baud rate never backs up into the UART's ring)."""
        # a read first (see _service): the take is a look and a one-byte
        # read a byte on the chip, about 30 us each
        self.scan_point()
        buf = self._sbuf
        n = self.board.serial_take(buf, most)
        if not n:
            return False
        self.scan_point()
        watch = self.watch
        lines = self.lines
        now = -1
        i = 0
        while i < n:
            if not watch.armed:  # printable bytes go straight into the line
                i = lines.take(buf, self._sview, i, n)
                if i == n:
                    break
            b = buf[i]  # a line end or a control byte: through the REPL watch
            i += 1
            if now < 0:
                now = self.board.ticks_ms()
            act = watch.feed(b, now)
            if act == handover.PASS:
                line = lines.feed(b)
                if line is not None:
                    self.scan_point()
                    self.handle_line(line)
            elif act != handover.DROP:
                self.leaving = act  # the REPL's turn: what came after is the REPL's too
                self.left_over = bytes(buf[i:n])
                return False
        return n == most

    def _service(self):
        """One slice of the service, in turn: the serial port and the
        watchdog; the board's housekeeping; the buttons; the computer's
        visit and auto next; the strip. Each slice does little when nothing
        happens, so the matrix is never left unread for long (a 0.5 ms
        contact must meet a read). The UART is fed in every slice."""
        if not self.slice:
            # the serial slice: a burst that a request's first byte woke
            # comes here, and the way from its last read through the loop
            # and into this slice, then the take, are each some hundreds of
            # us on the chip: a read between (and one in _read_serial)
            self.scan_point()
        if self._outq:
            self._drain()
        board = self.board
        s = self.slice
        self.slice = _NEXT_SLICE[s]
        self.slices += 1
        if self.scanner.calm:
            self.armed_slices += 1
        if s == 0:
            if self.lean:  # right after a quiet burst: only the strip may have work
                self.lean = False
                self.slice = 4 if self.due & DUE_STRIP else 0
            self.feeds += 1
            if self.feeds >= FEED_EVERY:  # the watchdog's check-in is due within seconds, not every slice
                self.feeds = 0
                board.feed()
            if self._read_serial(SERIAL_MORE if self.serial_run else SERIAL_SLICE) and self.serial_run < SERIAL_RUN:
                # more input waiting: read on after the next burst (a flood
                # still lets the other slices have one turn in eight)
                self.serial_run += 1
                self.slice = 0
            else:
                self.serial_run = 0
        elif s == 1:
            board.service(self)
        elif s == 2:
            bt = self.buttons
            if board.buttons_down() or not bt.idle:
                now = board.ticks_ms()
                out = self._btn_events
                for i in range(3):
                    bt.update(i, board.button(i), now, out)
                bt.idle = bt.settled()
                while out:
                    name, kind = out.pop(0)
                    self._button(name, kind)
        elif s == 3:
            if self.due & DUE_TIMERS:
                self._timers(board)
        elif self.due & DUE_STRIP:
            self._leds(board.ticks_ms())
            # nothing to write and nothing that changes with time alone (what
            # _leds has just found): quiet until the next change
            if not (self.frame_dirty or self.anim_dirty or self.animated):
                self.due &= ~DUE_STRIP

    def _timers(self, board):
        """The computer's visit and auto next; quiet until the next change
        once neither can act on its own."""
        g = self.game
        if g is None:
            self.due &= ~DUE_TIMERS
            return
        if g.cpu[g.turn] and self.auto is None:
            from shove.cpu import Autoplay

            self.auto = Autoplay()
        auto = self.config["auto_next_ms"]
        hold = auto and g.phase == rules.HOLD and self.hold_since != -1
        if self.auto or hold:
            now = board.ticks_ms()
            if self.auto:
                self.auto.step(self, now)
            if hold and scanner.ticks_diff(now, self.hold_since) >= auto:
                st, evs = self.do_next()
                for ev, fields in evs:
                    self.emit(ev, fields)
        g = self.game
        if g is None or not (hold or (g.cpu[g.turn] and g.phase != rules.OVER)):
            self.due &= ~DUE_TIMERS

    def _leds(self, now):
        if self.diag_frame is not None:
            self.strip_waits = False
            return
        g = self.game
        r = self.renderer
        # from here only time makes a frame due (the loop may read in a quiet
        # burst until strip_at), unless a hint blinks or a win's chase runs:
        # they need every frame
        self.strip_waits = r.hint_at < 0 and (g is None or g.phase != rules.OVER)
        anim = r.animating(g, now)
        if anim:
            if r.hint_at < 0 and g.phase != rules.OVER:
                self.anim_dirty = True  # a gift's flash alone: its frames can wait (below)
            else:
                self.frame_dirty = True  # the hint someone asked for blinks; a win's chase
        elif self.animated:
            self.frame_dirty = True  # an animation has ended: its last frame must go
        self.animated = anim
        self.strip_at = scanner.ticks_add(r.flash_at, leds.FLASH_MS) if r.flash_at >= 0 else -1  # the flash's end
        if not (self.frame_dirty or self.anim_dirty):
            return
        # A strip write blocks for ~30 us a pixel (and the frame takes ms to
        # render): do it while the scanner is locked out after a dart (it
        # could not take another one anyway) or when no dart can score.
        # While one can, a change of the game is written once it has waited
        # LED_QUIET_MS, which can block a scan for a frame's length: a
        # contact shorter than that landing exactly then would be missed. A
        # gift's flash does not force frames: after the dart its square
        # shows lit (the frame written in the lockout) until the next moment
        # no dart can score, or the flash's end, which does force one.
        if self.scanner.state not in (scanner.LOCKOUT, scanner.RELEASE) and g is not None and g.phase == rules.PLAY:
            if not self.frame_dirty:
                return
            if self.frame_since == 0:
                self.frame_since = now or 1
            if scanner.ticks_diff(now, self.frame_since) < LED_QUIET_MS:
                at = scanner.ticks_add(self.frame_since, LED_QUIET_MS)  # or the flash's end, if sooner
                if self.strip_at < 0 or scanner.ticks_diff(at, self.strip_at) < 0:
                    self.strip_at = at
                return
        frame = r.render(g, now, self.scan_point)
        self.frame_dirty = False
        self.anim_dirty = False
        self.frame_since = 0
        if frame != self.last_frame:
            self.last_frame = bytes(frame)
            self.scan_point()  # the write itself blocks the scan: nothing more before it
            self.board.strip_write(frame)

    def boot(self):
        self.emit("boot", {"version": VERSION, "protocol": protocol.PROTOCOL, "board": self.prof.name,
                           "restored": self.game is not None})
        for n in self.notices:
            self.emit("storage", n)
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
                self.emit("error", {"msg": "%s: %s; resetting" % (type(e).__name__, e), "errors": self.errors + 1})
                self.flush()
            finally:
                board.reset()
        self.flush()
        # the REPL's bytes go back while 0x03 is still data (handover.give_back)
        if self.leaving == handover.TO_RAW:
            handover.give_back(b"\x01" + self.left_over)
        elif self.left_over:
            handover.give_back(self.left_over)
        board.serial_raw(False)
        board.stopped()

    def _loop(self):
        """Scan; between scans, serve the scanner's events and a slice of the
        service. Returns once the port is handed over."""
        board = self.board
        sc = self.scanner
        snap = sc.snap
        while True:
            if sc.calm:  # nothing to vote on: read in a burst, step on a closure
                if sc.qhead != sc.qtail:
                    # a scan point inside long work found a dart, and the
                    # scanner re-armed before the work ended: serve it now,
                    # not after a burst that may last a second
                    self._serve()
                    if self.leaving:
                        return
                    continue
                n = BURST
                until = -1
                q = None  # output the board feeds to the UART inside a quiet burst
                if not self.slice and not self.serial_run and self.buttons.idle:
                    self.lean = False
                    due = self.due
                    if not due:  # a round of slices found nothing to do
                        n = QUIET
                    elif due == DUE_STRIP and self.strip_waits:  # nothing until the frame is due
                        n = QUIET
                        until = self.strip_at
                    if n == QUIET:
                        if self._outq and self._paced:
                            # the UART takes more once its FIFO has drained. A
                            # long reply needs a FIFO load every 11 ms for a
                            # quarter second: the board writes each between
                            # two of its reads and reads on. Ending the burst
                            # for it would cost the loop's bookkeeping and the
                            # app's own pacing each time, about a millisecond
                            # of bytecode
                            q = self._outq
                        self.feeds = FEED_EVERY  # the next serial slice checks in with the watchdog
                k = board.scan_idle(snap, n, until, q, self._outpos, self._tx_end)
                sc.scans += k
                if q is not None:  # what the board wrote meanwhile
                    self._tx_end = board.tx_end
                    self._sent(board.tx_pos)
                if k == n or board.woke:  # all open: no step, so no event; a service slice
                    # a quiet burst that ran its course or reached its time:
                    # a lean round; input or a button: all five slices
                    self.lean = n == QUIET and board.woke != WOKE_INPUT
                    board.woke = 0
                    self.passes = SERVICE_EVERY
                    if n == QUIET and not self.lean:
                        self.scan_point()  # input woke it: a request may be landing with a dart (see _service)
                    self._serve()
                    if self.leaving:
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
                    # no dart can score until the scanner re-arms: the time
                    # for the service, a slice every pass, so that what the
                    # dart set going is done before it can cost one
                    self.passes = SERVICE_EVERY
                elif st == scanner.IDLE:  # re-armed, or idle with a stuck crossing masked
                    self.passes += 1
                    if was == scanner.RELEASE and not self.due and not self.serial_run and self.buttons.idle:
                        # re-armed, every slice served many times over in
                        # the lockout: the rest of the round would only
                        # leave the matrix unread while a dart may come
                        self.slice = 0
                # in the window (3 ms) a dart is being read: no slice until
                # its hit, so the reads decide it and its lockout starts on time
            if sc.qhead != sc.qtail or self.passes >= SERVICE_EVERY:
                self._serve()
                if self.leaving:
                    return

    def _serve(self):
        """The scanner's events (a scan point inside long work may have left
        one, even a whole dart, while the loop was calm) and a service slice.
        A bug in serving a request must not stop the scanner: report it and
        carry on."""
        try:
            sc = self.scanner
            while sc.qhead != sc.qtail:
                self._scanner_event(sc.pop())
            if self.passes >= SERVICE_EVERY:
                self.passes = 0
                self._service()
        except Exception as e:
            self._failed(e)

    def _failed(self, e):
        self.errors += 1
        self.passes = 0
        try:
            self.emit("error", {"msg": "%s: %s" % (type(e).__name__, e), "errors": self.errors})
        except Exception:
            pass


def main():
    App().run()

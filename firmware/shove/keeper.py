# The game's bookkeeping, apart from the loop: the game in play and its
# journal on flash, the segment map and the ignore rules, and what acts on
# its own (auto next, the computer's visit). A dart's whole path, from the
# scanner's hit to its event and the strip's "a frame is due", runs here.
# Every change is stored on flash before its reply or event goes out, so a
# power cut loses at most the change not yet acknowledged.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import gc

from shove import Refused, events, jrec, jstore, release, rules, segments, ticks_add, ticks_diff
from shove.settings import GAME_FILE  # noqa: F401 (shove/request.py's `save` writes it)

# Past this many records the journal is rewritten whole (undone actions
# dropped): it keeps the file, read whole at boot, under 2 KB.
_JOURNAL_MAX_RECORDS = const(600)
_JOURNAL_HARD_MAX = const(700)  # ... or anywhere past this (a visit of undos)
UNMAPPED = 255  # profile.UNMAPPED: a crossing with no segment
CPU_MODULES = ("cpu", "throwing")  # the computer player's code: loaded for a game or a hint that needs it
RETRY_MS = 1000  # a step on its own the flash refused (auto next) is tried again no sooner than this
_mem_free = getattr(gc, "mem_free", None)  # MicroPython's (CPython has none: it collects every time)


class Keeper:
    """The parts it works with come in: the board (its flash and clock), the
    strip's renderer, the configuration, and three callbacks: emit(name,
    fields) sends an event, changed() says the game changed (a frame is due,
    the timers may act), tick() reads the matrix from inside long work."""

    def __init__(self, board, renderer, config, cols, emit, changed, tick):
        self.board = board
        self.renderer = renderer
        self.config = config
        self.cols = cols
        self.emit = emit
        self.changed = changed
        self.tick = tick
        self.map = None  # segment code a crossing (row * cols + col)
        self.game = None
        self.jrecs = 0  # records in the journal (the next one's sequence number)
        self.jstore = jstore.Store()  # where they go on littlefs
        self.jdirty = False  # the file must be rewritten before the next append
        self.ignored = 0  # hits while darts are pulled (hold) or no game runs
        self.darts = 0
        self.hold_since = -1  # tick (ms) the hold began, for auto next; -1: none
        self.auto = None  # throws the visits of computer sides (cpu.Autoplay, loaded when needed)
        self.gc_floor = 0  # free heap below which a dart's lockout collects (see collect)

    # ---- storage --------------------------------------------------------------------
    # (a new game, `end`, `undo` and hints are shove/request.py's: command time only)
    def _rewrite(self):
        from shove import journal  # a whole journal: a new game, or a long one's log made short again

        try:
            data = journal.encode(self.game)
        finally:
            release("journal", "view")
        self.jstore.write(data, self.game.moves(), self.board.write_file)
        self.jrecs = self.game.moves()
        self.jdirty = False

    def _log(self, action, rollback):
        """Store one action (already applied in RAM) by appending its record;
        a full rewrite after a failed append, or when the log has grown long
        (at `next`, the player change: no dart of a visit is due there, so the
        erases it costs blind the scanner when it loses nothing)."""
        g = self.game
        ended = action == rules.NEXT_ACTION
        try:
            if self.jdirty or (ended and self.jrecs >= _JOURNAL_MAX_RECORDS) or self.jrecs >= _JOURNAL_HARD_MAX:
                self._rewrite()
            else:
                self.jstore.append(jrec.record(action, self.jrecs), self.board.sync_write)
                self.jrecs += 1
        except OSError as e:
            # part of the record may be on flash: the next save rewrites the file
            self.jdirty = True
            rollback()
            release("view")  # a dart's rollback is an undo (view.undo)
            raise Refused("storage", "the flash refused the write (%s); nothing changed" % e)
        if ended:
            try:
                self.jstore.boundary(g.rules.darts)
            except OSError:
                pass  # the next record makes the directory, or reports the flash

    # ---- the game ---------------------------------------------------------------------
    def need(self):
        if self.game is None:
            raise rules.RuleError("no_game", "no game: start one with new")
        return self.game

    def state(self):
        try:
            st = self.game.to_state(self.tick)
        finally:
            release("view")  # the state's builder (loaded by to_state): for a reply or an event only
        st["ignored"] = self.ignored
        return st

    def _held(self, g):
        self.hold_since = self.board.ticks_ms() if g.phase == rules.HOLD else -1

    def throw(self, code, src, cell=None):
        """Score a dart (from the matrix, the host or the computer); store it,
        then return its event's fields."""
        g = self.need()
        turn = g.turn
        result = g.throw(code)
        self._log(code, g.undo)
        r = self.renderer
        r.hint_at = -1  # a hint is for the dart just thrown
        self.darts += 1
        gifts = result[2]
        if gifts:
            r.gift(gifts, g.value(code)[0], self.board.ticks_ms())
        self.changed()
        self._held(g)
        return events.dart(g, code, src, turn, result, cell)

    def announce(self, ev):
        """A dart's event, and the win it made."""
        self.emit("dart", ev)
        if self.game.phase == rules.OVER:
            self.emit("win", self.win())

    def win(self, st=None):
        g = self.game
        return {"winner": g.winner, "name": g.names[g.winner], "state": st or self.state()}

    def next(self):
        """The next visit: (the state, the events it makes)."""
        g = self.need()
        turn = g.turn
        g.next()
        self._log(rules.NEXT_ACTION, g.undo)
        self.changed()
        self.hold_since = -1
        st = self.state()
        evs = []
        if g.phase == rules.OVER:
            evs.append(("win", self.win(st)))
        elif g.turn != turn or g.phase == rules.PLAY:
            evs.append(("visit", {"turn": g.turn, "thrower": g.thrower(), "state": st}))
        self.collect(True)  # a visit starts with the heap's garbage gone
        return st, evs

    def collect(self, now=False):
        """A collection where its pause costs no dart (otherwise one comes
        when the heap fills, at any moment): at `next` (now=True: the darts
        are being pulled) and in a dart's lockout (the loop's, before the
        dart's frame) once the garbage since the last one has taken half the
        heap it left free. It marks the whole
        live heap, the longest stretch of a dart's work (about 15 ms of the
        ESP32 model's 60 ms lockout, docs/performance.md), so not after every
        dart; the other half stays for requests until the next dart."""
        if now or _mem_free is None or _mem_free() < self.gc_floor:
            gc.collect()
            self.gc_floor = _mem_free() // 2 if _mem_free is not None else 0

    def advance(self):
        """`next`, from the board itself (a button, auto next, the computer): its events go out."""
        for ev, fields in self.next()[1]:
            self.emit(ev, fields)

    def drop_cpu(self):
        """No side of the board's any more: the computer's code and state go."""
        if self.auto is not None:
            self.auto = None
            release(*CPU_MODULES)

    # ---- a hit from the scanner ---------------------------------------------------------
    def hit(self, row, col):
        """A dart on the matrix: its crossing through the map and the ignore
        rules to the referee, its record on flash, its event."""
        if self.config["learn"]:
            self.emit("raw", {"row": row, "col": col})
            return
        code = self.map[row * self.cols + col]
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
            ev = self.throw(code, "matrix", (row, col))
        except Refused as e:  # the flash refused it: not scored
            self.emit("refused", {"seg": segments.name(code), "row": row, "col": col, "error": e.code, "msg": e.msg})
            return
        self.announce(ev)

    # ---- what acts on its own ---------------------------------------------------------------
    def timers(self):
        """The computer's visit and auto next; False once neither can act
        on its own until the game next changes."""
        g = self.game
        if g is None:
            return False
        if g.cpu[g.turn] and self.auto is None:
            from shove.cpu import Autoplay

            self.auto = Autoplay()
        auto = self.config["auto_next_ms"]
        hold = auto and g.phase == rules.HOLD and self.hold_since != -1
        if self.auto or hold:
            now = self.board.ticks_ms()
            if self.auto:
                self.auto.step(self, now)
            if hold and ticks_diff(now, self.hold_since) >= auto:
                try:
                    self.advance()
                except Refused as e:  # the flash refused: the hold stays; tried again later
                    self.hold_since = ticks_add(now, RETRY_MS - auto) if auto < RETRY_MS else now
                    self.emit("refused", {"src": "auto_next", "error": e.code, "msg": e.msg})
        g = self.game
        return g is not None and bool(hold or (g.cpu[g.turn] and g.phase != rules.OVER))

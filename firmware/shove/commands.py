# The protocol's command handlers and the buttons' actions, apart from the
# main loop: one `cmd_NAME` method a command. Built from the parts they
# act on (the game's keeper, the board, the strip...) and callbacks into
# the loop (send a line, emit an event, read the matrix, its figures). A
# handler validates everything before it changes anything, returns the
# reply's fields, and appends the events that follow the reply to `after`.
import gc

from shove import buttons, handover, protocol, release, rules, segments

# Serial bytes taken in one slice (each a look and a one-byte read on the
# chip, then a step of the line buffer: some 60 us); a line is handled when
# its last byte is in. While more keeps coming, later slices take more at a
# time and follow each other (SERIAL_RUN in a row, then one other slice):
# bytes arrive every 87 us at 115200 baud into a 259-byte ring, and one
# left there when it is full is lost (tests/test_esp32_timing.py).
SERIAL_SLICE = 16
SERIAL_MORE = 64
SERIAL_RUN = 7
# handled by shove/extra.py, loaded for the command and let go after it
EXTRA = ("config", "diag", "end", "info", "leds", "map", "stats")


class Commands:
    def __init__(self, keeper, board, prof, renderer, strip, tx, emit, tick, figures, changed):
        self.keeper = keeper
        self.board = board
        self.prof = prof
        self.renderer = renderer
        self.strip = strip
        self.tx = tx  # the console's queue (shove/pacing.py)
        self.emit = emit
        self.tick = tick  # a read of the matrix from inside long work
        self.figures = figures  # the loop's own figures (stats)
        self.changed = changed  # the game or the strip's owner changed
        self.map_staged = None  # cells of a map sent in several lines
        self.lines = protocol.LineBuffer()
        self._sbuf = bytearray(SERIAL_MORE)  # the console's bytes of one serial slice
        self._sview = memoryview(self._sbuf)
        self.watch = handover.Watch()
        self.leaving = 0  # set to handover.TO_REPL or TO_RAW to end the loop
        self.left_over = b""  # bytes read after the hand-over's, given back to the REPL
        t = prof.timing
        self.buttons = buttons.Buttons(("next", "undo", "new"), t["debounce_ms"], t["long_press_ms"])
        self._btn_events = []

    # ---- the serial port's lines ----------------------------------------------------------
    def read(self, most):
        """Up to `most` bytes from the port; True when it stopped at that
        bound (more may be waiting: the next slice reads on, so input at the
        full baud rate never backs up into the UART's ring)."""
        buf = self._sbuf
        self.tick()  # the take is a look and a read a byte on the chip (~30 us each): a read before and after
        n = self.board.serial_take(buf, most)
        if not n:
            return False
        self.tick()
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
                    self.tick()
                    self.handle_line(line)
            elif act != handover.DROP:
                self.leaving = act  # the REPL's turn: what came after is the REPL's too
                self.left_over = bytes(buf[i:n])
                return False
        return n == most

    def give_back(self):
        """The loop has ended for the REPL: the bytes that came after the
        hand-over are the REPL's (shove/giveback.py)."""
        from shove.giveback import give_back

        if self.leaving == handover.TO_RAW:
            give_back(b"\x01" + self.left_over)
        elif self.left_over:
            give_back(self.left_over)


    # ---- the protocol's commands ------------------------------------------------------------
    def handle_line(self, line):
        send = self.tx.put
        if line is protocol.LineBuffer.TOO_LONG:
            send(protocol.error(None, "too_long", "a line is at most %d bytes" % protocol.MAX_LINE))
            return
        if not line.strip():
            return  # blank lines (a terminal's Enter) are ignored
        id_ = None
        after = []
        try:
            cmd = protocol.decode(line, self.tick)
            id_ = cmd.get("id")
            name = cmd["cmd"]
            handler = getattr(self, "cmd_" + name, None) if name.isalpha() else None
            if handler is not None:
                fields = handler(cmd, after)
            elif name in EXTRA:
                fields = self.extra(name, cmd, after)
            else:
                raise protocol.ProtoError("unknown_cmd", "unknown command %r" % name[:20])
            line = protocol.ok(id_, fields, self.tick)
            self.tick()  # the line's last pieces joined; its queueing next
            send(line)
        except protocol.ProtoError as e:
            send(protocol.error(e.id if id_ is None else id_, e.code, e.msg))
        except rules.RuleError as e:
            send(protocol.error(id_, e.code, e.msg))
        except MemoryError:
            gc.collect()
            send(protocol.error(id_, "no_memory", "the request did not fit in memory"))
        except OSError as e:  # a config or map write the flash refused: nothing was applied
            send(protocol.error(id_, "storage", "the flash refused the write (%s); nothing changed" % e))
            return
        for name, fields in after:
            if name == "reset":
                self.tx.flush()
                self.board.reset(deliberate=True)  # marked: not a bad start (safeboot)
            self.emit(name, fields)

    def extra(self, name, cmd, after):
        """A rarely used command (EXTRA): its module is loaded for it and let
        go after, so its code is in the heap only meanwhile."""
        from shove import extra

        try:
            return getattr(extra, "cmd_" + name)(self, cmd, after)
        finally:
            release("extra", "settings", "profile")

    def stats(self):
        return self.extra("stats", None, None)["stats"]

    def cmd_new(self, cmd, after):
        st = self.keeper.new(cmd.get("players"), cmd.get("teams"), cmd.get("variant", "classic"), cmd.get("rules"),
                             cmd.get("cpu"), cmd.get("seed"))
        after.append(("new", {"state": st}))
        return {"state": st}

    def cmd_state(self, cmd, after):
        k = self.keeper
        return {"state": k.state() if k.game else None}

    def cmd_throw(self, cmd, after):
        try:
            code = segments.encode(cmd.get("seg"))
        except segments.SegError as e:
            raise rules.RuleError("bad_seg", str(e))
        k = self.keeper
        after.append(("dart", k.throw(code, "host")))
        st = k.state()
        if k.game.phase == rules.OVER:
            after.append(("win", k.win(st)))
        return {"state": st}

    def cmd_hint(self, cmd, after):
        level = cmd.get("level", 3)
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= rules.MAX_LEVEL:
            raise protocol.ProtoError("bad_level", "level must be a whole number from 1 to %d" % rules.MAX_LEVEL)
        return {"hint": self.keeper.hint(level)}

    def cmd_press(self, cmd, after):
        row = protocol.want_int(cmd, "row", 0, self.prof.rows - 1, "bad_cell")
        col = protocol.want_int(cmd, "col", 0, self.prof.cols - 1, "bad_cell")
        ms = protocol.want_int(cmd, "ms", 1, 10000, "bad_cell")
        if not self.board.press(row, col, ms):
            raise protocol.ProtoError("busy", "too many closures scheduled at once")
        return None

    def cmd_next(self, cmd, after):
        st, events = self.keeper.next()
        after.extend(events)
        return {"state": st}

    def cmd_undo(self, cmd, after):
        st = self.keeper.undo()
        after.append(("undo", {"state": st}))
        return {"state": st}

    def cmd_reset(self, cmd, after):
        after.append(("reset", None))
        return None

    # ---- the board's buttons ----------------------------------------------------------------
    def buttons_slice(self):
        """The buttons' slice: debounced presses, then what each does."""
        board = self.board
        bt = self.buttons
        if board.buttons_down() or not bt.idle:
            now = board.ticks_ms()
            out = self._btn_events
            for i in range(3):
                bt.update(i, board.button(i), now, out)
            bt.idle = bt.settled()
            while out:
                name, kind = out.pop(0)
                self.button(name, kind)

    def button(self, name, kind):
        k = self.keeper
        try:
            if name == "next" and kind == buttons.PRESS:
                k.advance()
            elif name == "undo" and kind == buttons.SHORT:
                self.emit("undo", {"state": k.undo()})
            elif name == "undo" and kind == buttons.LONG:  # held: the coach blinks the bed to aim at
                self.emit("hint", {"hint": k.hint(3)})
            elif name == "new" and kind == buttons.SHORT:
                self.emit("new", {"state": k.new(k.config["players"], None, k.config["variant"])})
            elif name == "new" and kind == buttons.LONG:
                names = sorted(rules.VARIANTS)
                nxt = names[(names.index(k.config["variant"]) + 1) % len(names)]
                self.extra("config", {"set": {"variant": nxt}}, [])
                self.emit("new", {"state": k.new(k.config["players"], None, nxt)})
        except (rules.RuleError, protocol.ProtoError) as e:
            self.emit("refused", {"button": name, "error": e.code, "msg": e.msg})

# The protocol's command handlers, apart from the main loop: one `cmd_NAME`
# method a command, mixed into the App. A handler validates everything before
# it changes anything, returns the reply's fields, and appends the events that
# follow the reply to `after`.
import gc

from shove import protocol, release, rules, segments

# handled by shove/extra.py, loaded for the command and let go after it
EXTRA = ("config", "diag", "end", "info", "leds", "map", "stats")
CPU_MODULES = ("cpu", "throwing")  # the computer player's code: loaded for a game or a hint that needs it


class Commands:
    # ---- commands ------------------------------------------------------------------------
    def handle_line(self, line):
        if line is protocol.LineBuffer.TOO_LONG:
            self.send(protocol.error(None, "too_long", "a line is at most %d bytes" % protocol.MAX_LINE))
            return
        if not line.strip():
            return  # blank lines (a terminal's Enter) are ignored
        id_ = None
        after = []
        try:
            cmd = protocol.decode(line, self.scan_point)
            id_ = cmd.get("id")
            name = cmd["cmd"]
            handler = getattr(self, "cmd_" + name, None) if name.isalpha() else None
            if handler is not None:
                fields = handler(cmd, after)
            elif name in EXTRA:
                fields = self.extra(name, cmd, after)
            else:
                raise protocol.ProtoError("unknown_cmd", "unknown command %r" % name[:20])
            line = protocol.ok(id_, fields, self.scan_point)
            self.scan_point()  # the line's last pieces joined; its queueing next
            self.send(line)
        except protocol.ProtoError as e:
            self.send(protocol.error(e.id if id_ is None else id_, e.code, e.msg))
        except rules.RuleError as e:
            self.send(protocol.error(id_, e.code, e.msg))
        except MemoryError:
            gc.collect()
            self.send(protocol.error(id_, "no_memory", "the request did not fit in memory"))
        except OSError as e:  # a config or map write the flash refused: nothing was applied
            self.send(protocol.error(id_, "storage", "the flash refused the write (%s); nothing changed" % e))
            return
        for name, fields in after:
            if name == "reset":
                self.flush()
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
        st = self.do_new(cmd.get("players"), cmd.get("teams"), cmd.get("variant", "classic"), cmd.get("rules"),
                         cmd.get("cpu"), cmd.get("seed"))
        after.append(("new", {"state": st}))
        return {"state": st}

    def cmd_state(self, cmd, after):
        return {"state": self.state() if self.game else None}

    def cmd_throw(self, cmd, after):
        try:
            code = segments.encode(cmd.get("seg"))
        except segments.SegError as e:
            raise rules.RuleError("bad_seg", str(e))
        after.append(("dart", self.do_throw(code, "host")))
        st = self.state()
        if self.game.phase == rules.OVER:
            after.append(("win", self._win(st)))
        return {"state": st}

    def cmd_hint(self, cmd, after):
        level = cmd.get("level", 3)
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= rules.MAX_LEVEL:
            raise protocol.ProtoError("bad_level", "level must be a whole number from 1 to %d" % rules.MAX_LEVEL)
        return {"hint": self.do_hint(level)}

    def do_hint(self, level):
        """The coach's target for the thrower (also blinked on the strip) and why."""
        from shove import coach  # the coach is let go after each hint

        g = self._need_game()
        try:
            h = coach.hint(g, level)
        finally:
            release("coach")
            if self.auto is None:  # the computer's modules the coach loaded: no side of the board's needs them
                release(*CPU_MODULES)
        h["side"] = g.turn
        h["level"] = level
        bi, _ = g.value(segments.encode(h["seg"]))
        self.renderer.hint(bi, self.board.ticks_ms())
        self._changed()
        return h

    def cmd_press(self, cmd, after):
        row = protocol.want_int(cmd, "row", 0, self.prof.rows - 1, "bad_cell")
        col = protocol.want_int(cmd, "col", 0, self.prof.cols - 1, "bad_cell")
        ms = protocol.want_int(cmd, "ms", 1, 10000, "bad_cell")
        if not self.board.press(row, col, ms):
            raise protocol.ProtoError("busy", "too many closures scheduled at once")
        return None

    def cmd_next(self, cmd, after):
        st, events = self.do_next()
        after.extend(events)
        return {"state": st}

    def cmd_undo(self, cmd, after):
        st = self.do_undo()
        after.append(("undo", {"state": st}))
        return {"state": st}

    def cmd_reset(self, cmd, after):
        after.append(("reset", None))
        return None

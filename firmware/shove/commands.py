# The protocol's command handlers, apart from the main loop: one `cmd_NAME`
# method a command, mixed into the App. A handler validates everything before
# it changes anything, returns the reply's fields, and appends the events that
# follow the reply to `after`.
import gc
import json
import sys

from shove import profile, protocol, rules, segments
from shove.boards import idf_heap
from shove.settings import CONFIG_FILE, MAP_FILE, VERSION, check_config


def _mem_peak():
    """Peak heap use since boot, where the port counts it (unix does; ESP32 builds usually not)."""
    try:
        import micropython

        return micropython.mem_peak()
    except (ImportError, AttributeError):
        return None


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
            handler = getattr(self, "cmd_" + cmd["cmd"], None) if cmd["cmd"].isalpha() else None
            if handler is None:
                raise protocol.ProtoError("unknown_cmd", "unknown command %r" % cmd["cmd"][:20])
            fields = handler(cmd, after)
            self.send(protocol.ok(id_, fields, self.scan_point))
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

    def cmd_diag(self, cmd, after):
        # bring-up diagnostics (hapenny doctor): loaded when first asked for
        from shove import diag

        return diag.run(self, cmd)

    def cmd_info(self, cmd, after):
        return {"version": VERSION, "protocol": protocol.PROTOCOL, "board": self.prof.name,
                "matrix": {"rows": self.prof.rows, "cols": self.prof.cols}, "platform": sys.platform,
                "variants": sorted(rules.VARIANTS), "leds": self.renderer.count,
                "strip": {"beds": self.renderer.beds, "per_side": self.renderer.per_side,
                          "status": self.renderer.status}}

    def cmd_new(self, cmd, after):
        st = self.do_new(cmd.get("players"), cmd.get("teams"), cmd.get("variant", "classic"), cmd.get("rules"),
                         cmd.get("cpu"), cmd.get("seed"))
        after.append(("new", {"state": st}))
        return {"state": st}

    def cmd_end(self, cmd, after):
        """Discard the game (the board then has none, as when new)."""
        old = self.game
        self.game = None
        self._save_game(lambda: setattr(self, "game", old))
        self._changed()
        self.hold_since = -1
        after.append(("new", {"state": None}))
        return {"state": None}

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
        from shove import coach

        g = self._need_game()
        h = coach.hint(g, level)
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

    def cmd_map(self, cmd, after):
        # A full map does not fit one 512-byte line: `"more": true` stages
        # cells, and the chunk without it applies the whole map at once.
        if "set" in cmd:
            cells = cmd["set"]
            staged = self._map_staged
            self._map_staged = None
            if not isinstance(cells, list):
                raise protocol.ProtoError("bad_map", "set takes a list of [row, col, segment]")
            if staged:
                cells = staged + cells
            try:
                if len(cells) > self.prof.rows * self.prof.cols:
                    raise profile.ProfileError("more cells than the matrix has crossings")
                table = profile.parse_map(cells, self.prof.rows, self.prof.cols)
            except profile.ProfileError as e:
                raise protocol.ProtoError("bad_map", str(e))
            if cmd.get("more") is True:
                self._map_staged = cells
                return {"staged": len(cells)}
            self.board.write_file(MAP_FILE, json.dumps(profile.map_cells(table, self.prof.cols)).encode())
            self.map = table
        return {"cells": profile.map_cells(self.map, self.prof.cols)}

    def cmd_leds(self, cmd, after):
        f = self.last_frame
        return {"pixels": [[f[i], f[i + 1], f[i + 2]] for i in range(0, len(f), 3)]}

    def cmd_config(self, cmd, after):
        if "set" in cmd:
            new = dict(self.config)
            if not isinstance(cmd["set"], dict):
                raise protocol.ProtoError("bad_config", "config set takes an object")
            new.update(cmd["set"])
            check_config(new)
            self.board.write_file(CONFIG_FILE, json.dumps(new).encode())
            self.config = new
            self.renderer.brightness = self._brightness()
            self._changed()
        return {"config": self.config}

    def cmd_stats(self, cmd, after):
        return {"stats": self.stats()}

    def cmd_reset(self, cmd, after):
        after.append(("reset", None))
        return None

    def stats(self):
        gc.collect()
        return {"scans": self.scanner.scans, "darts": self.darts,
                "scanner": ("idle", "window", "lockout", "release")[self.scanner.state], "ignored": self.ignored,
                "dropped": self.scanner.dropped, "queued": self.scanner.pending(), "errors": self.errors, "ctrl_c": self.watch.lone, "mem_alloc": gc.mem_alloc(), "mem_free": gc.mem_free(),
                "strip_count": self.renderer.count, "stalls": getattr(self.board, "stalls", 0),
                "idles": getattr(self.board, "idles", 0), "slices": self.slices, "armed_slices": self.armed_slices,
                "mem_peak": _mem_peak(), "idf_heap": idf_heap()}


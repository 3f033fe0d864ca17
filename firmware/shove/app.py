# The firmware's main loop: scanner first, everything else in between scans.
#
# Each pass reads the matrix and steps the scanner (no heap use); every few
# passes `_service` polls the serial port, buttons and control channel, and
# writes the LED frame when it changed. Every change to the game, the
# configuration or the map is stored on flash before its reply or event goes
# out, so a power cut loses at most the change not yet acknowledged.
import gc
import json
import select
import sys

from shove import buttons, journal, leds, profile, protocol, rules, scanner, segments, store
from shove.boards import open_board

VERSION = "0.1.0"
PROFILE_FILE = "profile.json"
CONFIG_FILE = "config.json"
MAP_FILE = "map.json"
GAME_FILE = "game.jnl"
SERVICE_EVERY = 8  # scans between service passes
LED_QUIET_MS = 250  # write a pending frame anyway after this long

DEFAULT_CONFIG = {
    "learn": False,  # report closures as `raw` events instead of scoring
    "auto_next_ms": 0,  # automatic player change after the last dart (0: off)
    "brightness": -1,  # LED brightness 0..255; -1: the profile's
    "variant": "classic",  # what the new-game button starts
    "players": ["Home", "Away"],  # who the new-game button starts it for
}


def check_config(new):
    """Validate a whole configuration; ProtoError('bad_config') otherwise."""
    def bad(msg):
        return protocol.ProtoError("bad_config", msg)

    if not isinstance(new, dict):
        raise bad("config set takes an object")
    for k in new:
        if k not in DEFAULT_CONFIG:
            raise bad("unknown setting %r; settings: %s" % (str(k)[:20], ", ".join(sorted(DEFAULT_CONFIG))))
    v = new.get("learn", False)
    if not isinstance(v, bool):
        raise bad("learn must be true or false")
    for key, lo, hi in (("auto_next_ms", 0, 600000), ("brightness", -1, 255)):
        v = new.get(key, DEFAULT_CONFIG[key])
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise bad("%s must be a whole number from %d to %d" % (key, lo, hi))
    if new.get("variant", "classic") not in rules.VARIANTS:
        raise bad("variant must be one of " + ", ".join(sorted(rules.VARIANTS)))
    try:
        rules.make_sides(new.get("players", DEFAULT_CONFIG["players"]))
    except rules.RuleError as e:
        raise bad("players: " + e.msg)


def _mem_peak():
    """Peak heap use since boot, where the port counts it (unix does; ESP32 builds usually not)."""
    try:
        import micropython

        return micropython.mem_peak()
    except (ImportError, AttributeError):
        return None


class App:
    def __init__(self, board=None, out=None):
        self.out = out or sys.stdout
        self.notices = []  # storage problems found at boot, sent after `boot`
        self.prof = self._load_profile()
        self.board = board or open_board(self.prof)
        t = self.prof.timing
        self.scanner = scanner.Scanner(
            self.prof.rows, self.prof.cols, t["window_us"], t["lockout_ms"] * 1000,
            t["rearm_ms"] * 1000, t["stuck_ms"] * 1000)
        self.config = self._load_config()
        self.map = self._load_map()
        L = self.prof.leds
        self.renderer = leds.Renderer(L["beds"], L["per_side"], L["status"], self._brightness())
        self.buttons = buttons.Buttons(("next", "undo", "new"), t["debounce_ms"], t["long_press_ms"])
        self._btn_events = []
        self.game = self._load_game()
        self.lines = protocol.LineBuffer()
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)
        self._b1 = bytearray(1)
        self.ignored = 0  # hits while darts are pulled (hold) or no game runs
        self.darts = 0
        self.frame_dirty = True
        self.frame_since = 0
        self.last_frame = bytes(3 * self.renderer.count)
        self.hold_since = -1
        self.passes = 0
        self.errors = 0  # unexpected exceptions caught by the loop
        self._map_staged = None  # cells of a map sent in several lines

    # ---- storage --------------------------------------------------------------------
    def _notice(self, path, msg):
        self.notices.append({"file": path, "error": msg})

    def _read_json(self, path):
        data = store.read(path)
        if data is None:
            return None
        try:
            return json.loads(data)
        except Exception:
            store.quarantine(path)
            self._notice(path, "damaged: not JSON; defaults used")
            return None

    def _load_profile(self):
        d = self._read_json(PROFILE_FILE)
        if d is not None:
            try:
                return profile.Profile(d)
            except profile.ProfileError as e:
                store.quarantine(PROFILE_FILE)
                self._notice(PROFILE_FILE, "invalid: %s; the built-in generic-8x8 is used" % e)
        return profile.Profile(profile.default_dict())

    def _load_config(self):
        cfg = dict(DEFAULT_CONFIG)
        d = self._read_json(CONFIG_FILE)
        if d is not None:
            try:
                check_config(d)
                cfg.update(d)
            except protocol.ProtoError as e:
                store.quarantine(CONFIG_FILE)
                self._notice(CONFIG_FILE, "invalid: %s; defaults used" % e.msg)
        return cfg

    def _load_map(self):
        d = self._read_json(MAP_FILE)
        if d is not None:
            try:
                return profile.parse_map(d, self.prof.rows, self.prof.cols)
            except profile.ProfileError as e:
                store.quarantine(MAP_FILE)
                self._notice(MAP_FILE, "invalid: %s; the profile's map is used" % e)
        return bytearray(self.prof.map)

    def _load_game(self):
        data = store.read(GAME_FILE)
        if data is None:
            return None
        try:
            return journal.decode(data)
        except journal.JournalError as e:
            store.quarantine(GAME_FILE)
            self._notice(GAME_FILE, "%s; the game could not be restored" % e)
            return None

    def _save_game(self, rollback=None):
        """Store the game; if the flash refuses, undo the change in RAM too
        (rollback) and refuse the request, so RAM and flash never disagree."""
        try:
            if self.game is None:
                store.remove(GAME_FILE)
            else:
                self.board.write_file(GAME_FILE, journal.encode(self.game))
        except OSError as e:
            if rollback:
                rollback()
            raise protocol.ProtoError("storage", "the flash refused the write (%s); nothing changed" % e)

    def _brightness(self):
        b = self.config["brightness"]
        return self.prof.brightness if b < 0 else b

    # ---- output ------------------------------------------------------------------------
    def send(self, line):
        self.out.write(line)
        self.out.write("\n")

    def emit(self, name, fields=None):
        self.send(protocol.event(name, fields))

    def state(self):
        st = self.game.to_state()
        st["ignored"] = self.ignored
        return st

    def _changed(self):
        self.frame_dirty = True

    # ---- the game ---------------------------------------------------------------------
    def _need_game(self):
        if self.game is None:
            raise rules.RuleError("no_game", "no game: start one with new")
        return self.game

    def do_throw(self, code, src, cell=None):
        """Score a dart (from the matrix or the host); store it, then report it."""
        g = self._need_game()
        turn = g.turn
        k, own, gifts, lost = g.throw(code)
        self._save_game(g.undo)
        self.darts += 1
        bi, _ = g.value(code)
        if gifts:
            self.renderer.gift(gifts, bi, self.board.ticks_ms())
        self._changed()
        self.hold_since = self.board.ticks_ms() if g.phase == rules.HOLD else -1
        ev = {"seg": segments.name(code), "src": src, "marks": k, "own": own,
              "gifts": [list(x) for x in gifts], "lost": lost, "side": turn, "state": self.state()}
        if cell:
            ev["row"], ev["col"] = cell
        return ev

    def _after_dart(self, ev):
        self.emit("dart", ev)
        g = self.game
        if g.phase == rules.OVER:
            self.emit("win", {"winner": g.winner, "name": g.names[g.winner], "state": ev["state"]})

    def do_next(self):
        g = self._need_game()
        turn = g.turn
        g.next()
        self._save_game(g.undo)
        self._changed()
        self.hold_since = -1
        st = self.state()
        events = []
        if g.phase == rules.OVER:
            events.append(("win", {"winner": g.winner, "name": g.names[g.winner], "state": st}))
        elif g.turn != turn or g.phase == rules.PLAY:
            events.append(("visit", {"turn": g.turn, "thrower": g.thrower(), "state": st}))
        return st, events

    def do_undo(self):
        g = self._need_game()
        if not g.moves():
            raise rules.RuleError("nothing_to_undo", "nothing to undo")
        last = g.actions[g.moves() - 1]
        g.undo()
        self._save_game(lambda: g.apply(last))
        self._changed()
        self.hold_since = self.board.ticks_ms() if g.phase == rules.HOLD else -1
        return self.state()

    def do_new(self, players=None, teams=None, variant="classic", overrides=None):
        g = rules.new_game(players, teams, variant, overrides)  # validates; nothing changes on error
        old = self.game
        self.game = g
        self._save_game(lambda: setattr(self, "game", old))
        self._changed()
        self.hold_since = -1
        self.ignored = 0
        return self.state()

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
            cmd = protocol.decode(line)
            id_ = cmd.get("id")
            handler = getattr(self, "cmd_" + cmd["cmd"], None) if cmd["cmd"].isalpha() else None
            if handler is None:
                raise protocol.ProtoError("unknown_cmd", "unknown command %r" % cmd["cmd"][:20])
            fields = handler(cmd, after)
            self.send(protocol.ok(id_, fields))
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
                self.board.reset()
            self.emit(name, fields)

    def cmd_info(self, cmd, after):
        return {"version": VERSION, "protocol": protocol.PROTOCOL, "board": self.prof.name,
                "matrix": {"rows": self.prof.rows, "cols": self.prof.cols}, "platform": sys.platform,
                "variants": sorted(rules.VARIANTS), "leds": self.renderer.count,
                "strip": {"beds": self.renderer.beds, "per_side": self.renderer.per_side,
                          "status": self.renderer.status}}

    def cmd_new(self, cmd, after):
        st = self.do_new(cmd.get("players"), cmd.get("teams"), cmd.get("variant", "classic"), cmd.get("rules"))
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
        ev = self.do_throw(code, "host")
        after.append(("dart", ev))
        g = self.game
        if g.phase == rules.OVER:
            after.append(("win", {"winner": g.winner, "name": g.names[g.winner], "state": ev["state"]}))
        return {"state": ev["state"]}

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
                "dropped": self.scanner.dropped, "errors": self.errors, "mem_alloc": gc.mem_alloc(), "mem_free": gc.mem_free(),
                "strip_count": self.renderer.count, "stalls": getattr(self.board, "stalls", 0),
                "mem_peak": _mem_peak()}

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
        if code == profile.UNMAPPED:
            self.emit("unmapped", {"row": row, "col": col})
            return
        g = self.game
        if g is None or g.phase in (rules.HOLD, rules.OVER):
            self.ignored += 1
            why = "no_game" if g is None else ("hold" if g.phase == rules.HOLD else "over")
            self.emit("ignored", {"seg": segments.name(code), "row": row, "col": col, "why": why,
                                  "ignored": self.ignored})
            return
        try:
            ev = self.do_throw(code, "matrix", (row, col))
        except protocol.ProtoError as e:  # the flash refused it: not scored
            self.emit("refused", {"seg": segments.name(code), "row": row, "col": col, "error": e.code, "msg": e.msg})
            return
        self._after_dart(ev)

    # ---- buttons ----------------------------------------------------------------------------
    def _button(self, name, kind):
        try:
            if name == "next" and kind == buttons.PRESS:
                st, events = self.do_next()
                for ev, fields in events:
                    self.emit(ev, fields)
            elif name == "undo" and kind == buttons.PRESS:
                self.emit("undo", {"state": self.do_undo()})
            elif name == "new" and kind == buttons.SHORT:
                self.emit("new", {"state": self.do_new(self.config["players"], None, self.config["variant"])})
            elif name == "new" and kind == buttons.LONG:
                names = sorted(rules.VARIANTS)
                nxt = names[(names.index(self.config["variant"]) + 1) % len(names)]
                self.cmd_config({"set": {"variant": nxt}}, [])
                self.emit("new", {"state": self.do_new(self.config["players"], None, nxt)})
        except (rules.RuleError, protocol.ProtoError) as e:
            self.emit("refused", {"button": name, "error": e.code, "msg": e.msg})

    # ---- the loop ----------------------------------------------------------------------------
    def _read_serial(self):
        n = 0
        for _ in self.poll.ipoll(0):
            while n < 64 and self.poll.poll(0):
                if sys.stdin.buffer.readinto(self._b1) != 1:
                    return
                n += 1
                line = self.lines.feed(self._b1[0])
                if line is not None:
                    self.handle_line(line)
            return

    def _service(self):
        board = self.board
        board.feed()
        now = board.ticks_ms()
        self._read_serial()
        board.service(self)
        out = self._btn_events
        for i in range(3):
            self.buttons.update(i, board.button(i), now, out)
        while out:
            name, kind = out.pop(0)
            self._button(name, kind)
        g = self.game
        auto = self.config["auto_next_ms"]
        if auto and g is not None and g.phase == rules.HOLD and self.hold_since != -1:
            if scanner.ticks_diff(now, self.hold_since) >= auto:
                st, events = self.do_next()
                for ev, fields in events:
                    self.emit(ev, fields)
        self._leds(now)

    def _leds(self, now):
        g = self.game
        if self.renderer.animating(g, now):
            self.frame_dirty = True
        if not self.frame_dirty:
            return
        # A strip write blocks for ~30 us a pixel: do it while the scanner is
        # locked out after a dart (it could not take another one anyway), when
        # no dart can score, or when the frame has waited LED_QUIET_MS. The
        # last case (a gift's flash, a host command) can block a scan for a
        # frame's length at most every LED_QUIET_MS: a contact shorter than a
        # frame write landing exactly then would be missed.
        if self.frame_since == 0:
            self.frame_since = now or 1
        quiet = (self.scanner.state in (scanner.LOCKOUT, scanner.RELEASE) or g is None
                 or g.phase != rules.PLAY or scanner.ticks_diff(now, self.frame_since) >= LED_QUIET_MS)
        if not quiet:
            return
        frame = self.renderer.render(g, now)
        self.frame_dirty = False
        self.frame_since = 0
        if frame != self.last_frame:
            self.last_frame = bytes(frame)
            self.board.strip_write(frame)

    def boot(self):
        self.emit("boot", {"version": VERSION, "protocol": protocol.PROTOCOL, "board": self.prof.name,
                           "restored": self.game is not None})
        for n in self.notices:
            self.emit("storage", n)
        self.board.start_watchdog()

    def run(self):
        self.boot()
        board = self.board
        sc = self.scanner
        snap = sc.snap
        try:
            while True:
                board.read_matrix(snap)
                sc.step(board.ticks_us())
                if sc.qhead != sc.qtail or self.passes >= SERVICE_EVERY:
                    self._guarded()
                self.passes += 1
        finally:
            board.stopped()

    def _guarded(self):
        # A bug in serving a request must not stop the scanner or drop the
        # board to the REPL: report it and carry on. Ctrl-C still ends the loop.
        try:
            sc = self.scanner
            while sc.qhead != sc.qtail:
                self._scanner_event(sc.pop())
            if self.passes >= SERVICE_EVERY:
                self.passes = 0
                self._service()
        except Exception as e:
            self.errors += 1
            self.passes = 0
            try:
                self.emit("error", {"msg": "%s: %s" % (type(e).__name__, e), "errors": self.errors})
            except Exception:
                pass


def main():
    App().run()

# A command line's handling, loaded when a line has come in and let go once
# it is answered (Commands.handle_line): the strict JSON check, the decoding
# and the handlers of the commands a game uses. None of it runs for a dart,
# so none of it holds heap while darts are thrown (docs/performance.md, the
# heap); loading it costs a command some milliseconds of flash reads on the
# chip, never the scan loop. Rarely used commands are shove/extra.py's.
# A handler validates everything before it changes anything, returns the
# reply's fields, and appends the events that follow the reply to `after`.
import gc
import json
import sys

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import Refused, buttons, call, jrec, keeper, protocol, release, rules, segments, store

# handled by shove/extra.py, loaded for the command and let go after it
EXTRA = ("config", "diag", "end", "info", "leds", "map", "stats")


def valid_utf8(b):
    """Strict UTF-8 (no overlongs, surrogates or bytes past U+10FFFF): the
    MicroPython decoder lets some invalid sequences through."""
    i = 0
    n = len(b)
    while i < n:
        if b[i] < 0x80:
            i += 1
        else:
            i = _utf8(b, i, n)
            if i < 0:
                return False
    return True


# Strict JSON syntax, checked before json.loads: MicroPython's parser takes
# commas and colons as optional and any closing bracket for any opening one
# (it reads '{"cmd" "info"]' as {"cmd": "info"} and '{]' as {}), so noise
# on the line could otherwise pass as a command. One pass, no allocation:
# the open brackets go in a stack made with this module, at a command's
# loading (a line of MAX_LINE bytes cannot nest deeper than half of that).
_STACK = bytearray(protocol.MAX_LINE // 2 + 1)
_VALUE = const(0)  # a value must come
_ITEM = const(1)  # a value or ']' (just after '[')
_KEY = const(2)  # a string key must come
_MEMBER = const(3)  # a key or '}' (just after '{')
_AFTER = const(4)  # after a value: ',', a closing bracket, or the end


def _ws(b, i, n):
    while i < n and b[i] in b" \t\r\n":
        i += 1
    return i


def _string(b, i, n):
    """b[i] is the opening quote: the index after the closing one, or -1."""
    i += 1
    while i < n:
        c = b[i]
        if c == 34:  # "
            return i + 1
        if c == 92:  # backslash
            i += 1
            if i >= n:
                return -1
            c = b[i]
            if c == 117:  # \uXXXX
                if i + 4 >= n:
                    return -1
                for j in range(i + 1, i + 5):
                    if b[j] not in b"0123456789abcdefABCDEF":
                        return -1
                i += 5
            elif c in b'"\\/bfnrt':
                i += 1
            else:
                return -1
        elif c < 0x20:  # control characters must be escaped
            return -1
        elif c < 0x80:
            i += 1
        else:
            k = _utf8(b, i, n)
            if k < 0:
                return -1
            i = k
    return -1


def _utf8(b, i, n):
    """One strict UTF-8 sequence at b[i] (a lead byte): the index after it, or -1
    (no overlongs, surrogates or code points past U+10FFFF)."""
    c = b[i]
    if 0xC2 <= c <= 0xDF:
        k, lo, hi = 1, 0x80, 0xBF
    elif 0xE0 <= c <= 0xEF:
        k = 2
        lo = 0xA0 if c == 0xE0 else 0x80
        hi = 0x9F if c == 0xED else 0xBF
    elif 0xF0 <= c <= 0xF4:
        k = 3
        lo = 0x90 if c == 0xF0 else 0x80
        hi = 0x8F if c == 0xF4 else 0xBF
    else:
        return -1
    if i + k >= n or not lo <= b[i + 1] <= hi:
        return -1
    for j in range(i + 2, i + k + 1):
        if not 0x80 <= b[j] <= 0xBF:
            return -1
    return i + k + 1


def _digits(b, i, n):
    j = i
    while j < n and 48 <= b[j] <= 57:
        j += 1
    return j


def _number(b, i, n):
    if b[i] == 45:  # -
        i += 1
    if i >= n:
        return -1
    if b[i] == 48:  # a leading 0 stands alone
        i += 1
    else:
        j = _digits(b, i, n)
        if j == i:
            return -1
        i = j
    if i < n and b[i] == 46:  # .
        j = _digits(b, i + 1, n)
        if j == i + 1:
            return -1
        i = j
    if i < n and b[i] in b"eE":
        i += 1
        if i < n and b[i] in b"+-":
            i += 1
        j = _digits(b, i, n)
        if j == i:
            return -1
        i = j
    return i


def _word(b, i, n, w):
    m = len(w)
    if i + m > n:
        return -1
    for k in range(m):
        if b[i + k] != w[k]:
            return -1
    return i + m


def valid_json(b, tick=None):
    """True if bytes `b` are exactly one JSON value (RFC 8259), in strict
    UTF-8. With `tick`, tick() is called every TICK_TOKENS tokens."""
    n = len(b)
    stack = _STACK
    depth = 0
    st = _VALUE
    i = 0
    left = TICK_TOKENS
    while True:
        if tick is not None:
            left -= 1
            if not left:
                left = TICK_TOKENS
                tick()
        i = _ws(b, i, n)
        if st == _AFTER:
            if depth == 0:
                return i == n
            if i >= n:
                return False
            c = b[i]
            top = stack[depth - 1]
            if c == 44:  # ,
                st = _KEY if top == 123 else _VALUE
            elif c == top + 2:  # '{' + 2 is '}', '[' + 2 is ']'
                depth -= 1
            else:
                return False
            i += 1
            continue
        if i >= n:
            return False
        c = b[i]
        if st == _KEY or st == _MEMBER:
            if c == 125 and st == _MEMBER:  # {}
                depth -= 1
                i += 1
                st = _AFTER
                continue
            if c != 34:
                return False
            i = _string(b, i, n)
            if i < 0:
                return False
            i = _ws(b, i, n)
            if i >= n or b[i] != 58:  # :
                return False
            i += 1
            st = _VALUE
            continue
        # a value (or, just after '[', the closing bracket)
        if c == 93 and st == _ITEM:  # []
            depth -= 1
            i += 1
        elif c == 123 or c == 91:  # { [
            if depth == len(stack):
                return False
            stack[depth] = c
            depth += 1
            i += 1
            st = _MEMBER if c == 123 else _ITEM
            continue
        elif c == 34:
            i = _string(b, i, n)
        elif c == 45 or 48 <= c <= 57:
            i = _number(b, i, n)
        elif c == 116:
            i = _word(b, i, n, b"true")
        elif c == 102:
            i = _word(b, i, n, b"false")
        elif c == 110:
            i = _word(b, i, n, b"null")
        else:
            return False
        if i < 0:
            return False
        st = _AFTER


TICK_TOKENS = 3  # a token is tens of bytecodes (a string: a loop a byte)


def decode(line, tick=None):
    """bytes -> command dict with a str "cmd"; ProtoError otherwise."""
    try:
        if not valid_json(line, tick):
            raise ValueError("not strict JSON in UTF-8")
        if tick is not None:
            tick()  # a read between the check and the parse, each a pass over the line
        obj = json.loads(line.decode("utf-8"))
    except Exception:
        raise protocol.ProtoError("bad_json", "not a JSON object (UTF-8, one per line)")
    if not isinstance(obj, dict):
        raise protocol.ProtoError("bad_json", "a command is a JSON object")
    id_ = obj.get("id")
    cmd = obj.get("cmd")
    if not isinstance(cmd, str):
        raise protocol.ProtoError("unknown_cmd", "no \"cmd\" name", id_)
    return obj


# ---- a line's handling ----------------------------------------------------------------------
def stage(c, line):
    """Before a line is handled (Commands.stage): the web server's request code
    let go if no request is being read, unless the line is a light one (the
    page reloads it with its next one: httpd.Server.let_go_for); then a hint's
    code, a module a call, and its level's tables. True if a piece was loaded now."""
    if c.web is not None:
        c.web.let_go_for(line)
    if line is protocol.LineBuffer.TOO_LONG or b'"hint"' not in line:  # (handle answers an over-long line)
        return False
    for name in ("throwing", "cpu", "coach"):
        if "shove." + name not in sys.modules:
            __import__("shove." + name)
            return True
    try:
        level = json.loads(line).get("level", 3)
    except Exception:  # (handle answers it)
        return False
    from shove import cpu

    if isinstance(level, int) and not isinstance(level, bool) and 1 <= level <= rules.MAX_LEVEL \
            and level not in cpu._players:
        cpu.player(level)  # the level's tables (its line of cpu.dat)
        return True
    return False


def handle(c, line):
    """One line from the serial port (bytes, its end taken off): its reply,
    then its events, through the parts of `c` (commands.Commands)."""
    send = c.tx.put
    if line is protocol.LineBuffer.TOO_LONG:
        send(protocol.error(None, "too_long", "a line is at most %d bytes" % protocol.MAX_LINE))
        return
    if not line.strip():
        return  # blank lines (a terminal's Enter) are ignored
    id_ = None
    after = []
    try:
        cmd = decode(line, c.tick)
        id_ = cmd.get("id")
        name = cmd["cmd"]
        handler = globals().get("cmd_" + name) if name.isalpha() else None
        if handler is not None:
            fields = handler(c, cmd, after)
        elif name in EXTRA:
            fields = c.extra(name, cmd, after)
        elif name in c.more:  # a command of a part above this one (Commands.more)
            fields = call(c.more[name], "cmd_" + name, c, cmd, after)
        else:
            raise protocol.ProtoError("unknown_cmd", "unknown command %r" % name[:20])
        line = protocol.ok(id_, fields, c.tick)
        c.tick()  # the line's last pieces joined; its queueing next
        send(line)
    except protocol.ProtoError as e:
        send(protocol.error(e.id if id_ is None else id_, e.code, e.msg))
    except Refused as e:  # the game's, the computer's, the board's: their code and message as they are
        send(protocol.error(id_, e.code, e.msg))
    except MemoryError:
        gc.collect()
        send(protocol.error(id_, "no_memory", "the request did not fit in memory"))
    except OSError as e:  # a config or map write the flash refused: nothing was applied
        send(protocol.error(id_, "storage", "the flash refused the write (%s); nothing changed" % e))
        after = ()  # (nothing was applied: no events)
    if "shove.coach" in sys.modules:  # staged (stage) for a line that was no hint after all (a hint lets it go)
        release("coach")
        if c.keeper.auto is None:
            release(*keeper.CPU_MODULES)
    for name, fields in after:
        if name == "reset":
            c.tx.flush()
            c.board.reset(deliberate=True)  # marked: not a bad start (safeboot)
        c.emit(name, fields)


def cmd_new(c, cmd, after):
    st = new(c.keeper, cmd.get("players"), cmd.get("teams"), cmd.get("variant", "classic"), cmd.get("rules"),
             cmd.get("cpu"), cmd.get("seed"))
    after.append(("new", {"state": st}))
    return {"state": st}


def cmd_state(c, cmd, after):
    k = c.keeper
    return {"state": k.state() if k.game else None}


def cmd_throw(c, cmd, after):
    try:
        code = segments.encode(cmd.get("seg"))
    except segments.SegError as e:
        raise rules.RuleError("bad_seg", str(e))
    k = c.keeper
    after.append(("dart", k.throw(code, "host")))
    st = k.state()
    if k.game.phase == rules.OVER:
        after.append(("win", k.win(st)))
    return {"state": st}


def cmd_hint(c, cmd, after):
    level = cmd.get("level", 3)
    if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= rules.MAX_LEVEL:
        raise protocol.ProtoError("bad_level", "level must be a whole number from 1 to %d" % rules.MAX_LEVEL)
    return {"hint": hint(c.keeper, level)}


def want_int(obj, key, lo, hi, code):
    """obj[key], a whole number lo..hi (not a bool); ProtoError `code` otherwise."""
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or v > hi:
        raise protocol.ProtoError(code, "%s must be a whole number from %d to %d" % (key, lo, hi), obj.get("id"))
    return v


def cmd_press(c, cmd, after):
    row = want_int(cmd, "row", 0, c.prof.rows - 1, "bad_cell")
    col = want_int(cmd, "col", 0, c.prof.cols - 1, "bad_cell")
    ms = want_int(cmd, "ms", 1, 10000, "bad_cell")
    if not c.board.press(row, col, ms):
        raise protocol.ProtoError("busy", "too many closures scheduled at once")
    return None


def cmd_next(c, cmd, after):
    st, events = c.keeper.next()
    after.extend(events)
    return {"state": st}


def cmd_undo(c, cmd, after):
    st = undo(c.keeper)
    after.append(("undo", {"state": st}))
    return {"state": st}


def cmd_reset(c, cmd, after):
    after.append(("reset", None))
    return None


# ---- the keeper's command-time work: a new game, `end`, `undo`, hints -------------------------
# (k: the game's keeper, shove/keeper.py; its dart-time work stays there)
def save(k, rollback=None):
    """Store a new game (or none) whole. If the flash refuses, undo the
    change in RAM too (rollback) and refuse the request, so RAM and flash
    never disagree."""
    try:
        if k.game is None:
            store.remove(keeper.GAME_FILE)
            k.jstore.clear()  # no game: its segments go
        else:
            k._rewrite()
    except OSError as e:
        k.jdirty = True
        if rollback:
            rollback()
        raise protocol.ProtoError("storage", "the flash refused the write (%s); nothing changed" % e)


def undo(k):
    g = k.need()
    if not g.moves():
        raise rules.RuleError("nothing_to_undo", "nothing to undo")
    last = g.actions[g.moves() - 1]
    g.undo()
    k._log(jrec.UNDO, lambda: g.apply(last))
    k.changed()
    k._held(g)
    return k.state()


def new(k, players, teams, variant, overrides=None, cpu=None, seed=None):
    if seed is None:  # the computer's darts: a new sequence each game unless the host picks one
        seed = k.board.ticks_us() & 0x3FFFFFFF
    g = rules.new_game(players, teams, variant, overrides, cpu, seed)  # validates; nothing changes on error
    _replace(k, g)
    k.ignored = 0
    return k.state()


def end(k):
    """Discard the game (the board then has none, as when new)."""
    _replace(k, None)


def _replace(k, g):
    old = k.game
    k.game = g
    save(k, lambda: setattr(k, "game", old))
    k.changed()
    k.hold_since = -1
    if g is None or not any(g.cpu):
        k.drop_cpu()


def hint(k, level):
    """The coach's target for the thrower (also blinked on the strip) and why."""
    from shove import coach  # the coach is let go after each hint

    g = k.need()
    try:
        h = coach.hint(g, level)
    finally:
        release("coach")
        if k.auto is None:  # the computer's modules the coach loaded: no side of the board's needs them
            release(*keeper.CPU_MODULES)
    h["side"] = g.turn
    h["level"] = level
    bi, _ = g.value(segments.encode(h["seg"]))
    k.renderer.hint(bi, k.board.ticks_ms())
    k.changed()
    return h


# ---- the board's buttons ----------------------------------------------------------------------
def show_code(c):
    """The next button held a second while no game is in play (none, or
    over): the strip spells the pairing code, so that a person at the board
    can pair a phone without a computer, until the button is let go
    (Commands.buttons_slice). In a game its press has moved the game on:
    the hold was for that."""
    g = c.keeper.game
    if g is not None and g.phase != rules.OVER:
        return
    if c.net is None:
        raise Refused("no_network", "no network is set, so there is no pairing code: set one over USB "
                                    "(hapenny wifi NETWORK)")
    code = c.net.code
    if code is None and getattr(c.net, "is_setup", False):  # the set-up AP not yet opened: its code now
        code = c.net.ident()
    if not c.renderer.show_code(code, c.board.ticks_ms()):
        raise Refused("no_code", "the strip cannot spell this pairing code (it needs 9 beds, and a code of "
                                 "digits: set the network again for one)")
    c.changed()


def button(c, name, kind):
    """What a debounced press does (loaded for it, as for a line)."""
    k = c.keeper
    try:
        if name == "next" and kind == buttons.PRESS:
            k.advance()
        elif name == "next" and kind == buttons.LONG:
            show_code(c)
        elif name == "undo" and kind == buttons.SHORT:
            c.emit("undo", {"state": undo(k)})
        elif name == "undo" and kind == buttons.LONG:  # held: the coach blinks the bed to aim at
            c.emit("hint", {"hint": hint(k, 3)})
        elif name == "new" and kind == buttons.SHORT:
            c.emit("new", {"state": new(k, k.config["players"], None, k.config["variant"])})
        elif name == "new" and kind == buttons.LONG:
            names = sorted(rules.VARIANTS)
            was = k.config["variant"]
            nxt = names[(names.index(was) + 1) % len(names)]
            c.extra("config", {"set": {"variant": nxt}}, [])
            try:
                st = new(k, k.config["players"], None, nxt)
            except Refused:  # the game refused: the variant it was for goes back too
                c.extra("config", {"set": {"variant": was}}, [])
                raise
            c.emit("new", {"state": st})
    except Refused as e:
        c.emit("refused", {"button": name, "error": e.code, "msg": e.msg})
    except OSError as e:  # the new-game button's config write the flash refused: nothing was applied
        c.emit("refused", {"button": name, "error": "storage",
                           "msg": "the flash refused the write (%s); nothing changed" % e})

# The paths of the board's page that need a code (shove/webpage.py has the
# rest and the rules): whether a page may play (/api/access), a command
# (/api/cmd, with the pairing code) and an update (/api/update/*, with the
# owner code). Loaded with webpage for them only, let go with it.
#
# Guessing the code: ten digits 1 to 9 (wifiset.py) is 9**10, about 3.5e9
# codes. A wrong code locks that code's checks for _LOCK_S[n] seconds after
# the n-th wrong one in a row (the last for every later one), counted on
# the board's clock: a guesser soon makes one guess in 30 s, so half the
# codes take 3.5e9 / 2 * 30 s, about 1,700 years (at one guess a second it
# would still be 55 years). The right code ends the lock's growth. A
# request with no code is no guess (a watching page's). The pairing code
# and the owner code (updates) each have a lock of their own: someone
# guessing one locks out neither the players nor the owner of the other.
import json

try:
    from micropython import const
except ImportError:  # CPython (the host's tests)

    def const(x):  # type: ignore[misc]
        return x


from shove import protocol, ticks_add, ticks_diff

_LOCK_S = const((1, 2, 4, 8, 16, 30))
# the commands a page may send, with the code; those the network may not send, and why
_COMMANDS = const(("new", "state", "throw", "next", "undo", "end", "hint", "config", "info", "stats", "leds", "map"))
# what a link over the network (hapenny/netlink.py) asks most: every command opens with `info`, `play`
# asks the LEDs after each dart, a poll asks the state. Answered here as the handlers answer them
# (extra.cmd_info, request.cmd_state, extra.cmd_leds), with none of their code loaded (a load is tens of
# ms on the chip with no read of the matrix), `info` once kept (webroutes: its first goes through the
# handlers, then is kept in a step of its own); any other form of them goes through the handlers
READS = (b'{"cmd":"info"}', b'{"cmd":"state"}', b'{"cmd":"leds"}')
USB_ONLY = {"wifi": "the network's password and pairing code are set over USB only",
            "reset": "a reset is made over USB only", "diag": "the bring-up checks run over USB only",
            "press": "the test bench's closures are made over USB only"}
# update.OWNER_FILE, named here: a request without the owner code loads nothing of the update's
# code (6 KB of heap, kept while the server runs once loaded)
OWNER_FILE = "owner.key"


def same(data, code):
    """The code given (`data`, bytes) is the board's (bytes), compared in time that
    tells nothing of how much of a guess was right (every byte of the code
    is looked at, whatever the guess's length)."""
    n = len(code)
    m = len(data)
    d = m ^ n
    for i in range(n):
        d |= code[i] ^ (data[i] if i < m else 0)
    return d == 0


def locked(w, now, owner=False):
    """Seconds the pairing code's checks (the owner code's, when `owner`) are still locked for (0: not locked)."""
    if not (w.ofails if owner else w.fails):
        return 0
    left = ticks_diff(w.ountil if owner else w.until, now)
    return (left + 999) // 1000 if left > 0 else 0


def check(w, req, now):
    """None when req carries the code; else why not: (status, code, msg, extra)."""
    if req.code is None:
        return 403, "pairing", "this page may watch but not play: open the address with the pairing code " \
                               "(hapenny wifi shows it)", ""
    return guess(w, req.code, w.code, now, "pairing")


def guess(w, data, code, now, what):
    """A code given against the board's, through the lock of its own wrong
    guesses: `what` is "pairing" or "owner", each counted and locked apart
    (a guesser of the pairing code never locks the owner out of updates,
    nor a guesser of the owner code the players out of the game)."""
    owner = what == "owner"
    left = locked(w, now, owner)
    if left:
        return 429, "slow_down", "wrong %s codes: try again in %d s" % (what, left), "Retry-After: %d\r\n" % left
    if same(data, code):
        if owner:
            w.ofails = 0
        else:
            w.fails = 0
        return None
    n = (w.ofails if owner else w.fails) + 1
    until = ticks_add(now, _LOCK_S[min(n, len(_LOCK_S)) - 1] * 1000)
    if owner:
        w.ofails = n
        w.ountil = until
    else:
        w.fails = n
        w.until = until
    return 403, what, "wrong %s code" % what, ""


def check_owner(w, req, now):
    """None when req carries the owner code (updates: shove/update.py); else why not."""
    code = w.c.board.read_file(OWNER_FILE)
    if not code:
        return 403, "owner", "updates over the network need the board's owner code: over USB, " \
                             "hapenny wifi --owner-code sets and shows it", ""
    if req.owner is None:
        return 403, "owner", "updates need the owner code (hapenny deploy --owner, or $HAPENNY_OWNER)", ""
    return guess(w, req.owner, code.strip(), now, "owner")


def owner_given(w, req):
    """req carries the owner code and its checks are not locked (no guess
    counted: check_owner counts it when the request is answered)."""
    b = w.c.board
    if req.owner is None or locked(w, b.ticks_ms(), True):
        return False
    code = b.read_file(OWNER_FILE)
    return bool(code) and same(req.owner, code.strip())


def update(w, req, now):
    """/api/update/*: a firmware update over the network, with the owner code."""
    why = check_owner(w, req, now)
    if why is not None:
        req.error(why[0], why[1], why[2], why[3])
        return
    from shove import update as upd

    act = req.path[12:]
    if act == "files" and req.method == "GET":
        upd.files(req)
    elif act == "begin" and req.method == "POST":
        upd.begin(req)
    elif act == "file" and req.method == "PUT":
        upd.put(req, bytearray(256))
    elif act == "commit" and req.method == "POST":
        if upd.commit(req, w.c.board.write_file):
            w.restart = (req, now)
    else:
        req.error(404, "not_found", "no such update step")


def serve(w, req, now):
    """The route of req.path, one that needs a code (webpage.serve hands it on)."""
    p = req.path
    if p == "/api/access":
        play = False
        extra = ""
        if req.code is not None:
            why = check(w, req, now)
            play = why is None
            if why is not None and why[0] == 429:
                extra = ',"retry_after":%d' % locked(w, now)
        req.reply(200, '{"ok":true,"code_needed":true,"play":%s%s}' % (json.dumps(play), extra))
    elif p.startswith("/api/update/"):
        update(w, req, now)
    else:
        cmd(w, req, now)


def cmd(w, req, now):
    t = req.ctype
    if t is None or t.split(";")[0].strip().lower() != "application/json":
        req.error(415, "not_json", "a command is sent as Content-Type: application/json")
        return
    why = check(w, req, now)
    if why is not None:
        req.error(why[0], why[1], why[2], why[3])
        return
    line = bytes(req.body)
    try:
        obj = json.loads(line)
    except Exception:  # not JSON (not text, cut short, nested past the parser's depth)
        obj = None
    if not isinstance(obj, dict):
        req.error(400, "bad_json", "send one JSON object: {\"cmd\": ..., ...}")
        return
    name = obj.get("cmd")
    obj = None
    if name in USB_ONLY:
        req.error(403, "usb_only", USB_ONLY[name])
        return
    if name not in _COMMANDS:
        req.error(400, "unknown_cmd", "unknown command; a page may send: %s" % ", ".join(_COMMANDS))
        return
    if line in READS and (w.info is not None or line != READS[0]):  # answered at once, no handler's code loaded
        req.reply(200, read(w, line))
        return
    # run in the server's next steps (webroutes.Routes.command), with this code let go meanwhile
    w.pending = [req.c, line, None]
    req.later()


def read(w, line):
    """The reply line to one of READS, as the handlers give it."""
    c = w.c
    try:
        if line == READS[0]:  # (only once kept: cmd; as webpage.board_info gives it)
            info = dict(w.info)
            info["wifi"] = w.net.report()
            return protocol.ok(None, info)
        if line == READS[1]:
            k = c.keeper
            return protocol.ok(None, {"state": k.state() if k.game else None}, c.tick)
        f = c.strip.last
        return protocol.ok(None, {"pixels": [[f[i], f[i + 1], f[i + 2]] for i in range(0, len(f), 3)]})
    except MemoryError:
        return protocol.error(None, "no_memory", "the request did not fit in memory")

# The page's routes on the board's own server (shove/httpd.py), with the
# same paths and meaning as `hapenny web` (host/hapenny/web/server.py) and
# the same rules of who may do what (host/hapenny/web/guard.py):
#   /, /static/<file>   the page, gzipped on the flash (web/*.gz: deploy puts it there)
#   /api/access         whether this page may play
#   /api/snapshot       info, config and state, as the serial replies give them
#   /api/cmd            a command, through the serial port's own handlers
#                       (request.handle), with the pairing code; its reply as is
#   /api/events         Server-Sent Events: a snapshot, then every event line
# Loaded with the server once the board has joined a network (shove/wifi.py).
#
# Who may do what: the Host must be one of the board's names (its address,
# NAME.local, NAME; a board whose address is a loopback one, the virtual
# board, also localhost); an Origin, when sent, must be http:// and that
# Host (a page of another site, or a DNS-rebinding one, is refused); a
# command is application/json and carries the pairing code (wifiset.py
# keeps it; the page has it from the address's #code= fragment, never in a
# request line). Watching needs no code.
#
# Guessing the code: ten digits 1 to 9 (wifiset.py) is 9**10, about 3.5e9
# codes. A wrong code locks every code check for LOCK_S[n] seconds after
# the n-th wrong one in a row (the last for every later one), counted on
# the board's clock: a guesser soon makes one guess in 30 s, so half the
# codes take 3.5e9 / 2 * 30 s, about 1,700 years (at one guess a second it
# would still be 55 years). The right code ends the lock's growth. A
# request with no code is no guess (a watching page's).
#
# Updates (/api/update/*, shove/update.py) need the owner code instead, in
# X-Hapenny-Owner: set and shown over USB only (wifiset.py; update.OWNER_FILE),
# never in a reply here. Its wrong guesses count in the same lock; the
# pairing code alone opens nothing of them.
import json

from shove import protocol, ticks_add, ticks_diff
from shove.httpd import EV_SNAPSHOT, FREE, Server, host_name

LOCK_S = (1, 2, 4, 8, 16, 30)
# the commands a page may send, with the code; those the network may not send, and why
COMMANDS = ("new", "state", "throw", "next", "undo", "end", "hint", "config", "info", "stats", "leds", "map")
USB_ONLY = {"wifi": "the network's password and pairing code are set over USB only",
            "reset": "a reset is made over USB only", "diag": "the bring-up checks run over USB only",
            "press": "the test bench's closures are made over USB only"}
FILES = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
         "style.css": "text/css; charset=utf-8"}
WEB_DIR = "web/"  # the page on the flash: web/NAME.gz


class Reply:
    """The console's queue, as a command's handlers see it, while a
    network command runs: its reply line is kept for the HTTP answer."""

    def __init__(self):
        self.line = None
        self.waits = 0

    def put(self, line):
        self.line = line

    def flush(self):
        pass


def same(given, code):
    """The code given (bytes) is the board's (bytes), compared in time that
    tells nothing of how much of a guess was right (every byte of the code
    is looked at, whatever the guess's length)."""
    n = len(code)
    m = len(given)
    d = m ^ n
    for i in range(n):
        d |= code[i] ^ (given[i] if i < m else 0)
    return d == 0


class Routes:
    """The page's routes for a server, over the command handlers' parts
    (`c`: commands.Commands) and the network's join (`net`: wifi.Joiner)."""

    def __init__(self, c, net, srv):
        self.c = c
        self.net = net
        self.srv = srv
        self.code = net.code.encode()
        self.fails = 0  # wrong codes in a row
        self.until = 0  # tick (ms) until which no code is checked, while fails
        self.config = c.keeper.config  # the settings a snapshot was made of (a new object when changed)
        self.reply = Reply()
        self.restart = None  # (the update's commit request, its tick): the board resets once it is answered
        srv.guard = self.guard
        srv.watch = self.watch
        srv.hold = self.hold
        srv.route("/", self.index)
        srv.route("/static/*", self.static)
        srv.route("/api/access", self.access)
        srv.route("/api/snapshot", self.snapshot)
        srv.route("/api/events", self.events)
        srv.route("/api/cmd", self.cmd, ("POST",))
        srv.route("/api/update/*", self.update, ("GET", "PUT", "POST"))

    # ---- who may do what -------------------------------------------------------------------
    def names(self):
        net = self.net
        out = [net.name + ".local", net.name]
        a = net.address
        if a:
            out.append(a)
            if a.startswith("127."):
                out.append("localhost")
        return out

    def guard(self, req, now):
        name = host_name(req.host) if req.host else None
        if name is None or name not in self.names():
            req.error(421, "wrong_host", "this board answers only at its own address or name")
            return False
        if req.origin is not None and req.origin.lower() != "http://" + req.host.lower():
            req.error(403, "wrong_origin", "only the board's own page may send it requests")
            return False
        return True

    def hold(self, req):
        """A command waits while the console's queue has no room for its
        events (pacing: ready), as the serial port's next line does."""
        return req.method == "POST" and not self.c.tx.ready()

    def locked(self, now):
        """Seconds the code checks are still locked for (0: not locked)."""
        if not self.fails:
            return 0
        left = ticks_diff(self.until, now)
        return (left + 999) // 1000 if left > 0 else 0

    def check(self, req, now):
        """None when req carries the code; else why not: (status, code, msg, extra)."""
        if req.code is None:
            return 403, "pairing", "this page may watch but not play: open the address with the pairing code " \
                                   "(hapenny wifi shows it)", ""
        return self.guess(req.code, self.code, now, "pairing")

    def guess(self, given, code, now, what):
        """A code given against the board's, through the lock of wrong guesses."""
        left = self.locked(now)
        if left:
            return 429, "slow_down", "wrong codes: try again in %d s" % left, "Retry-After: %d\r\n" % left
        if same(given, code):
            self.fails = 0
            return None
        self.fails += 1
        self.until = ticks_add(now, LOCK_S[min(self.fails, len(LOCK_S)) - 1] * 1000)
        return 403, what, "wrong %s code" % what, ""

    def check_owner(self, req, now):
        from shove.update import OWNER_FILE

        code = self.c.board.read_file(OWNER_FILE)
        if not code:
            return 403, "owner", "updates over the network need the board's owner code: over USB, " \
                                 "hapenny wifi --owner-code sets and shows it", ""
        if req.owner is None:
            return 403, "owner", "updates need the owner code (hapenny deploy --owner, or $HAPENNY_OWNER)", ""
        return self.guess(req.owner, code.strip(), now, "owner")

    # ---- the routes --------------------------------------------------------------------------
    def index(self, req, now):
        if not req.send_file(WEB_DIR + "index.html.gz", FILES["index.html"]):
            req.error(404, "no_page", "the page is not on this board's flash: hapenny deploy puts it there")

    def static(self, req, now):
        name = req.path[8:]
        if name not in FILES or not req.send_file(WEB_DIR + name + ".gz", FILES[name]):
            req.error(404, "not_found", "no such file")

    def access(self, req, now):
        play = False
        extra = ""
        if req.code is not None:
            why = self.check(req, now)
            play = why is None
            if why is not None and why[0] == 429:
                extra = ',"retry_after":%d' % self.locked(now)
        req.reply(200, '{"ok":true,"code_needed":true,"play":%s%s}' % ("true" if play else "false", extra))

    def snapshot(self, req, now):
        req.reply(200, self.snap())

    def events(self, req, now):
        req.stream(self.snap(), now)

    def cmd(self, req, now):
        t = req.ctype
        if t is None or t.split(";")[0].strip().lower() != "application/json":
            req.error(415, "not_json", "a command is sent as Content-Type: application/json")
            return
        why = self.check(req, now)
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
        if name not in COMMANDS:
            req.error(400, "unknown_cmd", "unknown command; a page may send: %s" % ", ".join(COMMANDS))
            return
        req.reply(200, self.run(line))

    def update(self, req, now):
        why = self.check_owner(req, now)
        if why is not None:
            req.error(why[0], why[1], why[2], why[3])
            return
        from shove import update

        act = req.path[12:]
        if act == "files" and req.method == "GET":
            update.files(req, bytearray(256))
        elif act == "begin" and req.method == "POST":
            update.begin(req)
        elif act == "file" and req.method == "PUT":
            update.put(req, bytearray(256))
        elif act == "commit" and req.method == "POST":
            if update.commit(req, self.c.board.write_file):
                self.restart = (req, now)
        else:
            req.error(404, "not_found", "no such update step")

    # ---- the board's side ----------------------------------------------------------------------
    def run(self, line):
        """A command line through the serial port's own handlers
        (request.handle): its reply line, its events to every reader."""
        c = self.c
        r = self.reply
        tx = c.tx
        r.line = None
        r.waits = tx.waits
        c.tx = r  # the reply comes here; the events go where the loop's emit sends them
        try:
            c.handle_line(line)
        finally:
            c.tx = tx
        line = r.line
        r.line = None
        return line if line is not None else protocol.error(None, "bad_json", "no command")

    def snap(self):
        """The snapshot's JSON text: info, config and state as their replies
        give them (the state encoded in pieces, a read of the matrix between)."""
        c = self.c
        k = c.keeper
        info = c.extra("info", {}, [])
        return protocol.encode({"connected": True, "info": info, "config": k.config,
                                "state": k.state() if k.game else None, "visit": [], "last": None}, c.tick)

    def watch(self, now):
        """Once a step: the settings changed (a new config object) -> a snapshot for every stream.
        After an update's commit, once its answer is sent and closed (or 2 s on): the reset, whose
        boot.py moves the new firmware into place."""
        if self.restart is not None:
            r = self.restart
            if r[0].state == FREE or ticks_diff(now, r[1]) >= 2000:
                self.c.board.reset(deliberate=True)
        k = self.c.keeper
        if k.config is self.config:
            return
        self.config = k.config
        srv = self.srv
        streams = srv.streams()
        if streams:
            s = self.snap()
            for conn in streams:
                if not conn.push(EV_SNAPSHOT, s, now):
                    srv.drop(conn)
            srv.busy = True


def start(c, net, addr):
    """The server with the page's routes, listening at addr (host, port)."""
    srv = Server(addr, c.tick)
    Routes(c, net, srv)
    return srv

# The page's routes on the board's own server (shove/httpd.py): the part
# kept in the heap while the server runs (the paths, the pairing code, the
# counts of wrong guesses, the settings a snapshot was made of). Each path's
# work, the checks of who may do what and the snapshot are shove/webpage.py's
# (and, for the paths that need a code, shove/webgate.py's), loaded while
# requests are under way (see there for the rules and the paths).
# Loaded with the server once the board has joined a network (shove/wifi.py).
import sys

from shove import release, ticks_diff
from shove.httpd import EV_SNAPSHOT, FREE, RUN, Server


class Routes:
    """The page's routes for a server, over the command handlers' parts
    (`c`: commands.Commands) and the network's join (`net`: wifi.Joiner)."""

    def __init__(self, c, net, srv):
        self.c = c
        self.net = net
        self.srv = srv
        self.code = net.code.encode()
        # each code's lock of wrong guesses (webgate.guess), the pairing code's and the owner code's
        # apart: a guesser of one never locks the other's holder out
        self.fails = 0  # wrong pairing codes in a row
        self.until = 0  # tick (ms) until which no pairing code is checked, while fails
        self.ofails = 0  # the same for the owner code (updates)
        self.ountil = 0
        self.config = c.keeper.config  # the settings a snapshot was made of (a new object when changed)
        self.info = None  # `info` but its network's state, kept from the first snapshot or hello (keep_info)
        self.restart = None  # (the update's commit request, its tick): the board resets once it is answered
        self.pending = None  # a page's command: [its slot, its line, its reply once run] (command)
        srv.guard = self.guard
        srv.watch = self.watch
        srv.hold = self.hold
        srv.needs = self.needs
        srv.lazy = ("httpreq", "webpage", "webgate", "view")  # (view: the snapshot's state, webpage.snap)
        srv.light = LIGHT
        s = self.serve  # one bound method for every path (each self.serve is an object of its own)
        for p in ("/", "/static/*", "/api/access", "/api/snapshot", "/api/events"):
            srv.route(p, s)
        srv.route("/api/cmd", s, ("POST",))
        srv.route("/api/update/*", s, ("GET", "PUT", "POST"))  # the owner code's (webgate.update)

    def guard(self, req, now):
        from shove import webpage

        return webpage.guard(self, req, now)

    def serve(self, req, now):
        from shove import webpage

        webpage.serve(self, req, now)

    def needs(self, req):
        """The routes' code a request loads before it is answered (a module a step: httpreq._stage):
        a watching page's paths only webpage, a snapshot's state builder with it; the codes' paths
        webgate besides, an update's code too once the owner code is given."""
        p = req.path
        if p in ("/api/snapshot", "/api/events"):
            return ("webpage", "view")
        if p == "/" or p.startswith("/static/"):
            return ("webpage",)
        if p.startswith("/api/update/") and "shove.webgate" in sys.modules:
            from shove import webgate

            if webgate.owner_given(self, req):  # the update's code in a step of its own (8 KB), only then
                return ("webpage", "webgate", "update")
        return ("webpage", "webgate")

    def hold(self, req):
        """A command waits while the console's queue has no room for its
        events (pacing: ready), as the serial port's next line does, and
        while another page's command runs (command)."""
        return req.method == "POST" and (self.pending is not None or not self.c.tx.ready())

    def watch(self, now):
        """Once a step: the settings changed (a new config object) -> a snapshot for every stream.
        After an update's commit, once its answer is sent and closed (or 2 s on): the reset, whose
        boot.py moves the new firmware into place."""
        if self.pending is not None:
            self.command()
        if self.restart is not None:
            r = self.restart
            if r[0].c.state == FREE or ticks_diff(now, r[1]) >= 2000:
                self.c.board.reset(deliberate=True)
        k = self.c.keeper
        if k.config is self.config:
            return
        self.config = k.config
        srv = self.srv
        streams = srv.streams()
        if streams:
            from shove import webpage  # (let go at the step's end, with the requests' code)

            srv.loaded = True
            s = webpage.snap(self)
            for conn in streams:
                if not conn.push(EV_SNAPSHOT, s, now):
                    srv.drop(conn)
            srv.busy = True

    def command(self):
        """A page's command (webgate.cmd), run a piece a server step, as a
        serial line is (Commands.stage): the requests' code let go (12 KB,
        unless a request is being read), the command's code loaded a piece
        a step, the command run through the serial port's own handlers
        (shove/webcmd.py: its reply kept, its events to every reader),
        then the requests' code loaded again and its answer made. Each
        piece's garbage can be collected before the next: run whole in the
        step that read it, a new game beside two watching pages did not
        fit. Its slot waits meanwhile (httpd.RUN); one whose client has
        gone gets no answer, but its command runs all the same."""
        p = self.pending
        c = self.c
        srv = self.srv
        if p[2] is None:
            if srv.let_go_for(p[1]) or c.stage(p[1]) or not c.tx.ready():
                return
            if "shove.webcmd" not in sys.modules:  # a step of its own, as each piece of its code
                from shove import webcmd  # noqa: F401

                return
            from shove import webcmd

            try:
                p[2] = webcmd.run(c, p[1])
            finally:
                release("webcmd")
            return
        if self.info is None and p[1] == INFO:  # kept for the next hello, in a step of its own
            self.keep_info()
            return
        if "shove.httpreq" not in sys.modules:
            srv.loaded = True
            from shove import httpreq  # noqa: F401

            return
        from shove import httpreq

        self.pending = None
        if p[0].state == RUN:
            httpreq.Req(p[0]).reply(200, p[2])


    def keep_info(self):
        """`info` as its reply gives it, but the network's state (asked at
        each use): made once (its module loaded from the flash, tens of ms
        on the chip with no read of the matrix) and kept, as nothing else in
        it changes while the board runs."""
        info = self.c.extra("info", {}, [])
        info.pop("wifi", None)
        self.info = info


INFO = b'{"cmd":"info"}'  # a network link's hello (webgate.READS[0]; webgate loads only per request)
# commands light enough to run beside the requests' kept code (httpd.Server.let_go_for): a state and the
# LEDs, which a page or `hapenny play` asks for after each dart, and the hello, as the page and the host's
# links send them (compact JSON; another spelling only lets the code go, as before)
LIGHT = (b'"cmd":"state"', b'"cmd":"leds"', b'"cmd":"info"')


def start(c, net, addr):
    """The server with the page's routes, listening at addr (host, port)."""
    srv = Server(addr, c.tick)
    Routes(c, net, srv)
    return srv

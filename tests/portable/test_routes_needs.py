# The code a request read whole has loaded before it is answered, a module a
# step (shove/webroutes.py Routes.needs, httpreq._stage): the page's work
# first; a snapshot's and a stream's state builder; the codes' paths' work
# (webgate: access, commands, updates) only for them; an update's own code,
# in a step of its own, only for a request carrying the owner code while its
# checks are not locked (loaded in the answering step beside the listing's
# work, it took more than the chip's grown heap could give). Asking counts no guess: the lock is the
# answer's (webgate.check_owner). Table-driven; runs in both interpreters.
import sys

from shove import webgate, webroutes

OWNER = b"9182736451"


class Board:
    def __init__(self, owner):
        self.owner = owner
        self.now = 50000

    def ticks_ms(self):
        return self.now

    def read_file(self, path):
        assert path == webgate.OWNER_FILE
        return self.owner


class Parts:
    def __init__(self, owner):
        self.board = Board(owner)


class Routes:
    def __init__(self, owner, locked_until=None):
        self.c = Parts(owner)
        self.fails = self.until = self.ofails = self.ountil = 0
        if locked_until is not None:  # wrong owner codes guessed: locked until then (webgate.guess)
            self.ofails = 3
            self.ountil = locked_until


class Req:
    def __init__(self, path, owner):
        self.path = path
        self.owner = owner


# (path, the owner code sent, the board's owner file, webgate loaded, what is loaded first[, locked until])
PAGE = ("webpage",)
GATE = ("webpage", "webgate")
UPDATE = ("webpage", "webgate", "update")
TABLE = (
    ("/", None, OWNER + b"\n", True, PAGE),  # the page's files: nothing of the codes' work
    ("/static/app.js", OWNER, OWNER, False, PAGE),
    ("/api/cmd", OWNER, OWNER + b"\n", True, GATE),
    ("/api/cmd", None, OWNER, False, GATE),
    ("/api/access", None, OWNER, False, GATE),
    ("/api/snapshot", None, OWNER, True, ("webpage", "view")),  # a watching page's: the state, no code's work
    ("/api/events", None, OWNER, False, ("webpage", "view")),
    ("/api/update/files", OWNER, OWNER + b"\n", True, UPDATE),
    ("/api/update/file", OWNER, OWNER, True, UPDATE),
    ("/api/update/files", OWNER, OWNER, False, GATE),  # its check is webgate's: loaded first
    ("/api/update/files", b"9182736450", OWNER, True, GATE),  # a wrong code: nothing of the update's
    ("/api/update/files", OWNER[:9], OWNER, True, GATE),
    ("/api/update/files", None, OWNER, True, GATE),
    ("/api/update/files", OWNER, None, True, GATE),  # no owner code set on the board
    ("/api/update/files", b"", b"", True, GATE),
    ("/api/update/files", OWNER, OWNER, True, GATE, 50001),  # locked: refused (429) unloaded
    ("/api/update/files", OWNER, OWNER, True, UPDATE, 50000),  # the lock over
)


def test_a_requests_code_is_loaded_in_order_and_the_updates_only_with_the_owner_code():
    kept = sys.modules.pop("shove.webgate")
    try:
        for row in TABLE:
            path, sent, stored, loaded, want = row[:5]
            if loaded:
                sys.modules["shove.webgate"] = kept
            else:
                sys.modules.pop("shove.webgate", None)
            w = Routes(stored, row[5] if len(row) > 5 else None)
            lock = (w.ofails, w.ountil)
            got = webroutes.Routes.needs(w, Req(path, sent))
            assert got == want, (path, sent, stored, loaded, got)
            assert (w.ofails, w.ountil) == lock and w.fails == 0  # no guess counted, no lock set
    finally:
        sys.modules["shove.webgate"] = kept

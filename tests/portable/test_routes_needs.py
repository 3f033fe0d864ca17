# The code a request read whole has loaded before it is answered, a module a
# step (shove/webroutes.py Routes.needs, httpreq._stage): the page's work
# first; a snapshot's and a stream's state builder; an update's own code,
# in a step of its own, only for a request carrying the owner code while its
# checks are not locked (loaded in the answering step beside the listing's
# work, it took more than the chip's grown heap could give). Asking counts no guess: the lock is the
# answer's (webpage.check_owner). Table-driven; runs in both interpreters.
import sys

from shove import webpage, webroutes

OWNER = b"9182736451"


class Board:
    def __init__(self, owner):
        self.owner = owner
        self.now = 50000

    def ticks_ms(self):
        return self.now

    def read_file(self, path):
        assert path == webpage.OWNER_FILE
        return self.owner


class Parts:
    def __init__(self, owner):
        self.board = Board(owner)


class Routes:
    def __init__(self, owner, locked_until=None):
        self.c = Parts(owner)
        self.fails = self.until = self.ofails = self.ountil = 0
        if locked_until is not None:  # wrong owner codes guessed: locked until then (webpage.guess)
            self.ofails = 3
            self.ountil = locked_until


class Req:
    def __init__(self, path, owner):
        self.path = path
        self.owner = owner


# (path, the owner code sent, the board's owner file, webpage loaded, what is loaded first[, locked until])
TABLE = (
    ("/", None, OWNER + b"\n", True, ("webpage",)),
    ("/api/cmd", OWNER, OWNER + b"\n", True, ("webpage",)),
    ("/api/snapshot", None, OWNER, True, ("webpage", "view")),
    ("/api/events", None, OWNER, False, ("webpage", "view")),
    ("/api/update/files", OWNER, OWNER + b"\n", True, ("webpage", "update")),
    ("/api/update/file", OWNER, OWNER, True, ("webpage", "update")),
    ("/api/update/files", OWNER, OWNER, False, ("webpage",)),  # its check is webpage's: loaded first
    ("/api/update/files", b"9182736450", OWNER, True, ("webpage",)),  # a wrong code: nothing of the update's
    ("/api/update/files", OWNER[:9], OWNER, True, ("webpage",)),
    ("/api/update/files", None, OWNER, True, ("webpage",)),
    ("/api/update/files", OWNER, None, True, ("webpage",)),  # no owner code set on the board
    ("/api/update/files", b"", b"", True, ("webpage",)),
    ("/api/update/files", OWNER, OWNER, True, ("webpage",), 50001),  # locked: refused (429) unloaded
    ("/api/update/files", OWNER, OWNER, True, ("webpage", "update"), 50000),  # the lock over
)


def test_a_requests_code_is_loaded_in_order_and_the_updates_only_with_the_owner_code():
    kept = sys.modules.pop("shove.webpage")
    try:
        for row in TABLE:
            path, sent, stored, loaded, want = row[:5]
            if loaded:
                sys.modules["shove.webpage"] = kept
            else:
                sys.modules.pop("shove.webpage", None)
            w = Routes(stored, row[5] if len(row) > 5 else None)
            lock = (w.ofails, w.ountil)
            got = webroutes.Routes.needs(w, Req(path, sent))
            assert got == want, (path, sent, stored, loaded, got)
            assert (w.ofails, w.ountil) == lock and w.fails == 0  # no guess counted, no lock set
    finally:
        sys.modules["shove.webpage"] = kept

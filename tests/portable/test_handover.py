# The REPL hand-over rule, table-driven over the board's clock: which bytes
# hand the serial port to the REPL, and which are line noise. Runs in both
# interpreters.
from shove import giveback as g
from shove import handover as h

W = h.WINDOW_MS
MAX = 0x3FFFFFFF

# (bytes with their arrival times in ms, the actions expected, lone Ctrl-Cs counted)
CASES = [
    ("mpremote: \\r\\x03, flush, \\r\\x01", [(13, 0), (3, 1), (13, 5), (1, 5)], [0, 1, 0, 3], 0),
    ("a person: Ctrl-C twice", [(3, 0), (3, 300)], [1, 2], 0),
    ("Ctrl-C twice, too slow", [(3, 0), (3, W)], [1, 1], 1),
    ("Ctrl-A too late", [(3, 0), (1, W + 5)], [1, 0], 1),
    ("a lone Ctrl-A is data", [(1, 0)], [0], 0),
    ("noise inside a line", [(123, 0), (3, 1), (34, 2), (3, 3)], [0, 1, 0, 1], 1),
    ("text between cancels", [(3, 0), (65, 1), (1, 2)], [1, 0, 0], 1),
    ("across the clock's wrap", [(3, MAX - 100), (3, 200)], [1, 2], 0),
    ("after a hand-over it starts afresh", [(3, 0), (3, 1), (3, 2)], [1, 2, 1], 0),
    ("after a raw hand-over too", [(3, 0), (1, 1), (3, 2)], [1, 3, 1], 0),
    ("Ctrl-C twice, an hour in", [(3, 3600000), (3, 3600300)], [1, 2], 0),
    ("a terminal's line feed between", [(3, 0), (10, 1), (1, 2)], [1, 0, 3], 0),
    ("each lone Ctrl-C counted", [(3, 0), (3, 2000), (3, 4000), (3, 6000)], [1, 1, 1, 1], 3),
    ("each Ctrl-C cancelled by text counted", [(3, 0), (65, 1), (3, 2), (66, 3)], [1, 0, 1, 0], 2),
]


def test_handover_table():
    for name, seq, want, lone in CASES:
        w = h.Watch()
        got = [w.feed(b, t) for b, t in seq]
        assert got == want, (name, got)
        assert w.lone == lone, (name, w.lone)


def test_one_shot_stream_gives_its_bytes_once_then_no_data():
    s = g.OneShot(b"\x01")
    buf = bytearray(1)
    assert s.ioctl(3, 1) == 1
    assert s.ioctl(3, 1 | 4) == 1  # asked for readable or writable: readable, the only one it reports
    assert s.readinto(buf) == 1 and buf[0] == 1
    assert s.readinto(buf) is None  # "no data now", never end-of-file (which detaches noisily)
    assert s.ioctl(3, 1) == 0
    assert s.write(b"console output") == 14
    assert s.ioctl(4, 0) == 0  # any other request (close, flush): done, nothing to report


# ---- giving the bytes back: models of the port's `os` ------------------------
class _Os:
    """os.dupterm, with (v1.20 on) or without dupterm_notify: the notify
    reads the attached stream into the stdin ring as extmod/modos.c does."""

    def __init__(self, notify=True):
        self.term = None
        self.ring = bytearray()
        if notify:
            self.dupterm_notify = self._notify

    def dupterm(self, s, index=0):
        prev = self.term
        self.term = s
        return prev

    def _notify(self, _obj):
        buf = bytearray(1)
        while self.term is not None and self.term.readinto(buf) == 1:
            self.ring.append(buf[0])


def test_give_back_puts_the_bytes_into_the_stdin_ring_a_v1_27_repl_reads():
    o = _Os()
    assert g.give_back(b"\x01print(1)", o) == 9
    assert bytes(o.ring) == b"\x01print(1)"  # where every release's REPL reads first
    assert o.term is None  # nothing left attached


def test_give_back_without_notify_leaves_a_stream_a_v1_28_repl_reads():
    o = _Os(notify=False)
    assert g.give_back(b"\x01x", o) == 0
    s = o.term
    buf = bytearray(1)
    got = []
    while s.readinto(buf) == 1:
        got.append(buf[0])
    assert bytes(got) == b"\x01x" and s.readinto(buf) is None
    assert s.ioctl(3, 1) == 0  # polled: nothing more to read
    assert o.term is None  # drained: the slot is as it was


class _WebRepl:
    """A stream boot.py attached before the game (webrepl.start())."""

    def readinto(self, buf):
        return None

    def write(self, buf):
        return len(buf)


def test_give_back_attaches_the_stream_that_was_there_before_again():
    for notify in (True, False):
        o = _Os(notify)
        web = _WebRepl()
        assert o.dupterm(web) is None
        attach = o.dupterm
        shots = []
        o.dupterm = lambda st, index=0: (shots.append(st) if isinstance(st, g.OneShot) else None) or attach(st, index)
        g.give_back(b"\x01print(1)", o)
        s = shots[0]
        buf = bytearray(1)
        if notify:
            assert bytes(o.ring) == b"\x01print(1)"
        else:  # attached until the REPL has read it all, then the WebREPL's again
            assert o.term is s
            got = []
            while s.readinto(buf) == 1:
                got.append(buf[0])
            assert bytes(got) == b"\x01print(1)"
        assert o.term is web, notify
        # put back once only: a stream attached after that is never displaced by a late read
        later = _WebRepl()
        o.dupterm(later)
        assert s.readinto(buf) is None and o.term is later, notify
        # a second hand-over gives back the stream there then
        g.give_back(b"\x01", o)
        s = shots[1]
        while s.readinto(buf) == 1:
            pass
        assert o.term is later, notify

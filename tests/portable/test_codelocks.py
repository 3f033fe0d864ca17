# The locks of wrong guesses on the board's server (shove/webgate.py guess,
# the counts kept by shove/webroutes.py): the pairing code's and the owner
# code's each back off 1, 2, 4, 8, 16, then 30 s on the board's clock, apart
# from each other, table-driven over virtual time. Runs in both interpreters.
from shove import ticks_add, webgate

PAIR = b"5372914826"
OWNER = b"9182736451"
WRONG = b"1111111111"


class Routes:
    """What the lock keeps on webroutes.Routes (its four counts), and the pairing code."""

    def __init__(self):
        self.code = PAIR
        self.fails = self.until = self.ofails = self.ountil = 0


def ask(w, now, what, right):
    """The status a guess gets: 200 (the right code, let in), 403 (wrong), 429 (locked), and Retry-After."""
    code = PAIR if what == "pairing" else OWNER
    why = webgate.guess(w, code if right else WRONG, code, now, what)
    if why is None:
        return 200, None
    retry = None
    if why[3]:
        retry = int(why[3].split(":")[1])
    assert why[1] == (what if why[0] == 403 else "slow_down"), why
    return why[0], retry


P = "pairing"
O = "owner"
# (board ms, which code, the right one?, status, Retry-After)
TABLE = (
    (0, P, False, 403, None),  # a first wrong pairing code: its checks locked 1 s
    (0, O, True, 200, None),  # the owner is not locked out by it
    (500, P, True, 429, 1),  # while locked, not even the right pairing code is looked at
    (999, P, False, 429, 1),  # a guess while locked counts for nothing
    (1000, P, False, 403, None),  # the 2nd: 2 s
    (1000, O, False, 403, None),  # the owner code's first wrong one: its own lock, 1 s
    (1001, O, True, 429, 1),
    (1001, P, True, 429, 2),
    (2000, O, True, 200, None),  # the owner's lock over, and ended by the right code
    (2000, O, False, 403, None),  # so a wrong one next is a first again: 1 s
    (2999, P, True, 429, 1),  # (the ms left are rounded up)
    (3000, P, False, 403, None),  # 3rd: 4 s
    (3001, O, True, 200, None),
    (6999, P, False, 429, 1),
    (7000, P, False, 403, None),  # 4th: 8 s
    (14999, P, False, 429, 1),
    (15000, P, False, 403, None),  # 5th: 16 s
    (15000, P, True, 429, 16),
    (31000, P, False, 403, None),  # 6th: 30 s
    (31000, O, True, 200, None),  # the owner, all along, never locked out by the players' guesses
    (61000, P, False, 403, None),  # 7th and every later one: 30 s
    (61000, P, True, 429, 30),
    (91000, P, True, 200, None),  # the right code, once the lock is over, ends its growth
    (91000, P, False, 403, None),  # a wrong one next: 1 s again
    (92000, P, True, 200, None),
)


def test_each_code_has_its_own_lock_backing_off_on_the_boards_clock():
    w = Routes()
    for t, what, right, status, retry in TABLE:
        assert ask(w, t, what, right) == (status, retry), (t, what, right)


def test_the_owner_codes_lock_backs_off_alike_and_leaves_the_pairing_code_alone():
    w = Routes()
    t = 0
    for wait_s in (1, 2, 4, 8, 16, 30, 30):
        assert ask(w, t, O, False) == (403, None), t
        assert ask(w, t, P, True) == (200, None), t  # the players play on
        assert ask(w, t + wait_s * 1000 - 1, O, True) == (429, 1), t
        t += wait_s * 1000
    assert ask(w, t, O, True) == (200, None)
    assert (w.fails, w.ofails) == (0, 0)


def test_the_lock_holds_across_the_clocks_wrap():
    w = Routes()
    t0 = 0x3FFFFFFF - 400  # the 30-bit tick clock wraps 400 ms after the guess
    for at, what, right, status, retry in ((0, P, False, 403, None), (0, P, False, 429, 1),
                                           (500, P, True, 429, 1), (999, P, True, 429, 1),
                                           (1000, P, True, 200, None), (1000, O, False, 403, None),
                                           (1999, O, True, 429, 1), (2000, O, True, 200, None)):
        assert ask(w, ticks_add(t0, at), what, right) == (status, retry), at


def test_the_owner_codes_file_is_the_updates_own():
    # (webgate and wifiset name it themselves: a request without the owner code, or the code shown
    # over USB, loads nothing of shove/update.py, whose heap is kept once loaded)
    from shove import update, wifiset

    assert webgate.OWNER_FILE == update.OWNER_FILE == wifiset.OWNER_FILE

# Scanner timing at its edges, table-driven over a virtual clock in
# microseconds: the step that lands exactly on the end of a window, a
# lockout, a re-arm or a stuck time; contacts still closed when a state ends;
# switches that stick one after another; odd matrix sizes. Each case names
# the events and the microsecond they come at. Runs in CPython and MicroPython.
from shove import profile, scanner

KIND = {scanner.EV_HIT: "hit", scanner.EV_STUCK: "stuck", scanner.EV_CLEARED: "cleared"}
FOREVER = 1 << 40
# the board's default timing (the profile's), spelt out so the cases can be read
WINDOW, LOCKOUT, REARM, STUCK = 3000, 60000, 5000, 2000000


def drive(closures, until_us, period_us=100, rows=8, cols=8, **timing):
    """Step a scanner every `period_us` from 0 to `until_us`; `closures`:
    (row, col, from_us, to_us), closed while from <= t < to.
    -> ([(kind, row, col, t_us)], scanner)"""
    for k, v in (("window_us", WINDOW), ("lockout_us", LOCKOUT), ("rearm_us", REARM), ("stuck_us", STUCK)):
        timing.setdefault(k, v)
    sc = scanner.Scanner(rows, cols, **timing)
    out = []
    t = 0
    while t < until_us:
        for r in range(rows):
            sc.snap[r] = 0
        for r, c, a, b in closures:
            if a <= t < b:
                sc.snap[r] |= 1 << c
        sc.step(t)
        while sc.pending():
            w = sc.pop()
            out.append((KIND[w >> 16], (w >> 8) & 0xFF, w & 0xFF, t))
        t += period_us
    return out, sc


def test_a_dart_is_reported_when_its_window_ends_and_the_next_once_rearmed():
    # A closes at 10 ms: its hit comes at the step 3 ms on; the lockout runs
    # 60 ms from A's first contact to 73 ms, then the matrix must read open
    # for 5 ms: re-armed at 78 ms, so a dart first seen at the next scan
    # (78.1 ms) scores and one already closed at 78 ms is taken for A's bounce
    a = (1, 2, 10000, 12000)
    table = [
        (78100, [("hit", 1, 2, 13000), ("hit", 5, 5, 81100)]),
        (78000, [("hit", 1, 2, 13000)]),
        (70000, [("hit", 1, 2, 13000)]),
    ]
    for start, want in table:
        ev, _ = drive([a, (5, 5, start, start + 2000)], 120000)
        assert ev == want, (start, ev)


def test_a_contact_held_past_the_lockout_must_then_be_quiet_for_the_rearm_time():
    # A still closed at the step that ends the lockout (73 ms), open from the
    # next scan; a bounce at 75 ms (under 5 ms later) is A's, not a dart, and
    # starts the 5 ms of quiet again: re-armed at 80.5 ms, a dart at 81 ms scores
    pulses = [(2, 2, 10000, 73100), (2, 2, 75000, 75500), (4, 1, 81000, 83000)]
    ev, _ = drive(pulses, 120000)
    assert ev == [("hit", 2, 2, 13000), ("hit", 4, 1, 84000)], ev
    # the same dart 600 us early falls in the quiet time and is not one
    ev, _ = drive(pulses[:2] + [(4, 1, 80400, 83000)], 120000)
    assert ev == [("hit", 2, 2, 13000)], ev


def test_switches_that_stick_one_after_another_are_each_reported_once_and_all_stay_masked():
    # A (a dart held for good) is stuck 2 s after its hit; B, closed meanwhile
    # in the same row, is stuck 2 s after A's report. While both are masked
    # other darts score; both released, they are cleared 5 ms later
    ms = 1000
    pulses = [(3, 1, 10 * ms, 6500 * ms), (3, 6, 1000 * ms, 6500 * ms), (0, 4, 5000 * ms, 5002 * ms)]
    ev, sc = drive(pulses, 6600 * ms, period_us=ms)
    assert ev == [("hit", 3, 1, 13 * ms), ("stuck", 3, 1, 2013 * ms), ("stuck", 3, 6, 4013 * ms),
                  ("hit", 0, 4, 5003 * ms), ("cleared", 3, 1, 6505 * ms), ("cleared", 3, 6, 6505 * ms)], ev
    assert sc.calm and sc.mask[3] == 0


def test_a_crossing_that_opened_once_is_not_stuck():
    # A is held for good from 10 ms; B from 50 ms but for one open scan at
    # 1 s: at A's stuck time (2 s after the hit) only A is reported, and B,
    # still closed, only 2 s after that
    ms = 1000
    pulses = [(6, 0, 10 * ms, FOREVER), (6, 3, 50 * ms, 1000 * ms), (6, 3, 1001 * ms, FOREVER)]
    ev, _ = drive(pulses, 4100 * ms, period_us=ms)
    assert ev == [("hit", 6, 0, 13 * ms), ("stuck", 6, 0, 2013 * ms), ("stuck", 6, 3, 4013 * ms)], ev
    # a dart that opens once, after the lockout, and then stays closed: its
    # stuck time counts from the last scan that read the matrix open
    pulses = [(2, 5, 10 * ms, 100 * ms), (2, 5, 102 * ms, FOREVER)]
    ev, _ = drive(pulses, 2200 * ms, period_us=ms)
    assert ev == [("hit", 2, 5, 13 * ms), ("stuck", 2, 5, 2101 * ms)], ev


def test_a_stuck_switch_is_cleared_after_the_rearm_time_of_quiet_each_time():
    # closed at power-up: stuck at once; released at 500 ms, it bounces at
    # 502 ms, so the 5 ms of quiet count from 503 ms. Later a dart held for
    # good is stuck, opens one scan after its report, and is cleared 5 ms on
    ms = 1000
    pulses = [(7, 7, 0, 500 * ms), (7, 7, 502 * ms, 503 * ms), (1, 0, 600 * ms, 2604 * ms)]
    ev, _ = drive(pulses, 2700 * ms, period_us=ms)
    assert ev == [("stuck", 7, 7, 0), ("cleared", 7, 7, 508 * ms), ("hit", 1, 0, 603 * ms),
                  ("stuck", 1, 0, 2603 * ms), ("cleared", 1, 0, 2609 * ms)], ev
    # the same dart on a board that has never had a stuck switch
    ev, _ = drive(pulses[2:], 2700 * ms, period_us=ms)
    assert ev == [("hit", 1, 0, 603 * ms), ("stuck", 1, 0, 2603 * ms), ("cleared", 1, 0, 2609 * ms)], ev


def test_votes_are_counted_up_to_a_byte_of_scans():
    # a long window read fast: B closes first for 254 scans, A one scan later
    # for 300 (counted as 255): A was closed in more scans and wins
    p = 50
    ev, _ = drive([(4, 4, 10000, 10000 + 254 * p), (2, 6, 10000 + p, 10000 + 301 * p)], 60000, period_us=p,
                  window_us=30000)
    assert ev == [("hit", 2, 6, 40000)], ev
    # closed the same number of scans: the first one seen wins, wherever it sits
    ev, _ = drive([(5, 3, 10000, 12000), (1, 1, 10100, 12100)], 30000)
    assert ev == [("hit", 5, 3, 13000)], ev


def test_every_matrix_size_up_to_16_by_16_and_no_other():
    for rows, cols, ok in ((1, 1, True), (16, 16, True), (16, 1, True), (1, 16, True), (0, 4, False),
                           (4, 0, False), (17, 4, False), (4, 17, False)):
        try:
            scanner.Scanner(rows, cols)
            made = True
        except ValueError:
            made = False
        assert made == ok, (rows, cols)


def test_an_odd_row_count_and_the_sixteenth_column_work():
    # 5 rows of 16 columns: a crossing in the last column closed at power-up
    # is stuck and masked; a dart in the last row and column scores
    ev, sc = drive([(0, 15, 0, 300000), (4, 15, 10000, 12000)], 320000, rows=5, cols=16)
    assert ev == [("stuck", 0, 15, 0), ("hit", 4, 15, 13000), ("cleared", 0, 15, 305000)], ev
    assert sc.scans == 3200  # every step is a scan (the stats command reports them)


def test_the_defaults_are_the_boards_timing():
    sc = scanner.Scanner(8, 8)
    t = profile.TIMING
    assert (sc.window_us, sc.lockout_us, sc.rearm_us, sc.stuck_us) == (
        t["window_us"], t["lockout_ms"] * 1000, t["rearm_ms"] * 1000, t["stuck_ms"] * 1000)

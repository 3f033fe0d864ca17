# Scanner timing, table-driven over a virtual clock: pulses, bounce, two
# crossings, stuck switches, ghosting. Runs in CPython and MicroPython.
from shove import scanner
from shove.boards.matrix_model import MatrixModel

MASK = 0x3FFFFFFF
KIND = {scanner.EV_HIT: "hit", scanner.EV_STUCK: "stuck", scanner.EV_CLEARED: "cleared"}


def simulate(pulses, until_ms, period_us=100, start=0, rows=8, cols=8, burst=False, pause=None, **timing):
    """pulses: (row, col, on_ms, length_ms) -> [(kind, row, col, t_ms)].
    burst: step only where the main loop does when it reads in bursts
    (board.scan_idle): while the scanner is calm, a read that finds every
    crossing open is counted, not stepped. pause: (from_ms, to_ms) with no
    read at all (the loop busy with long work)."""
    m = MatrixModel(rows, cols, slots=max(32, len(pulses)))
    for r, c, on, length in pulses:
        # every closure must really be scheduled, or the case tests less than it says
        assert m.close(r, c, (start + int(on * 1000)) & MASK, (start + int((on + length) * 1000)) & MASK)
    sc = scanner.Scanner(rows, cols, **timing)
    full = (1 << cols) - 1
    out = []
    t = 0
    while t < until_ms * 1000:
        if pause and pause[0] * 1000 <= t < pause[1] * 1000:
            t += period_us
            continue
        now = (start + t) & MASK
        closed = 0
        for r in range(rows):
            sc.snap[r] = ~m.levels(r, now) & full
            closed |= sc.snap[r]
        if burst and sc.calm and not closed:
            sc.scans += 1
        else:
            sc.step(now)
        while sc.pending():
            w = sc.pop()
            out.append((KIND[w >> 16], (w >> 8) & 0xFF, w & 0xFF, t // 1000))
        t += period_us
    return out


def kinds(events):
    return [(k, r, c) for k, r, c, _ in events]


def test_pulse_lengths_each_give_exactly_one_hit():
    # (pulse ms, scan period us)
    table = [(0.5, 100), (1, 100), (2, 100), (5, 100), (50, 100), (1, 400), (2, 1000), (0.5, 250)]
    for length, period in table:
        ev = simulate([(3, 5, 10, length)], 300, period_us=period)
        assert kinds(ev) == [("hit", 3, 5)], (length, period, ev)
        assert 10 <= ev[0][3] <= 14, ev  # reported within the sampling window


def test_pulse_shorter_than_the_scan_period_can_be_missed():
    # why the scan must be fast: a 1 ms contact between two 7 ms scans is gone
    ev = simulate([(0, 0, 10.2, 1)], 100, period_us=7000)
    assert ev == []


def test_the_model_counts_closures_no_read_fell_inside():
    # the bench tells a miss the loop's gaps made (no read while closed) from
    # one the scanner made: (closures as (on us, off us), read times us, unseen)
    table = [
        ([(1000, 1500)], [900, 1400, 2000], 0),  # a read inside
        ([(1000, 1500)], [900, 1600, 2000], 1),  # a 0.7 ms gap spans it
        ([(1000, 1500)], [900, 1000, 1600], 0),  # read at its first microsecond
        ([(1000, 1500)], [900, 1500, 1600], 1),  # [on, off): open again at off
        ([(1000, 1500), (3000, 3200)], [900, 1600, 3100, 3300], 1),  # one of two
        ([(1000, 1500), (1100, 1300)], [900, 1200, 1600], 0),  # both read at once
    ]
    for closures, reads, unseen in table:
        m = MatrixModel(8, 8)
        for i, (on, off) in enumerate(closures):
            assert m.close(i, i, on, off)
        for t in reads:
            m.levels(0, t)
        assert m.unseen == unseen, (closures, reads, m.unseen)


def test_bounce_burst_is_one_dart():
    burst = [(2, 2, 10 + 0.7 * i, 0.3) for i in range(12)]
    assert kinds(simulate(burst, 300)) == [("hit", 2, 2)]


def test_bounce_that_outlasts_lockout_is_still_one_dart():
    # chatter keeps going for 120 ms, twice the lockout: re-arm waits for a quiet matrix
    burst = [(2, 2, 10 + 2 * i, 1) for i in range(60)]
    assert burst[-1][2] > 10 + 60 + 50
    assert kinds(simulate(burst, 400)) == [("hit", 2, 2)]


def test_rearm_needs_the_quiet_time_after_the_lockout():
    # 1 ms contacts separated by gaps, for 200 ms: a gap shorter than the
    # 5 ms re-arm time never re-arms; a longer one does, once each lockout is over
    table = [(3, 1), (4, 1), (6, 3), (10, 3)]  # (gap ms, hits)
    for gap, hits in table:
        pulses = [(2, 2, 10 + (1 + gap) * i, 1) for i in range(200 // (1 + gap))]
        ev = simulate(pulses, 400)
        assert kinds(ev) == [("hit", 2, 2)] * hits, (gap, ev)
        times = [t for _, _, _, t in ev]
        assert all(b - a >= 60 for a, b in zip(times, times[1:])), (gap, times)


def test_a_late_step_at_the_end_of_the_window_does_not_push_the_rearm_later():
    # The loop reads nothing for 15 ms in the middle of a dart's window (long
    # work): the hit comes late, but the lockout still counts from the first
    # contact, so a dart 70 ms after the first (window 3 + lockout 60 +
    # re-arm 5, and 2 ms to spare) scores
    ev = simulate([(1, 2, 10, 2), (5, 5, 80, 2)], 300, pause=(11, 26))
    assert kinds(ev) == [("hit", 1, 2), ("hit", 5, 5)], ev
    assert ev[0][3] == 26  # the hit itself at the first step after the pause
    # without the pause the second dart is just as welcome, and one any
    # earlier falls in the lockout
    assert kinds(simulate([(1, 2, 10, 2), (5, 5, 80, 2)], 300)) == [("hit", 1, 2), ("hit", 5, 5)]
    assert kinds(simulate([(1, 2, 10, 2), (5, 5, 70, 2)], 300, pause=(11, 26))) == [("hit", 1, 2)]


def test_two_crossings_at_once_the_one_closed_longest_wins():
    table = [
        ([(1, 1, 10, 0.4), (4, 6, 10.1, 5)], ("hit", 4, 6)),
        ([(4, 6, 10, 5), (1, 1, 10.5, 0.3)], ("hit", 4, 6)),
        ([(0, 7, 10, 2), (7, 0, 10, 2)], ("hit", 0, 7)),  # a tie: the first seen
        ([(7, 0, 10, 2), (0, 7, 10.05, 2)], ("hit", 7, 0)),  # a tie: the first closed, though scanned later
        ([(0, 0, 10, 2), (3, 3, 10.05, 2)], ("hit", 0, 0)),  # ... the very first crossing too
    ]
    for pulses, want in table:
        assert kinds(simulate(pulses, 300)) == [want], pulses


def test_a_window_longer_than_a_byte_of_scans_still_gives_one_dart():
    # a long window read fast: a crossing closed in more than 255 scans of it
    ev = simulate([(2, 3, 10, 40), (5, 1, 10.5, 1)], 200, period_us=50, window_us=30000)
    assert kinds(ev) == [("hit", 2, 3)]


def test_darts_apart_are_separate_hits_within_lockout_are_one():
    ev = simulate([(1, 2, 10, 2), (5, 5, 200, 2)], 400)
    assert kinds(ev) == [("hit", 1, 2), ("hit", 5, 5)]
    ev = simulate([(1, 2, 10, 2), (5, 5, 40, 2)], 400)
    assert kinds(ev) == [("hit", 1, 2)]


def test_stuck_switch_is_reported_masked_and_others_still_score():
    pulses = [(6, 3, 10, 3000), (2, 4, 2500, 2), (6, 3, 4000, 1)]
    ev = simulate(pulses, 4500, period_us=500)
    assert kinds(ev) == [("hit", 6, 3), ("stuck", 6, 3), ("hit", 2, 4), ("cleared", 6, 3), ("hit", 6, 3)]
    assert 2000 <= ev[1][3] <= 2100  # after stuck_us
    assert 3010 <= ev[3][3] <= 3020  # after release + rearm


def test_crossing_closed_at_power_up_is_stuck_not_a_dart():
    ev = simulate([(0, 0, 0, 500), (3, 3, 100, 2)], 700, period_us=500)
    assert kinds(ev) == [("stuck", 0, 0), ("hit", 3, 3), ("cleared", 0, 0)]


def test_timing_survives_the_clock_wrapping():
    start = MASK - 15000  # the 30-bit tick counter wraps 15 ms in
    ev = simulate([(3, 5, 10, 1), (1, 1, 200, 1)], 400, start=start)
    assert kinds(ev) == [("hit", 3, 5), ("hit", 1, 1)]


def test_timing_constants_come_from_the_caller():
    # a lockout of 10 ms lets two darts 40 ms apart through
    ev = simulate([(1, 2, 10, 2), (5, 5, 40, 2)], 200, lockout_us=10000)
    assert kinds(ev) == [("hit", 1, 2), ("hit", 5, 5)]


def test_ghosting_through_closed_crossings():
    m = MatrixModel(4, 4)
    for r, c in ((0, 0), (0, 1), (1, 0)):
        m.close(r, c, 0, 1000)
    m.update(10)
    # row 1 reaches col 1 through (1,0) -> row 0 -> (0,1): a ghost at (1,1)
    assert [~m.levels(r, 10) & 15 for r in range(4)] == [0b11, 0b11, 0, 0]
    assert m.levels(0, 2000) == 15  # all released


def test_window_picks_real_crossing_over_a_brief_ghost():
    # (0,0) and (1,1) are darts 1 ms apart; (0,1) blips: ghosts come and go
    pulses = [(0, 0, 10, 4), (0, 1, 10.5, 0.3), (1, 1, 10.6, 0.3)]
    assert kinds(simulate(pulses, 300)) == [("hit", 0, 0)]


def test_event_ring_is_bounded():
    sc = scanner.Scanner(2, 2)
    for i in range(100):
        sc._push(i + 1)
    got = []
    while sc.pending():
        got.append(sc.pop())
    assert got == list(range(1, 32)) and sc.dropped == 69
    assert sc.pop() == 0


def test_reading_in_bursts_while_calm_changes_no_event():
    # the main loop skips the step for reads that find everything open while
    # the scanner is calm (idle, nothing masked): every case gives the same
    # events, at the same times, as stepping every read
    bounce = [(2, 2, 10 + 0.7 * i, 0.3) for i in range(12)]
    table = [
        ([(3, 5, 10, 0.5)], 300, 100, 0),
        ([(1, 2, 10, 2), (5, 5, 40, 2), (5, 5, 200, 1)], 400, 100, 0),
        (bounce, 300, 100, 0),
        ([(6, 3, 10, 3000), (2, 4, 2500, 2), (6, 3, 3500, 2)], 4500, 500, 0),  # stuck, masked, cleared
        ([(0, 0, 0, 500), (3, 3, 100, 2)], 700, 500, 0),  # closed at power-up
        ([(3, 5, 10, 1), (1, 1, 200, 1)], 400, 100, MASK - 150000),  # across the clock's wrap
        ([(1, 1, 10, 2), (1, 4, 10.5, 2), (4, 1, 11, 2)], 300, 100, 0),  # a ghost
    ]
    for pulses, until, period, start in table:
        every = simulate(pulses, until, period_us=period, start=start)
        assert every, pulses  # each case has events to compare
        assert simulate(pulses, until, period_us=period, start=start, burst=True) == every, pulses


def test_calm_only_while_idle_with_nothing_masked():
    sc = scanner.Scanner(2, 2, window_us=1000, lockout_us=2000, rearm_us=500, stuck_us=5000)
    seen = []
    # (time us, row 0 closed?) -> calm after the step
    for t, closed in [(0, 0), (100, 1), (600, 1), (1200, 0), (2000, 0), (3300, 0), (3900, 0), (4000, 0)]:
        sc.snap[0] = closed
        sc.step(t)
        seen.append((t, sc.state, sc.calm))
    assert seen == [(0, scanner.IDLE, True), (100, scanner.WINDOW, False), (600, scanner.WINDOW, False),
                    (1200, scanner.LOCKOUT, False), (2000, scanner.LOCKOUT, False),
                    (3300, scanner.RELEASE, False), (3900, scanner.IDLE, True), (4000, scanner.IDLE, True)]
    sc.snap[1] = 2  # held through a whole stuck time: masked, so not calm although idle
    for t in range(4000, 12000, 500):
        sc.step(t)
    assert sc.masked and sc.state == scanner.IDLE and not sc.calm
    sc.snap[1] = 0
    for t in range(12000, 13000, 100):
        sc.step(t)
    assert not sc.masked and sc.calm


def test_no_part_of_a_step_that_runs_bytecode_sees_the_scanner_calm():
    # An interrupt's handler (the ESP32 board's _edge) runs at any jump in
    # bytecode and steps the scanner only while it is calm: every helper a
    # step calls (bytecode, unlike step itself) must find it not calm, or
    # the handler would step inside a step.
    sc = scanner.Scanner(2, 2, window_us=1000, lockout_us=2000, rearm_us=500, stuck_us=5000)
    seen = []
    for name in ("_start_window", "_hit", "_push", "_reset_persist", "_report"):
        def wrap(f, name=name):
            def w(*a):
                seen.append((name, sc.calm))
                return f(*a)
            return w
        setattr(sc, name, wrap(getattr(sc, name)))
    sc.step(0)  # primed, all open: calm
    assert sc.calm
    for t, closed in [(100, 1), (600, 1), (1200, 0), (3300, 0), (3900, 0)]:  # a dart, re-armed
        sc.snap[0] = closed
        sc.step(t)
    sc.snap[1] = 2  # then a stuck crossing
    for t in range(4000, 12000, 500):
        sc.step(t)
    assert sc.masked
    names = {n for n, _ in seen}
    assert {"_start_window", "_hit", "_push", "_reset_persist", "_report"} <= names, names
    assert all(not calm for _, calm in seen), seen

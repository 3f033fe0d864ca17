# When the LED strip is written (shove/strip.py): a write blocks the scan,
# so while a dart can score a change waits QUIET_MS, and in the lockout it
# goes at once. Runs in both interpreters: plain asserts only.
from shove import leds, rules, scanner, segments
from shove.strip import QUIET_MS, Strip
from scenario import won_by_second


class Sink:
    """The board's strip: what was written, and when (the step's tick)."""

    def __init__(self):
        self.writes = []
        self.now = 0

    def strip_write(self, frame):
        self.writes.append((self.now, bytes(frame)))


def make(g=None, rearm_at=-1):
    """A strip whose reads of the matrix step `sc`, locked out at first (each
    test says whether a dart can score) and re-armed by read `rearm_at`."""
    board = Sink()
    reads = []
    sc = scanner.Scanner(4, 4)
    sc.state = scanner.LOCKOUT

    def tick():
        reads.append(board.now)
        if len(reads) == rearm_at:
            sc.state = scanner.IDLE

    s = Strip(leds.Renderer(brightness=255), board, tick, sc)
    return s, board, reads


def step(s, board, now, g, armed):
    board.now = now
    s.step(now, g, armed)


def test_a_change_while_a_dart_can_score_is_written_once_it_has_waited_the_quiet_time():
    g = rules.new_game(["A", "B"])
    s, board, _ = make()
    step(s, board, 10, g, False)  # the first frame, in the lockout: at once
    assert [t for t, _ in board.writes] == [10]
    assert s.idle()
    g.throw(segments.encode("T5"))
    s.changed()
    assert not s.idle()
    step(s, board, 1000, g, True)
    step(s, board, 1000 + QUIET_MS - 1, g, True)
    assert len(board.writes) == 1  # still waiting: a dart could land during the write
    # the loop may read in a quiet burst until then
    assert s.waits and s.at == 1000 + QUIET_MS
    step(s, board, 1000 + QUIET_MS, g, True)
    assert [t for t, _ in board.writes] == [10, 1000 + QUIET_MS]
    assert board.writes[1][1] != board.writes[0][1]  # the marks the dart made
    assert s.idle()


def test_a_change_in_the_lockout_is_written_at_once_and_the_wait_starts_afresh_after():
    g = rules.new_game(["A", "B"])
    s, board, reads = make()
    step(s, board, 5, g, False)
    g.throw(segments.encode("D4"))
    s.changed()
    step(s, board, 100, g, True)  # waits from 100
    step(s, board, 120, g, False)  # the dart's lockout: written now
    assert [t for t, _ in board.writes] == [5, 120]
    # the matrix read after each bed of the frame's rendering, and once more
    # just before the write blocks it
    assert reads.count(120) > 9 and reads[-1] == 120
    g.throw(segments.encode("S9"))
    s.changed()
    step(s, board, 300, g, True)
    step(s, board, 300 + QUIET_MS - 1, g, True)  # counted from this change, not the one before
    assert len(board.writes) == 2
    step(s, board, 300 + QUIET_MS, g, True)
    assert len(board.writes) == 3


def test_a_lockout_that_ends_while_the_frame_is_rendered_holds_the_write_as_a_change():
    # the rendering reads the matrix (so a dart meanwhile is seen); those reads can re-arm
    # the scanner, and the write would then leave the matrix unread while a dart can score
    g = rules.new_game(["A", "B"])
    for rearm_at in (1, 5, 10):  # (the rendering's reads are about one a bed, and one just before the write)
        s, board, reads = make(rearm_at=rearm_at)
        step(s, board, 40, g, False)  # locked out when the step began
        assert len(reads) >= rearm_at and s.scanner.state == scanner.IDLE
        assert board.writes == [] and not s.idle()
        assert s.waits and s.at == 40 + QUIET_MS  # the loop may read in a quiet burst until then
        step(s, board, 40 + QUIET_MS - 1, g, True)
        assert board.writes == []
        step(s, board, 40 + QUIET_MS, g, True)
        assert [t for t, _ in board.writes] == [40 + QUIET_MS] and s.idle()
    # a lockout that lasts past the write: written at once
    s, board, reads = make()
    step(s, board, 40, g, False)
    assert [t for t, _ in board.writes] == [40] and s.idle()
    # ... and a frame the strip already shows costs no write, so nothing waits
    s.changed()
    s.scanner.state = scanner.LOCKOUT
    reads.clear()
    s.tick = lambda: setattr(s.scanner, "state", scanner.IDLE)
    step(s, board, 50, g, False)
    assert len(board.writes) == 1 and s.idle()
    # with no game in play no dart can score: nothing to hold
    s2, board2, _ = make(rearm_at=1)
    step(s2, board2, 60, won_by_second(), False)
    assert [t for t, _ in board2.writes] == [60]


def test_an_unchanged_frame_is_not_written_again():
    g = rules.new_game(["A", "B"])
    s, board, _ = make()
    step(s, board, 1, g, False)
    s.changed()  # nothing the strip shows changed
    step(s, board, 2, g, False)
    assert len(board.writes) == 1
    assert s.idle()
    for t in (3, 4000):  # nothing changed, nothing animates: no frame at all
        step(s, board, t, g, t == 3)
    assert len(board.writes) == 1 and s.idle()


def test_while_the_doctor_holds_the_strip_no_frame_is_written():
    g = rules.new_game(["A", "B"])
    s, board, _ = make()
    s.diag = 3
    s.changed()
    step(s, board, 1, g, False)
    assert board.writes == [] and not s.waits
    s.diag = None
    step(s, board, 2, g, False)
    assert len(board.writes) == 1


def test_no_game_and_a_finished_game_are_written_without_waiting():
    s, board, _ = make()
    g = won_by_second()
    step(s, board, 7, g, True)
    assert [t for t, _ in board.writes] == [7]
    s.changed()
    step(s, board, 8, None, True)  # no game (the strip goes dark): no dart can score
    assert [t for t, _ in board.writes] == [7, 8]
    assert board.writes[1][1] == bytes(3 * s.renderer.count)


def test_a_win_chase_writes_its_frames_as_time_passes_and_never_goes_idle():
    g = won_by_second()
    s, board, _ = make()
    for t in (0, 200, 400, 600):
        step(s, board, t, g, True)
        assert not s.waits  # every frame is needed: no quiet burst
    assert [t for t, _ in board.writes] == [0, 200, 400, 600]
    assert not s.idle()


def test_a_gifts_flash_is_written_in_the_lockout_and_its_end_forces_a_frame():
    g = rules.new_game(["A", "B"])
    for seg in ("T5", "S5"):
        g.throw(segments.encode(seg))
    s, board, _ = make()
    step(s, board, 900, g, False)
    s.renderer.gift([(1, 1)], 4, 1000)  # the S5 gave Bob a mark on 5
    s.changed()
    step(s, board, 1000, g, False)  # the dart's lockout
    assert [t for t, _ in board.writes] == [900, 1000]
    lit = board.writes[1][1]
    assert lit[3 * (4 * 6 + 3):3 * (4 * 6 + 3) + 3] == b"\xff\xff\xff"  # Bob's square flashes white
    # armed again: the flash's steady frames are not forced while a dart can score ...
    step(s, board, 1100, g, True)
    assert s.waits and s.at == 1000 + leds.FLASH_MS  # no frame due before the flash's end
    step(s, board, 1400, g, True)
    assert len(board.writes) == 2
    assert s.waits and s.at == 1000 + leds.FLASH_MS  # ... and the loop may read until its end
    assert not s.idle()
    # ... whose end does force one (after the quiet time, a dart could land meanwhile)
    end = 1000 + leds.FLASH_MS
    step(s, board, end, g, True)
    step(s, board, end + QUIET_MS, g, True)
    assert [t for t, _ in board.writes] == [900, 1000, end + QUIET_MS]
    assert board.writes[2][1][3 * (4 * 6 + 3):3 * (4 * 6 + 3) + 3] != b"\xff\xff\xff"
    assert s.idle() and s.at == -1


def test_a_change_during_a_flash_is_due_at_the_sooner_of_the_quiet_time_and_the_flash_end():
    g = rules.new_game(["A", "B"])
    for seg in ("T5", "S5"):
        g.throw(segments.encode(seg))
    s, board, _ = make()
    s.renderer.gift([(1, 1)], 4, 1000)
    step(s, board, 1000, g, False)
    assert g.phase == rules.PLAY
    s.changed()  # (say a button changed the brightness)
    step(s, board, 1500, g, True)  # the flash ends at 1600, the quiet time at 1750
    assert s.waits and s.at == 1000 + leds.FLASH_MS
    step(s, board, 1550, g, True)
    assert len(board.writes) == 1 and s.at == 1000 + leds.FLASH_MS
    s2, board2, _ = make()
    step(s2, board2, 0, g, False)
    s2.changed()
    step(s2, board2, 100, g, True)  # no flash: the quiet time's end
    assert s2.at == 100 + QUIET_MS
    step(s2, board2, 200, g, True)
    assert s2.at == 100 + QUIET_MS
    s3, board3, _ = make()
    s3.renderer.gift([(1, 1)], 4, 1000)
    step(s3, board3, 1000, g, False)
    s3.changed()
    step(s3, board3, 1100, g, True)  # the quiet time ends at 1350, before the flash
    assert s3.at == 1100 + QUIET_MS
    # tick 0 is a tick like any other, and the clock wraps (at 2**30 ms)
    wrap = 1 << 30
    s4, board4, _ = make()
    s4.renderer.gift([(1, 1)], 4, 0)
    step(s4, board4, 0, g, False)
    assert s4.at == leds.FLASH_MS
    s5, board5, _ = make()
    s5.renderer.gift([(1, 1)], 4, wrap - leds.FLASH_MS)  # it ends at tick 0
    step(s5, board5, wrap - leds.FLASH_MS, g, False)
    s5.changed()
    step(s5, board5, wrap - 100, g, True)  # the quiet time would end at 150
    assert s5.at == 0


def test_a_hint_blinks_at_every_frame_it_needs_and_is_not_a_quiet_burst():
    for at in (10, 0):  # (tick 0 is a tick like any other)
        for armed in (False, True):  # someone asked: it blinks while a dart can score too
            g = rules.new_game(["A", "B"])
            s, board, _ = make()
            step(s, board, at, g, False)
            s.renderer.hint(0, at)
            step(s, board, at, g, armed)
            assert not s.waits and not s.idle()
            n = len(board.writes)
            for t in range(at + 50, at + 2000, 50):
                step(s, board, t, g, armed)
                assert not s.waits
            assert len(board.writes) - n >= 2  # it blinks: frames that differ were written


def test_a_change_at_tick_zero_waits_the_quiet_time_too():
    g = rules.new_game(["A", "B"])
    s, board, _ = make()
    step(s, board, 1 << 29, g, False)
    g.throw(segments.encode("T5"))
    s.changed()
    step(s, board, 0, g, True)
    step(s, board, QUIET_MS - 1, g, True)
    assert len(board.writes) == 1
    step(s, board, QUIET_MS + 1, g, True)  # (tick 0 stands for none waiting: a tick later)
    assert len(board.writes) == 2


def test_a_new_strip_writes_nothing_while_there_is_nothing_to_light_and_waits_with_a_game_in_play():
    s, board, _ = make()
    step(s, board, 100, None, True)  # no game: the strip is dark as it came up
    assert board.writes == [] and s.idle()
    g = rules.new_game(["A", "B"])
    s2, board2, _ = make()
    step(s2, board2, 5000, g, True)  # a game in play at start-up: its first frame waits too
    assert board2.writes == []
    step(s2, board2, 5000 + QUIET_MS, g, True)
    assert [t for t, _ in board2.writes] == [5000 + QUIET_MS]


def test_a_new_strip_and_a_change_are_due_at_once_never_a_quiet_burst():
    # `waits` tells the loop it may read in a quiet burst until `at`: a new
    # strip's first frame and a change (a dart's marks, to be written in its
    # lockout) are due now, so the loop must step the strip first
    g = rules.new_game(["A", "B"])
    s, board, _ = make()
    assert not s.waits
    step(s, board, 1000, g, True)  # a dart can score: the first frame waits the quiet time
    assert s.waits and s.at == 1000 + QUIET_MS and board.writes == []
    g.throw(segments.encode("T5"))
    s.changed()
    assert not s.waits


def test_the_pairing_code_spelled_needs_every_frame_and_is_not_a_quiet_burst():
    for at in (10, 0):  # (tick 0 is a tick like any other)
        for armed in (False, True):
            g = rules.new_game(["A", "B"])
            s, board, _ = make()
            step(s, board, at, g, False)
            assert s.renderer.show_code("123", at)
            step(s, board, at, g, armed)
            assert not s.waits and not s.idle()
            n = len(board.writes)
            for t in range(at + 100, at + 4000, 100):
                step(s, board, t, g, armed)
                assert not s.waits
            assert len(board.writes) - n >= 3  # its digits, one after another, were written

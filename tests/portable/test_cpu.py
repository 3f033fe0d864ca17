# The board faces, the throw model, the computer player and the coach.
# Plain asserts only: runs under CPython (pytest) and inside MicroPython.
import math

from shove import coach, cpu, rules, segments, throwing
from shove.rules import new_game

from oracle import gives_game, remaining


def seg(s):
    return segments.encode(s)


def set_marks(g, side, bed, n):
    g.marks[side * g.nb + g.rules.beds.index(bed)] = n


def endgame(variant="classic", names=("Ann", "Bob"), rules_=None):
    """Every bed closed for every side; the test opens what it needs."""
    g = new_game(list(names), variant=variant, rules=rules_)
    for s in range(g.n):
        for b in g.rules.beds:
            set_marks(g, s, b, g.rules.marks)
    return g


# ---- geometry -----------------------------------------------------------------------

def test_numbers_run_clockwise_from_20_at_the_top():
    assert throwing.ORDER[:5] == (20, 1, 18, 4, 13)
    assert sorted(throwing.ORDER) == list(range(1, 21))
    f = throwing.face("steel")
    r = 103.0
    for i in range(20):
        a = i * math.pi / 10
        assert throwing.segment_at(f, r * math.sin(a), r * math.cos(a)) == seg("T%d" % throwing.ORDER[i])
    # 6 is at three o'clock, 3 at six o'clock, 11 at nine o'clock
    assert throwing.segment_at(f, 140.0, 0.0) == seg("SO6")
    assert throwing.segment_at(f, 0.0, -140.0) == seg("SO3")
    assert throwing.segment_at(f, -166.0, 0.0) == seg("D11")


def test_rings_of_the_steel_board():
    f = throwing.face("steel")
    for y, name in ((0.0, "DB"), (6.0, "DB"), (7.0, "SB"), (15.5, "SB"), (16.5, "SI20"), (98.5, "SI20"),
                    (99.5, "T20"), (106.5, "T20"), (107.5, "SO20"), (161.5, "SO20"), (162.5, "D20"),
                    (169.5, "D20"), (170.5, "MISS"), (300.0, "MISS")):
        assert segments.name(throwing.segment_at(f, 0.0, y)) == name, (y, name)
    # a dart on a wire scores the ring outside it, in both interpreters (the
    # same seed, the same darts): each ring's edge is where the next begins
    for i, name in enumerate(("SB", "SI20", "T20", "SO20", "D20", "MISS")):
        assert segments.name(throwing.segment_at(f, 0.0, f[i])) == name, (f[i], name)


def test_every_aim_point_lies_in_its_segment_on_every_face():
    for name in throwing.FACES:
        f = throwing.face(name)
        for n in range(1, 21):
            for ring in ("SI", "T", "D"):
                code = seg(ring + str(n))
                assert throwing.segment_at(f, *throwing.aim_point(f, code)) == code
            x, y = throwing.aim_point(f, seg("S%d" % n))  # S aims at the big outer single
            assert throwing.segment_at(f, x, y) == seg("SO%d" % n)
        assert throwing.segment_at(f, *throwing.aim_point(f, segments.DB)) == segments.DB
        # the bull, either ring, is aimed at its centre
        assert throwing.aim_point(f, segments.DB) == throwing.aim_point(f, segments.SB) == (0.0, 0.0)


def test_faces_are_ordered_rings_and_an_unknown_face_is_refused():
    for name in throwing.FACES:
        f = throwing.FACES[name]
        assert 0 < f[0] < f[1] < f[2] < f[3] < f[4] < f[5]
    assert throwing.FACES["soft15"][5] > throwing.FACES["steel"][5] > throwing.FACES["soft13"][5]
    try:
        throwing.face("dartboard")
    except ValueError:
        return
    raise AssertionError("accepted an unknown face")


# ---- the throw model ----------------------------------------------------------------

def test_generator_is_the_same_in_both_interpreters():
    r = throwing.Rng(2026)
    assert [r.bits15() for _ in range(6)] == [15153, 2881, 2099, 27469, 27193, 5572]
    # a seed past 30268 sets all three of its parts (a game's seed is 30 bits); the default seed
    r = throwing.Rng(0x2345678)
    assert [r.bits15() for _ in range(6)] == [29511, 23341, 19237, 11880, 29263, 19851]
    r = throwing.Rng()
    assert [r.bits15() for _ in range(3)] == [738, 28222, 9958]
    # the largest seed, and one just under a multiple of the third part's divisor
    for seed, want in ((0x3FFFFFFF, [15252, 12065, 20015]), (917300999, [29689, 10375, 4796])):
        r = throwing.Rng(seed)
        assert [r.bits15() for _ in range(3)] == want, seed
    # the deviates are whole multiples of 1/32768: exact in either interpreter's float
    r = throwing.Rng(7)
    assert [r.normal() for _ in range(3)] == [-1.2288818359375, 0.120025634765625, 0.486114501953125]
    a = throwing.Rng(99)
    b = throwing.Rng(99)
    assert [a.below(100) for _ in range(50)] == [b.below(100) for _ in range(50)]


def test_normal_deviates_have_mean_zero_and_spread_one():
    r = throwing.Rng(5)
    xs = [r.normal() for _ in range(3000)]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    assert abs(mean) < 0.06 and 0.9 < var < 1.1, (mean, var)


def test_a_perfect_thrower_hits_what_it_aims_at_but_for_bounce_outs():
    f = throwing.face("soft15")
    r = throwing.Rng(11)
    misses = 0
    for i in range(2000):
        aim = seg("T%d" % (i % 20 + 1))
        hit = throwing.throw(f, 0.001, aim, r)
        if hit == segments.MISS:
            misses += 1
        else:
            assert hit == aim
    assert 15 <= misses <= 70, misses  # 2 % bounce out on a soft-tip face


def test_scatter_grows_with_sigma_and_singles_are_reported_as_s():
    f = throwing.face("soft15")
    hits = []
    for level in (1, 6):
        r = throwing.Rng(3)
        k = 0
        for _ in range(600):
            code = throwing.throw(f, throwing.sigma(level), seg("T20"), r)
            assert not segments.name(code).startswith(("SI", "SO"))
            if segments.number(code) == 20:
                k += 1
        hits.append(k)
    assert hits[1] > 2 * hits[0], hits


def test_levels_get_steadier_and_bad_levels_are_refused():
    assert len(throwing.LEVELS) >= 5
    for i in range(1, len(throwing.LEVELS)):
        assert throwing.LEVELS[i] < throwing.LEVELS[i - 1]
    for bad in (0, 7, "3", True, None):
        try:
            throwing.sigma(bad)
        except ValueError:
            continue
        raise AssertionError("accepted level %r" % (bad,))


def test_scatter_tables_account_for_every_dart():
    for level in (1, 3, 6):
        p = cpu.Player(level)
        for lo, ang, rad in p.scatter[:4]:
            assert abs(sum(ang) - cpu.ONE) < 30, sum(ang)
            assert sum(rad) <= cpu.ONE
        # a steadier thrower puts more of its aim at the treble into it
    t1 = cpu.Player(1).scatter[1]
    t6 = cpu.Player(6).scatter[1]
    assert t6[2][throwing.R_T] > 3 * t1[2][throwing.R_T]


# ---- the strategy ------------------------------------------------------------------

def test_needing_one_mark_it_will_not_treble_the_opponent_to_the_win():
    # Ann needs 1 on 4 (and 3 on 7); Bob needs only 2 on 4: T4 would complete him
    g = endgame()
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 1)
    for level in (1, 3, 6):
        aim = cpu.Player(level).choose(g)
        assert aim != seg("T4"), level
        assert not gives_game(g, aim)
    h = coach.hint(g, 3)
    assert h["seg"] != "T4"
    if h["seg"] == "S4":
        assert "not T4" in h["reason"] and "Bob" in h["reason"] and "game" in h["reason"], h


def test_a_treble_is_fine_when_the_opponent_has_closed_the_bed():
    g = endgame()
    set_marks(g, 0, 4, 2)  # Ann: one mark from the win, on 4
    set_marks(g, 1, 8, 0)
    p = cpu.Player(6)
    code, _, cands = p.rank(g)
    flags = [c for c in cands if c[1] == seg("T4")]
    assert flags and not flags[0][2]  # T4 gifts nothing: Bob has closed 4
    assert segments.number(code) == 4


def test_pub_rule_makes_the_treble_harmless_for_the_win():
    g = endgame("pub")
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 1)
    assert not gives_game(g, seg("T4"))  # the last mark is never given
    classic = endgame()
    set_marks(classic, 0, 4, 2)
    set_marks(classic, 0, 7, 0)
    set_marks(classic, 1, 4, 1)
    assert gives_game(classic, seg("T4"))


def test_gift_all_with_three_sides_protects_against_every_opponent():
    g = endgame("classic", ("Ann", "Bob", "Cy"), {"gift": "all"})
    set_marks(g, 0, 5, 2)
    set_marks(g, 0, 6, 0)
    set_marks(g, 2, 5, 1)  # Cy's last two marks are on 5; Bob has other work
    set_marks(g, 1, 9, 0)
    aim = cpu.Player(4).choose(g)
    assert not gives_game(g, aim)
    assert aim not in (seg("T5"),)


def test_teams_and_eight_sides_get_a_target():
    g = new_game(None, [["A1", "A2"], ["B1"], ["C"], ["D"], ["E"], ["F"], ["G"], ["H"]], "extended")
    aim = cpu.Player(3).choose(g)
    assert segments.number(aim) in g.rules.beds
    g.throw(seg("T1"))
    assert not gives_game(g, cpu.Player(3).choose(g))


def test_a_new_players_first_target_in_a_game_of_one_bed_is_that_bed():
    for level in (2, 4):
        g = new_game(["Ann", "Bob"], rules={"beds": [7]})
        assert segments.number(cpu.Player(level).choose(g)) == 7, level


def test_bull_as_a_bed_and_the_bull_off():
    g = endgame("classic", ("Ann", "Bob"), {"beds": [25, 20]})
    set_marks(g, 0, 25, 0)
    assert cpu.Player(5).choose(g) == segments.DB
    h = new_game(["A", "B"], rules={"bull_off": True})
    assert cpu.Player(2).choose(h) == segments.DB


def test_one_mark_games_prefer_the_single_where_a_treble_would_gift():
    g = new_game(["Ann", "Bob"], rules={"marks": 1})
    aim = cpu.Player(5).choose(g)
    assert segments.name(aim).startswith("S"), segments.name(aim)
    f = new_game(["Ann", "Bob"], variant="piecepack")
    assert cpu.Player(5).choose(f) != segments.MISS


def test_progressive_and_flat_and_practice_games_play_out():
    f = throwing.face(throwing.DEFAULT_FACE)
    for variant, over, names in (("progressive", None, ["A", "B"]), ("classic", {"flat": True}, ["A", "B"]),
                                 ("classic", None, ["Solo"]), ("no-gift", {"beds": [3, 19, 25]}, ["A", "B", "C"])):
        g = new_game(names, variant=variant, rules=over)
        p = cpu.Player(6)
        r = throwing.Rng(42)
        for _ in range(400):
            if g.phase == rules.OVER:
                break
            if g.phase == rules.HOLD:
                g.next()
                continue
            before = g.moves()
            aim = p.choose(g)
            assert g.moves() == before  # looking ahead leaves the game as it was
            g.throw(throwing.throw(f, p.sigma, aim, r))
        assert g.phase == rules.OVER, (variant, over)


def test_the_same_seed_plays_the_same_game():
    def play(seed):
        f = throwing.face("soft15")
        g = new_game(["A", "B"])
        p = cpu.Player(4)
        r = throwing.Rng(seed)
        while g.phase != rules.OVER:
            if g.phase == rules.HOLD:
                g.next()
            else:
                g.throw(throwing.throw(f, p.sigma, p.choose(g), r))
        return g.actions.bytes()

    assert play(7) == play(7)
    assert play(7) != play(8)


def test_a_steady_level_beats_a_beginner():
    f = throwing.face("soft15")
    wins = 0
    for seed in range(6):
        g = new_game(["Strong", "Weak"])
        ps = (cpu.Player(6), cpu.Player(2))
        r = throwing.Rng(100 + seed)
        while g.phase != rules.OVER:
            if g.phase == rules.HOLD:
                g.next()
                continue
            p = ps[g.turn]
            g.throw(throwing.throw(f, p.sigma, p.choose(g), r))
        wins += g.winner == 0
    assert wins >= 5, wins


def test_in_a_finish_it_throws_for_the_close_out_in_this_visit():
    # Ann (level 6) needs two marks on 5 with two darts left. With Bob one
    # mark from his win, he all but surely wins at his next visit: two
    # singles close 5 in this visit more often than a treble or a double
    # does, so the computer and the coach aim at the single. With Bob far
    # from his win (three marks on five beds) the race's value decides, as
    # before: the treble, which closes 5 in one dart.
    for variant in ("no-gift", "classic"):
        for far, want in ((False, "S5"), (True, "T5")):
            g = endgame(variant)
            set_marks(g, 0, 5, 1)
            for b in (1, 2, 3, 4, 6) if far else (7,):
                set_marks(g, 1, b, 0 if far else 2)
            g.throw(seg("MISS"))
            p = cpu.Player(6)
            assert segments.name(p.choose(g)) == want, (variant, far)
            assert coach.hint(g, 6)["seg"] == want
    # the close-out's chances behind it: two darts for two marks, a bed
    # needing 2 (counts packed 4 bits a need): at least one more dart
    # never lowers the chance, and none left is no chance at all
    p = cpu.Player(6)
    p._cm = {}
    two = [p._close(1 << 4, d) >> 6 for d in range(4)]
    assert two[0] == 0 < two[1] < two[2] < two[3] <= cpu.ONE, two
    assert p._close(0, 0) >> 6 == cpu.ONE  # nothing left to close: already done
    assert p._close(3 << 8, 2) == 0  # nine marks cannot be thrown with two darts


# ---- the coach ---------------------------------------------------------------------

def test_coach_reasons_name_the_target_and_refuse_when_nothing_is_to_throw():
    g = new_game(["Ann", "Bob"])
    h = coach.hint(g)
    assert h["reason"].startswith(h["seg"] + ":") or h["reason"].startswith(h["seg"] + ",")
    assert "\n" not in h["reason"] and len(h["reason"]) < 120
    for _ in range(3):
        g.throw(seg("MISS"))
    try:
        coach.hint(g)
    except rules.RuleError as e:
        assert e.code == "visit_over"
    else:
        raise AssertionError("a hint during the hold")


def test_coach_says_why_a_single_beats_the_treble():
    g = endgame()
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 2)  # Bob needs one on 4 and one on 8
    set_marks(g, 1, 8, 2)
    code, _, cands = cpu.Player(3).rank(g)
    line = coach.reason(g, seg("S4"), cands)
    assert line == ("S4, not T4: you need one mark on 4; a treble would gift Bob one mark and close that bed, "
                    "so aim smaller and give nothing away"), line


def test_coach_says_what_a_treble_denies_nobody_where_the_opponent_has_closed_the_bed():
    g = endgame()
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 3)  # Bob has closed 4: a treble's spare marks are lost
    code, _, cands = cpu.Player(3).rank(g)
    line = coach.reason(g, seg("T4"), cands)
    assert line == "T4: you need one mark on 4; Bob has closed 4, so the spare marks help nobody", line
    set_marks(g, 1, 4, 2)  # now Bob needs one there too (and one on 8): the single instead, and why
    set_marks(g, 1, 8, 2)
    line = coach.reason(g, seg("S4"), cpu.Player(3).rank(g)[2])
    assert line.startswith("S4, not T4: you need one mark on 4; a treble would gift Bob one mark"), line
    assert line.endswith("so aim smaller and give nothing away"), line


def test_coach_does_not_warn_of_gifts_from_a_winning_dart():
    g = new_game(["Ann", "Bob"], rules={"beds": [7]})
    set_marks(g, 0, 7, 2)
    set_marks(g, 1, 7, 2)
    h = coach.hint(g, 3)
    assert "gift" not in h["reason"] and "hand" not in h["reason"], h


class _Keeper:
    """The game keeper's side of cpu.Autoplay: the game, the pace, next, throw."""

    def __init__(self, g, pace):
        self.game = g
        self.config = {"cpu_ms": pace}
        self.log = []
        self.refuse = 0  # this many throws refused (the flash full), as do_throw would
        self.srcs = []  # the source each dart was reported with
        self.events = []  # (name, fields) sent

    def advance(self):
        self.game.next()
        self.log.append("next")
        self.emit("turn", {"turn": self.game.turn})  # the change's own events, sent by the keeper

    def throw(self, code, src):
        if self.refuse:  # as the keeper's throw when the flash refuses the record
            self.refuse -= 1
            from shove import protocol
            raise protocol.ProtoError("flash_full", "the journal could not be written")
        self.game.throw(code)
        self.log.append(code)
        self.srcs.append(src)
        return {}

    def announce(self, ev):
        pass

    def emit(self, name, fields=None):
        self.log.append(name)
        self.events.append((name, fields))


def test_an_undo_right_after_the_boards_move_waits_the_long_pause():
    # The board's own player change, then an undo before its next step (the
    # host's command arrived first): the next step must still see the undo
    # and wait UNDO_PAUSE paces, over virtual time.
    pace = 100
    g = new_game(["cpu:2", "Bob"], seed=5)
    for _ in range(g.darts_left):
        g.throw(seg("MISS"))
    assert g.phase == rules.HOLD and g.turn == 0
    app = _Keeper(g, pace)
    auto = cpu.Autoplay()
    auto.step(app, 0)  # sees the game: the pace starts
    auto.step(app, pace)  # one pace on: its player change
    assert app.log == ["next", "turn"] and g.turn == 1
    g.undo()  # back to the board's hold, before any other step
    table = [(pace + 1, []), (2 * pace + 1, []), (3 * pace + 1, []), (4 * pace + 1, ["next", "turn"])]
    for now, want in table:
        del app.log[:]
        auto.step(app, now)
        assert app.log == want, (now, app.log)


def test_coach_says_what_a_target_sets_up_and_what_it_risks():
    # a beginner is told to aim at the middle, and why (not "throw it away")
    g = new_game(["Ann", "Bob"])
    h = coach.hint(g, 1)
    if h["seg"] == "DB":
        assert "middle" in h["reason"] and "away" not in h["reason"], h
    # three marks needed on the bed: the treble closes it in one dart
    h = coach.hint(new_game(["Ann", "Bob"]), 6)
    if h["seg"].startswith("T"):
        assert h["reason"].endswith("a treble closes it in one dart"), h
    # the last bed: the hint says it wins, and what the spare marks risk
    g = endgame()
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 3)
    set_marks(g, 1, 8, 0)
    h = coach.hint(g, 6)
    assert "all you need to win" in h["reason"], h


def test_a_bed_another_side_has_open_is_counted_with_the_safe_table():
    p = cpu.Player(6)
    g = new_game(["Ann", "Bob"])
    p._tables(g.rules)
    assert p.e_safe[2] > p.e_num[2] and p.e_safe[1] == p.e_num[1]  # two marks: no treble
    p._open(g)
    assert remaining(p, g, 0) == 9 * p.e_safe[3]
    for b in range(1, 10):
        set_marks(g, 1, b, 3)  # Bob has closed everything: nobody can take a spare mark
    assert p._open(g) == [27, 0]
    assert remaining(p, g, 0) == 9 * p.e_num[3]
    off = new_game(["Ann", "Bob"], variant="no-gift")
    p._tables(off.rules)
    p._open(off)
    assert remaining(p, off, 0) == 9 * p.e_num[3]  # gifts off: every ring is free


def test_an_aims_sum_over_its_sectors_counts_losses_and_gains_exactly():
    # the ranking stores each sector's value (a loss or a gain over a dead
    # dart, up to WIN either way) unsigned with a bias, and the sum takes
    # the bias off again: the result must be the plain sum, on the chip's
    # interpreter as in CPython (a value read back unsigned would turn a
    # loss into a huge gain)
    from array import array
    from shove import cpuloops
    vals = [-cpu.WIN, cpu.WIN, -7, 0, 5, -1, 15999, -15999, 3, -300] * 4  # two rounds of 20 sectors
    ws = array("H", [x + cpuloops.BIAS for x in vals])
    for n in (1, 7, 20):
        chances = [4096 - 151 * i for i in range(n)]
        ang = array("H", chances)
        for q in (0, 3, 20 - n + 10):
            got = cpuloops.dot(ang, ws, q, n) - sum(chances) * cpuloops.BIAS
            assert got == sum(chances[i] * vals[q + i] for i in range(n)), (n, q, got)


def test_the_board_plays_its_visit_at_its_pace_and_waits_for_people():
    # over virtual time (ms): each of the board's darts and its player change
    # come one pace after the last move, whoever made it; nothing while a
    # person throws or once the game is over; a refused dart is tried again
    # a pace later, and a second later at the soonest (cpu.RETRY_MS: with a
    # short pace, a full flash would be refused in every slice)
    pace = 100
    g = new_game(["cpu:4", "Bob"], seed=3)
    app = _Keeper(g, pace)
    auto = cpu.Autoplay()
    app.refuse = 1
    retry = 100 + cpu.RETRY_MS  # the refusal at 100
    table = [(0, 0), (99, 0), (100, 0), (150, 0), (200, 0), (retry - 1, 0), (retry, 1), (retry + 99, 1),
             (retry + 100, 2), (retry + 199, 2), (retry + 200, 3), (retry + 300, "next"), (retry + 400, "next"),
             (5000, "next")]
    for now, want in table:
        auto.step(app, now)
        got = "next" if app.log[-2:] == ["next", "turn"] else len([x for x in app.log if isinstance(x, int)])
        assert got == want, (now, app.log)
    assert app.log[0] == "refused" and g.turn == 1
    # what was sent: the refusal (whose, the code, the message) and the turn change's own events
    assert app.events == [("refused", {"src": "cpu", "error": "flash_full", "msg": "the journal could not be written"}),
                          ("turn", {"turn": 1})], app.events
    assert app.srcs == ["cpu"] * 3  # each dart reported as the board's
    # a person's move starts the pace again: the board's turn comes with
    # Bob's player change at 5,030, its first dart at 5,130
    for _ in range(g.darts_left):
        g.throw(seg("MISS"))
    g.next()
    del app.log[:]
    for now in (5030, 5129):
        auto.step(app, now)
    assert app.log == [] and g.turn == 0
    auto.step(app, 5130)
    assert len(app.log) == 1 and isinstance(app.log[0], int)
    # over: nothing more, however long it waits
    g.phase = rules.OVER
    auto.step(app, 9000)
    auto.step(app, 20000)
    assert len(app.log) == 1
    app.game = None
    auto.step(app, 30000)
    assert len(app.log) == 1 and auto.game is None


def test_with_an_opponents_win_pending_the_last_dart_goes_for_the_only_winning_bed():
    # Bob was gifted his last mark this visit: he wins when it ends unless
    # Ann closes out now. With one dart left, whatever the level or the
    # strategy, her only chance is bed 5, the one she still needs
    for level in (1, 3, 6):
        g = endgame()
        set_marks(g, 0, 5, 2)
        set_marks(g, 1, 1, 2)
        g.throw(seg("S1"))  # Ann's spare mark on her closed 1 completes Bob
        g.throw(seg("MISS"))
        assert g.pending == 2 and g.darts_left == 1
        code = cpu.player(level).choose(g)
        assert segments.number(code) == 5, (level, segments.name(code))
    # needing two beds with one dart, nothing can stop Bob: still a dart at
    # the board (a legal code), and the coach still names one with a reason
    g = endgame()
    set_marks(g, 0, 5, 2)
    set_marks(g, 0, 6, 2)
    set_marks(g, 1, 1, 2)
    g.throw(seg("S1"))
    g.throw(seg("MISS"))
    code = cpu.player(3).choose(g)
    assert segments.valid(code)
    h = coach.hint(g, 3)
    assert segments.encode(h["seg"]) >= 0 and h["reason"].startswith(h["seg"] + ":"), h


def test_the_coach_refuses_when_there_is_no_dart_to_throw_and_points_at_the_bull_in_a_bull_off():
    g = new_game(["Ann", "Bob"], rules={"bull_off": True})
    assert coach.hint(g)["seg"] == "DB"
    g.throw(seg("DB"))
    g.throw(seg("MISS"))  # Ann wins the bull-off
    for _ in range(3):
        g.throw(seg("MISS"))
    for phase, code in ((rules.HOLD, "visit_over"), (rules.OVER, "game_over")):
        g.phase = phase
        try:
            coach.hint(g)
        except rules.RuleError as e:
            assert e.code == code
        else:
            raise AssertionError(code)


def test_the_coachs_reason_names_what_a_target_gives_and_to_whom():
    # the reason for a given target, whatever target the strategy picks:
    # who a treble's spare marks would go to, and how many
    def position(variant="classic", bob_needs=0, rules_=None):
        g = endgame(variant, rules_=rules_)
        set_marks(g, 0, 9, 2)  # Ann needs one mark on 9, and bed 2
        set_marks(g, 0, 2, 0)
        set_marks(g, 1, 9, 3 - bob_needs)
        set_marks(g, 1, 1, 0)  # Bob is far from winning
        return g

    t9 = seg("T9")
    r = coach.reason(position(bob_needs=3), t9, [])
    assert r.startswith("T9:") and "Bob" in r and "two marks" in r, r  # Ann's two spare marks go to Bob
    for g in (position(bob_needs=0), position("no-gift", bob_needs=3)):
        r = coach.reason(g, t9, [])
        # nobody takes them, and the hint says why (the bed closed, or gifts off)
        assert r.startswith("T9:") and "gift Bob" not in r and ("help nobody" in r or "gifts are off" in r), r
    g = position(bob_needs=2)
    set_marks(g, 1, 1, 3)  # Bob needs just the two marks on 9: a treble hands him the game
    r = coach.reason(g, seg("S9"), [])
    assert r.startswith("S9") and "T9" in r and "Bob" in r, r
    # a dart at a number that is no bed, with or without a risky bed hit among the candidates
    g = position(bob_needs=3)
    assert coach.reason(g, seg("S15"), []) != coach.reason(g, seg("S15"), [(0, t9, True)])
    # every ring one mark
    g = new_game(["Ann", "Bob"], variant="piecepack")
    assert coach.reason(g, seg("T5"), []).startswith("T5: you need one mark on 5")


def test_the_players_own_view_of_a_gift_win_agrees_with_the_referee():
    # positions where the rules bend the gift: the pub rule keeps the last
    # mark, a long visit can still close out after making a win pending,
    # and with every ring one mark a double is no worse than a single. In
    # each, what the player marks as handing over the game is what the
    # referee does with that exact hit
    pub = endgame("pub")
    set_marks(pub, 0, 4, 2)
    set_marks(pub, 0, 7, 0)
    set_marks(pub, 1, 4, 1)
    long_visit = endgame(rules_={"darts": 9})
    set_marks(long_visit, 0, 2, 2)
    set_marks(long_visit, 1, 5, 1)
    flat = endgame(rules_={"flat": True})
    set_marks(flat, 0, 2, 0)
    set_marks(flat, 1, 5, 2)
    for g, codes in ((pub, ("T4", "S4")), (long_visit, ("T5", "S5", "T2")), (flat, ("S5", "D5", "T5"))):
        for level in (2, 5):
            cands = cpu.player(level).rank(g)[2]
            for name in codes:
                flags = set(c[2] for c in cands if c[1] == seg(name))
                assert flags == {gives_game(g, seg(name))}, (g.rules.variant, level, name, flags)


def test_tables_of_another_level_are_refused_and_lopsided_games_still_get_a_target():
    try:
        cpu.Player(3, cpu._load(2))
    except ValueError:
        pass
    else:
        raise AssertionError("level 2's tables taken for level 3")
    # one side all but done, the other not started, each to throw: a legal
    # target on an open bed either way, at every level
    for level in (1, 6):
        for thrower_done in (True, False):
            g = new_game(["Ann", "Bob"], rules={"marks": 9, "beds": list(range(1, 16))})
            side = 0 if thrower_done else 1
            for b in g.rules.beds:
                set_marks(g, side, b, 9)
            set_marks(g, side, 15, 8)
            code = cpu.player(level).choose(g)
            assert segments.valid(code) and code != segments.MISS, (level, thrower_done)


def test_the_boards_dart_is_the_throw_model_seeded_by_the_game_and_its_move_count():
    # documented so a test (tests/hil) can predict every dart: the same
    # position gives the same dart after an undo or a restart
    g = new_game(["cpu:5", "Bob"], seed=77)
    auto = cpu.Autoplay()
    for _ in range(3):
        p = cpu.player(5)
        want = throwing.throw(p.face, p.sigma, p.choose(g), throwing.Rng(g.seed + 7919 * g.moves()))
        assert auto.dart(g) == want
        g.throw(want)


def test_the_coach_tells_a_hand_over_from_a_gift_and_says_when_a_gift_closes_a_bed():
    def position(bob_needs, darts_used=0):
        g = endgame()
        set_marks(g, 0, 9, 2)  # Ann needs one mark on 9, and bed 2
        set_marks(g, 0, 2, 0)
        set_marks(g, 1, 9, 3 - bob_needs)
        set_marks(g, 1, 1, 0)
        for _ in range(darts_used):
            g.throw(seg("MISS"))
        return g

    t9 = seg("T9")
    # a gift that neither closes Bob's 9 nor wins him the game
    r = coach.reason(position(3), t9, [])
    assert "Bob" in r and "close" not in r and "the game" not in r, r
    # a gift that closes Bob's 9
    r = coach.reason(position(2), t9, [])
    assert "Bob" in r and "close that bed" in r and "the game" not in r, r
    # Bob needs only those marks: the treble hands him the game, whether his
    # win waits for the visit's end or the visit ends with this dart
    for used in (0, 2):
        g = position(2, used)
        set_marks(g, 1, 1, 3)
        r = coach.reason(g, seg("S9"), [])
        assert "Bob" in r and "the game" in r, (used, r)
    # Bob's win is already pending and this is the last dart: a treble that
    # does not win ends the visit, and the game, for him
    g = endgame()
    set_marks(g, 0, 5, 2)
    set_marks(g, 0, 6, 2)
    set_marks(g, 1, 1, 2)
    g.throw(seg("S1"))
    g.throw(seg("MISS"))
    assert "the game" in coach.reason(g, seg("S5"), [])


def test_the_coach_says_aim_at_the_middle_only_when_the_bull_is_worth_more_than_a_dead_dart():
    g = endgame()
    set_marks(g, 0, 4, 0)
    set_marks(g, 1, 4, 0)
    db = segments.DB
    table = [
        (db, [(5, db, False)], True), (db, [(1, db, False)], True), (db, [(0, db, False)], False),
        (db, [(5, seg("T4"), False)], False), (seg("S15"), [(5, seg("S15"), False)], False),
    ]
    for code, cands, middle in table:
        r = coach.reason(g, code, cands)
        assert ("middle" in r) == middle, (segments.name(code), cands, r)
    h = coach.hint(new_game(["Ann", "Bob"], rules={"bull_off": True}), 3)
    assert h["seg"] == "DB" and h["reason"], h  # the hint reply's two fields


def test_each_levels_player_is_made_once_and_kept():
    # its tables are read from cpu.dat once a level, not at every dart
    cpu._players.clear()
    for level in (2, 5):
        p = cpu.player(level)
        assert p is cpu.player(level) and p.level == level
    assert cpu.player(2) is not cpu.player(5)


def test_the_coachs_reason_names_the_ring_the_rule_and_the_win_it_sets_up():
    def ann_needs(marks_left, variant="classic", bob_closed=True, rules_=None, more=True):
        g = endgame(variant, rules_=rules_)
        set_marks(g, 0, 9, g.rules.marks - marks_left)
        if more:
            set_marks(g, 0, 2, 0)
        if not bob_closed:
            set_marks(g, 1, 9, 0)
        set_marks(g, 1, 1, 0)
        return g

    table = [
        # (position, target, words the reason must hold, words it must not)
        (ann_needs(1, more=False), "T9", ["win"], []),
        (ann_needs(3), "T9", ["one", "dart"], ["win"]),
        (ann_needs(5, rules_={"marks": 5}), "T9", [], ["one", "dart"]),
        (ann_needs(1, bob_closed=False), "T9", ["a", "hit", "Bob"], ["None"]),
        (ann_needs(1), "T9", ["nobody"], ["off"]),
        (ann_needs(1, "no-gift"), "T9", ["off"], ["nobody"]),
        (ann_needs(2), "D9", ["double"], ["single"]),
        (ann_needs(2), "S9", ["single"], ["double"]),
    ]
    for g, target, has, lacks in table:
        r = coach.reason(g, seg(target), [])
        words = r.replace(":", " ").replace(",", " ").replace(";", " ").split()
        assert r.startswith(target + ":"), r
        assert all(w in words for w in has) and not any(w in words for w in lacks), (target, r)
    # the bull as a bed: a double bull that would gift is "a bull", not "a treble"
    g = endgame(rules_={"beds": [25, 9]})
    set_marks(g, 0, 25, 2)
    set_marks(g, 0, 9, 0)
    set_marks(g, 1, 25, 0)
    r = coach.reason(g, segments.SB, [])
    assert "bull" in r.split() and "treble" not in r.split(), r


def test_with_up_to_four_sides_a_quarter_dart_changes_the_value():
    # read at the logistic's nearest point, a lag of a dart or two could
    # vanish against three opponents, and aims that differ by that much
    # ranked alike; read between the points, every quarter dart counts
    for n in (2, 3, 4):
        g = new_game(["P%d" % i for i in range(n)], variant="classic")
        p = cpu.Player(6)
        p._tables(g.rules)
        p._open(g)
        rem = [remaining(p, g, s) for s in range(n)]
        p._order(0, rem, n, g.rules.darts)
        vals = [p._after(mine, 3, 0, None, 0) for mine in range(rem[0] - 160, rem[0] + 160, 4)]
        assert all(a > b for a, b in zip(vals, vals[1:])), (n, vals)


def test_the_coachs_reason_names_who_closed_the_bed_the_ring_and_the_gift_exactly():
    # three sides: the spare marks help nobody because everyone else has closed the bed
    g = endgame("classic", ("Ann", "Bob", "Cy"))
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    line = coach.reason(g, seg("T4"), cpu.Player(3).rank(g)[2])
    assert line == "T4: you need one mark on 4; everyone else has closed 4, so the spare marks help nobody", line
    # the bull as a bed: the smaller ring there is the outer bull
    g = new_game(["Ann", "Bob"], rules={"beds": [25, 7]})
    set_marks(g, 0, 25, 2)
    set_marks(g, 1, 25, 3)
    set_marks(g, 1, 7, 0)
    line = coach.reason(g, seg("SB"), cpu.Player(3).rank(g)[2])
    assert line == "SB: you need one mark on 25; for your aim the outer bull is the surer way", line
    # four marks to make: a treble does not close the bed, and nothing more is said
    g = new_game(["Ann", "Bob"], rules={"beds": [4, 7], "marks": 4})
    assert coach.reason(g, seg("T4"), cpu.Player(3).rank(g)[2]) == "T4: you need four marks on 4"
    # a gift that leaves the taker's bed open is only a gift
    g = endgame()
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 0)
    set_marks(g, 1, 8, 0)
    line = coach.reason(g, seg("S4"), cpu.Player(3).rank(g)[2])
    assert line == ("S4, not T4: you need one mark on 4; a treble would gift Bob two marks, "
                    "so aim smaller and give nothing away"), line
    # the pub rule: Bob's last mark is never given, so the spare marks have no taker
    g = endgame("pub")
    set_marks(g, 0, 4, 2)
    set_marks(g, 0, 7, 0)
    set_marks(g, 1, 4, 2)
    line = coach.reason(g, seg("T4"), cpu.Player(3).rank(g)[2])
    assert line == "T4: you need one mark on 4; nobody can take the spare marks, so a treble risks nothing", line

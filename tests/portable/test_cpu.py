# The board faces, the throw model, the computer player and the coach.
# Plain asserts only: runs under CPython (pytest) and inside MicroPython.
import math

from shove import coach, cpu, rules, segments, throwing
from shove.rules import new_game

from oracle import gives_game


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


class _App:
    """The app's side of cpu.Autoplay: the game, the pace, next, throw."""

    def __init__(self, g, pace):
        self.game = g
        self.config = {"cpu_ms": pace}
        self.log = []

    def do_next(self):
        self.game.next()
        self.log.append("next")
        return None, []

    def do_throw(self, code, src):
        self.game.throw(code)
        self.log.append(code)
        return {}

    def _after_dart(self, ev):
        pass

    def emit(self, name, fields=None):
        self.log.append(name)


def test_an_undo_right_after_the_boards_move_waits_the_long_pause():
    # The board's own player change, then an undo before its next step (the
    # host's command arrived first): the next step must still see the undo
    # and wait UNDO_PAUSE paces, over virtual time.
    pace = 100
    g = new_game(["cpu:2", "Bob"], seed=5)
    for _ in range(g.darts_left):
        g.throw(seg("MISS"))
    assert g.phase == rules.HOLD and g.turn == 0
    app = _App(g, pace)
    auto = cpu.Autoplay()
    auto.step(app, 0)  # sees the game: the pace starts
    auto.step(app, pace)  # one pace on: its player change
    assert app.log == ["next"] and g.turn == 1
    g.undo()  # back to the board's hold, before any other step
    table = [(pace + 1, []), (2 * pace + 1, []), (3 * pace + 1, []), (4 * pace + 1, ["next"])]
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
    assert p.remaining(g, 0) == 9 * p.e_safe[3]
    for b in range(1, 10):
        set_marks(g, 1, b, 3)  # Bob has closed everything: nobody can take a spare mark
    assert p._open(g) == [27, 0]
    assert p.remaining(g, 0) == 9 * p.e_num[3]
    off = new_game(["Ann", "Bob"], variant="no-gift")
    p._tables(off.rules)
    p._open(off)
    assert p.remaining(off, 0) == 9 * p.e_num[3]  # gifts off: every ring is free

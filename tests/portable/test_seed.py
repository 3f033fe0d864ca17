# A seed replays the same game (docs/protocol.md, `new`'s `seed`): the
# computer's darts for a seed and a position, and the coach's advice along
# the way, pinned as tables. Plain asserts only: runs under CPython (pytest)
# and inside MicroPython, which must draw the same darts.
from shove import coach, cpu, rules, segments, throwing
from shove.rules import new_game


def play(names, seed, darts=None, hints=0):
    """The board's own visits as cpu.Autoplay throws them (its dart(): the
    generator seeded from the game's seed and move count), every visit
    ended with `next`: (darts by name, the coach's targets for the first
    `hints` positions, the game)."""
    g = new_game(list(names), seed=seed)
    auto = cpu.Autoplay()
    thrown, said = [], []
    while g.phase != rules.OVER and (darts is None or len(thrown) < darts):
        if g.phase == rules.HOLD:
            g.next()
            continue
        if len(said) < hints:
            said.append(coach.hint(g, 3)["seg"])
        code = auto.dart(g)
        g.throw(code)
        thrown.append(segments.name(code))
    return thrown, said, g


# (level, seed): the first six darts of a game of two computer sides of that
# level (the 4th dart is a bounce-out: the draw for it does not depend on the level)
FIRST_DARTS = (
    (1, 7, "S5 MISS S2 MISS MISS S2"),
    (2, 7, "S1 S17 D3 MISS D18 S6"),
    (3, 7, "S1 S17 S3 MISS S18 S4"),
    (4, 7, "S1 S3 S13 MISS S18 S18"),
    (5, 7, "S1 S3 S13 MISS S1 S3"),
    (6, 7, "S1 S15 S1 MISS S1 S2"),
)

# a whole game, level 3 against level 5, seed 7: every dart, and the winner
WHOLE_GAME = ("S1 S17 S3 MISS S1 S3 S4 S12 S12 S13 T4 S5 S20 S5 S8 S7 S8 S15 S7 S6 S15 S2 S9 S6 S13 S2 S9 S1 "
              "S2 S3 S4 S4 S5 S6 S7 S8 S12 S12 S12 S9 S5 T5 S19 D3 S8 S17 S3 S8 S8 S20 S1 S1 S2 S6 D18 S2 D6 "
              "D19 S7 S9")
# the coach's target (level 3) before each of its first twelve darts
WHOLE_GAME_HINTS = "T1 T3 T3 T1 T1 T3 T4 T5 T5 T4 T4 T5"


def test_a_seed_gives_the_same_darts_at_every_level():
    for level, seed, want in FIRST_DARTS:
        got = play(["cpu:%d" % level, "cpu:%d" % level], seed, 6)[0]
        assert " ".join(got) == want, (level, seed, got)


def test_a_seed_replays_the_whole_game_and_the_coachs_advice():
    thrown, said, g = play(["cpu:3", "cpu:5"], 7, hints=12)
    assert " ".join(thrown) == WHOLE_GAME, thrown
    assert g.winner == 1 and g.moves() >= len(thrown)
    assert " ".join(said) == WHOLE_GAME_HINTS, said
    # played again: the same darts, the same advice, word for word
    again = new_game(["cpu:3", "cpu:5"], seed=7)
    auto = cpu.Autoplay()
    for name in thrown[:12]:
        if again.phase == rules.HOLD:
            again.next()
        first = coach.hint(again, 3)
        assert first == coach.hint(again, 3)
        code = auto.dart(again)
        assert segments.name(code) == name
        again.throw(code)
    # another seed, another game
    assert play(["cpu:3", "cpu:5"], 8, 12)[0] != thrown[:12]


def test_after_an_undo_the_same_position_gives_the_same_dart():
    g = new_game(["cpu:4", "cpu:4"], seed=7)
    auto = cpu.Autoplay()
    first = auto.dart(g)
    g.throw(first)
    second = auto.dart(g)
    g.undo()
    assert auto.dart(g) == first
    g.throw(first)
    assert auto.dart(g) == second


def test_a_bounce_out_is_a_draw_below_the_faces_chance_in_a_thousand():
    # soft15: 20 in 1000. The draw is the generator's first 15 bits * 1000
    # >> 15: bits 622 give 18, 655 give 19 (and 20 in 1001), 656 give 20. A
    # steady hand (sigma 0) hits the treble it aims at unless the dart
    # bounces out. (seed, its first 15 bits, bounced out)
    f = throwing.face("soft15")
    assert f[6] == 20
    t20 = segments.encode("T20")
    for seed, bits, bounced in ((24605, 622, True), (6727, 655, True), (36994, 656, False)):
        assert throwing.Rng(seed).bits15() == bits
        got = throwing.throw(f, 0.0, t20, throwing.Rng(seed))
        assert got == (segments.MISS if bounced else t20), (bits, segments.name(got))

"""The panel of rule-following players (bench/panel.py) and the runner that
sets the computer against them (bench/cpu_panel.py), on a small scale; the
full run is `make computer`."""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "portable"))

import cpu_panel  # noqa: E402
import panel  # noqa: E402
from oracle import gives_game  # noqa: E402
from shove import rules, segments  # noqa: E402


def seg(t):
    return segments.encode(t)


def random_game(rnd, variant, sides=2):
    g = rules.new_game(["P%d" % i for i in range(sides)], variant=variant)
    for _ in range(rnd.randrange(0, 50)):
        if g.phase == rules.OVER:
            g.undo()
            break
        if g.phase == rules.HOLD:
            g.next()
            continue
        g.throw(rnd.randrange(segments.COUNT))
    return g


def test_aims_measure_the_throw_model():
    a = panel.Aims(6)
    b = panel.Aims(1)
    for odds in (a.odds, b.odds):
        for p in odds.values():
            assert abs(sum(p) - 1) < 1e-9
    # a steady hand aimed at the treble scores it far more often than a beginner's
    assert a.odds[panel.T][3] > 3 * b.odds[panel.T][3]
    # aimed at the single, a steady hand scores one mark nearly always
    assert a.own(9, panel.S, 1) > 0.85
    assert a.surplus(9, panel.T, 1) > a.surplus(9, panel.S, 1)


def test_tips_player_counts_before_aiming_at_a_treble():
    aims = panel.Aims(4)
    g = rules.new_game(["A", "B"])
    assert segments.name(panel.tips(g, aims)) == "T1"  # three needed, the awkward bed first
    g.marks[0] = 2  # one mark short on 1: a deliberate single
    assert segments.name(panel.tips(g, aims)) == "S1"
    g.marks[9] = 3  # the opponent has closed 1: the surplus harms nobody, but keep it for last
    assert segments.name(panel.tips(g, aims)) == "T2"
    for i in range(1, 9):
        g.marks[i] = 3
    assert segments.name(panel.tips(g, aims)) == "T1"  # the last bed, harmless: a treble


def test_cautious_never_aims_where_an_exact_hit_gifts():
    rnd = random.Random(5)
    aims = panel.Aims(3)
    for _ in range(150):
        g = random_game(rnd, rnd.choice(("classic", "pub", "progressive")), rnd.choice((2, 3)))
        if g.phase != rules.PLAY:
            continue
        c = panel.cautious(g, aims)
        _, _, gifts, _ = g.throw(c)
        g.undo()
        assert not gifts, (segments.name(c), bytes(g.marks))


def test_no_member_hands_the_game_when_it_can_help_it():
    rnd = random.Random(11)
    aims = panel.Aims(5)
    seen = 0
    for _ in range(200):
        g = random_game(rnd, rnd.choice(("classic", "pub", "progressive", "no-gift")), rnd.choice((2, 3, 4)))
        if g.phase != rules.PLAY:
            continue
        for name, f in panel.MEMBERS.items():
            c = f(g, aims)
            assert segments.valid(c)
            if gives_game(g, c):
                seen += 1
                # only when every target would (never, on beds 1-9: a dead number is always there)
                raise AssertionError((name, segments.name(c), bytes(g.marks)))
        panel.forget(g)
    assert not seen


def test_blocker_denies_the_leader_its_last_bed():
    aims = panel.Aims(6)
    g = rules.new_game(["A", "B"])
    for i in range(9):
        g.marks[9 + i] = 3  # B has closed everything but 9, where it needs one
    g.marks[9 + 8] = 2
    g.marks[8] = 2  # A needs one on 9: a treble would close B's last bed
    c = panel.blocker(g, aims)
    assert not gives_game(g, c), segments.name(c)


def test_wilson_interval():
    lo, hi = cpu_panel.wilson(2200, 4000)
    assert 0.534 < lo < 0.535 and 0.565 < hi < 0.566
    assert abs(cpu_panel.wilson(0, 10)[0]) < 1e-12
    assert cpu_panel.wilson(10, 10)[1] > 0.999


def test_a_row_alternates_seats_and_is_reproducible():
    a = cpu_panel.row("cpu", ("cautious",), 3, "classic", 8, None)[0]
    b = cpu_panel.row("cpu", ("cautious",), 3, "classic", 8, None)[0]
    assert a["wins"] == b["wins"] and a["darts"] == b["darts"]
    # the seats: even seeds put the computer first, odd ones second
    seats = [cpu_panel.seating("cpu", ("cautious",), 1000003 * (i + 1)) for i in range(4)]
    assert seats == [(["cautious", "cpu"], 1), (["cpu", "cautious"], 0)] * 2
    # 3 and 4 sides: every order of the players, each as often (n! games in a row)
    for others in (("tips", "blocker"), ("tips", "greedy", "blocker")):
        n = len(others) + 1
        fact = 6 if n == 3 else 24
        orders = [tuple(cpu_panel.seating("cpu", others, 1000003 * (i + 1))[0]) for i in range(fact)]
        assert len(set(orders)) == fact
        assert all(sorted(o) == sorted(("cpu",) + others) for o in orders)
        seat = [cpu_panel.seating("cpu", others, 1000003 * (i + 1))[1] for i in range(fact)]
        assert [seat.count(k) for k in range(n)] == [fact // n] * n
    m = cpu_panel.row("cpu", ("tips", "greedy", "blocker"), 2, "classic", 4, None)[0]
    assert m["goal"] == 0.25 and m["games"] == 4


def test_the_coach_follower_throws_what_the_coach_says():
    from shove import coach

    rnd = random.Random(3)
    ch = cpu_panel._chooser("coach", 3)
    for _ in range(40):
        g = random_game(rnd, "classic")
        if g.phase != rules.PLAY:
            continue
        assert segments.name(ch(g)) == coach.hint(g, 3)["seg"]


def test_the_coachs_row_is_the_computers_games_checked_dart_for_dart():
    cpu_row, games = cpu_panel.row("cpu", ("tips",), 2, "pub", 12, None)
    coach_row, _ = cpu_panel.row("coach", ("tips",), 2, "pub", 12, None, same=games, check=6)
    assert coach_row["wins"] == cpu_row["wins"] and coach_row["played"] == 6
    # games that differ from the coach's (here: made up) make the row play every game itself
    fake = [(not w, d + 1) for w, d in games]
    again, _ = cpu_panel.row("coach", ("tips",), 2, "pub", 12, None, same=fake, check=6)
    assert again["played"] == 12 and again["wins"] == cpu_row["wins"]


def test_publish_writes_the_table_between_its_markers(tmp_path, monkeypatch):
    doc = tmp_path / "computer.md"
    doc.write_text("# before\n%s\nold\n%s\nafter\n" % (cpu_panel.BEGIN, cpu_panel.END))
    monkeypatch.setattr(cpu_panel, "DOC", doc)
    r, _ = cpu_panel.row("cpu", ("greedy",), 4, "no-gift", 6, None)
    # a mixed-panel row under another rule set than classic is outside the plan: not published
    outside = dict(r, against="tips+blocker", variant="progressive", goal=1 / 3)
    cpu_panel.publish([r, outside], 6)
    text = doc.read_text()
    assert text.startswith("# before\n") and text.endswith("after\n") and "old" not in text
    assert "| cpu | greedy | 4 | no-gift | 6 | %d |" % r["wins"] in text
    assert "tips+blocker" not in text
    assert "1 of the 132 planned rows were run" in text
    doc.write_text("no markers")
    try:
        cpu_panel.publish([r], 6)
    except SystemExit as e:
        assert "markers" in str(e)
    else:
        raise AssertionError("published into a page without markers")
    assert doc.read_text() == "no markers"


def test_rows_can_be_picked_by_kind_and_by_member():
    rows = cpu_panel.plan([1, 2, 3], ["classic", "pub"])
    assert len(rows) == 2 * 3 * 5 + 3 * 2  # four members and the coach a level; 3 and 4 sides in classic only
    picked = cpu_panel.select(rows, "cautious,coach")
    assert {(r[0], r[1]) for r in picked} == {("cpu", ("cautious",)), ("coach", ("tips",))}
    assert len(picked) == 2 * 3 * 2
    assert all(len(r[1]) > 1 for r in cpu_panel.select(rows, "multi")) and len(cpu_panel.select(rows, "multi")) == 6
    assert [len(r[1]) for r in cpu_panel.select(rows, "multi4")] == [3, 3, 3]  # 4 sides: three opponents
    assert {r[1] for r in cpu_panel.select(rows, "pairs")} == {(m,) for m in ("tips", "greedy", "blocker", "cautious")}

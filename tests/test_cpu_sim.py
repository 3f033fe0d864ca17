"""The calibration and evidence scripts on a small scale (the full runs are
`make computer`): the levels' MPR lands near the table, and the strategy
beats the naive player."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import cpu_calibrate  # noqa: E402
import cpu_evidence  # noqa: E402
from shove import throwing  # noqa: E402


def test_levels_measure_near_their_target_mpr():
    for level, target in ((1, 1.0), (3, 2.0), (6, 3.5)):
        got = cpu_calibrate.mpr("soft15", throwing.sigma(level), visits=1500, seed=level)
        assert abs(got - target) < 0.15, (level, got)


def test_strategy_beats_naive_and_no_lookahead_violation():
    row = cpu_evidence.compare("t", ("cpu", "naive"), (3, 3), "classic", 120, 1, check=True)
    assert row["rate"] > 0.55, row
    assert row["violations"] == 0 and row["decisions"] > 1000


def test_naive_player_aims_at_the_lowest_open_bed():
    from shove import segments
    from shove.rules import new_game

    g = new_game(["A", "B"])
    assert cpu_evidence.naive(g) == segments.encode("T1")
    g.marks[0] = 3
    assert cpu_evidence.naive(g) == segments.encode("T2")
    h = new_game(["A", "B"], rules={"beds": [25, 20]})
    h.marks[0] = 3  # beds sort as (20, 25): 20 closed
    assert cpu_evidence.naive(h) == segments.DB


def test_the_strategys_scatter_table_matches_the_throw_model():
    # levels 3 and up: the strategy's own table is close to where darts land
    for level in (3, 6):
        assert cpu_calibrate.model_gap(level, "T20", throws=4000) < 0.06


def test_the_boards_tables_are_the_ones_the_throw_model_makes():
    # cpu.dat is made on the host; a change to a level's sigma, the face or
    # the table-making code must come with a remade file
    import cpu_tables
    from shove import cpu

    assert cpu_tables.DATA.read_text() == cpu_tables.text()
    p = cpu.Player(4)
    assert p.scatter == cpu_tables.make(4)[2]
    steel = cpu.Player(4, cpu_tables.make(4, "steel"))
    assert steel.scatter != p.scatter  # another face: its own tables
    try:
        cpu.Player(3, cpu_tables.make(2))
    except ValueError as e:
        assert "level 2 found" in str(e)
    else:
        raise AssertionError("took level 2's tables for level 3")

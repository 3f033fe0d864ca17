"""bench/race_ceiling.py: the no-gift race worked out exactly, the model's
own check and the claim docs/computer.md makes of it (no strategy reaches
what a row of 4,000 games needs against the panel's marks maximisers)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import race_ceiling  # noqa: E402

NEEDED = 0.536  # the observed rate whose 95 % interval's lower end is 52 % over 4,000 games


def test_the_best_response_beats_the_marks_maximiser_but_not_by_what_a_row_needs():
    race = race_ceiling.Race(6)
    first, second, both = race.win("most", 12)
    assert abs(both - 0.5) < 1e-3  # the player against itself, seats alternated: the model's check
    assert first > second  # the first thrower's edge, which the alternated seats share out
    best = race.win("best", 12)[2]
    assert 0.505 < best < NEEDED

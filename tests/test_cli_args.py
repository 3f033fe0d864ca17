"""`hapenny` argument checks that refuse before any port is opened."""
import subprocess
import sys
from pathlib import Path

HAPENNY = str(Path(sys.executable).parent / "hapenny")


def test_new_refuses_players_together_with_teams():
    # a port that does not exist: the refusal must come before any connection
    r = subprocess.run([HAPENNY, "new", "Alice", "Bob", "--teams", "X,Y", "Z", "--port", "/nonexistent"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "not both" in r.stderr and "Alice" in r.stderr, r.stderr


def test_throw_help_says_the_hold_refuses_it():
    r = subprocess.run([HAPENNY, "-h"], capture_output=True, text=True, timeout=60)
    assert "as if the board had detected it" not in r.stdout
    r = subprocess.run([HAPENNY, "throw", "-h"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0


def test_hint_has_help_and_new_explains_computer_sides():
    r = subprocess.run([HAPENNY, "hint", "-h"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--level" in r.stdout
    r = subprocess.run([HAPENNY, "new", "-h"], capture_output=True, text=True, timeout=60)
    assert "cpu:N" in r.stdout

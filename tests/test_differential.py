"""Random games played by the referee in CPython and inside the real
MicroPython interpreter must leave identical states after every action."""
import json
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import scenario
from mphelp import PORTABLE, TESTS, mp_env
from strategies import examples, scripts, setups

pytestmark = pytest.mark.micropython


@pytest.fixture(scope="module")
def worker(micropython):
    proc = subprocess.Popen(
        # the records of a long game are large: a bigger heap than the default 2 MB
        [micropython, "-X", "heapsize=32M", str(TESTS / "mp_scenario_worker.py")], cwd=str(PORTABLE), env=mp_env(PORTABLE, TESTS),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )

    def run(setup, actions):
        proc.stdin.write(json.dumps({"setup": setup, "actions": actions}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        assert line, "the MicroPython worker died"
        rec = json.loads(line)
        assert not (isinstance(rec, dict) and "crash" in rec), rec.get("crash")
        return rec

    yield run
    proc.stdin.close()
    proc.wait(timeout=10)


@st.composite
def games(draw):
    setup = draw(setups())
    return setup, draw(scripts(setup))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_micropython_and_cpython_agree(worker, game):
    setup, actions = game
    expected = json.loads(json.dumps(scenario.play(setup, actions)))
    assert worker(setup, actions) == expected


def test_a_long_game_agrees(worker):
    setup = {"teams": [["A1", "A2"], ["B1"], ["C1", "C2", "C3"]], "variant": "extended", "rules": {"bull_off": True}}
    acts = ["SB", "DB", "MISS"]
    for i in range(400):
        acts.append(["T%d" % (i % 15 + 1), "D%d" % (i * 7 % 16 + 1), "next", "S%d" % (i % 20 + 1), "undo"][i % 5])
    got = worker(setup, acts)
    assert got == json.loads(json.dumps(scenario.play(setup, acts)))
    assert len(got) == len(acts) + 1

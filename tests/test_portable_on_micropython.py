"""Runs every portable test module (tests/portable/test_*.py) again inside the
real MicroPython unix port, with the MicroPython-only ones (tests/mponly): the pure firmware modules must behave the same in
both interpreters. Each MicroPython test is its own pytest item."""
import ast
import json
import subprocess

import pytest

from mphelp import PORTABLE, TESTS, mp_env

MPONLY = TESTS / "mponly"  # tests that only mean something under MicroPython (heap use)

pytestmark = pytest.mark.micropython


def _discover():
    items = []
    for path in sorted(PORTABLE.glob("test_*.py")) + sorted(MPONLY.glob("test_*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                items.append((path.stem, node.name))
    return items


_results = {}


def _run_module(micropython, module):
    if module not in _results:
        proc = subprocess.run(
            [micropython, str(TESTS / "mp_runner.py"), module],
            cwd=str(PORTABLE), env=mp_env(PORTABLE, MPONLY), capture_output=True, text=True, timeout=300,
        )
        recs = {}
        done = False
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                rec = json.loads(line)
                if rec.get("done"):
                    done = True
                else:
                    recs[rec["test"]] = rec
        _results[module] = (recs, done, proc.stdout[-2000:] + proc.stderr[-2000:])
    return _results[module]


@pytest.mark.parametrize("module,test", _discover(), ids=lambda v: v)
def test_under_micropython(micropython, module, test):
    recs, done, tail = _run_module(micropython, module)
    assert done, "the MicroPython run of %s did not finish:\n%s" % (module, tail)
    assert test in recs, "%s.%s did not run under MicroPython" % (module, test)
    assert recs[test]["ok"], recs[test]["err"]

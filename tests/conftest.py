"""Shared test set-up: firmware on the path, the MicroPython interpreter, the
--port option of the hardware-in-the-loop suite, and a summary of how many
tests ran under each interpreter."""
import pytest

import json

from mphelp import FIGURES, ROOT, micropython_path

collect_ignore = ["mponly"]  # MicroPython-only: run by test_portable_on_micropython.py


def pytest_addoption(parser):
    parser.addoption("--port", action="store", default=None,
                     help="run the hardware-in-the-loop suite on the board at this serial port "
                          "(default: $HAPENNY_PORT, else a virtual board)")


@pytest.fixture(scope="session")
def micropython():
    path = micropython_path()
    if not path:
        pytest.fail("no micropython interpreter: run `make setup` or set HAPENNY_MICROPYTHON")
    return path


_counts = {"cpython": 0, "micropython": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        key = "micropython" if "micropython" in report.keywords else "cpython"
        _counts[key] += 1


def figures_table(figures):
    """The run's figures as one table: figure, measure, value."""
    rows = [("figure", "measure", "value")]
    for name, values in figures:
        for i, (k, v) in enumerate(values.items()):
            rows.append((name if i == 0 else "", k.replace("_", " "), str(v)))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    return ["%s  %s  %s" % (a.ljust(w0), b.ljust(w1), c) for a, b, c in rows]


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.write_sep("-", "reliability figures")
        for line in figures_table(FIGURES):
            terminalreporter.write_line(line)
        out = ROOT / "build" / "figures.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps([{"name": n, **v} for n, v in FIGURES], indent=1) + "\n")
    terminalreporter.write_line(
        "interpreters: %d tests passed under CPython, %d under MicroPython"
        % (_counts["cpython"], _counts["micropython"])
    )

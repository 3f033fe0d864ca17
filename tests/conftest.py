"""Shared test set-up: firmware on the path, the MicroPython interpreter, the
--port option of the hardware-in-the-loop suite, and a summary of how many
tests ran under each interpreter."""
import json
import os
import shutil
import tempfile

import pytest

from mphelp import FIGURES, ROOT, micropython_path

collect_ignore = ["mponly"]  # MicroPython-only: run by test_portable_on_micropython.py


def pytest_configure(config):
    # The sims this process starts register in a registry of its own (each
    # xdist worker makes one), so no test sees another worker's sims, nor
    # a `hapenny sim` the user runs meanwhile, nor the user them.
    _sims.append(tempfile.mkdtemp(prefix="hapenny-test-sims-"))
    os.environ["HAPENNY_SIMS_DIR"] = _sims[-1]


def pytest_unconfigure(config):
    for d in _sims:
        shutil.rmtree(d, ignore_errors=True)


_sims = []


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


_figures = []  # gathered from the reports, so figures made in xdist workers arrive too


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # a test's figures travel with its report (user_properties cross from
    # an xdist worker to the controller)
    outcome = yield
    if call.when == "call":
        rep = outcome.get_result()
        while FIGURES:
            name, values = FIGURES.pop(0)
            rep.user_properties.append(("figure", [name, values]))


def pytest_runtest_logreport(report):
    if report.when == "call":
        for key, value in report.user_properties:
            if key == "figure":
                _figures.append((value[0], value[1]))
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
    if hasattr(terminalreporter.config, "workerinput"):
        return  # an xdist worker: the controller prints the summary
    if _figures:
        terminalreporter.write_sep("-", "reliability figures")
        for line in figures_table(_figures):
            terminalreporter.write_line(line)
        out = ROOT / "build" / "figures.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps([{"name": n, **v} for n, v in _figures], indent=1) + "\n")
    terminalreporter.write_line(
        "interpreters: %d tests passed under CPython, %d under MicroPython"
        % (_counts["cpython"], _counts["micropython"])
    )

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


# where each passing test ran: its code inside MicroPython (the portable tests), or under
# CPython on the host, driving the board's firmware (which runs in MicroPython: a virtual
# board's unix port, or the chip), or under CPython alone. A test drives the firmware when it
# uses tests/hil's board or a virtual board of this process that it starts or sends to (a
# `hapenny sim` of another process is not seen: such a test counts as CPython alone)
_counts = {"cpython": 0, "micropython": 0, "board": 0}
BOARD_FIXTURES = ("hil_target", "fresh_sim")  # tests/hil's boards, a real one (--port) too


_figures = []  # gathered from the reports, so figures made in xdist workers arrive too


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # a test's figures travel with its report (user_properties cross from
    # an xdist worker to the controller)
    outcome = yield
    from hapenny.sim.board import VirtualBoard

    seen = (VirtualBoard.starts, VirtualBoard.host_sends)  # a board started, or sent to, during the test
    if call.when == "setup":
        item.vb_seen = seen
    if call.when == "call":
        rep = outcome.get_result()
        if set(BOARD_FIXTURES) & set(item.fixturenames) or seen != getattr(item, "vb_seen", seen):
            rep.user_properties.append(("board", True))
        while FIGURES:
            name, values = FIGURES.pop(0)
            rep.user_properties.append(("figure", [name, values]))


def pytest_runtest_logreport(report):
    if report.when == "call":
        for key, value in report.user_properties:
            if key == "figure":
                _figures.append((value[0], value[1]))
    if report.when == "call" and report.passed:
        if "micropython" in report.keywords:
            key = "micropython"
        elif any(k == "board" for k, _ in report.user_properties):
            key = "board"
        else:
            key = "cpython"
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
    terminalreporter.write_line(interpreters_line(_counts))


def interpreters_line(counts):
    """What ran where, in one line."""
    return ("interpreters: %d tests passed: %d ran on the host under CPython, driving the board's firmware "
            "running under MicroPython; %d ran inside MicroPython; %d under CPython alone"
            % (sum(counts.values()), counts["board"], counts["micropython"], counts["cpython"]))

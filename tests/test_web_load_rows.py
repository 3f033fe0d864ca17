"""The rows of the board's own web server under load (`make bench-web`:
bench/web_record.py, bench/web_load.py) are in the committed run, measured
as issue 39 asks (two pages, one reloading, a hostile client; 3,000
contacts of 0.5 ms), each goal is judged by its figure, and the page shows
them as the run has them (tests/test_perf_docs.py checks the page is the
run's, whole). Not all of them are met yet (docs/performance.md, "Not
proven yet"), so no test asks that they are."""
import copy
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import goals  # noqa: E402
import report  # noqa: E402
import table  # noqa: E402

GOALS = ["%s, %s" % (g, goals.WEB) for g in ("0.5 ms contacts scored", "1 ms contacts scored",
                                             "darts 250 ms apart", "the main loop's period")]


@pytest.fixture(scope="module")
def results():
    return json.loads(report.RESULTS.read_text())


def test_the_run_is_a_commits_under_the_load_the_issue_asks(results):
    w = results["web_load"]
    run = w["run"]
    assert re.fullmatch(r"[0-9a-f]{7,40}", run["commit"]) and not run["dirty"]  # a commit's code, as committed
    assert run["factor"] > 0 and "measured" in run["factor_source"]  # the factor taken in the same run
    n = w["load"]
    # both pages had their streams, the reloading one reloaded again and again, the hostile client kept at it
    assert n["watch_streams"] >= 1 and n["reloads"] >= 20 and n["files"] >= 4 * 20 and n["hostile"] >= 100
    assert w["capture_500us"]["pulses"] == 3000 and w["capture_1000us"]["pulses"] >= 300
    assert w["darts_250ms"]["darts"] >= 100
    assert w["web_steps"]["steps"] > 0 and w["web_steps"]["mean_us"] > 0  # the service slice, priced
    assert w["web"]["faults"] == 0  # nothing the clients sent made the server fault


def test_a_goal_follows_its_figure(results):
    def met(w):
        r = copy.deepcopy(results)
        r["web_load"].update(w)
        return {g: m for g, _, _, m in goals.rows(r)}

    w = results["web_load"]
    good = {"capture_500us": dict(w["capture_500us"], pulses=3000, scored=3000, miss_rate_bound=0.000998),
            "capture_1000us": dict(w["capture_1000us"], pulses=300, scored=300),
            "darts_250ms": {"darts": 120, "lost": 0}, "loop_period_us": 99.9}
    assert {g: met(good)[g] for g in GOALS} == dict.fromkeys(GOALS, "yes")
    worse = [{"capture_500us": dict(good["capture_500us"], scored=2999, miss_rate_bound=0.0016)},
             {"capture_500us": dict(good["capture_500us"], pulses=2000, scored=2000)},  # too few to prove 99.9 %
             {"capture_1000us": dict(good["capture_1000us"], scored=299)},
             {"darts_250ms": {"darts": 120, "lost": 1}}, {"loop_period_us": 100.5}]
    for g, bad in zip([GOALS[0], GOALS[0], GOALS[1], GOALS[2], GOALS[3]], worse):
        after = met(dict(good, **bad))
        assert [x for x in GOALS if after[x] != "yes"] == [g], bad
        assert after[g] == goals.NO


def test_the_page_shows_the_rows(results):
    doc = report.DOC.read_text()
    shown = report.block(doc, report.GOALS_BEGIN, report.GOALS_END)
    for g in GOALS:
        assert "| %s |" % g in shown
    rows = table.web_load_rows(results["web_load"])
    assert len(rows) == 6
    text = report.block(doc)
    for a, b in rows:
        assert "| %s | %s |" % (a.strip(), b) in text

"""docs/performance.md's table, and the goals at its head, are exactly what
bench/report.py makes of the committed bench/results.json: the page cannot
drift from the run."""
import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import goals  # noqa: E402
import report  # noqa: E402


def test_the_performance_table_is_the_committed_run():
    results = json.loads(report.RESULTS.read_text())
    assert report.block(report.DOC.read_text()) == report.render(results)
    assert results["run"]["commit"] and results["run"]["machine"]


def test_the_goals_are_the_committed_runs():
    results = json.loads(report.RESULTS.read_text())
    shown = report.block(report.DOC.read_text(), report.GOALS_BEGIN, report.GOALS_END)
    assert shown == goals.render(results)
    # every goal has its figure in the committed run: make bench's 19 and its Wi-Fi phases' 2, the S3's and
    # C3's (make bench-chips), the four under each of make bench-web's loads
    assert len(goals.rows(results)) == (19 + 2 + 2 * 2 + ("chip_caps" in results["wasm_heap"])
                                        + 4 * ("web_load" in results) + 4 * ("net_play" in results))


def _met(results):
    return {g: met for g, _, _, met in goals.rows(results)}


def test_a_goal_is_met_by_its_figure_not_by_the_page():
    results = json.loads(report.RESULTS.read_text())
    # (that run's 3,000 contacts alone missed 1, a bound of 0.16 %: a run that met it, here)
    results["esp32_model"]["capture_500us"]["miss_rate_bound"] = 0.00099
    worse = copy.deepcopy(results)
    worse["esp32_model"]["loop_period_us"] = 100.5
    worse["esp32_model"]["capture_500us"]["miss_rate_bound"] = 0.0011
    worse["flash"]["wear"]["erases_on_darts"] = 1
    worse["cpu_player"]["mpy_total"] = 12289
    worse["web_latency"]["max"] = 200.5
    worse["web_latency"]["board"]["p99"] = 100.5
    worse["wasm_heap"]["tour"]["computer_peak"] = worse["wasm_heap"]["goals"]["computer_peak"] + 1
    before, after = _met(results), _met(worse)
    changed = {g for g in before if before[g] != after[g]}
    assert changed == {"the main loop's period", "0.5 ms contacts scored, nothing else happening", "flash erases",
                       "a computer's dart, and its code", "a dart to a web page's stream",
                       "a dart to the board-served page's stream"}
    assert all(after[g] == goals.NO for g in changed)
    assert after["heap, against the computer, with hints"] == goals.NO
    better = copy.deepcopy(results)
    better["esp32_model"]["second_dart_after_lockout"]["lost"] = 0
    better["wasm_heap"]["tour"]["computer_peak"] = better["wasm_heap"]["goals"]["computer_peak"]
    assert _met(better)["a second dart right after the first one's lockout"] == "yes"
    assert _met(better)["heap, against the computer, with hints"] == "yes"


def test_a_run_without_a_figure_leaves_its_goal_out():
    results = json.loads(report.RESULTS.read_text())
    del results["web_latency"]
    assert not {"a dart to a web page's stream", "a dart to the board-served page's stream"} & {
        g for g, *_ in goals.rows(results)}
    assert len(goals.rows(results)) == (17 + 2 + 2 * 2 + ("chip_caps" in results["wasm_heap"])
                                        + 4 * ("web_load" in results) + 4 * ("net_play" in results))

"""docs/performance.md's table is exactly what bench/report.py makes of the
committed bench/results.json: the page cannot drift from the run."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import report  # noqa: E402


def test_the_performance_table_is_the_committed_run():
    results = json.loads(report.RESULTS.read_text())
    assert report.block(report.DOC.read_text()) == report.render(results)
    assert results["run"]["commit"] and results["run"]["machine"]

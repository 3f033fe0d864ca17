"""The table in docs/performance.md, and the goals at its head, made from
bench/results.json (written by `make bench`), so the page cannot drift from
the run that measured it. `python bench/report.py` rewrites both;
tests/test_perf_docs.py checks them."""
import json
from pathlib import Path

import goals
from table import table_rows

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "bench" / "results.json"
BEGIN = "<!-- bench:begin: made by bench/report.py from bench/results.json; do not edit -->"
END = "<!-- bench:end -->"
GOALS_BEGIN = "<!-- goals:begin: made by bench/goals.py from bench/results.json; do not edit -->"
GOALS_END = "<!-- goals:end -->"


def render(results):
    run = results["run"]
    lines = ["One run of `make bench` (%d s) on %s, commit %s%s, %s; load average %.2f at its end." % (
        results["seconds"], run["machine"], run["commit"], " with local changes" if run["dirty"] else "",
        run["date"], run["load_at_end"] or 0.0), "", "| measurement | result |", "|---|---|"]
    for a, b in table_rows(results):
        lines.append("| %s | %s |" % (a.strip(), b))
    return "\n".join(lines)


def block(text, begin=BEGIN, end=END):
    i = text.index(begin) + len(begin)
    return text[i:text.index(end, i)].strip("\n")


def _put(text, begin, end, new):
    i = text.index(begin) + len(begin)
    return text[:i] + "\n" + new + "\n" + text[text.index(end, i):]


def write_docs():
    results = json.loads(RESULTS.read_text())
    text = _put(DOC.read_text(), BEGIN, END, render(results))
    DOC.write_text(_put(text, GOALS_BEGIN, GOALS_END, goals.render(results)))


if __name__ == "__main__":
    write_docs()

"""The table in docs/performance.md, made from bench/results.json (written by
`make bench`), so the page cannot drift from the run that measured it.
`python bench/report.py` rewrites the table; tests/test_perf_docs.py checks it."""
import json
from pathlib import Path

from table import table_rows

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "bench" / "results.json"
BEGIN = "<!-- bench:begin: made by bench/report.py from bench/results.json; do not edit -->"
END = "<!-- bench:end -->"


def render(results):
    run = results["run"]
    lines = ["One run of `make bench` (%d s) on %s, commit %s%s, %s; load average %.2f at its end." % (
        results["seconds"], run["machine"], run["commit"], " with local changes" if run["dirty"] else "",
        run["date"], run["load_at_end"] or 0.0), "", "| measurement | result |", "|---|---|"]
    for a, b in table_rows(results):
        lines.append("| %s | %s |" % (a.strip(), b))
    return "\n".join(lines)


def block(text):
    i = text.index(BEGIN) + len(BEGIN)
    return text[i:text.index(END)].strip("\n")


def write_docs():
    text = DOC.read_text()
    new = render(json.loads(RESULTS.read_text()))
    i = text.index(BEGIN) + len(BEGIN)
    DOC.write_text(text[:i] + "\n" + new + "\n" + text[text.index(END):])


if __name__ == "__main__":
    write_docs()

"""docs/computer.md's summary of the panel agrees with the panel's own
summary that bench/cpu_panel.py --publish writes under it: a new run that
changes how many rows are met cannot leave the page claiming the old count."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "computer.md"
BEGIN = "<!-- panel table: written by bench/cpu_panel.py --publish -->"


def test_the_promises_count_the_rows_the_published_panel_met():
    head, block = DOC.read_text().split(BEGIN, 1)
    kinds = re.findall(r"^- [^:\n]+: (\d+) of (\d+) rows met", block, re.M)
    assert len(kinds) == 3  # the pairs, the coach, three and four sides
    met, rows = sum(int(a) for a, _ in kinds), sum(int(b) for _, b in kinds)
    table = len(re.findall(r"^\| (?:cpu|coach) \|", block, re.M))
    assert rows == table  # the summary counts the table's rows
    assert "| %d of %d rows met" % (met, rows) in head

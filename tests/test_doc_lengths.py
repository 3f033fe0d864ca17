"""The docs stay readable: the three pages of figures are at most 350 lines
each (what holds today; how a figure got there is git log's), and the
README, the entry point, links every page in docs/."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MOST = 350


@pytest.mark.parametrize("page", ["performance.md", "computer.md", "reliability.md"])
def test_a_page_of_figures_is_at_most_350_lines(page):
    lines = (ROOT / "docs" / page).read_text().count("\n")
    assert lines <= MOST, "docs/%s has %d lines (at most %d)" % (page, lines, MOST)


def test_the_readme_links_every_page_in_docs():
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)[)#]", readme))
    pages = {"docs/%s" % p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages and not pages - linked, "README.md links none of %s" % ", ".join(sorted(pages - linked))

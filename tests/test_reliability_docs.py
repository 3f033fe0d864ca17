"""docs/reliability.md's figures are the recorded runs' (docs/figures.json),
made by tests/figures_doc.py: the page cannot drift from what was measured."""
import json

import figures_doc


def test_reliability_page_shows_the_recorded_figures():
    kept = json.loads(figures_doc.KEPT.read_text())
    shown = figures_doc.blocks(figures_doc.DOC.read_text())
    for section in figures_doc.SECTIONS:
        assert shown[section] == figures_doc.render(kept, section), section
    assert {"hostile input", "power cuts", "soak"} <= set(kept)

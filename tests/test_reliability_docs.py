"""docs/reliability.md's figures are the recorded runs' (docs/figures.json),
made by tests/figures_doc.py: the page cannot drift from what was measured."""
import copy
import json

import figures_doc


def test_reliability_page_shows_the_recorded_figures():
    kept = json.loads(figures_doc.KEPT.read_text())
    shown = figures_doc.blocks(figures_doc.DOC.read_text())
    for section in figures_doc.SECTIONS:
        assert shown[section] == figures_doc.render(kept, section), section
    assert {"hostile input", "power cuts", "soak"} <= set(kept)


def _holds(kept):
    rows = [r.split(" | ") for r in figures_doc.render(kept, "promises").splitlines()[2:]]
    return {r[0].strip("| "): r[-1].strip("| ") for r in rows}


def test_the_summary_says_a_promise_broken_when_a_recorded_run_broke_it():
    kept = json.loads(figures_doc.KEPT.read_text())
    assert set(_holds(kept).values()) == {"yes"} and len(_holds(kept)) == 4
    for name, key, value in (("power cuts (full count)", "lost_acknowledged_changes", 1),
                             ("hostile input (full count)", "state_unchanged", False),
                             ("soak", "doubled", 2),
                             ("electrical: ghosting -> first in scan order", "every_time", "19/20")):
        broken = copy.deepcopy(kept)
        broken[name]["values"][key] = value
        assert sorted(_holds(broken).values()) == ["**no**", "yes", "yes", "yes"], name
    # the short count stands in when no full count is recorded
    short = {k: v for k, v in kept.items() if "(full count)" not in k}
    assert "%d hostile lines" % kept["hostile input"]["values"]["lines"] in figures_doc.render(short, "promises")

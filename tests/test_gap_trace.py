"""bench/gap_trace.py's marked copy of the firmware: every mark's place is
still in the firmware (a moved line is named, not silently unmarked), the
marked files compile with mpy-cross, and the report puts the stretches that
lost contacts first."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import gap_trace  # noqa: E402

from hapenny.firmware import tool  # noqa: E402


def test_every_mark_finds_its_place_and_the_marked_firmware_compiles(tmp_path):
    fw = gap_trace.marked_copy(tmp_path / "fw")
    sh = fw / "shove"
    for rel in sorted({m[0] for m in gap_trace.MARKS} | {r[0] for r in gap_trace.READS}):
        text = (sh / rel).read_text()
        assert "import shove as _shv" in text, rel
    placed = sum((sh / rel).read_text().count("_shv.m(%r)" % label) for rel, _, label in gap_trace.MARKS)
    assert placed == len(gap_trace.MARKS)
    changed = [sh / rel for rel in {m[0] for m in gap_trace.MARKS}] + [sh / "gaptrace.py", sh / "__init__.py",
                                                                      sh / "boards" / "virtual.py",
                                                                      sh / "boards" / "virtual_esp32.py"]
    for p in changed:
        r = subprocess.run([tool("mpy-cross"), "-o", str(tmp_path / "out.mpy"), str(p)], capture_output=True, text=True)
        assert r.returncode == 0, (p.name, r.stderr)


def test_a_mark_whose_line_is_gone_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(gap_trace, "MARKS", gap_trace.MARKS + (("httpd.py", "a line no firmware has", "x"),))
    with pytest.raises(ValueError, match="a line no firmware has"):
        gap_trace.marked_copy(tmp_path / "fw")


def test_the_report_puts_the_stretches_that_lost_contacts_first(tmp_path):
    p = tmp_path / "gaps.txt"
    p.write_text("0 900000 50 40000 61 16601|rq.guard :: rq.fn\n"
                 "2 617 600 6950 36 415|app.idle :: app.service,app.strip\n"
                 "1 347 850 5220 129 779|app.idle :: app.service\n")
    lines = gap_trace.report(p).splitlines()
    assert [ln.split()[0] for ln in lines[1:]] == ["2", "1", "0"]
    assert lines[1].endswith("app.idle :: app.service,app.strip [36 415]")


def test_the_import_hook_marks_each_load_once_it_is_done_and_not_the_benchs(micropython, tmp_path):
    """LOADS on the real interpreter, with a stand-in `shove` whose m() notes each label: a
    load is marked with the names asked for, an import of what is loaded is not, and a load
    while the clock is the simulator's (the bench's stats) is not. Equal labels are one object."""
    (tmp_path / "shove.py").write_text("MARKS = []\nM_CLOCK = [None]\n\n\ndef m(label):\n    MARKS.append(label)\n")
    (tmp_path / "pk").mkdir()
    (tmp_path / "pk" / "__init__.py").write_text("")
    for name in ("one", "two", "three"):
        (tmp_path / "pk" / (name + ".py")).write_text("X = 1\n")
    (tmp_path / "main.py").write_text(
        "import builtins\nimport sys\n\nimport shove\n" + gap_trace.LOADS + """

class Clock:
    in_sim = False


import pk  # noqa  (as `shove` is before the firmware's `from shove import x`)
from pk import one  # noqa
from pk import one  # noqa  (loaded: no mark)
import pk.two  # noqa
c = shove.M_CLOCK[0] = Clock()
c.in_sim = True
from pk import three  # noqa  (the bench's: no mark)
c.in_sim = False
print(shove.MARKS)
a = "ld." + "pk.one"
print(LABELS.setdefault(a, a) is shove.MARKS[1])
""")
    r = subprocess.run([micropython, "main.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.split("\n")[:2] == ["['ld.pk', 'ld.pk.one', 'ld.pk.two']", "True"]

"""docs/reliability.md's figures, made from the runs that measured them.

Tests report figures (mphelp.figure); each pytest run writes them to
build/figures.json. `python tests/figures_doc.py --record` keeps the latest
of each in the committed docs/figures.json, with the run's date and commit,
and rewrites the tables between the markers in docs/reliability.md
(`make figures` and `make soak` do this). tests/test_reliability_docs.py
checks that the page and docs/figures.json agree."""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
KEPT = ROOT / "docs" / "figures.json"
RUN = ROOT / "build" / "figures.json"
BEGIN = "<!-- figures: %s -->"
END = "<!-- /figures -->"
SECTIONS = {  # marker -> the figure names shown there, in order
    "hostile": ["hostile input (full count)", "hostile input"],
    "power": ["power cuts (full count)", "power cuts"],
    "electrical": ["electrical: "],  # every name that starts so
    "soak": ["soak"],
}


def _rows(kept, prefixes):
    """The recorded figures a section shows, in the order of its prefixes."""
    out = []
    for p in prefixes:
        for name in sorted(kept):
            if (name == p or (p.endswith(": ") and name.startswith(p))) and name not in dict(out):
                out.append((name, kept[name]))
    return out


def render(kept, section):
    rows = _rows(kept, SECTIONS[section])
    if not rows:
        return "(no recorded run yet)"
    lines = []
    for name, rec in rows:
        values = rec["values"]
        if section == "electrical":
            lines.append("| %s | %s |" % (name.split(": ", 1)[1], values["every_time"]))
            continue
        if lines:
            lines.append("")
        lines.append("%s, recorded %s at commit %s (`%s`):" % (name[0].upper() + name[1:], rec["date"], rec["commit"],
                                                             rec["command"]))
        lines += ["", "| figure | result |", "|---|---|"]
        for k, v in sorted(values.items()):
            lines.append("| %s | %s |" % (k.replace("_", " "), v))
    if section == "electrical":
        rec = rows[0][1]
        lines = ["Recorded %s at commit %s (`%s`):" % (rec["date"], rec["commit"], rec["command"]), "",
                 "| fault | every time |", "|---|---|"] + lines
    return "\n".join(lines)


def blocks(text):
    out = {}
    for section in SECTIONS:
        b = BEGIN % section
        i = text.index(b) + len(b)
        out[section] = text[i:text.index(END, i)].strip("\n")
    return out


def write_doc(kept):
    text = DOC.read_text()
    for section in SECTIONS:
        b = BEGIN % section
        i = text.index(b) + len(b)
        j = text.index(END, i)
        text = text[:i] + "\n" + render(kept, section) + "\n" + text[j:]
    DOC.write_text(text)


def record(command):
    kept = json.loads(KEPT.read_text()) if KEPT.exists() else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    for fig in json.loads(RUN.read_text()):
        name = fig.pop("name")
        kept[name] = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "command": command, "values": fig}
    KEPT.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    write_doc(kept)


if __name__ == "__main__":
    if "--record" in sys.argv:
        record(sys.argv[sys.argv.index("--record") + 1] if len(sys.argv) > sys.argv.index("--record") + 1
               else "make figures")
    else:
        write_doc(json.loads(KEPT.read_text()))

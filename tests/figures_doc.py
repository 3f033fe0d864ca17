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
    "promises": [],  # the summary at the head: made from the sections below (_promises)
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


def _count(rec, key):
    return rec["values"].get(key, 0)


def _promises(kept):
    """A row for each promise with a recorded run: the figure that proves it
    (the full count when there is one) and whether it holds."""
    def pick(name):
        return kept.get(name + " (full count)") or kept.get(name)

    rows = []
    h = pick("hostile input")
    if h:
        v = h["values"]
        rows.append(("bad input gets an error and changes nothing", "%d hostile lines: %s, heap growth %d B" % (
                     v["lines"], "nothing changed" if v["state_unchanged"] is True else "the state CHANGED",
                     v["heap_growth_bytes"]),
                     h, v["state_unchanged"] is True and not v["heap_growth_bytes"]))
    p = pick("power cuts")
    if p:
        bad = [_count(p, k) for k in ("lost_acknowledged_changes", "damaged_files", "torn_firmware_files")]
        rows.append(("every acknowledged change survives a power cut", "%d cuts: %d acknowledged changes lost, %d "
                     "damaged files, %d torn firmware files" % tuple([p["values"]["cuts"]] + bad), p, not any(bad)))
    e = [(n.split(": ", 1)[1], rec) for n, rec in sorted(kept.items()) if n.startswith("electrical: ")]
    if e:
        done = [tuple(int(x) for x in rec["values"]["every_time"].split("/")) for _, rec in e]
        rows.append(("electrical faults give the documented outcome", "%d faults: the documented outcome %d of "
                     "%d times" % (len(e), sum(a for a, _ in done), sum(b for _, b in done)),
                     e[0][1], all(a == b for a, b in done)))
    s = kept.get("soak")
    if s:
        bad = [_count(s, k) for k in ("missed", "doubled", "late_events", "wrong_segment", "firmware_errors")]
        rows.append(("hours of play: no dart missed or doubled", "%d closures: %d missed, %d doubled, %d late, %d "
                     "on the wrong segment, %d firmware errors" % tuple([s["values"]["closures"]] + bad), s,
                     not any(bad)))
    if not rows:
        return "(no recorded run yet)"
    return "\n".join(["| promise | the recorded run | recorded by | holds |", "|---|---|---|---|"] + [
        "| %s | %s | `%s`, %s | %s |" % (what, fig, rec["command"], rec["date"], "yes" if ok else "**no**")
        for what, fig, rec, ok in rows])


def render(kept, section):
    if section == "promises":
        return _promises(kept)
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

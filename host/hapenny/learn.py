"""`hapenny learn`: map an unknown dartboard's matrix segment by segment.

The board goes into learn mode (every closure is reported as a `raw` event
instead of scoring); the wizard names each segment in turn, records the
crossing the board reports, refuses a crossing already taken, lets the user
skip (a gap) or go back, then stores the map on the board and writes a
profile file beside it.
"""
import json
import os
import select
import sys
from pathlib import Path

from hapenny import firmware
from hapenny.link import BoardError

DIAL = (20, 1, 18, 4, 13, 6, 10, 15, 2, 17, 3, 19, 7, 16, 8, 11, 14, 9, 12, 5)


def segment_list(split=False):
    """Every segment of a board: singles (or inner and outer), doubles, trebles, bulls."""
    rings = ("SI", "SO", "D", "T") if split else ("S", "D", "T")
    return [r + str(n) for n in DIAL for r in rings] + ["SB", "DB"]


class Wizard:
    def __init__(self, link, segments, out=sys.stdout, inp=sys.stdin):
        self.link = link
        self.segments = segments
        self.out = out
        self.inp = inp
        self.cells = {}  # seg -> (row, col)
        self.skipped = []

    def say(self, text):
        self.out.write(text + "\n")
        self.out.flush()

    def _owner(self, cell):
        for seg, c in self.cells.items():
            if c == cell:
                return seg
        return None

    def _next_input(self):
        """('raw', (row, col)) or ('key', text) or ('eof', None)."""
        while True:
            if self.link.events:
                ev = self.link.events.popleft()
                if ev.get("ev") == "raw":
                    return "raw", (ev["row"], ev["col"])
                if ev.get("ev") == "fault":
                    self.say("  stuck switch at row %d, col %d: it is masked; carry on" % (ev["row"], ev["col"]))
                continue
            fds = [self.inp.fileno()] if self.inp is not None else []
            r, _, _ = select.select(fds, [], [], 0.05) if fds else ([], [], [])
            if r:
                line = self.inp.readline()
                if not line:
                    self.inp = None  # no more typing: closures only
                    continue
                return "key", line.strip().lower()
            self.link._pump(0.0)

    def run(self):
        self.say("Learn mode: throw a dart at (or press) each segment named. "
                 "Enter s to skip one, b to go back, q to stop.")
        i = 0
        while i < len(self.segments):
            seg = self.segments[i]
            self.say("[%d/%d] %s" % (i + 1, len(self.segments), seg))
            kind, val = self._next_input()
            if kind == "key":
                if val == "s":
                    self.skipped.append(seg)
                    i += 1
                elif val == "b" and i:
                    i -= 1
                    prev = self.segments[i]
                    self.cells.pop(prev, None)
                    if prev in self.skipped:
                        self.skipped.remove(prev)
                elif val == "q":
                    self.skipped.extend(self.segments[i:])
                    break
                continue
            owner = self._owner(val)
            if owner is not None:
                self.say("  row %d, col %d is already %s: throw %s again" % (val[0], val[1], owner, seg))
                continue
            self.cells[seg] = val
            self.say("  %s = row %d, col %d" % (seg, val[0], val[1]))
            i += 1
        return self.cells, self.skipped


def learn(link, info, out_path=None, split=False, segments=None, out=sys.stdout, inp=sys.stdin):
    segs = segments or segment_list(split)
    old = link.request("config")["config"]
    link.request("config", set={"learn": True})
    try:
        wiz = Wizard(link, segs, out, inp)
        cells, skipped = wiz.run()
    finally:
        link.request("config", set={"learn": old.get("learn", False)})
    if not cells:
        raise SystemExit("nothing learned; the board's map is unchanged")
    table = [[r, c, seg] for seg, (r, c) in cells.items()]
    try:
        link.set_map(table)
    except BoardError as e:  # a server that takes no map (hapenny web): the learning is kept all the same
        path = write_profile(info, table, skipped, out_path)
        raise SystemExit("the board did not store the map: %s (%s). The %d crossings learned are in %s; "
                         "store them with hapenny learn over USB or at the board's own address"
                         % (e.reply.get("msg"), e.code, len(table), path))
    out.write("Stored %d crossings on the board.\n" % len(table))
    if skipped:
        out.write("Gaps (not mapped): %s\n" % ", ".join(skipped))
    path = write_profile(info, table, skipped, out_path)
    out.write("Wrote the profile %s\n" % path)
    return table, skipped, path


def write_profile(info, table, skipped, out_path=None):
    """The board's profile with the learned map, written whole (a temporary file renamed): its path."""
    base = info.get("board", "board")
    try:
        profile = json.loads(firmware.profile_path(base).read_text())
    except Exception:
        profile = {"name": base, "matrix": {"rows": [], "cols": []}}
    profile["name"] = (base + "-learned")[:32]
    profile["description"] = "learned with hapenny learn: %d segments%s" % (
        len(table), (", gaps: " + " ".join(skipped)) if skipped else "")
    profile["map"] = sorted(table)
    path = Path(out_path or ("%s-learned.json" % base))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(profile, indent=1) + "\n")
    os.replace(tmp, path)
    return path

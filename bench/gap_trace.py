"""Where the matrix goes unread under a load, and which contacts it cost.

A copy of the firmware gets marks at named points (MARKS: a label set in a
ring with the board's time), and the virtual board's reads note the ring's
position. Every stretch of more than 0.5 ms with no read is put down to the
marks set inside it, with the time between them and the 0.5 ms contacts lost
in it. Run by hand (the marked copy and its build live in a folder of their
own, removed at the end):

    .venv/bin/python bench/gap_trace.py [CONTACTS | VISITSv] [CLIENT ...]

A count ending in "v" throws that many visits of three darts 250 ms apart
(web_load.visits) instead of 0.5 ms contacts. CLIENT is one of bench/web_load.py's (default: play state_poll; `none` for
no load). A module's load gets a mark of its own ("ld." and its name), and a
stretch's key says "+gc" if the heap in use fell by 4 KB in it (a collection)
and "+os" if the OS took the CPU away in it. HAPENNY_BOARD_LOG=1 prints the
board's last output if the run fails. A mark's own bookkeeping is the simulator's time, but its call is
the firmware's (some tens of us of the model's): stretches with many marks
read longer than they are. docs/performance.md ("Under web load") says what
it found."""
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"

# (file under firmware/shove, the text of the line the mark goes before, its label)
MARKS = (
    ("httpd.py", "for _ in self.poll.ipoll(0):", "st.poll"),
    ("httpd.py", "busy = False\n        asks", "st.loop"),
    ("httpd.py", "httpreq.work(self, c, now)", "st.work"),
    ("httpd.py", "self._work(c, st, now)\n", "st._work"),
    ("httpd.py", "if self.watch is not None:\n            try", "st.watch"),
    ("httpd.py", "s, peer = self.sock.accept()", "acc.accept"),
    ("httpd.py", "self.accepted += 1", "acc.slot"),
    ("httpd.py", "if st != _LINGER and (c.out or c.file is not None):", "wk.top"),
    ("httpd.py", "s = c.sock\n        out = c.out", "wr.top"),
    ("httpreq.py", "r = c.req\n    if r is None:", "rq.top"),
    ("httpreq.py", "c.n = n + k\n", "rq.got"),
    ("httpreq.py", "c.need = end + 4 + r.length", "rq.body"),
    ("httpreq.py", "if not _stage(srv, r) and", "rq.stage"),
    ("httpreq.py", "if srv.guard is None or srv.guard(r, now):", "rq.guard"),
    ("httpreq.py", "if fn is not None:\n        try:", "rq.fn"),
    ("httpreq.py", "c.req = None  # answered: the request is done", "rq.done"),
    ("app.py", "if self.tx.q:\n            self.tx.drain()", "app.service"),
    ("app.py", "net.step(board.ticks_ms())", "app.net"),
    ("app.py", "if not self.tx.ready():  # no room for a reply", "app.serial"),
    ("app.py", "board.service()", "app.board"),
    ("app.py", "self.commands.buttons_slice()", "app.buttons"),
    ("app.py", "if self.due & _DUE_TIMERS and self.tx.ready()", "app.timers"),
    ("app.py", "st = self.strip\n                armed", "app.strip"),
    ("app.py", "k = board.scan_idle(snap, n, until, tx)", "app.idle"),
    ("app.py", "board.read_matrix(snap)\n                was = sc.state", "app.scan"),
    ("app.py", "k.hit(row, col)", "app.hit"),
)
RING = '''

# gap_trace's marks (bench/gap_trace.py): a ring of labels and the board's time each was set
M_RING = ["-"] * 64
M_TIME = [0] * 64
M_AT = [0]
M_CLOCK = [None]


def m(label):
    c = M_CLOCK[0]
    if c is not None:
        c.charge()  # the firmware's work up to the mark; the mark's own, the simulator's
    i = M_AT[0] + 1
    M_AT[0] = i
    M_RING[i & 63] = label
    if c is not None:
        M_TIME[i & 63] = c.total
        c.sim(0)
'''
# the board's reads note the ring's position (its last mark), and the tracer is loaded
READS = (
    ("boards/virtual.py", "        self.last_read = c.total\n", "        self.r0 = _shv.M_AT[0]\n"),
    ("boards/virtual_esp32.py", "            board.last_read = self.total\n", "            board.r0 = _shv.M_AT[0]\n"),
)
TRACER = '''# gap_trace's tracer (bench/gap_trace.py), loaded by the marked copy's virtual.py
import builtins
import gc
import os
import sys

import flashdev
import machine
import shove
from shove.boards import virtual

OUT = os.getenv("HAPENNY_GAP_TRACE")
REC = {}  # a stretch's key (stretch) -> [stretches, us over 0.5 ms, longest, contacts lost, [us between marks], its text]
# the records' table made at its full size now: grown later, it would ask a chip-sized heap for
# kilobytes at once in the middle of the firmware's work
ROOM = 1000
for _i in range(1, ROOM + 1):
    REC[_i] = None
for _i in range(1, ROOM + 1):
    del REC[_i]
REC[0] = [0, 0, 0, 0, [0] * 8, "(others)"]
N = [0]  # stretches seen
LAST = [None, 0, 0]  # the last stretch's key, the model's unseen count and the heap in use then
_stretch = virtual.Board.stretch


def stretch(self, gap):
    c = machine.board_clock
    c.charge()
    shove.M_CLOCK[0] = c
    u = self.model.unseen
    if LAST[0] is not None:  # a closure the read after a stretch found over unseen: lost in it
        REC[LAST[0]][3] += u - LAST[1]
    r0 = getattr(self, "r0", 0)
    at = shove.M_AT[0]
    if at - r0 > 6:
        r0 = at - 6
    # the stretch's key as a number (its marks' names are interned, so their ids stand for them):
    # no garbage in the board's heap a stretch, only a new key's text and record
    ring = shove.M_RING
    h = id(ring[r0 & 63]) & 0xFFFFFFF
    j = r0 + 1
    while j <= at:
        h = (h * 31 + (id(ring[j & 63]) & 0xFFFFFFF)) & 0x3FFFFFFFFFFF
        j += 1
    a = gc.mem_alloc()
    if a < LAST[2] - 4096:  # the heap in use fell by 4 KB since the last stretch: a collection (only a stretch holds one)
        h = -h - 1
    LAST[2] = a
    stall = c.stall_at > self.last_read  # the OS took the CPU away inside it (Board.stretch)
    if stall:
        h ^= 0x400000000000
    r = REC.get(h)
    if r is None and len(REC) >= ROOM:
        h = 0
        r = REC[0]  # (past the table's room: the rest, unnamed)
    if r is None:
        key = ring[r0 & 63] + " :: " + ",".join(ring[j & 63] for j in range(r0 + 1, at + 1)) + (" +gc" if h < 0 else "") + (" +os" if stall else "")
        r = REC[h] = [0, 0, 0, 0, [0] * 8, key]
    t = c.total - gap
    j = 0
    for q in range(r0 + 1, at + 1):
        tq = shove.M_TIME[q & 63]
        if j < 7:
            r[4][j] += tq - t
        t = tq
        j += 1
    r[4][j if j < 8 else 7] += c.total - t
    r[0] += 1
    r[1] += gap - 500
    if gap > r[2]:
        r[2] = gap
    LAST[0] = h
    LAST[1] = u
    N[0] += 1
    if N[0] % 200 == 0:
        dump()
    c.sim(0)
    return _stretch(self, gap)


def dump():
    with flashdev.host_open(OUT, "w") as f:
        for r in REC.values():
            f.write("%d %d %d %d %s|%s\\n" % (r[3], r[1], r[0], r[2], " ".join(str(x // (r[0] or 1)) for x in r[4]), r[5]))


virtual.Board.stretch = stretch
'''
# the tracer's import hook (its own text, which tests/test_gap_trace.py runs alone)
LOADS = '''
LABELS = {}  # the loads' labels
_import = builtins.__import__


def loads(name, *args):
    """An import that loaded modules gets a mark ("ld." and the names asked
    for) once it is done: on the chip a load from the flash reads nothing."""
    n = len(sys.modules)
    mod = _import(name, *args)
    c = shove.M_CLOCK[0]
    if len(sys.modules) != n and not (c is not None and c.in_sim):  # (not the bench's own stats)
        f = args[2] if len(args) > 2 else None  # (False for a plain `import`)
        lab = "ld." + (",".join(f) if isinstance(f, tuple) and f else name)
        shove.m(LABELS.setdefault(lab, lab))  # one object a label: a stretch's key is its marks' ids
    return mod


builtins.__import__ = loads
'''
HOOK = '''

if os.getenv("HAPENNY_GAP_TRACE"):  # the marked copy's tracer (bench/gap_trace.py)
    from shove import gaptrace  # noqa: F401
'''


def marked_copy(dest):
    """The firmware copied into `dest` with MARKS, the ring, the reads' notes
    and the tracer. Raises ValueError naming each anchor no longer found."""
    dest = Path(dest)
    shutil.copytree(FIRMWARE, dest)
    sh = dest / "shove"
    missing = []
    texts = {}

    def text(rel):
        if rel not in texts:
            texts[rel] = (sh / rel).read_text()
        return texts[rel]

    for rel, anchor, label in MARKS:
        s = text(rel)
        i = s.find(anchor)
        if i < 0:
            missing.append("%s: %r" % (rel, anchor))
            continue
        start = s.rfind("\n", 0, i) + 1
        indent = s[start:len(s) - len(s[start:].lstrip(" "))]
        texts[rel] = s[:start] + indent + "_shv.m(%r)\n" % label + s[start:]
    for rel, anchor, line in READS:
        s = text(rel)
        if anchor not in s:
            missing.append("%s: %r" % (rel, anchor))
            continue
        texts[rel] = s.replace(anchor, anchor + line, 1)
    if missing:
        raise ValueError("anchors gone from the firmware (update MARKS/READS): " + "; ".join(missing))
    for rel, s in texts.items():
        if "import shove as _shv" not in s:  # after the module's first import
            i = s.find("\nimport ")
            if i < 0:
                i = s.find("\nfrom ")
            s = s[:i + 1] + "import shove as _shv\n" + s[i + 1:]
        (sh / rel).write_text(s)
    (sh / "boards" / "virtual.py").write_text((sh / "boards" / "virtual.py").read_text() + HOOK)
    (sh / "__init__.py").write_text((sh / "__init__.py").read_text() + RING)
    (sh / "gaptrace.py").write_text(TRACER + LOADS)
    return dest


def report(path, top=25):
    """The stretches' figures, those that lost contacts first, then by time unread past 0.5 ms."""
    rows = []
    for line in Path(path).read_text().splitlines():
        head, key = line.split("|", 1)
        lost, over, n, most, *between = head.split()
        rows.append((int(lost), int(over), int(n), int(most), " ".join(between), key))
    rows.sort(key=lambda r: (-r[0], -r[1]))
    out = ["lost  over 0.5 ms (us)  stretches  longest (us)  marks [us from the read to each mark, then to the read]"]
    for lost, over, n, most, between, key in rows[:top]:
        out.append("%4d %18d %10d %13d  %s [%s]" % (lost, over, n, most, key, between))
    return "\n".join(out)


def main(argv):
    darts = bool(argv) and argv[0].endswith("v")
    n = int(argv[0].rstrip("v")) if argv else 500
    clients = tuple(argv[1:]) or ("play", "state_poll")
    work = Path(tempfile.mkdtemp(prefix="hapenny-gaps-"))
    out = work / "gaps.txt"
    os.environ["HAPENNY_FIRMWARE"] = str(marked_copy(work / "firmware"))
    os.environ["HAPENNY_GAP_TRACE"] = str(out)
    sys.path[:0] = [str(ROOT / "host"), str(ROOT / "bench")]
    import esp32_model
    import hapenny.sim.board as sim_board
    import web_load

    sim_board.SIM_ONLY_HEAP += 32 * 1024  # the tracer's own
    got = {}
    with web_load.loaded(() if clients == ("none",) else clients, got) as (vb, link):
        cells = {s: (r, c) for r, c, s in link.request("map")["cells"]}
        run = esp32_model.Run(vb, link, cells, esp32_model.NEXT_PAUSE_US)
        run.fresh_game()
        if darts:
            got.update(web_load.visits(vb, run, random.Random(5), n))
        else:
            got.update(esp32_model.contacts(vb, run, random.Random(5), 500, n)[0])
    print(json.dumps(got))
    print(report(out))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])

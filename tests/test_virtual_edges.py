"""The ESP32 timing model's edge interrupt (boards/virtual_esp32.py, Esp32Clock.setup), on the real
MicroPython interpreter: the model's clock driven by hand (Esp32Clock.charge with this
machine's instants made up: a gap of up to STALL_US is charged whole, times the scale), the
real matrix model and scanner. Each row: a closure scheduled, a stretch of the firmware's
work, and where the handler read the matrix and what it made of the dart."""
import json
import subprocess
from pathlib import Path

import pytest

FIRMWARE = Path(__file__).resolve().parent.parent / "firmware"

# Each case runs in a fresh interpreter: `pre` is Python run before the stretch (b: the
# board, c: its clock, sc: its scanner, m: the matrix model), then the
# firmware's stretch of `host_us` of this machine's time (times SCALE of the board's).
SCRIPT = r"""
import gc, json, sys
sys.path.insert(0, %(fw)r)
from shove.boards import virtual_esp32 as ve
from shove.boards.virtual import Board
from shove.boards.matrix_model import MatrixModel
from shove.scanner import Scanner

SCALE = 100


class Flash:
    run_from = -1
    run_us = 0


class B(Board):
    def __init__(self):  # (the state the read and the handler use, set below)
        pass


b = B()
b.rows = b.cols = 4
b.full = 15
b.model = m = MatrixModel(4, 4)
b.clock = c = ve.Esp32Clock(SCALE)
b.flash = Flash()
b.last_read = b.gap_max_us = b.gap_quiet_max_us = b.gap_os_max_us = b.gap_flash_max_us = 0
b.scanner = sc = Scanner(4, 4)
sc.primed = True  # (nothing closed at power-up)
c.setup(b)
snap = sc.snap
c.read(snap)  # the loop's read: all open, the rows held low
sc.step(c.now_us())  # (idle: calm)
case = json.loads(%(case)r)
for row, col, on, off in case["closures"]:
    m.close(row, col, c.total + on, c.total + off)
c.wake()
t0 = c.total
exec(case.get("pre", ""))
c.charge(c.last + case["host_us"])  # the firmware's stretch, up to its next call into the board
print(json.dumps({"runs": c.counts[0], "reads": c.counts[1], "held_gc": c.counts[2], "state": sc.state,
                  "calm": sc.calm, "unseen": m.unseen, "read_at": b.last_read - t0, "end": c.total - t0}))
"""


def run_case(micropython, tmp_path, case):
    p = tmp_path / "case.py"
    p.write_text(SCRIPT % {"fw": str(FIRMWARE), "case": json.dumps(case)})
    r = subprocess.run([micropython, str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(r.stdout.strip().splitlines()[-1])


EDGE = 30  # virtual_esp32._EDGE_US, checked below
READ = 20  # virtual_clock.READ_US

CASES = [
    # a dart lands 300 us into 1 ms of the firmware's bytecode: read at once, its window begun,
    # and the rest of the stretch charged after the handler
    ("inside a stretch", {"closures": [[1, 2, 300, 800]], "host_us": 10},
     {"reads": 1, "runs": 1, "state": 1, "calm": False, "unseen": 0, "read_at": 300 + EDGE}),
    # the contact is over before the handler's read: no dart, and the model counts it unseen
    # at the next read
    ("over before the read", {"closures": [[1, 2, 300, 310]], "host_us": 10, "pre": ""},
     {"reads": 1, "runs": 1, "state": 0, "calm": True, "unseen": 1, "read_at": 300 + EDGE}),
    # the edge comes while the board's own code runs (viper or C on the chip): the handler
    # waits for the firmware's first bytecode after it
    ("inside the board's code", {"closures": [[0, 0, 300, 5000]], "host_us": 10, "pre": "c.sim(2000)"},
     {"reads": 1, "runs": 1, "state": 1, "read_at": 2000 + EDGE}),
    # the heap in use fell in the stretch: a collection may have held the handler to its end
    ("a collection", {"closures": [[0, 0, 300, 5000]], "host_us": 10, "pre": "c.used = gc.mem_alloc() + 4096"},
     {"reads": 1, "runs": 1, "held_gc": 1, "state": 1, "read_at": 1000 + EDGE}),
    # no edge yet: nothing runs, the stretch is charged as it was
    ("before the edge", {"closures": [[0, 0, 3000, 3500]], "host_us": 10},
     {"reads": 0, "runs": 0, "state": 0, "read_at": -READ, "end": 1000}),
    # a scanner that is voting (the loop reads on every pass then): the handler only returns
    ("not calm", {"closures": [[0, 0, 300, 5000]], "host_us": 10, "pre": "sc.calm = False"},
     {"reads": 0, "runs": 1, "read_at": -READ}),
    # diag records, or the REPL has the board: no handler
    ("turned off", {"closures": [[0, 0, 300, 5000]], "host_us": 10, "pre": "c.turn(False)"},
     {"reads": 0, "runs": 0, "state": 0, "read_at": -READ}),
    ("no scanner", {"closures": [[0, 0, 300, 5000]], "host_us": 10, "pre": "b.scanner = None\nc.wake()"},
     {"reads": 0, "runs": 0, "read_at": -READ}),
    # the loop's own read found a closure and has not stepped it: its own edge's handler reads
    # again and steps the scanner at the firmware's first bytecode after the read
    ("the loop's read", {"closures": [[3, 3, 0, 5000]], "host_us": 10, "pre": "c.sim(100)\nc.look(snap)"},
     {"reads": 1, "runs": 1, "state": 1, "read_at": 100 + READ + EDGE}),
    # rows released (the last read found a closure, since gone): a new contact makes no edge
    ("rows released", {"closures": [[3, 3, 0, 50], [1, 1, 300, 5000]], "host_us": 10,
                       "pre": "c.look(snap)\nc.pending = -1\nc.wake()"},
     {"reads": 0, "runs": 0}),
]


@pytest.mark.parametrize("name,case,want", CASES, ids=[c[0] for c in CASES])
def test_the_edge_handler_runs_where_the_chip_would(micropython, tmp_path, name, case, want):
    got = run_case(micropython, tmp_path, case)
    assert {k: got[k] for k in want} == want, got
    if got["runs"]:
        assert got["end"] >= 1000 + EDGE, got  # the stretch's own time is all charged, after the handler


def test_the_figures_the_cases_use():
    text = (FIRMWARE / "shove" / "boards" / "virtual_esp32.py").read_text()
    assert "\n_EDGE_US = const(%d)\n" % EDGE in text
    assert "\nREAD_US = %d\n" % READ in (FIRMWARE / "shove" / "boards" / "virtual_clock.py").read_text()

"""`hapenny doctor` on a virtual board with wiring faults injected: each is
named by its GPIO pins and segments; a healthy board passes every step."""
import re
import subprocess
import sys

import pytest

from suite_profile import PROFILE, need_buttons, need_segments, need_strip
from hapenny import doctor

ROWS, COLS = PROFILE["matrix"]["rows"], PROFILE["matrix"]["cols"]
ON_COL_1 = next(seg for r, c, seg in PROFILE["map"] if c == 1)  # a segment column 1 carries
PER_SIDE = PROFILE["leds"]["per_side"]


class Person:
    """Answers as a builder looking at the board would: the LED question
    by what the strip shows, the button and dart prompts by acting."""

    def __init__(self, b, darts=()):
        self.b = b
        self.darts = darts  # pulses to throw when asked: (seg, delay_ms, length_us)
        self.asked = []

    def __call__(self, q):
        self.asked.append(q)
        # the acts begin as the board takes the doctor's next command (its watch), however late
        # the host sends it: as a person acts once told the board is watching
        if q.startswith("press:"):
            self.b.sim.button(q[len("press:"):], ms=1500, anchor="serial")
            return True
        if q == "throw":
            self.b.sim.pulses([list(self.b.cells[s]) + [ms * 1000, us] for s, ms, us in self.darts], anchor="serial")
            return True
        lit = {i for i, px in enumerate(self.b.sim.pixels()) if any(px)}
        if q.startswith("Is any LED lit"):
            return bool(lit)
        m = re.search(r"bed (\d+)", q)
        if m:
            k = int(m.group(1)) - 1
            want = set(range(k * 2 * PER_SIDE, (k + 1) * 2 * PER_SIDE))
        else:  # the status LEDs, after the beds
            n = len(self.b.sim.pixels())
            want = set(range(n - PROFILE["leds"]["status"], n))
        return lit == want


def run(b, person, **kw):
    kw.setdefault("button_ms", 800)
    kw.setdefault("acts_on_virtual", b.sim is not None)  # the Person acts through the simulator
    rep = doctor.run(b.link, b.info, person, lambda s: None, **kw)
    return rep


def failed(rep, step):
    return [f.text + " | " + f.check for f in rep.failed if f.step == step]


def test_a_healthy_board_passes_every_step(fresh_sim):
    b = fresh_sim
    darts = [("T9", 100, 4000), ("S5", 400, 2500), ("D1", 700, 3000)]  # beds every profile maps
    rep = run(b, Person(b, darts), record_ms=1200)
    assert not rep.failed, [(f.step, f.text) for f in rep.failed]
    steps = {f.step for f in rep.findings}
    # (a profile without buttons or a strip, a C3's beds-only one, has those steps' findings empty)
    assert steps == {"about", "lines", "leds", "buttons", "darts"} - (set() if PROFILE["buttons"] else {"buttons"}) \
        - (set() if PROFILE["leds"]["pin"] >= 0 else {"leds"})
    assert any("3 dart(s) recorded" in f.text for f in rep.findings)
    # the virtual board says which interpreter it runs, and that it loads the firmware
    release = [f.text for f in rep.findings if f.step == "about" and "loads this firmware" in f.text]
    assert len(release) == 1 and release[0].startswith("MicroPython v1."), release


XTENSAWIN = 6 | ((3 | (10 << 2)) << 8)  # sys.implementation._mpy on a classic ESP32, v1.23 and later


@pytest.mark.parametrize("version", [(1, 27, 0, ""), (1, 28, 0, ""), (1, 29, 0, ""), (1, 29, 0, "preview")])
def test_every_release_with_the_firmwares_mpy_format_passes(version):
    about = {"platform": "esp32", "micropython": list(version[:3]), "prerelease": version[3], "mpy": XTENSAWIN}
    assert doctor.release_problem(about) is None
    # an ESP32-C3 (rv32imc), and an image without the native emitter (deploy's bytecode build)
    for mpy in (6 | ((3 | (11 << 2)) << 8), 6 | (3 << 8)):
        assert doctor.release_problem(dict(about, mpy=mpy)) is None


@pytest.mark.parametrize("about, words", [
    ({"platform": "esp32", "micropython": [1, 22, 2], "mpy": 6 | ((2 | (10 << 2)) << 8)},
     ["MicroPython v1.22.2, which loads .mpy v6.2", "flash MicroPython v1.29.0"]),
    ({"platform": "esp32", "micropython": [1, 29, 0], "prerelease": "", "mpy": 6 | ((3 | (9 << 2)) << 8)},
     ["v1.29.0 for xtensa", "native code is for xtensawin"]),
    ({"platform": "esp32", "micropython": [1, 27, 0]}, ["run hapenny deploy"]),
])
def test_a_release_that_cannot_load_the_firmware_gets_one_line(about, words):
    why = doctor.release_problem(about)
    assert why and "\n" not in why
    for w in words:
        assert w in why, (w, why)


@pytest.mark.parametrize("fault, words", [
    ({"grounded": [len(ROWS) + 1]}, ["column 1 (GPIO %d)" % COLS[1], "shorted to ground", ON_COL_1]),
    ({"grounded": [3]}, ["row 3 (GPIO %d)" % ROWS[3], "shorted to ground"]),
    ({"shorts": [(1, 2)]}, ["row 1 (GPIO %d) and row 2 (GPIO %d)" % (ROWS[1], ROWS[2]), "rows are shorted"]),
    ({"shorts": [(len(ROWS) + 4, len(ROWS) + 5)]}, ["column 4 (GPIO %d) and column 5 (GPIO %d)" % (COLS[4], COLS[5]),
                                    "columns are shorted"]),
])
def test_each_wiring_fault_is_named_by_pin_and_segment(fresh_sim, fault, words):
    b = fresh_sim
    b.sim.wiring(**fault)
    rep = run(b, Person(b), steps=("lines",))
    text = failed(rep, "lines")
    assert len(text) == 1, text
    for w in words:
        assert w in text[0], (w, text[0])
    assert "check" not in text[0] or "GPIO" in text[0].split("|")[1]
    b.sim.wiring()  # mended
    assert not run(b, Person(b), steps=("lines",)).failed


def test_a_crossing_closed_at_rest_is_named_with_its_segment(fresh_sim):
    b = fresh_sim
    r, c = b.cells["T7"]
    b.sim.close(r, c, ms=30000)  # a dart left in the board (closed from now)
    text = failed(run(b, Person(b), steps=("lines",)), "lines")
    assert len(text) == 1 and "segment T7" in text[0] and "GPIO %d" % ROWS[r] in text[0], text


@pytest.mark.parametrize("strip, words", [("dead", "no LED lights at all"), ("shifted", "LEDs wrong for every bed")])
def test_strip_faults_are_found_by_asking(fresh_sim, strip, words):
    need_strip()
    b = fresh_sim
    b.sim.wiring(strip=strip)
    text = failed(run(b, Person(b), steps=("leds",)), "leds")
    assert len(text) == 1 and words in text[0], text


def test_a_dead_button_names_its_pin(fresh_sim):
    need_buttons()
    b = fresh_sim
    b.sim.wiring(dead_buttons=["undo"])
    rep = run(b, Person(b), steps=("buttons",))
    text = failed(rep, "buttons")
    assert len(text) == 1 and "undo button seen on GPIO %d" % PROFILE["buttons"]["undo"] in text[0], text
    assert sum(f.ok for f in rep.findings if f.step == "buttons") == 2


def test_recording_flags_a_reclosure_that_would_count_twice(fresh_sim):
    need_segments("S20", "D3")
    b = fresh_sim
    # S20 closes again 80 ms after its hit (after the 60 ms lockout and
    # 77 ms open): a second dart today. D3's bounces end inside the lockout.
    darts = [("S20", 100, 3000), ("S20", 180, 2000), ("D3", 600, 2000), ("D3", 604, 1000), ("D3", 640, 1000)]
    rep = run(b, Person(b, darts), steps=("darts",), record_ms=1000)
    text = failed(rep, "darts")
    assert len(text) == 1, text
    assert "S20" in text[0] and "closed again 80 ms after the hit" in text[0]
    # the advice: the re-closure plus a margin (a scan pass or two either way on a busy machine)
    import re
    advice = int(re.search(r"lockout_ms to (\d+) or more", text[0]).group(1))
    assert 88 <= advice <= 92, text[0]


def test_the_cli_runs_the_doctor_and_fails_on_a_fault(fresh_sim):
    b = fresh_sim
    b.sim.wiring(grounded=[0])
    b.close()  # the CLI needs the port to itself
    try:
        out = subprocess.run([sys.executable, "-m", "hapenny.cli", "doctor", "--port", b.port, "--record", "0",
                              "--skip", "buttons", "--answers", "y" * 10], capture_output=True, text=True,
                             timeout=60)
    finally:
        b.connect()
    assert out.returncode == 1, out.stderr
    assert "FAIL lines   row 0 (GPIO %d) reads low" % ROWS[0] in out.stdout
    assert "check: look for a solder bridge" in out.stdout
    assert "MicroPython" in out.stdout and "heap:" in out.stdout


def test_the_cli_on_a_virtual_board_says_which_steps_need_a_real_board_and_passes(fresh_sim):
    """`hapenny doctor` at a virtual board asks nothing it cannot have: no
    LED question, no button to press, no darts to throw; it says those need
    a real board, and what a virtual board has passes."""
    b = fresh_sim
    b.close()
    try:
        out = subprocess.run([sys.executable, "-m", "hapenny.cli", "doctor", "--port", b.port], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        b.connect()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout and "Press and release" not in out.stdout and "Throw" not in out.stdout
    assert "so leds, buttons and darts need a real board" in out.stdout, out.stdout
    for step in ("leds", "buttons", "darts"):
        assert re.search(r"^skip %s +needs a real board$" % step, out.stdout, re.M), out.stdout
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ finding\(s\), 0 failed; not run on a virtual board: leds, buttons and darts "
                        r"\(they need a real board\)", last), last
    assert re.search(r"^ok +lines +all \d+ matrix lines are free", out.stdout, re.M), out.stdout
    # a step left out on purpose is not listed as one a real board needs
    b.close()
    try:
        out = subprocess.run([sys.executable, "-m", "hapenny.cli", "doctor", "--port", b.port, "--record", "0",
                              "--skip", "leds"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        b.connect()
    assert out.returncode == 0 and "so buttons need a real board" in out.stdout, out.stdout


def test_the_board_reports_its_heap_and_times_a_journal_append_without_touching_the_game(fresh_sim):
    b = fresh_sim
    b.new()
    b.req("throw", seg="T7")
    st = b.state()
    h = b.req("diag", op="heap")
    idf = h["idf"]
    if b.sim is not None:  # the virtual classic ESP32's ESP-IDF heap model (runtime/idfheap.py): grown once, no Wi-Fi
        assert idf == ([94256, 53248] if b.sim.chip == "esp32" else None)  # the S3 and C3 have none: they say so
    assert 4096 <= h["largest_alloc"] <= h["mem_free"] + (idf[1] if idf else 0)
    fl = b.req("diag", op="flash")
    assert fl["record"] == 3 and len(fl["append_us"]) == 3 and fl["bytes"] > 0
    assert all(u > 0 for u in fl["append_us"]) and fl["replace_us"] > 0
    assert b.req("stats")["stats"]["idf_heap"] == idf
    # the game's journal is untouched and still appended to: a power cut keeps the next dart
    assert b.state() == st
    b.req("throw", seg="D2")
    st = b.state()
    b.close()
    b.sim.power_cut()
    b.connect()
    assert b.state() == st


def test_doctor_prints_the_heap_and_the_flash_timing(fresh_sim):
    b = fresh_sim
    said = []
    rep = doctor.run(b.link, b.info, lambda q: True, said.append, steps=("about",))
    text = "\n".join(said)
    assert "largest single allocation" in text and "journal" in text and "appended in" in text
    assert not failed(rep, "about"), failed(rep, "about")

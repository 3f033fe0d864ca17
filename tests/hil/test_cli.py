"""The `hapenny` command end to end against the board: game commands,
config persistence, the live scoreboard driven through a terminal, the
learn wizard driven by closures, and a deploy round trip."""
import json
import subprocess
import sys
from pathlib import Path

from screen import Terminal


HAPENNY = str(Path(sys.executable).parent / "hapenny")


def cli(board, *args, check=True, inp=None, timeout=120):
    board.close()
    r = subprocess.run([HAPENNY, *args, "--port", board.port], capture_output=True, text=True,
                       input=inp, timeout=timeout)
    board.connect()
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_game_commands(board):
    st = json.loads(cli(board, "new", "Ann", "Bob", "--variant", "pub", "-r", "darts=4", "--json").stdout)
    assert st["variant"] == "pub" and st["rules"]["darts"] == 4
    out = cli(board, "throw", "T5").stdout
    assert "⊗" in out and "Ann" in out
    st = json.loads(cli(board, "next", "--json").stdout)
    assert st["thrower"] == "Bob"
    st = json.loads(cli(board, "undo", "--json").stdout)
    assert st["thrower"] == "Ann"
    st = json.loads(cli(board, "state", "--json").stdout)
    assert st["sides"][0]["marks"]["5"] == 3
    r = cli(board, "throw", "T25", check=False)
    assert r.returncode == 1 and "bad_seg" in r.stderr
    st = json.loads(cli(board, "new", "--teams", "Ann,Al", "Bob,Bea", "--json").stdout)
    assert st["sides"][0]["name"] == "Ann & Al"


def test_config_and_variant_persist_across_reset(board):
    cli(board, "config", "set", "auto_next_ms=2000", 'players=["Mum","Dad"]')
    cli(board, "variant", "progressive")
    board.reset()
    board.connect()
    cfg = json.loads(cli(board, "config", "--json").stdout)
    assert cfg["auto_next_ms"] == 2000 and cfg["players"] == ["Mum", "Dad"] and cfg["variant"] == "progressive"
    # named settings only, by name
    assert cli(board, "config", "get", "variant", "auto_next_ms").stdout.splitlines() == [
        "auto_next_ms = 2000", 'variant = "progressive"']
    r = cli(board, "config", "set", "auto_next_ms=soon", check=False)
    assert r.returncode == 1 and "bad_config" in r.stderr


def test_play_scoreboard_driven_through_a_terminal(board):
    board.close()
    try:
        with Terminal([HAPENNY, "play", "Ann", "Bob", "--port", board.port]) as t:
            t.read(lambda s: "To throw: " in s and "Ann" in s)
            t.write(b"t5\r")
            s = t.read(lambda s: "Ann: T5, 3 marks" in s)
            row = [line for line in s.splitlines() if "Ann" in line and "⊗" in line]
            assert row, s
            t.write(b"d5")
            t.write(b"\r")
            s = t.read(lambda s: "2 gifted to Bob" in s)
            assert "X" in [line for line in s.splitlines() if line.strip().startswith("Bob")][0]
            t.write(b"n")
            t.read(lambda s: "Next: Bob" in s)
            t.write(b"u")
            t.read(lambda s: "Undone." in s and "To throw: \x1b[1mAnn" in s)
            t.write(b"zz9\r")
            t.read(lambda s: "Refused" in s)
            assert t.quit() == 0
    finally:
        board.connect()


def test_play_shows_darts_from_the_matrix(board):
    board.need_sim()
    board.close()
    try:
        with Terminal([HAPENNY, "play", "Ann", "Bob", "--port", board.port]) as t:
            t.read(lambda s: "To throw: " in s)
            r, c = board.cells["D9"]
            board.sim.close(r, c, ms=20)
            t.read(lambda s: "Ann: D9, 2 marks" in s)
            assert t.quit() == 0
    finally:
        board.connect()


def test_learn_wizard_driven_by_simulated_closures(board, tmp_path):
    board.need_sim()
    cells = board.req("map")["cells"]
    # the wizard asks in its own order; the "board" answers with a crossing per segment
    truth = {seg: (r, c) for r, c, seg in cells}
    out_file = tmp_path / "learned.json"
    board.close()
    proc = subprocess.Popen([HAPENNY, "learn", "--port", board.port, "--out", str(out_file)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    asked = []
    try:
        while True:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("[") and "]" in line:
                seg = line.split("]")[1].strip()
                asked.append(seg)
                if seg == "T20":
                    proc.stdin.write("s\n")  # leave a gap
                    proc.stdin.flush()
                    continue
                if seg == "D1" and "dup" not in asked:
                    asked.append("dup")  # first a crossing that is already taken
                    r, c = truth["S20"]
                else:
                    r, c = truth[seg]
                board.sim.wait_rearmed()  # a thrower takes longer than the lockout
                board.sim.close(r, c, ms=20)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    board.connect()
    learned = {seg: (r, c) for r, c, seg in board.req("map")["cells"]}
    assert "T20" not in learned and len(learned) == len(truth) - 1
    assert all(learned[s] == truth[s] for s in learned)
    prof = json.loads(out_file.read_text())
    assert prof["name"].endswith("-learned") and "T20" in prof["description"]
    assert sorted(map(tuple, prof["map"])) == sorted((r, c, s) for s, (r, c) in learned.items())
    assert board.req("config")["config"]["learn"] is False


def test_deploy_round_trip(board, tmp_path):
    r = cli(board, "deploy", "--json")
    first = json.loads(r.stdout)
    assert first["total"] >= 15 and first["version"] and first["boot_event"] is True
    # a stale file and a changed one on the board: deploy mends both
    board.close()
    mp = str(Path(sys.executable).parent / "mpremote")
    stale = tmp_path / "old.mpy"
    stale.write_bytes(b"stale")
    subprocess.run([mp, "connect", board.port, "fs", "cp", str(stale), ":shove/old.mpy", "+",
                    "fs", "cp", str(stale), ":shove/leds.mpy"], check=True, capture_output=True, timeout=60)
    r = cli(board, "deploy", "--json")
    second = json.loads(r.stdout)
    assert second["copied"] == ["shove/leds.mpy"] and second["removed"] == ["shove/old.mpy"]
    third = json.loads(cli(board, "deploy", "--json").stdout)
    assert third["copied"] == [] and third["removed"] == []
    assert board.req("info")["ok"]


def test_wiring_svg_and_flash_dry_run(tmp_path, hil_target):
    out = tmp_path / "w.svg"
    r = subprocess.run([HAPENNY, "wiring", "generic-8x8", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0
    svg = out.read_text()
    assert svg.startswith("<svg") and svg.count("GPIO") >= 19 and "row ribbon" in svg and "WS2812" in svg
    assert "no internal pull-up" in r.stdout  # GPIO 34/35/39 buttons need resistors
    img = tmp_path / "mp.bin"
    img.write_bytes(b"\0" * 16)
    r = subprocess.run([HAPENNY, "flash", str(img), "--port", "/dev/ttyUSB9", "--dry-run"], capture_output=True,
                       text=True)
    assert r.returncode == 0
    assert "erase-flash" in r.stdout and ("write-flash -z 0x1000 " + str(img)) in r.stdout
    r = subprocess.run([HAPENNY, "flash", str(img), "--port", "/dev/ttyUSB9", "--chip", "esp32s3", "--dry-run"],
                       capture_output=True, text=True)
    assert "write-flash -z 0x0 " in r.stdout
    r = subprocess.run([HAPENNY, "flash", str(tmp_path / "none.bin"), "--port", "/dev/ttyUSB9", "--dry-run"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no firmware image" in r.stderr


def test_every_command_has_help():
    for cmd in ("ports", "flash", "deploy", "new", "variant", "config", "state", "undo", "next", "throw",
                "play", "learn", "wiring", "sim", "test"):
        r = subprocess.run([HAPENNY, cmd, "-h"], capture_output=True, text=True)
        assert r.returncode == 0 and "usage: hapenny " + cmd in r.stdout

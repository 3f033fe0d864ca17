"""Taking the serial port from a game works at the first attempt on every
MicroPython release the firmware supports: real mpremote and `hapenny
deploy` connect once, during a game, and the game is there afterwards.

The main loop reads mpremote's Ctrl-A itself and must hand it back to the
REPL. The ESP32's REPL reads an os.dupterm stream only from v1.28.0 on
(ports/esp32/mphalport.c, mp_hal_stdin_rx_chr), so the virtual board runs
both ways: as v1.28 and later, and as v1.27, whose REPL ignores dupterm.
On hardware the board's own release decides, and the test runs once."""
import subprocess
import sys
from pathlib import Path

import pytest

from hapenny.sim.board import VirtualBoard

BIN = Path(sys.executable).parent


@pytest.fixture(params=["v1.28+", "v1.27"])
def game_board(request, tmp_path, hil_target):
    if hil_target.sim is None:  # a real board: its release is what it is
        if request.param != "v1.28+":
            pytest.skip("the release is the board's own")
        yield hil_target
        hil_target.connect()
        return
    vb = VirtualBoard(board_dir=tmp_path / "flash", repl_dupterm=request.param == "v1.28+").start()
    b = type(hil_target)(vb.port, vb)  # conftest's Board
    try:
        yield b
    finally:
        b.close()
        vb.stop()


def _in_a_game(b):
    b.new(players=("Ann", "Bob"))
    b.req("throw", seg="T5")
    b.req("throw", seg="D3")
    return b.state()


def _once(b, *args, timeout=60):
    """One run of a command on the board's port, with no retry."""
    b.close()  # the tool needs the port to itself
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def test_mpremote_and_deploy_connect_first_time_during_a_game(game_board):
    b = game_board
    st = _in_a_game(b)
    r = _once(b, str(BIN / "mpremote"), "connect", b.port, "exec", "print(6 * 7)")
    assert r.returncode == 0 and r.stdout.strip() == "42", r.stdout + r.stderr
    b.connect()  # the game again, as it was
    assert b.state() == st
    st = _in_a_game(b)
    r = _once(b, str(BIN / "hapenny"), "deploy", "--port", b.port)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "board is up" in r.stdout + r.stderr
    b.connect()
    assert b.state() == st
    # the deploy's reset was marked as one asked for: safe mode does not count it
    assert b.req("diag", op="about")["reset"] == {"cause": 2, "deliberate": True}

"""The board's serial port is also MicroPython's: real mpremote works on it,
a person reaches the REPL with two Ctrl-C while a lone Ctrl-C (line noise)
changes nothing, soft and hard resets behave as on an ESP32."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

MPREMOTE = str(Path(sys.executable).parent / "mpremote")


def mpremote(board, *args, timeout=60):
    board.close()  # mpremote needs the port to itself
    proc = subprocess.run([MPREMOTE, "connect", board.port, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture
def repl_board(board):
    yield board
    board.connect()  # back to main.py (a soft reset if the board sits at the REPL)


def test_mpremote_exec_run_and_files(repl_board, tmp_path):
    b = repl_board
    assert mpremote(b, "exec", "print(6 * 7)").strip() == "42"
    script = tmp_path / "probe.py"
    script.write_text("import sys\nprint('platform', sys.platform)\n")
    assert "platform" in mpremote(b, "run", str(script))
    data = tmp_path / "notes.txt"
    data.write_bytes(b"chalk\n" * 300)
    mpremote(b, "fs", "cp", str(data), ":notes.txt")
    listing = mpremote(b, "fs", "ls")
    assert "notes.txt" in listing and "1800 notes.txt" in " ".join(listing.split())
    back = tmp_path / "back.txt"
    mpremote(b, "fs", "cp", ":notes.txt", str(back))
    assert back.read_bytes() == data.read_bytes()
    mpremote(b, "fs", "rm", ":notes.txt")
    assert "notes.txt" not in mpremote(b, "fs", "ls")


def test_soft_reset_in_raw_mode_runs_boot_but_not_main(repl_board):
    b = repl_board
    # closed, so littlefs commits it (an unclosed file's bytes wait for its finaliser)
    marker = "_f=open('boot.mark','w');_f.write('ran');_f.close()\n"
    out = mpremote(b, "exec", "import os\ntry:\n os.remove('boot.mark')\nexcept OSError:\n pass\n"
                   "open('boot.py','a').write(%r)" % marker,
                   "soft-reset", "exec", "import sys\nprint(open('boot.mark').read(), 'shove.app' in sys.modules)")
    try:
        assert out.split()[-2:] == ["ran", "False"]
    finally:
        mpremote(b, "exec", "import os\ns=open('boot.py').read().replace(%r,'')\nopen('boot.py','w').write(s)\n"
                 "os.remove('boot.mark')" % marker)


def test_line_noise_with_ctrl_c_does_not_stop_the_board(repl_board):
    b = repl_board
    b.new()
    b.req("throw", seg="T5")
    st = b.state()
    before = b.req("stats")["stats"]["ctrl_c"]
    b.link.noise.clear()
    b.link.send_line(b"\x03")  # a lone Ctrl-C between lines
    assert b.req("info")["ok"]
    b.link.send_line(b'{"cmd":"st\x03ate"}\n')  # and one inside a line
    assert b.state() == st
    assert b.req("stats")["stats"]["ctrl_c"] == before + 2
    assert not [n for n in b.link.noise if b">>>" in n or b"Traceback" in n]


def test_two_ctrl_c_hand_the_port_to_a_person_and_ctrl_d_restarts_main(repl_board):
    b = repl_board
    b.req("info")
    b.link.send_line(b"\x03\x03")
    end = time.monotonic() + 10
    while not any(b"help()" in n for n in b.link.noise):  # the REPL's banner
        assert time.monotonic() < end, b.link.noise
        b.link._pump(0.1)
    b.link.send_line(b"\x04")  # soft reboot: main.py runs again
    boot = b.wait("boot", timeout=15)
    assert boot["protocol"] == 1
    assert b.req("info")["ok"]


def test_machine_reset_is_a_power_cycle_on_the_same_port(repl_board):
    b = repl_board
    b.new()
    b.req("throw", seg="T9")
    st = b.state()
    port = b.port
    mpremote(b, "reset")
    b.connect()
    assert b.port == port and b.state() == st


def test_an_error_escaping_the_main_loop_resets_the_board(repl_board):
    b = repl_board
    b.need_sim()
    b.new()
    b.req("throw", seg="D7")
    st = b.state()
    boots = b.sim.boots
    b.sim.crash_loop()
    err = b.wait("error", timeout=10)
    assert "injected fault" in err["msg"] and "resetting" in err["msg"]
    assert b.wait("boot", timeout=20)["restored"] is True
    assert b.sim.boots == boots + 1
    assert b.state() == st and b.req("info")["ok"]

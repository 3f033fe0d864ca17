"""`hapenny sim` as a process: PORT first, a stable port, a flash kept in
--board-dir across runs (killing it is a power cut), SIGTERM stops it."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path


from hapenny import gamestate
from hapenny.connect import connect
from hapenny.sim import flashimg
from hapenny.sim.client import SimClient

HAPENNY = str(Path(sys.executable).parent / "hapenny")


def _ctrl_c_live():
    # Ctrl-C must reach the child as a user's would: a shell's background job
    # (or a CI runner) may start the tests with SIGINT ignored, and a child
    # inherits that, so Python would never raise KeyboardInterrupt in it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_sim(*args):
    proc = subprocess.Popen([HAPENNY, "sim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline().split()
    second = proc.stdout.readline().split()
    assert first[0] == "PORT" and os.path.exists(first[1]), first
    assert second[0] == "CONTROL"
    return proc, first[1], second[1]


def stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    return proc.wait(timeout=15)


def test_sim_prints_port_and_stops_cleanly_on_sigterm():
    proc, port, control = start_sim("--fast")
    link, info, ser = connect(port)
    assert info["board"] == "generic-8x8"
    ser.close()
    assert stop(proc) == 0
    assert not os.path.exists(control)


def test_board_dir_survives_a_killed_sim(tmp_path):
    flash = tmp_path / "flash"
    proc, port, control = start_sim("--board-dir", str(flash))
    link, info, ser = connect(port)
    st = link.request("new", players=["Ann", "Bob"])["state"]
    sim = SimClient(control)
    r, c = next((r, c) for r, c, s in link.request("map")["cells"] if s == "T4")
    sim.close(r, c, ms=20)
    dart = link.wait_event("dart")
    ser.close()
    assert stop(proc, signal.SIGKILL) == -9  # the power cut
    files = flashimg.files(flash)  # the flash is an image in the folder: the firmware and the game on it
    assert "main.py" in files and "shove/app.mpy" in files and "game.jnl" in files
    proc, port2, control = start_sim("--board-dir", str(flash))
    link, info, ser = connect(port2)
    assert link.request("state")["state"] == gamestate.apply(st, dart)
    sim = SimClient(control)
    assert len(sim.pixels()) == link.request("info")["leds"]
    ser.close()
    stop(proc)


# `hapenny` with the machine's serial ports hidden: a real ESP32 plugged in
# would be chosen before any sim (as it should), which is not this test's question
HAPENNY_NO_USB = [sys.executable, "-c", "import sys, serial.tools.list_ports as p; p.comports = lambda *a, **k: []; "
                  "from hapenny.cli import main; sys.argv[0] = 'hapenny'; sys.exit(main())"]


def test_ports_lists_a_running_sim_and_port_choice_finds_it(tmp_path, monkeypatch):
    # a registry of the test's own ($HAPENNY_SIMS_DIR): it holds this sim and
    # nothing else, whatever other sims (the suite's other workers', a
    # user's `make sim`) run on the machine
    monkeypatch.setenv("HAPENNY_SIMS_DIR", str(tmp_path / "sims"))
    monkeypatch.delenv("HAPENNY_PORT", raising=False)
    r = subprocess.run(HAPENNY_NO_USB + ["state"], capture_output=True, text=True)
    assert r.returncode == 1 and "no board found" in r.stderr, r.stderr  # none yet
    proc, port, control = start_sim("--fast")
    try:
        out = subprocess.run([HAPENNY, "ports"], capture_output=True, text=True).stdout
        assert port in out and "virtual" in out
        st = subprocess.run(HAPENNY_NO_USB + ["state", "--json"], capture_output=True, text=True)
        assert st.returncode == 0 and json.loads(st.stdout) is None, st.stderr
        # a second sim: the choice is no longer the CLI's to make
        proc2, port2, _ = start_sim("--fast")
        try:
            r = subprocess.run(HAPENNY_NO_USB + ["state"], capture_output=True, text=True)
            assert r.returncode == 1 and "several boards" in r.stderr and port in r.stderr and port2 in r.stderr
        finally:
            stop(proc2)
    finally:
        stop(proc)
    # the registry forgets a sim that has stopped
    r = subprocess.run(HAPENNY_NO_USB + ["state"], capture_output=True, text=True)
    assert r.returncode == 1 and "no board found" in r.stderr, r.stderr


def test_clear_messages_when_there_is_no_board(tmp_path):
    env = dict(os.environ, HAPENNY_PORT=str(tmp_path / "nothing"))
    r = subprocess.run([HAPENNY, "state"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "does not exist" in r.stderr
    # a port with something that is not hapenny on it

    master, slave = os.openpty()
    r = subprocess.run([HAPENNY, "state", "--port", os.ttyname(slave)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "does not answer hapenny" in r.stderr
    os.close(master)
    os.close(slave)


def test_busy_port_is_reported():
    proc, port, control = start_sim("--fast")
    try:
        link, info, ser = connect(port)
        r = subprocess.run([HAPENNY, "state", "--port", port], capture_output=True, text=True)
        assert r.returncode == 1 and "busy" in r.stderr
        ser.close()
    finally:
        stop(proc)


def test_hapenny_test_runs_the_suite_on_a_port_with_a_report(tmp_path):
    proc, port, control = start_sim("--fast")
    junit = tmp_path / "hil.xml"
    try:
        r = subprocess.run([HAPENNY, "test", "--port", port, "--junit", str(junit), "--",
                            "-k", "test_info or test_stuck_switch or test_crlf"],
                           capture_output=True, text=True, timeout=300)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "suite on %s" % port in r.stdout
    assert "PASSED" in r.stdout
    # on a bare port the suite has no electrical access: those tests are skipped, with the reason
    assert "SKIPPED" in r.stdout and "needs the virtual board" in r.stdout
    xml = junit.read_text()
    assert "<testsuite" in xml and 'skipped="1"' in xml and 'failures="0"' in xml


def test_a_board_with_another_protocol_version_is_refused_clearly():
    """A peer on a pty that answers `info` as a future firmware would."""
    import threading
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    stop_flag = threading.Event()

    def peer():
        buf = b""
        while not stop_flag.is_set():
            import select as sel

            r, _, _ = sel.select([master], [], [], 0.1)
            if not r:
                continue
            buf += os.read(master, 4096)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                os.write(master, (json.dumps({"id": req.get("id"), "ok": True, "protocol": 2,
                                              "version": "9.0"}) + "\n").encode())

    t = threading.Thread(target=peer, daemon=True)
    t.start()
    try:
        r = subprocess.run([HAPENNY, "state", "--port", os.ttyname(slave)], capture_output=True, text=True,
                           timeout=30)
    finally:
        stop_flag.set()
        t.join()
        os.close(master)
        os.close(slave)
    assert r.returncode == 1 and "protocol 2" in r.stderr and "deploy matching firmware" in r.stderr


def test_sim_play_is_the_readme_main_job(tmp_path):
    """`make sim` runs `hapenny sim --play --board-dir .board`: a board and the
    scoreboard in one, taking throws from the keyboard; the game is kept."""
    from screen import Terminal

    flash = tmp_path / "board"
    for round_ in range(2):
        with Terminal([HAPENNY, "sim", "--play", "--board-dir", str(flash)]) as t:
            if round_ == 0:
                t.read(lambda s: "To throw: " in s and "Home" in s, timeout=20)
                t.write(b"t5\r")
                t.read(lambda s: "Home: T5, 3 marks" in s and "LEDs " in s)
            else:  # the game survived closing the sim
                s = t.read(lambda s: "⊗" in s and "darts ●●○" in s, timeout=20)
                assert "Home" in s
            assert t.quit() == 0


def test_sim_web_is_make_web(tmp_path):
    """`make web` runs `hapenny sim --web HOST:PORT --board-dir .board`: a board
    with a game on it and the web server owning its port, serving the page."""
    import socket
    import time
    import urllib.request

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([HAPENNY, "sim", "--web", "127.0.0.1:%d" % port, "--board-dir", str(tmp_path / "b")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=_ctrl_c_live)
    try:
        lines = []
        while not any("open http" in x for x in lines):
            line = proc.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        assert "open http://127.0.0.1:%d/" % port in lines[-1]
        end = time.monotonic() + 20
        while True:
            with urllib.request.urlopen("http://127.0.0.1:%d/api/snapshot" % port, timeout=5) as r:
                snap = json.loads(r.read())
            if snap["connected"] and snap["state"]:
                break
            assert time.monotonic() < end, snap
            time.sleep(0.1)
        assert [x["name"] for x in snap["state"]["sides"]] == ["Home", "Away"]
        with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5) as r:
            assert b"<html" in r.read().lower()
        # Ctrl-C with a page still open (the TV's): its stream ends cleanly
        # (a stream cut off instead reads as IncompleteRead), then the server
        # exits. It used to wait out the web server's shutdown timeout.
        stream = urllib.request.urlopen("http://127.0.0.1:%d/api/events" % port, timeout=30)
        assert stream.readline() == b"retry: 1000\n"
        proc.send_signal(signal.SIGINT)
        rest = stream.read()
        assert b"event: snapshot" in rest
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:  # then the whole group, board included
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

"""Every `hapenny` command over both transports: the same tests against a
virtual board on its serial port and on the network, where `hapenny web`
serves it (the board's web API, docs/web.md). Only the port and the pairing
code differ between the two: a board serving the API itself is one more
entry in TARGETS."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard
from screen import Terminal
from website import Page, Site, free_port

HAPENNY = str(Path(sys.executable).parent / "hapenny")
CODE = "pair-code-7x"
WAIT_S = 30.0  # a bound on waiting only: every wait ends as soon as what it waits for is there


class UsbTarget:
    """The virtual board on its pseudo-terminal, as a USB cable gives it."""

    def __init__(self, tmp):
        self.vb = VirtualBoard(board_dir=tmp / "flash", fast=True).start()
        self.port, self.code = self.vb.port, None
        self.stores_map = True

    def close(self):
        self.vb.stop()


class WebTarget:
    """The same virtual board on the network: `hapenny web` serving it, with a pairing code."""

    def __init__(self, tmp):
        self.site = Site(tmp, code=CODE)
        self.vb = self.site.vb
        self.port, self.code = self.site.url, CODE
        self.stores_map = False  # hapenny web's commands read the map only; the board's own server stores it

    def close(self):
        self.site.close()


TARGETS = {"usb": UsbTarget, "network": WebTarget}


@pytest.fixture(scope="module", params=sorted(TARGETS))
def target(request, tmp_path_factory):
    t = TARGETS[request.param](tmp_path_factory.mktemp(request.param))
    t.kind = request.param
    yield t
    t.close()


def port_args(t):
    return ["--port", t.port] + (["--code", t.code] if t.code else [])


def cli(t, *args, check=True, env=None):
    r = subprocess.run([HAPENNY, *args, *port_args(t)], capture_output=True, text=True, timeout=120, env=env)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_game_commands(target):
    st = json.loads(cli(target, "new", "Ann", "Bob", "--variant", "pub", "-r", "darts=4", "--json").stdout)
    assert st["variant"] == "pub" and st["rules"]["darts"] == 4 and st["thrower"] == "Ann"
    out = cli(target, "throw", "T5").stdout
    assert "⊗" in out and "Ann" in out
    hint = json.loads(cli(target, "hint", "--level", "6", "--json").stdout)
    assert hint["level"] == 6 and hint["reason"]
    st = json.loads(cli(target, "next", "--json").stdout)
    assert st["thrower"] == "Bob"
    st = json.loads(cli(target, "undo", "--json").stdout)
    assert st["thrower"] == "Ann"
    st = json.loads(cli(target, "state", "--json").stdout)
    assert st["sides"][0]["marks"]["5"] == 3
    r = cli(target, "throw", "T25", check=False)  # the board's own refusal, in its words
    assert r.returncode == 1 and "bad_seg" in r.stderr and "Traceback" not in r.stderr


def test_config_and_variant(target):
    try:
        out = cli(target, "config", "set", "auto_next_ms=2000", 'players=["Mum","Dad"]').stdout
        assert "auto_next_ms = 2000" in out
        cli(target, "variant", "progressive")
        assert cli(target, "config", "get", "variant", "auto_next_ms").stdout.splitlines() == [
            "auto_next_ms = 2000", 'variant = "progressive"']
        r = cli(target, "config", "set", "auto_next_ms=soon", check=False)
        assert r.returncode == 1 and "bad_config" in r.stderr
        st = json.loads(cli(target, "new", "--json").stdout)
        assert [s["name"] for s in st["sides"]] == ["Home", "Away"]  # new's own default names
    finally:
        cli(target, "config", "set", "auto_next_ms=0", 'players=["Home","Away"]', "variant=\"classic\"")


def test_events_arrive_on_the_link(target):
    """The board's own events (a dart in its matrix, a button) reach a link
    that watches, as they reach one on the serial port."""
    link, info, conn = connect(target.port, code=target.code, events=True)
    try:
        assert info["protocol"] == 1 and link.request("state")["ok"]
        link.request("new", players=["Ann", "Bob"])
        link.wait_event("new", WAIT_S)
        cells = {seg: (r, c) for r, c, seg in link.request("map")["cells"]}
        target.vb.wait_rearmed(WAIT_S)
        target.vb.close(*cells["D9"], ms=20)  # a dart in the board's matrix
        ev = link.wait_event("dart", WAIT_S)
        assert ev["seg"] == "D9" and ev["src"] == "matrix" and ev["side"] == 0
        link.request("throw", seg="T5")
        assert link.wait_event("dart", WAIT_S, where=lambda e: e["src"] == "host")["seg"] == "T5"
        target.vb.button("next")
        link.wait_event("visit", WAIT_S)
        assert link.request("state")["state"]["thrower"] == "Bob"
    finally:
        conn.close()


def test_play_scoreboard(target):
    """The live scoreboard: keys sent as commands, the board's darts shown as they land."""
    link, _, conn = connect(target.port, code=target.code)
    cells = {seg: (r, c) for r, c, seg in link.request("map")["cells"]}
    conn.close()
    with Terminal([HAPENNY, "play", "Ann", "Bob", *port_args(target)]) as t:
        t.read(lambda s: "To throw: " in s and "Ann" in s, WAIT_S)
        t.write(b"t5\r")
        t.read(lambda s: "Ann: T5, 3 marks" in s, WAIT_S)
        target.vb.wait_rearmed(WAIT_S)
        target.vb.close(*cells["D9"], ms=20)
        t.read(lambda s: "Ann: D9, 2 marks" in s, WAIT_S)
        t.write(b"n")
        t.read(lambda s: "Next: Bob" in s, WAIT_S)
        t.write(b"u")
        t.read(lambda s: "Undone." in s, WAIT_S)
        t.write(b"zz9\r")
        t.read(lambda s: "Refused" in s, WAIT_S)
        assert t.quit() == 0


@pytest.mark.parametrize("target", ["network"], indirect=True)
def test_the_pairing_code_comes_from_the_flag_the_url_or_the_environment(target):
    bare = ["--port", target.port]
    env = dict(os.environ, HAPENNY_CODE=CODE)
    for args, env_ in ((bare, env), (["--port", target.port + "#code=" + CODE], None)):
        r = subprocess.run([HAPENNY, "state", "--json", *args], capture_output=True, text=True, timeout=60, env=env_)
        assert r.returncode == 0, r.stderr
    no_env = {k: v for k, v in os.environ.items() if k != "HAPENNY_CODE"}
    r = subprocess.run([HAPENNY, "next", *bare], capture_output=True, text=True, timeout=60, env=no_env)
    assert r.returncode == 1 and "needs its pairing code" in r.stderr and "--code" in r.stderr
    r = subprocess.run([HAPENNY, "next", *bare, "--code", "not-the-code"], capture_output=True, text=True,
                       timeout=60, env=no_env)
    assert r.returncode == 1 and "refused the pairing code" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    # hapenny web checks the board's code once, before serving, rather than guess again and again
    r = subprocess.run([HAPENNY, "web", "--port", target.port + "#code=not-the-code", "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60, env=no_env)
    assert r.returncode == 1 and "refused the pairing code" in r.stderr and not r.stdout


@pytest.mark.parametrize("target", ["network"], indirect=True)
def test_web_serves_a_board_on_the_network(target):
    """`hapenny web` itself over the network transport: its page's commands
    and the board's events pass through to the board and back."""
    http = free_port()
    url = "http://127.0.0.1:%d/" % http
    proc = subprocess.Popen([HAPENNY, "web", "--port", target.port + "#code=" + CODE, "--listen",
                             "127.0.0.1:%d" % http], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("hapenny web: the board on") and CODE not in first, first
        outer = Page(url)  # on this computer: no code
        outer.wait(lambda s: s["connected"] and s["config"] is not None)
        assert outer.cmd(cmd="new", players=["Ann", "Bob"])["ok"]
        assert outer.cmd(cmd="throw", seg="T5")["ok"]
        s = outer.wait(lambda s: s["last"] is not None and s["last"].get("seg") == "T5")
        assert s["state"]["sides"][0]["marks"]["5"] == 3
        assert outer.cmd(cmd="throw", seg="T25")["error"] == "bad_seg"
    finally:
        proc.terminate()
        proc.wait(10)


def test_learn_by_closures(target, tmp_path):
    """The learn wizard: the board's raw closures arrive as over USB; a
    server that stores no map leaves the learning in the profile file."""
    link, _, conn = connect(target.port, code=target.code)
    cells = link.request("map")["cells"]
    conn.close()
    truth = {seg: (r, c) for r, c, seg in cells}
    segs = [s for s in ("T9", "D1", "S5") if s in truth]
    out_file = tmp_path / "learned.json"
    proc = subprocess.Popen([HAPENNY, "learn", "--segments", ",".join(segs), "--out", str(out_file),
                             *port_args(target)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        for seg in segs:
            line = proc.stdout.readline()
            while line and not line.startswith("["):
                line = proc.stdout.readline()
            assert line.split("]")[1].strip() == seg, line
            target.vb.wait_rearmed(WAIT_S)
            target.vb.close(*truth[seg], ms=20)
        err = proc.communicate(timeout=120)[1]
    finally:
        proc.kill()
    learned = sorted(json.loads(out_file.read_text())["map"])
    assert learned == sorted([r, c, s] for s, (r, c) in truth.items() if s in segs)
    link, _, conn = connect(target.port, code=target.code)
    try:
        assert link.request("config")["config"]["learn"] is False  # put back, stored or not
        now = link.request("map")["cells"]
        if target.stores_map:
            assert proc.returncode == 0 and sorted(now) == learned
            link.set_map(cells)
        else:
            assert proc.returncode == 1 and "did not store the map" in err and str(out_file) in err
            assert now == cells
    finally:
        conn.close()


@pytest.mark.parametrize("target", ["network"], indirect=True)
def test_doctor_and_wifi_do_over_the_network_what_needs_no_cable(target):
    out = cli(target, "doctor").stdout
    assert "ok   about   firmware 0.1.0, this hapenny 0.1.0" in out and "ok   about   free heap" in out
    for step in ("lines", "leds", "buttons", "darts"):
        assert "skip %-7s needs the USB cable" % step in out
    assert "FAIL" not in out and "3 finding(s), 0 failed; not run over the network" in out
    w = json.loads(cli(target, "wifi", "--json").stdout)
    assert w == {"state": "off"}  # the virtual board has no network set; never a code

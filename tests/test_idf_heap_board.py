"""The ESP-IDF heap model on the virtual classic ESP32 (hapenny/sim/runtime/
idfheap.py as its `esp32`, with its `network` and `socket` charging it),
through the board's serial port and real mpremote: the firmware's figures
come from it, a Wi-Fi start it refuses leaves the board playing, and the
board's sockets (the unix port's, on loopback, with the network joined)
take from it and give back. The model's rules and numbers alone are in
tests/test_idf_heap.py. One board for the file; every wait is for a state,
never a fixed time."""
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardsite import connect_when_up
from hapenny.sim.board import VirtualBoard

MPREMOTE = str(Path(sys.executable).parent / "mpremote")
PASSWORD = "Tr0ub4dor&3-secret"
HOME = {"home": {"key": PASSWORD, "rssi": -57, "addr": "127.0.0.1"}}
TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300}
WAIT = 30.0
GROWN = [94256, 53248]  # the grown board before Wi-Fi: micropython#18859's figures (the model's start)


class Board:
    def __init__(self):
        self.vb = VirtualBoard(fast=True).start()
        self.vb.air(HOME, TIMES)
        self.open()

    def open(self):
        self.link, self.info, self.ser = connect_when_up(self.vb.port)

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def wifi_until(self, what, cond):
        end = time.monotonic() + WAIT
        while True:
            w = self.req("wifi")["wifi"]
            if cond(w):
                return w
            assert time.monotonic() < end, "no %s: %r" % (what, w)
            time.sleep(0.2)

    def mpremote(self, code):
        """Run code at the board's REPL with the firmware's state as it is
        (`resume`: no soft reset, so its Wi-Fi stays started)."""
        self.ser.close()
        try:
            r = subprocess.run([MPREMOTE, "connect", self.vb.port, "resume", "exec", code], capture_output=True, text=True,
                               timeout=60)
        finally:
            self.open()
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout


@pytest.fixture(scope="module")
def board():
    b = Board()
    yield b
    b.ser.close()
    b.vb.stop()


def test_the_board_reports_the_models_figures(board):
    assert board.req("stats")["stats"]["idf_heap"] == GROWN
    assert board.req("diag", op="heap")["idf"] == GROWN
    m = board.vb.idf()
    assert (m["free"], m["largest"], m["areas"], m["growths"]) == (94256, 53248, [57344, 57344], 1)
    assert not m["wifi"] and m["sockets"] == 0 and m["faults"] == []


def test_a_wifi_start_esp_idf_refuses_fails_the_join_and_the_board_plays_on(board):
    boots = board.vb.boots
    board.vb.idf(hold=94256 - 16 * 1024)  # 16 KB left: esp_wifi_init needs 28 KiB
    rep = board.req("wifi", set={"ssid": "home", "key": PASSWORD})
    assert rep["ok"], rep
    w = board.wifi_until("refusal", lambda w: w["state"] == "failed")
    assert w["reason"] == "error: WiFi Out of Memory", w  # the chip's words (network_common.c)
    board.req("new", players=["Ann", "Bob"])
    st = board.req("throw", seg="T5")["state"]  # the game goes on meanwhile
    assert st["sides"][0]["marks"]["5"] == 3
    m = board.vb.idf(clear=True)
    assert not m["wifi"] and m["faults"] and all(f[:2] == ["enomem", "wifi init"] for f in m["faults"])
    board.vb.idf(hold=0)  # the memory back: the join's next attempt (its backoff) starts Wi-Fi
    w = board.wifi_until("join", lambda w: w["state"] == "joined")
    assert w["address"] == "127.0.0.1" and board.vb.boots == boots  # never a reset
    m = board.vb.idf()
    assert m["wifi"] and m["started"] and m["faults"] == []
    assert board.req("stats")["stats"]["idf_heap"] == [m["free"], m["largest"]] and m["free"] < 94256 - 30 * 1024


SOCKETS = r"""
import esp32, json, socket
h = esp32.heap()
def free():
    return sum(r[1] for r in esp32.idf_heap_info(esp32.HEAP_DATA))
A = socket.getaddrinfo("127.0.0.1", %d)[0][-1]
out = {"start": free(), "sockets_start": len(h.sockets)}  # (the board's own web server's listener among them)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(A)
srv.listen(5)
out["listener"] = free()
peers, got, res = [], [], []
for i in range(4):
    c = socket._real.socket()  # the peer: the unix port's own, not the board's
    c.connect(A)
    peers.append(c)
    try:
        got.append(srv.accept()[0])
        res.append(free())
    except OSError as e:
        res.append(-e.args[0])
out["accepts"] = res
peers[3].settimeout(5)
try:
    out["refused_peer"] = len(peers[3].recv(16))
except OSError as e:
    out["refused_peer"] = -e.args[0]
got[0].close()
out["after_close"] = free()
c = socket._real.socket()
c.connect(A)
peers.append(c)
got.append(srv.accept()[0])
out["again"] = free()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
out["udp"] = free()
for s in got + [srv, u] + peers:
    s.close()
out["end"] = free()
out["sockets"] = len(h.sockets)
out["faults"] = esp32.FAULTS
print(json.dumps(out))
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_sockets_take_from_esp_idf_and_a_fourth_client_is_refused_cleanly(board):
    assert board.req("wifi")["wifi"]["state"] == "joined"
    board.vb.idf(clear=True)
    out = json.loads(board.mpremote(SOCKETS % free_port()).strip().splitlines()[-1])
    start = out["start"]
    assert 0 < start - out["listener"] < 1024  # a PCB, a netconn and two mailboxes
    a = out["accepts"]
    assert all(x > 0 for x in a[:3]) and a[3] == -12, a  # three clients served; the fourth ENOMEM
    assert out["listener"] - a[0] > 19000 and a[2] >= 3 * 1024  # each at its worst; the margin left
    assert out["refused_peer"] <= 0  # its peer sees the connection closed (no half-open socket)
    assert out["after_close"] > a[2] + 19000  # a client that leaves gives its memory back ...
    assert out["again"] < out["after_close"]  # ... and the next is served
    assert out["udp"] < out["again"]  # a datagram socket takes its share too
    assert out["end"] == start and out["sockets"] == out["sockets_start"]  # all given back when closed
    assert [f[:2] for f in out["faults"]] == [["enomem", "connection"]]

"""The set-up page on the board's own server (firmware/shove/setupweb.py)
while its set-up access point is open, through real loopback sockets to a
virtual board with a radio and no network set. The virtual AP sits on the
loopback (SimBoard.ap_addr = 127.0.0.1), so a client bound to 127.0.0.2 is
on the AP's network, as a phone joined to it, and one bound to 127.0.1.2 is
not. Every wait is for a state; the AP's closing 30 s after the join is
reached by moving the board's clock on (`advance`), never by sleeping."""
import gzip
import io
import json
import socket
import time

import pytest

from hapenny import firmware
from hapenny.link import BoardError, LinkError
from hapenny.sim.board import VirtualBoard
from test_board_web import read_answer
from boardsite import connect_when_up, until
from test_setup_board import free_udp_port

PASSWORD = "Tr0ub4dor&3-secret"
AIR = {"home": {"key": PASSWORD, "rssi": -57, "addr": "127.0.0.1"}, "cafe": {"rssi": -70},
       "far": {"key": "their own pw", "rssi": -85}}
TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300}
WAIT = 30.0
ON_AP = "127.0.0.2"  # a phone joined to the set-up network
OUTSIDE = "127.0.1.2"  # anyone else
SETUP_MODULES = {"shove.wifiap", "shove.captive", "shove.setupweb", "shove.wifipage", "shove.probes"}
# (path, the OS that asks) : every probe leads to the page while no network is joined
PROBES = [("/generate_204", "android"), ("/gen_204", "android"), ("/hotspot-detect.html", "apple"),
          ("/library/test/success.html", "apple"), ("/connecttest.txt", "windows"), ("/ncsi.txt", "windows"),
          ("/redirect", "windows"), ("/canonical.html", "firefox"), ("/success.txt", "firefox"),
          ("/check_network_status.txt", "linux"), ("/", "a browser typing any address")]


class Board:
    def __init__(self):
        self.log = io.BytesIO()
        self.vb = VirtualBoard(fast=True, log=self.log)
        self.vb.dns_port = free_udp_port()
        self.vb.ap_addr = "127.0.0.1"
        self.vb.air(AIR, TIMES)
        self.vb.start()
        self.link, self.info, self.ser = connect_when_up(self.vb.port, WAIT)
        self.until("the set-up AP", lambda w: w["state"] == "setup" and w["ap"]["address"])

    def req(self, cmd, **f):
        # a bound on waiting only (a loaded host slows the chip-sized board with it); a line the board
        # never answers (a MemoryError once took one with it: Commands.stage) fails with its last words
        try:
            return self.link.request(cmd, timeout=WAIT, **f)
        except LinkError as e:  # what the board was doing, for the failure to show
            raise AssertionError("%s; the board's last words %r" % (e, self.log.getvalue()[-2500:])) from None

    def until(self, what, cond):
        return until(what, self.wifi, lambda w: w is not None and cond(w), pause=0.1)

    def wifi(self):
        """The network's state; None while the board answers no_memory: the chip-sized board,
        its server just changed (the set-up page's for the game's), was once a moment short of
        heap for the line's code, and answers once its collector has run. (Every command the
        tests assert on must still be answered ok.)"""
        try:
            return self.req("wifi")["wifi"]
        except BoardError as e:
            if e.code != "no_memory":
                raise
            return None

    def http(self, path, src=ON_AP, method="GET", body=None, host="connectivitycheck.gstatic.com", ctype=None):
        s = socket.socket()
        s.settimeout(WAIT)
        s.bind((src, 0))
        try:
            s.connect(("127.0.0.1", self.vb.web_port))
            data = json.dumps(body).encode() if body is not None else b""
            head = "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (method, path, host, len(data))
            if body is not None:
                head += "Content-Type: %s\r\n" % (ctype or "application/json")
            s.sendall(head.encode() + b"\r\n" + data)
            try:
                return read_answer(s)
            except socket.timeout:  # what the board was doing, for the failure to show
                raise AssertionError("no answer to %s %s in %d s: the server's figures %r; the board's last "
                                     "words %r" % (method, path, WAIT, self.req("stats")["stats"]["web"],
                                                   self.log.getvalue()[-1500:])) from None
        finally:
            s.close()

    def page_state(self, cond):
        end = time.monotonic() + WAIT
        while True:
            st = self.http("/api/setup/state").json()
            if cond(st):
                return st
            assert time.monotonic() < end, st
            time.sleep(0.1)

    def modules(self):
        return set(self.req("diag", op="about")["modules"])


@pytest.fixture(scope="module")
def board():
    b = Board()
    yield b
    b.ser.close()
    b.vb.stop()


def test_the_set_up_page_is_served_gzipped_under_any_host_name(board):
    for host in ("connectivitycheck.gstatic.com", "192.168.4.1", "anything.example"):
        a = board.http("/setup", host=host)
        assert a.status == 200 and a.headers["content-encoding"] == "gzip"
        assert a.headers["content-type"].startswith("text/html")
        assert gzip.decompress(a.body) == (firmware.STATIC / "setup.html").read_bytes()


@pytest.mark.parametrize("path, who", PROBES)
def test_the_connectivity_probes_lead_to_the_set_up_page(board, path, who):
    a = board.http(path)
    where = "http://127.0.0.1:%d/setup" % board.vb.web_port
    assert (a.status, a.headers.get("location")) == (302, where), who
    assert board.http(where[where.index("/setup"):]).status == 200


def test_the_scan_lists_the_networks_in_reach_strongest_first(board):
    r = board.http("/api/setup/networks").json()
    assert r["ok"] and r["networks"] == [{"ssid": "home", "rssi": -57, "secured": True},
                                         {"ssid": "cafe", "rssi": -70, "secured": False},
                                         {"ssid": "far", "rssi": -85, "secured": True}]


def test_nothing_of_the_set_up_network_answers_outside_it(board):
    for path, method, body in (("/setup", "GET", None), ("/api/setup/networks", "GET", None),
                               ("/api/setup/state", "GET", None), ("/generate_204", "GET", None),
                               ("/api/setup/join", "POST", {"ssid": "home", "key": PASSWORD})):
        a = board.http(path, src=OUTSIDE, method=method, body=body)
        assert (a.status, a.json()["error"]) == (403, "not_setup_network"), path
    assert board.req("wifi")["wifi"]["ap"]["page"] == "setup"  # the join sent from outside changed nothing


def test_a_join_the_page_cannot_send_is_refused_and_changes_nothing(board):
    a = board.http("/api/setup/join", method="POST", body={"ssid": "home", "key": "short"})
    assert a.status == 200 and a.json()["ok"] is False and a.json()["error"] == "bad_wifi"
    a = board.http("/api/setup/join", method="POST", body={"ssid": "home", "key": PASSWORD}, ctype="text/plain")
    assert (a.status, a.json()["error"]) == (415, "not_json")
    assert board.http("/api/setup/state").json()["state"] == "setup"


def test_a_wrong_password_keeps_the_set_up_network_with_the_reason(board):
    r = board.http("/api/setup/join", method="POST", body={"ssid": "home", "key": "not the password"}).json()
    assert r["ok"] and r["state"] == "joining" and r["ssid"] == "home"
    st = board.page_state(lambda st: st["state"] == "failed")
    assert st["reason"] == "wrong_password" and st["address"] is None
    w = board.req("wifi")["wifi"]
    assert w["state"] == "setup" and w["ap"]["address"] == "127.0.0.1"  # still open: the page tries again
    assert board.http("/setup").status == 200


def test_the_right_password_joins_shows_the_address_then_the_ap_closes(board):
    r = board.http("/api/setup/join", method="POST", body={"ssid": "home", "key": PASSWORD}).json()
    assert r["ok"] and r["state"] == "joining"
    st = board.page_state(lambda st: st["state"] == "joined")
    assert st["address"] == "127.0.0.1" and st["name"] == board.req("wifi")["wifi"]["name"]
    # joined: a probe now gets what its OS expects, so the phone's sign-in sheet closes
    a = board.http("/generate_204")
    assert (a.status, a.body) == (204, b"")
    assert board.http("/hotspot-detect.html").body.endswith(b"<BODY>Success</BODY></HTML>")
    board.vb.advance(31000)  # wifiap.CLOSE_MS on the board's clock
    w = board.until("the join as the board's network", lambda w: w["state"] == "joined" and "ap" not in w)
    assert w["ssid"] == "home" and w["web_port"] == board.vb.web_port
    assert not board.modules() & SETUP_MODULES


def test_after_the_join_the_game_s_page_is_served_with_its_rules_and_no_set_up_route(board):
    end = time.monotonic() + WAIT
    while True:  # the game's server takes the port once the set-up one let it go
        try:
            a = board.http("/", src=ON_AP, host="127.0.0.1:%d" % board.vb.web_port)
            break
        except OSError:
            assert time.monotonic() < end
            time.sleep(0.1)
    assert a.status == 200 and a.headers["content-encoding"] == "gzip"
    assert board.http("/", host="connectivitycheck.gstatic.com").status == 421  # the usual Host rule
    for path in ("/setup", "/api/setup/state", "/api/setup/networks", "/generate_204"):
        a = board.http(path, host="127.0.0.1:%d" % board.vb.web_port)
        assert a.status == 404, path
    a = board.http("/api/setup/join", method="POST", body={"ssid": "x", "key": ""},
                   host="127.0.0.1:%d" % board.vb.web_port)
    assert a.status == 404
    assert board.req("wifi")["wifi"]["ssid"] == "home"


def test_under_the_chip_s_heap_an_ap_board_answers_commands_and_serves_its_page():
    """A fresh board with the chip-sized heap (timing "esp32": tests/esp32_models.py's
    figures, the classic ESP32's ESP-IDF heap model) and no network set: its AP,
    DNS and server open, it answers commands over USB, serves the set-up page and
    the scan, and joins the network picked there. It once met a MemoryError at its
    first command (shove/loading.py: names_first)."""
    b = _chip_board()
    try:
        _connect(b)
        w = b.until("the set-up AP", lambda w: w["state"] == "setup" and w["ap"]["address"])
        assert w["ap"]["dns"] is True
        for cmd in ("state", "info", "stats", "config"):
            assert b.req(cmd)["ok"], cmd
        a = b.http("/setup")
        assert a.status == 200 and gzip.decompress(a.body) == (firmware.STATIC / "setup.html").read_bytes()
        assert [n["ssid"] for n in b.http("/api/setup/networks").json()["networks"]] == ["home", "cafe", "far"]
        assert b.http("/api/setup/join", method="POST", body={"ssid": "home", "key": PASSWORD}).json()["ok"]
        assert b.page_state(lambda st: st["state"] == "joined")["address"] == "127.0.0.1"
        assert b.req("new", players=["Ann", "Bob"])["ok"]  # a game: the AP closes at once
        b.until("the join as the board's network", lambda w: w["state"] == "joined" and "ap" not in w)
        assert b.req("state")["ok"] and b"MemoryError" not in b.log.getvalue()
        assert b.vb.idf()["faults"] == []  # ESP-IDF's heap never refused Wi-Fi or a socket, nor grew twice
    finally:
        _close(b)



def _chip_board():
    """A fresh board with the chip-sized heap (timing "esp32": tests/esp32_models.py's
    figures, the classic ESP32's ESP-IDF heap model) and the air, started; not yet connected."""
    b = Board.__new__(Board)
    b.log = io.BytesIO()
    b.vb = VirtualBoard(log=b.log, timing="esp32")
    b.vb.dns_port = free_udp_port()
    b.vb.ap_addr = "127.0.0.1"
    b.vb.air(AIR, TIMES)
    b.vb.start()
    return b


def _chip_board_restarted_with(key):
    """A board with the chip-sized heap, its network stored over USB with `key`, then reset."""
    b = _chip_board()
    _connect(b)
    b.until("the set-up AP", lambda w: w["state"] == "setup")
    assert b.req("wifi", set={"ssid": "home", "key": key})["ok"]  # stored; the AP closes
    b.req("reset")
    b.ser.close()
    _connect(b)
    return b


def _connect(b):
    try:
        b.link, b.info, b.ser = connect_when_up(b.vb.port, WAIT)
    except Exception:  # the board's last words say why
        raise AssertionError(b.log.getvalue()[-2000:])


def _close(b):
    try:
        b.ser.close()
    except AttributeError:
        pass
    b.vb.stop()


def test_under_the_chip_s_heap_a_board_with_its_network_stored_joins_at_start_and_serves():
    """Restarted with its network stored, a board with the chip's heap joins, starts
    its server and answers every command. It once answered every command no_memory:
    its server's start met a MemoryError "allocating 1280" (a pool of interned names,
    in a heap cut up by then), until the network's names came first (loading.names_first)."""
    b = _chip_board_restarted_with(PASSWORD)
    try:
        w = b.until("the join", lambda w: w["state"] == "joined")
        for cmd in ("state", "info", "stats", "config"):
            assert b.req(cmd)["ok"], cmd
        assert b.req("new", players=["Ann", "Bob"])["ok"] and b.req("throw", seg="S20")["ok"]
        assert b.req("stats")["stats"]["web"] is not None  # the server runs
        assert b"MemoryError" not in b.log.getvalue() and b'"ev":"web"' not in b.log.getvalue()
        assert w["address"] == "127.0.0.1"
    finally:
        _close(b)


def test_under_the_chip_s_heap_a_stored_network_refused_at_start_opens_the_ap_and_commands_are_answered():
    """A board whose stored network refuses its password at start (set over USB with a
    typo, then a power cut) falls back to its set-up AP. The AP's names are interned
    before it opens (shove.intern_first): it then answers every command; were there
    no room for them it would stay closed with the reason, never open on a board that
    then answers nothing."""
    b = _chip_board_restarted_with("a typo in it")
    try:
        w = b.until("the fallback", lambda w: w["state"] == "setup" or w.get("reason") == "no_memory")
        assert w["state"] == "setup"  # the AP opened (the board had the room)
        assert b.req("new", players=["Ann", "Bob"])["ok"]
        for cmd in ("state", "info", "stats", "config"):
            assert b.req(cmd)["ok"], cmd
        assert b.req("throw", seg="S20")["ok"]
        assert b"MemoryError" not in b.log.getvalue()
    finally:
        _close(b)

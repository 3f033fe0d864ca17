"""The set-up access point end to end on a virtual board with a radio (an
air set by the test bench): it opens at start with no network set, its
captive DNS answers through a real UDP socket on 127.0.0.1 (a free port: the
virtual board cannot have 53), the `wifi` command over USB sets the network
and closes it, a board that joins loads nothing of it, and NEW held at start
opens it again. Every wait is for a state, never a fixed time; the logic's
timing is table-tested in tests/test_setup_ap.py."""
import io
import socket
import time

import pytest

from boardsite import connect_when_up, until
from hapenny.sim.board import VirtualBoard

PASSWORD = "Tr0ub4dor&3-secret"
HOME = {"home": {"key": PASSWORD, "rssi": -57, "addr": "127.0.0.1"}, "cafe": {"rssi": -70}}
TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300}
WAIT = 30.0
AP_MODULES = {"shove.wifiap", "shove.captive"}


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def query(host, qid, qtype=1):
    name = b"".join(bytes((len(p),)) + p.encode() for p in host.split(".")) + b"\x00"
    return qid.to_bytes(2, "big") + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + name + qtype.to_bytes(2, "big") + b"\x00\x01"


class Board:
    def __init__(self):
        self.log = io.BytesIO()
        self.vb = VirtualBoard(fast=True, log=self.log)
        self.vb.dns_port = free_udp_port()
        self.vb.air(HOME, TIMES)  # a radio from the first start
        self.vb.start()
        self.open()

    def open(self):
        self.link, self.info, self.ser = connect_when_up(self.vb.port)

    def reset(self):
        self.req("reset")
        self.ser.close()
        self.open()

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def wifi(self):
        return self.req("wifi")["wifi"]

    def until(self, what, cond):
        return until(what, self.wifi, cond, pause=0.2)

    def modules(self):
        return set(self.req("diag", op="about")["modules"])

    def pixels(self, cond):
        end = time.monotonic() + WAIT
        while True:
            p = self.vb.pixels()[-3:]
            if cond(p) or time.monotonic() > end:
                return p
            time.sleep(0.1)

    def ask(self, packets, want_id):
        """Send the datagrams to the board's DNS; the reply whose id is want_id
        (asked again now and then: the board serves its network in its slow slice)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.0)
        end = time.monotonic() + WAIT
        try:
            while True:  # sent again only if nothing came for a long while (loopback loses nothing)
                for p in packets:
                    s.sendto(p, ("127.0.0.1", self.vb.dns_port))
                again = time.monotonic() + 10
                while time.monotonic() < again:
                    try:
                        data = s.recv(600)
                    except socket.timeout:
                        assert time.monotonic() < end, "no DNS reply"
                        continue
                    if data[:2] == want_id.to_bytes(2, "big"):
                        return data
        finally:
            s.close()


@pytest.fixture(scope="module")
def board():
    b = Board()
    yield b
    b.ser.close()
    b.vb.stop()


def test_a_board_with_no_network_opens_its_set_up_ap(board):
    w = board.until("the AP", lambda w: w["state"] == "setup" and w["ap"]["address"])
    assert w["reason"] == "none_set" and w["ap"]["essid"] == w["name"] and w["name"].startswith("hapenny-")
    assert w["ap"]["dns"] is True and w["ap"]["address"] == "192.168.4.1" and len(w["code"]) == 10
    assert board.req("info")["wifi"]["state"] == "setup"
    assert "code" not in board.req("info")["wifi"]  # the pairing code is the wifi command's alone
    p = board.pixels(lambda p: p[0][2] > p[0][0] > 0)  # violet: the set-up network is open
    assert p == [p[0]] * 3 and p[0][1] == 0 and p[0][2] > p[0][0] > 0
    assert AP_MODULES <= board.modules()
    assert "pair.json" in board.vb.names() and "wifi.json" not in board.vb.names()


def test_the_captive_dns_answers_every_name_with_the_board(board):
    r = board.ask([query("connectivitycheck.gstatic.com", 0x4242)], 0x4242)
    assert r[2] & 0x80 and r[3] == 0 and r[6:8] == b"\x00\x01"
    assert r[-4:] == bytes((192, 168, 4, 1))
    r = board.ask([query("captive.apple.com", 0x4343, qtype=28)], 0x4343)  # AAAA: no data
    assert r[3] == 0 and r[6:8] == b"\x00\x00"


def test_malformed_datagrams_get_nothing_and_the_board_goes_on(board):
    junk = [b"\xff" * 11, b"\x12\x34\x81\x80" + b"\x00" * 30, query("x" * 64, 0x5555)]
    r = board.ask(junk + [query("example.org", 0x5656)], 0x5656)  # answered after the junk, nothing for it
    assert r[-4:] == bytes((192, 168, 4, 1))
    assert board.req("info")["ok"] and board.wifi()["state"] == "setup"


def test_setting_the_network_over_usb_joins_and_closes_the_ap(board):
    code = board.wifi()["code"]
    board.req("wifi", set={"ssid": "home", "key": PASSWORD})
    w = board.until("the join", lambda w: w["state"] == "joined")
    assert w["code"] == code  # the passphrase learned for the AP is the pairing code still
    assert not AP_MODULES & board.modules()
    p = board.pixels(lambda p: p[0][1] > p[0][2] > 0)  # green: joined
    assert p[0][0] == 0


def test_a_board_that_joins_at_start_loads_nothing_of_the_ap(board):
    board.reset()
    w = board.until("the join", lambda w: w["state"] == "joined")
    assert w["tries"] == 1 and not AP_MODULES & board.modules()


def test_new_held_at_start_opens_the_ap_though_a_network_is_set(board):
    variant = board.req("config")["config"]["variant"]
    board.vb.buttons_held = ("new",)
    try:
        board.reset()
    finally:
        board.vb.buttons_held = ()
    w = board.until("the AP", lambda w: w["state"] == "setup")
    assert w["reason"] == "button" and w["ap"]["essid"] == w["name"]
    board.vb.wait_buttons_up(WAIT)
    assert board.req("config")["config"]["variant"] == variant  # the hold was no press: nothing changed
    assert board.req("state").get("state") is None  # nor a new game


def test_a_refused_stored_password_opens_the_ap_whose_join_behind_it_closes_it(board):
    """The router's password changed while the board was off: the AP opens at once; the
    password goes back (the router's owner undid it) and the join behind the AP gets in;
    a game is in play, so the AP closes at once and its code leaves the heap."""
    board.vb.air(dict(HOME, home=dict(HOME["home"], key="a new password")))
    board.reset()
    w = board.until("the AP", lambda w: w["state"] == "setup" and w["ap"]["address"])
    assert (w["reason"], w["ssid"]) == ("wrong_password", "home")
    assert AP_MODULES <= board.modules()
    assert board.req("new", players=["Ann", "Bob"])["ok"]
    board.vb.air(HOME)
    w = board.until("the join behind the AP", lambda w: w["state"] == "joined")
    assert w["address"] == "127.0.0.1" and "ap" not in w
    assert not AP_MODULES & board.modules()
    board.req("end")


def test_the_password_never_came_back(board):
    seen = board.log.getvalue()
    assert b'"setup"' in seen  # the log did catch the board's lines
    assert PASSWORD.encode() not in seen and PASSWORD[:8].encode() not in seen

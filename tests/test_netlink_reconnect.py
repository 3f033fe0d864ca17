"""The network transport's event stream coming back after it was lost
(host/hapenny/netlink.py), end to end against the virtual board's own
server: a connection dropped while the game goes on (the darts of the gap
reach the link only in the snapshot it gets back), the board restarting,
and `hapenny play --port http://...` across a power cut. Every wait is for
a condition with a generous bound; when the stream is tried again is the
test's to say where it matters (Gated), never a matter of the host's
timing."""
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from boardsite import WAIT, BoardSite
from hapenny import gamestate
from hapenny.link import Link
from hapenny.netlink import Address, HttpTransport
from screen import Terminal

HAPENNY = str(Path(sys.executable).parent / "hapenny")


class Gated(HttpTransport):
    """The transport whose next try after a loss waits for the test's `gate`
    as well as its backoff (the waits asked are noted)."""

    def __init__(self, *a, **k):
        self.gate = threading.Event()
        self.waits = []
        super().__init__(*a, **k)

    def _pause(self, s):
        self.waits.append(s)
        while not self.gate.wait(0.1):
            if self._closed:
                return False
        return super()._pause(s)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    s = BoardSite(board_dir=tmp_path_factory.mktemp("board"))
    yield s
    s.close()


def events_until(link, cond):
    """The link's events, in order, up to and with the first for which cond holds."""
    seen = []
    end = time.monotonic() + WAIT
    while True:
        while link.events:
            seen.append(link.events.popleft())
            if cond(seen[-1]):
                return seen
        assert time.monotonic() < end, seen
        link._pump(0.2)


def test_a_dropped_stream_comes_back_with_the_darts_it_missed(site):
    t = Gated(Address("127.0.0.1", site.vb.web_port, site.code), events=True)
    link = Link(t)
    try:
        link.hello()
        state = link.request("new", players=["Ann", "Bob"])["state"]
        link.wait_event("new", WAIT)
        t._sock.shutdown(socket.SHUT_RDWR)  # the connection drops (the host's Wi-Fi, say)
        lost = link.wait_event("link", WAIT)
        assert lost["up"] is False and lost["msg"]
        # the game goes on without this host: the board's darts, and a turn passed
        site.req("throw", seg="T5")
        site.req("throw", seg="D9")
        site.req("next")
        site.req("throw", seg="S20")
        now = site.req("state")["state"]
        t.gate.set()
        seen = events_until(link, lambda e: e.get("ev") == "link")
        assert [e["ev"] for e in seen] == ["link"]  # none of the gap's events came: only the snapshot has them
        back = seen[-1]
        assert back["up"] is True and back["snapshot"]["connected"] is True
        assert back["snapshot"]["state"] == now and now["thrower"] == "Bob" and now["visit"][0][0] == "S20"
        state = gamestate.apply(state, back)  # a client's copy is whole again
        assert state == now
        assert t.waits[0] == 1.0  # the backoff's first wait
        # and the stream is live: the next dart arrives as an event
        site.dart("T20")
        ev = link.wait_event("dart", WAIT)
        assert ev["seg"] == "T20" and gamestate.apply(state, ev) == site.req("state")["state"]
    finally:
        t.close()


def test_a_board_that_restarts_is_followed_again_with_its_game(site):
    t = HttpTransport(Address("127.0.0.1", site.vb.web_port, site.code), events=True)
    link = Link(t)
    try:
        link.hello()
        before = link.request("state")["state"]
        site.req("reset")  # over USB: the board restarts, rejoins its network, serves again
        site.ser.close()
        assert link.wait_event("link", WAIT)["up"] is False
        back = link.wait_event("link", 2 * WAIT)
        assert back["up"] is True and back["snapshot"]["state"] == before  # the game, restored
        assert back["snapshot"]["info"]["wifi"]["state"] == "joined"
        assert link.request("throw", seg="T19")["ok"]  # commands go again
        assert link.wait_event("dart", WAIT)["seg"] == "T19"
    finally:
        t.close()
        site.open()


def test_play_over_the_network_shows_the_whole_game_again_after_a_power_cut(site):
    url = "http://127.0.0.1:%d/#code=%s" % (site.vb.web_port, site.code)
    with Terminal([HAPENNY, "play", "Ann", "Bob", "--port", url]) as term:
        term.read(lambda s: "To throw: " in s and "Ann" in s, WAIT)
        site.vb.power_off()  # unplugged: its stream and its server gone
        term.read(lambda s: "Lost the board, trying again" in s, WAIT)
        term.write(b"t5\r")  # a dart typed meanwhile is not sent, and says so
        term.read(lambda s: "Not sent" in s, WAIT)
        site.vb.power_on()
        term.read(lambda s: "Back on the board" in s, 2 * WAIT)
        term.write(b"t5\r")
        term.read(lambda s: "Ann: T5, 3 marks" in s, WAIT)
        assert term.quit() == 0
    site.ser.close()
    site.open()
    assert site.req("state")["state"]["sides"][0]["marks"]["5"] == 3

"""The network transport against a stand-in server (a neighbour: the thing
under test is the transport), for what neither `hapenny web` nor a virtual
board does on demand: the board server's refusals (429, 503), its stream
framed without chunks, a stream that ends; what each request carries; the
--port forms; and the commands that need the cable refusing before any
connection."""
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hapenny.connect import PortError, connect, network_address
from hapenny.link import BoardError, Link
from hapenny.netlink import HttpTransport, NetError, parse_address

HAPENNY = str(Path(sys.executable).parent / "hapenny")
INFO = {"ok": True, "version": "0.1.0", "protocol": 1, "board": "stand-in"}


class StandIn:
    """An HTTP server answering /api/cmd from `answers` (status, body,
    headers) in turn, and /api/events with `stream` (bytes, then the
    connection closes: HTTP/1.0 framing, as a small server sends it)."""

    def __init__(self, answers=(), stream=b"", keep_alive=False, gets=()):
        self.answers = list(answers)
        self.stream = stream
        self.gets = list(gets)  # (status, body) for the first GETs of /api/events, in turn; then `stream`
        self.seen = []  # (method, path, headers, body)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.seen.append(("POST", self.path, dict(self.headers), json.loads(body)))
                status, reply, extra = outer.answers.pop(0) if outer.answers else (200, INFO, {})
                if status is None:  # drop the connection: without an answer, or after it unannounced
                    self.close_connection = True
                    if reply is None:
                        return
                    status = 200
                data = json.dumps(reply).encode()
                self.send_response(status)
                for k, v in dict(extra, **{"Content-Type": "application/json",
                                           "Content-Length": str(len(data))}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer.seen.append(("GET", self.path, dict(self.headers), None))
                if outer.gets:
                    status, body = outer.gets.pop(0)
                    if status != 200:
                        data = json.dumps(body).encode()
                        self.send_response(status)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(outer.stream)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stand_in():
    made = []

    def make(*a, **k):
        made.append(StandIn(*a, **k))
        return made[-1]
    yield make
    for s in made:
        s.close()


@pytest.mark.parametrize("text, host, port, code", [
    ("http://192.168.1.50", "192.168.1.50", 80, None),
    ("http://192.168.1.50:8080/", "192.168.1.50", 8080, None),
    ("http://dartboard.local/#code=abc-123", "dartboard.local", 80, "abc-123"),
    ("HTTP://Dartboard.local:81", "dartboard.local", 81, None),
    ("dartboard.local", "dartboard.local", 80, None),
    ("dartboard.local.", "dartboard.local", 80, None),
    ("hapenny-3f2a.local:8080", "hapenny-3f2a.local", 8080, None),
    ("10.0.0.7", "10.0.0.7", 80, None),
    ("10.0.0.7:8080", "10.0.0.7", 8080, None),
    ("http://[::1]:8080/", "::1", 8080, None),
])
def test_the_network_forms_of_port(text, host, port, code):
    a = parse_address(text)
    assert (a.host, a.port, a.code) == (host, port, code)


@pytest.mark.parametrize("text", ["/dev/ttyUSB0", "COM3", "/tmp/hapenny-sim/pty", "ttyACM0", "", "local",
                                  "/dev/serial/by-id/usb-board.local"])
def test_serial_ports_stay_serial(text):
    assert parse_address(text) is None


@pytest.mark.parametrize("text, words", [
    ("https://dartboard.local", "plain http://"),
    ("http://dartboard.local/api/cmd", "address only"),
    ("http://dartboard.local/?code=x", "address only"),
    ("http://dartboard.local:99999", "not an address"),
])
def test_a_network_port_that_cannot_be_used_says_why(text, words):
    with pytest.raises(PortError, match=words.replace("?", r"\?")):
        network_address(text)


def test_each_command_is_one_post_with_the_code_and_no_origin_and_its_reply_comes_back(stand_in):
    s = stand_in([(200, INFO, {}), (200, {"ok": True, "state": None}, {}),
                  (400, {"ok": False, "error": "unknown_cmd", "msg": "unknown command"}, {}),
                  (403, {"ok": False, "error": "usb_only", "msg": "press needs the USB cable"}, {})])
    link, info, t = connect(s.url + "/#code=from-url", code="from-flag", events=False)
    try:
        assert info["board"] == "stand-in" and link.request("state")["state"] is None
        for cmd, code in (("press", "unknown_cmd"), ("reset", "usb_only")):  # refusals before the board
            with pytest.raises(BoardError) as e:
                link.request(cmd)
            assert e.value.code == code
    finally:
        t.close()
    assert [x[0] for x in s.seen] == ["POST"] * 4  # no event stream when none is asked for
    method, path, headers, body = s.seen[1]
    assert path == "/api/cmd" and body == {"cmd": "state"}  # the line's id stays on this side
    assert headers["Host"] == "127.0.0.1:%d" % s.port and headers["Content-Type"] == "application/json"
    assert headers["X-Hapenny-Code"] == "from-flag" and "Origin" not in headers


@pytest.mark.parametrize("status, body, extra, words", [
    (403, {"ok": False, "error": "pairing", "msg": "no"}, {}, "refused the pairing code"),
    (429, {"ok": False, "error": "slow_down", "msg": "wait"}, {"Retry-After": "30"}, "for 30 s after wrong pairing"),
    (503, {"ok": False, "error": "busy", "msg": "too many clients"}, {}, "busy (too many clients)"),
    (421, {"ok": False, "error": "wrong_host", "msg": "not my name"}, {}, "does not answer to that name"),
    (404, "not found", {}, "is it a hapenny board"),
    (200, ["not", "a", "reply"], {}, "did not answer as a hapenny board"),
])
def test_what_the_server_refuses_is_an_error_in_words(stand_in, status, body, extra, words):
    s = stand_in([(200, INFO, {}), (status, body, extra)])
    link, _, t = connect(s.url, code="some-code", events=False)
    try:
        with pytest.raises(NetError, match=words.replace("(", r"\(").replace(")", r"\)")):
            link.request("next")
    finally:
        t.close()


def test_the_event_stream_framed_without_chunks_and_its_end(stand_in):
    """Only `event: event` messages are the board's lines; snapshot, ping,
    comments and retry are the server's. A stream that ends says so."""
    dart = {"ev": "dart", "seg": "T5", "side": 0}
    s = stand_in(stream=b"retry: 1000\n\n: a comment\n\nevent: snapshot\ndata: {\"connected\": true}\n\n"
                        b"event: ping\ndata: {}\n\nevent: event\r\ndata: " + json.dumps(dart).encode() +
                        b"\r\n\r\nevent: event\ndata: {\"ev\": \"visit\",\ndata: \"state\": null}\n\n")
    t = HttpTransport(parse_address(s.url), events=True, retry_s=(0.05,))
    link = Link(t)
    try:
        assert t.snapshot == {"connected": True}
        assert link.wait_event("dart", 30) == dart
        assert link.wait_event("visit", 30) == {"ev": "visit", "state": None}  # two data lines, one message
        lost = link.wait_event("link", 30)  # the stream ended: said so, then opened again
        assert lost["up"] is False and "closed its event stream" in lost["msg"]
        assert link.wait_event("link", 30) == {"ev": "link", "up": True, "snapshot": {"connected": True}}
        assert link.wait_event("dart", 30) == dart  # the stream's events again
        assert not link.noise
    finally:
        t.close()


class Paced(HttpTransport):
    """The transport with its waits between two tries noted, not slept (the backoff's table)."""

    def __init__(self, *a, **k):
        self.waits = []
        super().__init__(*a, **k)

    def _pause(self, s):
        self.waits.append(s)
        time.sleep(0.01)  # (a stand-in that ends every stream at once is not asked in a tight loop)
        return not self._closed


SNAP = b"event: snapshot\ndata: {\"connected\": true, \"state\": null}\n\n"
BUSY = {"ok": False, "error": "busy", "msg": "the board serves 3 clients at once"}


def test_a_lost_stream_is_tried_again_with_backoff_until_it_is_back(stand_in):
    """Lost: tried again after 1, 2, 4, then every 8 s (a board busy or restarting meanwhile), and the
    reader told when it is lost and when it is back, with the snapshot; a new loss starts again at 1 s."""
    back = SNAP.replace(b"null", b'{"turn": 1}')
    s = stand_in(gets=[(200, SNAP)] + [(503, BUSY)] * 5 + [(200, back), (503, BUSY), (200, back)], stream=back)
    t = Paced(parse_address(s.url), events=True)
    link = Link(t)
    try:
        assert link.wait_event("link", 30)["up"] is False
        up = link.wait_event("link", 30)
        assert up == {"ev": "link", "up": True, "snapshot": {"connected": True, "state": {"turn": 1}}}
        assert t.waits[:6] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]  # five refused busy, the sixth got in
        assert link.wait_event("link", 30)["up"] is False
        assert link.wait_event("link", 30)["up"] is True
        assert t.waits[6:8] == [1.0, 2.0]  # the backoff starts over after each return
    finally:
        t.close()


def test_a_stream_refused_for_good_ends_the_link_with_the_reason(stand_in):
    s = stand_in(gets=[(200, SNAP), (421, {"ok": False, "error": "wrong_host", "msg": "not my name"})])
    t = Paced(parse_address(s.url), events=True)
    link = Link(t)
    try:
        assert link.wait_event("link", 30)["up"] is False
        with pytest.raises(NetError, match="does not answer to that name"):
            link.wait_event("link", 30)
        assert t.waits == [1.0]  # no more tries
    finally:
        t.close()


def test_unreachable_boards_say_so():
    with socket.socket() as held:  # a port with nothing listening
        held.bind(("127.0.0.1", 0))
        url = "http://127.0.0.1:%d" % held.getsockname()[1]
        with pytest.raises(NetError, match="refused the connection"):
            connect(url, code="x")
    with pytest.raises(NetError, match="cannot find the board board.invalid on the network"):
        connect("http://board.invalid", code="x")


@pytest.mark.parametrize("args", [["flash", "mp.bin"], ["deploy", "--romfs"], ["test"],
                                  ["wifi", "home", "--password-stdin"], ["wifi", "--forget"], ["wifi", "--owner-code"]])
def test_commands_that_need_the_cable_say_so_in_one_line(args):
    # a port where nothing answers: the refusal comes before any connection
    r = subprocess.run([HAPENNY, *args, "--port", "http://127.0.0.1:9"], capture_output=True, text=True,
                       timeout=60, input="secret\n")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "needs the USB cable" in r.stderr and "refused" not in r.stderr, r.stderr
    assert "secret" not in r.stdout + r.stderr


def test_a_command_goes_again_only_when_a_kept_connection_was_closed_before_it(stand_in):
    """A server may close an idle kept-alive connection: the command then
    never reached it and goes once more on a new one. A new connection
    dropped without an answer may have run the command: it is not sent twice."""
    s = stand_in([(200, INFO, {}), (None, {"ok": True, "state": None}, {}),
                  (200, {"ok": True, "state": None}, {"Connection": "close"}), (None, None, {})], keep_alive=True)
    link, _, t = connect(s.url, code="c", events=False)  # info: kept alive
    try:
        link.request("state")  # answered, then its connection closed unannounced
        link.request("throw", seg="T5")  # the kept connection is dead: sent once more, on a new one
        with pytest.raises(NetError, match="cannot reach the board"):
            link.request("next")  # a new connection, dropped without an answer
    finally:
        t.close()
    assert [b["cmd"] for _, _, _, b in s.seen] == ["info", "state", "throw", "next"]


def _record(name_bytes, ip):
    return name_bytes + b"\x00\x01\x80\x01" + (120).to_bytes(4, "big") + b"\x00\x04" + socket.inet_aton(ip)


def test_a_name_on_the_network_found_by_an_mdns_query_of_our_own():
    """For a computer whose resolver does not look up NAME.local: one query,
    and the answer's A record for that name (names compressed, others' records
    skipped). A stand-in responder answers on this machine."""
    from hapenny.netlink import mdns_lookup

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as responder:
        responder.bind(("127.0.0.1", 0))
        asked = []

        def answer():
            query, peer = responder.recvfrom(512)
            asked.append(query)
            other = b"\x05other\x05local\x00"  # "local" at offset 12 + 6: the next name points there
            reply = b"\x00\x01\x84\x00\x00\x00\x00\x02\x00\x00\x00\x00" + _record(other, "10.0.0.1") + \
                _record(b"\x09dartboard\xc0\x12", "192.168.1.50")
            responder.sendto(reply, peer)

        th = threading.Thread(target=answer)
        th.start()
        assert mdns_lookup("dartboard.local", timeout=30, group=responder.getsockname()) == "192.168.1.50"
        th.join()
        assert b"\x09dartboard\x05local\x00\x00\x01\x80\x01" in asked[0]  # A, IN, answer to us directly
        th = threading.Thread(target=answer)  # an answer for another name only: not ours
        th.start()
        assert mdns_lookup("nobody.local", timeout=0.5, group=responder.getsockname()) is None
        th.join()


def test_a_board_on_the_network_with_another_protocol_is_refused_clearly(stand_in):
    s = stand_in([(200, {"ok": True, "protocol": 2, "version": "9.0"}, {})])
    with pytest.raises(PortError, match="protocol 2; this hapenny speaks 1: deploy matching firmware"):
        connect(s.url, events=False)

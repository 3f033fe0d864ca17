"""The board's own server under fire where it guards the board itself: the
set-up page of its access point (firmware/shove/setupweb.py: the Wi-Fi
settings) and, once it has joined, the update routes (/api/update/*,
shove/update.py: the firmware on its flash, behind the owner code). As
tests/soak/test_board_hostile.py does for the game's page: hostile requests
on raw sockets from a seeded generator (fuzzed heads and bodies, bad
methods, paths and lengths, joins from outside the set-up network, joins
the page cannot send, guessed and mangled owner codes), slow senders and
connects that never send, whose deadlines are reached by moving the board's
clock on. Nothing is sent with the right code (a client on the set-up
network has it: the AP's passphrase; the owner code): afterwards the
stored Wi-Fi settings, every file on the flash and the owner code are what
they were, the board has not reset, its heap after a collection is where
it was, the server has had no fault and still serves, and guessing the
owner code met its lock. One virtual board does both: its AP first, then
the network joined from its set-up page. `make test` runs 30 of each
(HOSTILE_SETUP_N sets any count); `make soak` (HAPENNY_SOAK=1) 2,000."""
import gzip
import json
import os
import random
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from boardsite import WAIT, connect_when_up, read_answer, until
from hapenny import firmware
from hapenny.sim.board import VirtualBoard
from test_board_hostile import booted, idle_connects, mutate
from test_setup_board import free_udp_port

N = int(os.environ.get("HOSTILE_SETUP_N") or (2000 if os.environ.get("HAPENNY_SOAK") else 30))
IDLE = 4 if N < 500 else 20  # connects that never send a request (in twos: one advance of the clock each)
PASSWORD = "Tr0ub4dor&3-secret"
AIR = {"home": {"key": PASSWORD, "rssi": -57, "addr": "127.0.0.1"}, "cafe": {"rssi": -70}}
TIMES = {"join_ms": 200, "refuse_ms": 200, "scan_ms": 200, "beacon_ms": 2000}
ON_AP = "127.0.0.2"  # a phone joined to the set-up network (the virtual AP is on the loopback)
OUTSIDE = "127.0.1.2"  # anyone else
# what the server may answer: its refusals (409 is not among them: it would mean an update step got
# past the owner code)
REFUSALS = {400, 403, 404, 405, 408, 411, 413, 415, 421, 429, 431, 501, 503, 505}
SETUP_PATHS = ["/setup", "/api/setup/networks", "/api/setup/state", "/api/setup/join", "/generate_204",
               "/hotspot-detect.html", "/", "/api/cmd", "/api/update/files", "/%00", "/" + "a" * 2000, "*",
               "http://evil.example/setup", "/setup?x=1", "/\xff", "/api/setup/join/../join"]
# joins a page on the set-up network may send that the board must refuse (a valid one, with any key,
# would be a person's choice of network: never sent here)
BAD_JOINS = [b"", b"{", b"[]", b"null", b'"home"', b"{}", b'{"ssid": "home"}', b'{"key": "' + PASSWORD.encode() + b'"}',
             b'{"ssid": "home", "key": "short"}', b'{"ssid": "", "key": "' + PASSWORD.encode() + b'"}',
             b'{"ssid": "' + b"s" * 33 + b'", "key": "' + PASSWORD.encode() + b'"}',
             b'{"ssid": 5, "key": "' + PASSWORD.encode() + b'"}', b'{"ssid": "home", "key": 12345678}',
             b'{"ssid": "home", "key": "' + b"k" * 64 + b'"}', b'{"ssid": "home", "key": "' + b"k" * 70 + b'"}',
             b'{"ssid": "home", "key": "tab\\tinside"}', b'{"ssid": "home", "key": "' + PASSWORD.encode()
             + b'", "name": "x"}', b'{"ssid": ["home"], "key": "' + PASSWORD.encode() + b'"}',
             b"[" * 300, b"\xff\xfe" * 40, b'{"ssid": "home", "key": "' + b"\xc3\xa9" * 10 + b'"}']
UPDATE_PATHS = ["/api/update/files", "/api/update/begin", "/api/update/file?path=shove/rules.mpy&at=0",
                "/api/update/file?path=boot.py&at=0&size=4&sha=" + "0" * 64, "/api/update/commit?files=1",
                "/api/update/file?path=../owner.key&at=0", "/api/update/file?path=wifi.json&at=0",
                "/api/update/", "/api/update/../cmd", "/api/update/files?" + "x" * 900, "/api/update/%2e%2e/x",
                "/api/update/commit?files=-1", "/api/update/file?path=web/index.html.gz&at=99999999999"]
UPDATE_METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "put", "G\x00T"]


def request(method, path, head, body=b""):
    raw = ("%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in head)
           + "\r\n").encode("utf-8", "surrogateescape")
    return raw + body


def setup_hostile(rng, src):
    """One hostile request (bytes) for the set-up server from `src`. From
    the set-up network only what the board must refuse or may answer
    without a change (a GET of the page, the scan, the state, a probe)."""
    host = rng.choice(["192.168.4.1", "connectivitycheck.gstatic.com", "evil.example", "", "a b", "\x00"])
    kind = rng.randrange(7)
    if kind == 0:  # a join the page cannot send
        body = rng.choice(BAD_JOINS)
        head = [("Host", host), ("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        return request("POST", "/api/setup/join", head, body)
    if kind == 1:  # a join with a body's length that lies, or chunked, or another type
        body = rng.choice(BAD_JOINS)
        head = [("Host", host), ("Content-Type", rng.choice(["application/json", "text/plain", "", "json"]))]
        head.append(rng.choice([("Content-Length", rng.choice(["-1", "abc", "99999999999", "0x10", "", "1e3"])),
                                ("Transfer-Encoding", "chunked"), ("Content-Length", "4")]))
        return request(rng.choice(["POST", "PUT", "GET"]), "/api/setup/join", head, body)
    if kind == 2:  # a bad method, path or version
        return ("%s %s %s\r\nHost: %s\r\n\r\n" % (rng.choice(["GET", "POST", "DELETE", "BREW", "", "X" * 300]),
                                                   rng.choice(SETUP_PATHS), rng.choice(["HTTP/1.1", "HTTP/9.9", ""]),
                                                   host)).encode("utf-8", "surrogateescape")
    if kind == 3:  # binary, or a head never ended
        return rng.choice([bytes(rng.randrange(256) for _ in range(rng.randrange(1, 1500))),
                           b"GET /setup HTTP/1.1\nHost: x\n\n", b"GET /api/setup/state HTTP/1.1\r\nHost: x"])
    if kind == 4:  # a huge header, or very many
        head = [("Host", host)]
        if rng.random() < 0.5:
            head.append(("X-" + "a" * rng.randrange(1, 50), "v" * rng.randrange(500, 3000)))
        else:
            head += [("H%d" % i, "x") for i in range(rng.randrange(20, 200))]
        return request("GET", rng.choice(SETUP_PATHS[:6]), head)
    if kind == 5:  # the page's own GETs with the head fuzzed (bodiless: no join can come of it)
        return mutate(rng, request("GET", rng.choice(SETUP_PATHS[:6]), [("Host", host), ("Accept", "*/*")]))
    if src == OUTSIDE:  # from outside: a well-formed join with the right password, fuzzed or not
        body = json.dumps({"ssid": "home", "key": PASSWORD}).encode()
        raw = request("POST", "/api/setup/join", [("Host", host), ("Content-Type", "application/json"),
                                                  ("Content-Length", str(len(body)))], body)
        return mutate(rng, raw) if rng.random() < 0.5 else raw
    body = rng.choice(BAD_JOINS)
    return request("POST", "/api/setup/join", [("Host", host), ("Content-Type", "application/json"),
                                               ("Content-Length", str(len(body)))], body)


def update_hostile(rng, site):
    """One hostile request (bytes) for the update routes: never the owner code."""
    host, code, owner = site.host, site.code, site.owner
    guesses = [None, code, "1234567891", "".join(rng.choice("123456789") for _ in range(10)), owner[:-1],
               owner + "1", "1" + owner, owner[::-1] if owner[::-1] != owner else "9" + owner[1:], "",
               " " * 10, "\x00" * 10, "9" * 500, owner.replace(owner[0], "0")]
    head = [("Host", host if rng.random() < 0.9 else rng.choice(["evil.example", "", "127.0.0.2"]))]
    g = rng.choice(guesses)
    if g is not None:
        head.append((rng.choice(["X-Hapenny-Owner", "x-hapenny-owner", "X-HAPENNY-OWNER"]), g))
    if rng.random() < 0.3:
        head.append(("X-Hapenny-Code", code))  # the players' code opens nothing of it
    if rng.random() < 0.2:
        head.append(("Origin", rng.choice(["http://evil.example", "null", "http://" + host])))
    body = rng.choice([b"", b"evil", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))),
                       (firmware.FIRMWARE / "shove" / "rules.py").read_bytes()[:512]])
    if rng.random() < 0.9:
        head.append(("Content-Length", str(len(body)) if rng.random() < 0.8 else
                     rng.choice(["-1", "abc", "99999999", "", str(len(body) + 40)])))
    raw = request(rng.choice(UPDATE_METHODS) if rng.random() < 0.3 else rng.choice(["GET", "POST", "PUT"]),
                  rng.choice(UPDATE_PATHS), head, body)
    return mutate(rng, raw) if rng.random() < 0.3 else raw


def fire(site, raw, src="127.0.0.1"):
    """One hostile request on a connection of its own from `src`: (status, body), or (None, b"") if dropped."""
    with site.connect(src) as s:
        try:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before it was all sent
            pass
        try:
            got = read_answer(s)
        except ConnectionResetError:  # dropped (a reset may overtake an answer)
            return None, b""
        except (UnicodeDecodeError, ValueError) as e:
            raise AssertionError("not an answer to %r: %r" % (raw[:200], e)) from None
    return (None, b"") if got is None else (got[0], got[2])


def volley(site, raws, srcs):
    """The requests two at once (the server's two request buffers); each one's (status, body)."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda a: fire(site, *a), zip(raws, srcs)))


def faults(site):
    """The ESP-IDF model's faults since the last look, cleared: each must be a connection it had no room
    for, closed at once (a client beyond what the budget affords)."""
    f = site.vb.idf(clear=True)["faults"]
    assert all(x[:2] == ["enomem", "connection"] for x in f), f
    return len(f)


class Site:
    """A virtual board with a radio and no network set: its set-up AP open,
    the set-up page served on a real loopback port."""

    def __init__(self, board_dir):
        self.vb = VirtualBoard(board_dir=board_dir, fast=True)
        self.vb.dns_port = free_udp_port()
        self.vb.ap_addr = "127.0.0.1"
        self.vb.air(AIR, TIMES)
        self.vb.start()
        self.link, self.info, self.ser = connect_when_up(self.vb.port)
        self.wifi(lambda w: w["state"] == "setup" and w["ap"]["address"] and self.web() is not None)
        self.host = "127.0.0.1:%d" % self.vb.web_port
        self.code = self.owner = None

    def req(self, cmd, **f):
        return self.link.request(cmd, **f)

    def web(self):
        return self.req("stats")["stats"]["web"]

    def wifi(self, cond):
        return until("the network's state", lambda: self.req("wifi")["wifi"], cond)

    def until(self, what, cond, also=None):
        return until(what, self.web, lambda w: w is not None and cond(w), also=also)

    def connect(self, src="127.0.0.1"):
        VirtualBoard.host_sends += 1  # the board's firmware is driven through this socket (the suite's summary)
        s = socket.socket()
        s.settimeout(WAIT)
        s.bind((src, 0))
        s.connect(("127.0.0.1", self.vb.web_port))
        return s

    def http(self, method, path, src="127.0.0.1", body=b"", **headers):
        h = dict({"Host": self.host}, **headers)
        if body:
            h["Content-Length"] = str(len(body))
        st, b = fire(self, request(method, path, h.items(), body), src)
        assert st is not None, path
        return st, b

    def close(self):
        try:
            self.ser.close()
        finally:
            self.vb.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    s = Site(tmp_path_factory.mktemp("board"))
    yield s
    s.close()


def kept(site):
    """What nothing but the right code may change: every file on the flash, the network's settings as the
    board reports them (its password never), and the set-up page's own state."""
    w = dict(site.req("wifi")["wifi"])
    for k in ("tries", "rssi"):
        w.pop(k, None)
    return site.vb.files(), w


def test_hostile_requests_to_the_set_up_page_change_nothing(site):
    boots = site.vb.boots
    site.req("state")  # (a round trip: every line the board wrote before it is read, its start's boot event too)
    started = booted(site)  # (the board's own start may be among the link's events: it is no news here)
    rng = random.Random(40)
    # a first round from each side: the modules and objects each answer needs are in the heap
    warm = [(setup_hostile(rng, src), src) for src in (ON_AP, OUTSIDE) for _ in range(10)]
    volley(site, [r for r, _ in warm], [s for _, s in warm])
    site.vb.advance(11000)
    site.until("the warm-up's connections closed", lambda w: w["open"] == 0)
    refused = faults(site)
    growths = site.vb.idf()["growths"]
    heap0 = site.req("stats")["stats"]["mem_alloc"]  # after a collection (stats makes one)
    files0, wifi0 = kept(site)
    assert wifi0["state"] == "setup" and wifi0["ap"]["page"] == "setup" and "wifi.json" not in files0

    srcs = [rng.choice((ON_AP, OUTSIDE)) for _ in range(N)]
    raws = [setup_hostile(rng, src) for src in srcs]
    got = []
    for at in range(0, N, 500):
        got += volley(site, raws[at:at + 500], srcs[at:at + 500])
        refused += faults(site)
    seen = {}
    for (st, body), raw, src in zip(got, raws, srcs):
        seen[(src, st)] = seen.get((src, st), 0) + 1
        if src == OUTSIDE or st is None or st in REFUSALS:
            assert st is None or st in REFUSALS, (src, st, raw[:300])
            continue
        # from the set-up network: the page's GETs, a probe's redirect, or a join refused by the board
        assert st in (200, 302), (st, raw[:300], body[:300])
        if raw.startswith(b"POST") and b"/api/setup/join" in raw.split(b"\r\n", 1)[0]:
            assert json.loads(body)["ok"] is False, (raw[:300], body)
    slow = idle_connects(site, IDLE, b"POST /api/setup/join HTTP/1.1\r\nHost: x\r\nContent-Ty", src=OUTSIDE)
    slow += idle_connects(site, IDLE, b"POST /api/setup/join HTTP/1.1\r\nHost: x\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"ssid\"", src=ON_AP)
    idle = idle_connects(site, IDLE, src=ON_AP)
    refused += faults(site)
    print("%d hostile requests to the set-up page: %s; slow senders %s; idle connects %s; connections ESP-IDF "
          "had no room for %d" % (N, dict(sorted(seen.items(), key=str)), sorted(set(slow), key=str),
                                  sorted(set(idle), key=str), refused))
    assert {(OUTSIDE, 403), (ON_AP, 200)} <= set(seen), seen  # the run met the guard and the board's refusals
    assert slow == [408] * (2 * IDLE) and all(st in (None, 408) for st in idle)

    site.vb.advance(6000)  # the request code, kept 5 s after the last request (httpd._KEEP_MS), let go
    web = site.web()
    assert web["faults"] == 0 and web["open"] == 0, web
    stats = site.req("stats")["stats"]
    print("heap after a collection: %d B before, %d B after" % (heap0, stats["mem_alloc"]))
    assert site.vb.boots == boots and booted(site) == started
    assert stats["errors"] == 0 and site.vb.idf()["growths"] == growths
    assert stats["mem_alloc"] - heap0 <= 2048, (heap0, stats["mem_alloc"])
    assert kept(site) == (files0, wifi0)  # no setting stored, no file changed, no join begun
    st, body = site.http("GET", "/setup", ON_AP)  # the page still serves
    assert st == 200 and gzip.decompress(body) == (firmware.STATIC / "setup.html").read_bytes()


def test_after_the_join_hostile_update_requests_change_no_file_and_guesses_are_locked_out(site):
    # the network joined from the set-up page, the AP closed: the game's server, with the update routes
    st, body = site.http("POST", "/api/setup/join", ON_AP, json.dumps({"ssid": "home", "key": PASSWORD}).encode(),
                         **{"Content-Type": "application/json"})
    assert st == 200 and json.loads(body)["ok"], body
    site.wifi(lambda w: w["state"] == "setup" and w["ap"]["page"] == "joined")
    site.vb.advance(31000)  # wifiap.CLOSE_MS on the board's clock
    w = site.wifi(lambda w: w["state"] == "joined" and "ap" not in w)
    site.until("the game's server", lambda w: True)
    site.code = w["code"]
    site.owner = site.req("wifi", owner=True)["owner"]
    boots = site.vb.boots
    site.req("state")  # (a round trip: every line the board wrote before it is read, its start's boot event too)
    started = booted(site)  # (the board's own start may be among the link's events: it is no news here)
    rng = random.Random(41)
    for raw in [update_hostile(rng, site) for _ in range(20)]:  # the warm-up: every answer's code loaded
        fire(site, raw)
    site.vb.advance(31000)  # the warm-up's lock over
    refused = faults(site)
    growths = site.vb.idf()["growths"]
    heap0 = site.req("stats")["stats"]["mem_alloc"]
    files0, wifi0 = kept(site)

    raws = [update_hostile(rng, site) for _ in range(N)]
    got = []
    for at in range(0, N, 500):
        got += volley(site, raws[at:at + 500], ["127.0.0.1"] * len(raws[at:at + 500]))
        refused += faults(site)
    seen = {}
    for (st, body), raw in zip(got, raws):
        seen[st] = seen.get(st, 0) + 1
        assert st is None or st in REFUSALS, (st, raw[:300], body[:300])
        assert site.owner.encode() not in body
    slow = idle_connects(site, IDLE, ("PUT /api/update/file?path=boot.py&at=0 HTTP/1.1\r\nHost: %s\r\n"
                                       "X-Hapenny-Owner: 12" % site.host).encode())
    idle = idle_connects(site, IDLE)
    refused += faults(site)
    print("%d hostile update requests: %s; slow senders %s; idle connects %s; connections ESP-IDF had no room "
          "for %d" % (N, dict(sorted(seen.items(), key=str)), sorted(set(slow), key=str), sorted(set(idle), key=str),
                      refused))
    assert {403, 429} <= set(seen), seen  # wrong owner codes refused, and guessing met the lock
    assert slow == [408] * IDLE and all(st in (None, 408) for st in idle)

    # the owner code's lock is its own: the players, with the pairing code, play on meanwhile
    st, _ = site.http("GET", "/api/update/files", **{"X-Hapenny-Owner": "1234567891"})
    assert st in (403, 429)
    st, body = site.http("GET", "/api/update/files", **{"X-Hapenny-Owner": site.owner})
    assert st == 429, (st, body)
    st, body = site.http("POST", "/api/cmd", body=b'{"cmd": "state"}',
                         **{"Content-Type": "application/json", "X-Hapenny-Code": site.code})
    assert st == 200 and json.loads(body)["ok"], body
    site.vb.advance(31000)  # the lock over
    web = site.web()
    assert web["faults"] == 0 and web["open"] == 0, web
    stats = site.req("stats")["stats"]
    print("heap after a collection: %d B before, %d B after" % (heap0, stats["mem_alloc"]))
    assert site.vb.boots == boots and booted(site) == started
    assert stats["errors"] == 0 and site.vb.idf()["growths"] == growths
    assert stats["mem_alloc"] - heap0 <= 2048, (heap0, stats["mem_alloc"])
    files, wifi = kept(site)
    assert files == files0 and wifi == wifi0  # no file written, staged or removed; the settings as they were
    assert site.req("wifi", owner=True)["owner"] == site.owner  # the owner code as it was
    # nor was the update's code loaded for them (its heap is kept once loaded)
    assert "shove.update" not in site.req("diag", op="about")["modules"]
    # the right owner code still opens the update routes, once no wrong guess has locked them
    st, body = site.http("GET", "/api/update/files", **{"X-Hapenny-Owner": site.owner})
    assert st == 200 and json.loads(body)["files"]["boot.py"] == __import__("hashlib").sha256(
        files["boot.py"]).hexdigest()
    st, _ = site.http("GET", "/api/access", **{"X-Hapenny-Code": site.code})  # and the page still serves
    assert st == 200

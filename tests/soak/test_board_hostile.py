"""The board's own web server (firmware/shove/httpd.py) under fire: hostile
HTTP requests on raw sockets from a seeded generator (bad methods and paths,
huge and binary heads, heads cut short or without their CRLF, bad and
doubled Content-Length, chunked bodies, wrong Host and Origin, wrong
pairing codes, fuzzed command bodies; tests/web/test_web_fuzz.py's
generator beside this file's own), slow senders and connects that never
send a request, whose deadlines are reached by moving the board's clock on.
Afterwards the board has not reset, its game is what it was, its heap after
a collection is where it was, the server has had no fault, and the page
still serves. `make test` runs 200 (HOSTILE_N sets any count); `make soak` (HAPENNY_SOAK=1)
10,000."""
import gzip
import json
import os
import random
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from boardsite import BoardSite, read_answer
from hapenny import firmware

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
import test_web_fuzz as webfuzz  # noqa: E402  (its generator of hostile requests)

N = int(os.environ.get("HOSTILE_N") or (10000 if os.environ.get("HAPENNY_SOAK") else 200))
IDLE = 50  # connects that never send a request
# what the server may answer a hostile request: its refusals (and 200 for a command
# read whole, carrying the code, that the board itself answered: its reply, ok or not)
REFUSALS = {400, 403, 404, 405, 408, 411, 413, 415, 421, 429, 431, 501, 503, 505}
READ_ONLY = [{"cmd": "state"}, {"cmd": "info"}, {"cmd": "stats"}, {"cmd": "map"}, {"cmd": "config"},
             {"cmd": "leds"}]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "BREW", "get", "G\x00T", "X" * 300, ""]
PATHS = ["/", "/api/cmd", "/api/events", "/api/snapshot", "/api/access", "/static/app.js", "/static/../wifi.json",
         "/%00", "/" + "a" * 2000, "*", "http://evil.example/", "/api/cmd?x=1", "/\xff"]


def mutate(rng, data):
    """data with a few random byte edits: flips, cuts, binary inserted, a piece repeated."""
    b = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(5)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del b[i:i + rng.randrange(1, 8)]
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        elif op == 3 and b:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randrange(1, 40)] * rng.randrange(1, 30)
        else:
            b[i:i] = rng.choice([b"\r\n", b"\n", b"\r", b"\r\n\r\n", b":", b" ", b"\x00"])
    return bytes(b)


def own(rng, site):
    """One hostile request of this file's own (bytes). Any with the pairing code
    carries a read-only command at most, so the game is what it was whatever the
    board makes of it."""
    host, code = site.host, site.code
    kind = rng.randrange(10)
    body = json.dumps(rng.choice(READ_ONLY)).encode()
    head = {"Host": host, "Content-Type": "application/json", "X-Hapenny-Code": code}
    if kind == 0:  # a fuzzed body, with the code
        body = mutate(rng, body)
        head["Content-Length"] = str(len(body))
    elif kind == 1:  # a body of binary, or over the bound, or of deep nesting
        body = rng.choice([bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))),
                           b"[" * rng.randrange(1, 600), b'{"cmd": "state", "x": ' + b"9" * 500 + b"}",
                           b"{" + b'"a":1,' * 200 + b'"cmd":"state"}'])
        head["Content-Length"] = str(len(body))
    elif kind == 2:  # Content-Length that lies, is not a number, or is doubled
        head["Content-Length"] = rng.choice(["-1", "abc", "99999999999999999999", "0x10", " 5", "1e3", "",
                                             str(len(body) + rng.randrange(1, 50)), str(max(0, len(body) - 3))])
        if rng.random() < 0.3:
            head["content-length"] = "3"
    elif kind == 3:  # chunked
        head["Transfer-Encoding"] = rng.choice(["chunked", "gzip, chunked", "identity"])
        body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    elif kind == 4:  # a huge header, or very many
        if rng.random() < 0.5:
            head["X-" + "a" * rng.randrange(1, 50)] = "v" * rng.randrange(500, 3000)
        else:
            for i in range(rng.randrange(20, 200)):
                head["H%d" % i] = "x"
        head["Content-Length"] = str(len(body))
    elif kind == 5:  # wrong Host or Origin
        if rng.random() < 0.5:
            head["Host"] = rng.choice(["evil.example", "dartboard.local.evil.example", "127.0.0.2", "", "a b",
                                       "127.0.0.1:80@evil", "\u00ebvil.example", "dartboard.local:" + "9" * 40])
        else:
            head["Origin"] = rng.choice(["http://evil.example", "null", "https://" + host, "http://" + host + "/x",
                                         "http://127.0.0.1:1", "\x00"])
        head["Content-Length"] = str(len(body))
    elif kind == 6:  # a bad method or path, or a bad version
        return ("%s %s %s\r\nHost: %s\r\n\r\n" % (rng.choice(METHODS), rng.choice(PATHS),
                                                   rng.choice(["HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "", "HTTP/1.1 x"]),
                                                   host)).encode("utf-8", "surrogateescape")
    elif kind == 7:  # a request line and head of binary, or no CRLF at all
        return rng.choice([bytes(rng.randrange(256) for _ in range(rng.randrange(1, 1500))),
                           ("GET / HTTP/1.1\nHost: %s\n\n" % host).encode(),
                           ("GET / HTTP/1.1\rHost: %s\r\r" % host).encode(),
                           ("GET /api/access HTTP/1.1\r\nHost: %s" % host).encode()])
    elif kind == 8:  # a well-formed request with its head fuzzed
        head["Content-Length"] = str(len(body))
        raw = ("POST /api/cmd HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in head.items()) + "\r\n").encode()
        return mutate(rng, raw) + body
    else:  # a page's own GETs, with the head fuzzed
        raw = ("GET %s HTTP/1.1\r\nHost: %s\r\nAccept: */*\r\n\r\n" % (rng.choice(PATHS[:6]), host)).encode()
        return mutate(rng, raw)
    return ("POST /api/cmd HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in head.items())
            + "\r\n").encode("utf-8", "surrogateescape") + body


def fire(site, raw):
    """One hostile request on a connection of its own: the status, or None if dropped."""
    with site.connect() as s:
        try:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before it was all sent
            pass
        try:
            got = read_answer(s)
        except ConnectionResetError:  # dropped (a reset may overtake an answer)
            return None
        except (UnicodeDecodeError, ValueError) as e:
            raise AssertionError("not an answer to %r: %r" % (raw[:200], e)) from None
    return None if got is None else got[0]


def idle_connects(site, n, *first, src=None):
    """n connections in twos (the server's request buffers: a third waits for
    one), from `src` if given, that send `first` bytes or nothing, then wait:
    each is dropped at the board's deadline (a 408, or closed)."""
    out = []
    while len(out) < n:
        k = min(2, n - len(out))
        # none still held from before (a request's answer sent, its client's close not yet read):
        # ESP-IDF's budget affords two connections at once, not two beside those
        w0 = site.until("the connections before closed", lambda w: w["open"] == 0, also=site.vb.idf)
        socks = [site.connect() if src is None else site.connect(src) for _ in range(k)]
        for s in socks:
            for b in first:
                s.sendall(b)
        site.until("the connections taken (%r before)" % w0, lambda w: w["accepted"] >= w0["accepted"] + k,
                   also=site.vb.idf)
        site.vb.advance(11000)  # the deadline (10 s) gone by on the board's clock
        for s in socks:
            got = read_answer(s)
            out.append(None if got is None else got[0])
            s.close()
    return out


def fits(site):
    """The ESP-IDF model's faults since the last look, cleared (its list is in the
    board's heap): each must be a connection it had no room for, closed at once (a
    client beyond what the budget affords, while others linger); their count."""
    faults = site.vb.idf(clear=True)["faults"]
    assert all(f[:2] == ["enomem", "connection"] for f in faults), faults
    return len(faults)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    s = BoardSite(board_dir=tmp_path_factory.mktemp("board"))
    yield s
    s.close()


def booted(site):
    """The boot events the link has read: a restart during a run adds one."""
    return sum(1 for e in site.link.events if e.get("ev") == "boot")


def test_hostile_requests_change_nothing_and_leak_nothing(site):
    assert site.req("new", players=["Ann", "Bob"])["ok"]
    assert site.req("throw", seg="T5")["ok"]
    before = site.req("state")["state"]
    boots = site.vb.boots
    started = booted(site)  # (the board's own start may be among the link's events: it is no news here)
    webfuzz.HOST[0] = site.host  # its requests carry its own code, not the board's: refused as guesses
    rng = random.Random(39)
    # a first round of each kind: the modules and objects each refusal needs are in the heap
    for raw in [own(rng, site) for _ in range(60)] + [webfuzz.hostile(rng)[0] for _ in range(60)]:
        fire(site, raw)
    site.vb.advance(31000)
    refusals = fits(site)
    growths = site.vb.idf()["growths"]
    heap0 = site.req("stats")["stats"]["mem_alloc"]  # after a collection (stats makes one)

    ours = N * 3 // 5
    # last, its wrong codes lock the code out (429) for what follows
    raws = [own(rng, site) if i < ours else webfuzz.hostile(rng)[0] for i in range(N)]
    got = []
    with ThreadPoolExecutor(2) as pool:  # two at once: the server's two request buffers
        for at in range(0, N, 500):
            got += pool.map(lambda raw: fire(site, raw), raws[at:at + 500])
            refusals += fits(site)
    seen = {}
    for i, (st, raw) in enumerate(zip(got, raws)):
        assert st is None or st in REFUSALS or st == 200 and i < ours, (st, raw[:300])
        seen[st] = seen.get(st, 0) + 1
    slow = idle_connects(site, 10, b"POST /api/cmd HTTP/1.1\r\nHost: " + site.host.encode() + b"\r\nContent-Ty")
    slow += idle_connects(site, 6, ("POST /api/cmd HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                                    "Content-Length: 50\r\n\r\n{\"cmd\"" % site.host).encode())
    idle = idle_connects(site, IDLE)
    refusals += fits(site)
    print("%d hostile requests: %s; slow senders %s; idle connects %s; connections ESP-IDF had no room "
          "for %d" % (N, dict(sorted(seen.items(), key=str)), sorted(set(slow), key=str), sorted(set(idle), key=str),
                      refusals))

    assert sum(seen.values()) == N
    assert {200, 400, 403, 404, 413, 421} <= set(seen), seen  # the run met the server's refusals
    assert slow == [408] * 16  # told why, at the board's deadline
    assert all(st in (None, 408) for st in idle) and len(idle) == IDLE
    site.vb.advance(31000)  # the wrong codes' lock over
    web = site.web()
    assert web["faults"] == 0 and web["open"] == 0, web
    assert web["slow"] >= 16 + IDLE - idle.count(None)
    stats = site.req("stats")["stats"]
    print("heap after a collection: %d B before, %d B after" % (heap0, stats["mem_alloc"]))
    # no reset, no game changed, no heap kept by the server
    assert site.vb.boots == boots and booted(site) == started
    assert site.req("state")["state"] == before
    assert stats["errors"] == 0
    assert site.vb.idf()["growths"] == growths  # no second growth of the heap
    # the heap where it was, within the collector's own wobble (a conservative
    # collector keeps what a stale word on the stack points to)
    assert stats["mem_alloc"] - heap0 <= 2048, (heap0, stats["mem_alloc"])
    st, headers, body = site.get("/")  # the page still serves
    assert st == 200 and gzip.decompress(body) == (firmware.STATIC / "index.html").read_bytes()
    st, _, body = site.get("/api/access", **{"X-Hapenny-Code": site.code})
    assert st == 200 and json.loads(body)["play"] is True

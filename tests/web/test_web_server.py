"""`hapenny web`'s server without a browser: what a hostile or broken client
sends gets a clear error and reaches nothing; the board's own refusals come
back in words. The bridge (the server's neighbour) is a stand-in here; the
browser tests run the real one against a virtual board."""
import asyncio
import json
import socket

import pytest
from aiohttp.test_utils import TestClient, TestServer

from hapenny.web import guard, server


class FakeBridge:
    def __init__(self, port, notify):
        self.notify = notify
        self.sent = []
        self.snap = {"connected": True, "info": None, "config": None, "state": None, "visit": []}
        self.connected = True

    def start(self):
        return self

    def stop(self):
        pass

    def request(self, cmd, fields, timeout=10.0):
        if not self.connected:
            return None
        self.sent.append((cmd, fields))
        if cmd == "undo":
            return {"ok": False, "error": "nothing_to_undo", "msg": "nothing to undo"}
        return {"ok": True}


def run(coro_fn, access=None):
    async def main():
        app = server.make_app("/dev/null", bridge_factory=FakeBridge, access=access)
        async with TestClient(TestServer(app)) as client:
            return await coro_fn(client, app)
    return asyncio.run(main())


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("body, status, code", [
    (b"not json", 400, "bad_json"),
    (b"\xff\xfe", 400, "bad_json"),
    (b"[1, 2]", 400, "bad_json"),
    (b'{"cmd": "reset"}', 400, "unknown_cmd"),
    (b'{"cmd": "diag", "op": "lines"}', 400, "unknown_cmd"),
    (b'{"cmd": 5}', 400, "unknown_cmd"),
    (b'{"cmd": "next", "id": 3}', 400, "bad_field"),
    (b'{"cmd": "new", "players": ["a"], "map": []}', 400, "bad_field"),
    (b'{"cmd": "new", "players": ["' + b"a" * 20000 + b'"]}', 413, "too_large"),
    (b'{"cmd": "new", "players": ["' + b"a" * 5000 + b'"]}', 413, "too_large"),
])
def test_a_bad_request_gets_a_clear_error_and_reaches_nothing(body, status, code):
    async def go(client, app):
        r = await client.post("/api/cmd", data=body, headers=JSON)
        reply = await r.json()
        return r.status, reply, app[server.BRIDGE].sent

    st, reply, sent = run(go)
    assert (st, reply["error"]) == (status, code) and reply["ok"] is False and reply["msg"]
    assert sent == []


def test_a_good_command_reaches_the_board_and_its_refusal_comes_back_in_words():
    async def go(client, app):
        a = await (await client.post("/api/cmd", json={"cmd": "new", "players": ["Ann", "cpu:3"],
                                                         "variant": "pub"})).json()
        b = await (await client.post("/api/cmd", json={"cmd": "undo"})).json()
        return a, b, app[server.BRIDGE].sent

    a, b, sent = run(go)
    assert a["ok"] and sent[0] == ("new", {"players": ["Ann", "cpu:3"], "variant": "pub"})
    assert b == {"ok": False, "error": "nothing_to_undo", "msg": "nothing to undo"}


def test_a_command_while_the_board_is_away_says_so():
    async def go(client, app):
        app[server.BRIDGE].connected = False
        r = await client.post("/api/cmd", json={"cmd": "next"})
        return r.status, await r.json()

    st, reply = run(go)
    assert st == 503 and reply["error"] == "disconnected" and "disconnected" in reply["msg"]


def test_too_many_watchers_are_refused_and_the_rest_keep_their_stream(monkeypatch):
    monkeypatch.setattr(server, "MAX_CLIENTS", 3)

    async def go(client, app):
        streams = [await client.get("/api/events") for _ in range(3)]
        first = [await s.content.readuntil(b"\n\n") for s in streams]  # retry: line
        extra = await client.get("/api/events")
        refused = (extra.status, await extra.json())
        app[server.HUB].notify("snapshot", {"connected": True, "state": None, "n": 1})
        got = []
        for s in streams:
            await s.content.readuntil(b"\n\n")  # the snapshot on connect
            got.append(await s.content.readuntil(b"\n\n"))  # the pushed one
        for s in streams:
            s.close()
        return first, refused, got

    first, refused, got = run(go)
    assert all(f.startswith(b"retry:") for f in first)
    assert refused[0] == 503 and refused[1]["error"] == "busy"
    for g in got:
        assert g.startswith(b"event: snapshot\ndata: ") and json.loads(g.split(b"data: ", 1)[1])["n"] == 1


@pytest.mark.parametrize("text", ["8080", "host:", "host:99999", ":x"])
def test_listen_must_be_host_and_port(text):
    with pytest.raises(ValueError, match="HOST:PORT"):
        server.parse_listen(text)
    assert server.parse_listen("0.0.0.0:8080") == ("0.0.0.0", 8080)


def test_a_page_that_stopped_reading_has_its_stream_ended_not_left_pinging():
    # a tablet asleep with its stream open: past 200 unread messages the hub
    # lets it go, and its stream handler must end (it ends on None), not
    # keep writing pings into a socket nobody reads
    async def go():
        hub = server.Hub(asyncio.get_running_loop())
        slow, live = asyncio.Queue(), asyncio.Queue()
        hub.clients.update({slow, live})
        for i in range(202):
            hub._push("snapshot", {"n": i})
            if not live.empty():
                live.get_nowait()  # this page keeps reading
        assert slow not in hub.clients and live in hub.clients
        assert slow.qsize() == 1 and slow.get_nowait() is None
        assert live.qsize() == 0
        hub._push("snapshot", {"n": 202})
        assert live.get_nowait().startswith("event: snapshot")

    asyncio.run(go())


# ---- who may send what -------------------------------------------------------------
NEXT = b'{"cmd": "next"}'


@pytest.mark.parametrize("headers, status, code", [
    ({"Content-Type": "text/plain"}, 415, "not_json"),  # a "simple" cross-site fetch
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "not_json"),  # a form
    ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "not_json"),
    ({}, 415, "not_json"),
    ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "wrong_origin"),
    ({"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403, "wrong_origin"),
    ({"Content-Type": "application/json", "Origin": "null"}, 403, "wrong_origin"),
    ({"Content-Type": "application/json", "Host": "evil.example"}, 421, "wrong_host"),  # DNS rebinding
    ({"Content-Type": "application/json", "Host": "evil.example:80"}, 421, "wrong_host"),
    ({"Content-Type": "application/json", "Host": "127.0.0.1.evil.example"}, 421, "wrong_host"),
    ({"Content-Type": "application/json", "Host": "127.0.0.1@evil.example"}, 421, "wrong_host"),
    ({"Content-Type": "application/json", "Host": ""}, 421, "wrong_host"),
])
def test_a_command_a_hostile_page_could_send_is_refused_in_words(headers, status, code):
    async def go(client, app):
        r = await client.post("/api/cmd", data=NEXT, headers=headers)
        return r.status, await r.json(), app[server.BRIDGE].sent

    st, reply, sent = run(go)
    assert (st, reply["error"]) == (status, code) and reply["ok"] is False and len(reply["msg"]) > 20
    assert sent == []


def test_the_pages_own_origin_and_json_pass():
    async def go(client, app):
        origin = "http://127.0.0.1:%d" % client.port
        a = await client.post("/api/cmd", data=NEXT, headers=dict(JSON, Origin=origin))
        b = await client.post("/api/cmd", data=NEXT, headers={"Content-Type": "application/json; charset=utf-8"})
        return a.status, b.status, app[server.BRIDGE].sent

    a, b, sent = run(go)
    assert (a, b) == (200, 200) and sent == [("next", {}), ("next", {})]


def test_watching_from_a_foreign_origin_or_host_is_refused_too():
    async def go(client, app):
        a = await client.get("/api/snapshot", headers={"Origin": "http://evil.example"})
        b = await client.get("/api/events", headers={"Host": "evil.example:%d" % client.port})
        c = await client.get("/", headers={"Host": "localhost:%d" % client.port})
        return a.status, b.status, c.status

    assert run(go) == (403, 421, 200)


def test_beyond_this_computer_a_page_without_the_code_watches_but_cannot_play():
    access = guard.Access({"127.0.0.1", "192.168.1.5"}, code="k3y-for-tests")

    async def go(client, app):
        out = {}
        for label, hdr in (("none", {}), ("wrong", {guard.CODE_HEADER: "k3y-for-test"}),
                           ("longer", {guard.CODE_HEADER: "k3y-for-tests!"}),
                           ("right", {guard.CODE_HEADER: "k3y-for-tests"})):
            r = await client.post("/api/cmd", data=NEXT, headers=dict(JSON, **hdr))
            a = await (await client.get("/api/access", headers=hdr)).json()
            out[label] = (r.status, (await r.json()).get("error"), a["play"], a["code_needed"])
        watch = await client.get("/api/snapshot")
        r = await client.get("/", headers={"Host": "192.168.1.5:%d" % client.port})
        return out, watch.status, r.status, app[server.BRIDGE].sent

    out, watch, lan, sent = run(go, access)
    assert out["none"] == (403, "pairing", False, True)
    assert out["wrong"] == out["longer"] == (403, "pairing", False, True)
    assert out["right"] == (200, None, True, True)
    assert watch == 200 and lan == 200 and sent == [("next", {})]


def test_on_this_computer_no_code_is_needed():
    async def go(client, app):
        return await (await client.get("/api/access")).json()

    assert run(go) == {"ok": True, "code_needed": False, "play": True}


def test_the_names_a_server_answers_to():
    assert guard.served_names("127.0.0.1") == guard.LOOPBACK_NAMES
    lan = guard.served_names("0.0.0.0")
    assert guard.LOOPBACK_NAMES <= lan and socket.gethostname().lower() + ".local" in lan
    assert "evil.example" not in lan
    one = guard.served_names("192.168.1.5")  # one address: it, and this computer's mDNS name
    assert one == {"192.168.1.5", socket.gethostname().lower() + ".local"}
    assert guard.host_name("[::1]:8080") == "::1" and guard.host_name("Box.Local.:80") == "box.local"
    for bad in ("a b", "x:99999", "a/b", "a@b", ":80", "x:y"):
        assert guard.host_name(bad) is None, bad


@pytest.mark.parametrize("code", ["short", "has space1", "ünïcode99", "x" * 65, "a#b$c%d&e"])
def test_a_pairing_code_from_the_flag_must_be_long_and_url_safe(code):
    with pytest.raises(ValueError, match="--code"):
        guard.check_code(code)
    assert guard.check_code("Kitchen-Darts_42") == "Kitchen-Darts_42"


def test_a_random_code_is_new_each_start_and_hard_to_guess():
    codes = {guard.new_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == guard.CODE_LEN for c in codes)
    assert all(set(c) <= set(guard.CODE_ALPHABET) for c in codes)
    assert len(guard.CODE_ALPHABET) ** guard.CODE_LEN > 2 ** 48
    assert server.page_url("192.168.1.5", 8080, "abc") == "http://192.168.1.5:8080/#code=abc"
    assert server.page_url("127.0.0.1", 8080, None) == "http://127.0.0.1:8080/"


def test_the_visits_darts_come_from_the_state_when_the_board_names_them():
    from hapenny.web.bridge import bed_of, visit_of

    st = {"visit": [["T5", 0, 1, [[1, 2]], 0], ["MISS", 0, 0, [], 0], ["DB", 0, 0, [], 2]]}
    assert visit_of(st, [{"seg": "S1"}]) == [
        {"seg": "T5", "side": 0, "own": 1, "gifts": [[1, 2]], "lost": 0, "bed": 5},
        {"seg": "MISS", "side": 0, "own": 0, "gifts": [], "lost": 0, "bed": None},
        {"seg": "DB", "side": 0, "own": 0, "gifts": [], "lost": 2, "bed": 25}]
    seen = [{"seg": "S1", "moves": 1}]
    assert visit_of({"turn": 0}, seen) == seen  # a board whose state does not name them
    assert visit_of(None, seen) == []  # no game
    assert [bed_of(s) for s in ("SI20", "SO7", "S13", "D1", "T19", "SB")] == [20, 7, 13, 1, 19, 25]


def test_the_stream_is_a_snapshot_then_events_and_a_later_page_starts_where_they_left_off():
    """As the board's own server: the whole snapshot once, then the board's
    events as they are (the page applies them); a page that connects after
    them gets a snapshot that has them, so it applies none twice."""
    async def go(client, app):
        hub = app[server.HUB]
        early = await client.get("/api/events")
        await early.content.readuntil(b"\n\n")  # retry:
        first = await early.content.readuntil(b"\n\n")
        dart = {"ev": "dart", "seg": "T5", "side": 0, "moves": 1}
        after = {"connected": True, "state": {"moves": 1}, "visit": [dart], "last": dart}
        hub.notify("event", dart, after)
        got = await early.content.readuntil(b"\n\n")
        late = await client.get("/api/events")
        await late.content.readuntil(b"\n\n")
        late_first = await late.content.readuntil(b"\n\n")
        snap = await (await client.get("/api/snapshot")).json()
        early.close()
        late.close()
        return first, got, late_first, snap, after

    first, got, late_first, snap, after = run(go)
    assert first.startswith(b"event: snapshot\ndata: ") and json.loads(first.split(b"data: ", 1)[1])["visit"] == []
    assert got == b'event: event\ndata: {"ev":"dart","seg":"T5","side":0,"moves":1}\n\n'
    assert late_first.startswith(b"event: snapshot\ndata: ")
    assert json.loads(late_first.split(b"data: ", 1)[1]) == after == snap


def test_follow_keeps_the_visit_through_an_undo_whether_or_not_the_state_names_it():
    from hapenny.web.bridge import follow

    st = {"turn": 0, "moves": 2, "phase": "play", "visit": [["T5", 0, 3, [], 0], ["S1", 0, 1, [], 0]]}
    snap = {"connected": True, "state": st, "visit": [], "last": None}
    undo = {"ev": "undo", "state": dict(st, moves=1, visit=[["T5", 0, 3, [], 0]])}
    out = follow(snap, undo)  # darts read from a state carry no `moves`: no KeyError
    assert [d["seg"] for d in out["visit"]] == ["T5"] and out["last"] is undo and snap["last"] is None
    seen = [{"ev": "dart", "seg": "T5", "moves": 1}, {"ev": "dart", "seg": "S1", "moves": 2}]
    old = {"connected": True, "state": {"turn": 0, "moves": 2}, "visit": seen, "last": None}
    assert follow(old, {"ev": "undo", "state": {"turn": 0, "moves": 1}})["visit"] == seen[:1]

"""`hapenny web`'s server without a browser: what a hostile or broken client
sends gets a clear error and reaches nothing; the board's own refusals come
back in words. The bridge (the server's neighbour) is a stand-in here; the
browser tests run the real one against a virtual board."""
import asyncio
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer

from hapenny.web import server


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


def run(coro_fn, **patch):
    async def main():
        app = server.make_app("/dev/null", bridge_factory=FakeBridge)
        async with TestClient(TestServer(app)) as client:
            return await coro_fn(client, app)
    return asyncio.run(main())


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
])
def test_a_bad_request_gets_a_clear_error_and_reaches_nothing(body, status, code):
    async def go(client, app):
        r = await client.post("/api/cmd", data=body)
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

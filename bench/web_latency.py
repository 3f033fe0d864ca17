"""How soon a dart reaches a web page, from each of the page's two servers:
`hapenny web`'s (the real bridge, aiohttp, Server-Sent Events) on a virtual
board (goal 200 ms), and the board's own (firmware/shove/httpd.py, stepped
by its main loop) on a virtual board that has joined its virtual network
(goal: p99 at most 100 ms). A client reads the page's event stream the way
the page's EventSource does.

The clock starts when the closure is pressed on the virtual matrix, before
the board has even seen it, so each figure is an upper bound of the time from
the board's `dart` event to the page.

    python bench/web_latency.py          # both; measure() returns them
    python bench/web_latency.py --board  # the board's own server alone, written
                                         # into bench/results.json and docs/performance.md
"""
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from aiohttp import ClientSession, ClientTimeout, web  # noqa: E402

from hapenny.connect import connect  # noqa: E402
from hapenny.sim.board import VirtualBoard  # noqa: E402
from hapenny.sim.pulses import percentile  # noqa: E402
from hapenny.web import server  # noqa: E402

SAMPLES = 200
BOARD_GOAL_MS = 100


async def _darts(vb, cells, base, samples):
    lat = []
    async with ClientSession(timeout=ClientTimeout(total=None, sock_read=10)) as http:
        async def cmd(**body):
            async with http.post(base + "api/cmd", json=body) as r:
                return await r.json()

        async with http.get(base + "api/events") as stream:
            pending = asyncio.Queue()

            async def read():
                kind = None
                async for raw in stream.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: ") and kind == "event":
                        ev = json.loads(line[6:])
                        if ev.get("ev") == "dart":
                            pending.put_nowait(time.monotonic())

            reader = asyncio.ensure_future(read())
            loop = asyncio.get_running_loop()
            try:
                while len(lat) < samples:
                    st = (await cmd(cmd="state"))["state"]
                    if st["phase"] != "play":
                        assert (await cmd(cmd="new", players=["A", "B"], rules={"darts": 9}))["ok"]
                    r, c, _ = cells[len(lat) % len(cells)]
                    await loop.run_in_executor(None, vb.wait_rearmed)
                    while not pending.empty():
                        pending.get_nowait()
                    t0 = time.monotonic()
                    await loop.run_in_executor(None, lambda: vb.close(r, c, ms=5))
                    t1 = await asyncio.wait_for(pending.get(), 5)
                    lat.append((t1 - t0) * 1000)
            finally:
                reader.cancel()
    return lat


def measure(samples=SAMPLES):
    """Both servers' figures: `hapenny web`'s, with the board's own under "board"."""
    r = measure_host(samples)
    r["board"] = measure_board(samples)
    return r


def measure_host(samples=SAMPLES):
    vb = VirtualBoard().start()
    try:
        link, info, ser = connect(vb.port)
        cells = link.request("map")["cells"]
        link.request("new", players=["A", "B"], rules={"darts": 9})
        ser.close()

        async def main():
            runner = web.AppRunner(server.make_app(vb.port), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            base = "http://127.0.0.1:%d/" % runner.addresses[0][1]
            try:
                async with ClientSession() as http:  # until the bridge has the board
                    for _ in range(100):
                        async with http.get(base + "api/snapshot") as r:
                            if (await r.json()).get("state"):
                                break
                        await asyncio.sleep(0.1)
                return await _darts(vb, cells, base, samples)
            finally:
                await runner.cleanup()

        lat = asyncio.run(main())
    finally:
        vb.stop()
    return {"samples": len(lat), "p50": round(percentile(lat, 50), 1), "p99": round(percentile(lat, 99), 1),
            "max": round(max(lat), 1), "goal_ms": 200}


def measure_board(samples=SAMPLES):
    """The board's own server: its event stream read on a raw socket, a dart
    closed at the virtual matrix (the board at its real pace, not fast)."""
    import socket

    from boardsite import BoardSite

    site = BoardSite(fast=False)
    lat = []
    try:
        cells = site.req("map")["cells"]
        s = site.connect()
        s.sendall(("GET /api/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n"
                   % site.host).encode())
        buf = b""

        def darts(timeout):
            """Darts seen on the stream until `timeout` s pass with none: their arrival times."""
            nonlocal buf
            seen = []
            s.settimeout(timeout)
            while True:
                while b"\n\n" in buf:
                    block, buf = buf.split(b"\n\n", 1)
                    if block.startswith(b"event: event\n") and b'"ev": "dart"' in block.replace(b'"ev":"', b'"ev": "'):
                        seen.append(time.monotonic())
                if seen:
                    return seen
                try:
                    got = s.recv(65536)
                except socket.timeout:
                    return seen
                assert got, "the stream ended"
                buf += got

        while len(lat) < samples:
            st = site.req("state")["state"]
            if st is None or st["phase"] != "play":
                assert site.req("new", players=["A", "B"], rules={"darts": 9})["ok"]
            r, c, _ = cells[len(lat) % len(cells)]
            site.vb.wait_rearmed(30)
            darts(0.05)  # anything still on its way (the new game's, the state's)
            t0 = time.monotonic()
            site.vb.close(r, c, ms=5)
            got = darts(5.0)
            assert got, "no dart on the stream"
            lat.append((got[0] - t0) * 1000)
        s.close()
        web = site.web()
        assert web["faults"] == 0, web
    finally:
        site.close()
    return {"samples": len(lat), "p50": round(percentile(lat, 50), 1), "p99": round(percentile(lat, 99), 1),
            "max": round(max(lat), 1), "goal_ms": BOARD_GOAL_MS}


def record_board(r):
    """The board's row into bench/results.json (web_latency.board) and the page's tables."""
    import report

    import subprocess

    path = ROOT / "bench" / "results.json"
    results = json.loads(path.read_text())
    r = dict(r, commit=subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                      text=True).stdout.strip())
    results["web_latency"]["board"] = r
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    report.write_docs()


BOARD_LINE = ("closure -> dart on the board-served page's event stream: p50 %(p50).1f ms, p99 %(p99).1f ms, "
              "max %(max).1f ms over %(samples)d darts (goal: p99 at most %(goal_ms)d ms)")

if __name__ == "__main__":
    if "--board" in sys.argv:
        r = measure_board()
        print(BOARD_LINE % r)
        record_board(r)
        sys.exit(0)
    r = measure()
    print("closure -> dart on the web page's event stream: p50 %(p50).1f ms, p99 %(p99).1f ms, "
          "max %(max).1f ms over %(samples)d darts (goal 200)" % r)
    print(BOARD_LINE % r["board"])

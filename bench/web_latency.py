"""How soon a dart reaches a web page: `hapenny web`'s server (the real
bridge, aiohttp, Server-Sent Events) on a virtual board, and a client reading
the page's event stream the way the page's EventSource does.

The clock starts when the closure is pressed on the virtual matrix, before
the board has even seen it, so each figure is an upper bound of the time from
the board's `dart` event to the page (issue goal: 200 ms).

    python bench/web_latency.py       # prints the figures; measure() returns them
"""
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from aiohttp import ClientSession, ClientTimeout, web  # noqa: E402

from hapenny.connect import connect  # noqa: E402
from hapenny.sim.board import VirtualBoard  # noqa: E402
from hapenny.sim.pulses import percentile  # noqa: E402
from hapenny.web import server  # noqa: E402

SAMPLES = 200


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


if __name__ == "__main__":
    r = measure()
    print("closure -> dart on the web page's event stream: p50 %(p50).1f ms, p99 %(p99).1f ms, "
          "max %(max).1f ms over %(samples)d darts (goal 200 ms)" % r)

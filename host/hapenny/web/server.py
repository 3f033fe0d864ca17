"""`hapenny web`: the live scoreboard and controls as a web page.

aiohttp serves the page (static files in this package: nothing is fetched
from the internet) and a Server-Sent Events stream: the whole snapshot
first, then every event the board sends, which the page applies itself
(the board's own server sends the same stream); the page's controls POST one command at a time. Only
the commands a page needs are accepted, each checked here before it goes to
the board, which checks it again. Who may send what is guard.py's."""
import asyncio
import json
from importlib import resources
from pathlib import Path

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from hapenny.web import guard
from hapenny.web.bridge import Bridge

STATIC = Path(str(resources.files("hapenny.web") / "static"))  # the page: package data
MAX_BODY = 4096  # a new game with rule overrides is well under 1 KB; the board takes lines of 512 bytes
BODY_S = 5.0  # a command's body has this long to arrive
MAX_CLIENTS = 64  # pages watching at once
PING_S = 10  # the stream's heartbeat when nothing happens
# what a page (or `hapenny --port http://...`) may ask, and the fields each
# may carry: the board's own server takes the same over the network
COMMANDS = {
    "next": set(), "undo": set(), "state": set(), "end": set(),
    "new": {"players", "teams", "variant", "rules", "cpu", "seed"},
    "config": {"set"},
    "throw": {"seg"},
    "hint": {"level"},
    # read only: a board's map is changed at the board itself (its own server, or USB)
    "info": set(), "stats": set(), "leds": set(), "map": set(),
}


class Hub:
    """The pages watching, each with its own queue: a snapshot when one
    connects and when the connection or the settings change, and every
    board event, which the page applies to its copy itself (as the board's
    own server does: it cannot build a whole state per dart per page).
    `snap` is the snapshot after the last message queued, for the next page."""

    def __init__(self, loop):
        self.loop = loop
        self.clients = set()
        self.snap = None

    def notify(self, kind, payload, snap=None):  # from the bridge's thread
        self.loop.call_soon_threadsafe(self._push, kind, payload, snap)

    def _push(self, kind, payload, snap=None):
        if kind == "snapshot":
            self.snap = payload
        elif snap is not None:
            self.snap = snap
        msg = "event: %s\ndata: %s\n\n" % (kind, json.dumps(payload, separators=(",", ":")))
        for q in list(self.clients):
            if q.qsize() > 200:  # a page that stopped reading: end its stream; it reconnects
                self.clients.discard(q)
                while not q.empty():  # what it missed is stale: the next snapshot replaces it
                    q.get_nowait()
                q.put_nowait(None)
                continue
            q.put_nowait(msg)

    def close(self):
        """The server is stopping: every page's stream ends now. A page left
        open on the TV would otherwise hold Ctrl-C up for the server's
        shutdown timeout."""
        for q in list(self.clients):
            q.put_nowait(None)
        self.clients.clear()


error = guard.refuse


def check_command(body):
    """The command a page sent, or (code, message) why not."""
    if not isinstance(body, dict):
        return None, ("bad_json", "send one JSON object: {\"cmd\": ..., ...}")
    cmd = body.get("cmd")
    if not isinstance(cmd, str) or cmd not in COMMANDS:
        return None, ("unknown_cmd", "unknown command; the page may send: %s" % ", ".join(sorted(COMMANDS)))
    extra = set(body) - COMMANDS[cmd] - {"cmd"}
    if extra:
        return None, ("bad_field", "%s takes no %s" % (cmd, ", ".join(sorted(extra))))
    return cmd, {k: v for k, v in body.items() if k != "cmd"}


HUB = web.AppKey("hub", Hub)
BRIDGE = web.AppKey("bridge", object)


def make_app(port, bridge_factory=Bridge, access=None):
    """`access`: who may send what (guard.Access); default: this computer
    only, no pairing code."""
    access = access or guard.Access(guard.LOOPBACK_NAMES)
    app = web.Application(client_max_size=MAX_BODY, middlewares=[access.middleware])

    async def on_startup(app):
        hub = Hub(asyncio.get_running_loop())
        app[HUB] = hub
        app[BRIDGE] = bridge_factory(port, hub.notify).start()

    async def on_shutdown(app):
        app[HUB].close()

    async def on_cleanup(app):
        await asyncio.get_running_loop().run_in_executor(None, app[BRIDGE].stop)

    async def index(request):
        return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def events(request):
        hub = request.app[HUB]
        if len(hub.clients) >= MAX_CLIENTS:
            return error(503, "busy", "too many pages are watching (%d)" % MAX_CLIENTS)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no"})
        await resp.prepare(request)
        q = asyncio.Queue()
        # a page that (re)connects catches up at once; then it is sent every
        # change. The snapshot is the one of the moment the queue joins (no
        # await between): an event in both would be applied twice (a dart
        # twice in the visit)
        hub.clients.add(q)
        snap = hub.snap or request.app[BRIDGE].snap
        try:
            await resp.write(b"retry: 1000\n\n")
            await resp.write(("event: snapshot\ndata: %s\n\n" % json.dumps(snap)).encode())
            while True:
                try:
                    msg = await asyncio.wait_for(q.get(), PING_S)
                except asyncio.TimeoutError:
                    # a ping the page can see: a page that hears nothing for
                    # longer knows its stream died (Wi-Fi lost while asleep)
                    msg = "event: ping\ndata: {}\n\n"
                if msg is None:  # the server is stopping: end the stream cleanly
                    break
                await resp.write(msg.encode())
        except ConnectionResetError:
            pass
        finally:
            hub.clients.discard(q)
        return resp

    async def command(request):
        if request.content_type != "application/json":
            return error(415, "not_json", "a command is sent as Content-Type: application/json")
        if request.content_length is not None and request.content_length > MAX_BODY:
            return error(413, "too_large", "a request is at most %d bytes" % MAX_BODY)
        if not access.may_play(request):
            return error(403, "pairing", "this page may watch but not play: open the address with the "
                                         "pairing code that hapenny web printed (or scan its QR code)")
        try:
            raw = await asyncio.wait_for(request.read(), BODY_S)
        except web.HTTPRequestEntityTooLarge:
            return error(413, "too_large", "a request is at most %d bytes" % MAX_BODY)
        except asyncio.TimeoutError:
            return error(408, "too_slow", "the request's body did not arrive in %g s" % BODY_S)
        except (ConnectionResetError, RequestPayloadError):  # cut short: nobody is left to answer
            return error(400, "bad_body", "the request's body was cut short or malformed")
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: [[[[... nested deep
            return error(400, "bad_json", "the body is not JSON")
        cmd, fields = check_command(body)
        if cmd is None:
            return error(400, *fields)
        bridge = request.app[BRIDGE]
        reply = await asyncio.get_running_loop().run_in_executor(None, bridge.request, cmd, fields)
        if reply is None:
            return error(503, "disconnected", "the board is disconnected")
        return web.json_response(reply)

    async def snapshot(request):
        return web.json_response(request.app[HUB].snap or request.app[BRIDGE].snap)

    async def pairing(request):
        # what the page may do: it shows "watching" instead of controls it may not use
        return web.json_response({"ok": True, "code_needed": access.code is not None,
                                  "play": access.may_play(request)})

    app.router.add_get("/", index)
    app.router.add_get("/api/events", events)
    app.router.add_get("/api/snapshot", snapshot)
    app.router.add_get("/api/access", pairing)
    app.router.add_post("/api/cmd", command)
    app.router.add_static("/static/", STATIC)
    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    return app


def lan_addresses():
    """This host's addresses on the home network (no lookup leaves the machine)."""
    addr = guard.outgoing_address()
    return [addr] if addr and not addr.startswith("127.") else []


def parse_listen(text):
    host, sep, port = (text or "").rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError("--listen is HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080")
    return host.strip("[]") or "127.0.0.1", int(port)


def qr_text(url):
    import io

    import segno

    buf = io.StringIO()
    segno.make(url, error="l").terminal(out=buf, compact=True)
    return buf.getvalue()


def page_url(host, port, code):
    """The address to open; the pairing code rides in the fragment, which a
    browser never sends to the server (so it is in no request line or log)."""
    if ":" in host:
        host = "[%s]" % host
    return "http://%s:%d/%s" % (host, port, "#code=" + code if code else "")


async def start(port, host, tcp, access, bridge_factory=Bridge):
    """The scoreboard for the board on `port`, listening at host:tcp, every
    connection through guard.ConnectionGuard. Returns (runner, listener,
    bound port); close the listener, then `await runner.cleanup()`."""
    app = make_app(port, bridge_factory, access)
    guard.quiet_bad_requests()
    # requests still running at Ctrl-C (a command waiting on the board)
    # get this long; the pages' streams end at once (Hub.close).
    # No access log: nothing a request carries is written anywhere. A page
    # that goes away has its handler cancelled at once, so its stream's place
    # is free again; bodies are taken as sent (a small gzip inflates to much).
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0, keepalive_timeout=15.0,
                           auto_decompress=False, handler_cancellation=True)
    await runner.setup()
    listener = await asyncio.get_running_loop().create_server(guard.ConnectionGuard(runner.server), host, tcp)
    return runner, listener, listener.sockets[0].getsockname()[1]


def serve(port, listen="127.0.0.1:8080", out=print, code=None):
    """Serve the board on `port` at `listen`. Beyond this computer the
    controls need a pairing code: `code`, or a new random one; on this
    computer only when `code` is given."""
    host, tcp = parse_listen(listen)
    local = guard.is_loopback(host)
    if code:  # asked for: needed even on this computer
        code = guard.check_code(code)
    elif not local:
        code = guard.new_code()
    access = guard.Access(guard.served_names(host), code)

    async def main():
        runner, listener, bound = await start(port, host, tcp, access)
        out("hapenny web: the board on %s" % port.split("#")[0])  # a board on the network: not its code
        out("open %s" % page_url("127.0.0.1" if host in ("0.0.0.0", "", "::") else host, bound, code))
        if not local:
            out("Listening beyond this computer: anyone on this network can watch; playing needs "
                "the pairing code, which these addresses and the QR code carry.")
            for a in lan_addresses():
                url = page_url(a, bound, code)
                out("on the home network: %s" % url)
                out(qr_text(url))
        out("Ctrl-C stops it.")
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            listener.close()
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass

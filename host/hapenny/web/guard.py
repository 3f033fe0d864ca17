"""Who may talk to `hapenny web`, checked before any handler runs.

A browser runs pages from any site, and any of them can send requests to
the scoreboard: a form POST or a `text/plain` fetch goes out without a
preflight, and a DNS-rebinding page (a hostile name that starts resolving
to this machine) even reads the answers. So every request is checked:

- `Host` must name the address the scoreboard serves (rebinding: the
  browser sends the hostile name);
- `Origin`, when a browser sends one, must be the scoreboard's own (a
  page from another site or another port of this machine);
- a command must be `application/json` (a form or a "simple" fetch cannot
  send that without a preflight, which is refused by the `Origin` check);
- served beyond this computer, a command needs the pairing code, which the
  printed URL and its QR code carry in their fragment (`#code=`), so it is
  never in a request line or a log. Watching needs no code.

And a connection that never finishes its request is closed, so slow
clients cannot hold the server's sockets."""
import asyncio
import hmac
import ipaddress
import logging
import secrets
import socket
import string
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

CODE_HEADER = "X-Hapenny-Code"
CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read aloud or typed from a screen
CODE_LEN = 10  # 31^10: about 2^50, out of reach of guessing over a home network
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "localhost.localdomain"}
HEAD_S = 10.0  # a connection has this long to send a request's head
MAX_CONNECTIONS = 256  # open at once: 64 watching pages and room for the rest


def new_code():
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))


def check_code(text):
    """A code given with --code: long enough not to be guessed, and
    safe in a URL without escaping."""
    ok = set(string.ascii_letters + string.digits + "-_")
    if not (8 <= len(text) <= 64 and set(text) <= ok):
        raise ValueError("--code is 8 to 64 letters, digits, - or _")
    return text


def is_loopback(host):
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def outgoing_address():
    """The address of the interface this machine reaches the network through,
    or None (no packet is sent: connecting a UDP socket only picks it)."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("192.0.2.1", 9))
        addr = s.getsockname()[0]
        s.close()
        return addr
    except OSError:
        return None


def own_addresses():
    """This machine's names and addresses, as a browser on the home network
    may write them in the address bar (nothing leaves the machine)."""
    names = set(LOOPBACK_NAMES)
    addr = outgoing_address()
    if addr:
        names.add(addr)
    host = socket.gethostname()
    names.update({host, host + ".local", host.split(".")[0] + ".local"})
    try:
        for *_, addr in socket.getaddrinfo(host, None):
            names.add(addr[0])
    except OSError:
        pass
    try:  # Linux: every local IPv4 address of every interface
        with open("/proc/net/fib_trie") as f:
            lines = f.read().splitlines()
        for a, b in zip(lines, lines[1:]):
            if "/32 host LOCAL" in b:
                names.add(a.split()[-1])
    except OSError:
        pass
    return {n.lower() for n in names}


def served_names(listen_host):
    """The host names a request may carry for a server bound to `listen_host`."""
    if listen_host in ("", "0.0.0.0", "::"):
        return own_addresses()
    if is_loopback(listen_host):
        return set(LOOPBACK_NAMES)
    return {listen_host.lower(), socket.gethostname().lower() + ".local"}


def host_name(value):
    """The name part of a Host header (`[::1]:8080` -> `::1`), lower case, or None if malformed."""
    try:
        parts = urlsplit("//" + value)
        name = parts.hostname
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        return None
    if not name or any(c in value for c in "/?#@ \t"):
        return None
    return name.rstrip(".")


def refuse(status, code, msg):
    return web.json_response({"ok": False, "error": code, "msg": msg}, status=status)


class Access:
    """The rules for one server: the names it answers to, and the pairing
    code its controls need (None: this computer only, no code)."""

    def __init__(self, names, code=None):
        self.names = {n.lower() for n in names}
        self.code = code

    def may_play(self, request):
        if self.code is None:
            return True
        given = request.headers.get(CODE_HEADER, "")
        # constant time: an answer's timing tells nothing about how much of a guess was right
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.code.encode())

    @web.middleware
    async def middleware(self, request, handler):
        host = request.headers.get("Host")
        name = host_name(host) if host else None
        if name is None or name not in self.names:
            return refuse(421, "wrong_host", "this scoreboard answers only at the address hapenny web "
                                             "printed (a page under another name was refused)")
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() != "http://" + host.lower():
            return refuse(403, "wrong_origin", "only the scoreboard's own page may send it requests "
                                               "(a page from another site or port was refused)")
        return await handler(request)


class ConnectionGuard:
    """Wraps the server's protocol factory: at most MAX_CONNECTIONS open,
    and a connection that has not sent a whole request head within HEAD_S
    seconds is closed (a client that opens sockets and never finishes would
    otherwise keep them all). After its first head a connection is aiohttp's
    to time out (keep-alive) or keep (an event stream)."""

    def __init__(self, factory, limit=None, head_s=None):
        self.factory = factory
        self.limit = limit or MAX_CONNECTIONS
        self.head_s = head_s or HEAD_S
        self.open = 0
        self.dropped = 0

    def __call__(self):
        return _Guarded(self)


class _Guarded(asyncio.Protocol):
    def __init__(self, guard):
        self.guard = guard
        self.inner = None
        self.transport = None
        self.timer = None
        self.tail = b""

    def connection_made(self, transport):
        g = self.guard
        if g.open >= g.limit:
            g.dropped += 1
            transport.abort()
            return
        g.open += 1
        self.transport = transport
        self.inner = g.factory()
        self.inner.connection_made(transport)
        self.timer = asyncio.get_running_loop().call_later(g.head_s, self._too_slow)

    def _too_slow(self):
        self.guard.dropped += 1
        self.timer = None
        self.transport.abort()

    def data_received(self, data):
        if self.timer is not None:
            seen = self.tail + data
            if b"\r\n\r\n" in seen:
                self.timer.cancel()
                self.timer = None
            else:
                self.tail = seen[-3:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self):
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self):
        self.inner.pause_writing()

    def resume_writing(self):
        self.inner.resume_writing()

    def connection_lost(self, exc):
        if self.inner is None:
            return
        if self.timer is not None:
            self.timer.cancel()
        self.guard.open -= 1
        self.inner.connection_lost(exc)
        self.inner = None


class _ClientsFault(logging.Filter):
    """aiohttp logs a traceback for every malformed request it answers with
    400; a flood of them would bury the terminal. Real errors still show."""

    def filter(self, record):
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, HttpProcessingError)


def quiet_bad_requests():
    log = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _ClientsFault) for f in log.filters):
        log.addFilter(_ClientsFault())

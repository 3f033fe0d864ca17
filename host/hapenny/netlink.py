"""A board on the network: the serial protocol carried by the board's web API.

The same API is served by the board itself (on Wi-Fi) and by `hapenny web`
on a computer the board is plugged into (docs/web.md). Each command line is
one `POST /api/cmd` whose answer is the command's reply; the board's event
lines arrive on the event stream `GET /api/events`. The transport hands both
to Link (link.py) as the lines of one port, so every command runs over the
network exactly as over USB.

Only what a board may do over the network goes: the pairing code rides in
the `X-Hapenny-Code` header, and what the server itself refuses (a wrong
code, too many guesses, a busy server) is an error in words, not a reply.

A lost event stream (a Wi-Fi drop, the board restarting) is opened again
with backoff (RETRY_S), as the board's page does, and the reader is told
with two events of the transport's own: `{"ev": "link", "up": false,
"msg": WHY}` when it is lost, `{"ev": "link", "up": true, "snapshot":
SNAPSHOT}` when it is back, with the whole game as it is then (what
happened meanwhile sent no event here). Only a server that refuses the
stream for good (not a board's, or another's name) ends it."""
import http.client
import ipaddress
import json
import os
import queue
import socket
import threading
from urllib.parse import parse_qs, urlsplit

from hapenny.link import LinkError, wire

CODE_HEADER = "X-Hapenny-Code"
HTTP_PORT = 80
CMD_S = 15.0  # a command's answer: the board's server is stepped by its main loop, between darts
STREAM_S = 25.0  # the stream pings every 10 s when nothing happens: silent this long, it is lost
# a lost event stream (a Wi-Fi drop, the board restarting) is opened again after these waits (s), the
# last repeated until it is back: a board that restarts is serving again within a few seconds
RETRY_S = (1.0, 2.0, 4.0, 8.0)


class NetError(LinkError):
    """The board on the network could not be reached, or its server refused."""


class Address:
    """Where a board on the network is: `host` (a name or an address), `port`
    and the pairing code the URL carries in its fragment (or None)."""

    def __init__(self, host, port=HTTP_PORT, code=None):
        self.host = host
        self.port = port
        self.code = code

    def __str__(self):
        host = "[%s]" % self.host if ":" in self.host else self.host
        return host if self.port == HTTP_PORT else "%s:%d" % (host, self.port)


def _ipv4(text):
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv4Address)
    except ValueError:
        return False


def parse_address(text):
    """An Address for `--port` forms that name a board on the network:
    `http://HOST[:PORT][/][#code=CODE]`, `NAME.local[:PORT]` or an IPv4
    address `A.B.C.D[:PORT]`; None for anything else (a serial port).
    ValueError for a network address that cannot be used."""
    text = (text or "").strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else None
    if scheme is None:
        host, sep, port = text.rpartition(":")
        if not sep:
            host, port = text, ""
        if not (host.lower().rstrip(".").endswith(".local") or _ipv4(host)) or "/" in host:
            return None
        text = "http://" + text
    elif scheme != "http":
        raise ValueError("%s: the board serves plain http:// (its pairing code guards the commands)" % text)
    try:
        parts = urlsplit(text)
        port = parts.port or HTTP_PORT
    except ValueError:
        raise ValueError("%s is not an address: http://HOST[:PORT], NAME.local or A.B.C.D" % text)
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.username:
        raise ValueError("%s: give the board's address only, http://HOST[:PORT] (its page's address works too)"
                         % text)
    code = parse_qs(parts.fragment).get("code", [None])[0]
    return Address(parts.hostname.rstrip("."), port, code)


MDNS_GROUP = ("224.0.0.251", 5353)
MDNS_S = 2.0  # how long a one-shot mDNS query waits for the board's answer


def _dns_name(data, i):
    """The name at data[i] (labels, or a pointer to them) and the offset after it."""
    labels, end, hops = [], None, 0
    while True:
        n = data[i]
        if n & 0xC0 == 0xC0:  # a pointer to labels earlier in the message
            if end is None:
                end = i + 2
            i = (n & 0x3F) << 8 | data[i + 1]
            hops += 1
            if hops > 32:
                raise ValueError("a loop of name pointers")
            continue
        if n == 0:
            return ".".join(labels), (end if end is not None else i + 1)
        labels.append(data[i + 1:i + 1 + n].decode("utf-8", "replace"))
        i += 1 + n


def mdns_answer(data, name):
    """The IPv4 address an mDNS response gives `name` (an A record), or None."""
    try:
        qd, an, ns, ar = (int.from_bytes(data[k:k + 2], "big") for k in (4, 6, 8, 10))
        i = 12
        for _ in range(qd):
            i = _dns_name(data, i)[1] + 4
        for _ in range(an + ns + ar):
            rname, i = _dns_name(data, i)
            rtype, rlen = int.from_bytes(data[i:i + 2], "big"), int.from_bytes(data[i + 8:i + 10], "big")
            rdata = data[i + 10:i + 10 + rlen]
            i += 10 + rlen
            if rtype == 1 and rlen == 4 and len(rdata) == 4 and rname.lower().rstrip(".") == name.lower():
                return socket.inet_ntoa(rdata)
    except (IndexError, ValueError):
        pass
    return None


def mdns_lookup(name, timeout=MDNS_S, group=MDNS_GROUP):
    """NAME.local's IPv4 address by one mDNS query (RFC 6762 5.1: from a
    port of our own, so the board answers us directly), for a computer whose
    own resolver does not look up .local names; None if nothing answers."""
    import time

    q = b"\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"  # one question
    q += b"".join(bytes([len(p)]) + p for p in (x.encode() for x in name.split("."))) + b"\x00"
    q += b"\x00\x01\x80\x01"  # A, IN with the unicast-response bit
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        end = time.monotonic() + timeout
        try:
            sock.sendto(q, group)
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
                data, _ = sock.recvfrom(9000)
                found = mdns_answer(data, name)
                if found:
                    return found
        except OSError:  # socket.timeout included; a network with no route for multicast
            return None


def resolve(addr):
    """The IP address to connect to: a name (NAME.local through the system's
    mDNS resolver, else one query of our own) is looked up once, so every
    request goes to the same board."""
    local = addr.host.lower().endswith(".local")
    try:
        infos = socket.getaddrinfo(addr.host, addr.port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        found = mdns_lookup(addr.host) if local else None
        if found:
            return found
        hint = (" (its name on the network is NAME.local; is it on, and on this network? "
                "`hapenny wifi` over USB shows its name and address)" if local else "")
        raise NetError("cannot find the board %s on the network%s" % (addr.host, hint))
    infos.sort(key=lambda i: i[0] != socket.AF_INET)  # IPv4 first: the board's own server has only that
    return infos[0][4][0]


def refusal(addr, status, body, code_given, retry_after=None):
    """What the server itself refused, in words: a NetError, or None when the
    answer is the board's own reply (a command it refused, or one that is not
    for the network)."""
    err = body.get("error") if isinstance(body, dict) else None
    msg = body.get("msg") if isinstance(body, dict) else None
    if status == 200:
        return None
    if status in (400, 403) and err not in ("pairing", "wrong_origin") and isinstance(body, dict) \
            and body.get("ok") is False and msg:
        return None  # a command refused before the board (unknown here, USB only): as the board's reply
    if status == 403 and err == "pairing":
        if code_given:
            return NetError("the board at %s refused the pairing code: check it (over USB `hapenny wifi` shows "
                            "the board's; `hapenny web` prints its own)" % addr)
        return NetError("the board at %s needs its pairing code: give it with --code or $HAPENNY_CODE "
                        "(over USB `hapenny wifi` shows it)" % addr)
    if status == 429:
        return NetError("the board at %s refuses commands for %s after wrong pairing codes: wait, then try the "
                        "right one" % (addr, "%s s" % retry_after if retry_after else "a while"))
    if status == 503:
        return NetError("the board at %s is busy (%s): try again shortly" % (addr, msg or "HTTP 503"))
    if status == 421:
        return NetError("the server at %s does not answer to that name (%s): use the address it prints"
                        % (addr, msg or "wrong_host"))
    if err:
        return NetError("the board at %s refused the request: %s (%s, HTTP %d)" % (addr, msg, err, status))
    return NetError("%s answered HTTP %d: is it a hapenny board (or `hapenny web`)?" % (addr, status))


class HttpTransport:
    """The board's protocol over its web API, for Link. `events`: also follow
    the event stream (a command that watches the game: play, learn, web);
    without it only replies arrive, and the board serves one connection less."""

    def __init__(self, addr, code=None, events=True, cmd_s=CMD_S, stream_s=STREAM_S, retry_s=RETRY_S):
        self.addr = addr
        self.code = code if code is not None else addr.code
        self.cmd_s = cmd_s
        self.stream_s = stream_s
        self.retry_s = retry_s
        self.ip = resolve(addr)
        self.quiet_s = stream_s  # the stream's pings say the board is there: no need to ask it
        self.snapshot = None  # the stream's last snapshot
        self._out = b""
        self._in = queue.Queue()
        self._conn = None
        self._stream = None
        self._sock = None  # the stream's socket
        self._lost = None  # why the event stream ended for good
        self._closed = False
        self._stop = threading.Event()  # set by close(): a wait between two tries ends at once
        self._thread = None
        if events:
            self._open_stream()

    # ---- HTTP ---------------------------------------------------------------------------
    def _headers(self, extra=None):
        # Host as the user named the board (a board answers to its own names only); no Origin
        h = {"Host": str(self.addr), "Accept": "application/json"}
        if self.code:
            h[CODE_HEADER] = self.code
        h.update(extra or {})
        return h

    def _connection(self, timeout):
        return http.client.HTTPConnection(self.ip, self.addr.port, timeout=timeout)

    def _unreachable(self, e):
        if isinstance(e, socket.timeout):
            return NetError("the board at %s did not answer within %g s" % (self.addr, self.cmd_s))
        if isinstance(e, ConnectionRefusedError):
            return NetError("the board at %s refused the connection: is its web server on (or `hapenny web` "
                            "running there)?" % self.addr)
        return NetError("cannot reach the board at %s: %s" % (self.addr, getattr(e, "strerror", None) or e))

    def post(self, body):
        """One command, the reply object (the board's own refusals included)."""
        data = wire(body).encode()
        while True:
            kept = self._conn is not None  # kept alive from an earlier command
            if not kept:
                self._conn = self._connection(self.cmd_s)
            try:
                self._conn.request("POST", "/api/cmd", data, self._headers({"Content-Type": "application/json"}))
                resp = self._conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._conn.close()
                self._conn = None
                # a kept connection the server had closed while idle: the command never reached it, so
                # it goes again on a new one (on a new connection it may have run: never twice)
                if not kept:
                    raise self._unreachable(e)
            except (OSError, http.client.HTTPException) as e:
                self._conn.close()
                self._conn = None
                raise self._unreachable(e)
        if resp.will_close:
            self._conn.close()
            self._conn = None
        try:
            reply = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            reply = None
        why = refusal(self.addr, resp.status, reply, bool(self.code), resp.getheader("Retry-After"))
        if why is not None:
            raise why
        if not isinstance(reply, dict) or "ok" not in reply:
            raise NetError("%s did not answer as a hapenny board does (HTTP %d)" % (self.addr, resp.status))
        return reply

    # ---- the event stream ---------------------------------------------------------------
    def _open_stream(self):
        """Connect to the event stream and read up to its first snapshot, so
        every event after now arrives (a command sent next cannot outrun it);
        then follow it (a thread of its own)."""
        resp = self._connect_stream()
        self._thread = threading.Thread(target=self._follow, args=(resp,), name="hapenny-events", daemon=True)
        self._thread.start()

    def _connect_stream(self):
        """The stream's response once its first snapshot is read (self.snapshot).
        NetError if not, with `again`: whether a later try may get it (a board
        unreachable, restarting, busy), or the server refuses it for good."""
        conn = self._connection(self.stream_s)
        try:
            conn.request("GET", "/api/events", headers=self._headers({"Accept": "text/event-stream"}))
            sock = conn.sock  # (the connection lets go of it once its response is read to its close)
            resp = conn.getresponse()
            if resp.status != 200:
                raw = resp.read()
                try:
                    body = json.loads(raw.decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    body = None
                err = refusal(self.addr, resp.status, body, bool(self.code), resp.getheader("Retry-After")) \
                    or NetError("the board at %s has no event stream (HTTP %d)" % (self.addr, resp.status))
                err.again = resp.status == 503  # busy: its clients come and go
                raise err
            self._stream = conn
            self._sock = sock
            for kind, data in self._messages(resp):
                if kind == "snapshot":
                    self.snapshot = data
                    break
            else:
                raise NetError("the board at %s ended its event stream at once" % self.addr)
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise self._unreachable(e)
        except NetError:
            conn.close()
            raise
        return resp

    @staticmethod
    def _messages(resp):
        """(event name, data) for each message of a text/event-stream."""
        kind, data = "message", []
        while True:
            line = resp.readline()
            if not line:
                return
            line = line.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                if data:
                    text = "\n".join(data)
                    try:
                        yield kind, json.loads(text)
                    except ValueError:
                        yield kind, text
                kind, data = "message", []
            elif line.startswith(":"):
                continue
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    kind = value
                elif name == "data":
                    data.append(value)

    def _follow(self, resp):
        """The stream's events into the reader's queue; when it is lost, a
        `link` event, tries again with backoff, and a `link` event with the
        snapshot once it is back."""
        while True:
            why = self._read_stream(resp)
            if self._closed:
                return
            self._put({"ev": "link", "up": False, "msg": why})
            resp = self._again()
            if resp is None:
                return
            self._put({"ev": "link", "up": True, "snapshot": self.snapshot})

    def _read_stream(self, resp):
        """Every event of the stream until it ends; why it ended."""
        try:
            for kind, data in self._messages(resp):
                if kind == "event" and isinstance(data, dict):  # a board event, as its port sends it
                    self._put(data)
                elif kind == "snapshot":
                    self.snapshot = data
        except socket.timeout:
            return "the board at %s went silent (no event or ping for %g s)" % (self.addr, self.stream_s)
        except Exception as e:  # OSError, HTTPException; and whatever http.client meets on a socket shut
            return "lost the board at %s: %s" % (self.addr, e)
        return "the board at %s closed its event stream" % self.addr

    def _again(self):
        """The stream connected again after it was lost, tried after each of
        retry_s's waits (the last repeated): its response, or None once closed
        or refused for good (the reader is then told why)."""
        tries = 0
        while True:
            wait = self.retry_s[min(tries, len(self.retry_s) - 1)]
            tries += 1
            if not self._pause(wait):
                return None
            old = self._stream
            if old is not None:
                old.close()
            try:
                if self.addr.host != self.ip:  # a name: looked up again (a board may come back elsewhere)
                    self.ip = resolve(self.addr)
                resp = self._connect_stream()
            except NetError as e:
                if getattr(e, "again", True):
                    continue
                self._lost = str(e)
                self._in.put(None)  # wakes a reader, who is told why
                return None
            if self._closed:  # closed while it connected
                self._stream.close()
                return None
            return resp

    def _pause(self, s):
        """Wait `s` seconds before the next try; False if the transport was closed meanwhile."""
        return not self._stop.wait(s)

    def _put(self, obj):
        self._in.put(wire(obj).encode() + b"\n")

    # ---- the transport, as Link reads and writes it --------------------------------------
    def write(self, data):
        """Command lines: each goes as one POST; its reply (with the line's
        `id`) comes back through read()."""
        self._out += data if isinstance(data, bytes) else data.encode()
        while b"\n" in self._out:
            line, self._out = self._out.split(b"\n", 1)
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                msg = None
            if not isinstance(msg, dict) or not isinstance(msg.get("cmd"), str):
                self._out = b""
                raise NetError("only protocol commands go over the network: the REPL and raw lines need the "
                               "USB cable")
            rid = msg.pop("id", None)
            reply = self.post(msg)
            if rid is not None:
                reply["id"] = rid
            self._in.put(wire(reply).encode() + b"\n")

    def read(self, timeout):
        try:
            chunk = self._in.get(timeout=max(0.0, timeout)) if timeout > 0 else self._in.get_nowait()
        except queue.Empty:
            return b""
        out = []
        while True:
            if chunk is None:
                self._in.put(None)  # stays: every later read says so too
                if out:
                    break
                raise NetError(self._lost or "the board's event stream ended")
            out.append(chunk)
            try:
                chunk = self._in.get_nowait()
            except queue.Empty:
                break
        return b"".join(out)

    def close(self):
        self._closed = True
        self._stop.set()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the stream's reader, which then ends
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(2.0)
        stream.close()


def board_code(addr, code=None):
    """The pairing code to send: --code, else the URL's `#code=`, else $HAPENNY_CODE."""
    return code or addr.code or os.environ.get("HAPENNY_CODE") or None

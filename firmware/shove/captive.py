# The set-up access point's captive portal, its parts below HTTP: a DNS
# responder that answers every name with the board, so that a phone which
# joins the AP looks up its connectivity probe's host, reaches the board and
# opens the set-up page by itself; and the probes' table, for the HTTP routes.
#
# answer() is pure (no socket, no allocation: it reads the query where it
# lies and writes the reply into a buffer made once), so it runs in CPython
# and in MicroPython alike (tests/portable/test_captive.py, and the fuzzing
# in tests/test_captive_fuzz.py). Dns is the thin socket around it, stepped
# by the loop: one datagram per step at most, never waiting.
#
# The wire format is RFC 1035's (section 4.1): a 12-byte header, then the
# question (labels of 1 to 63 bytes ending in a zero byte, 255 bytes at
# most, then QTYPE and QCLASS). What is not a plain query of one question
# gets no reply at all: a captive portal's resolver owes a malformed or
# hostile packet nothing, and a reply would only feed a reflection.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

PORT = const(53)
MAX = const(512)  # RFC 1035 2.3.4: a UDP message without EDNS; longer ones are dropped
_HEAD = const(12)
_NAME_MAX = const(255)
_TYPE_A = const(1)
_TYPE_ANY = const(255)
_CLASS_IN = const(1)
# A short time to live: once the board has joined the home network, the phone
# must ask again and get the real addresses (and the probes' real servers).
TTL_S = const(10)
_RCODE_REFUSED = const(5)
# The longest reply: the header, the longest question (a name of 255 bytes
# and its type and class), one answer (a pointer to the name, type, class,
# TTL, length, the address): 12 + 259 + 16 bytes.
OUT = const(287)


def question_end(q, n):
    """Where the question of the query q[:n] ends (just after its QCLASS),
    or 0 when q[:n] is not a plain query of one question."""
    if n < _HEAD + 5 or n > MAX:
        return 0
    if q[2] & 0xF8:  # QR set (a response), or an opcode other than QUERY
        return 0
    # one question, no answer and no authority records (a query has none);
    # additional records (an EDNS OPT) are left unread
    if q[4] or q[5] != 1 or q[6] or q[7] or q[8] or q[9]:
        return 0
    i = _HEAD
    while True:
        if i >= n:
            return 0
        k = q[i]
        if k == 0:
            break
        if k > 63:  # a compression pointer (0xC0) or a reserved label type: not in a question
            return 0
        i += k + 1
        if i - _HEAD > _NAME_MAX - 1:
            return 0
    i += 5  # the root label, QTYPE, QCLASS
    return i if i <= n else 0


def answer(q, n, out, ip):
    """The reply to the DNS query q[:n] written into out (OUT bytes or more);
    returns its length, or 0 when the query gets none. An A question (or
    ANY) of class IN is answered with the address `ip` (4 bytes); any other
    type (AAAA, HTTPS, ...) with no answer and no error, so a client falls
    back to IPv4; another class is refused."""
    e = question_end(q, n)
    if not e:
        return 0
    for i in range(e):  # the header and the question, as they came (no slice: no allocation)
        out[i] = q[i]
    qtype = (q[e - 4] << 8) | q[e - 3]
    qclass = (q[e - 2] << 8) | q[e - 1]
    out[2] = 0x84 | (q[2] & 0x01)  # QR, opcode QUERY, AA; RD as asked
    out[3] = 0  # no recursion available, NOERROR
    out[10] = out[11] = 0  # no additional records (the query's EDNS is not echoed)
    if qclass != _CLASS_IN:
        out[3] = _RCODE_REFUSED
        out[7] = 0
        return e
    if qtype != _TYPE_A and qtype != _TYPE_ANY:
        out[7] = 0  # NOERROR, no data: the name is there, not with that type
        return e
    out[7] = 1
    out[e] = 0xC0  # the answer's name: a pointer to the question's
    out[e + 1] = _HEAD
    out[e + 2] = 0
    out[e + 3] = _TYPE_A
    out[e + 4] = 0
    out[e + 5] = _CLASS_IN
    out[e + 6] = 0
    out[e + 7] = 0
    out[e + 8] = TTL_S >> 8
    out[e + 9] = TTL_S & 0xFF
    out[e + 10] = 0
    out[e + 11] = 4
    out[e + 12] = ip[0]
    out[e + 13] = ip[1]
    out[e + 14] = ip[2]
    out[e + 15] = ip[3]
    return e + 16


def ip4(text):
    """'192.168.4.1' -> its 4 bytes (ValueError when it is not one)."""
    parts = text.split(".")
    if len(parts) != 4:
        raise ValueError("not an IPv4 address")
    b = bytearray(4)
    for i in range(4):
        v = int(parts[i])
        if not 0 <= v <= 255:
            raise ValueError("not an IPv4 address")
        b[i] = v
    return bytes(b)


class Dns:
    """The responder on UDP `port` of `host` (53 on every interface on the
    chip; the virtual board's is another port, on 127.0.0.1 only, as it runs
    beside other boards on a computer), answering every name with `address`. step() serves one datagram at most and never waits:
    the socket is non-blocking and looked at through a poll object made
    once (ipoll: no allocation when nothing waits; an empty recvfrom would
    raise an OSError, an object each time). A datagram costs its bytes and
    its sender's address (socket.recvfrom allocates them; the ESP32 port has
    no recvfrom_into: ports/esp32/modsocket.c) and a memoryview of the
    reply; a malformed one nothing more."""

    def __init__(self, address, port=PORT, host="0.0.0.0"):
        import select
        import socket

        self.ip = ip4(address)
        self.out = bytearray(OUT)
        self._view = memoryview(self.out)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # getaddrinfo's address is what bind takes in every port: a tuple
            # on the ESP32 (lwIP), sockaddr bytes in the unix port
            s.bind(socket.getaddrinfo(host, port)[0][-1])
            s.setblocking(False)
        except Exception:
            s.close()
            raise
        self.sock = s
        p = select.poll()
        p.register(s, select.POLLIN)
        self._poll = p
        self._ipoll = getattr(p, "ipoll", None)  # MicroPython's; CPython's poll has poll() only
        self.answered = 0
        self.dropped = 0

    def step(self):
        """One waiting datagram answered (or dropped); True if there was one."""
        ready = self._ipoll(0) if self._ipoll is not None else self._poll.poll(0)
        for _ in ready:
            try:
                data, peer = self.sock.recvfrom(MAX + 1)  # one more than a query may be: too long is dropped
            except OSError:  # gone meanwhile (ICMP unreachable on some stacks)
                return False
            n = answer(data, len(data), self.out, self.ip)
            if n:
                try:
                    self.sock.sendto(self._view[:n], peer)
                    self.answered += 1
                except OSError:  # the radio's buffers are full: the client asks again
                    self.dropped += 1
            else:
                self.dropped += 1
            return True
        return False

    def close(self):
        try:
            self._poll.unregister(self.sock)
        except (OSError, ValueError, KeyError):
            pass
        self.sock.close()


# The operating systems' connectivity probes: (path, who asks, the status,
# content type and body that mean "online"). While the set-up AP is open the
# HTTP routes answer these paths with a redirect to the set-up page (anything
# but the expected answer makes the OS show its sign-in sheet); once the
# board has joined the home network, with the expected answer, so the sheet
# closes by itself. Every host name is the board's (the DNS above), so the
# path alone picks the probe.
# - Android and ChromeOS: AOSP's NetworkStack, NetworkMonitor.java
#   (DEFAULT_HTTP_URL http://connectivitycheck.gstatic.com/generate_204, the
#   fallbacks http://www.google.com/gen_204 and play.googleapis.com's):
#   an HTTP 204 with no body is "validated", anything else a portal.
# - Apple (iOS, macOS): http://captive.apple.com/hotspot-detect.html and
#   http://www.apple.com/library/test/success.html, answered by Apple with
#   this "Success" page; any other body opens the Captive Network Assistant.
# - Windows 10 and 11: the Network Connectivity Status Indicator (Microsoft's
#   "NCSI overview", learn.microsoft.com): http://www.msftconnecttest.com/
#   connecttest.txt expects "Microsoft Connect Test"; Windows 7 and 8 asked
#   http://www.msftncsi.com/ncsi.txt for "Microsoft NCSI". Windows then opens
#   http://www.msftconnecttest.com/redirect in the browser.
# - Firefox: its preferences (modules/libpref/init/all.js and
#   StaticPrefList.yaml): captivedetect.canonicalURL http://detectportal.
#   firefox.com/canonical.html, whose content is the meta refresh below, and
#   network.connectivity-service's http://detectportal.firefox.com/success.txt
#   ("success\n").
# - Linux with NetworkManager (GNOME's default, NetworkManager.conf
#   [connectivity] uri): http://nmcheck.gnome.org/check_network_status.txt,
#   "NetworkManager is online\n"; Ubuntu's http://connectivity-check.ubuntu.com/
#   is an HTTP 204.
PROBES = (
    ("/generate_204", "android", 204, None, b""),
    ("/gen_204", "android", 204, None, b""),
    ("/hotspot-detect.html", "apple", 200, "text/html",
     b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("/library/test/success.html", "apple", 200, "text/html",
     b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("/connecttest.txt", "windows", 200, "text/plain", b"Microsoft Connect Test"),
    ("/ncsi.txt", "windows", 200, "text/plain", b"Microsoft NCSI"),
    ("/redirect", "windows", 302, None, b""),  # the page Windows opens: always to the set-up page
    ("/canonical.html", "firefox", 200, "text/html",
     b'<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>'),
    ("/success.txt", "firefox", 200, "text/plain", b"success\n"),
    ("/check_network_status.txt", "linux", 200, "text/plain", b"NetworkManager is online\n"),
)


SETUP_PATH = "/setup"  # the set-up page (host/hapenny/web/static/setup.html, served by the board)


def probe_reply(path, online, address):
    """What the HTTP route answers to a request for `path` while the set-up
    AP is open: None when it is no probe; else (status, content type or
    None, body, Location or None). Not yet `online` (no network joined):
    a redirect to the set-up page at the AP's `address`, which every OS
    takes for a portal to sign in to. Online: the answer the OS expects,
    so its sign-in sheet closes by itself. Windows' /redirect always leads
    to the page."""
    row = probe(path)
    if row is None:
        return None
    if online and row[2] != 302:
        return row[2], row[3], row[4], None
    return 302, None, b"", "http://%s%s" % (address, SETUP_PATH)


def probe(path):
    """The PROBES row of a request's path (its query string ignored), or None."""
    q = path.find("?")
    if q >= 0:
        path = path[:q]
    for row in PROBES:
        if row[0] == path:
            return row
    return None

# The set-up access point's captive DNS: a responder that answers every name
# with the board, so that a phone which joins the AP looks up its
# connectivity probe's host, reaches the board and opens the set-up page by
# itself. The probes themselves are HTTP's: shove/probes.py, loaded by the
# routes for a request.
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
        # the unix port's poll takes the descriptor (given the virtual board's socket, a
        # subclass charged to the ESP-IDF model, it never finds it ready); the ESP32's takes
        # the socket itself and refuses a number (as shove/httpd.py's listener)
        p = select.poll()
        self._polled = s
        try:
            p.register(s.fileno(), select.POLLIN)
            self._polled = s.fileno()
        except (AttributeError, TypeError, ValueError, OSError):
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
            self._poll.unregister(self._polled)
        except (OSError, ValueError, KeyError):
            pass
        self.sock.close()

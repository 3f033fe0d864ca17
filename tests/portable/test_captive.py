# The set-up AP's DNS answers (shove/captive.py) and the connectivity
# probes' table (shove/probes.py), table-driven. Runs in
# both interpreters: plain asserts, bytes built by hand. The fuzzing of
# answer() is tests/test_captive_fuzz.py's, the socket's tests/test_setup_board.py's.
import gc
import sys

from shove import captive, probes

BOARD = bytes((192, 168, 4, 1))


def name(text):
    out = b""
    for label in text.split("."):
        if label:
            out += bytes((len(label),)) + label.encode()
    return out + b"\x00"


def query(host, qtype=1, qclass=1, qid=0x1234, flags=0x0100, counts=(1, 0, 0, 0), tail=b""):
    head = bytes((qid >> 8, qid & 0xFF, flags >> 8, flags & 0xFF))
    for c in counts:
        head += bytes((c >> 8, c & 0xFF))
    return head + name(host) + bytes((qtype >> 8, qtype & 0xFF, qclass >> 8, qclass & 0xFF)) + tail


def reply(q):
    out = bytearray(captive.OUT)
    n = captive.answer(q, len(q), out, BOARD)
    return bytes(out[:n])


def u16(b, i):
    return (b[i] << 8) | b[i + 1]


# (query, rcode, answers): an A question (or ANY) is the board whatever the
# name; other types get an empty answer, another class a refusal
ANSWERED = (
    (query("connectivitycheck.gstatic.com"), 0, 1),
    (query("captive.apple.com", qid=0xFFFF), 0, 1),
    (query("www.msftconnecttest.com", flags=0x0000), 0, 1),  # recursion not desired
    (query("a"), 0, 1),
    (query(""), 0, 1),  # the root itself
    (query("example.org", qtype=255), 0, 1),  # ANY: the address
    (query("example.org", qtype=28), 0, 0),  # AAAA: no data, so the phone uses IPv4
    (query("example.org", qtype=65), 0, 0),  # HTTPS (SVCB)
    (query("example.org", qtype=16), 0, 0),  # TXT
    (query("example.org", qclass=3), 5, 0),  # CHAOS: refused
    # an EDNS OPT record after the question: answered, not echoed
    (query("example.org", counts=(1, 0, 0, 1), tail=b"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00"), 0, 1),
    (query(".".join(["x" * 63] * 3) + "." + "y" * 61), 0, 1),  # a name of 255 bytes: the longest
)


def test_every_a_question_is_the_board_and_other_types_are_empty():
    for q, rcode, answers in ANSWERED:
        r = reply(q)
        end = len(q) - (11 if u16(q, 10) else 0)  # the question's end (the OPT record left out)
        assert r[:2] == q[:2], q  # the same id
        assert r[2] & 0x80 and r[2] & 0x04, q  # a response, authoritative
        assert r[2] & 0x01 == q[2] & 0x01, q  # recursion desired as asked
        assert r[3] & 0x0F == rcode, q
        assert (u16(r, 4), u16(r, 6), u16(r, 8), u16(r, 10)) == (1, answers, 0, 0), q
        assert r[12:end] == q[12:end], q  # the question as asked
        if answers:
            assert len(r) == end + 16, q
            a = r[end:]
            assert a[:2] == b"\xc0\x0c"  # the question's name, pointed to
            assert (u16(a, 2), u16(a, 4), u16(a, 8), u16(a, 10)) == (1, 1, captive.TTL_S, 4)
            assert a[12:] == BOARD
        else:
            assert len(r) == end, q


def _long_label():
    return query("x" * 64)


def _long_name():
    return query(".".join(["x" * 63] * 4))  # 257 bytes with its root


DROPPED = (
    b"",
    b"\x12\x34",
    query("a")[:12],  # a header alone
    query("example.org")[:-1],  # cut in QCLASS
    query("example.org")[:20],  # cut inside the name
    query("example.org", flags=0x8180),  # a response
    query("example.org", flags=0x2800),  # opcode UPDATE
    query("example.org", flags=0x1000),  # opcode STATUS
    query("example.org", counts=(0, 0, 0, 0)),
    query("example.org", counts=(2, 0, 0, 0)),
    query("example.org", counts=(1, 1, 0, 0)),  # an answer in a query
    query("example.org", counts=(1, 0, 1, 0)),
    query("example.org", counts=(0x101, 0, 0, 0)),
    b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c\x00\x01\x00\x01",  # a pointer to itself
    b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x40" + b"x" * 64 + b"\x00\x00\x01\x00\x01",  # label type 01
    _long_label(),
    _long_name(),
    query("example.org") + b"\x00" * 500,  # more than 512 bytes
)


def test_malformed_packets_get_no_reply():
    for q in DROPPED:
        out = bytearray(b"\xee" * captive.OUT)
        assert captive.answer(q, len(q), out, BOARD) == 0, q


def test_only_the_given_length_is_read():
    q = query("example.org")
    buf = bytearray(512)
    buf[:len(q)] = q
    out = bytearray(captive.OUT)
    assert captive.answer(buf, len(q), out, BOARD) == len(q) + 16
    assert captive.answer(buf, len(q) - 1, out, BOARD) == 0


def test_answering_allocates_nothing():
    if sys.implementation.name != "micropython":
        return  # CPython's ints and range are objects: the count means nothing there
    qs = [query("connectivitycheck.gstatic.com"), query("example.org", qtype=28), _long_name(), b"\x00" * 40]
    out = bytearray(captive.OUT)
    captive.answer(qs[0], len(qs[0]), out, BOARD)
    gc.collect()
    before = gc.mem_alloc()
    for q in qs:
        captive.answer(q, len(q), out, BOARD)
    assert gc.mem_alloc() == before


def test_addresses():
    assert captive.ip4("192.168.4.1") == BOARD
    for bad in ("192.168.4", "192.168.4.256", "a.b.c.d", "1.2.3.4.5"):
        try:
            captive.ip4(bad)
        except ValueError:
            continue
        assert False, bad


def test_probes_are_found_by_path():
    row = probes.probe("/generate_204")
    assert row[1:3] == ("android", 204) and row[4] == b""
    assert probes.probe("/hotspot-detect.html?x=1")[4].endswith(b"Success</BODY></HTML>")
    assert probes.probe("/connecttest.txt")[4] == b"Microsoft Connect Test"
    assert probes.probe("/") is None and probes.probe("/generate_2044") is None
    paths = [p[0] for p in probes.PROBES]
    assert len(paths) == len(set(paths))
    for path, who, status, ctype, body in probes.PROBES:
        assert path.startswith("/") and status in (200, 204, 302) and isinstance(body, bytes)
        assert (status == 200) == (ctype is not None)


def test_a_probe_is_sent_to_the_set_up_page_until_the_board_is_online():
    assert probes.probe_reply("/generate_204", False, "192.168.4.1") == (302, None, b"",
                                                                         "http://192.168.4.1/setup")
    assert probes.probe_reply("/generate_204", True, "192.168.4.1") == (204, None, b"", None)
    assert probes.probe_reply("/connecttest.txt?x", True, "192.168.4.1") == (200, "text/plain",
                                                                              b"Microsoft Connect Test", None)
    assert probes.probe_reply("/redirect", True, "192.168.4.1")[3] == "http://192.168.4.1/setup"
    assert probes.probe_reply("/setup", False, "192.168.4.1") is None  # the page itself is no probe
    for row in probes.PROBES:
        st, ctype, body, where = probes.probe_reply(row[0], False, "10.0.0.1")
        assert (st, where) == (302, "http://10.0.0.1/setup")

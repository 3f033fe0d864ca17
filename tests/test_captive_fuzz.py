"""The set-up AP's DNS answers (firmware/shove/captive.py) under fuzzed
packets: random bytes, real queries, and real queries damaged. Whatever
comes, answer() returns no reply or a well-formed one that points at the
board, never raises, and answers the same inside the real MicroPython
interpreter as in CPython (each example goes through both)."""
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mphelp import FIRMWARE, mp_env
from shove import captive
from strategies import examples

pytestmark = pytest.mark.micropython

BOARD = bytes((192, 168, 4, 1))

# the MicroPython side: a packet's hex a line in, its reply's hex (or "-") a line out
WORKER = """
import sys
from binascii import hexlify, unhexlify
from shove import captive
out = bytearray(captive.OUT)
ip = bytes((192, 168, 4, 1))
while True:
    line = sys.stdin.readline()
    if not line:
        break
    q = unhexlify(line.strip())
    try:
        n = captive.answer(q, len(q), out, ip)
        print(hexlify(out[:n]).decode() if n else "-")
    except Exception as e:
        print("crash " + repr(e))
"""


@pytest.fixture(scope="module")
def mp(micropython):
    proc = subprocess.Popen([micropython, "-c", WORKER], env=mp_env(FIRMWARE), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)

    def run(q):
        proc.stdin.write(q.hex() + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline().strip()
        assert line, "the MicroPython worker died"
        assert not line.startswith("crash"), line
        return None if line == "-" else bytes.fromhex(line)

    yield run
    proc.stdin.close()
    proc.wait(timeout=10)


def answer(q):
    out = bytearray(b"\xee" * captive.OUT)
    n = captive.answer(q, len(q), out, BOARD)
    assert 0 <= n <= captive.OUT
    return bytes(out[:n]) if n else None


def check_reply(q, r):
    """A reply as RFC 1035 lays it out, read independently of captive.py."""
    assert r[:2] == q[:2] and r[2] & 0x80 and not r[2] & 0x78  # same id, a response, opcode QUERY
    qd, an, ns, ar = (int.from_bytes(r[i:i + 2], "big") for i in (4, 6, 8, 10))
    assert (qd, ns, ar) == (1, 0, 0) and an in (0, 1)
    i = 12
    labels = []
    while r[i]:
        assert r[i] <= 63
        labels.append(r[i + 1:i + 1 + r[i]])
        i += 1 + r[i]
    assert i - 12 + 1 <= 255
    i += 1
    qtype, qclass = int.from_bytes(r[i:i + 2], "big"), int.from_bytes(r[i + 2:i + 4], "big")
    i += 4
    assert r[12:i] == q[12:i]  # the question echoed
    if an:
        assert qtype in (1, 255) and qclass == 1 and r[3] & 0x0F == 0
        assert r[i:] == b"\xc0\x0c\x00\x01\x00\x01" + captive.TTL_S.to_bytes(4, "big") + b"\x00\x04" + BOARD
    else:
        assert len(r) == i and r[3] & 0x0F == (0 if qclass == 1 else 5)
    return labels, qtype


LABEL = st.binary(min_size=1, max_size=63)


@st.composite
def queries(draw):
    labels = draw(st.lists(LABEL, max_size=6).filter(lambda ls: sum(len(x) + 1 for x in ls) + 1 <= 255))
    head = draw(st.binary(min_size=2, max_size=2)) + bytes((draw(st.sampled_from([0, 1])), 0)) + b"\x00\x01" + bytes(6)
    qtype = draw(st.sampled_from([1, 28, 255, 65, 16, 12, 0, 0xFFFF]))
    qclass = draw(st.sampled_from([1, 1, 1, 3, 255, 0]))
    name = b"".join(bytes((len(x),)) + x for x in labels) + b"\x00"
    return head + name + qtype.to_bytes(2, "big") + qclass.to_bytes(2, "big"), labels, qtype


@st.composite
def damaged(draw):
    q = bytearray(draw(queries())[0])
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "cut", "grow", "insert"]))
        if how == "flip" and q:
            q[draw(st.integers(0, len(q) - 1))] = draw(st.integers(0, 255))
        elif how == "cut":
            del q[draw(st.integers(0, len(q))):]
        elif how == "grow":
            q += draw(st.binary(max_size=600))
        elif how == "insert":
            at = draw(st.integers(0, len(q)))
            q[at:at] = draw(st.binary(min_size=1, max_size=8))
    return bytes(q)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600))
def test_random_bytes(mp, q):
    r = answer(q)
    if r is not None:
        check_reply(q, r)
    assert mp(q) == r


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries())
def test_every_real_query_is_answered(mp, made):
    q, labels, qtype = made
    r = answer(q)
    assert r is not None
    assert check_reply(q, r) == (labels, qtype)
    assert mp(q) == r


@settings(max_examples=examples(900), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_queries(mp, q):
    r = answer(q)
    if r is not None:
        check_reply(q, r)
    assert mp(q) == r


def test_the_socket_answers_over_loopback_in_cpython_too():
    """Dns on a real UDP socket (CPython's poll() where MicroPython has ipoll()): one datagram a step."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    d = captive.Dns("192.168.4.1", port, "127.0.0.1")
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.settimeout(10)
    try:
        assert not d.step()  # nothing waits: no wait either
        c.sendto(b"\x00" * 3, ("127.0.0.1", port))
        q = bytes.fromhex("beef01000001000000000000") + b"\x03abc\x00\x00\x01\x00\x01"
        c.sendto(q, ("127.0.0.1", port))
        served = 0
        for _ in range(100000):  # a bound, not a wait: loopback delivers at once
            served += d.step()
            if served == 2:
                break
        assert (served, d.dropped, d.answered) == (2, 1, 1)
        r = c.recv(600)
        assert r == answer(q) and r[:2] == b"\xbe\xef"
    finally:
        c.close()
        d.close()
    with pytest.raises(OSError):
        d.sock.recvfrom(10)  # closed

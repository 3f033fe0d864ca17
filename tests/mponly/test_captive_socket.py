# MicroPython only: the set-up AP's DNS socket (shove/captive.py Dns) in the
# unix port, over a real UDP socket on 127.0.0.1. A step with nothing waiting
# touches no heap (the loop steps it in every network slice); a query is
# answered, a malformed one dropped without a reply.
import gc
import socket

from shove import captive


def _dns():
    for port in range(47153, 47353):  # this port has no getsockname: the first free one
        try:
            return captive.Dns("192.168.4.1", port, "127.0.0.1"), port
        except OSError:
            continue
    raise AssertionError("no free UDP port")


def _query(qid):
    return bytes((qid >> 8, qid & 0xFF, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3)) + b"abc" + b"\x00\x00\x01\x00\x01"


def _served(d):
    for _ in range(10000):  # loopback delivers at once; a bound, not a wait
        if d.step():
            return True
    return False


def test_an_idle_step_allocates_nothing():
    d, port = _dns()
    try:
        d.step()
        gc.collect()
        gc.disable()
        try:
            before = gc.mem_alloc()
            for _ in range(1000):
                d.step()
            used = gc.mem_alloc() - before
        finally:
            gc.enable()
        assert used == 0, used
    finally:
        d.close()


def test_a_query_is_answered_and_junk_dropped():
    d, port = _dns()
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        to = socket.getaddrinfo("127.0.0.1", port)[0][-1]
        c.sendto(b"\xff" * 5, to)
        assert _served(d) and d.dropped == 1 and d.answered == 0
        c.sendto(_query(0x1234), to)
        assert _served(d) and d.answered == 1
        r = c.recv(600)  # the first datagram back answers the query: the junk got none
        assert r[:2] == b"\x12\x34" and r[-4:] == bytes((192, 168, 4, 1))
        assert not d.step()  # nothing more waits
    finally:
        c.close()
        d.close()

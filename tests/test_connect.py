"""connect() on a serial port whose board sits at the MicroPython REPL (left
there by mpremote): the REPL's prompt ends the hello at once, without
waiting out its timeout, and the soft reset that follows starts main.py."""
import json

import pytest

from hapenny import PROTOCOL, connect

BOOT = b'{"ev":"boot","restored":false,"board":"generic-8x8","version":"0.1.0","protocol":%d}\r\n' % PROTOCOL


class Repl:
    """The board's side of the port, as the REPL and then main.py answer: the
    friendly REPL echoes a line and prints what it evaluates to, then its
    prompt; the raw REPL takes a line silently. Every read that finds nothing
    to give is kept (on a port, it waits out the read's timeout)."""

    def __init__(self, raw=False):
        self.raw = raw
        self.out = bytearray(b"raw REPL; CTRL-B to exit\r\n>" if raw else b">>> ")
        self.running = False  # main.py, after the soft reset
        self.timeout = None
        self.waits = []  # (main.py running, the read's timeout) of each read that found nothing
        self.closed = False

    @property
    def in_waiting(self):
        return len(self.out)

    def read(self, n=1):
        if not self.out:
            self.waits.append((self.running, self.timeout))
            return b""
        got = bytes(self.out[:n])
        del self.out[:n]
        return got

    def write(self, data):
        if self.running:
            req = json.loads(data)
            self.out += json.dumps({"ok": True, "id": req["id"], "protocol": PROTOCOL, "board": "generic-8x8"}).encode()
            self.out += b"\r\n"
        elif data == b"\r\x02\x04":  # (to the friendly REPL, then a soft reset)
            self.running = True
            self.out += b"\r\n>>> \r\nMPY: soft reboot\r\n" + BOOT
        elif not self.raw:
            line = data.decode().strip()
            self.out += line.encode() + b"\r\n" + repr(json.loads(line)).encode() + b"\r\n>>> "

    def flush(self):
        pass

    def close(self):
        self.closed = True


@pytest.mark.parametrize("raw", [False, True], ids=["friendly", "raw"])
def test_a_board_at_the_repl_is_soft_reset_without_waiting_out_the_hello(monkeypatch, raw):
    port = Repl(raw)
    monkeypatch.setattr(connect, "open_serial", lambda p: port)
    link, info, ser = connect.connect("/dev/ttyUSB0", timeout=3.0)
    assert ser is port and info["protocol"] == PROTOCOL and port.running
    assert [w for w in port.waits if not w[0]] == []  # no read waited on the REPL for a reply


def test_a_board_that_never_answers_is_still_given_the_hellos_time(monkeypatch):
    port = Repl()
    port.out = bytearray(b"ets Jul 29 2019 12:21:46\r\n")  # boot noise, then nothing: no prompt, no reply
    port.write = lambda data: None
    monkeypatch.setattr(connect, "open_serial", lambda p: port)
    with pytest.raises(connect.PortError, match="does not answer"):
        connect.connect("/dev/ttyUSB0", timeout=0.2)
    assert port.waits and port.closed


class Starting(Repl):
    """A board starting as the port opens (after a reset or a power-up): its
    boot event comes after the hello went, which it may have read (`kept`)
    or not; from then on main.py answers every line."""

    def __init__(self, kept):
        super().__init__()
        self.out = bytearray(b"ets Jul 29 2019 12:21:46\r\n")
        self.kept = kept

    def write(self, data):
        if not self.running:
            self.running = True
            self.out += BOOT
            if not self.kept:
                return
        super().write(data)


@pytest.mark.parametrize("kept", [False, True], ids=["hello_lost", "hello_read"])
def test_a_board_that_starts_as_the_hello_goes_is_asked_again_at_its_boot(monkeypatch, kept):
    port = Starting(kept)
    monkeypatch.setattr(connect, "open_serial", lambda p: port)
    link, info, ser = connect.connect("/dev/ttyUSB0", timeout=3.0)
    assert info["protocol"] == PROTOCOL
    assert port.waits == []  # no read waited for a reply that could not come
    if not kept:  # asked again: the start it gave up at is not news for a later wait
        assert not [ev for ev in link.events if ev["ev"] == "boot"]

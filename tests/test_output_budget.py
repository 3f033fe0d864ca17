"""The console's output within its budget on the ESP32-heap virtual board
(timing="esp32": the chip's heap, the UART's 115200 baud): computer sides
throwing with no pause (`cpu_ms` 0) while the host polls the state and asks
for hints make output faster than the UART sends it. The queue's capacity
(shove/pacing.py) makes the game wait for the reader instead of running the
heap out, and every line the host reads is a whole JSON object.

`make test` plays SHORT_DARTS darts a game size (the heap ran out after
about 18 before the queue had a capacity); `make soak` (HAPENNY_SOAK=1)
plays 1,000. Eight sides got a `no_memory` for a `state` or a `new` in
about one 1,000-dart run in ten while a line carrying a state was joined
whole: it is queued as its chunks now (tests/mponly/test_fragments.py
builds one in a heap of small free blocks)."""
import json
import os
import threading
import time

import pytest

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard

SHORT_DARTS = 80
DARTS = 1000 if os.environ.get("HAPENNY_SOAK") else SHORT_DARTS
POLL_S = 0.1
# the burst the heap once ran out in: level 6 on 15 to 20 and the bull,
# one mark to close, gifts to all
BURST_RULES = {"beds": [15, 16, 17, 18, 19, 20, 25], "marks": 1, "gift": "all"}


class Reader:
    """Every line the board sends, read on a thread of its own (a host that
    stops reading makes the simulator drop output, as an unread port does),
    each parsed as it comes."""

    def __init__(self, ser):
        self.ser = ser
        self.bad = []  # lines that are not one whole JSON object
        self.errors = []  # `error` events, and replies refused for memory
        self.darts = 0
        self.wins = 0
        self.replies = {}
        self.order = []  # what each line was: an event's name, or a reply's id
        self.lines = 0
        self._buf = b""
        self._stop = False
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        ser = self.ser
        ser.timeout = 0.05
        while not self._stop:
            data = ser.read(max(1, ser.in_waiting))
            if not data:
                continue
            self._buf += data
            while b"\n" in self._buf:
                raw, self._buf = self._buf.split(b"\n", 1)
                self._line(raw.rstrip(b"\r"))

    def _line(self, raw):
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError:
            obj = None
        with self._lock:
            self.lines += 1
            if not isinstance(obj, dict) or not ("ev" in obj or "ok" in obj):
                self.bad.append(raw)
                return
            self.order.append(obj.get("ev") or obj.get("id"))
            if obj.get("ev") == "dart":
                self.darts += 1
            elif obj.get("ev") == "win":
                self.wins += 1
            elif obj.get("ev") == "error" or obj.get("error") == "no_memory":
                self.errors.append(obj)
            if "id" in obj:
                self.replies[obj["id"]] = obj

    def reply(self, rid, timeout=30.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if rid in self.replies:
                    return self.replies.pop(rid)
            time.sleep(0.01)
        raise AssertionError("no reply to request %r" % rid)

    def stop(self):
        self._stop = True
        self.thread.join(5)


@pytest.mark.parametrize("sides", [3, 8])
def test_computer_sides_at_full_speed_wait_for_the_reader_and_never_run_the_heap_out(sides):
    vb = VirtualBoard(timing="esp32").start()
    link, info, ser = connect(vb.port)
    rd = Reader(ser)
    rid = [0]

    def send(cmd, **fields):
        rid[0] += 1
        ser.write((json.dumps(dict(fields, cmd=cmd, id=rid[0])) + "\n").encode())
        return rid[0]

    def new_game():
        return send("new", players=["cpu:6"] * sides, rules=BURST_RULES, seed=1000 + rd.wins)

    try:
        assert rd.reply(send("config", set={"cpu_ms": 0}))["ok"]
        rep = rd.reply(new_game())
        assert rep["ok"], rep
        games = 0
        polls = 0
        end = time.monotonic() + 600  # a bound for a stuck board only
        while rd.darts < DARTS:
            assert time.monotonic() < end, "only %d darts" % rd.darts
            time.sleep(POLL_S)
            rep = rd.reply(send("state"))
            polls += 1
            assert rep["ok"], rep
            st = rep["state"]
            if st["phase"] == "over":  # the next game, as a host would start it
                games += 1
                rep = rd.reply(new_game())
                assert rep["ok"], rep
            elif polls % 2:  # hints on: the coach's advice for the thrower, every other poll
                rep = rd.reply(send("hint"))
                assert rep["ok"] or rep["error"] in ("visit_over", "game_over"), rep
        stats = rd.reply(send("stats"))["stats"]
    finally:
        rd.stop()
        ser.close()
        vb.stop()
    assert not rd.errors, json.dumps(rd.errors[:3])
    assert stats["errors"] == 0, stats
    assert games >= 1  # games were won and new ones begun: the burst's every stage was played
    # every line the host read was one whole protocol object: none cut by another or by a report
    assert not rd.bad, rd.bad[:3]
    assert rd.lines > rd.darts


def test_an_error_raised_with_a_line_half_sent_is_reported_after_it_in_a_line_of_its_own():
    # The loop's catch-all reports an unexpected error as an `error` event;
    # raised while a long reply is being paced out, the report goes out
    # after the reply's last byte, never into the middle of it.
    vb = VirtualBoard(timing="esp32").start()
    link, info, ser = connect(vb.port)
    rd = None
    try:
        link.request("new", players=["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"])
        link.drain()
        boots = vb.boots
        rd = Reader(ser)
        vb.crash_mid_line()  # raised in the next service slice that finds a line partly sent
        rid = 7001
        ser.write(b'{"cmd":"state","id":7001}\n')  # about 1 KB: some 90 ms at 115200 baud
        rep = rd.reply(rid)
        end = time.monotonic() + 30
        while not rd.errors:
            assert time.monotonic() < end, "no error report"
            time.sleep(0.05)
        after = rd.reply(rd_send(ser, rd, "state"))  # the loop carried on: no reset
    finally:
        if rd:
            rd.stop()
        ser.close()
        vb.stop()
    assert rep["ok"] and len(rep["state"]["sides"]) == 8
    err, = rd.errors
    assert err["type"] == "RuntimeError" and "injected fault" in err["msg"] and err["errors"] == 1
    assert any("service" in ln for ln in err["trace"]), err  # the traceback's innermost lines
    assert not rd.bad, rd.bad[:3]  # the reply and the report each whole, nothing else on the line
    assert rd.order[:2] == [rid, "error"]  # raised while the reply went out: reported after its end
    assert after["ok"] and after["state"] == rep["state"] and vb.boots == boots


def rd_send(ser, rd, cmd):
    rid = 7002 + rd.lines
    ser.write((json.dumps({"cmd": cmd, "id": rid}) + "\n").encode())
    return rid

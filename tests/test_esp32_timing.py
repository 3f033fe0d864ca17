"""The virtual board's ESP32 timing model (docs/virtual-board.md): the
board's clock charges what the chip would spend and skips only what the
operating system takes."""
import json
import os
import signal
import time

import pytest

from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard


@pytest.fixture(scope="module")
def esp32_board():
    vb = VirtualBoard(timing="esp32").start()
    link, info, ser = connect(vb.port)
    yield vb, link
    ser.close()
    vb.stop()


def test_the_os_taking_the_cpu_away_does_not_move_the_boards_clock(esp32_board):
    vb, link = esp32_board
    before = vb.stats()["board_us"]
    os.kill(vb.proc.pid, signal.SIGSTOP)  # the OS runs something else for a second
    time.sleep(1.0)
    os.kill(vb.proc.pid, signal.SIGCONT)
    after = vb.stats()["board_us"]
    # a second of wall time, at the chip's pace, would be 100 s of board time;
    # the two control round trips themselves cost the board well under 0.5 s
    assert after - before < 500000, after - before


def test_an_idle_board_waits_on_the_wall_clock_instead_of_spinning(esp32_board):
    vb, link = esp32_board
    s0, t0 = vb.stats(), time.monotonic()
    time.sleep(0.5)
    s1, t1 = vb.stats(), time.monotonic()
    # it waited for input rather than scanning an idle matrix, and a wait
    # counts on its clock as the time it lasted (the chip would have passed
    # it spinning), not at the chip's pace
    assert s1["idles"] > s0["idles"]
    waited = s1["idle_us"] - s0["idle_us"]
    assert waited > 0.25 * (t1 - t0) * 1e6
    assert s1["board_us"] - s0["board_us"] >= waited


def test_a_busy_board_runs_ahead_of_the_wall_clock_at_the_chips_pace(esp32_board):
    vb, link = esp32_board
    # a closure scheduled far ahead: the board may not idle, it scans all the time
    vb.pulses([(0, 0, 300 * 10**6, 1000)])  # under 2**29: ticks_diff stays positive
    s0, t0 = vb.stats(), time.monotonic()
    while time.monotonic() - t0 < 0.5:
        pass
    s1, t1 = vb.stats(), time.monotonic()
    # the firmware spins its scan loop all the time: at ESP32 speed that is
    # many times the wall time it took here (not exactly: the simulator's own
    # work is charged at the chip's cost, not its CPU time)
    assert (s1["board_us"] - s0["board_us"]) > 5 * (t1 - t0) * 1e6


def test_replies_go_out_at_the_uarts_pace_without_ever_blocking_the_loop(esp32_board):
    vb, link = esp32_board
    link.request("new", players=["Ann", "Bob", "Cid", "Dee"])
    s0 = vb.stats()
    rep = link.request("state")
    s1 = vb.stats()
    size = len(json.dumps(rep, separators=(",", ":"), ensure_ascii=False).encode()) + 1
    assert size > 600
    assert s1["sent_us"] - s0["board_us"] >= (size - 128) * 87  # no faster than the wire
    # written as the FIFO drains, so the firmware never waited on the UART
    # (a blocking write of it would have waited some 40 ms)
    assert s1["uart_blocked_us"] == s0["uart_blocked_us"] == 0

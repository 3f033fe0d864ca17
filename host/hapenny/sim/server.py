"""`hapenny sim`: a virtual board as a process. Prints `PORT <path>` first,
then `CONTROL <socket>` (with --wifi then `WEB <url>`: the board's own
page, once it has joined its virtual network), and serves the control API on that Unix socket
(one JSON request a line) until Ctrl-C or SIGTERM."""
import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import threading

from hapenny.connect import register_sim
from hapenny.sim.board import SimError, VirtualBoard


def handle(vb, req):
    op = req.get("op")
    if op == "close":
        vb.close(req["row"], req["col"], ms=req.get("ms"), us=req.get("us"), delay_us=req.get("delay_us", 0))
        return {"ok": True}
    if op == "pulses":
        vb.pulses(req["pulses"])
        return {"ok": True}
    if op == "button":
        vb.button(req["name"], req.get("ms", 100))
        return {"ok": True}
    if op == "pixels":
        return {"ok": True, "pixels": vb.pixels()}
    if op == "power_cut":
        vb.power_cut(req.get("off_s", 0.0))
        return {"ok": True}
    if op == "stats":
        return {"ok": True, "stats": vb.stats(), "boots": vb.boots}
    if op == "info":
        return {"ok": True, "port": vb.port, "board_dir": str(vb.board_dir), "boots": vb.boots}
    return {"ok": False, "error": "unknown op %r" % op}


def _serve_client(vb, conn):
    f = conn.makefile("rwb")
    with conn:
        for line in f:
            try:
                rep = handle(vb, json.loads(line))
            except (SimError, KeyError, ValueError, TypeError) as e:
                rep = {"ok": False, "error": str(e)}
            f.write((json.dumps(rep) + "\n").encode())
            f.flush()


@contextlib.contextmanager
def _board_with_a_game(board_dir, profile, players, out):
    """A virtual board (registered for `hapenny ports`) and a link to it,
    with a game to play if its flash held none; both gone on leaving."""
    from hapenny.connect import connect

    vb = VirtualBoard(board_dir=board_dir, profile=profile, refresh=True).start()
    out.write("PORT %s\n" % vb.port)
    out.flush()
    reg = register_sim(vb.port, "")
    try:
        link, info, ser = connect(vb.port, timeout=10)
        if link.request("state").get("state") is None:
            link.request("new", players=players or ["Home", "Away"])
        yield vb, link, ser
    finally:
        reg.unlink()
        vb.stop()


def play_on_sim(board_dir=None, profile=None, players=None, out=sys.stdout):
    """`make sim`: a virtual board and the live scoreboard on it, in one go."""
    from hapenny.scoreboard import play

    with _board_with_a_game(board_dir, profile, players, out) as (vb, link, ser):
        return play(link)


def web_on_sim(board_dir=None, profile=None, listen="127.0.0.1:8080", out=sys.stdout):
    """`make web`: a virtual board and the web scoreboard on it, in one go."""
    from hapenny.web.server import serve as serve_web

    with _board_with_a_game(board_dir, profile, None, out) as (vb, link, ser):
        ser.close()  # the web server owns the port from here
        serve_web(vb.port, listen, out=lambda s: (out.write(s + "\n"), out.flush()))


# The virtual network `hapenny sim --wifi` puts the board on: its own
# (the runtime's `network` model), the address this machine's
SIM_NETWORK = "hapenny-sim"
SIM_KEY = "virtual-board"
SIM_TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 1000}
JOIN_S = 30.0


def join_wifi(vb, timeout=JOIN_S):
    """Put the virtual board on its virtual network (through its serial
    port, as `hapenny wifi` does) and wait until its web server listens:
    the page's address, with the pairing code in the fragment (the person
    at the simulator is the board's owner)."""
    import time

    from hapenny.connect import connect
    from hapenny.web.server import page_url

    vb.air({SIM_NETWORK: {"key": SIM_KEY, "rssi": -50, "addr": "127.0.0.1"}}, SIM_TIMES)
    link, _, ser = connect(vb.port, timeout=10)
    try:
        w = link.request("wifi")["wifi"]
        if w["state"] == "off" or w["ssid"] != SIM_NETWORK:
            w = link.request("wifi", set={"ssid": SIM_NETWORK, "key": SIM_KEY})["wifi"]
        end = time.monotonic() + timeout
        while w["state"] != "joined" or link.request("stats")["stats"].get("web") is None:
            if time.monotonic() > end:
                raise SimError("the virtual board did not join its network (%s)" % w.get("reason"))
            time.sleep(0.2)
            w = link.request("wifi")["wifi"]
        return page_url("127.0.0.1", vb.web_port, w["code"])
    finally:
        ser.close()


def serve(board_dir=None, profile=None, control=None, fast=False, out=sys.stdout, wifi=False):
    """`wifi`: the board joins its virtual network and serves its own page (a `WEB <url>` line)."""
    vb = VirtualBoard(board_dir=board_dir, profile=profile, fast=fast).start()
    control = control or os.path.join(tempfile.gettempdir(), "hapenny-sim-%d.sock" % os.getpid())
    if os.path.exists(control):
        os.unlink(control)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(control)
    srv.listen(4)
    reg = register_sim(vb.port, control)
    out.write("PORT %s\n" % vb.port)
    out.write("CONTROL %s\n" % control)
    out.flush()
    if wifi:
        try:
            out.write("WEB %s\n" % join_wifi(vb))
        except Exception:
            srv.close()
            reg.unlink()
            vb.stop()
            raise
        out.flush()
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def accept():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=_serve_client, args=(vb, conn), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        srv.close()
        for p in (control, str(reg)):
            try:
                os.unlink(p)
            except OSError:
                pass
        vb.stop()
    return 0

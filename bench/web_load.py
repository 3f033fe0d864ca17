"""The board's own web server under load, on the ESP32 timing model (issue
39: never a missed dart). The board joins its virtual network and serves
its page on a real loopback port; from this process, on real sockets:

- a page watching: its stream (/api/events) open, read as it comes;
- a page reloading every RELOAD_S: GET /, its static files, the snapshot,
  a new stream (the old one closed);
- a hostile client: garbage request lines, heads too long, bodies too big,
  slow heads (a byte at a time, then given up), connects that never send a
  request and reconnects, one after another without a pause.

Or, as issue 40 asks (NET): the host's own link to a board on the network
(hapenny/netlink.py) in play:

- `hapenny play --port http://... --code ...`: its event stream, its state
  at the start and the LEDs asked after each dart (hapenny/scoreboard.py);
- `hapenny state --port http://... --code ...` every POLL_S: each a new
  link (its hello, then `state`), as the command runs.

Meanwhile, as bench/esp32_model.py measures the board alone: the loop's
period, 3,000 contacts of 0.5 ms one at a time, contacts of 1 ms, and
visits of three darts 250 ms apart. The cost of a service slice is priced
on the model by the longest unread stretch of the matrix in each window
between two looks (the server reads the matrix between two sockets, so a
stretch holds at most one socket's piece of work and the slice around it).

measure(quick=False, clients=WEB) -> dict; `python bench/web_load.py
[--quick] [--net]` prints it (make bench-web records both loads:
bench/web_record.py)."""
import contextlib
import io
import json
import os
import random
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "bench"))

from hapenny.connect import PortError, connect  # noqa: E402
from hapenny.link import LinkError  # noqa: E402
from hapenny.scoreboard import Scoreboard  # noqa: E402
from hapenny.sim.board import VirtualBoard  # noqa: E402
from hapenny.sim.pulses import percentile  # noqa: E402

import esp32_model  # noqa: E402

KEY = "correct-horse-battery"
HOME = {"home": {"key": KEY, "rssi": -57, "addr": "127.0.0.1"}}
TIMES = {"join_ms": 200, "refuse_ms": 200, "scan_ms": 200, "beacon_ms": 2000}
# The clients' periods are on the board's clock, as a page or a poll comes to a chip: the model's clock
# runs about 1 and 7.5 times the wall's (idle; reading the matrix for a contact due), more in bytecode,
# so at 3 s of the wall's a page reloaded about every 20 s of the board's, and a 1 s poll came every 7 s
RELOAD_S = 3.0  # the reloading page's period (the board's clock)
HALF_MS = 3000  # 0.5 ms contacts: none missed in 3,000 bounds the rate at 0.1 %
ONE_MS = 300
VISITS = 40  # of three darts 250 ms apart
APART_US = 250000
LOOP_WINDOWS = 5
PAGE = ("/", "/static/app.js", "/static/style.css", "/api/snapshot")
POLL_S = 1.0  # the state poll's period (the board's clock)
WEB = ("watcher", "reloader", "hostile")  # issue 39's load
NET = ("play", "state_poll")  # issue 40's: the host's commands over the network
# what each client counts (with "errors", every client's)
COUNTS = {"watcher": ("watch_events", "watch_streams"), "reloader": ("reloads", "files", "reload_streams", "refused"),
          "hostile": ("hostile", "hostile_answered"), "play": ("plays", "play_events", "play_leds", "play_lost"),
          "state_poll": ("polls", "poll_refused")}


class Counted(Scoreboard):
    """`hapenny play`'s scoreboard as it is, its events and LED refreshes counted."""

    def __init__(self, link, load, out, inp):
        super().__init__(link, out, inp)
        self.load = load

    def events(self):
        n = len(self.link.events)
        changed = super().events()
        self.load.count("play_events", n)
        return changed

    def refresh_leds(self):
        super().refresh_leds()
        self.load.count("play_leds")


class Load:
    """The clients, each a thread of this process, until stop(). `code`:
    the board's pairing code (the network clients' --code)."""

    def __init__(self, port, host, clients=WEB, code=None, vb=None):
        self.port, self.host, self.code, self.vb = port, host, code, vb
        self.url = "http://%s" % host
        self.halt = threading.Event()
        self.n = dict.fromkeys([k for c in clients for k in COUNTS[c]] + ["errors"], 0)
        self.keys = None  # the play session's keyboard: a pipe, "q" at stop()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=f, daemon=True) for f in [getattr(self, c) for c in clients]]

    def board_s(self):
        """The board's clock in seconds (an empty pattern of pulses: its instant, nothing else touched;
        `stats` would take the stretches' maxima from their measure). The wall's without a board."""
        return time.monotonic() if self.vb is None else self.vb.pulses([]) / 1e6

    def until_board(self, t, each=None):
        """Until the board's clock reaches t (seconds), `each()` meanwhile (a stream's read, ~20 ms)."""
        while not self.halt.is_set() and self.board_s() < t:
            if each is None or each() is False:
                self.halt.wait(0.02)

    def count(self, k, d=1):
        with self.lock:
            self.n[k] += d

    def sock(self, timeout=10.0):
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def get(self, path):
        """One GET on its own connection: the status (0: closed without an answer)."""
        with self.sock() as s:
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: gzip\r\n\r\n" % (path, self.host)).encode())
            data = b""
            while True:
                got = s.recv(8192)
                if not got:
                    break
                data += got
            return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0

    def open_stream(self):
        s = self.sock()
        s.sendall(("GET /api/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n" % self.host).encode())
        return s

    def watcher(self):
        """A page that stays: its stream read to the end, opened again if it ends."""
        while not self.halt.is_set():
            try:
                s = self.open_stream()
                self.count("watch_streams")
                s.settimeout(0.5)
                with s:
                    while not self.halt.is_set():
                        try:
                            got = s.recv(4096)
                        except socket.timeout:
                            continue
                        if not got:
                            break
                        self.count("watch_events", got.count(b"\n\n"))
            except OSError:
                self.count("errors")
                self.halt.wait(0.5)

    def reloader(self):
        """A page reloaded every RELOAD_S: its files, then a new stream read until the next reload."""
        old = None
        while not self.halt.is_set():
            t0 = self.board_s()
            if old is not None:
                old.close()
                old = None
            try:
                for p in PAGE:
                    st = self.get(p)
                    self.count("files" if st == 200 else "refused")
                old = self.open_stream()
                self.count("reload_streams")
                self.count("reloads")
                old.settimeout(0.02)

                def read():
                    try:
                        return bool(old.recv(4096))  # (False: the stream ended, wait on)
                    except socket.timeout:
                        return True
                self.until_board(t0 + RELOAD_S, read)
            except OSError:
                self.count("errors")
            self.until_board(t0 + RELOAD_S)
        if old is not None:
            old.close()

    def hostile(self):
        rnd = random.Random(39)
        kinds = ("garbage", "long_head", "big_body", "slow_head", "silent", "reconnect", "bad_host")
        while not self.halt.is_set():
            kind = rnd.choice(kinds)
            self.count("hostile")
            try:
                with self.sock(timeout=3.0) as s:
                    if kind == "garbage":
                        s.sendall(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 600))) + b"\r\n\r\n")
                    elif kind == "long_head":
                        s.sendall(b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * 3000 + b"\r\n\r\n")
                    elif kind == "big_body":
                        s.sendall(("POST /api/cmd HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                                   "Content-Length: 100000\r\n\r\n" % self.host).encode() + b"{" * 2000)
                    elif kind == "bad_host":
                        s.sendall(b'POST /api/cmd HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n'
                                  b'Content-Length: 13\r\n\r\n{"cmd":"new"}')
                    elif kind == "slow_head":  # a byte at a time, given up before the board's deadline
                        for b in b"GET /api/snapshot HTTP/1.1\r\nHo":
                            if self.halt.wait(0.05):
                                break
                            s.send(bytes([b]))
                        continue
                    elif kind == "silent":  # connected, nothing sent, gone after a while
                        self.halt.wait(0.5)
                        continue
                    else:  # connect and go at once
                        continue
                    try:
                        if s.recv(4096):
                            self.count("hostile_answered")
                    except OSError:
                        pass
            except OSError:
                self.count("errors")
                self.halt.wait(0.05)

    def play(self):
        """`hapenny play` on a board on the network (cli.cmd_play: connect with
        its event stream, then the scoreboard), no key pressed but "q" at
        stop(); a session its link lost is counted and opened again."""
        r, w = os.pipe()
        self.keys = w
        with os.fdopen(r, "rb", buffering=0) as inp, open(os.devnull, "w") as out:
            while not self.halt.is_set():
                try:
                    link, _, t = connect(self.url, timeout=10.0, code=self.code, events=True)
                except (PortError, LinkError, OSError):
                    self.count("errors")
                    self.halt.wait(1.0)
                    continue
                self.count("plays")
                try:
                    Counted(link, self, out, inp).run()
                except (LinkError, OSError):
                    pass
                finally:
                    t.close()
                if not self.halt.is_set():
                    self.count("play_lost")

    def state_poll(self):
        """`hapenny state` on a board on the network every POLL_S (cli's
        _simple("state"): connect without the event stream, then `state`)."""
        while not self.halt.is_set():
            t0 = self.board_s()
            try:
                link, _, t = connect(self.url, timeout=10.0, code=self.code, events=False)
                try:
                    link.request("state", timeout=10.0)
                    self.count("polls")
                finally:
                    t.close()
            except (PortError, LinkError, OSError) as e:
                self.count("poll_refused" if "busy" in str(e) else "errors")
            self.until_board(t0 + POLL_S)

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.halt.set()
        if self.keys is not None:
            os.write(self.keys, b"q")
        for t in self.threads:
            t.join(15)
        if self.keys is not None:
            os.close(self.keys)
        return dict(self.n)


def join(vb, link):
    """The board onto its virtual network, its server up: (port, Host)."""
    vb.air(HOME, TIMES)
    # (generous waits: the network's models are compiled on the board at the join, on its clock)
    link.request("wifi", set={"ssid": "home", "key": KEY, "name": "dartboard"}, timeout=60)
    end = time.monotonic() + 120
    while True:
        w = link.request("wifi", timeout=60)["wifi"]
        if w["state"] == "joined" and link.request("stats", timeout=60)["stats"]["web"] is not None:
            return vb.web_port, "127.0.0.1:%d" % vb.web_port
        assert time.monotonic() < end, w
        time.sleep(0.1)


UNMAPPED = (7, 7)  # a crossing the generic-8x8 profile leaves without a segment


def stretches(vb, seconds):
    """The longest unread stretch of the matrix, and the longest server step
    with a client's work (web_steps), in each look (every 10 ms) for
    `seconds` of wall time, the OS's interruptions apart: a service slice's
    cost on the model -> ({looks, p50, p99, max}, the same) in us. A contact
    on a crossing with no segment, due 2 s of the board's time on (and again
    when it has passed), keeps the board from dozing (a doze waits for input
    while nothing can close, and reads nothing), so every stretch counts."""
    got, steps = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        vb.wait_rearmed(timeout=20)
        vb.pulses([(UNMAPPED[0], UNMAPPED[1], 2000000, 2000)])
        vb.stats()
        while time.monotonic() < end:
            time.sleep(0.01)
            st = vb.stats()
            if not st["closing"]:
                break
            got.append(st["gap_quiet_max_us"])
            steps.append(st["web_steps"][2])
    vb.wait_rearmed(timeout=20)

    def spread(xs):
        return {"looks": len(xs), "p50": round(percentile(xs, 50)), "p99": round(percentile(xs, 99)), "max": max(xs)}
    return spread(got), spread(steps)


def visits(vb, run, rnd, n):
    """n visits of three darts 250 ms apart -> {darts, lost}."""
    lost = 0
    for _ in range(n):
        if run.thrown > 6:
            run.next_visit()
        run.stepped_up()  # (NEXT_PAUSE_US after a player change, as in the capture rows)
        vb.wait_rearmed()
        segs = rnd.sample(run.live, 3)
        d = esp32_model.spread(rnd)  # the first dart anywhere in the loop's round (esp32_model.SPREAD_US)
        at = vb.pulses([(run.cells[g][0], run.cells[g][1], d + i * APART_US, 2000) for i, g in enumerate(segs)])
        got = {e["seg"] for e in run.events_until(at + d + 2 * APART_US + 400000, 3,
                                                  at + d + 2 * APART_US + 2000 + esp32_model.LOCKOUT_US + 20000)
               if e.get("ev") == "dart"}
        run.thrown += len(got)
        lost += sum(1 for g in segs if g not in got)
        if run.link.request("state")["state"]["phase"] == "over":
            run.fresh_game()
    return {"darts": 3 * n, "lost": lost}


@contextlib.contextmanager
def loaded(clients, out):
    """The board on its virtual network, its steps timed, `clients` (of Load's) running on it
    for 2 s, with the board on a core of its own: (vb, link). What the clients counted goes
    into out["load"] at the end. With $HAPENNY_BOARD_LOG set, a failure prints the board's last output."""
    log = io.BytesIO()
    with VirtualBoard(timing="esp32", wifi=True, log=log) as vb:
        link, info, ser = connect(vb.port)
        try:
            try:
                port, host = join(vb, link)
                assert vb.control("time_web")["ok"]  # its steps timed on the board's clock from now on
            except Exception:
                sys.stderr.write(log.getvalue()[-3000:].decode(errors="replace"))
                raise
            code = link.request("wifi")["wifi"]["code"]  # as `hapenny wifi` shows it over USB
            with esp32_model.own_core(vb):
                load = Load(port, host, clients, code, vb).start()
                try:
                    time.sleep(2.0)  # the clients up: the pages or the play session, the others going
                    yield vb, link
                except Exception:
                    if os.getenv("HAPENNY_BOARD_LOG"):
                        sys.stderr.write(log.getvalue()[-3000:].decode(errors="replace"))
                    raise
                finally:
                    out["load"] = load.stop()
        finally:
            ser.close()


def measure(quick=False, clients=WEB):
    rnd = random.Random(39)
    out = {"clients": list(clients)}
    out.update({"reload_s": RELOAD_S} if "reloader" in clients else {})
    out.update({"poll_s": POLL_S} if "state_poll" in clients else {})
    out["periods_on"] = "board"  # (before: the wall's clock)
    t0 = time.monotonic()
    with loaded(clients, out) as (vb, link):
        web = link.request("stats")["stats"]["web"]
        out["streams_at_start"] = web["streams"]
        st0 = vb.stats()
        s0, k0 = st0["web_steps"], st0.get("sockets")
        # a visit's first dart NEXT_PAUSE_US after the player change, as the capture row with
        # nothing else happening takes it (bench-chips): the change's storage is done by then,
        # as before a person throws. (Thrown at once, the change's blind stretch alone missed
        # 32 of 1,500 0.5 ms contacts on a board with no network; 0 with the pause.)
        run = esp32_model.Run(vb, link, {s: (r, c) for r, c, s in link.request("map")["cells"]},
                              esp32_model.NEXT_PAUSE_US)
        run.fresh_game()
        out["loop_period_us"] = round(esp32_model._loop_period(vb, 2.0, 2 if quick else LOOP_WINDOWS), 1)
        out["loop_windows"] = 2 if quick else LOOP_WINDOWS
        out["slice_stretch_us"], out["step_longest_us"] = stretches(vb, 3.0 if quick else 10.0)
        esp32_model._progress("loop period, stretches", t0)
        for length, count in ((500, 60 if quick else HALF_MS), (1000, 30 if quick else ONE_MS)):
            key = "capture_%dus" % length
            out[key], lats = esp32_model.contacts(vb, run, rnd, length, count)
            esp32_model._progress(key, t0)
            run.fresh_game()
        out["darts_250ms"] = visits(vb, run, rnd, 5 if quick else VISITS)
        esp32_model._progress("darts 250 ms apart", t0)
        st1 = vb.stats()
        s1, k1 = st1["web_steps"], st1.get("sockets")
        # a service slice's server step with a client's work, on the model: its mean over the run
        out["web_steps"] = {"steps": s1[0] - s0[0], "mean_us": round((s1[1] - s0[1]) / max(1, s1[0] - s0[0]), 1)}
        if k0 and k1:  # the socket calls meanwhile, at the chip's fixed costs (vsocket.py)
            d = [b - a for a, b in zip(k0, k1)]
            out["sockets"] = {"calls": d[0], "bytes": d[1], "chip_us": d[2], "host_us": d[3]}
        out["web"] = link.request("stats")["stats"]["web"]
        out["stalls_skipped"] = vb.stats()["stalls"]
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(quick="--quick" in sys.argv, clients=NET if "--net" in sys.argv else WEB), indent=1))

"""The board's serial port, owned by one thread for any number of browsers.

The thread keeps a link to the board: it forwards every event the board
pushes, runs the commands the web pages send one at a time, and keeps a
snapshot of what a page needs (the game, the settings, the darts of the
visit). When the port fails or the board stops answering it reports the
board disconnected and keeps trying; when the board is back (or has reset)
it fetches the restored game."""
import queue
import threading
import time

from hapenny import gamestate
from hapenny.connect import connect
from hapenny.link import BoardError, LinkError

QUIET_S = 0.5  # a board silent this long is asked for `stats` (a liveness check, not a poll for events)
ANSWER_S = 0.8  # ... and is disconnected if it does not answer within this: "disconnected" in under 2 s
POLL_S = 0.01  # how often the thread looks at the port between commands: most of a dart's way to the page


def visit_of(state, seen):
    """The visit's darts as the page draws them (the fields of their `dart`
    events): from the state when the board names them there, else the
    darts this host saw (`seen`: boards that do not)."""
    if not state or "visit" not in state:
        return seen if state else []
    return [{"seg": seg, "side": side, "own": own, "gifts": gifts, "lost": lost, "bed": bed_of(seg)}
            for seg, side, own, gifts, lost in state["visit"]]


def bed_of(seg):
    """The bed a segment's dart hits (`T5` -> 5, `DB` -> 25), None for a miss."""
    if seg in ("SB", "DB"):
        return 25
    digits = seg.lstrip("SIODT")
    return int(digits) if digits.isdigit() else None


def follow(snap, ev):
    """The snapshot after board event `ev` (a new dict; `snap` is not
    changed): the game kept by gamestate.apply, the visit's darts as the
    page draws them, and the event itself as `last`. The page keeps its
    copy the same way (static/app.js, follow)."""
    name = ev.get("ev")
    st = snap["state"]
    new = gamestate.apply(st, ev)
    # a board that names the visit's darts in its state: they come from
    # there, so they are whole however late this host started
    visit = snap["visit"]
    if name == "dart":
        if st is not None and new is not None and new["turn"] != st["turn"] and new["phase"] != "bull_off":
            visit = []
        visit = (visit + [ev])[-gamestate.VISIT_MAX:]
    elif name in ("visit", "new"):
        visit = []
    elif name == "undo":
        moves = (new or {}).get("moves", 0)
        visit = [d for d in visit if d.get("moves", 0) <= moves]  # (darts from a state carry no moves)
    return dict(snap, state=new, visit=visit_of(new, visit), last=ev)


class Bridge:
    def __init__(self, port, notify):
        """`notify(kind, payload[, snap])` is called from the bridge's thread:
        ("snapshot", snapshot) when the connection or the settings change or
        the board reset, ("event", board event, the snapshot after it) for
        every event the board sends."""
        self.port = port
        self.notify = notify
        self.commands = queue.Queue()
        self.link = None
        self.ser = None
        self.snap = {"connected": False, "info": None, "config": None, "state": None, "visit": [],
                     "last": None}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="board", daemon=True)
        self._last_rx = 0.0

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        self._close()

    def request(self, cmd, fields, timeout=10.0):
        """Run one command on the board (from any thread): its reply dict, or
        None if the board is disconnected."""
        done = threading.Event()
        box = {}
        self.commands.put((cmd, fields, done, box))
        if not done.wait(timeout):
            return None
        return box.get("reply")

    # ---- the thread ------------------------------------------------------------------
    def _run(self):
        while not self._stop.is_set():
            if self.link is None:
                self._fail_queued()
                if not self._connect():
                    self._stop.wait(0.5)
                continue
            try:
                self._serve()
            except (LinkError, OSError, BoardError, ValueError) as e:
                self._lost(e)
            except Exception as e:  # pyserial's SerialException when the device vanished
                self._lost(e)

    def _connect(self):
        try:
            self.link, info, self.ser = connect(self.port, timeout=2.0)
        except Exception:
            return False
        try:
            self.snap.update(connected=True, info=info)
            self._refresh()
        except Exception as e:
            self._lost(e)
            return False
        return True

    def _refresh(self):
        """The whole picture again (after connecting, or the board's reset)."""
        self.snap["config"] = self.link.request("config", timeout=3.0)["config"]
        self.snap["state"] = self.link.request("state", timeout=3.0)["state"]
        self.snap["visit"] = visit_of(self.snap["state"], [])
        self._last_rx = time.monotonic()
        self._publish()

    def _serve(self):
        try:
            cmd, fields, done, box = self.commands.get(timeout=POLL_S)
        except queue.Empty:
            cmd = None
        if cmd is not None:
            try:
                box["reply"] = self.link.request(cmd, timeout=5.0, check=False, **fields)
                self._last_rx = time.monotonic()
                if box["reply"].get("ok") and cmd == "config":
                    self.snap["config"] = box["reply"]["config"]
                    self._publish()
            finally:
                done.set()
        if self.link._pump(0.0) or self.link.events:
            self._last_rx = time.monotonic()
        while self.link.events:
            self._event(self.link.events.popleft())
        # a board on the network says it is there by its stream's pings (its transport's quiet_s)
        if time.monotonic() - self._last_rx > getattr(self.link.t, "quiet_s", QUIET_S):
            self.link.request("stats", timeout=ANSWER_S)  # LinkError if it does not answer
            self._last_rx = time.monotonic()
            while self.link.events:
                self._event(self.link.events.popleft())

    def _event(self, ev):
        if ev.get("ev") == "link":  # a board on the network: its transport lost its events, or has them again
            if ev.get("up"):
                self.snap["connected"] = True
                self.snap.pop("why", None)
                self._refresh()  # the whole picture again: what happened meanwhile sent no event here
            elif self.snap["connected"]:
                self.snap.update(connected=False, why=str(ev.get("msg"))[:200])
                self._publish()
            return
        if ev.get("ev") == "boot":  # the board reset: its restored game, afresh
            self.notify("event", ev)
            self._refresh()
            return
        self.snap = follow(self.snap, ev)
        # the event goes to the pages, which apply it themselves (static/app.js
        # ports follow()); the snapshot after it is for a page that connects next
        self.notify("event", ev, dict(self.snap))

    def _publish(self):
        self.notify("snapshot", dict(self.snap))

    def _lost(self, why):
        self._close()
        if self.snap["connected"]:
            self.snap.update(connected=False, why=str(why)[:200])
            self._publish()

    def _close(self):
        if self.ser is not None:
            try:
                self.ser.close()
            except Exception:
                pass
        self.link = self.ser = None

    def _fail_queued(self):
        while True:
            try:
                _, _, done, box = self.commands.get_nowait()
            except queue.Empty:
                return
            box["reply"] = None
            done.set()

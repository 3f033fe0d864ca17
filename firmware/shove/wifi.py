# The board on the home network: joining it and staying on it. Loaded only
# when a network is set (wifi.json, written by the `wifi` command:
# shove/wifiset.py); a board with none never imports this module, nor
# `network` (imported at the first step). The loop steps the Joiner in its slow slice (with the
# watchdog's check-in: a second apart at most while idle, every few ms in
# play, 100 ms while JOINING: app.py's _NET_JOINING_MS), and a step never
# waits: on the ESP32 WLAN.connect() returns at once and the join is
# followed by polling status() (ports/esp32/network_wlan.c,
# network_wlan_connect and network_wlan_status). The virtual board's
# `network` (hapenny/sim/runtime/network.py) models the same calls.
#
# The port would retry a lost or refused network at once and for ever
# (WIFI_EVENT_STA_DISCONNECTED with reconnects unset): config(reconnects=0)
# hands the retries to this module, which spaces them out (_BACKOFF_S).
# status() keeps the last failure's reason until an address comes
# (network_wlan_ip_event_handler clears it on GOT_IP only), so a retry
# after a failure reads that reason from its first poll: an attempt ends
# when the address comes, when the status changes to a failure, or after
# ATTEMPT_MS.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import AP_PHASE, intern_first, release, ticks_add, ticks_diff

FILE = "wifi.json"
OFF = const(0)  # the states, as the status pixels show them (leds.Renderer.net)
JOINING = const(1)
JOINED = const(2)
FAILED = const(3)
_STATES = const(("off", "joining", "joined", "failed"))
# seconds before the next attempt after the n-th failure in a row (the last for every later one)
_BACKOFF_S = const((1, 2, 5, 10, 20, 30, 60))
ATTEMPT_MS = const(15000)  # an attempt with no address after this long has failed
GIVE_UP = const(3)  # failures in a row at start (never joined yet) that open the set-up AP
_SETUP_MODULE = const("wifiap")  # the set-up AP's module (shove.wifiap), loaded only when it opens
_GOT_IP = const(1010)  # modnetwork.h: STAT_GOT_IP, STAT_CONNECTING, STAT_IDLE
_CONNECTING = const(1001)
_IDLE = const(1000)
_LOOK_MS = const(1000)  # while joined, the station's status is looked at this often
# status() codes (ESP-IDF's wifi_err_reason_t, as network_wlan_status passes them) -> the reason shown
_REASONS = {201: "no_network", 210: "no_network", 211: "no_network", 212: "no_network",
            202: "wrong_password", 204: "wrong_password", 15: "wrong_password", 200: "lost"}


def backoff_ms(fails):
    """The wait before the next attempt after `fails` failures in a row (1 or more)."""
    return _BACKOFF_S[min(fails, len(_BACKOFF_S)) - 1] * 1000


def reason_of(status):
    r = _REASONS.get(status)
    if r is not None:
        return r
    return "timeout" if status in (_CONNECTING, _IDLE) else "error %d" % status


def load(data):
    """wifi.json's bytes -> its settings, or ValueError when they are not a whole set."""
    import json

    d = json.loads(data)
    if not isinstance(d, dict):
        raise ValueError("not an object")
    for k in ("ssid", "key", "name", "code"):
        if not isinstance(d.get(k), str):
            raise ValueError("no %s" % k)
    return d


class Joiner:
    """Joins the network of `cfg` (ssid, key, name, code) and rejoins it
    whenever it is lost. `ticks_ms`: the board's clock; `renderer`: its
    `net` is the state the status pixels show; `changed`, `emit`: the
    loop's callbacks (a frame is due; a `wifi` event); `parts`: the command
    handlers' (commands.Commands), with which the board's web server
    (shove/httpd.py, shove/webroutes.py) is started once the board has
    joined, put in parts.web for the loop to step, and stopped when the
    network is forgotten (none: no server). With `fallback` (the join
    loading starts on a board with a radio), GIVE_UP failures in a row
    before the network was ever joined, or a wrong password, open the
    set-up access point (shove/wifiap.py), which keeps this join trying
    behind it."""

    def __init__(self, cfg, renderer, changed, emit, parts=None, fallback=False):
        self.fallback = fallback  # failing at start opens the set-up AP (shove/wifiap.py)
        self.ever = False  # joined since the board started: a loss later never opens the AP
        self.ssid = cfg["ssid"]
        self._key = cfg["key"]  # never in a report, an event or an error
        self.name = cfg["name"]
        self.code = cfg["code"]
        self.renderer = renderer
        self.changed = changed
        self.emit = emit
        self.wlan = None
        self.state = JOINING
        self.reason = None
        self.address = None
        self.tries = 0  # attempts since the network was set or the board started
        self.fails = 0  # failures in a row (the backoff's step)
        self.began = 0  # tick the attempt under way began
        self.first = 0  # status() just after it began
        self.retry_at = -1  # tick of the next attempt; -1: one is under way
        self.looked = 0  # tick of the last look at the station while joined (_LOOK_MS)
        self.parts = parts
        renderer.net = JOINING

    def _set(self, state, reason):
        if state == self.state and reason == self.reason:
            return
        self.state = state
        self.reason = reason
        self.renderer.net = state
        self.changed()
        self.emit("wifi", {"state": _STATES[state], "reason": reason, "address": self.address})

    def _attempt(self, now):
        self.tries += 1
        self.began = now
        self.retry_at = -1
        w = self.wlan
        w.connect(self.ssid, self._key)
        self.first = w.status()

    def _failed(self, now, reason):
        self.fails += 1
        self.retry_at = ticks_add(now, backoff_ms(self.fails))
        self._set(FAILED, reason)
        p = self.parts
        if self.fallback and p is not None and not self.ever and (self.fails >= GIVE_UP or reason == "wrong_password"):
            # its names first (shove.intern_first), or no AP: one opened in a heap too cut up
            # for the names of a command's code would leave a board that answers nothing
            try:
                intern_first(AP_PHASE)
            except MemoryError:
                self._set(FAILED, "no_memory")
                return
            # the AP's module by the name its maker gave (_SETUP_MODULE): it imports this one,
            # and the import graph keeps no circle (tests/test_import_graph.py)
            __import__("shove." + _SETUP_MODULE, None, None, ("open_ap",)).open_ap(p, reason, self)

    def step(self, now):
        """The loop's slow slice: a look at the station, an attempt when one
        is due. Nothing here waits on the network."""
        try:
            self._step(now)
        except OSError as e:  # the radio refused a call: count it a failure, retry later
            self.address = None
            self._failed(now, "error: %s" % e)

    def _step(self, now):
        if self.retry_at >= 0:  # waiting out the backoff
            if ticks_diff(now, self.retry_at) < 0:
                return
            self.retry_at = -1
            if self.wlan is not None:
                self._attempt(now)
                return
        w = self.wlan
        if w is None:  # the first step (or one after the radio refused to start): the host name
            import network  # before the interface starts, so DHCP and mDNS announce it

            network.hostname(self.name)
            # WLAN.IF_STA from v1.24; network.STA_IF before (both 0, ESP-IDF's WIFI_IF_STA)
            w = network.WLAN(getattr(network.WLAN, "IF_STA", 0))
            w.active(True)  # on the chip this waits for the station to start (STA_START), once
            w.config(reconnects=0)
            self.wlan = w
            self._attempt(now)
            return
        if self.state == JOINED:
            # joined: the station looked at once a second, not every slow slice (its driver
            # notices a lost network only once its beacons have been missed for seconds)
            if ticks_diff(now, self.looked) < _LOOK_MS:
                return
            self.looked = now
            if w.status() == _GOT_IP:
                return
            self.address = None  # lost: try again at once (the network may be back already)
            self.fails = 0
            self._set(JOINING, "lost")
            self._attempt(now)
            return
        s = w.status()
        if s == _GOT_IP:
            self.fails = 0
            try:
                self.address = w.ipconfig("addr4")[0]
            except AttributeError:  # before v1.24: ifconfig() only (address, mask, gateway, DNS)
                self.address = w.ifconfig()[0]
            self.ever = True
            self.looked = now
            self._set(JOINED, None)
            if self.parts is not None and self.parts.web is None:
                self._serve()
            return
        if ticks_diff(now, self.began) >= ATTEMPT_MS:
            self._failed(now, reason_of(s))
        elif s != self.first and s not in (_CONNECTING, _IDLE):
            self._failed(now, reason_of(s))

    def _serve(self):
        """The web server, started at the first join (it listens on every
        address: a later one after a rejoin is served too). A port it cannot
        have (OSError), or no room for its buffers (MemoryError), is said in
        a `web` event and tried again at the next join; the game goes on."""
        p = self.parts
        addr = getattr(p.board, "web_addr", None)
        if not addr:  # a board with no server (a test's bench)
            return
        try:
            from shove import webroutes

            p.web = webroutes.start(p, self, addr)
        except (OSError, MemoryError) as e:
            release("webroutes", "httpd")
            self.emit("web", {"error": "the page is not served: %s" % e})

    def rssi(self):
        if self.state != JOINED:
            return None
        try:
            return self.wlan.status("rssi")
        except OSError:
            return None

    def report(self):
        """What `info`, `doctor` and the `wifi` command show (never the password; the code is the command's alone)."""
        return {"state": _STATES[self.state], "reason": self.reason, "ssid": self.ssid, "address": self.address,
                "rssi": self.rssi(), "name": self.name, "tries": self.tries}

    def leave(self):
        """The network is forgotten: off the air, the interface stopped, the server closed and let go."""
        p = self.parts
        if p is not None and p.web is not None:
            p.web.close()
            p.web = None
            release("webroutes", "httpd")
        w = self.wlan
        if w is not None:
            try:
                w.disconnect()
                w.active(False)
            except OSError:
                pass
        self.wlan = None
        self.renderer.net = OFF

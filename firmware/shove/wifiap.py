# The set-up access point: first set-up from a phone. A board with no
# network it can join opens its own Wi-Fi network, named after the board and
# locked with its pairing code (WPA2), answers every DNS name with itself
# (shove/captive.py) so that a phone joining it opens the set-up page, and
# joins the network the person picks there. Opened at start (shove/loading.py)
# when no network is set or the game's NEW button is held, or by the join
# (shove/wifi.py) when the stored network fails wifi.GIVE_UP times in a row
# before it was ever joined (a wrong password at once). Closed once a
# network is joined: CLOSE_MS later, so the page can show the new address,
# or at once when a game is in play. Only this module, captive (its DNS),
# setupweb (the page's routes on the board's server, started with the AP and
# closed with it), wifipage and probes (the page's and the probes' HTTP work)
# know the AP: a board that joins its network never loads them.
#
# While it is open the stored network (if any) is still tried in the
# background, with the join's backoff (a router that starts slower than the
# board after a power cut); a network asked for from the page replaces it.
# The station and the AP run together (the chip's APSTA mode,
# ports/esp32/network_wlan.c network_wlan_active): on the chip the AP
# follows the station's channel while it joins, so a phone may lose the
# set-up network for a moment and join it again.
#
# The set-up page's work (the scan, the join asked there, the page's state)
# is shove/wifipage.py's, loaded for each of the page's requests and let go
# after: while the AP waits, only this module, captive's DNS and the
# network's objects are in the heap (the join's module too when a stored
# network is tried behind the AP).
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import release, ticks_add, ticks_diff

SETUP = const(4)  # the status pixels' state (leds.Renderer.net): the set-up AP is open
_OFF = const(0)  # wifi.OFF, wifi.JOINED: the join's module is not loaded for them
_JOINED = const(2)
CLOSE_MS = const(30000)  # the AP stays open this long after the join: the page shows the new address
# NEW held at start with a network stored: the person means to pick another, so the stored one
# is tried behind the AP only after this long (a finger that only brushed NEW costs no more)
HELD_WAIT_MS = const(300000)
RETRY_MS = const(5000)  # the radio refused to open the AP: tried again this much later
AUTH_WPA2_PSK = const(3)  # network.AUTH_WPA2_PSK (ESP-IDF's WIFI_AUTH_WPA2_PSK)
AP_IF = const(1)  # network.AP_IF / WLAN.IF_AP (ESP-IDF's WIFI_IF_AP)
# why the AP opened, as `reason` shows it
NONE_SET = "none_set"
HELD = "button"


class _Shown:
    """What the join behind the AP shows: its state, not on the pixels (the AP's colour is)."""
    net = 0


class SetupAP:
    """The open set-up AP. `parts`: the handlers' parts (Commands: board,
    renderer, changed, emit, keeper, and `net`, which is this while open);
    `ident`: the board's name and pairing code; `why`: the reason it opened;
    `joiner`: the stored network's join (wifi.Joiner), kept trying behind
    the AP, or None."""

    is_setup = True  # what the page's work (shove/wifipage.py) looks for in Commands.net


    def __init__(self, parts, ident, why, joiner=None):
        self.parts = parts
        # the AP's name, and its passphrase, the pairing code (USB shows it, nothing else): read
        # at the first step, out of the loop's making, whose peak leaves no room for it on the chip
        self.name = self.code = None
        if ident is not None:
            self.name = ident["name"]
            self.code = ident["code"]
        self.why = why
        self.state = "setup"  # for the page: setup, joining, joined, failed
        self.reason = why
        self.address = None  # the home network's, once joined
        self.ap = None
        self.dns = None
        self.dns_error = None
        self.asked = None  # the network asked for from the page
        self.joined_at = -1
        self.scanned = None  # the page's last scan (shove/wifipage.py) and its tick
        self.scanned_at = 0
        self._retry_at = -1  # tick the AP is tried again after the radio refused it
        self.shown = _Shown()
        self.joiner = None
        if joiner is not None:
            self.adopt(joiner)
        parts.renderer.net = SETUP
        parts.changed()

    # ---- the join behind the AP ------------------------------------------------------
    def adopt(self, j):
        """`j`, a wifi.Joiner, joins behind the AP and reports to it."""
        j.parts = None  # this join gives up into nothing more, nor serves: the AP's server is open
        j.fallback = False
        j.renderer = self.shown
        j.changed = self.nothing
        j.emit = self.joined_event
        self.joiner = j

    def nothing(self):
        pass

    def joined_event(self, name, fields):
        """The join's state changed (wifi.Joiner._set)."""
        st = fields["state"]
        if st == "joined":
            self.state = "joined"
            self.reason = None
            self.address = fields["address"]
            self.joined_at = self.parts.board.ticks_ms()
            self.parts.renderer.net = _JOINED  # the new address's colour from now on
            self.parts.changed()
        elif st == "failed" and self.asked is not None:
            self.state = "failed"
            self.reason = fields["reason"]
        elif self.asked is None:  # the stored network, tried behind the AP
            self.reason = fields["reason"] or self.why
        self.parts.emit("wifi", self._event())

    def _event(self):
        return {"state": self.state, "reason": self.reason, "address": self.address}

    # ---- the AP -------------------------------------------------------------------------
    def ident(self):
        """The AP's name and pairing code, read (made, kept in pair.json) at their first need."""
        if self.code is None:
            ident = identity(self.parts, self.joiner is not None)
            self.name = ident["name"]
            self.code = ident["code"]
        return self.code

    def _open(self):
        self.ident()
        import network

        ap = network.WLAN(AP_IF)
        ap.active(True)
        # after active(True): ESP-IDF takes the soft-AP's config once its mode is on
        ap.config(essid=self.name, password=self.code, authmode=AUTH_WPA2_PSK)
        self.ap = ap
        if self.state == "setup":
            self.reason = self.why  # not the radio's refusal any more
        port = getattr(self.parts.board, "dns_port", 53)
        if port:
            from shove import captive

            try:
                self.dns = captive.Dns(ap.ifconfig()[0], port, getattr(self.parts.board, "dns_host", "0.0.0.0"))
            except OSError as e:  # the page is still reached at the AP's address
                self.dns_error = str(e)
        self._serve()
        self.parts.emit("wifi", self._event())

    def _serve(self):
        """The board's server with the set-up page's routes (shove/setupweb.py)
        on the AP's side, beside the DNS. A port it cannot have (OSError), or
        no room for its buffers (MemoryError), is said in a `web` event: the AP
        stays open (USB can still set the network)."""
        p = self.parts
        addr = getattr(p.board, "web_addr", None)
        if not addr:  # a board with no server (a test's bench)
            return
        try:
            from shove import setupweb

            p.web = setupweb.start(p, addr)
        except (OSError, MemoryError) as e:
            release("setupweb", "httpd")
            p.emit("web", {"error": "the set-up page is not served: %s" % e})

    def step(self, now):
        """The loop's network slice: the AP opened at the first step, one DNS
        datagram served, the join behind it stepped, the AP closed once a
        network is joined. Nothing here waits."""
        if self.ap is None:
            if self._retry_at >= 0 and ticks_diff(now, self._retry_at) < 0:
                return
            try:
                self._open()
            except (OSError, MemoryError) as e:  # the radio or the heap refused: tried again RETRY_MS later
                self.reason = "error: %s" % e
                self._retry_at = ticks_add(now, RETRY_MS)
                return
        d = self.dns
        if d is not None:
            d.step()
        j = self.joiner
        if j is not None:
            j.step(now)
        if self.state == "joined":
            k = getattr(self.parts, "keeper", None)
            playing = k is not None and k.game is not None
            if playing or ticks_diff(now, self.joined_at) >= CLOSE_MS:
                self.close()

    def _stop(self):
        p = self.parts
        if getattr(p, "web", None) is not None:  # the set-up routes' server: none of it outlives the AP
            p.web.close()
            p.web = None
            release("setupweb", "httpd")
        if self.dns is not None:
            self.dns.close()
            self.dns = None
        if self.ap is not None:
            try:
                self.ap.active(False)
            except OSError:
                pass
            self.ap = None

    def close(self):
        """Joined: the AP and its DNS go, the join carries on as the board's
        network (Commands.net) and this module's code leaves the heap."""
        self._stop()
        j = self.joiner
        p = self.parts
        j.renderer = p.renderer
        j.changed = p.changed
        j.emit = p.emit
        p.renderer.net = j.state
        p.net = j
        self.joiner = None
        j.parts = p  # the join serves the game's page from now on, as one loading made does
        p.changed()
        release("wifiap", "captive")
        if j.state == _JOINED and getattr(p.board, "web_addr", None):
            j._serve()

    def leave(self):
        """The network set or forgotten over USB (shove/wifiset.py): all off."""
        self._stop()
        if self.joiner is not None:
            self.joiner.leave()
            self.joiner = None
        self.parts.renderer.net = _OFF

    def report(self):
        """What `info`, `doctor` and the `wifi` command show (never the password, nor here the code)."""
        j = self.joiner
        return {"state": "setup", "reason": self.reason, "ssid": j.ssid if j is not None else None,
                "address": self.address, "rssi": None, "name": self.name, "tries": j.tries if j is not None else 0,
                "ap": {"essid": self.name, "address": self.ap.ifconfig()[0] if self.ap is not None else None,
                       "page": self.state, "dns": self.dns is not None}}


def identity(parts, keep_join=False):
    """The board's name and pairing code (the AP's essid and passphrase).
    wifiset, and the join's module it reads the stored network with, are let
    go after (the join's kept when `keep_join`: a stored network's join runs
    behind the AP)."""
    from shove import wifiset

    try:
        return wifiset.identity(parts)
    finally:
        release("wifiset")
        if not keep_join:
            release("wifi")


def open_ap(parts, why, joiner=None, wait_ms=0):
    """The set-up AP takes the place of the board's network (Commands.net);
    `joiner`, the stored network's join, is tried behind it (`wait_ms` from now)."""
    if joiner is not None and wait_ms:
        joiner.retry_at = ticks_add(parts.board.ticks_ms(), wait_ms)  # its first step waits as a backoff does
    parts.net = SetupAP(parts, None, why, joiner)
    return parts.net

# The virtual board's `network`: the ESP32 port's station interface
# (MicroPython v1.29, ports/esp32/network_wlan.c, modnetwork.h,
# modnetwork_globals.h, network_common.c; extmod/modnetwork.c for hostname)
# over a model of the air the test bench controls: which networks are in
# reach, their passwords and signal, and when one drops out. Times are on
# the board's clock (the virtual board sets machine.board_ticks_ms), so a
# test sees the same sequence however loaded the host is.
#
# What it keeps of the chip:
# - connect() returns at once; the outcome is read by polling status() and
#   isconnected() (network_wlan_connect starts esp_wifi_connect and returns);
# - status() answers as network_wlan_status does: STAT_GOT_IP while
#   connected, else the last disconnect's reason (NO_AP_FOUND 201,
#   WRONG_PASSWORD 202 for AUTH_FAIL and CONNECTION_FAIL, BEACON_TIMEOUT
#   200...), STAT_IDLE after disconnect() (reason ASSOC_LEAVE) or before any
#   attempt, STAT_CONNECTING while an attempt is under way with no reason yet;
# - a disconnect while a connection is requested starts a new attempt at
#   once, unless config(reconnects=n) has used up its n retries
#   (network_wlan_wifi_event_handler, WIFI_EVENT_STA_DISCONNECTED);
# - the reason is cleared only by GOT_IP (network_wlan_ip_event_handler);
# - status('rssi') raises OSError while not connected
#   (esp_wifi_sta_get_ap_info: "Wifi Not Connected"); config('rssi') is no
#   config parameter (ValueError), as on the chip;
# - connect() before active(True) raises OSError ("Wifi Not Started");
# - hostname() is at most 32 bytes (MICROPY_PY_NETWORK_HOSTNAME_MAX_LEN),
#   default "mpy-esp32"; connect() hands it to DHCP (esp_netif_set_hostname).
#
# And of its access point interface (WLAN(AP_IF), the same file):
# - the two interfaces are singletons (network_wlan_make_new); either may be
#   active alone or both at once (the chip's APSTA mode, network_wlan_active);
# - config(essid/ssid, key/password, authmode/security, channel, hidden,
#   max_clients) is the AP's (require_if: "AP required" on the station);
#   the password cannot be read back (no such query: ValueError); with an
#   authmode other than AUTH_OPEN a password under 8 characters is refused
#   by esp_wifi_set_config (ESP_ERR_WIFI_PASSWORD, an OSError); the default
#   essid is ESP_ and the MAC's last three bytes, the authmode AUTH_OPEN;
# - its address is ESP-IDF's default for the soft-AP's netif, 192.168.4.1/24
#   (its DHCP server hands out 192.168.4.2 on and names itself the DNS);
# - scan() needs the station active ("STA must be active"), whether or not
#   the AP runs, and lists what is in the air as (ssid bytes, bssid, channel,
#   RSSI, authmode, hidden) tuples, strongest first (ESP-IDF sorts by RSSI);
#   a hidden network's ssid is empty (show_hidden). On the chip it blocks
#   for the scan's time (esp_wifi_scan_start with block set); here it
#   returns at once.
#
# - on the classic ESP32, Wi-Fi's memory comes from the ESP-IDF heap model
#   (idfheap.py, the runtime's `esp32`): WLAN() (either interface) takes esp_wifi_init's (and
#   raises OSError("WiFi Out of Memory") when it cannot: then nothing is
#   kept and the next WLAN() tries again), active(True) esp_wifi_start's
#   while the first interface comes up (Wi-Fi is charged while ANY interface
#   is active: the chip's radio runs for the station, the AP or both).
import json
import os

try:
    from time import ticks_diff, ticks_ms
except ImportError:  # CPython (the host's tests of this model)
    import time

    def ticks_ms():
        return int(time.monotonic() * 1000) & 0x3FFFFFFF

    def ticks_diff(a, b):
        d = (a - b) & 0x3FFFFFFF
        return d - 0x40000000 if d >= 0x20000000 else d

STA_IF = 0
AP_IF = 1
STAT_IDLE = 1000  # modnetwork.h
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
STAT_BEACON_TIMEOUT = 200  # ESP-IDF's wifi_err_reason_t, modnetwork_globals.h
STAT_NO_AP_FOUND = 201
STAT_WRONG_PASSWORD = 202  # WIFI_REASON_AUTH_FAIL
STAT_ASSOC_FAIL = 203
STAT_CONNECT_FAIL = 203
STAT_HANDSHAKE_TIMEOUT = 204
AUTH_OPEN = 0  # ESP-IDF's wifi_auth_mode_t, modnetwork_globals.h
AUTH_WEP = 1
AUTH_WPA_PSK = 2
AUTH_WPA2_PSK = 3
AUTH_WPA_WPA2_PSK = 4
AUTH_WPA3_PSK = 6
AUTH_WPA2_WPA3_PSK = 7
AP_ADDR = ("192.168.4.1", "255.255.255.0", "192.168.4.1", "0.0.0.0")  # the soft-AP netif's default
# ... unless the simulator puts the AP on this computer's loopback (HAPENNY_AP_ADDR,
# SimBoard.ap_addr), where a client of the board's server really is on the AP's network
try:
    if os.getenv("HAPENNY_AP_ADDR"):
        AP_ADDR = (os.getenv("HAPENNY_AP_ADDR"), "255.255.255.0", os.getenv("HAPENNY_AP_ADDR"), "0.0.0.0")
except AttributeError:  # no os.getenv (CPython's tests give their own)
    pass
_CONNECTION_FAIL = 205  # reported as STAT_WRONG_PASSWORD by status()
_ASSOC_LEAVE = 8  # after disconnect(): status() says STAT_IDLE
HOSTNAME_MAX = 32

# The model's times (ms), which the bench may change (`air`'s "times"):
# a join (scan, association, the 4-way handshake, DHCP), a wrong password's
# refusal, a scan of every channel that finds no such network, and the
# beacons missed before a station counts its network lost (ESP-IDF's
# station inactive time, 6 s by default).
TIMES = {"join_ms": 1500, "refuse_ms": 1000, "scan_ms": 2000, "beacon_ms": 6000}

_clock = None  # the board's ticks_ms (tests set it; the virtual board sets machine.board_ticks_ms)
_air = {}  # ssid -> {"key", "rssi", "addr"}: the networks in reach
_hostname = ["mpy-esp32"]


def _now():
    if _clock is not None:
        return _clock()
    try:
        import machine

        return machine.board_ticks_ms()
    except (ImportError, AttributeError):
        return ticks_ms()


def set_air(aps, times=None):
    """The networks in reach: {ssid: {"key": password, "rssi": dBm, "addr":
    the address DHCP gives, and optionally "auth" (an AUTH_ value: WPA2 with
    a key, open without), "channel", "hidden"}} (the test bench's). A network that leaves the
    air while the station is joined to it is noticed beacon_ms later."""
    global _air
    if times:
        TIMES.update(times)
    new = {}
    for ssid, ap in aps.items():
        key = ap.get("key", "")
        new[ssid] = {"key": key, "rssi": ap.get("rssi", -55), "addr": ap.get("addr", "127.0.0.1"),
                     "auth": ap.get("auth", AUTH_WPA2_PSK if key else AUTH_OPEN), "channel": ap.get("channel", 6),
                     "hidden": bool(ap.get("hidden", False))}
    _air = new
    s = _sta[0]
    if s is not None:
        s._air_changed(_now())


def hostname(name=None):
    if name is None:
        return _hostname[0]
    if not isinstance(name, str) or len(name.encode()) > HOSTNAME_MAX:
        raise ValueError()
    _hostname[0] = name
    return None


_sta = [None]
_ap = [None]


def _idf():
    """The ESP-IDF heap model, where the board has one (the virtual classic ESP32)."""
    try:
        import esp32

        return esp32.heap()
    except (ImportError, AttributeError):
        return None


class WLAN:
    IF_STA = STA_IF
    IF_AP = AP_IF

    def __new__(cls, idx=STA_IF):
        if idx not in (STA_IF, AP_IF):
            raise ValueError("invalid WLAN interface identifier")
        h = _idf()
        if h is not None:
            h.wifi_init()  # esp_initialise_wifi, as network_wlan_make_new calls it
        one = _sta if idx == STA_IF else _ap
        if one[0] is None:
            o = object.__new__(cls)
            o._if = idx
            o._init()
            one[0] = o
        return one[0]

    def __init__(self, idx=STA_IF):
        pass

    def _init(self):
        # the AP's configuration (cfg.ap): ESP-IDF's defaults
        mac = self._mac()
        self._ap_ssid = "ESP_%02X%02X%02X" % (mac[3], mac[4], mac[5])
        self._ap_key = ""
        self._ap_auth = AUTH_OPEN
        self._ap_channel = 1
        self._ap_hidden = False
        self._ap_max = 10
        self._active = False
        self._requested = False  # wifi_sta_connect_requested
        self._connected = False  # wifi_sta_connected
        self._reason = 0  # wifi_sta_disconn_reason
        self._conf_reconnects = 0  # 0: retry for ever
        self._reconnects = 0
        self._ssid = ""
        self._key = ""
        self._at = None  # tick an attempt began, or None
        self._ap = None  # the network joined
        self._gone_at = None  # tick its network left the air, while joined

    # ---- the model's clock -------------------------------------------------------------
    def _advance(self):
        """Play what happened in the air up to now, in order."""
        now = _now()
        for _ in range(1000):  # a bound: each turn ends an attempt or a connection
            if self._at is not None:
                ap = _air.get(self._ssid)
                if ap is None:
                    end, reason = TIMES["scan_ms"], STAT_NO_AP_FOUND
                elif ap["key"] != self._key:
                    end, reason = TIMES["refuse_ms"], STAT_WRONG_PASSWORD
                else:
                    end, reason = TIMES["join_ms"], 0
                t = (self._at + end) & 0x3FFFFFFF
                if ticks_diff(now, t) < 0:
                    return
                self._at = None
                if reason:
                    self._disconnected(reason, t)
                else:  # IP_EVENT_STA_GOT_IP
                    self._connected = True
                    self._reason = 0
                    self._ap = ap
                    self._gone_at = None
                continue
            if self._connected and self._gone_at is not None:
                t = (self._gone_at + TIMES["beacon_ms"]) & 0x3FFFFFFF
                if ticks_diff(now, t) < 0:
                    return
                self._gone_at = None
                self._disconnected(STAT_BEACON_TIMEOUT, t)
                continue
            return

    def _disconnected(self, reason, t):
        """WIFI_EVENT_STA_DISCONNECTED: a new attempt at once while one is
        requested and the retries allow it."""
        self._connected = False
        self._ap = None
        self._reason = reason
        if self._requested and self._active:
            if self._conf_reconnects:
                self._reconnects += 1
                if self._reconnects >= self._conf_reconnects:
                    return
            self._at = t

    def _air_changed(self, now):
        self._advance()
        if self._connected:
            ap = _air.get(self._ssid)
            if ap is None or ap["key"] != self._key:  # gone (or its password changed: it drops us)
                if self._gone_at is None:
                    self._gone_at = now
            else:
                self._gone_at = None
                self._ap = ap

    # ---- the interface ---------------------------------------------------------------------
    def active(self, on=None):
        if on is not None:
            on = bool(on)
            h = _idf()
            if h is not None and on != self._active:
                # the radio runs while any interface is active: started by the first, stopped with the last
                other = _ap[0] if self._if == STA_IF else _sta[0]
                if other is None or not other._active:
                    h.wifi_active(on)
            if on and not self._active:
                self._reconnects = 0  # WIFI_EVENT_STA_START
            if not on:
                self._advance()
                self._at = None
                self._connected = False
                self._ap = None
                self._gone_at = None
            self._active = on
        return self._active

    def _mac(self):
        return b"\x24\x0a\xc4\x5e\x1a\x01" if self._if == STA_IF else b"\x24\x0a\xc4\x5e\x1a\x02"

    def _require(self, idx):  # network_wlan.c's require_if
        if self._if != idx:
            raise OSError("STA required" if idx == STA_IF else "AP required")

    def scan(self):
        """network_wlan_scan: what is in the air, strongest first."""
        sta = _sta[0]
        if sta is None or not sta._active:
            raise OSError("STA must be active")
        out = []
        for ssid, ap in _air.items():
            b = ssid.encode()
            out.append((b"" if ap["hidden"] else b, b"\x02\x00" + bytes((len(b) & 0xFF, b[0] if b else 0, 0, 1)),
                        ap["channel"], ap["rssi"], ap["auth"], False))
        out.sort(key=lambda t: -t[3])
        return out

    def connect(self, ssid=None, key=None, *, bssid=None):
        self._require(STA_IF)
        if not self._active:
            raise OSError("Wifi Not Started")
        self._advance()
        if ssid is not None:
            self._ssid = ssid[:32]
            self._key = ""
        if key is not None:
            self._key = key[:64]
        if self._connected:  # esp_wifi_connect while connected: it leaves, then joins anew
            self._connected = False
            self._ap = None
        self._reconnects = 0
        self._requested = True
        self._at = _now()

    def disconnect(self):
        self._advance()
        self._requested = False
        if self._connected or self._at is not None:
            self._at = None
            self._connected = False
            self._ap = None
            self._gone_at = None
            self._reason = _ASSOC_LEAVE

    def isconnected(self):
        if self._if == AP_IF:
            return False  # stations joined to it: the model has none
        self._advance()
        return self._connected

    def status(self, param=None):
        if self._if == AP_IF:
            if param is None:
                return None
            if param == "stations":
                return []
            raise ValueError("unknown status param")
        self._advance()
        if param is None:
            r = self._reason
            if self._connected:
                return STAT_GOT_IP
            if r in (STAT_NO_AP_FOUND, STAT_WRONG_PASSWORD):
                return r
            if r == _CONNECTION_FAIL:
                return STAT_WRONG_PASSWORD
            if r == _ASSOC_LEAVE:
                return STAT_IDLE
            if self._requested and (self._conf_reconnects == 0 or self._reconnects < self._conf_reconnects):
                return STAT_CONNECTING
            if r == 0:
                return STAT_IDLE
            return r
        if param == "rssi":
            if not self._connected:
                raise OSError("Wifi Not Connected")
            return self._ap["rssi"]
        raise ValueError("unknown status param")

    def config(self, *args, **kw):
        if args and kw:
            raise TypeError("either pos or kw args are allowed")
        if kw:
            ap = {"ssid": self._ap_ssid, "key": self._ap_key, "auth": self._ap_auth}
            for k, v in kw.items():
                if k == "reconnects":
                    self._require(STA_IF)
                    self._conf_reconnects = 0 if v == -1 else v + 1
                elif k in ("hostname", "dhcp_hostname"):
                    hostname(v)
                elif k in ("ssid", "essid"):
                    self._require(AP_IF)
                    ap["ssid"] = v.encode()[:32].decode()
                elif k in ("key", "password"):
                    self._require(AP_IF)
                    ap["key"] = v[:63]
                elif k in ("authmode", "security"):
                    self._require(AP_IF)
                    ap["auth"] = int(v)
                elif k == "channel":
                    if self._if == AP_IF:
                        self._ap_channel = int(v)
                elif k == "hidden":
                    self._require(AP_IF)
                    self._ap_hidden = bool(v)
                elif k == "max_clients":
                    self._require(AP_IF)
                    self._ap_max = int(v)
                else:
                    raise ValueError("unknown config param")
            if self._if == AP_IF:
                if ap["auth"] != AUTH_OPEN and len(ap["key"]) < 8:
                    raise OSError("Wifi Invalid Password")  # esp_wifi_set_config: ESP_ERR_WIFI_PASSWORD
                self._ap_ssid, self._ap_key, self._ap_auth = ap["ssid"], ap["key"], ap["auth"]
            return None
        k = args[0]
        if self._if == AP_IF:
            if k in ("ssid", "essid"):
                return self._ap_ssid
            if k in ("authmode", "security"):
                return self._ap_auth
            if k == "channel":
                return self._ap_channel
            if k == "hidden":
                return self._ap_hidden
            if k == "max_clients":
                return self._ap_max
            if k == "mac":
                return self._mac()
            if k in ("hostname", "dhcp_hostname"):
                return hostname()
            raise ValueError("unknown config param")
        if k == "reconnects":
            return self._conf_reconnects - 1
        if k in ("hostname", "dhcp_hostname"):
            return hostname()
        if k == "mac":
            return b"\x24\x0a\xc4\x5e\x1a\x01"
        if k in ("ssid", "essid"):
            return self._ssid
        raise ValueError("unknown config param")

    def _addr(self):
        return self._ap["addr"] if self._connected else "0.0.0.0"

    def ipconfig(self, key):
        if self._if == AP_IF:
            if key == "addr4":
                return AP_ADDR[:2]
            if key == "gw4":
                return AP_ADDR[2]
            if key == "dhcp4":
                return False
            raise ValueError("unexpected key")
        self._advance()
        if key == "addr4":
            return (self._addr(), "255.255.255.0" if self._connected else "0.0.0.0")
        if key == "gw4":
            return "0.0.0.0"
        if key == "dhcp4":
            return True
        raise ValueError("unexpected key")

    def ifconfig(self, *args):
        if args:
            raise OSError("this model does not set a static address")
        if self._if == AP_IF:
            return AP_ADDR
        self._advance()
        return (self._addr(), "255.255.255.0" if self._connected else "0.0.0.0", "0.0.0.0", "0.0.0.0")


def _from_env():
    """The air the simulator set before this start (it outlives a reset: it is the world's)."""
    try:
        text = os.getenv("HAPENNY_AIR")
    except AttributeError:
        return
    if text:
        d = json.loads(text)
        set_air(d.get("aps", {}), d.get("times"))


_from_env()

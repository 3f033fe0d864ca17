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
# - on the classic ESP32, Wi-Fi's memory comes from the ESP-IDF heap model
#   (idfheap.py, the runtime's `esp32`): WLAN() takes esp_wifi_init's (and
#   raises OSError("WiFi Out of Memory") when it cannot: then nothing is
#   kept and the next WLAN() tries again), active(True) esp_wifi_start's.
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
    the address DHCP gives}} (the test bench's). A network that leaves the
    air while the station is joined to it is noticed beacon_ms later."""
    global _air
    if times:
        TIMES.update(times)
    new = {}
    for ssid, ap in aps.items():
        new[ssid] = {"key": ap.get("key", ""), "rssi": ap.get("rssi", -55), "addr": ap.get("addr", "127.0.0.1")}
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
        if idx != STA_IF:
            raise ValueError("this model has the station interface only")
        h = _idf()
        if h is not None:
            h.wifi_init()  # esp_initialise_wifi, as network_wlan_make_new calls it
        if _sta[0] is None:
            o = object.__new__(cls)
            o._init()
            _sta[0] = o
        return _sta[0]

    def __init__(self, idx=STA_IF):
        pass

    def _init(self):
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

    def connect(self, ssid=None, key=None, *, bssid=None):
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
        self._advance()
        return self._connected

    def status(self, param=None):
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
            for k, v in kw.items():
                if k == "reconnects":
                    self._conf_reconnects = 0 if v == -1 else v + 1
                elif k in ("hostname", "dhcp_hostname"):
                    hostname(v)
                else:
                    raise ValueError("unknown config param")
            return None
        k = args[0]
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

# The set-up page's work, for the board's HTTP routes while the set-up access
# point is open (shove/wifiap.py): the networks in reach, the join of the one
# a person picks, the page's state (who may ask is shove/setupweb.py's
# from_ap). Loaded for each of the page's requests and let go after (shove.call("wifipage", NAME, parts, ...)):
# the AP waiting for a phone keeps none of it in the heap. Each function takes
# the parts the handlers get (Commands: `net` is the SetupAP while it is open)
# and returns the protocol's reply object ({"ok": true, ...} or {"ok": false,
# "error", "msg"}); the page is host/hapenny/web/static/setup.html.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import protocol, release, ticks_diff

SCAN_MS = const(10000)  # a scan is reused this long (on the chip a scan blocks the loop for 1 to 3 s)
_SCAN_MAX = const(20)  # networks listed on the page
STA_IF = const(0)  # network.STA_IF / WLAN.IF_STA


def _error(code, msg):  # as the protocol's error replies, without a line's id
    return {"ok": False, "error": code, "msg": msg}


def _ap(parts):
    """The open set-up AP, or None."""
    ap = parts.net
    return ap if getattr(ap, "is_setup", False) else None


def _closed():
    return _error("not_setup", "the set-up page works only while the board's set-up network is open")


def _strength(t):
    return -t[3]


def networks(ap, now):
    """The networks in reach, strongest first, one row a name, hidden ones
    left out: [{"ssid", "rssi", "secured"}]. A scan is reused SCAN_MS."""
    if ap.scanned is not None and ticks_diff(now, ap.scanned_at) < SCAN_MS:
        return ap.scanned
    import network

    sta = network.WLAN(STA_IF)
    if not sta.active():
        sta.active(True)  # scans need the station (network_wlan_scan: "STA must be active")
    found = sta.scan()
    found.sort(key=_strength)
    rows = []
    seen = []
    for t in found:
        try:
            ssid = t[0].decode()
        except UnicodeError:  # not text: a phone could not show it either
            continue
        if not ssid or ssid in seen:
            continue
        seen.append(ssid)
        rows.append({"ssid": ssid, "rssi": t[3], "secured": t[4] != 0})
        if len(rows) >= _SCAN_MAX:
            break
    ap.scanned = rows
    ap.scanned_at = now
    return rows


def page(ap):
    return {"ok": True, "state": ap.state, "reason": ap.reason, "ssid": ap.asked, "address": ap.address,
            "name": ap.name}


def scan(parts):
    """GET the networks in reach: {"ok": true, "networks": [{"ssid", "rssi", "secured"}]}."""
    ap = _ap(parts)
    if ap is None:
        return _closed()
    try:
        return {"ok": True, "networks": networks(ap, parts.board.ticks_ms())}
    except OSError as e:  # the station is busy joining (ESP-IDF refuses a scan then): the last list
        return {"ok": True, "networks": ap.scanned or [], "busy": str(e)}


def join(parts, body):
    """POST {"ssid", "key"}: the network stored as the `wifi` command stores
    it (wifi.json, power-safe), then joined behind the AP; the page then
    polls state(). Bad input is refused and changes nothing."""
    ap = _ap(parts)
    if ap is None:
        return _closed()
    if not isinstance(body, dict):
        return _error("bad_wifi", "join takes an object: ssid and key")
    for k in body:
        if k not in ("ssid", "key"):
            return _error("bad_wifi", "join takes ssid and key only")
    from shove import wifi, wifiset

    try:
        cfg = {"ssid": wifiset.check_ssid(body.get("ssid")), "key": wifiset.check_key(body.get("key")),
               "name": ap.name, "code": ap.code}
        wifiset.save(parts, cfg)
    except protocol.ProtoError as e:
        return _error(e.code, e.msg)
    except OSError as e:  # the flash refused the file: nothing was joined
        return _error("storage", "the network could not be stored: %s" % e)
    finally:
        release("wifiset")
    if ap.joiner is not None:
        ap.joiner.leave()
    ap.asked = cfg["ssid"]
    ap.state = "joining"
    ap.reason = None
    ap.address = None
    ap.adopt(wifi.Joiner(cfg, ap.shown, ap.nothing, ap.joined_event))
    parts.emit("wifi", {"state": "joining", "reason": None, "address": None})
    return page(ap)


def state(parts):
    """GET the page's state: setup (nothing asked yet), joining, joined (with
    the address on the home network), failed (with the reason)."""
    ap = _ap(parts)
    return _closed() if ap is None else page(ap)


def online(parts):
    """Whether the board has joined a network (the probes then get the answer that closes the phone's sheet)."""
    ap = _ap(parts)
    return ap is not None and ap.state == "joined"

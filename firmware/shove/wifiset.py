# The `wifi` command: the home network's name and password stored on the
# board (power-safe: a temporary file, then a rename), forgotten, or the
# state shown. Loaded for the command and let go after it; the join itself
# is shove/wifi.py's, loaded only while a network is set. The password goes
# into wifi.json and the radio, never into a reply, an event or an error.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import json

from shove import protocol, release, store

# The pairing code: digits 1 to 9, so that a person at the board can read
# it off the strip without a computer (holding the next button, the bed of
# each digit lights in turn: leds.Renderer.show_code) and type it on a
# phone's number pad. 9^10 = 3.5e9 codes: at 10 wrong guesses a second (the
# board's server lets far fewer through: its rate limit of wrong guesses),
# guessing takes on average 9^10 / 2 / 10 s = 5.5 years; at one a second, 55.
CODE_ALPHABET = "123456789"
CODE_LEN = 10
_NAME_MAX = const(32)
  # MICROPY_PY_NETWORK_HOSTNAME_MAX_LEN
_HEX = "0123456789abcdefABCDEF"


def _bad(msg):
    return protocol.ProtoError("bad_wifi", msg)


def check_ssid(s):
    if not isinstance(s, str) or not 1 <= len(s.encode()) <= 32:
        raise _bad("ssid: the network's name, 1 to 32 bytes")
    return s


def check_key(k):
    """WPA2/WPA3 take a passphrase of 8 to 63 printable ASCII characters or
    64 hex digits; an open network none (the empty string)."""
    if not isinstance(k, str):
        raise _bad("key: the password as a string (\"\" for an open network)")
    if k == "":
        return k
    if len(k) == 64:
        for ch in k:
            if ch not in _HEX:
                raise _bad("key: 64 characters must be hex digits (a raw key)")
        return k
    if not 8 <= len(k) <= 63:
        raise _bad("key: 8 to 63 characters (WPA2/WPA3), or \"\" for an open network")
    for ch in k:
        if not " " <= ch <= "~":
            raise _bad("key: printable ASCII characters only")
    return k


def check_name(n):
    """A host name (RFC 1123 label, at most 32 as the port keeps): the board answers as NAME.local."""
    if not isinstance(n, str) or not 1 <= len(n) <= _NAME_MAX or n[0] == "-" or n[-1] == "-":
        raise _bad("name: 1 to %d letters, digits or -, not starting or ending with -" % _NAME_MAX)
    for ch in n:
        if not ("a" <= ch <= "z" or "0" <= ch <= "9" or ch == "-" or "A" <= ch <= "Z"):
            raise _bad("name: 1 to %d letters, digits or -, not starting or ending with -" % _NAME_MAX)
    return n.lower()


def default_name():
    """hapenny-XXXX from the chip's MAC, so two boards on one network differ."""
    try:
        import machine

        u = machine.unique_id()
        return "hapenny-%02x%02x" % (u[-2], u[-1])
    except (ImportError, AttributeError, IndexError):
        return "hapenny"


def new_code():
    import os

    out = []
    while len(out) < CODE_LEN:
        for b in os.urandom(16):
            if b < 252 and len(out) < CODE_LEN:  # 252 = 28 x 9: no digit drawn more often than another
                out.append(CODE_ALPHABET[b % 9])
    return "".join(out)


_PAIR_FILE = const("pair.json")  # the name and pairing code of a board with no network set (its set-up AP's)
OWNER_FILE = "owner.key"  # update.OWNER_FILE, named here: showing the code loads none of the update's code


def is_code(code):
    """A code of the form new_code() makes (one from an earlier firmware,
    of letters, cannot be shown on the strip: the next `set` replaces it)."""
    if not isinstance(code, str) or len(code) != CODE_LEN:
        return False
    for ch in code:
        if ch not in CODE_ALPHABET:
            return False
    return True


def identity(c):
    """The board's name and pairing code: the stored network's, else those
    kept for the set-up AP (pair.json), else new ones kept there, so the
    passphrase a person learned stays the pairing code once a network is set."""
    old = stored(c)
    if old is not None:
        return {"name": old["name"], "code": old["code"]}
    data = c.board.read_file(_PAIR_FILE)
    if data is not None:
        try:
            d = json.loads(data)
            if isinstance(d, dict) and is_code(d.get("code")):
                return {"name": check_name(d.get("name")), "code": d["code"]}
        except (ValueError, protocol.ProtoError):  # damaged: made afresh
            pass
    ident = {"name": default_name(), "code": new_code()}
    c.board.write_file(_PAIR_FILE, json.dumps(ident).encode())  # power-safe (store.write_atomic)
    return ident


def save(c, cfg):
    """The network's settings into wifi.json, power-safe (a temporary file, then a rename)."""
    from shove import wifi

    c.board.write_file(wifi.FILE, json.dumps(cfg).encode())


def stored(c):
    from shove import wifi

    data = c.board.read_file(wifi.FILE)
    if data is None:
        return None
    try:
        return wifi.load(data)
    except ValueError:
        return None


def cmd_wifi(c, cmd, after):
    for k in cmd:
        if k not in ("cmd", "id", "set", "forget", "owner"):
            raise _bad("wifi takes set (ssid, key, name), forget or owner, or nothing to show the state")
    if ("set" in cmd) + ("forget" in cmd) + ("owner" in cmd) > 1:
        raise _bad("one of set, forget or owner")
    if "owner" in cmd:
        if cmd["owner"] is not True:
            raise _bad("owner takes true")
        code = c.board.read_file(OWNER_FILE)
        code = code.decode() if code else ""
        if not is_code(code):
            code = new_code()
            c.board.write_file(OWNER_FILE, code.encode())  # power-safe (store.write_atomic)
        return {"owner": code}
    from shove import wifi

    old = stored(c)
    if "set" in cmd:
        s = cmd["set"]
        if not isinstance(s, dict):
            raise _bad("set takes an object: ssid, key and optionally name")
        for k in s:
            if k not in ("ssid", "key", "name"):
                raise _bad("set takes ssid, key and name only")
        ssid = check_ssid(s.get("ssid"))
        key = check_key(s.get("key"))
        name = check_name(s["name"]) if "name" in s else None
        ident = identity(c)  # a board set up from its AP keeps the code learned there
        # (a code of another form, from an earlier firmware, cannot be shown on the strip: a new one)
        cfg = {"ssid": ssid, "key": key, "name": name or ident["name"],
               "code": ident["code"] if is_code(ident["code"]) else new_code()}
        save(c, cfg)
        if c.net is not None:
            c.net.leave()
            c.net = None
            release("wifiap", "captive")  # the set-up AP's, if it was open: nothing refers to them now
        c.net = wifi.Joiner(cfg, c.renderer, c.changed, c.emit, c)
        c.changed()
        after.append(("wifi", {"state": "joining", "reason": None, "address": None}))
    elif "forget" in cmd:
        if cmd["forget"] is not True:
            raise _bad("forget takes true")
        if c.net is not None:
            c.net.leave()
            c.net = None
        store.remove(wifi.FILE)
        c.renderer.net = wifi.OFF
        c.changed()
        release("wifi", "wifiap", "captive")  # nothing refers to them now: their code leaves the heap
        after.append(("wifi", {"state": "off", "reason": None, "address": None}))
        return {"wifi": {"state": "off", "reason": None, "ssid": None, "address": None, "rssi": None,
                         "name": old["name"] if old else default_name(), "tries": 0, "code": None}}
    if c.net is None:
        r = {"state": "off", "reason": None, "ssid": None, "address": None, "rssi": None,
             "name": old["name"] if old else default_name(), "tries": 0, "code": None}
        release("wifi")
    else:
        r = c.net.report()
        r["code"] = c.net.code  # USB is trusted: the pairing code is shown here only
    # the port the board's own page is served at (shove/httpd.py), while its server listens
    r["web_port"] = c.board.web_addr[1] if c.web is not None else None
    return {"wifi": r}

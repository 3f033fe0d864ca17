# Line-based JSON protocol codec: a bounded line buffer and command decoding.
# Pure: bytes in, dicts and reply lines out; the app does the I/O.
import json

MAX_LINE = 512
PROTOCOL = 1


class ProtoError(Exception):
    def __init__(self, code, msg, id_=None):
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.id = id_


class LineBuffer:
    """Collects bytes into lines of at most MAX_LINE bytes, never more memory.
    feed() returns None until a line ends; then the line (bytes, without
    the newline and an optional \\r), or TOO_LONG for an over-long line
    (whose bytes were dropped)."""

    TOO_LONG = object()

    def __init__(self, size=MAX_LINE):
        self.buf = bytearray(size)
        self.n = 0
        self.over = False

    def feed(self, b):
        if b == 10:  # \n
            n = self.n
            over = self.over
            self.n = 0
            self.over = False
            if over:
                return LineBuffer.TOO_LONG
            if n and self.buf[n - 1] == 13:
                n -= 1
            return bytes(self.buf[:n])
        if self.over:
            return None
        if self.n == len(self.buf):
            self.over = True
            return None
        self.buf[self.n] = b
        self.n += 1
        return None

    def pending(self):
        return self.n > 0 or self.over


def valid_utf8(b):
    """Strict UTF-8 (no overlongs, surrogates or bytes past U+10FFFF): the
    MicroPython decoder lets some invalid sequences through."""
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            k, lo, hi = 1, 0x80, 0xBF
        elif 0xE0 <= c <= 0xEF:
            k = 2
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
        elif 0xF0 <= c <= 0xF4:
            k = 3
            lo = 0x90 if c == 0xF0 else 0x80
            hi = 0x8F if c == 0xF4 else 0xBF
        else:
            return False
        if i + k >= n:  # cut short
            return False
        if not lo <= b[i + 1] <= hi:
            return False
        for j in range(i + 2, i + k + 1):
            if not 0x80 <= b[j] <= 0xBF:
                return False
        i += k + 1
    return True


def decode(line):
    """bytes -> command dict with a str "cmd"; ProtoError otherwise."""
    try:
        if isinstance(line, (bytes, bytearray)):
            if not valid_utf8(line):
                raise ValueError("not UTF-8")
            text = line.decode("utf-8")
        else:
            text = line
        obj = json.loads(text)
    except Exception:
        raise ProtoError("bad_json", "not a JSON object (UTF-8, one per line)")
    if not isinstance(obj, dict):
        raise ProtoError("bad_json", "a command is a JSON object")
    id_ = obj.get("id")
    cmd = obj.get("cmd")
    if not isinstance(cmd, str):
        raise ProtoError("unknown_cmd", "no \"cmd\" name", id_)
    return obj


def _enc(obj):
    # no spaces after separators: every byte sent costs the scan loop 87 us at
    # 115200 baud (separators: extmod/modjson.c, MICROPY_PY_JSON_SEPARATORS,
    # on by default in py/mpconfig.h)
    return json.dumps(obj, separators=(",", ":"))


def ok(id_, fields=None):
    out = {"id": id_, "ok": True}
    if fields:
        for k in fields:
            out[k] = fields[k]
    return _enc(out)


def error(id_, code, msg):
    return _enc({"id": id_, "ok": False, "error": code, "msg": msg})


def event(name, fields=None):
    out = {"ev": name}
    if fields:
        for k in fields:
            out[k] = fields[k]
    return _enc(out)


def want_int(obj, key, lo, hi, code):
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or v > hi:
        raise ProtoError(code, "%s must be a whole number from %d to %d" % (key, lo, hi), obj.get("id"))
    return v

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


_STOPS = (b"\n", b"\x03", b"\x01")  # a line's end; Ctrl-C and Ctrl-A, which the REPL watch sees


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

    def take(self, src, view, i, n):
        """The bytes of src[i:n] up to the first line end or REPL byte
        (_STOPS), into the line as feed() would put them, with a few C calls
        rather than a call a byte (`view`: a memoryview of src). Returns the
        index of the first byte not taken: feed that one."""
        j = n
        for stop in _STOPS:
            k = src.find(stop, i, j)
            if k >= 0:
                j = k
        k = j - i
        if k > 0 and not self.over:
            m = self.n
            room = len(self.buf) - m
            if k > room:
                k = room
                self.over = True
            self.buf[m:m + k] = view[i:i + k]
            self.n = m + k
        return j


def valid_utf8(b):
    """Strict UTF-8 (no overlongs, surrogates or bytes past U+10FFFF): the
    MicroPython decoder lets some invalid sequences through."""
    i = 0
    n = len(b)
    while i < n:
        if b[i] < 0x80:
            i += 1
        else:
            i = _utf8(b, i, n)
            if i < 0:
                return False
    return True


# Strict JSON syntax, checked before json.loads: MicroPython's parser takes
# commas and colons as optional and any closing bracket for any opening one
# (it reads '{"cmd" "info"]' as {"cmd": "info"} and '{]' as {}), so noise
# on the line could otherwise pass as a command. One pass, no allocation:
# the open brackets go in a preallocated stack (a line of MAX_LINE bytes
# cannot nest deeper than half of that).
_STACK = bytearray(MAX_LINE // 2 + 1)
_VALUE = 0  # a value must come
_ITEM = 1  # a value or ']' (just after '[')
_KEY = 2  # a string key must come
_MEMBER = 3  # a key or '}' (just after '{')
_AFTER = 4  # after a value: ',', a closing bracket, or the end


def _ws(b, i, n):
    while i < n and b[i] in b" \t\r\n":
        i += 1
    return i


def _string(b, i, n):
    """b[i] is the opening quote: the index after the closing one, or -1."""
    i += 1
    while i < n:
        c = b[i]
        if c == 34:  # "
            return i + 1
        if c == 92:  # backslash
            i += 1
            if i >= n:
                return -1
            c = b[i]
            if c == 117:  # \uXXXX
                if i + 4 >= n:
                    return -1
                for j in range(i + 1, i + 5):
                    if b[j] not in b"0123456789abcdefABCDEF":
                        return -1
                i += 5
            elif c in b'"\\/bfnrt':
                i += 1
            else:
                return -1
        elif c < 0x20:  # control characters must be escaped
            return -1
        elif c < 0x80:
            i += 1
        else:
            k = _utf8(b, i, n)
            if k < 0:
                return -1
            i = k
    return -1


def _utf8(b, i, n):
    """One strict UTF-8 sequence at b[i] (a lead byte): the index after it, or -1
    (no overlongs, surrogates or code points past U+10FFFF)."""
    c = b[i]
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
        return -1
    if i + k >= n or not lo <= b[i + 1] <= hi:
        return -1
    for j in range(i + 2, i + k + 1):
        if not 0x80 <= b[j] <= 0xBF:
            return -1
    return i + k + 1


def _digits(b, i, n):
    j = i
    while j < n and 48 <= b[j] <= 57:
        j += 1
    return j


def _number(b, i, n):
    if b[i] == 45:  # -
        i += 1
    if i >= n:
        return -1
    if b[i] == 48:  # a leading 0 stands alone
        i += 1
    else:
        j = _digits(b, i, n)
        if j == i:
            return -1
        i = j
    if i < n and b[i] == 46:  # .
        j = _digits(b, i + 1, n)
        if j == i + 1:
            return -1
        i = j
    if i < n and b[i] in b"eE":
        i += 1
        if i < n and b[i] in b"+-":
            i += 1
        j = _digits(b, i, n)
        if j == i:
            return -1
        i = j
    return i


def _word(b, i, n, w):
    m = len(w)
    if i + m > n:
        return -1
    for k in range(m):
        if b[i + k] != w[k]:
            return -1
    return i + m


def valid_json(b, tick=None):
    """True if bytes `b` are exactly one JSON value (RFC 8259), in strict
    UTF-8. With `tick`, tick() is called every TICK_TOKENS tokens."""
    n = len(b)
    stack = _STACK
    depth = 0
    st = _VALUE
    i = 0
    left = TICK_TOKENS
    while True:
        if tick is not None:
            left -= 1
            if not left:
                left = TICK_TOKENS
                tick()
        i = _ws(b, i, n)
        if st == _AFTER:
            if depth == 0:
                return i == n
            if i >= n:
                return False
            c = b[i]
            top = stack[depth - 1]
            if c == 44:  # ,
                st = _KEY if top == 123 else _VALUE
            elif c == top + 2:  # '{' + 2 is '}', '[' + 2 is ']'
                depth -= 1
            else:
                return False
            i += 1
            continue
        if i >= n:
            return False
        c = b[i]
        if st == _KEY or st == _MEMBER:
            if c == 125 and st == _MEMBER:  # {}
                depth -= 1
                i += 1
                st = _AFTER
                continue
            if c != 34:
                return False
            i = _string(b, i, n)
            if i < 0:
                return False
            i = _ws(b, i, n)
            if i >= n or b[i] != 58:  # :
                return False
            i += 1
            st = _VALUE
            continue
        # a value (or, just after '[', the closing bracket)
        if c == 93 and st == _ITEM:  # []
            depth -= 1
            i += 1
        elif c == 123 or c == 91:  # { [
            if depth == len(stack):
                return False
            stack[depth] = c
            depth += 1
            i += 1
            st = _MEMBER if c == 123 else _ITEM
            continue
        elif c == 34:
            i = _string(b, i, n)
        elif c == 45 or 48 <= c <= 57:
            i = _number(b, i, n)
        elif c == 116:
            i = _word(b, i, n, b"true")
        elif c == 102:
            i = _word(b, i, n, b"false")
        elif c == 110:
            i = _word(b, i, n, b"null")
        else:
            return False
        if i < 0:
            return False
        st = _AFTER


TICK_TOKENS = 3  # a token is tens of bytecodes (a string: a loop a byte)


def decode(line, tick=None):
    """bytes -> command dict with a str "cmd"; ProtoError otherwise."""
    try:
        if not valid_json(line, tick):
            raise ValueError("not strict JSON in UTF-8")
        if tick is not None:
            tick()  # a read between the check and the parse, each a pass over the line
        obj = json.loads(line.decode("utf-8"))
    except Exception:
        raise ProtoError("bad_json", "not a JSON object (UTF-8, one per line)")
    if not isinstance(obj, dict):
        raise ProtoError("bad_json", "a command is a JSON object")
    id_ = obj.get("id")
    cmd = obj.get("cmd")
    if not isinstance(cmd, str):
        raise ProtoError("unknown_cmd", "no \"cmd\" name", id_)
    return obj


SLICE_DEPTH = 3  # reply -> state -> sides: a side in one piece


def _enc(obj):
    # no spaces after separators: every byte sent costs the scan loop 87 us at
    # 115200 baud (separators: extmod/modjson.c, MICROPY_PY_JSON_SEPARATORS,
    # on by default in py/mpconfig.h)
    return json.dumps(obj, separators=(",", ":"))


def _enc_sliced(obj, tick, depth, out):
    # appends to `out` the pieces of _enc(obj)'s text, its dicts and lists
    # `depth` levels down encoded member by member with tick() between:
    # json.dumps of a whole state is one C call of milliseconds on the chip,
    # with no read of the matrix in it. The pieces go into one list, joined
    # once by the caller: a join at every level would copy the line's text
    # once a level (heap garbage of several times a 1-2 KB state in every
    # reply that carries one)
    if depth and isinstance(obj, dict) and len(obj) > 1:
        sep = "{"
        for k in obj:
            out.append(sep)
            out.append(_enc(k))
            out.append(":")
            _enc_sliced(obj[k], tick, depth - 1, out)
            tick()
            sep = ","
        out.append("}")
    elif depth and isinstance(obj, list) and len(obj) > 1:
        sep = "["
        for v in obj:
            out.append(sep)
            _enc_sliced(v, tick, depth - 1, out)
            tick()
            sep = ","
        out.append("]")
    else:
        out.append(_enc(obj))


def _line(out, tick):
    # a line carrying the whole state is built in pieces with tick() between;
    # the rest (a dart event: under 256 bytes) in one
    if tick is None or "state" not in out:
        return _enc(out)
    parts = []
    _enc_sliced(out, tick, SLICE_DEPTH, parts)
    return "".join(parts)


def ok(id_, fields=None, tick=None):
    """A reply's line; one carrying a state is built in pieces with tick() between."""
    out = {"id": id_, "ok": True}
    if fields:
        for k in fields:
            out[k] = fields[k]
    return _line(out, tick)


def error(id_, code, msg):
    return _enc({"id": id_, "ok": False, "error": code, "msg": msg})


def event(name, fields=None, tick=None):
    out = {"ev": name}
    if fields:
        for k in fields:
            out[k] = fields[k]
    return _line(out, tick)


def want_int(obj, key, lo, hi, code):
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or v > hi:
        raise ProtoError(code, "%s must be a whole number from %d to %d" % (key, lo, hi), obj.get("id"))
    return v

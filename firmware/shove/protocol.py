# Line-based JSON protocol codec: a bounded line buffer and the reply and
# event lines. Pure: bytes in, lines out; the app does the I/O. A command's
# decoding (the strict JSON check) is shove/request.py's, loaded per line.
import json

from shove import Refused

MAX_LINE = 512
PROTOCOL = 1


class ProtoError(Refused):
    """A line refused by the protocol itself (its JSON, its command, its
    arguments), with the line's id when it was read."""

    def __init__(self, code, msg, id_=None):
        super().__init__(code, msg)
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


SLICE_DEPTH = 3  # reply -> state -> sides: a side in one piece
# A line carrying a state is queued as chunks, never as one string: its text
# whole (1.2 KB for eight sides, 2.5 KB on 20 beds) and the list of its
# hundred-odd pieces (which grows by doubling) each need one free block of
# their size, and the heap of a new game of eight computer sides, holding
# both games and the step's code, may have none (answered no_memory). A
# chunk is at most 16 pieces and ends after a piece of 64 bytes or more (a
# side): one small block, a few hundred bytes at most (_put).


def _enc(obj):
    # no spaces after separators: every byte sent costs the scan loop 87 us at
    # 115200 baud (separators: extmod/modjson.c, MICROPY_PY_JSON_SEPARATORS,
    # on by default in py/mpconfig.h)
    return json.dumps(obj, separators=(",", ":"))


def _put(out, piece):
    # a piece of a line into its chunks (`out`: the chunks made, then the
    # list of the pieces of the one being made), joined as they come: no
    # level of _enc_sliced joins its own (that would copy the line's text
    # once a level), and the line is never joined whole
    run = out[-1]
    run.append(piece)
    if len(run) >= 16 or len(piece) >= 64:
        out[-1] = "".join(run)
        del run[:]  # the same list for the next chunk: emptied, its room kept
        out.append(run)


def _enc_sliced(obj, tick, depth, out):
    # puts into `out` the pieces of _enc(obj)'s text, its dicts and lists
    # `depth` levels down encoded member by member with tick() between:
    # json.dumps of a whole state is one C call of milliseconds on the chip,
    # with no read of the matrix in it
    if depth and isinstance(obj, dict) and len(obj) > 1:
        sep = "{"
        for k in obj:
            _put(out, sep)
            _put(out, _enc(k))
            _put(out, ":")
            _enc_sliced(obj[k], tick, depth - 1, out)
            tick()
            sep = ","
        _put(out, "}")
    elif depth and isinstance(obj, list) and len(obj) > 1:
        sep = "["
        for v in obj:
            _put(out, sep)
            _enc_sliced(v, tick, depth - 1, out)
            tick()
            sep = ","
        _put(out, "]")
    else:
        _put(out, _enc(obj))


def _line(out, fields, tick):
    # `out` with the fields: a line carrying the whole state is built in
    # pieces with tick() between, and comes as the list of its chunks (the
    # output queue sends them one after the other: shove/pacing.py); the
    # rest (a dart event: under 256 bytes) as one string
    if fields:
        out.update(fields)
    if tick is None or "state" not in out:
        return _enc(out)
    parts = [[]]
    _enc_sliced(out, tick, SLICE_DEPTH, parts)
    parts[-1] = "".join(parts[-1])  # (empty when the last piece ended a chunk: it sends nothing)
    return parts


def encode(obj, tick=None):
    """Any object's text as a line is encoded (the network's snapshot):
    one carrying a state in pieces with tick() between, and then a list
    of chunks (see _line)."""
    return _line(obj, None, tick)


def ok(id_, fields=None, tick=None):
    """A reply's line; one carrying a state is built in pieces with tick()
    between, and is then a list of chunks (see _line)."""
    return _line({"id": id_, "ok": True}, fields, tick)


def error(id_, code, msg):
    return _enc({"id": id_, "ok": False, "error": code, "msg": msg})


def event(name, fields=None, tick=None):
    return _line({"ev": name}, fields, tick)

# Updates over the network (`hapenny deploy --port <board on the network>`):
# the update routes of the board's own server, behind the owner code
# (webroutes.py checks it before this module is loaded). Loaded for the
# first update request and kept while the server runs.
#
#   GET  /api/update/files                 the board (for the host's .mpy checks), its
#                                          firmware files with their sha256, its profile
#   POST /api/update/begin                 a fresh staging folder
#   PUT  /api/update/file?path=P&at=N      a piece (at most the server's body, 512 B) of P at
#        [&size=S&sha=H]                   offset N, into upd/P.part; the last names the whole
#                                          file's size and hash: checked (hashed a piece at a
#                                          time as they came), then renamed to upd/P
#   POST /api/update/commit?files=N        N whole files staged, none half: the marker
#                                          (_MARK, temp + rename) is written and the board resets
#
# Atomic: nothing of the running firmware changes until _MARK exists; from
# then on boot.py moves every staged file into place (each move a littlefs
# rename, in one step) before anything of the firmware is imported, and
# removes _MARK last, so a cut at any point starts either the old firmware
# (no _MARK: the staged files are only ever read by the next `begin`) or the
# new one (_MARK: boot.py finishes the moves). upd/.remove names the stale
# files the new firmware no longer has, removed by boot.py likewise.
import hashlib
import json
import os
import sys
from binascii import hexlify

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from shove import store

STAGE = "upd"
_MARK = const("upd.go")  # boot.py's: the staged files are whole and checked
_REMOVE = const(".remove")  # upd/.remove: the stale files' paths, one a line
PART = ".part"
TOPS = ("boot.py", "main.py", "profile.json")
# The owner code: these routes need it. Made and shown by `{"cmd": "wifi",
# "owner": true}` over USB only (wifiset.py; the network may not send
# `wifi`), of the pairing code's form, in a file of its own.
OWNER_FILE = "owner.key"
SLICE = const(1024)  # the most of a file hashed in one step of the server (files: Hashes)


def allowed(p):
    """A path an update may write: the firmware's own files, nothing else."""
    if not p or p[0] == "/" or ".." in p or "//" in p or p[-1] == "/" or "%" in p:
        return False
    if p == _REMOVE or p in TOPS:
        return True
    return p.startswith(("shove/", "web/")) and not p.endswith(PART)


def _exists(p):
    try:
        os.stat(p)
        return True
    except OSError:
        return False


def _size(p):
    try:
        return os.stat(p)[6]
    except OSError:
        return -1


def _hash(p, buf):
    h = hashlib.sha256()
    mv = memoryview(buf)
    with open(p, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(buf if n == len(buf) else mv[:n])  # (a slice a read: 16 B each, some 8 KB a listing)
    return hexlify(h.digest()).decode()


def _quoted_len(p):
    """len(json.dumps(p).encode()), made without them for a name of printable
    ASCII with no quote or backslash (every name of the firmware's): the
    listing sizes some 70 names in the server's one step that starts it."""
    if not p or min(p) < " " or max(p) > "~" or '"' in p or "\\" in p:  # (an ASCII character a step: no copy)
        return len(json.dumps(p).encode())
    return len(p) + 2


def _walk(d, out):
    # (the entries as they come, each path made in one piece: the listing's one step allocates less)
    try:
        entries = os.ilistdir(d)
    except OSError:
        return
    d += "/"
    for e in entries:
        p = d + e[0]
        if e[1] == 0x4000:
            _walk(p, out)
        else:
            out.append(p)


def rm_tree(d):
    try:
        entries = list(os.ilistdir(d))
    except OSError:
        return
    for e in entries:
        p = d + "/" + e[0]
        if e[1] == 0x4000:
            rm_tree(p)
        else:
            os.remove(p)
    os.rmdir(d)


def _dirs(path):
    """The folders above `path`, made as needed."""
    i = path.find("/")
    while i > 0:
        try:
            os.mkdir(path[:i])
        except OSError:
            pass
        i = path.find("/", i + 1)


def _query(text):
    q = {}
    for kv in (text or "").split("&"):
        i = kv.find("=")
        if i > 0:
            q[kv[:i]] = kv[i + 1:]
    return q


# the profile's text in the listing: a JSON string, escaped as MicroPython's json.dumps escapes a
# str (py/objstr.c, mp_str_print_json: a quote and a backslash, \n \r \t, other control bytes as
# \u00XX, every other byte as it is), a slice a step from its bytes (Hashes): decoded, escaped
# whole and encoded again it was four copies of it (12 KB for 2.5 KB) in the answer's first step
_PAIRS = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"), (b"\r", b"\\r"), (b"\t", b"\\t"))
_ESC_SLICE = const(256)


def _controls():
    # the control bytes written as \u00XX
    return [c for c in range(32) if c not in (9, 10, 13)]


def escaped_len(b):
    """The length of bytes `b` escaped (escape), counted without making it
    (each control byte counted through one bytearray: a bytes of its own
    each, 29 of them, was 1.5 KB in the listing's first step)."""
    n = len(b)
    for a, r in _PAIRS:
        n += b.count(a)
    k = bytearray(1)
    for c in _controls():
        k[0] = c
        n += 5 * b.count(k)
    return n


def escape(b):
    """Bytes `b` as the inside of a JSON string (no quotes)."""
    for a, r in _PAIRS:
        if a in b:
            b = b.replace(a, r)
    for c in _controls():
        k = bytes((c,))
        if k in b:
            b = b.replace(k, ("\\u%04x" % c).encode())
    return b


class Hashes:
    """The answer to GET /api/update/files after its head: each file's
    sha256, made a slice a step. The server sends it as a file's body
    (httpreq.Req.send), asking readinto(buf) once a step when what it last
    gave is sent: each call hashes at most SLICE bytes of one file (read
    into buf) and gives None until that file's hash is whole, then its
    entry's bytes. So a firmware's worth of files never stalls the loop,
    and the dart's scan, for more than one slice."""

    def __init__(self, head, paths):
        self.paths = paths
        self.i = 0  # the file being hashed
        self.f = self.h = None
        # the head's parts not yet given (never joined); a list [bytes, at] among them: text given
        # escaped (escape) a slice a step, from `at` on (the profile's)
        self.head = list(head)
        self.text = b""  # bytes made and not yet given
        self.at = 0

    def size(self):
        """The answer's length, known before any hash is made (each is 64 hex digits)."""
        n = 2  # the closing "}}"
        for t in self.head:
            n += escaped_len(t[0]) if isinstance(t, list) else len(t)
        for p in self.paths:  # (not enumerate: a pair made a path)
            n += _quoted_len(p) + 67  # "path":"<64 hex>"
        return n + max(len(self.paths) - 1, 0)  # the commas between

    def readinto(self, buf):
        while True:
            left = len(self.text) - self.at
            if left:
                n = left if left < len(buf) else len(buf)
                buf[:n] = self.text[self.at:self.at + n]
                self.at += n
                return n
            if self.head:
                t = self.head[0]
                if isinstance(t, list):  # the profile's text: a slice of it escaped, the rest at the next step
                    raw, at = t
                    self.text = escape(raw[at:at + _ESC_SLICE])
                    t[1] = at + _ESC_SLICE
                    if t[1] >= len(raw):
                        self.head.pop(0)
                    self.at = 0
                    if self.text:
                        return None
                    continue
                self.text = self.head.pop(0)
                self.at = 0
                continue
            i = self.i
            if i > len(self.paths):
                return 0  # all given
            if i == len(self.paths):
                self._give(b"}}")
                continue
            if self.f is None:
                self.f = open(self.paths[i], "rb")
                self.h = hashlib.sha256()
            mv = memoryview(buf)[:SLICE]
            n = self.f.readinto(mv)
            if n:
                self.h.update(mv[:n])
                if n == SLICE:
                    return None  # maybe more of it: the next step's slice
            self.f.close()
            self.f = None
            self._give(('%s%s:"%s"' % ("," if i else "", json.dumps(self.paths[i]),
                                       hexlify(self.h.digest()).decode())).encode())
            self.h = None
            return None  # this step has hashed its slice: the entry goes at the next

    def _give(self, text):
        self.text = text
        self.at = 0
        self.i += 1

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None


def files(req):
    """GET /api/update/files: the board, its profile, then its firmware
    files with their sha256, hashed a slice a step (Hashes)."""
    paths = []
    for d in ("shove", "web"):
        _walk(d, paths)
    for p in TOPS:
        if _exists(p):
            paths.append(p)
    try:
        machine = os.uname().machine
    except AttributeError:
        machine = ""
    board = {"platform": sys.platform, "machine": machine, "mpy": getattr(sys.implementation, "_mpy", None),
             "version": list(sys.implementation.version)}
    prof = store.read("profile.json")
    head = b'{"ok":true,"board":' + json.dumps(board).encode() + b',"profile":'
    if prof is None:
        head = (head + b"null", b',"files":{')
    else:  # its text as a JSON string (json.dumps(prof.decode())), escaped a slice a step
        head = (head + b'"', [prof, 0], b'","files":{')
    body = Hashes(head, paths)
    req.send(body, body.size(), "application/json")


# the file being put, hashed a piece at a time as its pieces arrive: [its staged part's path, the
# bytes hashed, the sha256], so the last piece's check hashes no more than that piece (a whole
# file's hash in one step would stall the loop, as files' once did). None, or another file's, or
# out of step (a put resumed after a restart): the last piece hashes the file whole, as before.
_running = None


def begin(req):
    global _running
    _running = None
    store.remove(_MARK)
    rm_tree(STAGE)
    os.mkdir(STAGE)
    req.reply(200, '{"ok":true}')


def put(req, buf):
    q = _query(req.query)
    path = q.get("path")
    try:
        at = int(q.get("at", "0"))
        size = int(q["size"]) if "size" in q else None
    except ValueError:
        at = size = -1
    if not allowed(path) or at < 0 or (size is not None and size < 0):
        req.error(400, "bad_path", "a firmware file's path (shove/..., web/..., boot.py, main.py, "
                                   "profile.json) and a piece's offset")
        return
    if not _exists(STAGE):
        req.error(409, "not_begun", "no update under way: POST /api/update/begin first")
        return
    part = STAGE + "/" + path + PART
    if at == 0:
        _dirs(part)
    else:
        have = _size(part)
        if have != at:
            req.error(409, "out_of_order", "this piece is at %d; the board has %d bytes of it" % (at, have))
            return
    global _running
    r = _running
    if at == 0:
        r = [part, 0, hashlib.sha256()]
    elif r is not None and (r[0] != part or r[1] != at):
        r = None
    _running = None  # (until the piece is written whole)
    with open(part, "wb" if at == 0 else "ab") as f:
        f.write(req.body)
    if r is not None:
        r[2].update(req.body)
        r[1] += len(req.body)
    if size is None:
        _running = r
        req.reply(200, '{"ok":true}')
        return
    if _size(part) != size:
        sha = None
    elif r is not None and r[1] == size:
        sha = hexlify(r[2].digest()).decode()
    else:
        sha = _hash(part, buf)
    if sha != q.get("sha"):
        os.remove(part)
        req.error(400, "bad_file", "%s arrived with another size or hash than sent: send it again" % path)
        return
    os.rename(part, STAGE + "/" + path)
    req.reply(200, '{"ok":true}')


def commit(req, write_file):
    q = _query(req.query)
    paths = []
    _walk(STAGE, paths)
    half = [p for p in paths if p.endswith(PART)]
    whole = len(paths) - len(half)
    if half or not paths or str(whole) != q.get("files"):
        req.error(409, "incomplete", "%d whole files and %d half ones are staged, not the %s sent: nothing "
                                     "was changed" % (whole, len(half), q.get("files")))
        return False
    write_file(_MARK, b"1")  # temp + rename: from here on boot.py completes the switch
    req.reply(200, '{"ok":true,"files":%d}' % whole)
    return True

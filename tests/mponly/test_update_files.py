# MicroPython only: GET /api/update/files (shove/update.py, files and
# Hashes) through the board's server core (shove/httpd.py) over a real
# loopback socket, on files of the unix port's own file system: the answer
# is every firmware file with its sha256, as the host's deploy reads it, and
# no step of the server hashes more than update.SLICE bytes (sha256 counted
# by a stand-in around the real one), so a firmware's worth of files never
# stalls the loop for more than a slice. And PUT /api/update/file: each
# piece hashed as it arrives, so the last one's check of the whole file
# hashes no more than that piece.
import gc
import hashlib
import json
import os
import socket
import time
from binascii import hexlify

from shove import httpd, update
from test_httpd import _server

# (path, size): a file under a slice, one of exactly a slice, one of many, an empty one, the top files
FILES = (("shove/a.mpy", 700), ("shove/sub/b.mpy", 1024), ("web/index.html.gz", 5000), ("web/empty.gz", 0),
         ("boot.py", 90), ("main.py", 2049))


class Counted:
    """hashlib as update.py uses it, counting the bytes hashed."""

    hashed = 0

    class _H:
        def __init__(self):
            self.h = hashlib.sha256()

        def update(self, data):
            Counted.hashed += len(data)
            self.h.update(data)

        def digest(self):
            return self.h.digest()

    @staticmethod
    def sha256():
        return Counted._H()


def _data(path, n):
    seed = sum(path.encode())
    return bytes((seed + i * 7) & 0xFF for i in range(n))


def _tree():
    """A fresh folder holding FILES (and profile.json), made the current one; the folder it left."""
    top = os.getcwd()
    root = "/tmp/hapenny-upd-%d" % (time.ticks_us() & 0xFFFFFF)
    for d in ("", "/shove", "/shove/sub", "/web"):
        os.mkdir(root + d)
    os.chdir(root)
    for p, n in FILES:
        with open(p, "wb") as f:
            f.write(_data(p, n))
    with open("profile.json", "w") as f:
        f.write('{"name": "test"}')
    return top, root


def _rm(d):
    for e in list(os.ilistdir(d)):
        p = d + "/" + e[0]
        if e[1] == 0x4000:
            _rm(p)
        else:
            os.remove(p)
    os.rmdir(d)


def test_the_files_answer_is_every_files_hash_made_a_slice_a_step():
    top, root = _tree()
    real = update.hashlib
    update.hashlib = Counted
    srv = _server()
    srv.route("/api/update/files", lambda req, now: update.files(req))
    try:
        s = socket.socket()
        s.connect(socket.getaddrinfo("127.0.0.1", srv.port)[0][-1])
        s.setblocking(False)
        s.send(b"GET /api/update/files HTTP/1.1\r\nHost: h\r\n\r\n")
        got = b""
        per_step = []
        for _ in range(2000):
            before = Counted.hashed
            srv.step(0)
            per_step.append(Counted.hashed - before)
            try:
                b = s.recv(4096)
            except OSError:
                b = None
            if b:
                got += b
            elif b == b"":
                break
            if srv.slots[0].state not in (httpd.FREE, httpd.HEAD, httpd.BODY, httpd.SEND):
                break  # all sent (lingering for the client's close)
            time.sleep_ms(1)
        s.close()
    finally:
        srv.close()
        update.hashlib = real
        os.chdir(top)
        _rm(root)
    head, body = got.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 "), head
    length = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")]
    assert int(length[0].split(b":")[1]) == len(body), (length, len(body))
    ans = json.loads(body)
    want = {}
    for p, n in FILES:
        want[p] = hexlify(hashlib.sha256(_data(p, n)).digest()).decode()
    want["profile.json"] = hexlify(hashlib.sha256(b'{"name": "test"}').digest()).decode()
    assert ans["ok"] is True and ans["files"] == want, ans["files"]
    assert ans["profile"] == '{"name": "test"}' and ans["board"]["platform"]
    total = sum(n for _, n in FILES) + 16
    assert sum(per_step) == total  # every byte hashed once
    assert max(per_step) <= update.SLICE, max(per_step)  # and no step hashed more than a slice
    assert len([k for k in per_step if k]) >= 5000 // update.SLICE + 4  # the large file took steps of its own


def test_a_files_answer_cut_short_closes_its_file():
    top, root = _tree()
    srv = _server()
    srv.route("/api/update/files", lambda req, now: update.files(req))
    try:
        s = socket.socket()
        s.connect(socket.getaddrinfo("127.0.0.1", srv.port)[0][-1])
        s.setblocking(False)
        s.send(b"GET /api/update/files HTTP/1.1\r\nHost: h\r\n\r\n")
        c = srv.slots[0]
        for _ in range(400):
            srv.step(0)
            if c.file is not None and c.file.f is not None:
                break
            time.sleep_ms(1)
        hashes = c.file
        assert hashes is not None and hashes.f is not None  # a file open, its hash under way
        srv.close_conn(c)  # as a dropped connection ends it
        assert hashes.f is None
        s.close()
        gc.collect()
    finally:
        srv.close()
        os.chdir(top)
        _rm(root)


class Req:
    """A request as update.put reads it, its answer kept."""

    def __init__(self, query, body):
        self.query = query
        self.body = memoryview(body)
        self.answer = None

    def reply(self, status, text):
        self.answer = (status, json.loads(text))

    def error(self, status, code, msg):
        self.answer = (status, {"ok": False, "error": code})


def _put_all(data, path, sha=None, forget_at=None):
    """data put in 512-byte pieces, the last naming its size and hash (`sha`, else its own);
    `forget_at`: the running hash lost before that piece (as after a restart). Each piece's
    answer, and the most bytes one piece hashed."""
    answers = []
    most = 0
    for at in range(0, len(data), 512):
        piece = data[at:at + 512]
        q = "path=%s&at=%d" % (path, at)
        if at + 512 >= len(data):
            q += "&size=%d&sha=%s" % (len(data), sha or hexlify(hashlib.sha256(data).digest()).decode())
        if at == forget_at:
            update._running = None
        r = Req(q, piece)
        before = Counted.hashed
        update.put(r, bytearray(256))
        most = max(most, Counted.hashed - before)
        answers.append(r.answer)
    return answers, most


def test_a_put_file_is_hashed_a_piece_at_a_time_and_checked_whole():
    top, root = _tree()
    real = update.hashlib
    update.hashlib = Counted
    try:
        b = Req("", b"")
        update.begin(b)
        data = _data("shove/x.mpy", 3000)
        answers, most = _put_all(data, "shove/x.mpy")
        assert answers == [(200, {"ok": True})] * 6, answers
        assert most <= 512, most  # no piece hashed more than itself: the last is checked without a whole pass
        with open("upd/shove/x.mpy", "rb") as f:
            assert f.read() == data
        answers, _ = _put_all(data, "web/y.gz", sha="0" * 64)  # another hash than sent: refused, not staged
        assert answers[-1] == (400, {"ok": False, "error": "bad_file"}), answers
        assert "y.gz" not in os.listdir("upd/web") and "y.gz.part" not in os.listdir("upd/web")
        answers, most = _put_all(data, "web/z.gz", forget_at=1024)  # resumed: the whole file hashed at the end
        assert answers[-1] == (200, {"ok": True}) and most == len(data), (answers, most)
    finally:
        update.hashlib = real
        update._running = None
        os.chdir(top)
        _rm(root)


def test_the_profiles_text_is_escaped_a_slice_a_step_as_json_dumps_escapes_it():
    # the listing's profile as json.dumps(text) gives it (this interpreter's: the board's), its
    # length counted before any of it is made, and made a slice at a time behind the head
    raw = (b'{"name": "caf\xc3\xa9 \\ \\"x\\"",\n\t"map": [1, 2],\r\n' + bytes(range(32)) + b"}") * 20
    assert len(raw) > 3 * 256
    want = json.dumps(raw.decode()).encode()
    assert b'"' + update.escape(raw) + b'"' == want and update.escaped_len(raw) + 2 == len(want)
    h = update.Hashes((b"<", b'"', [raw, 0], b'">'), [])
    size = h.size()
    buf = bytearray(1024)
    got = b""
    steps = 0
    for _ in range(100):
        n = h.readinto(buf)
        steps += 1
        if n == 0:
            break
        if n:
            got += bytes(buf[:n])
    assert got == b"<" + want + b">}}" and size == len(got)
    assert steps > len(raw) // 256  # a slice of it a step, not the whole at once

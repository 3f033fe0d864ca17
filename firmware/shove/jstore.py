# Where the game journal lives on littlefs, so that a dart costs the flash
# a metadata program and no erase.
#
# Why not append to game.jnl: littlefs never programs a data block twice
# after a sync. The next write to a synced file takes a fresh block, erases
# it and copies the old last block into it (lib/littlefs lfs2.c,
# lfs2_file_flushedwrite -> lfs2_ctz_extend), so every dart erased a 4 KB
# sector (45 ms typical, 400 ms worst case with the CPU stalled) and
# programmed ~1 KB. Writing into a preallocated file is no better: a write
# in the middle of a file copies the rest of it on flush (lfs2_file_flush).
# Files up to the inline size (cache_size, 128 bytes with the ESP32 port's
# settings, extmod/vfs_lfsx.c) live inside their directory's metadata block
# instead, and rewriting one is a single metadata commit: programmed into
# the block's erased tail, no erase, atomic (old or new content after a
# cut). A commit is 64 bytes for up to 28 bytes of content (the tag, the
# data, the mtime attribute MicroPython adds, the CRCs, padded to the
# 32-byte program size), so records go in segments of 9 (27 bytes).
# A directory's metadata block is erased only when it is full (compaction);
# a fresh directory holds about 54 records' commits, so a new one is made
# (one erase) at the end of a visit whenever the current one could not take
# a whole visit more: every erase lands where no dart can come.
#
#   game.jnl            header + records 0..n-1 (journal.encode), written whole
#   jnl/<tok>.<d>/<s>   records s.. (up to SEG), in the directory begun at record d;
#                       tok = crc32 of game.jnl, so segments of a replaced file are stale
import binascii
import os

from shove import journal, store

GAME = "game.jnl"
DIR = "jnl"
SEG = 9  # records a segment file: 27 bytes keep each commit at 64 bytes
DIR_RECS = 50  # records a directory takes: 6 segments' commits fill ~3.9 KB of its 4 KB block
SLACK = 3  # room kept beyond a visit's darts and its `next` (an undo or two)


def _ls(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _rmtree(path):
    for name in _ls(path):
        try:
            os.remove(path + "/" + name)
        except OSError:
            pass
    try:
        os.rmdir(path)
    except OSError:
        pass


class Store:
    """The journal of the game in play. `write(data)` stores it whole,
    `append(rec)` one record, `boundary(room)` is called where no dart of a
    visit can follow (a new directory is begun there if needed)."""

    def __init__(self):
        self.tok = ""
        self.recs = 0  # records stored (the next one's index)
        self.dir = None  # the directory records go into, and how many it holds
        self.dir_recs = 0
        self.seg = None  # the segment being filled: its path and content
        self.seg_data = b""

    def load(self):
        """game.jnl and its segments -> (bytes of game.jnl, records after it, clean),
        or None without a game. Stale directories (of a replaced file) go."""
        data = store.read(GAME)
        if data is None:
            self._clear()
            return None
        tok = "%08x" % (binascii.crc32(data) & 0xFFFFFFFF)
        self.tok = tok
        dirs = []
        for name in _ls(DIR):
            if name.startswith(tok + "."):
                dirs.append((int(name[9:]), name))
            else:
                _rmtree(DIR + "/" + name)
        dirs.sort()
        recs = bytearray()
        self.dir = None
        for d, name in dirs:
            segs = sorted(int(s) for s in _ls(DIR + "/" + name))
            self.dir = DIR + "/" + name
            self.dir_recs = 0
            for s in segs:
                with open(self.dir + "/%d" % s, "rb") as f:
                    part = f.read()
                recs.extend(part)
                self.dir_recs += len(part) // journal.REC
                self.seg = self.dir + "/%d" % s
                self.seg_data = part
        return data, bytes(recs)

    def start(self, nrecs):
        """After load and replay: records 0..nrecs-1 are stored."""
        self.recs = nrecs
        if self.seg is not None and len(self.seg_data) >= SEG * journal.REC:
            self.seg = None

    def write(self, data, nrecs, put):
        """The whole journal (nrecs records) replaces what is stored; put(path, data)
        is the board's power-safe write."""
        tok = "%08x" % (binascii.crc32(data) & 0xFFFFFFFF)
        if tok == self.tok:
            # the same bytes again (a new game like the last one): its
            # segments would pass for the new game's, so they go first (a
            # cut then leaves this very file, without them: the new game)
            self.tok = ""
            self._clear()
        put(GAME, data)
        self.tok = tok
        self.recs = nrecs
        self._clear()
        self._new_dir()  # here, not at the next dart: it costs an erase

    def _clear(self):
        for name in _ls(DIR):
            if not name.startswith(self.tok + ".") or not self.tok:
                _rmtree(DIR + "/" + name)
        self.dir = None
        self.seg = None
        self.seg_data = b""
        self.dir_recs = 0

    def append(self, rec, save):
        """One record; save(path, data) rewrites a small file in one commit."""
        if self.dir is None or self.dir_recs >= DIR_RECS:
            self._new_dir()  # only mid-visit after many undos: boundary() keeps room
        if self.seg is None:
            self.seg = self.dir + "/%d" % self.recs
            self.seg_data = b""
        data = self.seg_data + rec
        save(self.seg, data)
        self.seg_data = data
        self.recs += 1
        self.dir_recs += 1
        if len(data) >= SEG * journal.REC:
            self.seg = None

    def boundary(self, visit):
        """No dart of a visit can come now: begin a new directory if the
        current one could not take a visit of `visit` darts, its `next` and slack."""
        if self.dir is None or self.dir_recs + visit + 1 + SLACK > DIR_RECS:
            self._new_dir()

    def _new_dir(self):
        try:
            os.mkdir(DIR)
        except OSError:
            pass
        d = DIR + "/%s.%d" % (self.tok, self.recs)
        try:
            os.mkdir(d)
        except OSError:
            pass
        self.dir = d
        self.dir_recs = 0
        self.seg = None
        self.seg_data = b""

# Where the game journal lives on littlefs, so that a dart costs the flash
# one small metadata commit: no erase, no block allocation, no path lookup.
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
# instead, and syncing one is a single metadata commit (lfs2_file_sync_:
# the whole inline content and the mtime attribute, programmed into the
# block's erased tail, atomic: old or new content after a cut). A commit is
# 64 bytes for up to 28 bytes of content, so records go in segments of at
# most 9 (27 bytes).
#
# The segment in use is kept open: a record is a write and a flush
# (MP_STREAM_FLUSH is lfs2_file_sync in extmod/vfs_lfsx_file.c), and the
# commit goes to the metadata pair the open file already holds, so a dart
# reads almost nothing and looks up no path. Opening a segment (a path
# lookup and a create commit) and beginning a directory (a block pair
# allocated and erased: lfs2_dir_alloc, then a compaction) are done at
# boundary(), which the game calls at `next`: the player change, where the
# thrower's darts are being pulled and no dart of a visit can come.
# A directory's metadata block is erased only when full (compaction); a
# fresh one holds about 54 records' commits, so a new one is begun at a
# boundary whenever the current one could not take a whole visit more.
#
#   game.jnl            header + records 0..n-1 (journal.encode), written whole
#   jnl/<tok>.<d>/<s>   records s.. (_SEG, up to SEG_MAX), in the directory begun at record d;
#                       tok = crc32 of game.jnl, so segments of a replaced file are stale

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import binascii
import os

from shove import store

GAME = "game.jnl"
DIR = "jnl"
_SEG = const(9)  # records a segment is planned for: 27 bytes keep each commit at 64 bytes
SEG_MAX = 16  # ... and takes in a visit longer than planned (undos): 96-byte commits, no path lookup
DIR_RECS = 50  # records a directory takes: 6 segments' commits fill ~3.9 KB of its 4 KB block
_SLACK = const(3)  # room kept beyond a visit's darts and its `next` (an undo or two)


def ls(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def rmtree(path):
    for name in ls(path):
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
    `append(rec)` one record, `boundary(visit)` is called where no dart of a
    visit can follow (the next segment and directory are made there)."""

    def __init__(self):
        self.tok = ""
        self.recs = 0  # records stored (the next one's index)
        self.dir = None  # the directory records go into, and how many it holds
        self.dir_recs = 0
        self.f = None  # the open segment, and the records it holds
        self.seg_n = 0

    # reading a stored journal back (a start-up's) is shove/loading.py's
    # load_journal: start-up code, let go once the App runs
    def start(self, nrecs):
        """After load_journal and replay: records 0..nrecs-1 are stored (the next
        record opens a segment of its own)."""
        self.recs = nrecs

    def close(self):
        f = self.f
        self.f = None
        if f is not None:
            try:
                f.close()  # synced at every record: nothing left to write
            except OSError:
                pass

    def write(self, data, nrecs, put):
        """The whole journal (nrecs records) replaces what is stored; put(path, data)
        is the board's power-safe write."""
        self.close()
        tok = "%08x" % (binascii.crc32(data) & 0xFFFFFFFF)
        if tok == self.tok:
            # the same bytes again (a new game like the last one): its
            # segments would pass for the new game's, so they go first (a
            # cut then leaves this very file, without them: the new game)
            self.tok = ""
            self.clear()
        put(GAME, data)
        self.tok = tok
        self.recs = nrecs
        self.clear()
        self._new_dir()  # here, not at the next dart: it costs an erase
        self._open()

    def clear(self):
        """No segments but the journal's in use (none without one)."""
        self.close()
        for name in ls(DIR):
            if not name.startswith(self.tok + ".") or not self.tok:
                rmtree(DIR + "/" + name)
        self.dir = None
        self.dir_recs = 0

    def append(self, rec, sync):
        """One record; sync(f, data) writes it to the open segment and syncs
        it (one commit). A segment or directory opened here, not at a
        boundary, is the overflow of a visit longer than planned."""
        if self.dir is None or self.dir_recs >= DIR_RECS:
            self._new_dir()  # only mid-visit after many undos or breaks
        if self.f is None:
            self._open()
        try:
            sync(self.f, rec)
        except OSError:
            self.close()  # the next record starts a segment of its own
            raise
        self.recs += 1
        self.dir_recs += 1
        self.seg_n += 1
        if self.seg_n >= SEG_MAX:
            self.close()

    def boundary(self, visit):
        """No dart of a visit can come now: make sure a visit of `visit` darts,
        its `next` and some slack go into the open segment and directory
        without opening or making anything."""
        need = visit + 1 + _SLACK
        if self.dir is None or self.dir_recs + need > DIR_RECS:
            self._new_dir()
        if self.f is not None and self.seg_n + visit + 1 > _SEG:
            self.close()
        if self.f is None:
            self._open()

    def _open(self):
        # "wb": created empty (a commit), or a leftover empty one truncated
        self.f = open(self.dir + "/%d" % self.recs, "wb")
        self.seg_n = 0

    def _new_dir(self):
        self.close()
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

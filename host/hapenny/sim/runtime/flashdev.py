# The virtual board's flash: the ESP32's "vfs" partition as a block device
# over an image file in the board's folder, with MicroPython's own littlefs
# (vfs.VfsLfs2) on it, mounted the way the ESP32 port mounts it. Every
# erase, program and read is counted, so the board's flash time comes from
# what littlefs really does.
#
# Geometry and settings, as on a stock ESP32_GENERIC (4 MiB) image
# (MicroPython sources, v1.29.0-preview):
# - ports/esp32/partitions-4MiBplus.csv ends the app partition at 0x200000 and
#   ports/esp32/main.c adds a "vfs" partition from there to the end of flash:
#   2 MiB, 512 blocks;
# - ports/esp32/esp32_partition.c: blocks of 4096 bytes (NATIVE_BLOCK_SIZE_BYTES,
#   the flash's erase sector), readblocks/writeblocks with an offset (the
#   extended protocol: writeblocks(n, buf, off) only programs) and ioctl 6
#   erasing one sector (esp_partition_erase_range);
# - ports/esp32/modules/_boot.py mounts it with vfs.mount(bdev, "/"), and
#   inisetup.py makes it with vfs.VfsLfs2.mkfs(bdev): so littlefs's defaults
#   from extmod/vfs_lfs.c apply: readsize 32, progsize 32, lookahead 32,
#   mtime on; extmod/vfs_lfsx.c: block_cycles 100, cache 128 bytes.
#
# NOR flash semantics: an erase sets a sector to 0xFF; a program can only
# clear bits (new = old & data). A power cut (cut_in) lands inside one
# operation: a program leaves its first part programmed and the rest as it
# was, an erase its first half erased and the rest old.
import os

BLOCK = 4096
BLOCKS = 512
PAGE = 256  # the flash's program page: a program costs one page-program time a page it touches
IMAGE = "flash.img"


class PowerCut(Exception):
    """Raised inside a block-device operation when the power goes (tests)."""


class FlashDev:
    def __init__(self, path, blocks=BLOCKS):
        try:
            os.stat(path)
        except OSError:
            with open(path, "wb") as f:  # an erased chip
                row = b"\xff" * BLOCK
                for _ in range(blocks):
                    f.write(row)
        self.f = open(path, "r+b")
        self.blocks = blocks
        self.erases = 0
        self.per_block = bytearray(blocks)  # erases by block since start (at most 255): wear levelling
        self.programs = 0  # program operations
        self.pages = 0  # 256-byte pages they touched
        self.prog_bytes = 0
        self.reads = 0
        self.read_bytes = 0
        self.clock = None  # the board: flash_begin() / flash_end(kind, n, pages) around each op
        self.cut_in = 0  # > 0: the power goes in the middle of that many-th erase or program from now
        self.on_cut = None  # called at the cut (the board holds there until the host cuts the power)
        # no allocation in an operation: the heap the firmware's collections
        # are counted on is the board's, and these are the simulator's
        self._tmp = bytearray(PAGE)
        # littlefs programs whole 32-byte units (lfs2_bd_prog), the simple
        # protocol whole blocks: a view of _tmp for every multiple of 16 up to
        # a page, made now (a file closed by its finaliser programs while the
        # heap is locked)
        self._views = {}
        for k in range(16, PAGE + 1, 16):
            self._views[k] = memoryview(self._tmp)[:k]
        self._ff = b"\xff" * PAGE  # an erase writes it a page at a time: the heap is the board's
        self.dead = False  # after a cut: nothing of the old run reaches the flash (finalizers)

    def _at(self, n, off):
        self.f.seek(n * BLOCK + off)

    def readblocks(self, n, buf, off=0):
        if self.dead:
            raise OSError(5)
        c = self.clock
        if c:
            c.flash_begin()
        self._at(n, off)
        self.f.readinto(buf)
        self.reads += 1
        self.read_bytes += len(buf)
        if c:
            c.flash_end(0, len(buf), 0)

    def _cut(self):
        if self.cut_in > 0:
            self.cut_in -= 1
            return self.cut_in == 0
        return False

    def _power_cut(self):
        self.f.flush()
        self.dead = True
        if self.on_cut:
            self.on_cut()
        raise PowerCut()

    def _begin(self):
        """A program or an erase starts: refused once the power is gone, timed
        by the board's clock; True if the power is cut inside it."""
        if self.dead:
            raise OSError(5)
        if self.clock:
            self.clock.flash_begin()
        return self._cut()

    def writeblocks(self, n, buf, off=None):
        if off is None:  # the simple protocol: erase, then program (esp32_partition.c)
            for i in range(len(buf) // BLOCK):
                self.ioctl(6, n + i)
            off = 0
        c = self.clock
        cut = self._begin()
        ln = len(buf)
        if cut:
            ln //= 2  # the first part programmed, the rest untouched
        pos = 0
        t = self._tmp
        while pos < ln:  # NOR: programming only clears bits
            k = ln - pos if ln - pos < PAGE else PAGE
            self._at(n, off + pos)
            mv = self._views.get(k)
            if mv is None:
                mv = self._views[k] = memoryview(t)[:k]
            self.f.readinto(mv)
            for i in range(k):
                t[i] &= buf[pos + i]
            self._at(n, off + pos)
            self.f.write(mv)
            pos += k
        if cut:
            self._power_cut()
        pages = (off + len(buf) - 1) // PAGE - off // PAGE + 1 if len(buf) else 0
        self.programs += 1
        self.pages += pages
        self.prog_bytes += len(buf)
        if c:
            c.flash_end(2, len(buf), pages)

    def ioctl(self, op, arg):
        if op == 4:  # MP_BLOCKDEV_IOCTL_BLOCK_COUNT
            return self.blocks
        if op == 5:  # MP_BLOCKDEV_IOCTL_BLOCK_SIZE
            return BLOCK
        if op == 6:  # MP_BLOCKDEV_IOCTL_BLOCK_ERASE
            c = self.clock
            cut = self._begin()
            self._at(arg, 0)
            for _ in range((BLOCK // 2 if cut else BLOCK) // PAGE):
                self.f.write(self._ff)
            if cut:
                self._power_cut()
            self.erases += 1
            if self.per_block[arg] < 255:
                self.per_block[arg] += 1
            if c:
                c.flash_end(1, BLOCK, 0)
            return 0
        if op == 3:  # sync
            self.f.flush()
        return 0

    def counts(self):
        return {"erases": self.erases, "programs": self.programs, "pages": self.pages,
                "prog_bytes": self.prog_bytes, "reads": self.reads, "read_bytes": self.read_bytes}


def mount(path, where="/"):
    """The board's flash at `where`, made (mkfs) on a blank or unreadable image
    as inisetup.py does on the chip. Returns the block device."""
    import vfs

    dev = FlashDev(path)
    try:
        fs = vfs.VfsLfs2(dev)
    except OSError:
        vfs.VfsLfs2.mkfs(dev)
        fs = vfs.VfsLfs2(dev)
    vfs.mount(fs, where)
    DEV[:] = [dev]
    return dev


_host = []
DEV = []  # the board's block device once mounted (the board layer counts through it)


def host_open(path, mode="rb"):
    """A file of the host (the simulator's pipes, /proc), with the flash at "/"."""
    if not _host:
        return open(path, mode)
    return _host[0].open(path, mode)


def mount_root(image=IMAGE):
    """The image in the current (host) folder becomes the board's "/", as
    on the chip; nothing of the host stays mounted."""
    import vfs

    path = os.getcwd().rstrip("/") + "/" + image
    host = vfs.VfsPosix("/")
    dev = FlashDev(path)
    vfs.umount("/")
    _host.append(host)
    try:
        fs = vfs.VfsLfs2(dev)
    except OSError:
        vfs.VfsLfs2.mkfs(dev)
        fs = vfs.VfsLfs2(dev)
    vfs.mount(fs, "/")
    os.chdir("/")
    DEV.append(dev)
    return dev

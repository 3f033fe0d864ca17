# A ROMFS partition for a virtual board started with one (HAPENNY_ROMFS=1, over
# romfs.img in its folder): what a custom ESP32 image with MICROPY_VFS_ROM has, which no stock
# image does. As there (MicroPython v1.29.0-preview):
# - ports/esp32/esp32_partition.c: vfs.rom_ioctl(1) counts the ROMFS
#   partitions (1, or 0 without one), rom_ioctl(2, 0) gives the partition
#   object (readblocks, writeblocks with an offset, ioctl 4/5 its blocks and
#   their size, ioctl 6 erasing one 4 KB sector), anything else -EINVAL;
#   ports/esp32/partitions-4MiB-romfs.csv gives it 0x20000 bytes (the virtual board a quarter more: sim/board.py ROMFS_SIZE);
# - py/runtime.c's mp_init mounts a valid image at /rom (extmod/vfs.c,
#   mp_vfs_mount_romfs_protected) and puts "/rom" and "/rom/lib" on sys.path
#   after ".frozen", before main.c's "/lib" (so the flash's "" still comes
#   first); a new image is seen from the next start on.
# The unix port has vfs.VfsRom but not rom_ioctl, so `vfs` is this module's
# copy of it with rom_ioctl added (sys.modules, as vboot.py does for
# `micropython`). The image (not the whole partition) is read into the heap
# here; on the chip it is flash mapped into the address space.
import sys

import vfs as _vfs

BLOCK = 4096
IMAGE = "romfs.img"
HEADER = b"\xd2\xcd\x31"  # a ROMFS image begins so (mpremote's VfsRomWriter.ROMFS_HEADER)
EINVAL = 22


class Partition:
    """The partition over its image file: NOR semantics (an erase sets 0xFF,
    a write only clears bits), as the ESP32's flash."""

    def __init__(self, path):
        self.f = open(path, "r+b")
        self.f.seek(0, 2)
        self.blocks = self.f.tell() // BLOCK

    def _at(self, n, off):
        self.f.seek(n * BLOCK + off)

    def readblocks(self, n, buf, off=0):
        self._at(n, off)
        self.f.readinto(buf)

    def writeblocks(self, n, buf, off=None):
        if off is None:  # the simple protocol erases the blocks it writes first (esp32_partition.c)
            for k in range((len(buf) + BLOCK - 1) // BLOCK):
                self.ioctl(6, n + k)
            off = 0
        old = bytearray(len(buf))
        self.readblocks(n, old, off)
        for i in range(len(buf)):
            old[i] &= buf[i]
        self._at(n, off)
        self.f.write(old)
        self.f.flush()

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return BLOCK
        if op == 6:
            self._at(arg, 0)
            self.f.write(b"\xff" * BLOCK)
            self.f.flush()
            return 0
        return None


_part = []


def rom_ioctl(op, *args):
    if op == 1:
        return len(_part)
    if op == 2 and _part:
        return _part[0]
    return -EINVAL


def setup(path=IMAGE):
    """At start-up, before the flash hides the host's files: the partition,
    and its image at /rom if the image is valid."""
    _part.append(Partition(path))
    me = sys.modules[__name__]
    for name in ("VfsRom", "VfsLfs2", "VfsPosix", "mount", "umount"):
        setattr(me, name, getattr(_vfs, name))
    sys.modules["vfs"] = me
    with open(path, "rb") as f:
        head = f.read(8)
        if head[:3] != HEADER:
            return
        # only the image, not the partition: the heap holds what the chip maps from flash
        n, i = 0, 3
        while i < len(head):
            n = n << 7 | head[i] & 0x7F
            i += 1
            if not head[i - 1] & 0x80:
                break
        f.seek(0)
        data = f.read(i + n)
    try:  # as mp_vfs_mount_romfs_protected: an image it cannot mount is no ROMFS, not a failed start
        _vfs.mount(_vfs.VfsRom(data), "/rom")
    except Exception:
        return
    i = sys.path.index(".frozen") + 1
    sys.path[i:i] = ["/rom", "/rom/lib"]

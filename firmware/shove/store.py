# Power-safe files: write a temporary file, then rename it over the old one,
# so a power cut leaves either the old or the new content, never half.
# A `.tmp` file may be torn (the cut came while it was written), so it never
# becomes the file.
import os

TMP = ".tmp"


def write_atomic(path, data, pause=None):
    """`pause` (the virtual board's flash model) is called where the chip
    spends its time: halfway through the data and before the rename, so a
    power cut can land in either."""
    tmp = path + TMP
    with open(tmp, "wb") as f:
        if pause is None:
            f.write(data)
        else:
            half = len(data) // 2
            f.write(data[:half])
            f.flush()
            pause()
            f.write(data[half:])
    # closed (which writes the data out) before the rename
    if pause is not None:
        pause()
    # the board's littlefs replaces an existing file in one step
    # (lib/littlefs/lfs2.h, lfs2_rename), so the file is old or new, never
    # missing; no fallback is needed for a rename refused over a file:
    # MicroPython's FAT removes the old one itself (extmod/vfs_fat.c,
    # fat_vfs_rename on FR_EXIST), and POSIX replaces as littlefs does
    os.rename(tmp, path)


def append(path, data):
    """Add bytes at the end of a file and make them durable before returning."""
    with open(path, "ab") as f:
        f.write(data)
    # closed, so written out, before returning


def read(path):
    """Contents, or None if there is no such file."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def remove(path):
    for p in (path, path + TMP):
        try:
            os.remove(p)
        except OSError:
            pass


def quarantine(path):
    """Keep a damaged file for inspection as PATH.bad, out of the way."""
    try:
        os.rename(path, path + ".bad")
    except OSError:
        remove(path)

# Power-safe files: write a temporary file, then rename it over the old one,
# so a power cut leaves either the old or the new content, never half.
# A `.tmp` file may be torn (the cut came while it was written), so it never
# becomes the file; only a `.ok` file, renamed from a complete `.tmp`, does.
import os

TMP = ".tmp"
OK = ".ok"


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


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
        if hasattr(f, "flush"):
            f.flush()
    if pause is not None:
        pause()
    try:
        os.rename(tmp, path)  # littlefs replaces the old file in one step
    except OSError:
        # filesystems that refuse to rename over a file (FAT): mark the new
        # content complete, then the old file goes; read() finishes the
        # replace from the `.ok` if cut between the two
        os.rename(tmp, path + OK)
        os.remove(path)
        os.rename(path + OK, path)


def append(path, data):
    """Add bytes at the end of a file and make them durable before returning."""
    with open(path, "ab") as f:
        f.write(data)
        if hasattr(f, "flush"):
            f.flush()


def read(path):
    """Contents, or None if there is no such file. Finishes an interrupted replace."""
    if not _exists(path) and _exists(path + OK):
        os.rename(path + OK, path)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def remove(path):
    for p in (path, path + TMP, path + OK):
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

# The host's way into a virtual board's flash image (run by the MicroPython
# unix port, so the files go through the same littlefs as on the board):
#   flashtool.py IMAGE put SRC [PRUNE]   copy SRC's files in (a file under SRC/.ifmissing
#                                        only where the flash has none); PRUNE: a folder of
#                                        the flash whose files SRC does not have are removed
#   flashtool.py IMAGE get DEST          copy every file out into DEST
#   flashtool.py IMAGE ls                every file's path and size, a line each (none read)
# Never while the board runs: one writer at a time, as on the chip.
import os
import sys

import flashdev

F = "/flash"
IFMISSING = ".ifmissing"


def walk(top, rel="", sizes=None):
    # ilistdir gives each entry's type and size from the directory itself:
    # no path looked up again for each (a stat would)
    for e in os.ilistdir(top + ("/" + rel if rel else "")):
        r = rel + "/" + e[0] if rel else e[0]
        if e[1] & 0x4000:
            yield from walk(top, r, sizes)
        else:
            if sizes is not None:
                sizes[r] = e[3]
            yield r


def makedirs(path):
    parts = path.split("/")
    for i in range(2, len(parts)):
        d = "/".join(parts[:i])
        try:
            os.mkdir(d)
        except OSError:
            pass


def copy(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    makedirs(dst)
    with open(dst, "wb") as f:
        f.write(data)


def exists(p):
    try:
        os.stat(p)
        return True
    except OSError:
        return False


def put(src, prune=None):
    names = set()
    for r in walk(src):
        if r == IFMISSING + ".remove":
            continue
        if r.startswith(IFMISSING + "/"):
            dst = F + "/" + r[len(IFMISSING) + 1:]
            if not exists(dst):
                copy(src + "/" + r, dst)
            continue
        names.add(r)
        copy(src + "/" + r, F + "/" + r)
    try:
        with open(src + "/" + IFMISSING + ".remove") as f:
            gone = [x for x in f.read().split("\n") if x]
    except OSError:
        gone = []
    for r in gone:
        try:
            os.remove(F + "/" + r)
        except OSError:
            pass
    if prune and exists(F + "/" + prune):
        for r in list(walk(F, prune)):
            if r not in names:
                os.remove(F + "/" + r)


def get(dest):
    for r in walk(F):
        makedirs(dest + "/" + r)
        copy(F + "/" + r, dest + "/" + r)


def main():
    image, op = sys.argv[1], sys.argv[2]
    flashdev.mount(image, F)
    if op == "put":
        put(sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    elif op == "get":
        get(sys.argv[3])
    elif op == "ls":
        sizes = {}
        for r in walk(F, "", sizes):
            print("%d %s" % (sizes[r], r))
    else:
        raise SystemExit("unknown op " + op)


main()

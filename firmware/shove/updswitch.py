# An update over the network (shove/update.py) left whole and checked in
# upd/ with its marker upd.go, moved into place by boot.py before anything
# else of the firmware runs: stale files removed, each staged file renamed
# over the old one (littlefs: in one step), upd.go removed last. A cut in
# the middle leaves upd.go, so the next start finishes the moves. Loaded
# only when upd.go is there: in boot.py its code and names would sit in the
# heap of every start.


def run():
    """The staged update moved into place (boot.py, when upd.go is there)."""
    import os

    try:
        os.stat("upd.go")
    except OSError:
        return
    try:
        with open("upd/.remove") as f:
            gone = f.read().split("\n")
        for p in gone:
            if (p[:6] == "shove/" or p[:4] == "web/") and ".." not in p:  # the firmware's files only
                try:
                    os.remove(p)
                except OSError:
                    pass
        os.remove("upd/.remove")
    except OSError:
        pass

    def move(d):
        for e in list(os.ilistdir("upd" + d)):
            p = d + "/" + e[0]
            if e[1] == 0x4000:
                try:
                    os.mkdir(p[1:])
                except OSError:
                    pass
                move(p)
                os.rmdir("upd" + p)
            elif e[0].endswith(".part"):
                os.remove("upd" + p)
            else:
                os.rename("upd" + p, p[1:])

    try:
        os.stat("upd")
    except OSError:  # a cut came after the last move: only the marker is left
        pass
    else:
        move("")  # an error here (a flash that refuses) leaves upd.go: the board starts safe and says why
        os.rmdir("upd")
    try:
        os.remove("boots")  # new firmware gets a fresh start, as after a deploy over USB
    except OSError:
        pass
    os.remove("upd.go")

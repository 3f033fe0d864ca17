# MicroPython: the firmware's own App on MicroPython's littlefs over the
# counting block device (host/hapenny/sim/runtime/flashdev.py), as the
# virtual board runs it, without the simulator around it.
#   flash_game_mp.py DIR wear DARTS SEED   a long game: what the flash did per dart
#   flash_game_mp.py DIR cuts N SEED       N power cuts at random block-device operations
# Prints one JSON line.
import json
import os
import random
import sys
import vfs

import flashdev

DIR, MODE, N, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
random.seed(SEED)
F = "/f"
SEGS = ["S%d" % n for n in range(1, 21)] + ["D%d" % n for n in range(1, 21)] + ["T%d" % n for n in range(1, 21)]
SEGS += ["SB", "DB"]


class Out:
    def __init__(self):
        self.lines = []

    def write(self, s):
        self.lines.append(s)


def boot(install):
    """Power on: mount (as the boot ROM does), then the firmware's App."""
    dev = flashdev.mount(DIR + "/flash.img", F)
    os.chdir(F)
    if install:
        with open(DIR + "/profile.json", "rb") as f:
            data = f.read()
        with open("profile.json", "wb") as f:
            f.write(data)
    from shove import app

    out = Out()
    a = app.App(out=out)
    return dev, a, out


def power_off():
    os.chdir("/")
    try:
        vfs.umount(F)
    except OSError:
        pass


def request(a, out, line):
    """A request; True once its ok reply went out (acknowledged)."""
    out.lines = []
    a.commands.handle_line(line.encode() if isinstance(line, str) else line)  # as the port gives it: bytes
    a.tx.drain()
    return any('"ok":true' in s or '"ok": true' in s for s in out.lines)


def next_line(a):
    g = a.keeper.game
    from shove import rules

    if g is None or g.phase == rules.OVER:
        return '{"cmd":"new","id":1,"players":["Ann","Bob"],"rules":{"marks":9,"beds":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}}'
    if g.phase == rules.HOLD:
        return '{"cmd":"next","id":2}'
    if g.moves() and random.random() < 0.03:
        return '{"cmd":"undo","id":3}'
    return '{"cmd":"throw","id":4,"seg":"%s"}' % random.choice(SEGS)


def snapshot(a):
    from shove import journal

    return journal.encode(a.keeper.game) if a.keeper.game else None


def flash_us(dev, was, worst):
    """The flash's busy time (the CPU stalled) for what `dev` did since the
    counts `was`, at the board's typical or worst-case datasheet timings
    (shove/boards/virtual_flash.py)."""
    from shove.boards import virtual_flash as vf

    now = dev.counts()
    d = {k: now[k] - was[k] for k in now}
    e, p = (vf.ERASE_MAX_US, vf.PAGE_MAX_US) if worst else (vf.ERASE_TYP_US, vf.PAGE_TYP_US)
    return d["erases"] * e + d["pages"] * p + d["reads"] * vf.READ_CALL_US + d["read_bytes"] // vf.READ_BYTES_PER_US


def wear():
    dev, a, out = boot(True)
    e_start = dev.erases  # the firmware's own files, written at the first boot, are not the game's
    from shove import rules

    # sums and maxima, not lists: a list of thousands grows into blocks a
    # fragmented heap may not have
    per_block = bytes(dev.per_block)  # the firmware's own files, written at the first boot
    t = {"darts": 0, "erases_on_darts": 0, "mid_visit_erases": 0, "prog_bytes": 0, "pages": 0,
         "max_dart_erases": 0, "reads": 0, "max_dart_reads": 0, "nexts": 0, "erases_on_nexts": 0,
         # the longest the flash kept the CPU stalled in one request inside a visit (a dart or
        # an undo) and at a player change, typical and worst case,
         # and what the flash did in it
         "max_visit_flash_us": [0, 0], "max_next_flash_us": [0, 0], "max_visit_ops": None, "max_next_ops": None}
    while t["darts"] < N:
        line = next_line(a)
        e0, p0, b0, r0 = dev.erases, dev.pages, dev.prog_bytes, dev.reads
        was = dev.counts()
        assert request(a, out, line), out.lines
        e = dev.erases - e0
        # a dart or an undo comes inside a visit (another dart may follow within 250 ms)
        key = "next" if '"next"' in line else "visit" if '"throw"' in line or '"undo"' in line else None
        if key:
            top = t["max_%s_flash_us" % key]
            typ = flash_us(dev, was, False)
            if typ > top[0]:
                now = dev.counts()
                t["max_%s_ops" % key] = {k: now[k] - was[k] for k in now}
            top[0] = max(top[0], typ)
            top[1] = max(top[1], flash_us(dev, was, True))
        if '"throw"' in line:
            t["darts"] += 1
            t["erases_on_darts"] += e
            if a.keeper.game and a.keeper.game.phase == rules.PLAY:
                t["mid_visit_erases"] += e  # a dart may follow soon
            t["prog_bytes"] += dev.prog_bytes - b0
            t["pages"] += dev.pages - p0
            t["reads"] += dev.reads - r0
            t["max_dart_erases"] = max(t["max_dart_erases"], e)
            t["max_dart_reads"] = max(t["max_dart_reads"], dev.reads - r0)
        elif '"next"' in line:
            t["nexts"] += 1
            t["erases_on_nexts"] += e
    t["erases"] = dev.erases - e_start
    game = [dev.per_block[i] - per_block[i] for i in range(flashdev.BLOCKS)]  # the game's erases, by block
    t["blocks_erased"] = sum(1 for c in game if c)
    t["most_erases_on_a_block"] = max(game)
    t["reads_per_dart"] = t.pop("reads") / t["darts"]
    print(json.dumps(t))


def expected_after(want, line):
    """What the request in `line` makes of the journal `want` (None: a new game)."""
    from shove import journal, segments

    if want is None or '"new"' in line:
        return None
    g = journal.decode(want)[0]
    if '"throw"' in line:
        g.throw(segments.encode(line.split('"seg":"')[1].split('"')[0]))
    elif '"next"' in line:
        g.next()
    else:
        g.undo()
    return journal.encode(g)


def cuts():
    dev, a, out = boot(True)
    lost = []
    done = 0
    kinds = {}
    while done < N:
        want = snapshot(a)
        line = next_line(a)
        dev.cut_in = random.randint(1, 12)
        try:
            request(a, out, line)
        except flashdev.PowerCut:
            pass
        if not dev.dead:  # (a cut inside a `with` block surfaces as the closing file's error)
            dev.cut_in = 0
            continue
        done += 1
        kind = line.split('"cmd":"')[1].split('"')[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        power_off()
        dev, a, out = boot(False)
        got = snapshot(a)
        if got == want:
            continue
        after = expected_after(want, line)
        if after is None and a.keeper.game is not None and a.keeper.game.moves() == 0:
            continue  # the new game the cut request asked for
        if got != after:
            lost.append([kind, len(want or b""), len(got or b""), a.notices[:1]])
    print(json.dumps({"cuts": done, "lost": len(lost), "examples": lost[:3], "kinds": kinds}))


wear() if MODE == "wear" else cuts()

# The computer player under MicroPython: time a dart's decision takes, heap
# the modules and a player hold, garbage a decision makes. One JSON line.
import gc
import json
import time

gc.collect()
base = gc.mem_alloc()
from shove import protocol, rules, scanner, segments  # noqa: E402,F401  (the board has these loaded anyway)

gc.collect()
base = gc.mem_alloc()
from shove import cpu, throwing  # noqa: E402

gc.collect()
code_bytes = gc.mem_alloc() - base
from shove import coach  # noqa: E402

gc.collect()
coach_bytes = gc.mem_alloc() - base - code_bytes


def scenario(name, players, variant, over, level, darts, left=0, mixed=False):
    g = rules.new_game(players, None, variant, over)
    if left:  # every side `left` marks from closing each bed: every hit has surplus
        for i in range(len(g.marks)):
            g.marks[i] = g.rules.marks - left
    if mixed:  # the thrower one mark from each bed, the others one to three marks by bed and side:
        # no two beds alike and a treble gifts more than a double (no value can be reused)
        nb = g.nb
        for s in range(1, g.n):
            for i in range(nb):
                g.marks[s * nb + i] = (i + 2 * s) % 3
    p = cpu.Player(level)
    f = throwing.face(throwing.DEFAULT_FACE)
    rng = throwing.Rng(1)
    for _ in range(darts):  # play into the game first
        if g.phase == rules.HOLD:
            g.next()
        if g.phase == rules.OVER:
            break
        g.throw(throwing.throw(f, p.sigma, p.choose(g), rng))
    if g.phase == rules.HOLD:
        g.next()
    p.choose(g)  # tables for these rules made once
    gc.collect()
    held = gc.mem_alloc()
    t = time.ticks_us()
    worst = 0
    best = 1 << 30
    n = 10
    for _ in range(n):
        t0 = time.ticks_us()
        p.choose(g)
        d = time.ticks_diff(time.ticks_us(), t0)
        worst = max(worst, d)
        best = min(best, d)
    avg = time.ticks_diff(time.ticks_us(), t) / n
    gc.collect()
    a0 = gc.mem_alloc()
    gc.disable()
    p.choose(g)
    garbage = gc.mem_alloc() - a0
    gc.enable()
    gc.collect()
    return {"scenario": name, "level": level, "us": round(avg), "us_best": best, "us_worst": worst, "garbage_bytes": garbage,
            "retained_bytes": gc.mem_alloc() - held}


def player_bytes(level):
    gc.collect()
    a = gc.mem_alloc()
    p = cpu.Player(level)
    g = rules.new_game(["A", "B"])
    p.choose(g)
    gc.collect()
    b = gc.mem_alloc()
    del g
    gc.collect()
    c = gc.mem_alloc()
    return b - a, c - a, p


rows = []
for level in (1, 3, 6):
    rows.append(scenario("classic, 2 players, opening", ["A", "B"], "classic", None, level, 0))
    rows.append(scenario("classic, 2 players, mid-game", ["A", "B"], "classic", None, level, 20))
rows.append(scenario("extended, 8 players", ["P%d" % i for i in range(8)], "extended", None, 1, 30))
rows.append(scenario("21 beds, 9 marks, 8 players, gift all", ["P%d" % i for i in range(8)], "classic",
                     {"beds": list(range(1, 21)) + [25], "marks": 9, "gift": "all"}, 1, 30))
rows.append(scenario("21 beds, 8 players, gift all, one mark from closing everything", ["P%d" % i for i in range(8)],
                     "classic", {"beds": list(range(1, 21)) + [25], "gift": "all"}, 1, 0, left=1))
rows.append(scenario("21 beds, 8 players, gift all, one mark from closing everything, the others 1 to 3",
                     ["P%d" % i for i in range(8)], "classic", {"beds": list(range(1, 21)) + [25], "gift": "all"},
                     1, 0, left=1, mixed=True))
with_game, player, _ = player_bytes(1)
print(json.dumps({"code_heap_bytes": code_bytes, "coach_heap_bytes": coach_bytes, "player_heap_bytes": player,
                  "decisions": rows}))

# The referee under MicroPython: darts per second, and heap bytes a whole
# game holds (rules, sides, marks, undo records, journal), via gc.mem_alloc().
import gc
import json
import time

from shove import rules, segments

SEGS = [segments.encode(s) for s in ("T1", "S2", "D3", "T4", "S5", "D6", "T7", "S8", "D9", "S20", "MISS", "SB")]


def play_out(players, variant, ring):
    """A game played dart by dart to its win, on the first open bed."""
    g = rules.new_game(players, None, variant)
    darts = 0
    while g.phase != rules.OVER:
        if g.phase == rules.HOLD:
            g.next()
            continue
        a = g.turn
        for bi, bed in enumerate(g.rules.beds):
            if g.need(a, bi):
                g.throw(segments.encode(ring + str(bed)))
                darts += 1
                break
    return g, darts


def memory(players, variant):
    gc.collect()
    base = gc.mem_alloc()
    g = rules.new_game(players, None, variant)
    gc.collect()
    fresh = gc.mem_alloc() - base
    del g
    gc.collect()
    base = gc.mem_alloc()
    g, darts = play_out(players, variant, "S")
    gc.collect()
    return {"players": len(players), "variant": variant, "darts": darts, "actions": len(g.actions),
            "bytes_new": fresh, "bytes_full": gc.mem_alloc() - base, "undo_bytes": len(g._undo)}


def speed(n):
    """Darts a second through throw and next: the referee's work per dart.
    A new game is timed apart (new_game()): it loads the new game's checks
    from the filesystem and lets them go (shove/newgame.py), which would
    otherwise dominate a run of nine-dart games."""
    g = rules.new_game(["A", "B"], None, "classic", {"darts": 9})
    done = 0
    k = 0
    spent = 0
    while done < n:
        t0 = time.ticks_us()
        while done < n and g.phase != rules.OVER:
            if g.phase == rules.HOLD:
                g.next()
            else:
                g.throw(SEGS[k % len(SEGS)])
                k += 1
                done += 1
        spent += time.ticks_diff(time.ticks_us(), t0)
        g = rules.new_game(["A", "B"], None, "classic", {"darts": 9})
    return n * 1000000 // spent


def new_game_us(n):
    t0 = time.ticks_us()
    for _ in range(n):
        rules.new_game(["A", "B"], None, "classic", {"darts": 9})
    return time.ticks_diff(time.ticks_us(), t0) // n


print(json.dumps({
    "darts_per_s": speed(20000),
    "new_game_us": new_game_us(100),
    "games": [memory(["Ann", "Bob"], "classic"), memory(["A", "B", "C", "D", "E", "F", "G", "H"], "extended")],
}))

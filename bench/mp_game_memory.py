# Heap bytes a whole game holds under MicroPython: rules, sides, marks,
# undo records and the action journal, measured with gc.mem_alloc().
import gc
import json
import sys
from shove import rules, segments


def measure(players, variant, darts_per_bed):
    gc.collect()
    base = gc.mem_alloc()
    g = rules.new_game(players, None, variant)
    gc.collect()
    fresh = gc.mem_alloc() - base
    n = 0
    while g.phase != rules.OVER:
        if g.phase == rules.HOLD:
            g.next()
            continue
        a = g.turn
        for bi, bed in enumerate(g.rules.beds):
            if g.need(a, bi):
                g.throw(segments.encode(darts_per_bed + str(bed)))
                n += 1
                break
    gc.collect()
    full = gc.mem_alloc() - base
    return {"players": len(players), "variant": variant, "darts": n, "actions": len(g.actions),
            "bytes_new": fresh, "bytes_full": full, "undo_bytes": len(g._undo)}


out = [measure(["Ann", "Bob"], "classic", "S"), measure(["A", "B", "C", "D", "E", "F", "G", "H"], "extended", "S")]
print(json.dumps(out))

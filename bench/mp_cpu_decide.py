# One position for bench/cpu_instructions.py: `micropython mp_cpu_decide.py
# SCENARIO N` sets it up, makes the player's tables, then takes N decisions.
# The instructions of N = 11 minus those of N = 1 are ten decisions'.
import sys

from shove import cpu, rules

TWENTY_ONE = {"beds": list(range(1, 21)) + [25], "gift": "all"}
# name: (sides, variant, rules, level, marks every side still needs on every bed)
SCENARIOS = {
    "classic-2-l1": (2, "classic", None, 1, 3),
    "classic-2-l6": (2, "classic", None, 6, 3),
    "classic-4-l1": (4, "classic", None, 1, 1),
    "21beds-2-l1": (2, "classic", TWENTY_ONE, 1, 1),
    "21beds-4-l1": (4, "classic", TWENTY_ONE, 1, 1),
    "21beds-5-l1": (5, "classic", TWENTY_ONE, 1, 1),
    "21beds-8-l1": (8, "classic", TWENTY_ONE, 1, 1),  # the slowest case of bench/mp_cpu.py
    "21beds-8-l6": (8, "classic", TWENTY_ONE, 6, 1),
    "21beds-8-l1-mixed": (8, "classic", TWENTY_ONE, 1, 1),  # the others 1 to 3 marks (below)
    "classic-8-l1-finish": (8, "classic", None, 1, 0),  # every side near its finish (below)
}
# the finish's close-out chances (cpu.Player._close) for every side, each a
# different count of beds needing 1, 2 and 3 marks, all within three darts
FINISH = ((2, 2, 2), (3, 3, 3), (1, 1, 1, 1, 1, 1), (2, 2, 1, 1), (3, 2, 1), (3, 3), (1, 1, 1, 2, 2), (3, 1, 1, 1))

name, n = sys.argv[1], int(sys.argv[2])
sides, variant, over, level, left = SCENARIOS[name]
g = rules.new_game(["P%d" % i for i in range(sides)], None, variant, over)
for i in range(len(g.marks)):
    g.marks[i] = g.rules.marks - left
if name.endswith("-mixed"):  # as bench/mp_cpu.py's last row: no two beds alike, nothing reused
    for s in range(1, sides):
        for i in range(g.nb):
            g.marks[s * g.nb + i] = (i + 2 * s) % 3
if name.endswith("-finish"):
    for s in range(sides):
        for i, k in enumerate(FINISH[s]):
            g.marks[s * g.nb + i] = g.rules.marks - k
p = cpu.Player(level)
for _ in range(n):
    p.choose(g)

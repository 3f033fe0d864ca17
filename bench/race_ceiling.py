"""How far any strategy can beat the panel's marks maximisers in a pure race,
worked out exactly instead of simulated (no sampling noise).

    python3 bench/race_ceiling.py LEVEL [--rounds R] [--cpu PATH ...]

The model: two sides, nine beds of three marks, three darts a visit, no
gifts (`no-gift`). Every bed is alike, so a side's state is how many beds
it needs 1, 2 and 3 marks on (220 states); a dart aimed at a bed's inner
or outer single, double or treble scores 0 to 3 marks there with the
throw model's chances for the level (integrated over the board, as in the
computer's tables, bench/cpu_tables.py), and a dart that misses its bed
scores nothing (a stray onto another bed, a few in a hundred
at level 3 and fewer above, is left out, for both sides alike). The panel's
cautious player (and in this race the greedy and blocking ones, whose
choices differ only in the order of the beds) takes the ring with the most
expected marks; over a whole visit that makes a fixed chain of states.
Against it, the chance that a side wins (seats alternated) is computed by
backward induction over (its state, the opponent's state, darts left),
repeated visit by visit until it settles:
- the marks maximiser itself: 50 % (the check of the model);
- the best response, the best any strategy can do against that player;
- the computer (`--cpu`: a cpu.py, e.g. the shipped one, or an older one
  from git), asked for its aim in every position of the model (an aim
  off its open beds, which the model has no odds for, counts as the marks
  maximiser's, and the script says how many there were).
A row of 4,000 games meets its goal only when the computer's observed rate
is above about 53.6 % (the lower end of the 95 % interval above 52 %): a
rate the best response cannot reach leaves the row out of reach of any
strategy, not only of this computer.
Needs numpy (Debian: python3-numpy); about a minute a level.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "firmware"))


STATES = [(a, b, c) for a in range(10) for b in range(10) for c in range(10) if a + b + c <= 9]
IDX = {s: i for i, s in enumerate(STATES)}
N = len(STATES)
DONE = IDX[(0, 0, 0)]
START = IDX[(0, 0, 9)]
KEYS = [(k, r) for k in (1, 2, 3) for r in "SDTI"]  # (marks the bed needs, ring aimed at; I: inner single)


class Race:
    def __init__(self, level):
        # the throw model's chances integrated over the board (the computer's own
        # tables, bench/cpu_tables.py: close_odds), not the panel's 6,000 darts:
        # at level 3 the treble and the single differ by less than those darts' noise
        from shove import cpu
        co = [[x / cpu.ONE for x in p] for p in cpu._load(level)[4]]  # SI, T, S, D
        self.rings = {"S": co[2], "D": co[3], "T": co[1], "I": co[0]}
        self.aims = [self._aims(s) for s in STATES]
        self.q = self._visit()

    def _aims(self, s):
        """(need, ring) -> [(chance, next state)] for each aim open in state s."""
        out = {}
        for k in (1, 2, 3):
            if not s[k - 1]:
                continue
            for r, p in self.rings.items():
                res = {}
                for m in range(4):
                    t = list(s)
                    t[k - 1] -= 1
                    if k > m:
                        t[k - m - 1] += 1
                    j = IDX[tuple(t)]
                    res[j] = res.get(j, 0.0) + p[m]
                out[(k, r)] = list(res.items())
        return out

    def most_marks(self, s):
        """The panel's aim: the most expected marks for itself (the first of equals)."""
        def marks(key):
            k, r = key
            return sum(self.rings[r][m] * min(m, k) for m in range(4))
        return max(self.aims[s], key=marks)

    def _visit(self):
        """Q[o, o']: the marks maximiser's chance of going from o to o' in a visit."""
        q = np.zeros((N, N))
        for o in range(N):
            dist = {o: 1.0}
            for _ in range(3):
                nd = {}
                for s, p in dist.items():
                    moves = [(s, 1.0)] if s == DONE else self.aims[s][self.most_marks(s)]
                    for j, c in moves:
                        nd[j] = nd.get(j, 0.0) + p * c
                dist = nd
            for j, p in dist.items():
                q[o, j] += p
        return q

    def win(self, who, rounds, pol=None):
        """(first, second, mean): the chance that `who` ("most", "best" or
        "pol" with pol[d][s] an array over the opponent's states of indices
        into KEYS) beats the marks maximiser throwing first, second, and
        the mean of the two (seats alternated)."""
        w = np.zeros((N, N))
        for _ in range(rounds):
            wn = w.copy()
            wn[:, DONE] = 0
            v = wn @ self.q.T  # the visit over: the opponent throws, then it is our visit again
            v[DONE, :] = 1.0
            for d in (1, 2, 3):
                v2 = np.empty_like(v)
                v2[DONE, :] = 1.0
                for s in range(N):
                    if s == DONE:
                        continue
                    a = self.aims[s]
                    if who == "best":
                        v2[s] = np.max([sum(c * v[j] for j, c in tr) for tr in a.values()], axis=0)
                    elif who == "pol":
                        out = np.zeros(N)
                        for ki, key in enumerate(KEYS):
                            mask = pol[d][s] == ki
                            if key in a and mask.any():
                                out[mask] = sum(c * v[j][mask] for j, c in a[key])
                        v2[s] = out
                    else:
                        v2[s] = sum(c * v[j] for j, c in a[self.most_marks(s)])
                v = v2
            w = v
        wn = w.copy()
        wn[:, DONE] = 0
        first = w[START, START]
        second = self.q[START] @ wn[START]
        return first, second, (first + second) / 2


def cpu_policy(race, level, path):
    """The computer's aim (index into KEYS) in every position of the model,
    from the cpu.py at `path`: pol[darts left][its state][opponent's state]."""
    from shove import cpu, rules, segments
    spec = importlib.util.spec_from_file_location("cpu_under_test", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m.__file__ = cpu.__file__  # its data file: the shipped one
    tables = None
    try:
        p = m.Player(level)
    except ValueError:  # an older cpu.py reads fewer columns of cpu.dat
        tables = cpu._load(level)[:4]
        p = m.Player(level, tables)
    g = rules.new_game(["A", "B"], variant="no-gift")
    beds, nb = g.rules.beds, g.nb

    def put(side, s):
        needs = [1] * s[0] + [2] * s[1] + [3] * s[2]
        needs += [0] * (nb - len(needs))
        for i in range(nb):
            g.marks[side * nb + i] = 3 - needs[i]
        return needs

    pol = {d: [np.zeros(N, dtype=int) for _ in range(N)] for d in (1, 2, 3)}
    off_beds = 0
    for s in range(N):
        if s == DONE:
            continue
        needs = put(0, STATES[s])
        for o in range(N):
            if o == DONE:
                continue
            put(1, STATES[o])
            for d in (1, 2, 3):
                g.turn, g.darts_left = 0, d
                c = p.choose(g)
                num, off = segments.number(c), (c - 3) % 5
                bi = beds.index(num) if num in beds else -1
                if bi < 0 or not needs[bi]:
                    # an aim the model has no odds for (the bull, between beds, where a
                    # wide spread finds an open bed more often): the marks maximiser's aim
                    off_beds += 1
                    pol[d][s][o] = KEYS.index(race.most_marks(s))
                    continue
                pol[d][s][o] = KEYS.index((needs[bi], "T" if off == 4 else "D" if off == 3 else "I" if off == 1 else "S"))
    return pol, off_beds


def main():
    a = sys.argv[1:]
    level = int(a[0])
    rounds = int(a[a.index("--rounds") + 1]) if "--rounds" in a else 60
    paths = [a[i + 1] for i, x in enumerate(a) if x == "--cpu"]
    race = Race(level)
    print("level %d, no gifts, against the marks maximiser (first / second / seats alternated):" % level)
    for who in ("most", "best"):
        print("  %-28s %.4f / %.4f / %.4f" % (("the marks maximiser itself" if who == "most" else "the best response",)
                                              + race.win(who, rounds)), flush=True)
    for path in paths:
        pol, off_beds = cpu_policy(race, level, path)
        print("  %-28s %.4f / %.4f / %.4f%s" % ((path,) + race.win("pol", rounds, pol) + (
            " (%d of %d aims off the beds, taken as the marks maximiser's)" % (off_beds, 3 * (N - 1) ** 2)
            if off_beds else "",)), flush=True)


if __name__ == "__main__":
    main()

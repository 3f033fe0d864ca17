"""Pairing the closures a test scheduled on the virtual board's matrix with
the events the board sent back, for the soak and the bench."""
import math


def match(pulses, events):
    """Pair events with pulses by crossing, in order. `pulses` are
    (row, col, ...) in the order they closed; `events` carry `row`, `col`.
    -> (matched [(pulse, event)], missed pulse count, extra events). An event
    with no later unmatched pulse on its crossing is an extra: a double, or
    one for a crossing that was never closed."""
    matched, extra = [], []
    i = 0
    for ev in events:
        cell = (ev.get("row"), ev.get("col"))
        j = i
        while j < len(pulses) and tuple(pulses[j][:2]) != cell:
            j += 1
        if j == len(pulses):
            extra.append(ev)
            continue
        matched.append((pulses[j], ev))
        i = j + 1
    return matched, len(pulses) - len(matched), extra


def percentile(xs, p):
    """The p-th percentile by linear interpolation between closest ranks
    (numpy's default): p99 of 200 samples lies between the 198th and 199th."""
    s = sorted(xs)
    if not s:
        return None
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def miss_bound(missed, n, conf=0.95):
    """The highest miss rate that `missed` misses in `n` closures still leave
    plausible at confidence `conf` (one-sided Clopper-Pearson upper bound):
    no miss in 3,000 bounds the rate at 0.1 %, no miss in 300 only at 1 %."""
    if missed >= n:
        return 1.0

    def cdf(p):  # P(at most `missed` misses) for a true rate p
        term = math.exp(n * math.log1p(-p))
        total = term
        for k in range(missed):
            term *= (n - k) / (k + 1) * p / (1 - p)
            total += term
        return total

    lo, hi = 0.0, 1.0
    for _ in range(60):  # cdf falls as p rises: bisect for cdf(p) = 1 - conf
        mid = (lo + hi) / 2
        if cdf(mid) > 1 - conf:
            lo = mid
        else:
            hi = mid
    return hi

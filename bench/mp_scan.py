# Scan cost under MicroPython: the scanner core fed by a constant-time column
# read (one read per row, as the ESP32 layer's GPIO register read), next to a
# naive scanner written the usual hobby way (a pin read per crossing, a new
# list every scan). Prints one JSON line.
import gc
import json
import time

from shove import scanner

ROWS = 8
COLS = 8
SCANS = 10000


class Pin:
    """What a hobby sketch reads: one object call per pin."""

    def __init__(self, level=1):
        self.level = level

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = v


class Register:
    """The fast path: one read returns every column of the driven row."""

    def __init__(self, rows):
        self.rows = rows  # the column bits each row reads (a closure here and there)

    def read_matrix(self, snap):
        rows = self.rows
        for r in range(ROWS):
            snap[r] = rows[r]


def fast(n):
    reg = Register([0] * ROWS)
    sc = scanner.Scanner(ROWS, COLS)
    snap = sc.snap
    t = 0
    for _ in range(50):
        reg.read_matrix(snap)
        sc.step(t)
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    t0 = time.ticks_us()
    for _ in range(n):
        reg.read_matrix(snap)
        sc.step(t)
        t += 20
    us = time.ticks_diff(time.ticks_us(), t0)
    alloc = gc.mem_alloc() - a0
    gc.enable()
    return us / n, alloc


def naive(n):
    row_pins = [Pin() for _ in range(ROWS)]
    col_pins = [Pin() for _ in range(COLS)]
    last = []
    hits = 0
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    t0 = time.ticks_us()
    for _ in range(n):
        closed = []  # a new list every scan
        for r in range(ROWS):
            row_pins[r].value(0)
            for c in range(COLS):
                if col_pins[c].value() == 0:
                    closed.append((r, c))
            row_pins[r].value(1)
        if closed and closed != last:
            hits += 1
        last = closed
    us = time.ticks_diff(time.ticks_us(), t0)
    alloc = gc.mem_alloc() - a0
    gc.enable()
    return us / n, alloc


f_us, f_alloc = fast(SCANS)
n_us, n_alloc = naive(SCANS)
print(json.dumps({
    "scans": SCANS, "fast_us_per_scan": round(f_us, 3), "naive_us_per_scan": round(n_us, 3),
    "ratio": round(n_us / f_us, 2), "fast_heap_bytes": f_alloc, "naive_heap_bytes": n_alloc,
}))

# Run ON AN ESP32 to measure the real scan loop with the real board layer:
#   mpremote connect /dev/ttyUSB0 run bench/esp32_scan.py
# (mpremote interrupts main.py and soft-resets first; boot.py keeps the
# watchdog fed meanwhile; `hapenny deploy` or a reset brings the game back.)
# Prints microseconds per full matrix scan (viper register read + scanner
# step) and the heap it allocated over 10,000 scans.
import gc
import json
import time

from shove import profile, scanner, store
from shove.boards import open_board

d = store.read("profile.json")
prof = profile.load(d) if d else profile.Profile(profile.default_dict())
board = open_board(prof)
sc = scanner.Scanner(prof.rows, prof.cols)
snap = sc.snap
N = 10000
for _ in range(100):
    board.read_matrix(snap)
    sc.step(board.ticks_us())
gc.collect()
gc.disable()
a0 = gc.mem_alloc()
t0 = time.ticks_us()
for _ in range(N):
    board.read_matrix(snap)
    sc.step(board.ticks_us())
us = time.ticks_diff(time.ticks_us(), t0)
alloc = gc.mem_alloc() - a0
gc.enable()
t1 = time.ticks_us()
for _ in range(N):
    board.read_matrix(snap)
read_us = time.ticks_diff(time.ticks_us(), t1)
print(json.dumps({"board": prof.name, "us_per_scan": us / N, "read_matrix_us": read_us / N,
                  "late_rows": getattr(board, "late_rows", 0),
                  "scans_per_s": N * 1000000 // us, "heap_bytes": alloc}))

"""Heap soak on the 32-bit WebAssembly MicroPython (bench/wasm_heap.py): a
10,000-dart game between people with the heap capped at the ESP32's first
heap (56 KB). No allocation may fail, the live heap at the end must be the
one after the first 100 darts within 1 KB (no creep), and the largest free
block must stay above 8 KB (no fragmentation that would starve the next
allocation). `make soak` only (HAPENNY_SOAK=1): it takes minutes, and node.
HAPENNY_HEAP_CAP sets another cap (114688: the chip's grown heap)."""
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import wasm_heap  # noqa: E402

CAP = int(os.environ.get("HAPENNY_HEAP_CAP") or wasm_heap.PLAY_CAP)


@pytest.mark.skipif(not os.environ.get("HAPENNY_SOAK"), reason="make soak only (minutes)")
@pytest.mark.skipif(not shutil.which("node"), reason="node is needed for the WebAssembly port")
def test_heap_soak_ten_thousand_darts_under_the_first_heap():
    r = wasm_heap.soak(10000, CAP)
    print("heap soak:", r)
    assert r["memory_errors"] == 0 and r["steps_failed"] == 0, r["failed"]
    assert abs(r["creep"]) <= 1024, r
    assert r["least_free_block"] > 8 * 1024, r

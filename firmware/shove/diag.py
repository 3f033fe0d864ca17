# Bring-up diagnostics for `hapenny doctor`: the board reports raw facts
# (versions, free memory and flash, line levels, the closures it sees) and
# lights what it is asked to; the host interprets them, so this module stays
# small. Imported on the first `diag` command only.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import array
import gc
import os
import sys
import time

from shove import protocol
from shove.boards import idf_heap

_MAX_EDGES = const(240)  # matrix and button changes a recording keeps (3 ints each)
_MAX_WATCH_MS = const(20000)
_edges = None  # the recording buffer, made on the first `watch`


def run(parts, cmd):
    """`parts`: what the command handlers have (commands.Commands): the
    board, the profile, the renderer, the strip, changed()."""
    op = cmd.get("op")
    if op == "about":
        return about(parts)
    if op == "lines":
        if not hasattr(parts.board, "line_test"):
            raise protocol.ProtoError("bad_diag", "this board layer has no line test")
        return {"pins": list(parts.prof.row_pins) + list(parts.prof.col_pins), "rows": parts.prof.rows,
                "levels": parts.board.line_test()}
    if op == "led":
        return led(parts, cmd.get("bed"))
    if op == "heap":
        return heap()
    if op == "flash":
        return flash(parts.board)
    if op == "watch":
        ms = cmd.get("ms")
        if not isinstance(ms, int) or isinstance(ms, bool) or not 1 <= ms <= _MAX_WATCH_MS:
            raise protocol.ProtoError("bad_diag", "watch needs ms, 1 to %d" % _MAX_WATCH_MS)
        return watch(parts.board, parts.prof.rows, ms)
    raise protocol.ProtoError("bad_diag", "diag op is one of about, heap, flash, lines, led, watch")


def about(parts):
    out = {"micropython": list(sys.implementation.version[:3]), "platform": sys.platform,
           "mem_free": gc.mem_free(), "mem_alloc": gc.mem_alloc()}
    v = sys.implementation.version
    out["prerelease"] = v[3] if len(v) > 3 else ""  # "preview" for a build between releases
    out["mpy"] = getattr(sys.implementation, "_mpy", None)  # the .mpy format it loads
    try:
        out["machine"] = os.uname().machine
    except AttributeError:
        out["machine"] = ""
    # the chip and its console: "uart" (UART0 behind a USB bridge), "usb-serial-jtag" (the C3's),
    # "usb-cdc" (the S3's native USB); "+uart": the stock image runs the console on UART0 as well
    out["chip"] = getattr(parts.board, "chip", "esp32")
    out["console"] = getattr(parts.board, "console_kind", "uart")
    try:
        st = os.statvfs("/")
        out["flash_free"] = st[0] * st[4]
        out["flash_total"] = st[0] * st[2]
    except (AttributeError, OSError):
        pass
    st = sys.modules["shove"].START
    if st:  # why this start happened, and whether it was asked for
        out["reset"] = {"cause": st["cause"], "deliberate": st["deliberate"]}
    t = parts.prof.timing
    out["timing"] = {"window_us": t["window_us"], "lockout_ms": t["lockout_ms"], "rearm_ms": t["rearm_ms"],
                     "settle_us": t["settle_us"]}
    out["buttons"] = [parts.prof.buttons.get(n) for n in ("next", "undo", "new")]
    out["leds"] = {"beds": parts.renderer.beds, "per_side": parts.renderer.per_side,
                   "status": parts.renderer.status, "count": parts.renderer.count,
                   "pin": parts.prof.leds["pin"]}  # -1: the profile has no strip (a C3's beds-only one)
    net = getattr(parts, "net", None)
    out["wifi"] = net.report() if net is not None else {"state": "off"}
    # the firmware's modules in the heap now (besides diag and extra, loaded for this command)
    out["modules"] = sorted(n for n in sys.modules if n.startswith("shove."))
    return out


def largest_alloc(limit):
    """The largest bytearray that can be allocated now, to 16 bytes (a heap
    block), found by bisection. MicroPython has no call that says it
    (micropython.mem_info() prints its "max free sz" but returns nothing);
    a failing allocation collects garbage and retries before MemoryError
    (py/gc.c), so each probe sees the heap as it is. On the ESP32 a request
    beyond the heap's free blocks may grow the heap from the IDF's
    (MICROPY_GC_SPLIT_HEAP_AUTO), as any large allocation of the game would."""
    lo = 0
    hi = limit + 1
    while hi - lo > 16:
        mid = (lo + hi) // 2
        try:
            b = bytearray(mid)
            del b
            lo = mid
        except MemoryError:
            hi = mid
    gc.collect()
    return lo


def heap():
    """The heap now: free, used, the largest single allocation, and the IDF's heap."""
    gc.collect()
    free = gc.mem_free()
    alloc = gc.mem_alloc()
    idf = idf_heap()
    t = time.ticks_us()
    largest = largest_alloc(free + (idf[1] if idf else 0))
    return {"mem_free": free, "mem_alloc": alloc, "largest_alloc": largest, "idf": idf,
            "probe_us": time.ticks_diff(time.ticks_us(), t)}


_SCRATCH = const("diag.jnl")  # a copy of the game's journal for the flash timing, removed after
_SEGMENT = const("diag.seg")  # ... and a journal segment's stand-in


def flash(b):
    """Time, on the board's own flash and clock, what a game costs it: one
    replace of the journal (a new game; the current journal's bytes, or a
    200-byte header without a game) and three records added to a small file
    kept open and synced, as a dart's (shove/jstore.py). Scratch files are
    used and removed."""
    from shove import store
    from shove.jrec import REC
    from shove.settings import GAME_FILE

    data = b.read_file(GAME_FILE) or bytes(200)
    rec = bytes(REC)
    try:
        t = b.ticks_us()
        b.write_file(_SCRATCH, data)
        replace = protocol_diff(b.ticks_us(), t)
        appends = []
        with open(_SEGMENT, "wb") as f:
            for _ in range(3):
                t = b.ticks_us()
                b.sync_write(f, rec)
                appends.append(protocol_diff(b.ticks_us(), t))
    finally:
        store.remove(_SCRATCH)
        store.remove(_SEGMENT)
    return {"bytes": len(data), "record": len(rec), "replace_us": replace, "append_us": appends}


def led(parts, bed):
    """Light bed `bed` (1-based, as the strip's order) white on both sides,
    "status" for the status pixels, or None to give the strip back."""
    r = parts.renderer
    strip = parts.strip
    if bed is None:
        strip.diag = None
        parts.changed()
        strip.last = bytes(3 * r.count)  # so the game's frame is written again
        return {"lit": []}
    if bed == "status":
        first, n = r.beds * 2 * r.per_side, r.status
    elif isinstance(bed, int) and not isinstance(bed, bool) and 1 <= bed <= r.beds:
        first, n = (bed - 1) * 2 * r.per_side, 2 * r.per_side
    else:
        raise protocol.ProtoError("bad_diag", "bed is 1 to %d, \"status\" or null" % r.beds)
    frame = bytearray(3 * r.count)
    for i in range(first * 3, (first + n) * 3):
        frame[i] = 96
    strip.diag = frame
    parts.board.strip_write(frame)
    return {"lit": list(range(first, first + n))}


def watch(b, rows, ms):
    """Record every change of the matrix (raw, before the scanner) and of
    the buttons for `ms`: [[t_us, row, columns closed], ...] and
    [[t_us, button, pressed], ...]. Blocks the game meanwhile (it is a
    bring-up tool); the watchdog is fed, the board's service runs."""
    global _edges
    if _edges is None:
        _edges = array.array("i", bytes(4 * 3 * _MAX_EDGES))
    edges = _edges
    snap = array.array("H", bytes(2 * rows))
    last = array.array("H", bytes(2 * rows))
    gc.collect()  # no collection in the middle of the recording
    edges_on = getattr(b, "edges", None)  # a contact recorded here is no dart (esp32.py's interrupt)
    if edges_on is not None:
        edges_on(False)
    try:
        n = _record(b, rows, ms, edges, snap, last)
    finally:
        if edges_on is not None:
            edges_on(True)
    m = []
    btn = []
    for k in range(n):
        t, r, v = edges[3 * k], edges[3 * k + 1], edges[3 * k + 2]
        if r >= 0:
            m.append([t, r, v])
        else:
            btn.append([t, -1 - r, v])
    return {"ms": ms, "matrix": m, "buttons": btn, "full": n >= _MAX_EDGES}


def _record(b, rows, ms, edges, snap, last):
    """watch's recording: how many changes it put in `edges`."""
    nb = 0
    buttons = 0
    n = 0
    t0 = b.ticks_us()
    end_us = ms * 1000
    since_service = 0
    while True:
        now = protocol_diff(b.ticks_us(), t0)
        if now >= end_us:
            break
        b.read_matrix(snap)
        for r in range(rows):
            if snap[r] != last[r]:
                last[r] = snap[r]
                if n < _MAX_EDGES:
                    edges[3 * n] = now
                    edges[3 * n + 1] = r
                    edges[3 * n + 2] = snap[r]
                    n += 1
        nb = 0
        for i in range(3):
            if b.button(i):
                nb |= 1 << i
        if nb != buttons:
            for i in range(3):
                if (nb ^ buttons) >> i & 1 and n < _MAX_EDGES:
                    edges[3 * n] = now
                    edges[3 * n + 1] = -1 - i
                    edges[3 * n + 2] = nb >> i & 1
                    n += 1
            buttons = nb
        if now - since_service >= 2000:
            since_service = now
            b.feed()
            b.service()
    return n


def protocol_diff(a, b):
    d = (a - b) & 0x3FFFFFFF
    return d - 0x40000000 if d >= 0x20000000 else d

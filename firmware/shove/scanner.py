# Scanner core: turns matrix snapshots into darts, faults and releases.
#
# Pure logic: the board layer fills `snap` (one column bitmask per row) and
# the main loop calls step(now_us) after every full scan. Nothing here
# allocates: state is a few ints, a bytearray of per-crossing counts, and a
# preallocated ring of event words.
#
# Eager detection: one scan seeing a closure starts a dart (a deferred
# debounce would drop a 1 ms contact). Then, for `window_us`, every scan
# votes for each closed crossing and the crossing closed most often is the
# dart (ties: the one that closed first). After the window the scanner
# ignores the matrix for `lockout_us` (counted from the first contact, even
# if the step that ends the window comes late), then re-arms only once every
# crossing has been open for `rearm_us`, so one dart is one hit however the
# contact bounces.
# A crossing closed in every scan for `stuck_us` is a stuck switch: it is
# reported, masked, and unmasked once all masked crossings have read open
# for `rearm_us`.
try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import array

from shove import ticks_add, ticks_diff

try:
    import micropython
except ImportError:  # CPython: the decorator does nothing
    class micropython:  # type: ignore[no-redef]
        @staticmethod
        def native(f):
            return f

# board.woke: why the board's burst of idle scans (scan_idle) stopped early.
# Both boards set it and the loop reads it; they live here, a module all of
# them load, so that the boards need not import the package that opens them.
WOKE_INPUT = const(1)  # a serial byte or a button
WOKE_TIME = const(2)  # the tick it was given

IDLE = const(0)
WINDOW = const(1)
LOCKOUT = const(2)
RELEASE = const(3)

# event word: kind << 16 | row << 8 | col
EV_HIT = const(1)
EV_STUCK = const(2)
EV_CLEARED = const(3)

_QLEN = const(32)


class Scanner:
    def __init__(self, rows, cols, window_us=3000, lockout_us=60000, rearm_us=5000, stuck_us=2000000):
        if not (1 <= rows <= 16 and 1 <= cols <= 16):
            raise ValueError("matrix up to 16 x 16")
        self.rows = rows
        self.cols = cols
        self.window_us = window_us
        self.lockout_us = lockout_us
        self.rearm_us = rearm_us
        self.stuck_us = stuck_us
        self.snap = array.array("H", bytes(2 * rows))  # filled by the board layer
        self.mask = array.array("H", bytes(2 * rows))  # masked (stuck) crossings
        self.persist = array.array("H", bytes(2 * rows))  # closed in every scan since t0
        self.counts = bytearray(rows * cols)
        self.q = array.array("I", bytes(4 * _QLEN))
        self.qhead = 0
        self.qtail = 0
        self.dropped = 0  # events lost to a full queue (the app drains every scan)
        self.state = IDLE
        self.t0 = 0  # start of the current state
        self.open_since = 0  # release: when the matrix was last seen closed
        self.stuck_t0 = 0  # when `persist` was last reset (by each hit, before the release it is used in)
        self.first = 0  # first crossing seen in the window, row << 8 | col
        self.mopen = -1  # when every masked crossing was first seen open
        self.primed = False
        self.masked = False  # some crossing is masked as stuck
        # idle, primed and nothing masked: a scan that reads every crossing
        # open changes nothing, so the loop may read the matrix in a burst
        # (board.scan_idle) and step only on the read that finds a closure
        self.calm = False
        self.scans = 0

    # ---- event ring --------------------------------------------------------
    def _push(self, word):
        nxt = (self.qtail + 1) % _QLEN
        if nxt == self.qhead:
            self.dropped += 1
            return
        self.q[self.qtail] = word
        self.qtail = nxt

    def pending(self):
        return self.qhead != self.qtail

    def pop(self):
        """Next event word, or 0 when there is none."""
        if self.qhead == self.qtail:
            return 0
        w = self.q[self.qhead]
        self.qhead = (self.qhead + 1) % _QLEN
        return w

    # ---- the step ------------------------------------------------------------
    @micropython.native
    def _closed(self):
        """OR of all unmasked closures in the snapshot (0 = all open)."""
        snap = self.snap
        mask = self.mask
        any_ = 0
        for r in range(self.rows):
            any_ |= snap[r] & ~mask[r]
        return any_

    @micropython.native  # about a third faster per scan under MicroPython (make bench)
    def step(self, now):
        self.calm = False  # a column's edge interrupt (the ESP32 board's _edge) steps only a calm scanner
        snap = self.snap
        self.scans += 1
        if not self.primed:  # a crossing closed at power-up is stuck, not a dart
            self.primed = True
            for r in range(self.rows):
                if snap[r]:
                    self.mask[r] = snap[r]
                    self.masked = True
                    self._report(EV_STUCK, r, snap[r])
        self._check_masked(now)
        st = self.state
        if st == IDLE:
            if self._closed():
                self._start_window(now)
        elif st == WINDOW:
            self._count()
            if ticks_diff(now, self.t0) >= self.window_us:
                self._hit(now)
        elif st == LOCKOUT:
            if ticks_diff(now, self.t0) >= self.lockout_us:
                self.state = RELEASE
                self.open_since = now
                if self._closed():
                    self.open_since = -1
        else:  # RELEASE
            self._track_persist(now)
            if self._closed():
                self.open_since = -1
            elif self.open_since == -1:
                self.open_since = now
            elif ticks_diff(now, self.open_since) >= self.rearm_us:
                self.state = IDLE
        self.calm = self.state == IDLE and not self.masked

    def _start_window(self, now):
        counts = self.counts
        for i in range(len(counts)):
            counts[i] = 0
        self.first = -1
        self.state = WINDOW
        self.t0 = now
        self._count()

    @micropython.native
    def _count(self):
        snap = self.snap
        mask = self.mask
        counts = self.counts
        cols = self.cols
        for r in range(self.rows):
            m = snap[r] & ~mask[r]
            c = 0
            while m:
                if m & 1:
                    i = r * cols + c
                    if counts[i] < 255:
                        counts[i] += 1
                    if self.first < 0:
                        self.first = (r << 8) | c
                m >>= 1
                c += 1

    def _hit(self, now):
        counts = self.counts
        cols = self.cols
        best = self.first
        top = counts[(best >> 8) * cols + (best & 0xFF)]
        for i in range(len(counts)):
            if counts[i] > top:
                top = counts[i]
                best = ((i // cols) << 8) | (i % cols)
        self._push((EV_HIT << 16) | best)
        self.state = LOCKOUT
        # the lockout counts from the dart's first contact, not from this
        # step: a step the loop made late must not push the re-arm later,
        # into the next dart
        self.t0 = ticks_add(self.t0, self.window_us)
        self._reset_persist(now)

    # ---- stuck switches --------------------------------------------------------
    def _reset_persist(self, now):
        for r in range(self.rows):
            self.persist[r] = 0xFFFF
        self.stuck_t0 = now

    @micropython.native
    def _track_persist(self, now):
        snap = self.snap
        mask = self.mask
        persist = self.persist
        stuck = 0
        for r in range(self.rows):
            persist[r] &= snap[r] & ~mask[r]
            stuck |= persist[r]
        if not stuck:
            self._reset_persist(now)
        elif ticks_diff(now, self.stuck_t0) >= self.stuck_us:
            for r in range(self.rows):
                if persist[r]:
                    self.mask[r] |= persist[r]
                    self.masked = True
                    self._report(EV_STUCK, r, persist[r])
            self._reset_persist(now)

    @micropython.native
    def _check_masked(self, now):
        # unmask once every masked crossing reads open: a released switch
        snap = self.snap
        mask = self.mask
        held = 0
        masked = 0
        for r in range(self.rows):
            masked |= mask[r]
            held |= snap[r] & mask[r]
        if not masked:
            return
        if held:
            self.mopen = -1
        elif self.mopen == -1:
            self.mopen = now
        elif ticks_diff(now, self.mopen) >= self.rearm_us:
            self.mopen = -1
            self.masked = False
            for r in range(self.rows):
                if mask[r]:
                    self._report(EV_CLEARED, r, mask[r])
                    mask[r] = 0

    def _report(self, kind, r, bits):
        c = 0
        while bits:
            if bits & 1:
                self._push((kind << 16) | (r << 8) | c)
            bits >>= 1
            c += 1

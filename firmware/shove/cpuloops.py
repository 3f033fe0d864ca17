# The computer's two hot loops (shove/cpu.py), compiled to machine code on
# the board: about a third of a decision's instructions go (the slowest case,
# eight sides one mark from closing 21 beds, gifts to all: 4.6 to 3.2 million
# on the unix port), and with the aims' sums in viper (machine words, not
# objects) a sixth more (3.27 to 2.68 million, the others 1 to 3 marks short). They live apart from cpu.py because the ESP32 copies a
# module's machine code into executable RAM outside the heap and frees it
# only at a reset (ports/esp32/main.c, esp_native_code_commit): cpu.py is
# loaded afresh for every game and hint with the computer and let go after,
# so its machine code would pile up there. This module is loaded once, by
# the first such game or hint, and never let go (its heap share is its module and
# two function objects; the code itself is not in the heap).
try:
    import micropython
except ImportError:  # CPython: the decorators do nothing, a pointer is its array
    class micropython:  # type: ignore[no-redef]
        @staticmethod
        def native(f):
            return f

        viper = native


def ptr16(a):
    """What dot's pointer reads where it runs as bytecode (CPython, or a port
    built without the native emitters, whose decorators are taken off):
    the array itself. Viper code never looks this name up."""
    return a


WIN = 16000  # a sure win (cpu.py's values run 0..WIN)


@micropython.native
def after(self, mine, left, sur, e, pend):
    """The chance (x WIN) that the thrower wins once a dart leaves it
    needing `mine` darts (x16) with `left` darts of the visit, `sur`
    surplus marks gifted by the rules on the bed whose opponents' needs
    _outcomes put in self._col (`e`: that bed's darts table) and `pend`
    the sides whose win was pending before. Sets self.new to the sides
    whose win the gift makes pending. The gift and the opponents'
    chances are one pass: this runs for every outcome.
    The logistic is read between its points (a sixteenth of a point):
    a fraction of a dart still changes the value. A point is about two
    darts of lag, so read at the nearest one a gap of a dart vanished in
    four-sided games (level 6 against tips, greedy and blocker: 23.2 %
    of 3,600 games at the nearest point, 26.8 % between the points). The last 64 of WIN
    are the race itself (one for each dart of lead, up to 32 either
    way), so a decided-looking game is still played to gain ground."""
    new = 0
    scale = 48 + mine // 8  # the spread of the finish, x16 darts
    base = 16 * left - self._dd - mine
    v = WIN
    tb = 0
    rb = self._rb
    fine = len(rb) < 4  # up to four sides (below)
    sig = self._sig  # the logistic's points (cpu._SIG: let go with cpu.py)
    if sur:
        col = self._col
        miss = self._miss
        opp = self._opp
        pub = self._pub
        nxt = self._nxt
        gw = self._gw
    for d in range(len(rb)):
        y = rb[d] + base  # this opponent's lag behind the thrower, x16 darts
        if sur:
            c = col[d]
            if c:
                take = sur if sur < c else c
                if pub and take == miss[opp[d]]:
                    take -= 1  # the last mark of a game must be thrown
                if take:
                    # a gifted mark counts `gw` times the darts it saves
                    # the taker (cpu.Player.__init__)
                    y += (e[c - take] - e[c]) * gw
                    if take == miss[opp[d]]:
                        new |= 1 << opp[d]
                if nxt:
                    sur = 0  # gift next: only the first side still open on the bed
        tb += y
        x = y * 64 // scale
        if x <= -512:
            v = v * sig[0] // 16000  # WIN
        elif x >= 511:
            v = v * sig[64] // 16000
        elif fine:
            j = (x >> 4) + 32
            f = sig[j]
            v = v * (f + ((sig[j + 1] - f) * (x & 15) >> 4)) // 16000
        else:  # five sides or more: the nearest point (the slowest decisions)
            v = v * sig[(x + 8 >> 4) + 32] // 16000
    self.new = new
    if pend or new:  # an opponent has won unless the thrower closes out with the darts left
        x = (left * 16 - mine) * 32 // 3
        if x <= -512:
            return sig[0]
        if x >= 511:
            return sig[64]
        f = sig[(x >> 4) + 32]
        return f + ((sig[(x >> 4) + 33] - f) * (x & 15) >> 4)
    if not rb:
        return WIN * 1600 // (1600 + mine)
    tb = (tb >> 4) + 32
    return v * (WIN - 64) // WIN + (0 if tb < 0 else 63 if tb > 63 else tb)


BIAS = 16384  # added to each of rank's sector values (at most WIN either way) in its array


@micropython.viper
def dot(ang, ws, q: int, n: int) -> int:
    """An aim's weighted sum over its n sectors (rank's hot loop): `ang` the
    chances (array 'H', 1/4096 each), `ws` the sector values from entry q
    on, each stored plus BIAS (array 'H': viper reads it unsigned, and a
    64-bit unix port would not sign-extend a 32-bit read), so the sum is
    BIAS x the chances too much (the caller takes it off). Machine words
    throughout: at most 4096 x 32768, under 2**31."""
    a = ptr16(ang)
    w = ptr16(ws)
    acc = 0
    while n:
        n -= 1
        acc += int(a[n]) * int(w[q + n])
    return acc

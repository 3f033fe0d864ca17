# Electrical model of a dartboard's segment matrix, for the virtual board.
#
# Rows are driven low one at a time (the others float, as open-drain pins);
# columns have pull-ups. A column reads low when a closed crossing joins it
# to the driven row, directly or through other closed crossings (ghosting:
# row r -> col a -> row s -> col b makes (r, b) read closed too). Closures
# are scheduled in board time [on, off); reads never allocate while the set
# of closed crossings is unchanged.
import array

from shove import ticks_diff as _diff


class MatrixModel:
    def __init__(self, rows, cols, slots=32):
        self.rows = rows
        self.cols = cols
        self.colmask = (1 << cols) - 1
        self.on = array.array("i", bytes(4 * slots))
        self.off = array.array("i", bytes(4 * slots))
        self.cell = array.array("h", [-1] * slots)  # row << 8 | col, -1 free
        self.read = bytearray(slots)  # a read found the closure closed (set when one does)
        self.unseen = 0  # closures over before any read found them closed (the test bench's figure) ...
        self.unseen_os = 0  # ... of them, those in a stretch the OS took the CPU away in
        self.disturbed = False  # (set by the board at each read: the stretch it ends was)
        self.direct = array.array("H", bytes(2 * rows))  # closed crossings per row
        self.seen = array.array("H", bytes(2 * rows))  # what each row reads, ghosts included
        self.next_change = 0
        self.idle = True  # no closure scheduled: reads are a table lookup
        # wiring faults a test injects (lines: rows 0.., then columns rows..)
        self.shorts = []  # pairs of lines joined (a solder bridge)
        self.grounded = 0  # lines joined to ground, a bit each

    def close(self, row, col, on, off):
        """Schedule (row, col) closed from board tick `on` to `off`. False if full."""
        for i in range(len(self.cell)):
            if self.cell[i] < 0:
                self.cell[i] = (row << 8) | col
                self.read[i] = 0
                self.on[i] = on
                self.off[i] = off
                if self.idle or _diff(on, self.next_change) < 0:
                    self.next_change = on
                self.idle = False
                return True
        return False

    def clear(self):
        for i in range(len(self.cell)):
            self.cell[i] = -1
        self.update(0)

    def update(self, now):
        """Recompute which crossings are closed at `now`."""
        direct = self.direct
        for r in range(self.rows):
            direct[r] = 0
        nxt = None
        for i in range(len(self.cell)):
            cell = self.cell[i]
            if cell < 0:
                continue
            if _diff(now, self.off[i]) >= 0:
                # updates come at the next read after each change: one first
                # past the end means no read fell inside the closure
                if not self.read[i]:
                    self.unseen += 1
                    if self.disturbed:
                        self.unseen_os += 1
                self.cell[i] = -1
                continue
            if _diff(now, self.on[i]) >= 0:
                self.read[i] = 1
                direct[cell >> 8] |= 1 << (cell & 0xFF)
                t = self.off[i]
            else:
                t = self.on[i]
            if nxt is None or _diff(t, nxt) < 0:
                nxt = t
        self.idle = nxt is None
        if nxt is not None:
            self.next_change = nxt
        self._ghosts()

    def _ghosts(self):
        direct = self.direct
        for r in range(self.rows):
            cols = direct[r]
            reached = 1 << r
            grew = True
            while grew:
                grew = False
                for s in range(self.rows):
                    if not reached & (1 << s) and direct[s] & cols:
                        reached |= 1 << s
                        cols |= direct[s]
                        grew = True
            self.seen[r] = cols

    def levels(self, row, now):
        """Column input levels with `row` driven low: 1 = high (open)."""
        if not self.idle and _diff(now, self.next_change) >= 0:
            self.update(now)
        if self.grounded or self.shorts:  # a wiring fault: the slow, general way
            return self.colmask & ~(self.line_levels(row, now) >> self.rows)
        return self.colmask & ~self.seen[row]

    def line_levels(self, driven, now):
        """Every line an input with its pull-up, except `driven` (-1: none)
        driven low: the lines that read low, a bit each (rows, then
        columns). Low spreads through closed crossings, shorts and ground."""
        if not self.idle and _diff(now, self.next_change) >= 0:
            self.update(now)
        rows = self.rows
        low = self.grounded | ((1 << driven) if driven >= 0 else 0)
        grew = True
        while grew:
            grew = False
            for r in range(rows):
                cols = self.direct[r] << rows
                if not cols:
                    continue
                if low >> r & 1:
                    if cols & ~low:
                        low |= cols
                        grew = True
                elif cols & low:
                    low |= 1 << r
                    grew = True
            for a, b in self.shorts:
                if (low >> a & 1) != (low >> b & 1):
                    low |= (1 << a) | (1 << b)
                    grew = True
        return low

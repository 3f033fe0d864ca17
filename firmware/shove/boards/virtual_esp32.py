# The virtual board's ESP32 timing model (HAPENNY_TIMING=esp32; `make bench`
# uses it), loaded only when it is picked. The board's clock then counts what
# the chip would spend, not what this PC does:
# - the firmware's own computation: this process's CPU time (so the OS taking
#   the CPU away never counts, a garbage collection or a long computation
#   always does) times the scale, how much slower MicroPython runs on a
#   240 MHz ESP32 than here (docs/virtual-board.md says where it comes from;
#   HAPENNY_ESP32_SCALE overrides it);
# - the simulator's own work (the electrical model, the control channel, the
#   host's file I/O) not at all: a fixed cost of the chip's stands for it;
# - the UART (virtual_uart.py), the flash (Esp32Flash below, on
#   virtual_flash.py's Flash) and the strip, at the chip's figures.
import array
import gc
import time

from micropython import const

from shove import scanner
from shove.boards.virtual_clock import MASK, READ_US, STALL_US, STRETCH_US, Clock, host_open
from shove.boards.virtual_flash import Flash

ESP32_SCALE = 100  # bench/esp32_scale.py: MicroPython's perf_bench, this machine vs a 240 MHz ESP32
# The chips' clocks: the classic ESP32 and the S3 run MicroPython at 240 MHz
# (the S3's LX7 is credited with no more per clock than the LX6: nothing here
# measured it), the C3 at 160 MHz, so the same bytecode takes 1.5 times as
# long there. The second core of the dual-core chips runs ESP-IDF's own tasks
# (Wi-Fi, when on); without Wi-Fi the game's core does the same work on all
# three (the RTOS tick and the console's interrupts), so the single-core C3
# is charged its clock only.
MHZ = {"esp32": 240, "esp32s3": 240, "esp32c3": 160}


def chip_scale(scale, chip):
    """The timing model's factor for `chip`, from the classic ESP32's."""
    return scale * 240 // MHZ.get(chip, 240)


# Reading the clock: a method call and time.ticks_us() in bytecode, a few us
# on the chip; the virtual clock's own bookkeeping is not charged.
TICKS_US = 3

# From a column's falling edge to the handler's read on the chip: the GPIO interrupt (C in
# IRAM), mp_sched_schedule, the call made at the next jump in bytecode (py/scheduler.c,
# mp_handle_pending), and esp32.py's _edge up to its viper read (some ten bytecodes). Not
# measured on a chip. Charged as a figure, not timed: this machine's clock counts whole us,
# each some 130 of the chip's, far coarser than the few us it stands for.
_EDGE_US = const(30)
_MERGE_US = const(5)  # esp32.py's _merge: a viper call from bytecode ORing a few rows
# How near the next edge a stretch of the firmware's must begin for its heap to be weighed
# (sim): a collection in the stretch is seen by the heap in use falling, by more than the
# firmware's own frees (a buffer grown or let go) come to
_NEAR_US = const(5000)
_GC_FELL = const(1024)
_NEVER = const(1 << 60)  # (no edge due; a small int on this 64-bit port, as every board time here)


class Esp32Clock(Clock):
    def __init__(self, scale, board=None):
        super().__init__()
        self.slow = False  # the modelled costs are charged to the clock, not slept
        self.scale = scale
        self._cpu_f = host_open("/proc/self/schedstat", "rb")  # on-CPU time, ns
        self._cpu_buf = bytearray(64)
        self._cpu_last = self._cpu_ns()
        self._own = 0  # short gaps counted since the last look at the CPU time
        self.last = time.ticks_us()
        # the columns' edge interrupt (setup); the names are ones the firmware has already: a
        # new one takes an entry of the port's pools of names, whose next block of some
        # kilobytes can then come due inside a game, in a heap cut up (tests/test_output_budget.py)
        self.board = None
        self.on = False
        self.due = _NEVER  # the board time (total) of the next edge
        self.held = False  # the rows held low: the last read found every crossing open
        self.pending = -1  # the board time a read found a closure (its own edge) whose handler has not run
        self.armed = False  # the handler runs (no other inside it)
        self.used = -1  # the heap in use where the last stretch near an edge began (-1: not weighed)
        self.counts = [0, 0, 0]  # the test bench's figures: handlers run, their reads, those a collection held
        if board is not None:
            self.setup(board)

    def ticks_us(self):
        raw = time.ticks_us()
        gap = time.ticks_diff(raw, self.last)
        if self.in_sim:  # the board's own code reading the clock (the control channel): the simulator's
            self.last = raw
            self.sim(0)
            return (self.base + self.total) & MASK
        self.charge(raw)
        self.sim(TICKS_US)
        return (self.base + self.total) & MASK

    def ticks_ms(self):
        self.ticks_us()
        t = (self.base + self.total // 1000) & MASK
        self.sim(0)  # one clock read (charged in ticks_us), not two
        return t

    def look_ms(self):
        return (self.base + self.total // 1000) & MASK

    def _cpu_ns(self):
        """This process's time on the CPU (the first field of schedstat),
        parsed without allocating."""
        f = self._cpu_f
        f.seek(0)
        n = f.readinto(self._cpu_buf)
        v = 0
        b = self._cpu_buf
        for i in range(n):
            c = b[i]
            if c < 48 or c > 57:
                break
            v = v * 10 + c - 48
        return v

    def work(self):
        self.ticks_us()

    def charge(self, raw=None):
        """The firmware's work up to here, or up to host instant `raw` (a socket
        call's entry into the runtime: its Python after that is the
        simulator's, runtime/vsocket.py). One method, not two: a new name on
        the board can open a new pool of names, kilobytes of its heap."""
        if raw is None:
            raw = time.ticks_us()
        gap = time.ticks_diff(raw, self.last)
        if gap <= 0:
            return
        t = self.total
        self.last = raw
        self.total += self._gap(gap)
        if self.due <= self.total and not self.in_sim:
            # a column fell while the firmware ran since its last call into the board
            self.handle(t)

    def _gap(self, gap):
        # Short gaps are the firmware computing. Past STALL_US, ask the kernel
        # how much of the time since the last look this process really ran:
        # the rest was the OS's. Either way the chip would take `scale` times as long.
        if gap <= STALL_US:
            self._own += gap
            return gap * self.scale
        cpu = self._cpu_ns()
        ran = (cpu - self._cpu_last) // 1000 - self._own  # of this gap, what was ours
        self._cpu_last = cpu
        self._own = 0
        if ran < gap:
            self.stalls += 1
            gap = ran if ran > 0 else 0
            self.stall_at = self.total + gap * self.scale
        return gap * self.scale

    def sim(self, us=0):
        if self.due - self.total < _NEAR_US + us:  # an edge may come in the stretch this may begin
            sc = self.board.scanner
            self.used = gc.mem_alloc() if sc is not None and sc.calm else -1  # (-1: not weighed)
        t = time.ticks_us()
        self._own += time.ticks_diff(t, self.last)
        self.last = t
        self.total += us

    def spent(self, us):
        # a modelled slow operation: the host's own time for it (a write into
        # the pseudo-terminal, file I/O) is the simulator's, counted as seen;
        # else the next look at the CPU time would charge it to the firmware
        self.sim(us)

    def busy(self, us):
        self.ticks_us()
        self.spent(us)

    def io(self, us):
        self.sim(us)  # the host's file I/O since the last tick is not the chip's

    def wait(self, poll, ms):
        us = super().wait(poll, ms)
        # the CPU the wait itself took (the poll) is the simulator's, not
        # the firmware's: start counting the firmware's again from here
        self._cpu_last = self._cpu_ns()
        self._own = 0
        return us

    def burst(self, board, snap, n):
        """Up to `n` reads while all read open, as the chip's viper loop
        does them: each READ_US apart on the board's clock; the electrical
        model is the simulator's work and is not charged."""
        self.sim(0)  # scan_idle's own steps between two bursts: the simulator's
        m = board.model
        full = board.full
        rows = board.rows
        k = 0
        while k < n:
            now = (self.base + self.total) & MASK
            gap = self.total - board.last_read
            m.disturbed = gap > STRETCH_US and board.stretch(gap)
            if gap > board.gap_max_us:
                board.gap_max_us = gap
            board.last_read = self.total
            closed = 0
            for r in range(rows):
                v = ~m.levels(r, now) & full
                snap[r] = v
                closed |= v
            self.total += READ_US
            if closed:
                break
            k += 1
            if k == 1 and not m.idle and not (m.grounded or m.shorts) \
                    and scanner.ticks_diff(m.next_change, now) > n * READ_US:
                # the closures stand still until the model's next change, past
                # this burst: every other read gives what the first one did
                self.total += (n - 1) * READ_US
                board.last_read = self.total - READ_US
                k = n
        self.seen(k < n)
        self.sim(0)
        return k

    # ---- the columns' edge interrupt -------------------------------------------------
    # esp32.py's: between two reads the chip holds its rows low (a read that finds every
    # crossing open leaves them so), so a crossing that closes pulls its column down; so does
    # a read's own driving of a closed crossing's row. The port schedules the handler
    # (Board._edge) from the GPIO interrupt, and py/vm.c runs it at the next jump in
    # bytecode, never inside viper or C (ports/esp32/machine_pin.c).
    #
    # Here the firmware's bytecode between two calls into the board (a stretch) is timed as
    # a whole, so the handler runs where the firmware next calls the board (charge), at the
    # board time it would have run on the chip: the edge's; the stretch's start if the edge
    # came inside the board's own code (viper and C on the chip: a read, a burst, the UART,
    # the flash, a socket, the strip); the stretch's end if the heap in use fell in it (a
    # collection, C no handler interrupts, may have held it). The rest of the stretch is
    # charged after the handler. A stretch's other C (a long formatting, a JSON dump) is not
    # seen: an edge in it is served early.

    def setup(self, board):
        """The interrupt for `board`, its reads made by read() below (here, not in the
        board's making, which the 32-bit heap tour loads: no name of the ESP32 model's there)."""
        self.board = board
        self.snap = array.array("H", bytes(2 * board.rows))  # the handler's own read
        self.levels = type(board).read_matrix  # (the electrical model's)
        self.on = True
        board.read_matrix = self.read
        board.edges = self.turn  # (esp32.py's edges(on): diag turns it off while it records)

    def turn(self, on):
        """esp32.py's Board.edges: off while diag records raw closures."""
        self.on = on
        self.pending = -1
        self.wake()

    def read(self, snap):
        """The board's read_matrix: the electrical model is the simulator's
        work, the chip's read (esp32.py's viper _scan) is charged instead."""
        self.charge()
        return self.look(snap)

    def look(self, snap):
        was = self.in_sim
        self.in_sim = True
        b = self.board
        self.levels(b, snap)
        closed = 0
        for r in range(b.rows):
            closed |= snap[r]
        self.sim(READ_US)
        self.in_sim = was
        self.seen(closed)
        return closed

    def seen(self, closed):
        """A read found a closure (its row, driven, pulled a column down: an
        edge, and the rows are left released) or every crossing open (the rows
        held low: the next closure to start makes an edge)."""
        if closed:
            self.pending = self.total
            self.held = False
        else:
            self.held = True
        self.wake()

    def wake(self):
        """When the next edge comes (the test bench calls this too, when it
        schedules closures)."""
        b = self.board
        if self.armed or not self.on or b is None or b.scanner is None:
            self.due = _NEVER
        elif self.pending >= 0:
            self.due = self.pending
        elif self.held and not b.model.idle:
            self.due = self.total + scanner.ticks_diff(b.model.next_change, (self.base + self.total) & MASK)
        else:
            self.due = _NEVER

    def handle(self, start):
        """charge() found the edge inside the stretch the firmware ran from
        board time `start` to now: the handler at the time it would have run,
        then the rest of the stretch."""
        end = self.total
        at = self.due if self.due > start else start
        sc = self.board.scanner
        if sc is not None and sc.calm and self.used >= 0 and gc.mem_alloc() < self.used - _GC_FELL:
            at = end  # the heap in use fell: a collection in the stretch
            self.counts[2] += 1
        self.pending = -1
        self.armed = True
        self.due = _NEVER
        self.total = at
        self.handler()
        self.total += end - at
        self.armed = False
        self.wake()

    def handler(self):
        """esp32.py's Board._edge."""
        sc = self.board.scanner
        self.counts[0] += 1
        if sc is None or not sc.calm:
            self.sim(_EDGE_US)
            return
        e = self.snap
        self.counts[1] += 1
        self.sim(_EDGE_US)
        if self.look(e):  # a closure: added to the scanner's snapshot, which may hold one not stepped yet
            snap = sc.snap
            for r in range(self.board.rows):
                snap[r] |= e[r]
            self.sim(_MERGE_US)
            sc.step(self.ticks_us())


# littlefs's own work (C) is charged from what it does, not from this
# machine's time between two operations (that holds the call into the
# Python block device, which the chip's C one does not make, and whatever
# the OS takes, both far above littlefs's own microseconds): LFS_OP_US an
# operation for its cache and tag bookkeeping, and LFS_NS_PER_BYTE for every
# byte read or programmed, which littlefs checks or makes a CRC of
# (lfs2_crc in lfs2_util.c: a 16-entry table, two steps a byte, some 20
# cycles at 240 MHz; 100 ns errs slow).
LFS_OP_US = 10
LFS_NS_PER_BYTE = 100


class Esp32Flash(Flash):
    """The ESP32 timing model: each operation's time charged to the board's
    clock, with the host's file I/O behind it not counted; bytes the host
    writes keep arriving in the UART's ring through the stall."""

    def __init__(self, clock, uart):
        super().__init__(clock)
        self.uart = uart
        self._mark = -1  # the board time at the end of the last operation (unchanged since: only littlefs ran)

    def flash_begin(self):
        c = self.clock
        if c.total == self._mark:
            c.sim(LFS_OP_US)  # since the last operation only littlefs ran
        else:
            c.charge()  # the firmware's work up to here
        # what the host has written by now is on the wire from here: the
        # stall that follows does not stop it arriving, and the ring
        # (filled by the UART's IRAM interrupt) loses what it cannot hold
        try:
            self.uart.advance()
        except MemoryError:  # a file closed by its finaliser: the heap is locked
            pass
        c.sim(0)

    def flash_end(self, kind, n, pages):
        us = self.cost_us(kind, n, pages)
        self._run(us)
        c = self.clock
        # the host's file I/O is not the chip's; littlefs's CRC of the bytes is
        c.sim(us + (n * LFS_NS_PER_BYTE // 1000 if kind != 1 else 0))
        self._mark = c.total

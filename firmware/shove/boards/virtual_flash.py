# The virtual board's flash: littlefs (MicroPython's own) on a block device
# that counts every operation (host/hapenny/sim/runtime/flashdev.py), the
# time each operation costs on the chip, and the faults a test sets through
# the control channel (a full flash, a write held at a stage or cut in the
# middle of an operation until the power goes). The block device calls
# flash_begin() and flash_end() around each operation; the time goes to the
# board's clock: slept in the plain model (Flash), charged in the ESP32 one
# (virtual_esp32.py's Esp32Flash, loaded only with that model).
#
# Costs, from Winbond's W25Q32FV datasheet (AC electrical characteristics),
# a common 4 MB SPI NOR flash: sector erase (4 KB) tSE 45 ms typical, 400 ms
# at most; page program (up to 256 bytes) tPP 0.7 ms typical, 3 ms at most.
# Reads: 40 MHz dual I/O, about 10 bytes a us, and some 15 us a call for
# esp_flash_read's set-up. While the flash is busy the cache is off and the
# CPU stalls (ESP-IDF's spi_flash guard), so the scanner is blind for all of
# it; the REPL UART's interrupt handler lives in IRAM and keeps filling the
# 259-byte stdin ring meanwhile (ports/esp32/uart.c: IRAM_ATTR,
# ESP_INTR_FLAG_IRAM), which the ESP32 model's UART does too.
# HAPENNY_FLASH=worst charges the worst-case figures.
import os
import time

from shove import store

try:  # the simulator's runtime: the board's flash is mounted at "/"
    from flashdev import DEV  # type: ignore[import-not-found]
except ImportError:  # a bare unix port (tests): the working directory is the flash, uncounted
    DEV = []

ERASE_TYP_US = 45000
ERASE_MAX_US = 400000
PAGE_TYP_US = 700
PAGE_MAX_US = 3000
READ_CALL_US = 15
READ_BYTES_PER_US = 10


class Flash:
    def __init__(self, clock):
        self.clock = clock
        self.full = False  # a test can make the flash refuse every write
        self.hold = None  # a test can stop the next write at a stage (_wait)
        self.send = None  # the control channel's report (virtual_bench.py sets it, and the counts it reads)
        self._stages = []
        self.busy_us = 0  # board time the flash kept the CPU stalled
        self.board = None  # (set by the board) whose last matrix read starts a stretch
        self.run_from = -1  # ... the stretch the flash's busy time below is in
        self.run_us = 0
        self.store_max_us = 0  # the longest storage call (stats: since the last stats)
        self._erase_us = ERASE_TYP_US
        self._page_us = PAGE_TYP_US
        if os.getenv("HAPENNY_FLASH") == "worst":
            self._erase_us = ERASE_MAX_US
            self._page_us = PAGE_MAX_US
        self.dev = DEV[0] if DEV else None  # the counting block device under "/"
        if self.dev:
            self.dev.clock = self

    # ---- the block device's calls around each operation ----------------------------
    def flash_begin(self):
        self.clock.ticks_us()

    def cost_us(self, kind, n, pages):
        """An operation of `kind` (0 read, 1 erase, 2 program) of n bytes,
        touching `pages` program pages: the time the CPU is stalled for it."""
        if kind == 1:
            return self._erase_us
        if kind == 2:
            return self._page_us * pages
        return READ_CALL_US + n // READ_BYTES_PER_US

    def _run(self, us):
        """The flash's busy time in the stretch since the matrix's last
        read (the board's stretch() reads it)."""
        self.busy_us += us
        b = self.board
        if b is not None:
            if self.run_from != b.last_read:
                self.run_from = b.last_read
                self.run_us = 0
            self.run_us += us

    def flash_end(self, kind, n, pages):
        us = self.cost_us(kind, n, pages)
        self._run(us)
        if kind and self.clock.slow:
            # erases and programs are slept; reads (tens of us each, fast
            # beside a write) are not: the ESP32 model charges them
            self.clock.io(us)

    # ---- the board's storage calls --------------------------------------------------
    def read_file(self, path):
        return store.read(path)  # the block device charges its reads

    def _stored(self, t0):
        """A storage call that began at board time t0 ended: the scan loop was
        held for all of it (littlefs's work and the flash's stalls)."""
        c = self.clock
        c.ticks_us()
        dt = c.total - t0
        if dt > self.store_max_us:
            self.store_max_us = dt

    def write_file(self, path, data):
        # littlefs's own replace, its time charged by the block device. Held
        # at a stage (tests), the data is synced halfway ("tmp": a cut leaves
        # a torn .tmp beside the committed file) and before the rename
        # ("rename": a whole .tmp beside the old file).
        self._check()
        c = self.clock
        c.work()  # the firmware's work up to the write is the chip's
        t0 = c.total
        if self.hold in ("tmp", "rename"):
            self._stages = ["tmp", "rename"]
            store.write_atomic(path, data, self._stage)
        else:
            store.write_atomic(path, data)
        self._wait("written")
        self._stored(t0)

    def sync_write(self, f, data):
        # bytes added to an open file and synced: one littlefs commit for a
        # small file (shove/jstore.py); held at "append" (tests), the board
        # stops just before it
        self._check()
        self._wait("append")
        c = self.clock
        c.work()
        t0 = c.total
        f.write(data)
        f.flush()
        self._stored(t0)

    def append_file(self, path, data):
        # held at "append" (tests), the first part of the record is synced
        # first: a cut there leaves a torn record (littlefs alone would drop
        # an unsynced append whole; torn is the stricter case)
        self._check()
        if self.hold == "append":
            half = len(data) // 2
            store.append(path, data[:half])
            self._wait("append")
            data = data[half:]
        store.append(path, data)

    def _check(self):
        if self.full:
            raise OSError(28)  # ENOSPC, as littlefs reports a full or worn flash

    def _stage(self):
        self._wait(self._stages.pop(0))

    def _wait(self, stage):
        """A test can hold the board at a stage of a write (`hold` on the
        control channel) and cut the power there for certain."""
        if self.hold == stage:
            self.send({"held": stage})
            while True:  # until the power is cut
                time.sleep_ms(100)

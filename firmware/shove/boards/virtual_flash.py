# The virtual board's flash: the working directory, as slow as the chip's
# littlefs, and the faults a test sets through the control channel (a full
# flash, a write held at a stage until the power is cut). The time goes to
# the board's clock (virtual_clock.py: waited for in the plain model,
# charged in the ESP32 one); what each operation costs is the flash's own:
# Flash in the plain model, Esp32Flash in the ESP32 one.
import time

from shove import store

FLASH_BASE_MS = 8  # littlefs write + rename: a few to tens of ms
FLASH_MS_PER_KB = 4
FLASH_APPEND_US = 1500  # program a few bytes into an erased block + a metadata commit
# The ESP32 model: a file rewritten beyond its inline size (128 bytes:
# cache_size = 4 x 32-byte program size, extmod/vfs_lfsx.c) takes a freshly
# erased 4 KB block (an erase, ~45 ms typical) and its programming; bytes
# appended to a file kept open are only programmed; every sync commits
# metadata.
ERASE_US = 45000
PROGRAM_US_PER_KB = 2000
COMMIT_US = 1000
INLINE_MAX = 128


class Flash:
    def __init__(self, clock):
        self.clock = clock
        self.full = False  # a test can make the flash refuse every write
        self.hold = None  # a test can stop the next write at a stage (_wait)
        self.send = None  # the control channel's report (set by the board when there is one)
        self._stages = []

    # ---- what each operation costs (us) --------------------------------------------
    def read_us(self, data):
        return 0  # not modelled: reads are fast beside a write

    def write_us(self, n):
        """A file of `n` bytes replaced: (all of it, the commit before the rename)."""
        total = 1000 * (FLASH_BASE_MS + FLASH_MS_PER_KB * n // 1024)
        return total, total // 4

    def append_us(self, n):
        return FLASH_APPEND_US

    # ---- the board's storage calls --------------------------------------------------
    def read_file(self, path):
        c = self.clock
        c.work()
        data = store.read(path)
        c.sim(self.read_us(data))
        return data

    def write_file(self, path, data):
        # Spent where the chip spends it: programming the temporary file
        # (a cut leaves it torn beside the committed one), then committing it
        # before the rename (a cut leaves a whole .tmp beside the old file).
        # littlefs itself would show an uncommitted file empty or not at all;
        # a torn one is the stricter case. store.write_atomic makes the
        # replace and calls back at those two points, so its logic is the one
        # a board runs.
        self._check()
        total, commit = self.write_us(len(data))
        self._stages = [(total - 2 * commit, "tmp"), (commit, "rename")]
        self.clock.work()  # the firmware's work up to the write is the chip's
        store.write_atomic(path, data, self._stage)
        self._wait(commit, "written")

    def append_file(self, path, data):
        # Programmed byte by byte into the open block: a cut can tear the
        # record (littlefs would drop an unsynced append whole; torn is stricter).
        self._check()
        us = self.append_us(len(data))
        half = len(data) // 2
        c = self.clock
        c.work()
        store.append(path, data[:half])
        self._wait(us, "append")
        store.append(path, data[half:])
        c.sim(0)

    def _check(self):
        if self.full:
            raise OSError(28)  # ENOSPC, as littlefs reports a full or worn flash

    def _stage(self):
        us, stage = self._stages.pop(0)
        self._wait(us, stage)

    def _wait(self, us, stage):
        """The chip spends `us` of flash time at this point of a write, so a
        power cut (the simulator killing this process) can land here. A test
        can hold the board at a stage (`hold` on the control channel) and cut
        the power there for certain."""
        if self.hold == stage:
            self.send({"held": stage})
            while True:  # until the power is cut
                time.sleep_ms(100)
        self.clock.io(us)


class Esp32Flash(Flash):
    """The ESP32 timing model's costs (see above)."""

    def read_us(self, data):
        # littlefs reads at SPI flash speed (~10 MB/s with the cache): a
        # directory lookup and the file's blocks
        return COMMIT_US // 2 + (len(data) if data else 0) // 10

    def write_us(self, n):
        if n <= INLINE_MAX:  # stored in the directory's metadata: the file and the rename
            return 2 * COMMIT_US, COMMIT_US
        return ERASE_US + PROGRAM_US_PER_KB * n // 1024 + 2 * COMMIT_US, COMMIT_US

    def append_us(self, n):
        return COMMIT_US + PROGRAM_US_PER_KB * n // 1024

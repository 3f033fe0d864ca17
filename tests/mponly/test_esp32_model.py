# MicroPython only: the ESP32 timing model charges the chip's costs, not the
# simulator's. The host's file I/O behind the board's flash is made slow here
# (400 us of a clock the test controls, which would be 40 ms at the model's
# factor of 100): the board's clock must move by the flash model's figures.
from shove import profile, store
from shove.boards import virtual


class Clock:
    """Stands in for the time module: moves only when the host "works"."""

    def __init__(self):
        self.t = 1000

    def ticks_us(self):
        return self.t

    def ticks_ms(self):
        return self.t // 1000

    def ticks_diff(self, a, b):
        return a - b


class SlowHostFiles:
    def __init__(self, clock):
        self.clock = clock

    def append(self, path, data):
        self.clock.t += 400
        store.append(path, data)

    def write_atomic(self, path, data, pause=None):
        self.clock.t += 400
        store.write_atomic(path, data, pause)

    def read(self, path):
        self.clock.t += 400
        return store.read(path)


def _board():
    clock = Clock()
    real = virtual.time, virtual.store
    virtual.time = clock
    virtual.store = SlowHostFiles(clock)
    b = virtual.Board(profile.Profile(profile.default_dict()))
    b.esp32_timing(100)
    return b, real


def _restore(real):
    virtual.time, virtual.store = real


def test_a_journal_append_costs_the_flash_model_not_the_hosts_file_io():
    b, real = _board()
    try:
        store.remove("t_model.jnl")
        t0 = b._total
        b.append_file("t_model.jnl", b"abc")
        spent = b._total - t0
        # a commit plus programming 3 bytes, and one clock read
        assert spent == virtual.COMMIT_US + virtual.PROGRAM_US_PER_KB * 3 // 1024 + virtual.TICKS_US, spent
    finally:
        _restore(real)
        store.remove("t_model.jnl")


def test_a_small_file_rewrite_costs_two_commits_not_the_hosts_file_io():
    b, real = _board()
    try:
        t0 = b._total
        b.write_file("t_model.json", b"{}")
        spent = b._total - t0
        assert spent == 2 * virtual.COMMIT_US + virtual.TICKS_US, spent
        t0 = b._total
        assert b.read_file("t_model.json") == b"{}"
        assert b._total - t0 == virtual.COMMIT_US // 2 + virtual.TICKS_US
    finally:
        _restore(real)
        store.remove("t_model.json")


def test_the_firmwares_own_work_is_still_charged_at_the_factor():
    b, real = _board()
    try:
        t0 = b._total
        b.ticks_us()  # nothing ran: only the clock read's own charge
        assert b._total - t0 == virtual.TICKS_US
        virtual.time.t += 7  # the firmware computes for 7 us of this machine
        t0 = b._total
        b.ticks_us()
        assert b._total - t0 == 7 * 100 + virtual.TICKS_US
    finally:
        _restore(real)

# The scan's register access where esp32.py's _scan runs as bytecode: an
# image built without the native emitter (an ESP32-C3's before MicroPython
# v1.24), for which deploy takes the viper decorator off (firmware.py's
# "esp32bc" build) and esp32.py imports these in place of viper's casts.
# Loaded only there.
import machine


class Reg:
    """A GPIO register: machine.mem32 at its address."""

    def __init__(self, addr):
        self.addr = addr

    # The scan indexes 0 only: the address kept is used as it is. The S3's and C3's
    # (0x60004000 on) are past a small int on 32 bits, so a sum would be a long integer
    # made at every access (bench/chip_scan.py: 2,432 B a read of a C3's matrix).
    def __getitem__(self, i):
        # signed (machine_mem.c): the scan's bits are the pins', never bit 31, so no mask (whose
        # long integer the chip would allocate); on a C3 (GPIO 0-21) each read is a small int
        return machine.mem32[self.addr + 4 * i if i else self.addr]

    def __setitem__(self, i, v):
        machine.mem32[self.addr + 4 * i if i else self.addr] = v


_REGS = {}  # type: dict  # one Reg an address: a scan call makes none


def ptr32(x):
    """An address: its register (kept); a buffer: itself."""
    if not isinstance(x, int):
        return x
    r = _REGS.get(x)
    if r is None:
        r = _REGS[x] = Reg(x)
    return r


def ptr8(x):
    return x


ptr16 = ptr8

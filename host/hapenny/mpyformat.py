"""The .mpy format: which MicroPython can load a compiled file. deploy
compares each file's header with the board's sys.implementation._mpy before
copying anything."""

# .mpy header (py/persistentcode.c): b"M", version, feature byte, small-int
# bits. Feature byte: bits 0-1 the native sub-version, bits 2-7 the native
# architecture (py/persistentcode.h MPY_FEATURE_DECODE_ARCH), 0 for bytecode.
ARCHS = ("none", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp",
         "xtensa", "xtensawin", "rv32imc", "rv64imc")
XTENSAWIN = 10


def arch_name(arch):
    return ARCHS[arch] if 0 <= arch < len(ARCHS) else "arch %d" % arch


def header(data):
    """(version, sub-version, arch) of a .mpy file's first bytes."""
    if len(data) < 4 or data[0] != 77:  # "M"
        raise ValueError("not a .mpy file")
    return data[1], data[2] & 3, (data[2] >> 2) & 0x2F


def board_abi(sys_mpy):
    """(version, sub-version, arch) the board loads: sys.implementation._mpy
    is MPY_FILE_HEADER_INT, the header's bytes 1 and 2 (persistentcode.h)."""
    feat = (sys_mpy >> 8) & 0xFF
    return sys_mpy & 0xFF, feat & 3, (feat >> 2) & 0x2F


def mpy_problem(data, sys_mpy, name="file"):
    """None if the board can load this .mpy, else why not (the loader's own
    test in persistentcode.c: same version; native code also needs the same
    sub-version and architecture)."""
    ver, sub, arch = header(data)
    bver, bsub, barch = board_abi(sys_mpy)
    if ver != bver:
        return "%s is .mpy v%d, the board's MicroPython loads v%d" % (name, ver, bver)
    if arch:
        if arch != barch:
            return "%s is native code for %s, the board is %s" % (name, arch_name(arch), arch_name(barch))
        if sub != bsub:
            return ("%s is native .mpy v%d.%d, the board's MicroPython loads v%d.%d: use the mpy-cross "
                    "release that matches the firmware" % (name, ver, sub, bver, bsub))
    return None

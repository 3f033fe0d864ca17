# Which chip: a pure check, used by the board at start-up and by the host's
# deploy before it copies anything.
#
# os.uname().machine is "<board name> with <MCU name>" (extmod/modos.c), the
# MCU name from the board's mpconfigboard.h: "ESP32" for the classic chip,
# "ESP32-S3", "ESP32-C3", "ESP32-S2", "ESP32-C6"... for the others. v1.29.0
# spells them with the hyphen (micropython commit 3d78efa8c2); earlier
# releases, whose .mpy format deploy also accepts, "ESP32S3" and "ESP32C3".
# Some boards add the package's name ("ESP32-C3FH4": a C3 with its flash
# inside). The scan routine knows the GPIO registers of three chips
# (boards/esp32.py); any other is refused by name.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_CLASSIC = const("ESP32")
# Classic ESP32 dies that images name otherwise, with the same GPIO
# registers (ports/esp32/boards: ESP32_GENERIC's mpconfigvariant_D2WD.cmake
# and mpconfigvariant_UNICORE.cmake; UM_TINYPICO and M5STACK_ATOM's
# mpconfigboard.h). Their flash sits in the package, wired to GPIO 16 and 17
# (ESP32 datasheet, "Pin Description" notes), so those two pins are refused
# (the UNICORE image also runs on the ESP32-S0WD, whose flash is outside and
# leaves them free, but an image cannot tell which die it is on).
_IN_PACKAGE_FLASH = const(("ESP32-D2WD", "ESP32-UNICORE", "ESP32-PICO-D4"))
KINDS = {"ESP32": "esp32", "ESP32D2WD": "esp32", "ESP32UNICORE": "esp32", "ESP32PICOD4": "esp32",
         "ESP32S3": "esp32s3", "ESP32C3": "esp32c3"}  # MCU name without the hyphen
NAMES = {"esp32": "ESP32", "esp32s3": "ESP32-S3", "esp32c3": "ESP32-C3"}  # a kind as MicroPython names it
SUPPORTED = "the classic ESP32, the ESP32-S3 and the ESP32-C3"
# On a WROVER module GPIO 16 and 17 are wired to the PSRAM, and MicroPython's
# SPIRAM images leave them out of machine.Pin (ports/esp32/machine_pin.h:
# MICROPY_HW_ENABLE_GPIO16/17 only #if !CONFIG_ESP32_SPIRAM_SUPPORT). Such an
# image names itself so: "Generic ESP32 module with SPIRAM with ESP32"
# (boards/ESP32_GENERIC/mpconfigvariant_SPIRAM.cmake).
PSRAM_PINS = (16, 17)


class ChipError(Exception):
    pass


def mcu(machine):
    """The MCU name at the end of os.uname().machine."""
    return machine.split(" with ")[-1].strip()


def kind(machine):
    """"esp32", "esp32s3" or "esp32c3" for a chip this firmware drives, else None."""
    name = mcu(machine).upper().replace("-", "")
    if name in KINDS:
        return KINDS[name]
    for head in ("ESP32S3", "ESP32C3"):  # a package's name after the chip's: ESP32-C3FH4
        if name.startswith(head):
            return KINDS[head]
    return None


def problem(machine):
    """None for a chip this firmware drives, else a sentence saying why not."""
    if kind(machine) is not None:
        return None
    return ("this firmware runs on %s, whose GPIO registers its scan drives; this board is %r (%s): "
            "flash one of those (an ESP32-WROOM-32, ESP32-S3 or ESP32-C3 board)" % (SUPPORTED, mcu(machine), machine))


def profile_problem(machine, chip):
    """None when the profile's chip (profile.py's "chip") is this board's, else why not."""
    k = kind(machine)
    if k is None or k == chip:
        return None
    return ("the board profile is for an %s, this board is an %s (%s): load a profile for the %s "
            "(hapenny deploy --profile ...)" % (NAMES.get(chip, chip), NAMES[k], machine, NAMES[k]))


def spiram(machine):
    """Whether the image is built for PSRAM (a WROVER module)."""
    return "SPIRAM" in machine.upper()


def pins_matter(machine):
    """Whether this image takes GPIO 16 and 17 away: pins_problem then has
    something to say about a profile."""
    return (spiram(machine) and kind(machine) == "esp32") or mcu(machine) in _IN_PACKAGE_FLASH


def pins_problem(machine, pins):
    """None, or why `pins` (GPIO numbers) cannot work with this image."""
    if not pins_matter(machine):
        return None
    flash = mcu(machine) in _IN_PACKAGE_FLASH
    bad = sorted(set(p for p in pins if p in PSRAM_PINS))
    if not bad:
        return None
    if flash:
        return ("GPIO %s: on the %s (%s) they are wired to the flash inside the chip's package and cannot "
                "be used: move those lines to other pins in the profile"
                % (" and ".join(str(p) for p in bad), mcu(machine), machine))
    return ("GPIO %s: on this SPIRAM image (%s) MicroPython leaves them out, as WROVER modules wire them to "
            "the PSRAM: use an ESP32-WROOM-32 module with the plain ESP32_GENERIC image, or a profile "
            "without GPIO 16 and 17" % (" and ".join(str(p) for p in bad), machine))

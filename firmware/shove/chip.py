# Which chip: a pure check, used by the board at start-up and by the host's
# deploy before it copies anything.
#
# os.uname().machine is "<board name> with <MCU name>" (extmod/modos.c), the
# MCU name from the board's mpconfigboard.h: "ESP32" for the classic chip,
# "ESP32-S2", "ESP32-S3", "ESP32-C3", "ESP32-C6"... for the others, whose
# GPIO registers sit elsewhere (the scan routine writes the classic ESP32's).
CLASSIC = "ESP32"
# Classic ESP32 dies that images name otherwise, with the same GPIO
# registers (ports/esp32/boards: ESP32_GENERIC's mpconfigvariant_D2WD.cmake
# and mpconfigvariant_UNICORE.cmake; UM_TINYPICO and M5STACK_ATOM's
# mpconfigboard.h). Their flash sits in the package, wired to GPIO 16 and 17
# (ESP32 datasheet, "Pin Description" notes), so those two pins are refused
# (the UNICORE image also runs on the ESP32-S0WD, whose flash is outside and
# leaves them free, but an image cannot tell which die it is on).
IN_PACKAGE_FLASH = ("ESP32-D2WD", "ESP32-UNICORE", "ESP32-PICO-D4")
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


def problem(machine):
    """None for a classic ESP32, else a sentence saying why not."""
    name = mcu(machine)
    if name == CLASSIC or name in IN_PACKAGE_FLASH:
        return None
    return ("this firmware drives the classic ESP32's GPIO registers; this board is %r (%s): "
            "flash a classic ESP32 (an ESP32-WROOM-32 module)" % (name, machine))


def spiram(machine):
    """Whether the image is built for PSRAM (a WROVER module)."""
    return "SPIRAM" in machine.upper()


def pins_matter(machine):
    """Whether this image takes GPIO 16 and 17 away: pins_problem then has
    something to say about a profile."""
    return spiram(machine) or mcu(machine) in IN_PACKAGE_FLASH


def pins_problem(machine, pins):
    """None, or why `pins` (GPIO numbers) cannot work with this image."""
    if not pins_matter(machine):
        return None
    flash = mcu(machine) in IN_PACKAGE_FLASH
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

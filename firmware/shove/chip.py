# Which chip: a pure check, used by the board at start-up and by the host's
# deploy before it copies anything.
#
# os.uname().machine is "<board name> with <MCU name>" (extmod/modos.c), the
# MCU name from the board's mpconfigboard.h: "ESP32" for the classic chip,
# "ESP32S2", "ESP32S3", "ESP32C3", "ESP32C6"... for the others, whose GPIO
# registers sit elsewhere (the scan routine writes the classic ESP32's).
CLASSIC = "ESP32"


class ChipError(Exception):
    pass


def mcu(machine):
    """The MCU name at the end of os.uname().machine."""
    return machine.split(" with ")[-1].strip()


def problem(machine):
    """None for a classic ESP32, else a sentence saying why not."""
    name = mcu(machine)
    if name == CLASSIC:
        return None
    return ("this firmware drives the classic ESP32's GPIO registers; this board is %r (%s): "
            "flash a classic ESP32 (ESP32-WROOM/WROVER)" % (name, machine))

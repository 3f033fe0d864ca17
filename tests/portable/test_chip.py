# The chip check shared by the board and deploy. Both interpreters.
from shove import chip


def test_the_classic_esp32_the_s3_and_the_c3_pass_by_the_names_micropython_gives_them():
    table = (("Generic ESP32 module with ESP32", "esp32"), ("Generic ESP32 module with SPIRAM with ESP32", "esp32"),
             ("ESP32 module (spiram) with ESP32", "esp32"),
             # v1.29.0 spells the MCU with a hyphen (ports/esp32/boards/*/mpconfigboard.h) ...
             ("Generic ESP32S3 module with ESP32-S3", "esp32s3"),
             ("Generic ESP32S3 module with Octal-SPIRAM with ESP32-S3", "esp32s3"),
             ("ESP32C3 module with ESP32-C3", "esp32c3"),
             # ... releases before it without (v1.23 to v1.28 load the same .mpy format)
             ("Generic ESP32S3 module with ESP32S3", "esp32s3"), ("ESP32C3 module with ESP32C3", "esp32c3"),
             # boards that name the package: a C3 with its flash inside
             ("LOLIN_C3_MINI with ESP32-C3FH4", "esp32c3"), ("LOLIN_C3_MINI with ESP32C3FH4", "esp32c3"),
             # ... and an S3 with its flash and PSRAM inside
             ("LOLIN_S3_MINI with ESP32-S3FH4R2", "esp32s3"), ("A board with ESP32S3R8", "esp32s3"))
    for machine, kind in table:
        assert chip.kind(machine) == kind, machine
        assert chip.problem(machine) is None, machine


def test_other_chips_are_refused_with_the_chips_that_are_supported():
    for machine in ("Generic ESP32S2 module with ESP32-S2", "Generic ESP32S2 module with ESP32S2",
                    "LOLIN_S2_MINI with ESP32-S2FN4R2", "Generic ESP32C6 module with ESP32-C6",
                    "Generic ESP32C6 module with ESP32C6", "ESP32C2 module with ESP32-C2",
                    "ESP32C5 module with ESP32-C5", "Generic ESP32H2 module with ESP32-H2",
                    "Generic ESP32P4 module with ESP32-P4", "linux [GCC 14.2.1] version", ""):
        assert chip.kind(machine) is None, machine
        why = chip.problem(machine)
        assert why is not None, machine
        assert "the classic ESP32, the ESP32-S3 and the ESP32-C3" in why and chip.mcu(machine) in why, why


def test_a_profile_for_another_chip_is_named_with_the_board_it_is_on():
    assert chip.profile_problem("Generic ESP32 module with ESP32", "esp32") is None
    assert chip.profile_problem("ESP32C3 module with ESP32-C3", "esp32c3") is None
    why = chip.profile_problem("ESP32C3 module with ESP32-C3", "esp32")
    assert why.startswith("the board profile is for an ESP32, this board is an ESP32-C3"), why
    why = chip.profile_problem("Generic ESP32 module with ESP32", "esp32s3")
    assert why.startswith("the board profile is for an ESP32-S3, this board is an ESP32 "), why
    # a profile for a chip this firmware does not know is named as the profile names it
    why = chip.profile_problem("Generic ESP32 module with ESP32", "esp32s2")
    assert why.startswith("the board profile is for an esp32s2, this board is an ESP32 "), why


def test_gpio_16_and_17_are_refused_on_a_spiram_image_only():
    spi = "Generic ESP32 module with SPIRAM with ESP32"
    plain = "Generic ESP32 module with ESP32"
    assert chip.spiram(spi) and chip.spiram("ESP32 module (spiram) with ESP32") and not chip.spiram(plain)
    table = (
        (plain, [16, 17, 18], None),
        (spi, [4, 13, 18, 19], None),
        (spi, [16, 18], "GPIO 16:"),
        (spi, [18, 17, 16, 17], "GPIO 16 and 17:"),
        # an S3's octal-PSRAM image: its PSRAM pins are the profile's business (profile.py), not 16/17
        ("Generic ESP32S3 module with Octal-SPIRAM with ESP32-S3", [16, 17], None),
    )
    for machine, pins, want in table:
        why = chip.pins_problem(machine, pins)
        if want is None:
            assert why is None, (machine, pins)
        else:
            assert why.startswith(want) and "WROOM" in why and "SPIRAM" in why, why


def test_classic_dies_named_otherwise_pass_without_gpio_16_and_17():
    """ESP32_GENERIC's D2WD and UNICORE variants and the PICO-D4 boards name
    the MCU otherwise (ports/esp32/boards) but have the classic registers;
    their in-package flash takes GPIO 16 and 17."""
    for machine in ("Generic ESP32 module with ESP32-D2WD", "Generic ESP32 module with ESP32-UNICORE",
                    "TinyPICO with ESP32-PICO-D4", "M5Stack ATOM with ESP32-PICO-D4"):
        assert chip.problem(machine) is None, machine
        assert chip.pins_matter(machine), machine
        assert chip.pins_problem(machine, [4, 13, 18, 19, 21]) is None, machine
        why = chip.pins_problem(machine, [18, 17, 4, 16])
        assert why.startswith("GPIO 16 and 17:") and "flash inside the chip's package" in why, why
        assert chip.mcu(machine) in why and "SPIRAM" not in why, why
        assert chip.pins_problem(machine, [17, 5]).startswith("GPIO 17:"), machine
    # the plain classic image and the other chips keep both pins; a chip it cannot drive stays refused
    for machine in ("Generic ESP32 module with ESP32", "Generic ESP32S3 module with ESP32-S3",
                    "ESP32C3 module with ESP32-C3", "LOLIN_C3_MINI with ESP32-C3FH4"):
        assert chip.problem(machine) is None and not chip.pins_matter(machine), machine
    why = chip.problem("Generic ESP32S2 module with ESP32-S2")
    assert why is not None and "classic ESP32" in why and "ESP32-S2" in why, why

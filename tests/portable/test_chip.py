# The chip check shared by the board and deploy. Both interpreters.
from shove import chip


def test_only_the_classic_esp32_passes():
    table = (("Generic ESP32 module with ESP32", True), ("Generic ESP32 module with SPIRAM with ESP32", True),
             ("ESP32 module (spiram) with ESP32", True), ("Generic ESP32S3 module with ESP32S3", False),
             ("Generic ESP32S2 module with ESP32S2", False), ("ESP32C3 module with ESP32C3", False),
             ("Generic ESP32C6 module with ESP32C6", False), ("linux [GCC 14.2.1] version", False), ("", False))
    for machine, ok in table:
        why = chip.problem(machine)
        assert (why is None) is ok, machine
        if not ok:
            assert "classic ESP32" in why and chip.mcu(machine) in why


def test_gpio_16_and_17_are_refused_on_a_spiram_image_only():
    spi = "Generic ESP32 module with SPIRAM with ESP32"
    plain = "Generic ESP32 module with ESP32"
    assert chip.spiram(spi) and chip.spiram("ESP32 module (spiram) with ESP32") and not chip.spiram(plain)
    table = (
        (plain, [16, 17, 18], None),
        (spi, [4, 13, 18, 19], None),
        (spi, [16, 18], "GPIO 16:"),
        (spi, [18, 17, 16, 17], "GPIO 16 and 17:"),
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
    # the plain classic image keeps both pins; other chips stay refused, under MicroPython's names
    assert not chip.pins_matter("Generic ESP32 module with ESP32")
    for machine in ("Generic ESP32S3 module with ESP32-S3", "ESP32C3 module with ESP32-C3",
                    "LOLIN_C3_MINI with ESP32-C3FH4", "Generic ESP32S2 module with ESP32-S2"):
        why = chip.problem(machine)
        assert why is not None and "classic ESP32" in why and chip.mcu(machine) in why, machine

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

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

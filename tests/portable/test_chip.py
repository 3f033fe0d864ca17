# The chip and .mpy checks shared by the board and deploy. Both interpreters.
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


def _hdr(ver, sub, arch):
    return bytes([77, ver, (arch << 2) | sub, 31])


ESP32_V127 = 6 | ((3 | (10 << 2)) << 8)  # sys.implementation._mpy of v1.27 on an ESP32
UNIX_X64 = 6 | ((3 | (2 << 2)) << 8)


def test_board_abi_reads_sys_implementation_mpy():
    assert chip.board_abi(ESP32_V127) == (6, 3, chip.XTENSAWIN)
    assert chip.board_abi(UNIX_X64) == (6, 3, 2)


def test_mpy_header_against_the_board():
    # (header, board, loads?, words in the refusal)
    table = ((_hdr(6, 3, 10), ESP32_V127, True, ()), (_hdr(6, 0, 0), ESP32_V127, True, ()),
             (_hdr(6, 1, 0), ESP32_V127, True, ()),  # bytecode ignores the sub-version
             (_hdr(6, 2, 10), ESP32_V127, False, ("v6.2", "v6.3", "mpy-cross")),
             (_hdr(5, 0, 0), ESP32_V127, False, ("v5", "v6")),
             (_hdr(6, 3, 11), ESP32_V127, False, ("rv32imc", "xtensawin")),
             (_hdr(6, 3, 10), UNIX_X64, False, ("xtensawin", "x64")),
             (_hdr(6, 3, 2), UNIX_X64, True, ()))
    for data, board, ok, words in table:
        why = chip.mpy_problem(data, board, "shove/x.mpy")
        assert (why is None) is ok, (data, why)
        for w in words:
            assert w in why, (w, why)


def test_not_an_mpy_is_refused():
    for data in (b"", b"Mx", b"print(1)\n"):
        try:
            chip.header(data)
        except chip.ChipError:
            continue
        raise AssertionError(data)

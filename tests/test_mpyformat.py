"""The .mpy format check deploy makes before copying anything."""
from hapenny import mpyformat


def _hdr(ver, sub, arch):
    return bytes([77, ver, (arch << 2) | sub, 31])


ESP32_V127 = 6 | ((3 | (10 << 2)) << 8)  # sys.implementation._mpy of v1.27 on an ESP32
UNIX_X64 = 6 | ((3 | (2 << 2)) << 8)


def test_board_abi_reads_sys_implementation_mpy():
    assert mpyformat.board_abi(ESP32_V127) == (6, 3, mpyformat.XTENSAWIN)
    assert mpyformat.board_abi(UNIX_X64) == (6, 3, 2)


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
        why = mpyformat.mpy_problem(data, board, "shove/x.mpy")
        assert (why is None) is ok, (data, why)
        for w in words:
            assert w in why, (w, why)


def test_not_an_mpy_is_refused():
    for data in (b"", b"Mx", b"print(1)\n"):
        try:
            mpyformat.header(data)
        except ValueError:
            continue
        raise AssertionError(data)

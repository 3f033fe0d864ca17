"""`hapenny deploy --romfs` cut by the power while the ROMFS image is
rewritten: the package on the filesystem, found before /rom, is kept whole
until the image is written, and the next deploy finishes the job. (Apart
from tests/test_deploy_romfs.py, so that another worker runs it.)"""
import io

import pytest

from hapenny import deploy
from hapenny.sim.board import VirtualBoard
from test_deploy_checks import _up
from test_deploy_romfs import _Cut, _runs_from_romfs


def test_a_cut_while_the_image_is_rewritten_leaves_a_board_that_starts(tmp_path, monkeypatch):
    """The new package is whole on the filesystem (found before /rom) until
    the image is written; the next deploy finishes the job."""
    from mpremote.transport_serial import SerialTransport

    from hapenny import firmware

    vb = VirtualBoard(board_dir=tmp_path / "b", romfs=True, fast=True).start()
    try:
        _up(vb.port)
        package = sorted(rel for rel in firmware.build("sim") if rel.startswith("shove/"))
        real = SerialTransport.exec
        chunks = []

        def cut_mid_image(self, command, *a, **kw):
            if isinstance(command, str) and "writeblocks(" in command:
                if not chunks:  # the image's first write: the whole package is on the filesystem by now
                    assert sorted(p for p in vb.files() if p.startswith("shove/")) == package
                chunks.append(command)
                if len(chunks) == 3:  # two chunks of the new image are in, after its erase
                    raise _Cut()
            return real(self, command, *a, **kw)

        monkeypatch.setattr(SerialTransport, "exec", cut_mid_image)
        with pytest.raises(_Cut):
            deploy.deploy(vb.port, out=io.StringIO(), romfs=True)
        monkeypatch.setattr(SerialTransport, "exec", real)
        vb.power_cut()
        _up(vb.port)  # it starts and plays, from the package on the filesystem
        assert _runs_from_romfs(vb.port) is False
        summary = deploy.deploy(vb.port, out=io.StringIO(), romfs=True)
        assert summary["boot_event"] is True and summary["romfs_written"] is True
        assert not [p for p in vb.files() if p.startswith("shove")]
    finally:
        vb.stop()

"""The game journal on the board's flash (virtual board: MicroPython's
littlefs on a block device that counts what it does): a dart is one small
metadata commit and no erase, and every acknowledged action is restored
exactly after a power cut, even one in the middle of a flash operation."""
from hapenny import gamestate


def test_darts_cost_one_small_commit_and_no_erase_and_survive_a_cut(fresh_sim):
    b = fresh_sim
    st = b.new(["Ann", "Bob"], rules={"marks": 9, "beds": list(range(1, 21)), "darts": 3})
    segs = ["S%d" % (1 + i % 20) for i in range(60)]
    moves = 0
    for i, seg in enumerate(segs):
        if st["phase"] == "hold":
            st = b.req("next")["state"]
            moves += 1
        before = b.sim.stats()
        b.req("throw", seg=seg)
        st = gamestate.apply(st, b.wait("dart"))
        moves += 1
        after = b.sim.stats()
        if st["phase"] == "play":  # a dart may follow: the flash must not be erased
            assert after["flash_erases"] == before["flash_erases"], (i, before, after)
        # one commit of 64 bytes (a directory's first segment: 128)
        assert after["flash_prog_bytes"] - before["flash_prog_bytes"] <= 128, (i, before, after)
    b.req("undo")
    moves += 1
    want = b.state()
    assert want["moves"] == moves - 2  # the undo and the dart it took back
    files = b.sim.files()
    assert any(p.startswith("jnl/") for p in files) and "game.jnl" in files
    b.sim.power_cut()
    boot = b.wait("boot", timeout=20)
    assert boot["restored"] is True
    b.connect()
    assert b.state() == want


def test_a_cut_inside_a_records_flash_write_loses_only_that_dart(fresh_sim):
    b = fresh_sim
    b.new(["Ann", "Bob"])
    b.req("throw", seg="T1")
    b.req("throw", seg="S2")
    want = b.state()
    b.sim.cut_flash(1)  # the power goes halfway through the next program or erase
    b.link.send_line(b'{"cmd":"throw","id":"t","seg":"D3"}\n')
    assert b.sim.held.wait(10), "the board never wrote to its flash"
    b.sim.power_cut()
    boot = b.wait("boot", timeout=20)
    assert boot["restored"] is True
    b.connect()
    assert b.state() == want  # never acknowledged: the half-written commit is not there
    st = b.req("throw", seg="D3")["state"]  # and the game goes on
    b.sim.power_cut()
    b.wait("boot", timeout=20)
    b.connect()
    assert b.state() == st and st["moves"] == want["moves"] + 1

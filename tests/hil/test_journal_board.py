"""The game journal on the board's flash: appended, not rewritten, for every
action, and restored exactly after a power cut (virtual board: its flash is a
real directory, so the file itself can be inspected)."""
import os

from hapenny import gamestate


def test_darts_append_three_bytes_to_the_same_file_and_survive_a_cut(fresh_sim):
    b = fresh_sim
    st = b.new(["Ann", "Bob"], rules={"marks": 9, "beds": list(range(1, 21)), "darts": 3})
    path = b.sim.board_dir / "game.jnl"
    ino, size = os.stat(path).st_ino, os.path.getsize(path)
    segs = ["S%d" % (1 + i % 20) for i in range(60)]
    moves = 0
    for i, seg in enumerate(segs):
        if st["phase"] == "hold":
            st = b.req("next")["state"]
            moves += 1
        b.req("throw", seg=seg)
        st = gamestate.apply(st, b.wait("dart"))
        moves += 1
        # the same file (an atomic rewrite would be a new one), three bytes longer an action
        assert os.stat(path).st_ino == ino
        assert os.path.getsize(path) == size + 3 * moves
    b.req("undo")
    moves += 1
    want = b.state()
    assert os.path.getsize(path) == size + 3 * moves
    b.sim.power_cut()
    boot = b.wait("boot", timeout=20)
    assert boot["restored"] is True
    b.connect()
    assert b.state() == want


def test_a_torn_last_record_is_dropped_and_the_game_goes_on(fresh_sim):
    b = fresh_sim
    b.new(["Ann", "Bob"])
    b.req("throw", seg="T1")
    b.req("throw", seg="S2")
    want = b.state()
    path = b.sim.board_dir / "game.jnl"
    with open(path, "ab") as f:
        f.write(b"\x05\x02")  # a cut in the middle of the next append
    b.sim.power_cut()
    b.wait("boot", timeout=20)
    b.connect()
    assert b.state() == want  # not set aside as damaged, and nothing lost
    # the file was rewritten on a record boundary, so the next append is whole
    st = b.req("throw", seg="D3")["state"]
    b.sim.power_cut()
    b.wait("boot", timeout=20)
    b.connect()
    assert b.state() == st and st["moves"] == want["moves"] + 1

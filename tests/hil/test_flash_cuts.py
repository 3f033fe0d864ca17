"""Power cuts that land inside a flash write (virtual board: littlefs on its
counting block device, and a test can stop a write at a chosen point and
cut the power there). Whatever the point, the board restarts with the last
committed content: the old game until the rename, never a torn file."""
import pytest


def cut_while_held(b, stage, line):
    """Send `line`, let the board stop at `stage` of the write it causes,
    then cut the power there."""
    b.sim.hold_flash(stage)
    b.link.send_line(line)
    assert b.sim.held.wait(10), "the board never reached the %s stage of a write" % stage
    seen = b.sim.files()
    b.sim.power_cut()
    boot = b.wait("boot", timeout=20)
    b.connect()
    return seen, boot


def played(b):
    b.new(["Ann", "Bob"], rules={"marks": 9, "beds": list(range(1, 21)), "darts": 9})
    for seg in ("T5", "S6", "D7"):
        b.req("throw", seg=seg)
    return b.state()


NEW_GAME = b'{"cmd":"new","id":"n","players":["Cid","Dee","Eve"]}\n'


@pytest.mark.parametrize("stage", ["tmp", "rename"])
def test_a_cut_before_the_rename_keeps_the_previous_game(fresh_sim, stage):
    b = fresh_sim
    want = played(b)
    old = b.sim.files()["game.jnl"]
    seen, boot = cut_while_held(b, stage, NEW_GAME)
    # the cut found the new game's file beside the committed one: torn
    # (half its bytes) or whole, and the committed file untouched
    assert seen["game.jnl"] == old
    tmp = seen["game.jnl.tmp"]
    assert tmp.startswith(b"HPJ2 ") and b"Cid" not in old
    if stage == "tmp":
        assert b"Eve" not in tmp  # torn: the second half never reached the flash
    else:
        assert b"Eve" in tmp
    assert boot["restored"] is True
    assert b.state() == want
    # and the leftover is harmless: the next write replaces it
    st = b.req("throw", seg="S8")["state"]
    b.sim.power_cut()
    b.wait("boot", timeout=20)
    b.connect()
    assert b.state() == st and st["moves"] == want["moves"] + 1


def test_a_cut_after_the_rename_keeps_the_new_game(fresh_sim):
    b = fresh_sim
    played(b)
    seen, boot = cut_while_held(b, "written", NEW_GAME)
    assert "game.jnl.tmp" not in seen and b"Eve" in seen["game.jnl"]
    st = b.state()
    assert [s["name"] for s in st["sides"]] == ["Cid", "Dee", "Eve"] and st["moves"] == 0


def test_a_cut_just_before_a_records_commit_loses_only_that_dart(fresh_sim):
    b = fresh_sim
    want = played(b)
    before = {p: d for p, d in b.sim.files().items() if p.startswith("jnl/")}
    seen, boot = cut_while_held(b, "append", b'{"cmd":"throw","id":"t","seg":"T9"}\n')
    assert {p: d for p, d in seen.items() if p.startswith("jnl/")} == before  # nothing of it reached the flash
    assert boot["restored"] is True
    assert b.state() == want  # the dart was never acknowledged


def test_a_cut_while_the_settings_are_replaced_keeps_the_old_ones(fresh_sim):
    b = fresh_sim
    b.req("config", set={"auto_next_ms": 2500})
    before = b.req("config")["config"]
    seen, boot = cut_while_held(b, "tmp", b'{"cmd":"config","id":"c","set":{"auto_next_ms":7000}}\n')
    assert "config.json.tmp" in seen
    assert b.req("config")["config"] == before

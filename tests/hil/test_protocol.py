"""Every command of the protocol contract, and every error, on the board."""
import json
import time

import pytest
from hapenny import gamestate
from suite_profile import PROFILE


def test_info_names_board_protocol_and_matrix(board):
    rep = board.req("info")
    assert rep["protocol"] == 1 and rep["version"]
    assert rep["board"] == board.info["board"]
    assert rep["matrix"]["rows"] >= 1 and rep["matrix"]["cols"] >= 1


@pytest.mark.parametrize("id_", [1, "abc", [1, 2], {"k": None}, None, 3.5])
def test_id_is_echoed_unchanged(board, id_):
    board.link.send_line(json.dumps({"cmd": "info", "id": id_}) + "\n")
    rep = _next_reply(board)
    assert rep["id"] == id_ and rep["ok"] is True


def _next_reply(board, timeout=5.0):
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for rep in board.link._pump(0.2):
            return rep
    raise AssertionError("no reply")


def test_crlf_and_blank_lines(board):
    board.link.send_line(b'\r\n\n{"cmd":"info","id":7}\r\n')
    assert _next_reply(board)["id"] == 7


@pytest.mark.parametrize("line,code", [
    (b"this is not json\n", "bad_json"),
    (b"[1, 2, 3]\n", "bad_json"),
    (b'{"cmd": "info"\n', "bad_json"),
    (b"\xff\xfe\xfd\n", "bad_json"),
    (b"x" * 600 + b"\n", "too_long"),
    (b'{"cmd": "dance"}\n', "unknown_cmd"),
    (b'{"id": 1}\n', "unknown_cmd"),
    (b'{"cmd": 12}\n', "unknown_cmd"),
])
def test_framing_errors(board, line, code):
    st = board.new()
    board.link.send_line(line)
    rep = _next_reply(board)
    assert rep["ok"] is False and rep["error"] == code and rep["msg"]
    assert board.state() == st


def test_new_state_and_teams(board):
    st = board.new(teams=[["Ann", "Al"], ["Bob", "Bea"]], variant="extended", rules={"darts": 4})
    assert [s["name"] for s in st["sides"]] == ["Ann & Al", "Bob & Bea"]
    assert st["rules"]["darts"] == 4 and len(st["sides"][0]["marks"]) == 15
    assert st["phase"] == "play" and st["turn"] == 0 and st["thrower"] == "Ann" and st["winner"] is None
    assert board.state() == st


@pytest.mark.parametrize("fields", [
    {"players": []}, {"players": ["A"] * 9}, {"players": ["x" * 17]}, {"players": ["A"], "variant": "cricket"},
    {"players": ["A"], "rules": {"marks": 0}}, {"players": ["A"], "rules": {"beds": [0, 30]}},
    {"players": ["A"], "rules": {"nonsense": 1}}, {"teams": [["A", "B", "C", "D", "E"]]}, {},
])
def test_bad_rules_change_nothing(board, fields):
    st = board.new()
    assert board.err("new", **fields) == "bad_rules"
    assert board.state() == st


def test_throw_next_undo_and_their_errors(board):
    board.new()
    assert board.err("throw", seg="T21") == "bad_seg"
    assert board.err("throw") == "bad_seg"
    before = board.state()
    st = board.req("throw", seg="t5")["state"]
    ev = board.wait("dart")
    assert ev["seg"] == "T5" and ev["src"] == "host" and "state" not in ev
    assert (ev["bed"], ev["tally"], ev["own"], ev["darts_left"]) == (5, [3], 3, 2)
    assert gamestate.apply(before, ev) == st
    assert st["sides"][0]["marks"]["5"] == 3
    board.req("throw", seg="MISS")
    st = board.req("throw", seg="S20")["state"]
    assert st["phase"] == "hold"
    assert board.err("throw", seg="S1") == "visit_over"
    st = board.req("next")["state"]
    assert st["turn"] == 1 and st["phase"] == "play"
    assert board.wait("visit")["thrower"] == "Bob"
    for _ in range(3):
        board.req("undo")
    assert board.req("undo")["state"]["sides"][0]["marks"]["5"] == 0
    assert board.err("undo") == "nothing_to_undo"


def test_game_over_and_no_game(board):
    board.new(players=["Solo"], variant="piecepack")
    for bed in range(1, 8):
        st = board.req("throw", seg="S%d" % bed)["state"]
        if st["phase"] == "hold":
            st = board.req("next")["state"]
    assert st["phase"] == "over" and st["winner"] == 0
    assert board.wait("win")["name"] == "Solo"
    assert board.err("throw", seg="S1") == "game_over"
    assert board.err("next") == "game_over"
    assert board.req("undo")["state"]["phase"] == "play"
    assert board.req("end")["state"] is None
    assert board.state() is None
    assert board.err("throw", seg="S1") == "no_game"
    assert board.err("next") == "no_game"
    assert board.err("undo") == "no_game"


@pytest.mark.parametrize("fields", [
    {"row": -1, "col": 0, "ms": 5}, {"row": 0, "col": 99, "ms": 5}, {"row": 0, "col": 0, "ms": 0},
    {"row": 0, "col": 0, "ms": 100000}, {"row": "0", "col": 0, "ms": 5}, {"row": 0, "col": 0},
    {"row": True, "col": 0, "ms": 5},
])
def test_press_refuses_cells_outside_the_matrix(board, fields):
    assert board.err("press", **fields) == "bad_cell"


def test_map_get_set_and_bad_maps(board):
    cells = board.req("map")["cells"]
    assert len(cells) >= len(PROFILE["map"]) and all(len(c) == 3 for c in cells)
    small = [[0, 0, "T20"], [0, 1, "s1"]]
    assert board.req("map", set=small)["cells"] == [[0, 0, "T20"], [0, 1, "S1"]]
    for bad in ([[0, 0, "T20"], [0, 0, "S1"]], [[99, 0, "S1"]], [[0, 0, "X1"]], [[0, 0]], "all", [[0, 0, "MISS"]]):
        assert board.err("map", set=bad) == "bad_map"
    assert board.req("map")["cells"] == [[0, 0, "T20"], [0, 1, "S1"]]
    # a full map spans several lines: staged with "more", applied by the last
    assert board.req("map", set=cells[:10], more=True)["staged"] == 10
    assert board.req("map")["cells"] == [[0, 0, "T20"], [0, 1, "S1"]]  # nothing applied yet
    assert board.err("map", set=[[0, 0, "S5"]] + cells[1:3]) == "bad_map"  # duplicate across chunks
    assert board.req("map")["cells"] == [[0, 0, "T20"], [0, 1, "S1"]]
    assert sorted(board.link.set_map(cells)["cells"]) == sorted(cells)


def test_config_get_set_and_bad_config(board):
    cfg = board.req("config")["config"]
    assert cfg["learn"] is False and cfg["variant"] == "classic"
    cfg2 = board.req("config", set={"auto_next_ms": 2500, "players": ["Mum", "Dad"]})["config"]
    assert cfg2["auto_next_ms"] == 2500 and cfg2["players"] == ["Mum", "Dad"]
    for bad in ({"learn": "yes"}, {"auto_next_ms": -1}, {"variant": "501"}, {"colour": 1},
                {"players": []}, {"brightness": 300}, [1]):
        assert board.err("config", set=bad) == "bad_config"
    # refused whole: a good field beside a bad one is not applied either
    assert board.err("config", set={"auto_next_ms": 10, "learn": 3}) == "bad_config"
    assert board.req("config")["config"] == cfg2


def test_leds_reply_has_every_pixel(board):
    px = board.req("leds")["pixels"]
    assert len(px) == board.req("info")["leds"]
    assert all(len(p) == 3 and all(0 <= v <= 255 for v in p) for p in px)


def test_press_is_busy_when_every_closure_slot_is_taken(board):
    board.new()
    board.req("config", set={"learn": True})  # closures are reported, nothing scores
    codes = []
    for i in range(80):
        rep = board.link.request("press", check=False, row=i % board.rows, col=(i // board.rows) % board.cols, ms=3000)
        codes.append(rep.get("error"))
        if rep.get("error") == "busy":
            break
    assert codes[-1] == "busy" and codes.count(None) >= 16
    # the slots free up as the closures end, on the board's clock
    end = time.monotonic() + 30
    while board.link.request("press", check=False, row=0, col=0, ms=5).get("error") == "busy":
        assert time.monotonic() < end, "the closure slots never freed"
        time.sleep(0.05)
    board.settle()
    board.link.drain()
    board.link.events.clear()

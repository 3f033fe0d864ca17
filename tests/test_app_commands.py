"""The protocol's commands and the board's buttons as CPython can run them:
the App made by its own start-up code on the ESP32 board's code against the
chip's models (tests/test_app_start.py), every line handled by the firmware's
own request code, every reply and event read back from the paced console.
What each asserts is the protocol's contract (docs/protocol.md): a reply
with the request's id, the events every client is sent after it, an error
code that changes nothing. (The same commands are tried end to end through
the serial port inside MicroPython by tests/hil.)"""
import json

import pytest

from shove import buttons, profile, protocol, rules
from shove.settings import GAME_FILE, PROFILE_FILE
from test_app_start import Console, Lines, _start


@pytest.fixture
def board(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a flash with no game
    # a board of two rows and two columns: the chip's model reads it at each of
    # the many reads of the matrix a command makes, in a quarter of the time
    d = profile.default_dict()
    d["name"] = "small"
    d["matrix"] = {"rows": [16, 17], "cols": [4, 13]}
    d["map"] = [[0, 0, "S20"], [0, 1, "T20"], [1, 0, "S5"], [1, 1, "DB"]]
    (tmp_path / PROFILE_FILE).write_text(json.dumps(d))
    out = Console()
    a, _, clock, cm = _start(monkeypatch, out)
    con = Lines(a, out.buffer, clock)
    con.sent()  # whatever start-up sent
    try:
        yield a, con, tmp_path
    finally:
        cm.__exit__(None, None, None)


def ask(con, obj):
    return con.ask(json.dumps(obj).encode() if isinstance(obj, dict) else obj)


def refused(con, obj, code):
    """The one reply: an error with that code and the request's id, no event."""
    got = ask(con, obj)
    assert len(got) == 1 and got[0]["ok"] is False and got[0]["error"] == code, got
    assert got[0]["id"] == (obj.get("id") if isinstance(obj, dict) else None)
    assert got[0]["msg"]
    return got[0]


def test_a_game_through_the_commands_with_their_replies_events_and_refusals(board):
    a, con, flash = board
    assert a.prof.name == "small" and a.notices == []
    assert ask(con, {"id": 1, "cmd": "state"}) == [{"id": 1, "ok": True, "state": None}]
    refused(con, {"id": 2, "cmd": "throw", "seg": "S5"}, "no_game")
    refused(con, {"id": 3, "cmd": "undo"}, "no_game")
    refused(con, {"id": 4, "cmd": "new", "players": ["Ann"], "variant": "nosuch"}, "bad_rules")
    assert a.keeper.game is None and not (flash / GAME_FILE).exists()
    # a new game: its reply, then the event every client gets with the same state
    reply, ev = ask(con, {"id": 5, "cmd": "new", "players": ["Ann", "Bob"]})
    assert reply["id"] == 5 and reply["ok"] is True and ev["ev"] == "new" and ev["state"] == reply["state"]
    st = reply["state"]
    assert [s["name"] for s in st["sides"]] == ["Ann", "Bob"] and st["moves"] == 0 and st["turn"] == 0
    assert (flash / GAME_FILE).exists()  # kept on flash before the reply
    # a dart: refused names change nothing
    for seg in ("X99", "T25", None, 5):
        refused(con, {"id": 6, "cmd": "throw", "seg": seg}, "bad_seg")
    reply, ev = ask(con, {"id": 7, "cmd": "throw", "seg": "T5"})
    assert reply["state"]["moves"] == 1 and reply["state"]["sides"][0]["marks"]["5"] == 3
    assert ev["ev"] == "dart" and ev["seg"] == "T5" and ev["marks"] == 3
    # a hint: the coach's target for the thrower, blinked on the strip
    for level in (0, rules.MAX_LEVEL + 1, True, "3", 2.5):
        refused(con, {"id": 8, "cmd": "hint", "level": level}, "bad_level")
    (reply,) = ask(con, {"id": 9, "cmd": "hint", "level": 2})
    h = reply["hint"]
    assert h["side"] == 0 and h["level"] == 2 and h["seg"] and h["reason"]
    assert a.renderer.hint_at >= 0
    (reply,) = ask(con, {"id": 10, "cmd": "hint"})
    assert reply["hint"]["level"] == 3  # the default level
    # the next visit: the reply, then the `visit` event naming the new thrower
    reply, ev = ask(con, {"id": 11, "cmd": "next"})
    assert reply["state"]["turn"] == 1 and ev == {"ev": "visit", "turn": 1, "thrower": "Bob",
                                                  "state": reply["state"]}
    # undo: the `next`, then the dart; then nothing is left to undo
    reply, ev = ask(con, {"id": 12, "cmd": "undo"})
    assert reply["state"]["turn"] == 0 and reply["state"]["moves"] == 1
    assert ev == {"ev": "undo", "state": reply["state"]}
    reply, ev = ask(con, {"id": 13, "cmd": "undo"})
    assert reply["state"]["moves"] == 0 and reply["state"]["sides"][0]["marks"]["5"] == 0
    refused(con, {"id": 14, "cmd": "undo"}, "nothing_to_undo")
    assert a.keeper.game.moves() == 0
    # lines that are no command
    refused(con, {"id": 15, "cmd": "fly"}, "unknown_cmd")
    refused(con, {"id": 16, "cmd": "new game"}, "unknown_cmd")
    refused(con, {"id": 17, "cmd": 5}, "unknown_cmd")
    refused(con, {"id": 18}, "unknown_cmd")
    refused(con, b"[1, 2]", "bad_json")
    refused(con, b"{\"id\": 19, \"cmd\": \"state\"", "bad_json")
    refused(con, protocol.LineBuffer.TOO_LONG, "too_long")
    assert ask(con, b"   ") == []  # a terminal's Enter: nothing
    # a press on the matrix: the crossing must be on the board, the time sane
    rows, cols = a.prof.rows, a.prof.cols
    for row, col, ms in ((rows, 0, 30), (0, cols, 30), (-1, 0, 30), (0, 0, 0), (0, 0, 10001), ("0", 0, 30)):
        refused(con, {"id": 20, "cmd": "press", "row": row, "col": col, "ms": ms}, "bad_cell")
    assert ask(con, {"id": 21, "cmd": "press", "row": rows - 1, "col": cols - 1, "ms": 30}) == [
        {"id": 21, "ok": True}]
    # a new game over one in play replaces it
    reply, _ = ask(con, {"id": 22, "cmd": "new", "teams": [["Ann", "Cy"], ["Bob"]], "variant": "pub"})
    assert reply["state"]["variant"] == "pub" and reply["state"]["sides"][0]["members"] == ["Ann", "Cy"]


def test_a_winning_dart_sends_its_dart_then_the_win(board):
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20], "marks": 1}})
    reply, dart, win = ask(con, {"id": 2, "cmd": "throw", "seg": "S20"})
    assert reply["state"]["phase"] == "over" and reply["state"]["winner"] == 0
    assert dart["ev"] == "dart" and win["ev"] == "win" and win["winner"] == 0
    refused(con, {"id": 3, "cmd": "throw", "seg": "S20"}, "game_over")


def test_the_buttons_do_what_the_manual_says(board):
    a, con, _ = board
    a.commands.button("next", buttons.PRESS)  # no game: refused, said so
    (ev,) = con.sent()
    assert ev["ev"] == "refused" and ev["button"] == "next" and ev["error"] == "no_game"
    a.commands.button("new", buttons.SHORT)  # a new game of the configured players and variant
    (ev,) = con.sent()
    variant = a.keeper.config["variant"]
    assert ev["ev"] == "new" and ev["state"]["variant"] == variant and ev["state"]["moves"] == 0
    ask(con, {"id": 1, "cmd": "throw", "seg": "S5"})
    a.commands.button("undo", buttons.SHORT)  # the dart taken back
    (ev,) = con.sent()
    assert ev["ev"] == "undo" and ev["state"]["moves"] == 0
    a.commands.button("undo", buttons.LONG)  # held: the coach's hint, level 3
    (ev,) = con.sent()
    assert ev["ev"] == "hint" and ev["hint"]["level"] == 3 and ev["hint"]["side"] == 0
    a.commands.button("next", buttons.PRESS)
    (ev,) = con.sent()
    assert ev["ev"] == "visit" and ev["turn"] == 1
    a.commands.button("undo", buttons.PRESS)  # a press not long enough to count: nothing
    a.commands.button("next", buttons.SHORT)
    assert con.sent() == []
    # new, held: the next variant in name order, kept in the configuration
    names = sorted(rules.VARIANTS)
    a.commands.button("new", buttons.LONG)
    evs = con.sent()
    nxt = names[(names.index(variant) + 1) % len(names)]
    assert evs[-1]["ev"] == "new" and evs[-1]["state"]["variant"] == nxt and a.keeper.config["variant"] == nxt

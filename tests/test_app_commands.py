"""The protocol's commands and the board's buttons as CPython can run them:
the App made by its own start-up code on the ESP32 board's code against the
chip's models (tests/test_app_start.py), every line handled by the firmware's
own request code, every reply and event read back from the paced console.
What each asserts is the protocol's contract (docs/protocol.md): a reply
with the request's id, the events every client is sent after it, an error
code that changes nothing. (The same commands are tried end to end through
the serial port inside MicroPython by tests/hil.)"""
import gc
import json
import sys
import types

import pytest

import shove
from shove import buttons, journal, jstore, keeper, loading, profile, protocol, rules, scanner, segments
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
    d["map"] = [[0, 0, "S20"], [0, 1, "T20"], [1, 0, "S5"]]  # (1, 1): no segment
    (tmp_path / PROFILE_FILE).write_text(json.dumps(d))
    out = Console()
    a, _, clock, cm = _start(monkeypatch, out)
    con = Lines(a, out.buffer, clock)
    con.sent()  # whatever start-up sent
    try:
        yield a, con, tmp_path
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture
def faults():
    """Faults put in for a part of a test (undone there, or at its end):
    apart from `monkeypatch`, whose undo would also take the test out of
    its scratch directory."""
    mp = pytest.MonkeyPatch()
    try:
        yield mp
    finally:
        mp.undo()


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
    assert ev["ev"] == "dart" and ev["seg"] == "T5" and ev["marks"] == 3 and ev["src"] == "host"
    # a hint: the coach's target for the thrower, blinked on the strip
    for level in (0, rules.MAX_LEVEL + 1, True, "3", 2.5):
        refused(con, {"id": 8, "cmd": "hint", "level": level}, "bad_level")
    (reply,) = ask(con, {"id": 9, "cmd": "hint", "level": 2})
    h = reply["hint"]
    assert h["side"] == 0 and h["level"] == 2 and h["seg"] and h["reason"]
    assert a.renderer.hint_at >= 0
    (reply,) = ask(con, {"id": 10, "cmd": "hint"})
    assert reply["hint"]["level"] == 3  # the default level
    for level in (1, rules.MAX_LEVEL):  # the bounds are levels
        assert ask(con, {"id": 10, "cmd": "hint", "level": level})[0]["hint"]["level"] == level
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
    assert ask(con, {"id": 21, "cmd": "press", "row": 0, "col": 0, "ms": 1}) == [{"id": 21, "ok": True}]
    # a new game over one in play replaces it
    reply, _ = ask(con, {"id": 22, "cmd": "new", "teams": [["Ann", "Cy"], ["Bob"]], "variant": "pub"})
    assert reply["state"]["variant"] == "pub" and reply["state"]["sides"][0]["members"] == ["Ann", "Cy"]


def _states_built(k, mp):
    """A list that grows by one for each state the keeper builds (a
    millisecond a side on the chip, and its heap until the line is out)."""
    built = []
    real = k.state
    mp.setattr(k, "state", lambda: built.append(1) or real())
    return built


def test_a_winning_dart_sends_its_dart_then_the_win(board, monkeypatch):
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20], "marks": 1}})
    built = _states_built(a.keeper, monkeypatch)
    reply, dart, win = ask(con, {"id": 2, "cmd": "throw", "seg": "S20"})
    assert reply["state"]["phase"] == "over" and reply["state"]["winner"] == 0
    assert dart["ev"] == "dart" and win["ev"] == "win" and win["winner"] == 0
    assert win["state"] == reply["state"] and len(built) == 1  # one state, for the reply and the win
    refused(con, {"id": 3, "cmd": "throw", "seg": "S20"}, "game_over")


def test_the_buttons_do_what_the_manual_says(board):
    a, con, _ = board
    a.commands.button("next", buttons.PRESS)  # no game: refused, said so
    (ev,) = con.sent()
    assert ev["ev"] == "refused" and ev["button"] == "next" and ev["error"] == "no_game" and ev["msg"]
    ask(con, {"id": 0, "cmd": "config", "set": {"variant": "pub", "players": ["Cy", "Di"]}})
    a.commands.button("new", buttons.PRESS)  # pressed: nothing until it is let go or held
    assert con.sent() == []
    # held with no game in play: the pairing code on the beds; this board (the chip's model, with a
    # radio and no network set) has its set-up AP, whose passphrase that code is
    assert getattr(a.commands.net, "is_setup", False)
    a.commands.button("next", buttons.LONG)
    assert con.sent() == []
    assert a.renderer.code_at != -1 and "".join(str(d) for d in a.renderer.code) == a.commands.net.code
    a.renderer.hide_code()  # (let go: Commands.buttons_slice)
    a.commands.button("new", buttons.SHORT)  # a new game of the configured players and variant
    (ev,) = con.sent()
    variant = "pub"
    assert [s["name"] for s in ev["state"]["sides"]] == ["Cy", "Di"]
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
    a.commands.button("next", buttons.LONG)  # in a game the next button acts at the press only
    assert con.sent() == [] and a.renderer.code_at == -1
    a.commands.button("undo", buttons.PRESS)  # a press not long enough to count: nothing
    a.commands.button("next", buttons.SHORT)
    assert con.sent() == []
    # new, held: the next variant in name order, kept in the configuration
    names = sorted(rules.VARIANTS)
    a.commands.button("new", buttons.LONG)
    evs = con.sent()
    nxt = names[(names.index(variant) + 1) % len(names)]
    assert evs[-1]["ev"] == "new" and evs[-1]["state"]["variant"] == nxt and a.keeper.config["variant"] == nxt
    # and held again: the one after that (never the default variant this time)
    after = names[(names.index(nxt) + 1) % len(names)]
    assert "classic" not in (variant, after)
    a.commands.button("new", buttons.LONG)
    evs = con.sent()
    assert evs[-1]["ev"] == "new" and evs[-1]["state"]["variant"] == after and a.keeper.config["variant"] == after


def test_end_leaves_the_board_with_no_game_on_flash_either(board):
    a, con, flash = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    assert (flash / GAME_FILE).exists()
    reply, ev = ask(con, {"id": 2, "cmd": "end"})
    assert reply["ok"] is True and ev["ev"] == "new" and ev["state"] is None
    assert a.keeper.game is None and not (flash / GAME_FILE).exists()
    assert ask(con, {"id": 3, "cmd": "state"}) == [{"id": 3, "ok": True, "state": None}]


def test_reset_answers_then_resets_the_board_marked_as_asked_for(board):
    a, con, _ = board
    machine = type(a.board).__init__.__globals__["machine"]
    with pytest.raises(SystemExit):
        a.commands.handle_line(b'{"id":4,"cmd":"reset"}')
    assert con.sent() == [{"id": 4, "ok": True}]  # the reply went out whole before the reset
    assert len(machine.resets) == 1
    assert machine.rtc_memory == b"hapenny:reset"  # not a bad start (shove/safeboot.py)


def test_presses_beyond_what_the_board_can_schedule_are_refused_busy(board):
    a, con, _ = board
    got = [ask(con, {"id": i, "cmd": "press", "row": 0, "col": 1, "ms": 5000})[0] for i in range(40)]
    oks = [r for r in got if r["ok"]]
    assert oks and oks == got[:len(oks)]  # taken until the schedule is full ...
    assert all(r["ok"] is False and r["error"] == "busy" and r["msg"] for r in got[len(oks):])
    assert len(oks) < 40


def test_a_request_that_does_not_fit_in_memory_is_refused_and_the_board_goes_on(board, faults):
    a, con, _ = board

    def no_room(*args, **kw):
        raise MemoryError

    faults.setattr(rules, "new_game", no_room)
    refused(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]}, "no_memory")
    assert a.keeper.game is None
    faults.undo()
    reply, _ = ask(con, {"id": 2, "cmd": "new", "players": ["Ann", "Bob"]})
    assert reply["ok"] is True


def test_a_line_whose_code_finds_no_room_is_answered_no_memory_and_the_board_goes_on(board, faults):
    # Loading the line's code (shove/request.py) needs blocks of several
    # hundred bytes; in a heap cut up by eight computer sides the import
    # itself raised MemoryError, which escaped to the loop's catch-all: an
    # error event, and the request never answered. It is answered
    # no_memory, with its id when the line has one, and nothing changes.
    import builtins

    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    before = ask(con, {"id": 2, "cmd": "state"})[0]["state"]
    real = builtins.__import__

    def no_room(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "shove" and fromlist and "request" in fromlist:
            raise MemoryError
        return real(name, globals, locals, fromlist, level)

    faults.setattr(builtins, "__import__", no_room)
    refused(con, {"id": 3, "cmd": "throw", "seg": "S20"}, "no_memory")
    refused(con, {"cmd": "state"}, "no_memory")  # no id: none in the reply
    refused(con, b'{"cmd":"state","id":4', "no_memory")  # not JSON: no id read
    faults.undo()
    (after,) = ask(con, {"id": 5, "cmd": "state"})
    assert after["ok"] and after["state"] == before
    assert a.errors == 0  # answered, not caught by the loop


def test_a_line_from_the_port_whose_first_piece_of_code_finds_no_room_is_still_answered(board, faults):
    # A line read from the port has its code loaded a piece a slice before it is handled
    # (Commands.stage). On a chip-sized heap the first piece, shove/request.py, once found no
    # room: the MemoryError escaped the read with the line, the loop's catch-all made it an
    # error event, and the host waited for the line's reply for ever. It is answered no_memory.
    import builtins

    a, con, _ = board
    shove.release("request", "view")  # let go after the last line: loaded again for the next
    waiting = bytearray(b'{"id":7,"cmd":"state"}\n{"id":8,"cmd":"hint"}\n')

    def take(buf, most):  # the UART's ring, as the board's serial_take gives it
        n = min(len(waiting), most, len(buf))
        buf[:n] = waiting[:n]
        del waiting[:n]
        return n

    real = builtins.__import__

    def no_room(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "shove" and fromlist and "request" in fromlist:
            raise MemoryError
        return real(name, globals, locals, fromlist, level)

    faults.setattr(a.board, "serial_take", take)
    faults.setattr(builtins, "__import__", no_room)
    for _ in range(4):  # serial slices
        a.commands.read(64)
    got = con.sent()
    assert [(r["id"], r["ok"], r["error"]) for r in got] == [(7, False, "no_memory"), (8, False, "no_memory")], got
    assert a.errors == 0 and not waiting and a.commands.held is None
    faults.undo()
    reply, = ask(con, {"id": 9, "cmd": "state"})
    assert reply["ok"] is True  # and the board goes on


def test_what_the_flash_refuses_is_refused_and_nothing_changes(board, faults):
    a, con, flash = board
    reply, _ = ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    ask(con, {"id": 2, "cmd": "throw", "seg": "S5"})
    before = ask(con, {"id": 3, "cmd": "state"})[0]["state"]
    kept = (flash / GAME_FILE).read_bytes()

    def full(*args):
        raise OSError(28, "no space left")

    b = a.board
    faults.setattr(b, "write_file", full)
    faults.setattr(b, "sync_write", full)
    faults.setattr(b, "append_file", full)
    # a dart, a `next`, an undo, a new game, a configuration: each refused, the game as it was
    # (in RAM too: RAM and flash never disagree)
    refused(con, {"id": 4, "cmd": "throw", "seg": "T20"}, "storage")
    refused(con, {"id": 5, "cmd": "next"}, "storage")
    refused(con, {"id": 6, "cmd": "undo"}, "storage")
    refused(con, {"id": 7, "cmd": "new", "players": ["Cy", "Di"]}, "storage")
    assert ask(con, {"id": 9, "cmd": "state"})[0]["state"] == before
    faults.setattr("shove.store.write_atomic", full)
    refused(con, {"id": 10, "cmd": "config", "set": {"brightness": 3}}, "storage")
    assert (flash / GAME_FILE).read_bytes() == kept
    faults.undo()
    # the flash takes writes again: the next change is kept, the game whole
    reply, _ = ask(con, {"id": 11, "cmd": "throw", "seg": "T20"})
    assert reply["state"]["moves"] == before["moves"] + 1
    a.board._close_log()
    found = loading.load_journal(a.keeper.jstore)  # what a start would read back: the game as it is now
    game, _, clean = journal.decode(found[0] + found[1])
    assert clean and bytes(game.marks) == bytes(a.keeper.game.marks) and game.moves() == before["moves"] + 1


def test_a_write_cut_short_by_the_flash_is_rewritten_over_by_the_next_change(board, faults):
    # the flash takes a record's first byte and then fails: the dart is refused,
    # and the next change rewrites the journal whole (appending after the torn
    # byte would shift every later record: a start would read another game)
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    ask(con, {"id": 2, "cmd": "throw", "seg": "S5"})

    def torn(f, data):
        f.write(data[:1])
        f.flush()
        raise OSError(5, "write failed")

    faults.setattr(a.board, "sync_write", torn)
    refused(con, {"id": 3, "cmd": "throw", "seg": "T20"}, "storage")
    faults.undo()
    reply, _ = ask(con, {"id": 4, "cmd": "throw", "seg": "S20"})
    assert reply["state"]["moves"] == 2
    a.board._close_log()
    found = loading.load_journal(a.keeper.jstore)  # what a start would read back
    game, _, clean = journal.decode(found[0] + found[1])
    assert clean and bytes(game.marks) == bytes(a.keeper.game.marks) and game.moves() == 2


def test_a_dart_on_the_matrix_is_scored_ignored_or_reported_as_the_protocol_says(board, faults):
    a, con, _ = board
    k = a.keeper
    k.hit(0, 0)  # no game: ignored, counted, said why
    k.hit(1, 0)
    assert con.sent() == [{"ev": "ignored", "seg": "S20", "row": 0, "col": 0, "why": "no_game", "ignored": 1},
                          {"ev": "ignored", "seg": "S5", "row": 1, "col": 0, "why": "no_game", "ignored": 2}]
    k.hit(1, 1)  # a crossing the map has no segment for
    assert con.sent() == [{"ev": "unmapped", "row": 1, "col": 1}]
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20, 5], "marks": 3}})
    k.hit(0, 1)
    (ev,) = con.sent()
    assert ev["ev"] == "dart" and ev["seg"] == "T20" and ev["marks"] == 3 and ev["src"] == "matrix"
    assert (ev["row"], ev["col"]) == (0, 1)  # the crossing it came from
    k.hit(1, 0)
    k.hit(1, 0)
    assert [e["seg"] for e in con.sent()] == ["S5", "S5"]
    k.hit(1, 0)  # the visit's three darts are in: held until `next`
    assert con.sent() == [{"ev": "ignored", "seg": "S5", "row": 1, "col": 0, "why": "hold", "ignored": 1}]
    assert k.game.moves() == 3
    ask(con, {"id": 2, "cmd": "next"})
    # learning the map: a closure is reported, not scored
    ask(con, {"id": 3, "cmd": "config", "set": {"learn": True}})
    k.hit(0, 0)
    assert con.sent() == [{"ev": "raw", "row": 0, "col": 0}]
    ask(con, {"id": 4, "cmd": "config", "set": {"learn": False}})
    # a dart the flash refuses: not scored, said so
    faults.setattr(a.board, "sync_write", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    faults.setattr(a.board, "write_file", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    k.hit(0, 0)
    (ev,) = con.sent()
    assert ev["ev"] == "refused" and ev["seg"] == "S20" and ev["error"] == "storage" and ev["msg"]
    assert (ev["row"], ev["col"]) == (0, 0)
    assert k.game.moves() == 4
    faults.undo()
    # Bob's visit; then Ann closes 5, her last bed: the dart, then the win
    k.hit(1, 0)
    k.hit(1, 0)
    con.sent()
    ask(con, {"id": 5, "cmd": "next"})
    k.hit(1, 0)
    evs = con.sent()
    assert [e["ev"] for e in evs] == ["dart", "win"] and evs[-1]["winner"] == 0
    assert evs[-1]["name"] == "Ann" and evs[-1]["state"]["winner"] == 0 and evs[-1]["state"]["phase"] == "over"
    k.hit(0, 0)
    assert con.sent()[0]["why"] == "over"


def test_auto_next_hands_the_turn_over_once_the_visit_has_been_held_that_long(board):
    a, con, _ = board
    k = a.keeper
    ask(con, {"id": 2, "cmd": "new", "players": ["Ann", "Bob"]})
    for _ in range(3):
        k.hit(0, 0)
    con.sent()
    con.clock.advance_ms(5000)  # auto next off (the default): the hold waits for `next`
    k.timers()
    assert con.sent() == [] and k.game.turn == 0
    ask(con, {"id": 2, "cmd": "next"})
    ask(con, {"id": 2, "cmd": "next"})
    ask(con, {"id": 1, "cmd": "config", "set": {"auto_next_ms": 800}})
    assert k.timers() is False  # nothing acts on its own during a visit
    for _ in range(3):
        k.hit(0, 0)
    held = a.board.ticks_ms()  # the visit's last dart: held from now
    con.sent()  # (the UART sends meanwhile: time passes)
    assert k.timers() is True
    con.clock.advance_ms(held + 799 - a.board.ticks_ms())
    k.timers()
    assert con.sent() == [] and k.game.turn == 0
    con.clock.advance_ms(1)  # held 800 ms: now
    k.timers()
    (ev,) = con.sent()
    assert ev["ev"] == "visit" and ev["turn"] == 1 and k.game.turn == 1
    assert k.timers() is False
    # an undo during the hold: the visit goes on, nothing hands it over
    for _ in range(3):
        k.hit(0, 0)
    ask(con, {"id": 3, "cmd": "undo"})
    con.clock.advance_ms(5000)
    k.timers()
    assert con.sent() == [] and k.game.turn == 1 and k.game.darts_left == 1


@pytest.mark.parametrize("auto", [400, 999, 1000, 1500])
def test_auto_next_the_flash_refuses_is_said_once_and_tried_again_a_second_later_at_the_soonest(
        board, faults, auto):
    # (keeper.RETRY_MS: a step the flash refused is not tried again in every round)
    a, con, _ = board
    k = a.keeper
    ask(con, {"id": 1, "cmd": "config", "set": {"auto_next_ms": auto}})
    ask(con, {"id": 2, "cmd": "new", "players": ["Ann", "Bob"]})
    for _ in range(3):
        k.hit(0, 0)
    held = a.board.ticks_ms()  # the visit's last dart: held from now
    con.sent()
    faults.setattr(a.board, "sync_write", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    faults.setattr(a.board, "write_file", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    con.clock.advance_ms(held + auto - a.board.ticks_ms())
    assert k.timers() is True  # the hold stays, auto next still to act
    (ev,) = con.sent()
    assert ev == {"ev": "refused", "src": "auto_next", "error": ev["error"], "msg": ev["msg"]}
    assert ev["error"] == "storage" and ev["msg"] and k.game.turn == 0 and k.game.phase == rules.HOLD
    tried = a.board.ticks_ms()
    wait = max(keeper.RETRY_MS, auto)  # the next try: a second on, or auto next's own time if longer
    con.clock.advance_ms(tried + wait - 1 - a.board.ticks_ms())
    k.timers()
    assert con.sent() == [] and k.game.turn == 0  # not tried again yet
    con.clock.advance_ms(1)
    k.timers()
    (ev,) = con.sent()  # tried again: still full, said again
    assert ev["ev"] == "refused" and ev["src"] == "auto_next" and k.game.turn == 0
    faults.undo()  # room again: the next try hands the turn over
    con.clock.advance_ms(wait)
    k.timers()
    (ev,) = con.sent()
    assert ev["ev"] == "visit" and ev["turn"] == 1 and k.game.turn == 1


def test_holding_next_with_no_game_spells_the_pairing_code_or_says_why_it_cannot(board):
    a, con, _ = board
    c = a.commands
    r = c.renderer
    # (this board has a radio and no network set: its set-up AP is its net; the tries below put other
    # networks in its place)
    c.net = None  # a board without a network: no pairing code, said so in words
    c.button("next", buttons.LONG)
    (ev,) = con.sent()
    assert ev == {"ev": "refused", "button": "next", "error": "no_network", "msg": ev["msg"]}
    assert "hapenny wifi" in ev["msg"] and r.code_at < 0
    # a network whose code the strip cannot spell (a letter; a digit past its beds)
    for code in ("12a45", "1234567890"[:9].replace("9", "0")):
        c.net = types.SimpleNamespace(code=code, is_setup=False)
        c.button("next", buttons.LONG)
        (ev,) = con.sent()
        assert ev == {"ev": "refused", "button": "next", "error": "no_code", "msg": ev["msg"]} and ev["msg"]
        assert r.code_at < 0
    # a joined network's code: spelled from now on
    now = a.board.ticks_ms()
    c.net = types.SimpleNamespace(code="123456789", is_setup=False)
    c.button("next", buttons.LONG)
    assert con.sent() == [] and bytes(r.code) == bytes(range(1, 10)) and r.code_at == now
    r.hide_code()
    # the set-up network not yet opened has no code yet: its own (the AP's passphrase) is spelled
    c.net = types.SimpleNamespace(code=None, is_setup=True, ident=lambda: "987654321")
    c.button("next", buttons.LONG)
    assert con.sent() == [] and bytes(r.code) == bytes(range(9, 0, -1))
    r.hide_code()
    # ... but a joined network without a code spells nothing (the network's Joiner has no is_setup)
    for net in (types.SimpleNamespace(code=None, is_setup=False, ident=lambda: "987654321"),
                types.SimpleNamespace(code=None)):
        c.net = net
        c.button("next", buttons.LONG)
        assert con.sent()[0]["error"] == "no_code" and r.code_at < 0
    # in a game the hold was for the press, which moved the game on: nothing spelled
    ask(con, {"id": 2, "cmd": "new", "players": ["Ann", "Bob"]})
    c.net = types.SimpleNamespace(code="123456789", is_setup=False)
    c.button("next", buttons.LONG)
    assert con.sent() == [] and r.code_at < 0


def test_a_long_press_of_new_the_flash_refuses_says_so_and_keeps_the_variant(board, faults):
    a, con, _ = board
    k = a.keeper
    was = k.config["variant"]
    faults.setattr("shove.store.write_atomic", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    a.commands.button("new", buttons.LONG)
    (ev,) = con.sent()
    assert ev == {"ev": "refused", "button": "new", "error": "storage",
                  "msg": "the flash refused the write ([Errno 28] full); nothing changed"}
    assert k.config["variant"] == was and k.game is None


def test_the_wifi_command_on_a_board_with_a_radio_and_no_network_set_tells_its_set_up_state(board):
    # (a command of the network's own module, wifiset, loaded for it through the rarely used
    # commands' table, Commands.more)
    a, con, _ = board
    (reply,) = ask(con, {"id": 3, "cmd": "wifi"})
    w = reply["wifi"]
    assert reply["id"] == 3 and reply["ok"] is True
    assert (w["state"], w["reason"], w["ssid"], w["address"], w["ap"]["page"]) == ("setup", "none_set", None, None,
                                                                                  "setup")
    assert not {"password", "key", "owner"} & set(w)  # nothing secret is ever sent back
    # forgotten: the set-up network closed, and every client told the network is off
    reply, ev = ask(con, {"id": 4, "cmd": "wifi", "forget": True})
    assert reply["ok"] is True and reply["wifi"]["state"] == "off" and a.commands.net is None
    assert ev == {"ev": "wifi", "state": "off", "reason": None, "address": None}


def test_a_new_game_between_people_lets_the_computer_go_and_one_with_it_keeps_it(board):
    a, con, _ = board
    k = a.keeper
    ask(con, {"id": 1, "cmd": "new", "players": ["cpu:3", "Ann"]})
    k.timers()  # the board's side to throw: its player made
    assert k.auto is not None
    auto = k.auto
    ask(con, {"id": 2, "cmd": "new", "players": ["cpu:2", "Bob"]})
    assert k.auto is auto  # still a side of the board's: kept
    ask(con, {"id": 3, "cmd": "new", "players": ["Ann", "Bob"]})
    assert k.auto is None  # none of the board's: the computer's state goes


def test_the_board_plays_its_own_visit_at_its_pace_and_hands_the_turn_back(board):
    a, con, _ = board
    k = a.keeper
    ask(con, {"id": 1, "cmd": "config", "set": {"cpu_ms": 300}})
    ask(con, {"id": 2, "cmd": "new", "players": ["Ann", "cpu:5"], "seed": 7})
    k.hit(0, 0)  # Ann's dart, then her `next`: the board's turn
    ask(con, {"id": 3, "cmd": "next"})
    k.hit(0, 0)  # the board's darts are its own to throw
    (ev,) = con.sent()
    assert ev["ev"] == "ignored" and ev["why"] == "cpu"
    evs = []
    for _ in range(200):
        if not k.timers():
            break
        con.clock.advance_ms(50)
        evs += con.sent()
    evs += con.sent()
    darts = [e for e in evs if e["ev"] == "dart"]
    assert 1 <= len(darts) <= 3 and all(e["src"] == "cpu" for e in darts)
    assert evs[-1]["ev"] in ("visit", "win")
    if evs[-1]["ev"] == "visit":
        assert evs[-1]["turn"] == 0 and k.game.turn == 0
    ask(con, {"id": 5, "cmd": "end"})
    assert k.auto is None  # no side of the board's: its player is let go


def test_a_win_the_gift_left_pending_is_announced_at_the_next_and_a_failed_directory_is_no_refusal(
        board, faults):
    a, con, _ = board
    k = a.keeper
    assert k.timers() is False  # no game: nothing acts on its own
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20, 5], "marks": 3}})
    for seg in ("T5", "next", "T20", "S5", "S5", "next", "S5"):
        ask(con, {"id": 2, "cmd": "next"} if seg == "next" else {"id": 2, "cmd": "throw", "seg": seg})
    st = ask(con, {"id": 3, "cmd": "state"})[0]["state"]
    assert st["pending"] == [1] and st["phase"] == "play"  # Ann's surplus mark closed Bob's last bed
    # the visit's end makes Bob the winner; the flash could not make the next
    # visit's directory then, which a later record makes: not a refusal
    faults.setattr(k.jstore, "boundary", lambda visit: (_ for _ in ()).throw(OSError(28, "full")))
    built = _states_built(k, faults)
    reply, win = ask(con, {"id": 4, "cmd": "next"})
    assert reply["ok"] is True and reply["state"]["winner"] == 1
    assert win["ev"] == "win" and win["winner"] == 1 and win["name"] == "Bob" and win["state"] == reply["state"]
    assert len(built) == 1  # one state, for the reply and the win


def test_next_announces_every_visit_that_starts_in_a_bull_off_and_in_a_game_of_one(board):
    a, con, _ = board
    reply, _ = ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"bull_off": True}})
    assert reply["state"]["phase"] == "bull_off"
    reply, ev = ask(con, {"id": 3, "cmd": "next"})  # Ann gives up her dart: Bob's to throw
    assert reply["state"]["phase"] == "bull_off"
    assert ev == {"ev": "visit", "turn": 1, "thrower": "Bob", "state": reply["state"]}
    ask(con, {"id": 4, "cmd": "new", "players": ["Ann"]})  # practice: one side
    ask(con, {"id": 5, "cmd": "throw", "seg": "S20"})
    reply, ev = ask(con, {"id": 6, "cmd": "next"})  # her next visit
    assert ev == {"ev": "visit", "turn": 0, "thrower": "Ann", "state": reply["state"]}
    assert reply["state"]["darts_left"] == 3


def test_a_hint_is_for_the_level_asked_for(board):
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    # the first dart of a game: a beginner is not told what a steady player is
    segs = {level: ask(con, {"id": 2, "cmd": "hint", "level": level})[0]["hint"]["seg"] for level in (1, 6)}
    assert segs[1] != segs[6], segs
    # the strip blinks the last hint's target until the next dart: the hint was for that dart
    assert a.renderer.hint_at >= 0
    ask(con, {"id": 3, "cmd": "throw", "seg": "S20"})
    assert a.renderer.hint_at < 0  # (leds.Renderer: -1, no hint)


def _boards_visit(con, k, new):
    """A game with the board as Bob: Ann's `next`, then the board's darts."""
    ask(con, dict(new, id=1, cmd="new", players=["Ann", "Bob"], cpu=[0, 1]))
    ask(con, {"id": 2, "cmd": "next"})
    segs = []
    for _ in range(400):
        busy = k.timers()
        con.clock.advance_ms(50)
        segs += [e["seg"] for e in con.sent() if e["ev"] == "dart"]
        if not busy:
            break
    return segs


def test_the_boards_darts_follow_the_seed_the_host_gives_and_differ_without_one(board):
    a, con, _ = board
    k = a.keeper
    ask(con, {"id": 0, "cmd": "config", "set": {"cpu_ms": 50}})
    st = ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "cpu": [0, 1], "seed": 5})[0]["state"]
    assert st["cpu"] == [0, 1]  # Bob is the board's, a beginner
    first = _boards_visit(con, k, {"seed": 12345})
    assert len(first) == 3
    assert _boards_visit(con, k, {"seed": 12345}) == first  # the same seed: the same darts
    assert _boards_visit(con, k, {"seed": 54321}) != first
    # no seed: each game a sequence of its own (from the board's clock)
    mine = [_boards_visit(con, k, {}) for _ in range(2)]
    assert mine[0] != mine[1], mine


def test_a_hold_restored_at_start_up_waits_for_next(tmp_path, monkeypatch):
    # auto next counts from the last dart, which a restart does not keep: a
    # game restored in its hold waits for someone to say `next`
    monkeypatch.chdir(tmp_path)
    g = rules.new_game(["Ann", "Bob"])
    for s in ("S20", "S20", "S20"):
        g.throw(segments.encode(s))
    (tmp_path / GAME_FILE).write_bytes(journal.encode(g))
    (tmp_path / "config.json").write_text(json.dumps({"auto_next_ms": 500}))
    out = Console()
    a, _, clock, cm = _start(monkeypatch, out)
    try:
        con = Lines(a, out.buffer, clock)
        con.sent()
        assert a.keeper.game.phase == rules.HOLD
        for _ in range(5):
            clock.advance_ms(1000)
            a.keeper.timers()
        assert con.sent() == [] and a.keeper.game.turn == 0
    finally:
        cm.__exit__(None, None, None)


def test_a_long_reply_reads_the_matrix_while_it_is_made(board):
    # on the chip a state's reply is milliseconds of bytecode: the matrix is
    # read between its pieces, so a short contact meanwhile still meets a read
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob", "Cy", "Di"], "variant": "extended"})
    reads = []
    tick = a.commands.tick
    a.commands.tick = lambda: (reads.append(1), tick())[1]
    before = len(reads)
    (reply,) = ask(con, {"id": 2, "cmd": "state"})
    assert reply["ok"] is True
    a.commands.tick = tick
    # its check, its parse and each sliced piece of the reply (shove/protocol.py, SLICE_DEPTH)
    assert len(reads) - before >= 8, len(reads)
    # a long request: its check reads the matrix every few tokens (shove/request.py,
    # TICK_TOKENS), even for a line refused after it
    a.commands.tick = lambda: (reads.append(1), tick())[1]
    before = len(reads)
    line = json.dumps({"id": 3, "cmd": "fly", "pad": [0] * 150}).encode()
    assert len(line) <= protocol.MAX_LINE
    (reply,) = ask(con, line)
    a.commands.tick = tick
    assert reply["error"] == "unknown_cmd"
    assert len(reads) - before >= 80, len(reads) - before


class Heap:
    """MicroPython's heap figures (gc.mem_free, gc.mem_alloc), which CPython
    lacks, as the chip would give them, and its collections counted."""

    SIZE = 100000

    def __init__(self, free):
        self.free = free
        self.collections = 0
        self.on_collect = None  # what to note at each collection

    def mem_free(self):
        return self.free

    def mem_alloc(self):
        return self.SIZE - self.free

    def collect(self):
        self.collections += 1
        if self.on_collect is not None:
            self.on_collect()


@pytest.fixture
def heap(monkeypatch):
    h = Heap(20001)
    monkeypatch.setattr(gc, "mem_free", h.mem_free, raising=False)
    monkeypatch.setattr(gc, "mem_alloc", h.mem_alloc, raising=False)
    monkeypatch.setattr(keeper, "_mem_free", h.mem_free)
    monkeypatch.setattr(keeper, "gc", types.SimpleNamespace(collect=h.collect))
    return h


def test_stats_and_the_state_count_the_darts_and_the_hits_nothing_could_score(board, heap):
    a, con, _ = board
    k = a.keeper

    def stats():
        con.sent()  # (the events of the hits before)
        s = ask(con, {"id": 9, "cmd": "stats"})[0]["stats"]
        return s["darts"], s["ignored"]

    assert stats() == (0, 0)  # a board just started
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20, 5], "marks": 3}})
    for _ in range(3):
        k.hit(1, 0)  # S5: scored
    assert stats() == (3, 0)
    k.hit(1, 0)  # held: ignored, in the stats and in the state
    k.hit(0, 0)
    assert stats() == (3, 2) and ask(con, {"id": 2, "cmd": "state"})[0]["state"]["ignored"] == 2
    ask(con, {"id": 3, "cmd": "next"})
    ask(con, {"id": 4, "cmd": "throw", "seg": "T20"})  # a dart from the host counts as one too
    ask(con, {"id": 5, "cmd": "undo"})  # taken back, but it was thrown
    assert stats() == (4, 2)


def landed(a, row, col):
    """A dart as the loop serves it: its hit queued by the scanner, which
    has just locked out (the test's clock stands still inside it)."""
    sc = a.scanner
    sc.state = scanner.LOCKOUT
    sc.t0 = a.board.ticks_us()
    sc._push((scanner.EV_HIT << 16) | (row << 8) | col)
    a._serve()


def test_a_visit_starts_with_a_collection_and_a_lockout_collects_only_once_half_the_free_heap_is_gone(
        board, heap):
    # the collection's pause must fall where it costs no dart: at `next`, and
    # in a dart's lockout only once the garbage since the last has taken half
    # the heap that collection left free (docs/performance.md)
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    landed(a, 0, 0)  # a dart before any collection: none due
    assert heap.collections == 0
    ask(con, {"id": 2, "cmd": "next"})
    assert heap.collections == 1  # 20001 free after it: the floor is 10000 bytes
    con.sent()
    for free, collected in ((15000, 1), (10000, 1), (9999, 2)):
        heap.free = free
        landed(a, 1, 0)
        assert heap.collections == collected, free
    # the floor follows what that collection left: half of 9999
    heap.free = 5000
    ask(con, {"id": 3, "cmd": "next"})  # (and `next` collects whatever is free)
    assert heap.collections == 3
    heap.free = 2500
    landed(a, 1, 0)
    assert heap.collections == 3
    heap.free = 2499
    landed(a, 1, 0)
    assert heap.collections == 4


def test_a_darts_collection_and_then_its_frame_come_in_its_lockout(board, heap):
    # the collection first (no read of the matrix in it: it must not run into
    # the re-armed scanner), then the frame, before the other slices: it takes
    # ms to make, and made after the lockout it waits, to be written while a
    # dart can score
    a, con, _ = board
    wire = a.board._np.wire
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    ask(con, {"id": 2, "cmd": "next"})  # (a collection)
    landed(a, 0, 0)  # the first frame of the visit
    n = len(wire)
    at = []
    heap.on_collect = lambda: at.append((len(wire), a.scanner.state))
    heap.free = 1000  # the floor passed: this dart's lockout collects
    slices = a.slices
    landed(a, 1, 0)  # S5: Ann's mark on 5
    assert at == [(n, scanner.LOCKOUT)]  # the collection before the frame, in the lockout
    assert len(wire) == n + 1 and wire[-1] != wire[-2]  # then the frame, with Ann's mark
    assert a.slices == slices + 1  # the strip's slice, and no other before it
    assert a.scanner.state == scanner.LOCKOUT


def test_a_gift_flashes_the_bed_it_marks_on_the_side_it_goes_to(board):
    a, con, _ = board
    r = a.renderer
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20, 5], "marks": 3}})
    ask(con, {"id": 2, "cmd": "throw", "seg": "T5"})  # Ann closes 5
    assert r.flash_at < 0  # no gift: nothing flashes
    _, ev = ask(con, {"id": 3, "cmd": "throw", "seg": "T5"})  # three more: Bob's, as a gift
    assert ev["gifts"] == [[1, 3]] and r.flash == [(1, a.keeper.game.rules.beds.index(5))]
    assert r.flash_at >= 0 and r._flashing(a.board.ticks_ms())  # flashing now


def test_a_long_journal_is_made_short_again_at_a_next_or_anywhere_once_far_too_long(board, monkeypatch):
    # (the limits made small: the rule is the same at 600 and 700 records)
    a, con, _ = board
    k = a.keeper
    monkeypatch.setattr(keeper, "_JOURNAL_MAX_RECORDS", 6)
    monkeypatch.setattr(keeper, "_JOURNAL_HARD_MAX", 9)

    def on_flash():
        """The records a start would read back (each action and undo, until
        a rewrite keeps only the game's moves), the game they make as it is."""
        a.board._close_log()
        found = loading.load_journal(jstore.Store())
        game, recs, clean = journal.decode(found[0] + found[1])
        assert clean and bytes(game.marks) == bytes(k.game.marks) and game.moves() == k.game.moves()
        return recs

    def do(*acts):
        for act in acts:
            ask(con, {"id": 1, "cmd": act} if act in ("next", "undo") else {"id": 1, "cmd": "throw", "seg": act})

    ask(con, {"id": 0, "cmd": "new", "players": ["Ann", "Bob"]})
    do("S20", "undo", "S19", "next")  # short: each appended, the undo too
    assert on_flash() == 4 and k.game.moves() == 2
    do("S18", "S17")
    assert on_flash() == 6
    do("next")  # 6 records at the visit's end: the file rewritten with the game's 5 moves
    assert on_flash() == 5 == k.game.moves()
    do("S16", "undo", "S15", "undo")  # during a visit, short of the hard limit: appended
    assert on_flash() == 9
    do("S20")  # 9 records: rewritten even during a visit
    assert on_flash() == 6 == k.game.moves()


@pytest.fixture
def lets_go(monkeypatch):
    """release() as it acts in MicroPython (shove/__init__.py; CPython keeps
    every module): a module let go leaves sys.modules and its package. The
    modules are put back after the test (a module loaded afresh would bring
    exception classes of its own that the others' `except` would not know)."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("shove."):
            monkeypatch.setitem(sys.modules, name, mod)
            pkg, _, attr = name.rpartition(".")
            if getattr(sys.modules[pkg], attr, None) is mod:
                monkeypatch.setattr(sys.modules[pkg], attr, mod)
    monkeypatch.setattr(shove, "sys", types.SimpleNamespace(
        implementation=types.SimpleNamespace(name="micropython"), modules=sys.modules))


def test_a_darts_work_from_the_matrix_lets_go_of_the_code_it_loaded(board, lets_go, monkeypatch, faults):
    # on the chip a module's code stays in the heap until it is let go: the
    # state's builder and the journal's whole-file codec are loaded for a
    # dart only while they are needed (docs/performance.md, the heap)
    a, con, _ = board
    k = a.keeper
    monkeypatch.setattr(keeper, "_JOURNAL_HARD_MAX", 3)
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20, 5], "marks": 3}})
    loaded = lambda: {m for m in ("view", "journal") if "shove." + m in sys.modules}  # noqa: E731
    assert loaded() == set()
    for _ in range(2):
        k.hit(1, 0)  # S5
    ask(con, {"id": 2, "cmd": "undo"})
    assert loaded() == set()
    k.hit(1, 0)  # the journal's 3rd record: the file rewritten, by the codec
    assert [e["ev"] for e in con.sent()][-1] == "dart" and loaded() == set()
    # a dart the flash refuses is undone (the undo is the state builder's)
    faults.setattr(a.board, "sync_write", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    faults.setattr(a.board, "write_file", lambda *args: (_ for _ in ()).throw(OSError(28, "full")))
    k.hit(1, 0)
    assert con.sent()[0]["ev"] == "refused" and loaded() == set()
    faults.undo()
    # a winning dart: the win's state is built for its event, then let go
    ask(con, {"id": 3, "cmd": "new", "players": ["Ann", "Bob"], "rules": {"beds": [20], "marks": 1}})
    con.sent()
    k.hit(0, 0)
    assert [e["ev"] for e in con.sent()] == ["dart", "win"] and loaded() == set()


def test_rules_checked_alone_or_for_a_new_game_let_go_of_the_checks_code(lets_go):
    # a new game's checks (shove/newgame.py) are code the chip loads only for them
    assert rules.Rules("pub", {"marks": 2}).marks == 2 and "shove.newgame" not in sys.modules
    with pytest.raises(rules.RuleError):
        rules.Rules("nosuch")
    assert "shove.newgame" not in sys.modules
    assert rules.new_game(["Ann", "Bob"], None, "pub").n == 2 and "shove.newgame" not in sys.modules


def test_a_state_the_keeper_builds_for_an_event_reads_the_matrix_while_it_is_made(board, monkeypatch):
    # (as a command's reply does: a win's state from the matrix or the
    # timers is built between reads of the matrix, shove/view.py)
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob", "Cy", "Di"], "variant": "extended"})
    b = a.board
    reads = []
    for name in ("scan_idle", "read_matrix"):
        monkeypatch.setattr(b, name, lambda *args, _f=getattr(b, name): (reads.append(1), _f(*args))[1])
    st = a.keeper.state()
    assert len(st["sides"]) == 4
    beds = len(a.keeper.game.rules.beds)
    assert len(reads) >= beds // 2, (len(reads), beds)


def test_a_long_line_is_read_in_growing_slices_its_printable_bytes_in_bulk(board, faults):
    """The longest line (512 bytes) all waiting at once, as at the full baud
    rate after a stall: the bytes cost the chip a look and a read each, and
    the UART's ring holds 259, so the serial slices take more at a time while
    more keeps coming and follow each other, and the printable bytes go
    into the line in bulk, not one by one through the REPL watch. (How full
    the ring gets on the chip's clock is `make bench`'s figure.)"""
    from shove.commands import SERIAL_SLICE

    a, con, _ = board
    line = json.dumps({"cmd": "info", "id": "x" * 480}, separators=(",", ":")).encode() + b"\n"
    waiting = bytearray(line)
    asked = []

    def take(buf, most):
        asked.append(most)
        n = min(most, len(waiting))
        buf[:n] = waiting[:n]
        del waiting[:n]
        return n

    watched = []
    feed = a.commands.watch.feed
    faults.setattr(a.board, "serial_take", take)
    faults.setattr(a.commands.watch, "feed", lambda b, now: watched.append(b) or feed(b, now))
    slices = 0
    while waiting:
        a._service()
        slices += 1
        assert slices < 100
    assert [r.get("id") for r in con.sent()] == ["x" * 480]
    assert watched == [10]  # only the line's end went through the watch
    # a slice takes a little; once one came back full, the next ones take
    # four times as much, back to back, with one other slice in eight
    assert asked[0] == SERIAL_SLICE and sum(1 for n in asked if n >= 4 * SERIAL_SLICE) >= 7, asked
    assert len(asked) <= 10 and slices <= 16, (asked, slices)


def test_an_error_the_loop_catches_is_an_event_after_the_lines_queued_and_the_loop_goes_on(board, faults):
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})

    def bug():
        raise ValueError("a bug in a slice")

    faults.setattr(a.keeper, "timers", bug)
    a.tx.put('{"ev":"first"}')  # a line queued before it: reported after that one

    def timers_slice():
        a.slice, a.passes, a.due = 3, 8, 3  # the TIMERS slice, due
        a._serve()

    timers_slice()
    first, ev = con.sent()
    assert first == {"ev": "first"}
    assert ev["ev"] == "error" and ev["type"] == "ValueError" and ev["msg"] == "ValueError: a bug in a slice"
    assert ev["errors"] == 1 and any("bug" in ln for ln in ev["trace"])
    # no memory for the report's module: a shorter line, still whole
    from shove import fault

    def no_memory(*args):
        raise MemoryError()

    faults.setattr(fault, "fields", no_memory)
    timers_slice()
    assert con.sent() == [{"ev": "error", "msg": "ValueError", "type": "ValueError", "errors": 2}]
    faults.undo()
    assert ask(con, {"id": 2, "cmd": "state"})[0]["ok"]  # the loop goes on


def test_the_held_new_button_refused_by_the_flash_leaves_the_variant_as_it_was(board, faults):
    # the variant is stored first, then the game: a flash that takes the one
    # and refuses the other puts the variant back, so nothing changed
    a, con, _ = board
    ask(con, {"id": 1, "cmd": "new", "players": ["Ann", "Bob"]})
    cfg = ask(con, {"id": 2, "cmd": "config"})[0]["config"]
    st = ask(con, {"id": 3, "cmd": "state"})[0]["state"]
    write = a.board.write_file

    def game_refused(path, data):
        if path == GAME_FILE:
            raise OSError(28, "full")
        write(path, data)

    faults.setattr(a.board, "write_file", game_refused)
    a.commands.button("new", buttons.LONG)
    (ev,) = con.sent()
    assert ev["ev"] == "refused" and ev["button"] == "new" and ev["error"] == "storage"
    faults.undo()
    assert ask(con, {"id": 4, "cmd": "config"})[0]["config"] == cfg
    assert ask(con, {"id": 5, "cmd": "state"})[0]["state"] == st
    a.commands.button("new", buttons.LONG)  # the flash taking writes again: the next variant
    (ev,) = con.sent()
    assert ev["ev"] == "new" and ev["state"]["variant"] != cfg["variant"]
    assert ask(con, {"id": 6, "cmd": "config"})[0]["config"]["variant"] == ev["state"]["variant"]


def test_while_the_web_server_has_output_the_loop_steps_it_every_round_and_is_never_quiet(board, monkeypatch):
    """An answer sent a piece a step (a file, the update's listing a hash a
    step) is stepped in every round of slices: a quiet burst, which ends for
    the server only _WEB_OPEN_MS later, made a 9 KB listing take seconds.
    Nor is the board told the loop is quiet meanwhile (the virtual board's
    idle wait looks at the serial port, not the server's sockets). Once all
    is sent, the quiet bursts come back."""
    from shove import app as app_mod

    a, con, _ = board
    bursts = []  # (reads asked for, the server busy) of each burst, in order
    stepped = []  # len(bursts) at each step of the server
    real = a.board.scan_idle

    class Server:  # what the loop sees of shove/httpd.py's Server: a client connected, output waiting
        open = 1
        busy = True

        def step(self, now):
            stepped.append(len(bursts))
            if len(stepped) == 6:
                self.busy = False  # all sent
            elif len(stepped) == 9:
                a.commands.leaving = 1  # the loop returns at its next check

    def spy(snap, n, until=-1, tx=None):
        if n > 1:  # (a scan point's one read is no burst)
            bursts.append((n, srv.busy))
        assert len(bursts) < 1000, (stepped, bursts[-20:])
        k = real(snap, 1, until, tx)  # one read stands for the burst
        return n if k == 1 else k

    srv = Server()
    assert a.quiet()
    a.commands.web = srv
    a.commands.net = None  # (no network's own slice: it would open the set-up AP's server in the test's place)
    assert not a.quiet()
    monkeypatch.setattr(a.board, "serial_take", lambda buf, most: 0)  # no input
    monkeypatch.setattr(a.board, "scan_idle", spy)
    errors = []
    a.report = lambda e, n, note="": errors.append(e)
    a.emit = a.keeper.emit = lambda name, fields=None: None
    a.due = 0  # nothing else to do
    a._loop()
    assert not errors, errors
    busy = [n for n, b in bursts if b]
    assert busy and set(busy) == {app_mod._BURST}, bursts
    rounds = [j - i for i, j in zip(stepped, stepped[1:6])]  # bursts between two steps while busy: a round's
    assert len(rounds) == 5 and max(rounds) <= 5, (stepped, bursts)
    assert app_mod._QUIET in [n for n, b in bursts if not b], bursts  # all sent: quiet bursts, as before
    assert a.quiet()


def test_while_the_network_is_being_joined_a_quiet_burst_ends_soon_for_its_step(board, monkeypatch):
    """The Joiner is stepped after each quiet burst: one of its full length
    (about a second) made every start notice its join, and serve its page,
    a second or two late. While it joins, a burst ends _NET_JOINING_MS on;
    joined (and no server), the bursts are as long as before."""
    from shove import app as app_mod

    a, con, _ = board
    bursts = []  # (ms to the burst's end, or None: no end; the Joiner's state) of each quiet burst
    steps = []
    real = a.board.scan_idle

    class Joiner:  # what the loop sees of shove/wifi.py's Joiner
        state = app_mod._NET_JOINING

        def step(self, now):
            steps.append(self.state)
            if len(steps) == 3:
                self.state = 2  # joined
            elif len(steps) == 6:
                a.commands.leaving = 1

    def spy(snap, n, until=-1, tx=None):
        if n == app_mod._QUIET:
            bursts.append((shove.ticks_diff(until, a.board.ticks_ms()) if until >= 0 else None, net.state))
        assert len(bursts) < 1000, (steps, bursts[-20:])
        k = real(snap, 1, -1, tx)  # one read stands for the burst
        return n if k == 1 else k

    net = a.commands.net = Joiner()
    a.commands.web = None
    monkeypatch.setattr(a.board, "serial_take", lambda buf, most: 0)  # no input
    monkeypatch.setattr(a.board, "scan_idle", spy)
    errors = []
    a.report = lambda e, n, note="": errors.append(e)
    a.emit = a.keeper.emit = lambda name, fields=None: None
    a.due = 0
    a._loop()
    assert not errors, errors
    joining = [ms for ms, st in bursts if st == app_mod._NET_JOINING]
    assert len(joining) >= 3 and all(ms is not None and 0 <= ms <= app_mod._NET_JOINING_MS for ms in joining), bursts
    joined = [ms for ms, st in bursts if st != app_mod._NET_JOINING]
    assert joined == [None] * 3, bursts  # joined: no end but the burst's own


def test_every_other_slice_reads_the_matrix_before_and_after_its_own_work(board):
    # the way into a slice (the console's next bytes, the turn's choice) and the way back to
    # the loop's reads are each some hundreds of us of the chip's bytecode: with a read on
    # each side of the slice's work, no 0.5 ms contact falls in the whole round at once
    from shove import app as app_mod

    a, con, _ = board
    done = []
    a.scan_point = lambda: done.append("read")
    a.board.service = lambda: done.append("board")
    a.commands.buttons_slice = lambda: done.append("buttons")
    a.keeper.timers = lambda: done.append("timers")
    a.strip.step = lambda now, g, armed: done.append("strip")
    a.strip.waits = False
    for s, work in ((app_mod._BOARD, "board"), (app_mod._BUTTONS, "buttons"),
                    (app_mod._TIMERS, "timers"), (app_mod._STRIP, "strip")):
        del done[:]
        a.due = app_mod._DUE_TIMERS | app_mod._DUE_STRIP
        a.slice = s
        a._service()
        assert done == ["read", work, "read"], (s, done)
    # the first read found a dart's first contact: its window is read without the slice's work
    from shove import scanner

    def contact():
        done.append("read")
        a.scanner.state = scanner.WINDOW

    a.scan_point = contact
    del done[:]
    a.slice = app_mod._BUTTONS
    a._service()
    assert done == ["read"] and a.slice == app_mod._TIMERS, done


def test_a_frame_that_waits_only_for_time_is_not_stepped_before_its_time(board):
    # the strip's slice comes round every burst while the console's queue keeps the timers
    # due; a frame the game's quiet keeps back (strip.py) is not looked at again before the
    # tick it waits for, unless a dart has locked the scanner out (it may be written then)
    from shove import app as app_mod
    from shove import scanner, ticks_add

    a, con, _ = board
    a.scan_point = lambda: None
    steps = []
    st = a.strip
    st.step = lambda now, g, armed: steps.append(armed)

    def strip_slice():
        a.due = app_mod._DUE_STRIP
        a.slice = app_mod._STRIP
        a._service()
        return steps.pop() if steps else None

    later = ticks_add(a.board.ticks_ms(), 60000)
    st.waits, st.at = True, later
    assert strip_slice() is None  # armed, its time a minute off: no step
    idle = a.scanner.state
    a.scanner.state = scanner.LOCKOUT
    assert strip_slice() is False  # locked out: stepped (its frame may go now)
    a.scanner.state = idle
    for waits, at in ((True, ticks_add(a.board.ticks_ms(), -1)), (True, -1), (False, later)):
        st.waits, st.at = waits, at  # its time come; no time set; a change since (waits no longer)
        assert strip_slice() is True, (waits, at)


def test_the_slow_slice_reads_the_matrix_between_its_parts(board):
    # the watchdog's check-in, the network's join and the web server's look run in one serial
    # slice every few (every quiet burst's end on a joined board, ten times a second): each
    # part is a piece of bytecode of its own, with a read of the matrix before it, so that no
    # 0.5 ms contact falls in all of them at once
    from shove import app as app_mod

    a, con, _ = board
    done = []
    a.scan_point = lambda: done.append("read")
    a.board.feed = lambda: done.append("feed")

    class Part:
        def __init__(self, name):
            self.name = name
            self.busy = self.open = False

        def step(self, now):
            done.append(self.name)

    a.commands.net, a.commands.web = Part("join"), Part("server")
    a.commands.read = lambda n: done.append("input") and False  # (the console's bytes: none here)
    a.slice = app_mod._SERIAL
    a.feeds = app_mod._FEED_EVERY - 1
    a._service()
    assert done == ["read", "feed", "read", "join", "read", "server", "input"], done
    del done[:]
    a.slice = app_mod._SERIAL
    a._service()  # the next serial slice: no check-in, no join, no look (nothing busy)
    assert "feed" not in done and "join" not in done and "server" not in done, done

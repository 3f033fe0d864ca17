# MicroPython only: code needed once in a while is let go after use
# (shove.release), so its bytecode holds no heap while darts are thrown.
# In CPython release() does nothing: only this interpreter can tell.
import sys

from test_alloc import _with_app

CPU = ("shove.cpu", "shove.throwing")  # keeper.CPU_MODULES


def _loaded(*names):
    return [n for n in names if n in sys.modules]


def test_a_new_game_lets_the_rules_checks_go():
    from shove import rules

    g = rules.new_game(["Ann", "Bob"], variant="classic", rules={"beds": [15, 16, 17, 18, 19, 20, 25]})
    assert g.n == 2 and _loaded("shove.newgame") == []
    # ... and so does a check of the configured players (settings)
    assert rules.make_sides(["Ann", "Bob"]) == [["Ann"], ["Bob"]] and _loaded("shove.newgame") == []


def test_a_hint_lets_the_coach_go_and_in_a_people_game_the_computers_code_too():
    def body(a, row, col):
        k = a.keeper
        assert k.auto is None
        a.commands.handle_line(b'{"cmd":"hint","id":1}')
        assert k.renderer.hint_at >= 0  # it was answered: the strip blinks the target
        assert _loaded("shove.coach", *CPU) == []
        # a game with a side of the board's: its player stays loaded, the coach goes
        a.commands.handle_line(b'{"cmd":"new","players":["cpu:2","Bob"],"id":2}')
        k.timers()  # the computer's turn: its player is made
        assert k.auto is not None and _loaded(*CPU) == list(CPU)
        a.commands.handle_line(b'{"cmd":"hint","id":3}')
        assert _loaded("shove.coach") == [] and _loaded(*CPU) == list(CPU)

    _with_app(body)


def test_a_people_game_after_a_computer_game_lets_the_computers_code_go():
    def body(a, row, col):
        k = a.keeper
        a.commands.handle_line(b'{"cmd":"new","players":["cpu:3","cpu:4"],"id":1}')
        k.timers()
        first = k.auto
        assert first is not None and _loaded(*CPU) == list(CPU)
        # another game of the board's keeps its player (and its code)
        a.commands.handle_line(b'{"cmd":"new","players":["cpu:5","Bob"],"id":2}')
        assert k.auto is first and _loaded(*CPU) == list(CPU)
        a.commands.handle_line(b'{"cmd":"new","players":["Ann","Bob"],"id":3}')
        assert k.auto is None and _loaded(*CPU) == []

    _with_app(body)


def test_a_module_whose_import_runs_out_of_memory_is_not_kept():
    # commands.handle_line answers a line no_memory when its code cannot be
    # loaded, and lets nothing go: MicroPython keeps no module whose import
    # raised, so the next line loads it afresh
    import os

    import scratch

    d = scratch.folder("failed-import")
    os.mkdir(d + "/unloadable")
    with open(d + "/unloadable/__init__.py", "w") as f:
        f.write("")
    with open(d + "/unloadable/big.py", "w") as f:
        f.write("X = 1\nraise MemoryError('no room')\n")
    sys.path.insert(0, d)
    try:
        for _ in range(2):  # the same each time: nothing half-made was kept
            try:
                from unloadable import big  # noqa: F401
                raise AssertionError("imported")
            except MemoryError:
                pass
            assert "unloadable.big" not in sys.modules and not hasattr(sys.modules["unloadable"], "big")
    finally:
        sys.path.remove(d)
        sys.modules.pop("unloadable", None)


def test_a_hint_lines_code_is_loaded_a_piece_a_slice_before_it_is_answered():
    # Commands.stage: the line's code, then the hint's modules one at a time, then its level's
    # tables, each in a serial slice of its own (the collector frees each piece's garbage before
    # the next); the line is then answered as before, and the coach let go
    from test_alloc import _port

    from shove import release

    def body(a, row, col):
        k = a.keeper
        release("request", "coach", *[n[6:] for n in CPU])
        line = b'{"cmd":"hint","level":2,"id":1}'
        pieces = []
        while a.commands.stage(line):
            pieces.append(_loaded("shove.request", "shove.throwing", "shove.cpu", "shove.coach"))
        from shove import cpu

        assert pieces == [["shove.request"], ["shove.request", "shove.throwing"],
                          ["shove.request", "shove.throwing", "shove.cpu"],
                          ["shove.request", "shove.throwing", "shove.cpu", "shove.coach"],
                          ["shove.request", "shove.throwing", "shove.cpu", "shove.coach"]], pieces
        assert 2 in cpu._players  # the last piece: level 2's tables
        # a line that is no hint stages its code alone
        assert a.commands.stage(b'{"cmd":"state","id":2}') is False
        release("request", "coach", *[n[6:] for n in CPU])
        # through the port: the hint is held while its code loads, a line behind it waits its turn
        sent = []
        put = a.tx.put
        a.tx.put = lambda ln: (sent.append(ln if isinstance(ln, str) else "".join(ln)), put(ln))
        waiting = _port(a, line + b'\n{"cmd":"state","id":3}\n')
        reads = 0
        while (waiting or a.commands.waiting()) and reads < 40:
            a.commands.read(64)
            reads += 1
        a.commands.read(64)
        replies = [s for s in sent if '"id":' in s]
        assert len(replies) == 2 and '"id":1' in replies[0] and '"hint"' in replies[0] and '"id":3' in replies[1], sent
        assert reads >= 5 and k.renderer.hint_at >= 0
        assert _loaded("shove.coach", *CPU) == []  # a people's game: the computer's code goes after the hint

    _with_app(body)


def test_a_line_that_names_a_hint_but_is_none_lets_the_staged_coach_go():
    # (request.handle: stage loads a line's hint code on the word alone; a line that was no hint
    # after all lets it go once answered, and the computer's code too in a people's game)
    from shove import release

    def body(a, row, col):
        release("request", "coach", *[n[6:] for n in CPU])
        line = b'{"cmd":"config","set":{"brightness":20},"note":"hint","id":4}'
        while a.commands.stage(line):
            pass
        assert _loaded("shove.coach", *CPU) == ["shove.coach"] + list(CPU)  # staged as for a hint
        a.commands.handle_line(line)
        assert _loaded("shove.coach", *CPU) == []
        # in a game with a side of the board's, its player stays: only the coach goes
        a.commands.handle_line(b'{"cmd":"new","players":["cpu:2","Bob"],"id":5}')
        a.keeper.timers()
        while a.commands.stage(line):
            pass
        a.commands.handle_line(line)
        assert a.keeper.auto is not None and _loaded("shove.coach") == [] and _loaded(*CPU) == list(CPU)

    _with_app(body)


def test_the_undo_button_held_shows_a_hint_and_lets_the_coach_go():
    # (request.hint lets the coach go itself: a press is no line, and request.handle's release
    # after a line never runs for it)
    from shove import buttons

    def body(a, row, col):
        k = a.keeper
        sent = []
        a.commands.emit = lambda ev, f=None: sent.append((ev, f))
        a.commands.button("undo", buttons.LONG)
        assert [ev for ev, _ in sent] == ["hint"] and k.renderer.hint_at >= 0, sent
        assert _loaded("shove.coach", *CPU) == []
        # in a game with a side of the board's, its player stays: only the coach goes
        a.commands.handle_line(b'{"cmd":"new","players":["cpu:2","Bob"],"id":1}')
        k.timers()
        a.commands.button("undo", buttons.LONG)
        assert k.auto is not None and _loaded("shove.coach") == [] and _loaded(*CPU) == list(CPU)

    _with_app(body)

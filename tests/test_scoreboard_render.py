"""The terminal scoreboard (drawn with rich): it fits 80x24 with the most
sides and beds a game can have, and a terminal without colour gets no
escape codes at all."""
import io
import re

from hapenny import scoreboard, term

ESC = re.compile("\x1b")


def big_state():
    beds = list(range(1, 21)) + [25]
    sides = [{"name": "Player %d long" % i, "members": ["Player %d long" % i],
              "marks": {str(b): (i + b) % 5 for b in beds}} for i in range(8)]
    return {"rules": {"beds": beds, "marks": 3, "darts": 3, "gift": "all", "win_by_gift": False,
                      "progressive": True, "bull_off": False},
            "variant": "custom", "sides": sides, "turn": 3, "phase": "play", "winner": None,
            "thrower": "Player 3 long", "darts_left": 2, "pending": [1, 2]}


def test_the_biggest_game_fits_80_by_24():
    log = ["line %d of the log" % i for i in range(30)]
    text = scoreboard.render(big_state(), log, typed="T2", width=80, pixels=[(9, 0, 0)] * 57, color=False,
                             height=24)
    lines = text.split("\n")
    assert len(lines) <= 24, len(lines)
    assert max(len(line) for line in lines) <= 80
    assert "Player 7 long" in text and "> T2" in text  # every side and the prompt are kept; the log gives way
    assert "line 29 of the log" in text and "line 0 of the log" not in text


def test_no_colour_means_no_escape_codes_and_the_same_words():
    st = big_state()
    plain = scoreboard.render(st, ["Ann: T5, 3 marks"], width=80, color=False, height=40)
    coloured = scoreboard.render(st, ["Ann: T5, 3 marks"], width=80, color=True, height=40)
    assert not ESC.search(plain)
    assert ESC.search(coloured)
    assert re.sub("\x1b\\[[0-9;]*m", "", coloured) == plain


def test_a_console_on_a_pipe_or_with_no_color_writes_no_codes(monkeypatch):
    out = io.StringIO()  # not a terminal
    c = term.console(out)
    c.print(scoreboard.screen(big_state())[0])
    assert not ESC.search(out.getvalue()) and "Shove Ha'penny" in out.getvalue()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("NO_COLOR", "1")
    tty = Tty()
    term.console(tty).print(scoreboard.screen(big_state())[0])
    assert not ESC.search(tty.getvalue())
    monkeypatch.delenv("NO_COLOR")
    tty = Tty()
    term.console(tty).print(scoreboard.screen(big_state())[0])
    assert ESC.search(tty.getvalue())


def test_the_live_screen_takes_cursor_control_and_colour_only_where_the_terminal_allows(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    def drawn(out):
        board = scoreboard.Scoreboard(None, out)
        board.state, board.pixels = big_state(), [(9, 0, 0)] * 3
        board.draw()
        return out.getvalue()

    home = "\x1b[H\x1b[2J"
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    screen = drawn(Tty())
    assert screen.startswith(home) and "\x1b[1m" in screen and "█" in screen  # in place, bold, the strip
    assert term.size(Tty()) == (80, 24)  # a stream with no terminal size behind it
    monkeypatch.setenv("NO_COLOR", "1")
    screen = drawn(Tty())
    assert screen.startswith(home) and "\x1b[1m" not in screen and "█" not in screen
    monkeypatch.setenv("TERM", "dumb")
    screen = drawn(Tty())
    assert screen.startswith("\r\n") and not ESC.search(screen) and "Player 7 long" in screen
    monkeypatch.delenv("NO_COLOR")
    assert not ESC.search(drawn(Tty())) and not ESC.search(drawn(io.StringIO()))  # dumb, or not a tty


def test_the_deploy_progress_is_a_bar_on_a_terminal_and_lines_elsewhere(monkeypatch):
    from hapenny.deploy import _Bar

    log = io.StringIO()
    bar = _Bar(2, log)
    bar.step(0, "shove/app.mpy")
    bar.step(1, "shove/rules.mpy")
    bar.stop()
    assert log.getvalue() == "copying 1/2 shove/app.mpy\ncopying 2/2 shove/rules.mpy\n"

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    term = Tty()
    bar = _Bar(2, term)
    bar.step(1, "shove/rules.mpy")
    bar.stop()
    text = re.sub("\x1b\\[[0-9;?]*[A-Za-z]", "", term.getvalue())
    assert "copying" in text and "2/2" in text and "done" in text
    assert ESC.search(term.getvalue())  # drawn in place, with colour

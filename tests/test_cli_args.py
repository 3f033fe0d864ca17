"""`hapenny` argument checks that refuse before any port is opened."""
import subprocess
import sys
from pathlib import Path

HAPENNY = str(Path(sys.executable).parent / "hapenny")


def test_new_refuses_players_together_with_teams():
    # a port that does not exist: the refusal must come before any connection
    r = subprocess.run([HAPENNY, "new", "Alice", "Bob", "--teams", "X,Y", "Z", "--port", "/nonexistent"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "not both" in r.stderr and "Alice" in r.stderr, r.stderr


def test_throw_help_says_the_hold_refuses_it():
    r = subprocess.run([HAPENNY, "-h"], capture_output=True, text=True, timeout=60)
    assert "as if the board had detected it" not in r.stdout
    r = subprocess.run([HAPENNY, "throw", "-h"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0


def test_hint_has_help_and_new_explains_computer_sides():
    r = subprocess.run([HAPENNY, "hint", "-h"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--level" in r.stdout
    r = subprocess.run([HAPENNY, "new", "-h"], capture_output=True, text=True, timeout=60)
    assert "cpu:N" in r.stdout


def test_every_command_has_help_and_the_shared_options(capsys):
    """Every subcommand, as the parser lists them: `-h` prints its usage; the
    options declared once for several commands are there in each."""
    import argparse

    import pytest

    from hapenny import cli

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert len(commands) >= 18
    for name, sub in commands.items():
        with pytest.raises(SystemExit) as done:
            cli.main([name, "-h"])
        assert done.value.code == 0
        assert capsys.readouterr().out.startswith("usage: hapenny " + name)
        options = {o for a in sub._actions for o in a.option_strings}
        if "--json" in options:
            assert {"--port", "-p"} <= options, name
    with pytest.raises(SystemExit):
        cli.main(["-h"])
    assert "COMMAND" in capsys.readouterr().out
    for name in ("flash", "deploy"):
        assert "generic-8x8 on a board with none" in commands[name].format_help()


def test_config_words_are_checked_before_any_port_naming_the_real_settings_and_forms():
    """`config get NAME` and `config set NAME=VALUE`: a slip is refused, with
    the settings there are and both forms, before a port is opened."""
    import json

    from hapenny import firmware

    names = sorted(firmware.module("settings").DEFAULT_CONFIG)
    table = (
        (["get", "brightness=3"], "config get takes names only"),
        (["set", "brightness", "300"], "did you mean brightness=300?"),
        (["set", "brightness"], "did you mean brightness=VALUE?"),
        (["set"], "config set needs NAME=VALUE"),
        (["get", "darts"], "'darts' is not a setting but a game's rule (hapenny new --rule darts=VALUE)"),
        (["set", "darts=4"], "'darts' is not a setting but a game's rule (hapenny new --rule darts=4)"),
        (["set", "brightnes=3"], "'brightnes' is not a setting;"),
    )
    for words, want in table:
        r = subprocess.run([HAPENNY, "config"] + words + ["--port", "/nonexistent"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and want in r.stderr, (words, r.stderr)
        assert "settings: " + ", ".join(names) in r.stderr, r.stderr
        assert "config get [NAME ...]" in r.stderr and "config set NAME=VALUE" in r.stderr, r.stderr
        assert "example darts=4" not in r.stderr and "does not exist" not in r.stderr, r.stderr
    # the right forms get as far as the port
    for words in (["get", "brightness"], ["get"], ["set", "brightness=120", 'players=["Mum","Dad"]']):
        r = subprocess.run([HAPENNY, "config"] + words + ["--port", "/nonexistent"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "/nonexistent does not exist" in r.stderr, (words, r.stderr)

"""The terminal, decided in one place: whether an output stream is a terminal
that takes cursor control, whether it gets colour, its size, and the rich
console that writes to it (the scoreboard, the CLI's one-shot boards, the
deploy's progress bar all use these)."""
import os

from rich.console import Console


def is_terminal(out):
    """A terminal that takes cursor control: a tty whose TERM is not `dumb`."""
    return bool(hasattr(out, "isatty") and out.isatty()) and os.environ.get("TERM") != "dumb"


def wants_colour(out):
    """Colour and bold on a terminal, unless NO_COLOR is set (no-color.org)."""
    return is_terminal(out) and "NO_COLOR" not in os.environ


def size(out, default=(80, 24)):
    """(columns, lines) of the terminal `out` writes to, else `default`
    (a pipe or a file; a pty nobody sized says 0, which means the default)."""
    try:
        cols, lines = os.get_terminal_size(out.fileno())
    except (OSError, AttributeError, ValueError):
        cols = lines = 0
    return cols or default[0], lines or default[1]


def console(out, width=None, color=None):
    """A rich console writing to `out`, wrapping nothing; colour (and every
    escape code with it) as `color` says, else as wants_colour(out) does.
    The decision is ours, not rich's, so FORCE_COLOR and the like change
    nothing."""
    if color is None:
        color = wants_colour(out)
    return Console(file=out, width=width or 80, force_terminal=bool(color), no_color=not color,
                   color_system="truecolor" if color else None, highlight=False, emoji=False,
                   soft_wrap=False)

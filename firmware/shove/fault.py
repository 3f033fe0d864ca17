# An unexpected error's report: the fields of the `error` event the loop's
# catch-all sends (shove/app.py). Loaded when one is caught and let go
# after, so its code holds no heap while nothing goes wrong.
import sys

TRACE = 320  # the traceback's innermost lines, this many characters at most


def fields(e, errors, note=""):
    """The event's fields: its type, its message and, as far as they fit
    TRACE characters, the traceback's innermost lines (innermost last)."""
    name = type(e).__name__
    return {"msg": "%s: %s%s" % (name, str(e)[:200], note), "type": name, "errors": errors, "trace": trace(e)}


def trace(e):
    pe = getattr(sys, "print_exception", None)
    if pe is None:  # CPython
        import traceback  # type: ignore[import-not-found]  # CPython's (the chip has print_exception)

        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    else:
        import io

        f = io.StringIO()
        pe(e, f)
        text = f.getvalue()
    lines = text.split("\n")
    out = []
    room = TRACE
    for i in range(len(lines) - 3, 0, -1):  # [0] the heading; [-2] "Type: message"; [-1] ""
        ln = lines[i].strip()
        room -= len(ln)
        if room < 0:
            break
        out.append(ln)
    out.reverse()
    return out

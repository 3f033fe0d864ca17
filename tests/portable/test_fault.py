# An unexpected error's report (shove/fault.py): its type, its message and
# the traceback's innermost lines, as many as fit. Runs in both interpreters.
from shove import fault


def _deep(n):
    if n == 0:
        raise ValueError("at the bottom")
    _deep(n - 1)


def _caught(n):
    try:
        _deep(n)
    except ValueError as e:
        return e


def test_the_report_names_the_type_and_message_and_keeps_the_innermost_lines():
    f = fault.fields(_caught(0), 3, "; resetting")
    assert f["msg"] == "ValueError: at the bottom; resetting" and f["type"] == "ValueError" and f["errors"] == 3
    t = f["trace"]
    assert t and all(isinstance(ln, str) and ln == ln.strip() for ln in t)
    assert any("_deep" in ln for ln in t) and any("_caught" in ln for ln in t)  # a short one whole
    assert not any(ln.startswith("Traceback") or ln == "ValueError: at the bottom" for ln in t)  # nor heading nor message


def test_a_long_traceback_keeps_only_its_innermost_lines_that_fit():
    t = fault.trace(_caught(40))
    assert sum(len(ln) for ln in t) <= fault.TRACE
    short = fault.trace(_caught(0))
    assert t[-len(short) + 1:] == short[-len(short) + 1:] or t[-1] == short[-1]  # innermost last, as in a whole one
    assert not any("_caught" in ln for ln in t)  # the outermost frames went
    assert sum(len(ln) for ln in t) > fault.TRACE - 2 * max(len(ln) for ln in t)  # and no more than had to


def test_a_long_message_is_cut():
    f = fault.fields(ValueError("x" * 1000), 1)
    assert f["msg"] == "ValueError: " + "x" * 200

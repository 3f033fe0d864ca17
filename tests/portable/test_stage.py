# A line's code loaded before the line is handled, a piece a call (shove/
# request.py stage, called by Commands.stage once a serial slice): the web
# server's idle request code let go first; for a hint, the computer's and
# the coach's modules one a call, then the level's tables; any other line,
# and an over-long one, at once. Table-driven; runs in both interpreters.
import sys

from shove import protocol, request

HINT_MODULES = ("throwing", "cpu", "coach")


class Web:
    def __init__(self):
        self.let = 0

    def let_go(self):
        self.let += 1
        return False

    def let_go_for(self, line):  # (a server that keeps no line's code beside its own: httpd's with light ())
        return self.let_go()


class Parts:
    def __init__(self, web):
        self.web = web


def _loaded():
    return [m for m in HINT_MODULES if "shove." + m in sys.modules]


def _steps(line, web=None):
    """stage() called until it says all is in: what was loaded after each call."""
    c = Parts(web)
    seen = []
    for _ in range(10):
        more = request.stage(c, line)
        seen.append(_loaded())
        if not more:
            return seen
    raise AssertionError("stage never ended for %r" % line)


def _fresh():
    """The hint's modules not loaded (shove.release lets go only in MicroPython: here, in both)."""
    import shove

    for m in ("coach", "cpu", "cpuloops", "throwing"):
        sys.modules.pop("shove." + m, None)
        if m in shove.__dict__:
            delattr(shove, m)


def test_a_hints_code_is_loaded_a_module_a_call_then_its_levels_tables():
    _fresh()
    try:
        assert _steps(b'{"cmd":"hint","id":3}') == [["throwing"], ["throwing", "cpu"], HINT_MODULES_L,
                                                     HINT_MODULES_L, HINT_MODULES_L]
        from shove import cpu

        assert list(cpu._players) == [3]  # the default level's tables, read in a call of their own
        assert _steps(b'{"cmd":"hint","level":5}') == [HINT_MODULES_L, HINT_MODULES_L]
        assert sorted(cpu._players) == [3, 5]
        assert _steps(b'{"cmd":"hint","level":5}') == [HINT_MODULES_L]  # all in: handled at once
        from shove import rules

        for lv in (1, rules.MAX_LEVEL):  # the levels' bounds: each has its tables read
            assert _steps(b'{"cmd":"hint","level":%d}' % lv) == [HINT_MODULES_L, HINT_MODULES_L], lv
        assert sorted(cpu._players) == [1, 3, 5, rules.MAX_LEVEL]
    finally:
        _fresh()


HINT_MODULES_L = list(HINT_MODULES)

# (a line: none of the hint's code is loaded for it, nor any level's tables)
AT_ONCE = (
    b'{"cmd":"state"}',
    b'{"cmd":"new","players":["Ann","Bob"]}',
    protocol.LineBuffer.TOO_LONG,  # (handle answers it too_long)
)
# (a hint whose level is none: its code loaded, no tables read; handle refuses it)
NO_LEVEL = (
    b'{"cmd":"hint","level":0}',
    b'{"cmd":"hint","level":7}',
    b'{"cmd":"hint","level":true}',
    b'{"cmd":"hint","level":"3"}',
    b'{"cmd":"hint",',
)


def test_other_lines_load_nothing_and_a_hint_of_no_level_reads_no_tables():
    _fresh()
    try:
        for line in AT_ONCE:
            web = Web()
            assert _steps(line, web) == [[]], line
            assert web.let == 1  # the server's idle request code let go before any line
        for line in NO_LEVEL:
            _fresh()
            seen = _steps(line)
            assert seen[-1] == HINT_MODULES_L and len(seen) == 4, (line, seen)  # three loads, then at once
            from shove import cpu

            assert list(cpu._players) == [], (line, list(cpu._players))
    finally:
        _fresh()

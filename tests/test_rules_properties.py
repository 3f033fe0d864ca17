"""Hypothesis properties of the referee (CPython)."""
from hypothesis import given, settings, strategies as st

import scenario
from shove import rules, segments
from shove.rules import RuleError, new_game
from strategies import examples, scripts, setups


def make(setup):
    return new_game(setup.get("players"), setup.get("teams"), setup["variant"], setup["rules"])


def act(g, a):
    try:
        if a == "next":
            g.next()
        elif a == "undo":
            g.undo()
        else:
            return g.throw(segments.encode(a))
    except RuleError:
        pass
    return None


def snap(g):
    return (bytes(g.marks), g.turn, g.darts_left, g.phase, g.winner, g.pending, bytes(g.member),
            g.bo_alive, bytes(g.bo_score), g.actions.bytes())


@st.composite
def games(draw):
    setup = draw(setups())
    return setup, draw(scripts(setup, max_len=80))


@settings(max_examples=examples(400), deadline=None)
@given(games())
def test_marks_stay_within_range_and_only_grow_except_by_undo(game):
    setup, actions = game
    g = make(setup)
    for a in actions:
        before = bytes(g.marks)
        act(g, a)
        assert all(0 <= m <= g.rules.marks for m in g.marks)
        if a != "undo":
            assert all(x >= y for x, y in zip(g.marks, before))


@settings(max_examples=examples(400), deadline=None)
@given(games())
def test_undo_restores_every_earlier_state_exactly(game):
    setup, actions = game
    g = make(setup)
    history = [snap(g)]
    for a in actions:
        if a == "undo":
            continue
        n = g.moves()
        act(g, a)
        if g.moves() > n:
            history.append(snap(g))
    assert snap(g) == history[-1]
    for earlier in reversed(history[:-1]):
        g.undo()
        assert snap(g) == earlier
    assert g.moves() == 0


@settings(max_examples=examples(400), deadline=None)
@given(games())
def test_marks_are_conserved(game):
    setup, actions = game
    g = make(setup)
    for a in actions:
        before = bytes(g.marks)
        thrower, phase = g.turn, g.phase
        res = act(g, a)
        if res is None or phase == rules.BULL_OFF:
            continue
        k, own, gifts, lost = res
        assert own >= 0 and lost >= 0
        takes = [n for _, n in gifts]
        if g.rules.gift == rules.GIFT_ALL:
            assert own + max(takes, default=0) + lost == k
            assert all(n <= k - own for n in takes)
        else:
            assert own + sum(takes) + lost == k
            assert len(gifts) <= 1
        # the marks on the board moved by exactly own and the gifts
        delta = [x - y for x, y in zip(g.marks, before)]
        assert sum(delta) == own + sum(takes)
        assert sum(delta[thrower * g.nb:(thrower + 1) * g.nb]) == own
        if g.rules.gift == rules.GIFT_OFF or g.n == 1:
            assert not gifts


@settings(max_examples=examples(300), deadline=None)
@given(setups(max_sides=8), st.randoms(use_true_random=False))
def test_always_hitting_an_open_bed_ends_with_a_winner(setup, rnd):
    g = make(setup)
    for _ in range(5000):
        if g.phase == rules.OVER:
            break
        if g.phase == rules.HOLD:
            g.next()
            continue
        if g.phase == rules.BULL_OFF:
            g.throw(segments.encode(rnd.choice(["SB", "DB", "MISS"])))
            continue
        a = g.turn
        open_beds = [b for i, b in enumerate(g.rules.beds) if g.need(a, i)]
        bed = rnd.choice(open_beds)
        seg = rnd.choice(["SB", "DB"]) if bed == 25 else rnd.choice("SDT") + str(bed)
        g.throw(segments.encode(seg))
    assert g.phase == rules.OVER
    assert g.missing(g.winner) == 0


@settings(max_examples=examples(200), deadline=None)
@given(games())
def test_refused_actions_change_nothing(game):
    setup, actions = game
    g = make(setup)
    for a in actions:
        before = snap(g)
        try:
            if a == "next":
                g.next()
            elif a == "undo":
                g.undo()
            else:
                g.throw(segments.encode(a))
        except RuleError:
            assert snap(g) == before


def test_replaying_the_action_log_rebuilds_the_game():
    setup = {"players": ["A", "B"], "variant": "progressive", "rules": {"bull_off": True}}
    rec = scenario.play(setup, ["SB", "MISS", "T1", "T1", "next", "D5", "undo", "S2"])
    g = make(setup)
    for a in ("SB", "MISS", "T1", "T1", "next", "S2"):
        act(g, a)
    h = make(setup)
    for b in g.actions.bytes():
        h.apply(b)
    assert h.to_state() == g.to_state() == rec[-1]["state"]


@settings(max_examples=examples(2000), deadline=None)
@given(st.binary(max_size=24))
def test_utf8_check_agrees_with_cpython(data):
    from shove import request

    try:
        data.decode("utf-8")
        ok = True
    except UnicodeDecodeError:
        ok = False
    assert request.valid_utf8(data) == ok


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(max_size=6),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3),
                     max_leaves=8)


@settings(max_examples=examples(2000), deadline=None)
@given(_JSON, st.lists(st.tuples(st.integers(0, 200), st.sampled_from(list(b'{}[]:,"\\ 0.-etnx'))), max_size=3),
       st.sampled_from([", ", ","]))
def test_json_check_agrees_with_cpython(value, edits, sep):
    """Real JSON, then a few bytes inserted or replaced: the board's check
    must say exactly what CPython's strict parser says."""
    import json

    from shove import request

    data = bytearray(json.dumps(value, separators=(sep, ":"), ensure_ascii=False).encode())
    assert request.valid_json(bytes(data))
    for pos, byte in edits:
        pos = pos % (len(data) + 1)
        if pos % 2:
            data.insert(pos, byte)
        elif pos < len(data):
            data[pos] = byte
    try:
        json.loads(bytes(data).decode("utf-8"))
        ok = True
    except ValueError:  # UnicodeDecodeError too
        ok = False
    assert request.valid_json(bytes(data)) == ok, bytes(data)


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(max_size=17))
def test_an_accepted_name_is_visible_text_that_encodes(name):
    import unicodedata

    try:
        rules.make_sides([name])
    except RuleError as e:
        assert e.code == "bad_rules"
        return
    name.encode("utf-8")  # no lone surrogates
    cats = {unicodedata.category(ch) for ch in name}
    assert not cats & {"Cc", "Cf", "Cs", "Zl", "Zp"}, name
    assert cats - {"Zs"}, "a blank name was accepted: %r" % name


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(max_size=5))
def test_segment_text_is_a_code_or_bad_seg(text):
    try:
        code = segments.encode(text)
    except segments.SegError:
        return
    assert segments.name(code) in (text.upper(), text.upper().replace("SI", "S").replace("SO", "S")) or \
        segments.name(code) == text.upper()
    assert text.isascii()


def test_every_format_or_separator_character_is_refused():
    import sys
    import unicodedata

    for o in range(sys.maxunicode + 1):
        if unicodedata.category(chr(o)) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            try:
                rules.make_sides(["A" + chr(o)])
            except RuleError:
                continue
            raise AssertionError("U+%04X accepted in a name" % o)


def test_each_refused_range_ends_where_it_says_and_visible_neighbours_are_accepted():
    # the table of characters a name may not hold: both ends of each range
    # are refused, and a visible character just outside one (a letter,
    # mark, number, punctuation or symbol in no other range) is accepted
    import unicodedata

    from shove import newgame

    table = newgame._UNPRINTABLE

    def listed(o):
        return any(lo <= o <= hi for lo, hi in table)

    checked = 0
    for lo, hi in table:
        for o in (lo, hi):
            try:
                rules.make_sides(["A" + chr(o)])
            except RuleError:
                continue
            raise AssertionError("U+%04X accepted in a name" % o)
        for o in (lo - 1, hi + 1):
            if o < 0 or listed(o) or unicodedata.category(chr(o))[0] not in "LMNPS":
                continue
            assert rules.make_sides(["A" + chr(o)]) == [["A" + chr(o)]], "U+%04X refused" % o
            checked += 1
    assert checked > 30
    # a name of spaces alone is blank, whichever spaces; with a letter it is a name
    for o in newgame._SPACES:
        try:
            rules.make_sides([chr(o) * 3])
        except RuleError:
            pass
        else:
            raise AssertionError("a name of U+%04X alone was accepted" % o)
        assert rules.make_sides(["A" + chr(o) + "B"]) == [["A" + chr(o) + "B"]]

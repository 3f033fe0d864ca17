# The rule book, one test per rule and per variant. Plain asserts only: this
# module runs under CPython (pytest) and inside MicroPython (mp_runner.py).
from shove import rules, segments
from shove.rules import RuleError, new_game


def seg(s):
    return segments.encode(s)


def throw(g, *segs):
    out = None
    for s in segs:
        out = g.throw(seg(s))
    return out


def marks(g, side, bed):
    return g.marks[side * g.nb + g.rules.beds.index(bed)]


def set_marks(g, side, bed, n):
    g.marks[side * g.nb + g.rules.beds.index(bed)] = n


def close_all_but(g, side, bed, left):
    """Close every bed of `side` except `bed`, which keeps `left` marks missing."""
    for b in g.rules.beds:
        set_marks(g, side, b, g.rules.marks - (left if b == bed else 0))


def refused(code, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except RuleError as e:
        assert e.code == code, (e.code, code)
        assert e.msg and str(e) == e.msg  # text for a person, printed too if it is ever uncaught
        return e
    raise AssertionError("expected %s" % code)


def snapshot(g):
    return (bytes(g.marks), g.turn, g.darts_left, g.phase, g.winner, g.pending, bytes(g.member), g.moves())


# ---- notation -------------------------------------------------------------

def test_notation_round_trips_every_segment():
    seen = set()
    for code in range(segments.COUNT):
        name = segments.name(code)
        assert segments.encode(name) == code
        assert segments.encode(name.lower()) == code
        seen.add(name)
    assert len(seen) == segments.COUNT
    for n in range(1, 21):
        for ring in ("S", "SI", "SO", "D", "T"):
            assert ring + str(n) in seen


def test_notation_refuses_junk():
    for bad in ("", "S0", "S21", "T25", "D05", "X5", "S", "5", "SIO5", "MISSS", "S1 ", None, 5,
                "SX5", "S5X", "S1X3", "S123",  # a letter among the digits, three digits
                # digits and letters outside ASCII: Arabic-Indic five, fullwidth 15,
                # superscript two, long s (CPython upper-cases it to S), dotless i
                "S\u0665", "T\uff11\uff15", "S\u00b2", "\u017f5", "S\u0131\u0035", "D1\u0665"):
        try:
            segments.encode(bad)
        except segments.SegError:
            continue
        raise AssertionError("accepted %r" % (bad,))


def test_notation_takes_exactly_the_names_in_either_case():
    # every name with one character put in, swapped or left out, the
    # characters chosen at the edges of what the notation takes (the
    # digits' neighbours '/' and ':', the letters' '@', '[', '`', '{',
    # and letters CPython upper-cases to ring letters): each text is read
    # as the name it spells in either case, or refused with SegError
    names = {}
    for code in range(segments.COUNT):
        names[segments.name(code)] = code
    chars = "SIODTMBsiodtmb0129/:@[`{xX \u017f\u0131"
    tried = [0]

    def check(text):
        want = names.get(text.upper()) if all(ord(ch) < 128 for ch in text) else None
        try:
            got = segments.encode(text)
        except segments.SegError:
            got = None
        assert got == want, (text, got, want)
        tried[0] += 1

    for name in names:
        for i in range(len(name) + 1):
            if i < len(name):
                check(name[:i] + name[i + 1:])
            for ch in chars:
                check(name[:i] + ch + name[i:])
                if i < len(name):
                    check(name[:i] + ch + name[i + 1:])
    assert tried[0] > 20000


def test_inner_and_outer_single_score_as_single():
    g = new_game(["Ann", "Bob"])
    throw(g, "SI5", "SO5")
    assert marks(g, 0, 5) == 2


# ---- worked examples ------------------------------------------------------

def test_worked_example_treble_closes_and_gifts_two():
    g = new_game(["You", "Opp"])
    set_marks(g, 0, 5, 2)
    set_marks(g, 1, 5, 1)
    k, own, gifts, lost = throw(g, "T5")
    assert (k, own, gifts, lost) == (3, 1, [(1, 2)], 0)
    assert marks(g, 0, 5) == 3 and marks(g, 1, 5) == 3


def test_worked_example_visit_d4_t6_s9():
    g = new_game(["You", "Opp"])
    set_marks(g, 0, 4, 1)
    throw(g, "D4", "T6", "S9")
    assert (marks(g, 0, 4), marks(g, 0, 6), marks(g, 0, 9)) == (3, 3, 1)
    assert marks(g, 1, 4) == 0 and marks(g, 1, 6) == 0
    assert g.phase == rules.HOLD


def test_worked_example_dead_darts_in_classic():
    g = new_game(["Ann", "Bob"], rules={"darts": 5})
    before = bytes(g.marks)
    for s in ("S10", "S20", "SB", "DB", "MISS"):
        assert throw(g, s) == (0, 0, [], 0)
    assert bytes(g.marks) == before
    assert g.phase == rules.HOLD and g.darts_left == 0


# ---- what a dart is worth -------------------------------------------------

def test_ring_marks_single_double_treble():
    g = new_game(["Ann", "Bob"])
    throw(g, "S1", "D2", "T3")
    assert (marks(g, 0, 1), marks(g, 0, 2), marks(g, 0, 3)) == (1, 2, 3)
    table = [("MISS", 0), ("SB", 1), ("DB", 2), ("S7", 1), ("SI7", 1), ("SO7", 1), ("D7", 2), ("T7", 3)]
    for name, want in table:
        assert segments.ring_marks(segments.encode(name)) == want, name


def test_flat_rule_every_ring_one_mark():
    g = new_game(["Ann", "Bob"], rules={"flat": True})
    throw(g, "S1", "D2", "T3")
    assert (marks(g, 0, 1), marks(g, 0, 2), marks(g, 0, 3)) == (1, 1, 1)


def test_bull_is_live_when_25_is_a_bed():
    g = new_game(["Ann", "Bob"], rules={"beds": [1, 2, 25]})
    assert throw(g, "SB")[1] == 1
    assert throw(g, "DB")[1] == 2
    assert marks(g, 0, 25) == 3
    h = new_game(["Ann", "Bob"], rules={"beds": [25, 3], "flat": True})
    assert throw(h, "DB")[1] == 1


def test_custom_bed_set_is_sorted_and_others_are_dead():
    g = new_game(["Ann", "Bob"], rules={"beds": [20, 15, 19]})
    assert g.rules.beds == (15, 19, 20)
    assert throw(g, "T1")[0] == 0
    assert throw(g, "T20")[1] == 3
    st = g.to_state()
    assert sorted(st["sides"][0]["marks"].keys()) == ["15", "19", "20"]


# ---- gifting -------------------------------------------------------------

def test_hitting_a_closed_bed_makes_every_mark_surplus():
    g = new_game(["Ann", "Bob"])
    set_marks(g, 0, 7, 3)
    assert throw(g, "D7") == (2, 0, [(1, 2)], 0)


def test_gift_next_goes_to_first_open_opponent_in_turn_order():
    g = new_game(["A", "B", "C", "D"], rules={"gift": "next"})
    g.turn = 2  # C throws: order after C is D, A, B
    set_marks(g, 2, 3, 3)
    set_marks(g, 3, 3, 3)  # D has closed 3: skipped
    set_marks(g, 0, 3, 2)  # A needs one: takes one, the rest is lost
    assert throw(g, "T3") == (3, 0, [(0, 1)], 2)
    assert marks(g, 1, 3) == 0


def test_gift_all_gives_every_open_opponent():
    g = new_game(["A", "B", "C"], rules={"gift": "all"})
    set_marks(g, 0, 8, 3)
    set_marks(g, 2, 8, 2)
    assert throw(g, "D8") == (2, 0, [(1, 2), (2, 1)], 0)


def test_gift_off_loses_surplus():
    g = new_game(["A", "B"], variant="no-gift")
    set_marks(g, 0, 2, 2)
    assert throw(g, "T2") == (3, 1, [], 2)
    assert marks(g, 1, 2) == 0


def test_closed_opponent_receives_nothing():
    g = new_game(["A", "B"])
    set_marks(g, 0, 2, 3)
    set_marks(g, 1, 2, 3)
    assert throw(g, "T2") == (3, 0, [], 3)


def test_pub_rule_withholds_the_last_mark_of_the_game():
    g = new_game(["A", "B"], variant="pub")
    close_all_but(g, 1, 6, 2)  # B misses only two marks on 6
    set_marks(g, 0, 6, 3)
    assert throw(g, "T6") == (3, 0, [(1, 1)], 2)
    assert g.missing(1) == 1 and g.phase == rules.PLAY and g.winner == rules.NO_WINNER
    # and one missing mark is never given at all
    assert throw(g, "S6") == (1, 0, [], 1)


def test_pub_rule_gift_can_still_bring_a_side_within_one():
    g = new_game(["A", "B"], variant="pub")
    close_all_but(g, 1, 6, 3)
    set_marks(g, 0, 6, 1)
    assert throw(g, "T6") == (3, 2, [(1, 1)], 0)


def test_practice_mode_has_no_gifting():
    g = new_game(["Solo"])
    set_marks(g, 0, 1, 2)
    assert throw(g, "T1") == (3, 1, [], 2)


# ---- winning -------------------------------------------------------------

def test_closing_every_bed_wins_at_once_and_voids_darts_left():
    g = new_game(["A", "B"])
    close_all_but(g, 0, 9, 1)
    throw(g, "S9")
    assert g.phase == rules.OVER and g.winner == 0 and g.darts_left == 0
    refused("game_over", g.throw, seg("S1"))
    refused("game_over", g.next)


def test_gift_win_is_pending_until_the_visit_ends():
    g = new_game(["A", "B"], variant="classic")
    close_all_but(g, 1, 4, 1)
    set_marks(g, 0, 4, 3)
    throw(g, "S4")  # gifts B its last mark
    assert g.pending == 2 and g.phase == rules.PLAY and g.winner == rules.NO_WINNER
    throw(g, "S1", "S2")  # A's visit ends without closing
    assert g.phase == rules.OVER and g.winner == 1


def test_active_thrower_wins_the_tie():
    g = new_game(["A", "B"])
    close_all_but(g, 1, 4, 1)
    close_all_but(g, 0, 9, 1)
    set_marks(g, 0, 4, 3)
    throw(g, "S4")  # B now complete, pending
    throw(g, "S9")  # A closes every bed in the same visit
    assert g.winner == 0 and g.phase == rules.OVER


def test_next_during_pending_resolves_the_win():
    g = new_game(["A", "B"])
    close_all_but(g, 1, 4, 1)
    set_marks(g, 0, 4, 3)
    throw(g, "S4")
    g.next()
    assert g.winner == 1 and g.phase == rules.OVER


def test_several_pending_first_after_thrower_wins():
    g = new_game(["A", "B", "C"], rules={"gift": "all"})
    g.turn = 1
    close_all_but(g, 2, 4, 1)
    close_all_but(g, 0, 4, 1)
    set_marks(g, 1, 4, 3)
    throw(g, "D4")
    assert g.pending == 0b101
    g.next()
    assert g.winner == 2  # C comes right after B


def test_a_pending_win_goes_to_the_side_that_completed_not_the_next_in_turn():
    g = new_game(["A", "B", "C"])
    set_marks(g, 0, 4, 3)
    set_marks(g, 1, 4, 3)  # B has closed 4: the surplus passes B by
    close_all_but(g, 2, 4, 1)
    throw(g, "S4")  # A's surplus mark completes C
    st = g.to_state()
    assert st["pending"] == [2] and st["winner"] is None
    g.next()
    st = g.to_state()
    assert st["winner"] == 2 and st["phase"] == "over" and st["pending"] == []


def test_every_variant_plays_to_a_win():
    for name in rules.VARIANTS:
        g = new_game(["A", "B"], variant=name)
        for _ in range(400):
            if g.phase == rules.OVER:
                break
            if g.phase == rules.HOLD:
                g.next()
                continue
            a = g.turn
            for bi, bed in enumerate(g.rules.beds):
                if g.need(a, bi):
                    throw(g, "T%d" % bed)
                    break
        assert g.phase == rules.OVER, name
        assert g.missing(g.winner) == 0, name


def test_variant_presets_match_the_table():
    table = {
        "classic": ([1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 3, "next", True, False),
        "no-gift": ([1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 3, "off", True, False),
        "extended": (list(range(1, 16)), 3, 3, "next", True, False),
        "pub": ([1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 3, "next", False, False),
        "progressive": ([1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 3, "next", False, True),
        "piecepack": ([1, 2, 3, 4, 5, 6, 7], 1, 3, "next", False, False),
    }
    for name in table:
        d = rules.Rules(name).to_dict()
        got = (d["beds"], d["marks"], d["darts"], d["gift"], d["win_by_gift"], d["progressive"])
        assert got == table[name], name
        assert d["flat"] is (name == "piecepack") and d["bull_off"] is False


def test_piecepack_is_flat_and_can_be_made_otherwise():
    g = new_game(["A", "B"], variant="piecepack")
    assert g.rules.flat and g.rules.overrides() == {}
    assert throw(g, "D3") == (1, 1, [], 0)
    h = new_game(["A", "B"], variant="piecepack", rules={"flat": False})
    assert h.rules.overrides() == {"flat": False}
    assert throw(h, "T3") == (3, 1, [(1, 1)], 1)


def test_piecepack_one_mark_closes_and_the_next_coin_gifts():
    g = new_game(["A", "B"], variant="piecepack")
    assert throw(g, "T3") == (1, 1, [], 0)
    assert throw(g, "S3") == (1, 0, [(1, 1)], 0)


def test_extended_board_has_fifteen_beds():
    g = new_game(["A", "B"], variant="extended")
    assert throw(g, "T15")[1] == 3
    assert throw(g, "T16")[0] == 0


# ---- visits, progressive, next --------------------------------------------

def test_visit_uses_darts_then_holds():
    g = new_game(["A", "B"])
    throw(g, "MISS", "S1", "S2")
    assert g.phase == rules.HOLD and g.darts_left == 0
    refused("visit_over", g.throw, seg("S3"))
    g.next()
    assert g.turn == 1 and g.darts_left == 3 and g.phase == rules.PLAY


def test_next_with_darts_left_forfeits_them():
    g = new_game(["A", "B"])
    throw(g, "S1")
    g.next()
    assert g.turn == 1 and g.darts_left == 3
    g.next()
    assert g.turn == 0


def test_darts_rule_sets_visit_length():
    g = new_game(["A", "B"], rules={"darts": 1})
    throw(g, "MISS")
    assert g.phase == rules.HOLD


def test_progressive_break_returns_the_dart():
    g = new_game(["A", "B"], variant="progressive")
    throw(g, "S1")
    assert g.darts_left == 3  # own mark: a break
    set_marks(g, 0, 2, 3)
    throw(g, "S2")  # only gifts: used up
    assert g.darts_left == 2
    throw(g, "S20")  # dead: used up
    assert g.darts_left == 1


def test_teams_rotate_members_each_visit():
    g = new_game(teams=[["A1", "A2"], ["B1", "B2", "B3"]])
    order = []
    for _ in range(7):
        order.append(g.thrower())
        g.next()
    assert order == ["A1", "B1", "A2", "B2", "A1", "B3", "A2"]
    st = g.to_state()
    assert st["sides"][0]["name"] == "A1 & A2"
    assert st["sides"][1]["members"] == ["B1", "B2", "B3"]


def test_team_shares_one_column():
    g = new_game(teams=[["A1", "A2"], ["B1"]])
    throw(g, "S5")
    g.next()
    g.next()  # A2 now
    throw(g, "S5")
    assert marks(g, 0, 5) == 2


# ---- bull-off ------------------------------------------------------------

def test_bull_off_winner_starts():
    g = new_game(["A", "B", "C"], rules={"bull_off": True})
    assert g.phase == rules.BULL_OFF and g.darts_left == 1
    throw(g, "SB", "S20", "DB")
    assert g.phase == rules.PLAY and g.turn == 2 and g.darts_left == 3
    assert g.thrower() == "C"
    assert bytes(g.marks) == bytes(len(g.marks))  # bull-off darts never score


def test_an_undone_bull_off_dart_leaves_the_other_sides_distances_as_they_were():
    g = new_game(["Ann", "Bob", "Cy"], rules={"bull_off": True})
    throw(g, "S20", "SB", "S5")  # Bob's outer bull would start the game
    g.undo()  # Cy's dart taken back: Ann's miss and Bob's outer bull stand
    throw(g, "DB")  # Cy's bull again: nearer than Bob's, so Cy starts
    st = g.to_state()
    assert st["phase"] == "play" and st["turn"] == 2, (st["phase"], st["turn"])


def test_bull_off_tie_throws_again():
    g = new_game(["A", "B", "C"], rules={"bull_off": True})
    throw(g, "SB", "T20", "SB")  # A and C tie
    assert g.phase == rules.BULL_OFF and g.turn == 0
    assert g.to_state()["contenders"] == [0, 2]
    throw(g, "MISS", "SB")
    assert g.phase == rules.PLAY and g.turn == 2


def test_bull_off_next_counts_as_a_miss_and_one_side_skips_it():
    g = new_game(["A", "B"], rules={"bull_off": True})
    g.next()
    throw(g, "S1")
    assert g.phase == rules.BULL_OFF  # both scored nothing: again
    throw(g, "S1", "SB")
    assert g.turn == 1 and g.phase == rules.PLAY
    assert new_game(["Solo"], rules={"bull_off": True}).phase == rules.PLAY


def test_a_side_out_of_the_bull_off_stays_out_when_the_rest_all_miss():
    g = new_game(["A", "B", "C", "D"], rules={"bull_off": True})
    throw(g, "SB", "MISS", "SB", "T20")  # A and C tie on the single bull: B and D are out
    assert g.to_state()["contenders"] == [0, 2] and g.turn == 0
    throw(g, "MISS", "S5")  # both miss: the tie stands between A and C alone
    assert g.phase == rules.BULL_OFF and g.to_state()["contenders"] == [0, 2] and g.turn == 0
    throw(g, "S1", "DB")  # C's double bull beats A's nothing
    assert g.phase == rules.PLAY and g.turn == 2 and g.thrower() == "C" and g.darts_left == 3


def test_players_named_cpu_and_a_level_are_the_boards_own_sides():
    # docs/protocol.md: a player "cpu:N" (N 1..6) is a computer side; anything else is a name
    table = (
        (["Ann", "cpu:3"], ["Ann", "CPU 3"], [0, 3]),
        (["CPU:1", "cpu:6"], ["CPU 1", "CPU 6"], [1, 6]),
        (["cpu:0", "cpu:7", "cpu:x", "cpu:X", "cpu:", "cpu:33", "cpux3", "xcpu:3"], None, None),
    )
    for players, names, levels in table:
        g = new_game(players)
        if names is None:
            assert g.names == players and "cpu" not in g.to_state(), players
        else:
            assert g.names == names and g.to_state()["cpu"] == levels, players
    refused("bad_rules", new_game, None, [["Ann"], ["Bob"]], "classic", None, [0, 7])
    refused("bad_rules", new_game, None, [["Ann"], ["Bob"]], "classic", None, [0])
    refused("bad_rules", new_game, None, [["Ann"], ["Bob"]], "classic", None, "0,1")
    assert list(new_game(None, [["Ann"], ["Bob"]], "classic", None, [6, 0]).cpu) == [6, 0]


# ---- undo ----------------------------------------------------------------

def test_undo_walks_back_to_the_start_exactly():
    g = new_game(teams=[["A1", "A2"], ["B1"]], rules={"bull_off": True, "progressive": True})
    shots = [snapshot(g)]
    for a in ("DB", "SB", "S1", "T1", "next", "D2", "S20", "next", "next", "T9", "MISS", "MISS"):
        if a == "next":
            g.next()
        else:
            throw(g, a)
        shots.append(snapshot(g))
    while shots:
        assert snapshot(g) == shots.pop()
        if shots:
            g.undo()
    refused("nothing_to_undo", g.undo)


def test_undo_takes_back_exactly_what_each_move_changed():
    # every field a move can change, each in a game where it does: the
    # bull-off (won by its last thrower, so the turn stays; a tie; sides
    # put out), a team's member at `next`, darts left, a gift that wins at
    # the visit's end (pending, then the winner), a win by the thrower
    # (the phase). After each undo the whole game, its state as a client
    # reads it (the visit too) included, is what it was before the move.
    def whole(g):
        return (bytes(g.marks), g.turn, g.darts_left, g.phase, g.winner, g.pending, bytes(g.member),
                g.bo_alive, bytes(g.bo_score), g.actions.bytes(), g.to_state())

    def gift_win(g):
        close_all_but(g, 1, 4, 1)
        set_marks(g, 0, 4, 3)

    def thrower_wins(g):
        close_all_but(g, 0, 9, 1)

    games = (
        (dict(players=["A", "B"], rules={"bull_off": True}), None, ("MISS", "SB", "S20", "next", "T19")),
        (dict(players=["A", "B", "C", "D"], rules={"bull_off": True}), None,
         ("SB", "MISS", "SB", "T20", "MISS", "S5", "S1", "DB", "D20")),
        (dict(teams=[["A1", "A2"], ["B1", "B2", "B3"]], rules={"progressive": True}), None,
         ("T20", "next", "S19", "next", "next", "next", "S18")),
        (dict(players=["A", "B"]), gift_win, ("S4", "S1", "S2")),
        (dict(players=["A", "B"]), thrower_wins, ("S20", "S9")),
    )
    changed = set()
    for setup, prepare, script in games:
        g = new_game(**setup)
        if prepare:
            prepare(g)
        seen = [whole(g)]
        for a in script:
            if a == "next":
                g.next()
            else:
                throw(g, a)
            now = whole(g)
            assert now != seen[-1], (setup, a)  # every move here changes the game
            seen.append(now)
        for i in range(1, len(seen)):
            for f in range(9):
                if seen[i][f] != seen[i - 1][f]:
                    changed.add(f)
        while len(seen) > 1:
            seen.pop()
            g.undo()
            assert whole(g) == seen[-1], (setup, len(seen))
        refused("nothing_to_undo", g.undo)
    # between them the games change every field a move may change
    assert sorted(changed) == list(range(9)), sorted(changed)


def test_undo_after_win_reopens_the_game():
    g = new_game(["A", "B"])
    close_all_but(g, 0, 9, 1)
    throw(g, "S9")
    g.undo()
    assert g.phase == rules.PLAY and g.winner == rules.NO_WINNER and g.darts_left == 3
    assert marks(g, 0, 9) == 2


def test_undo_restores_gifts_and_pending():
    g = new_game(["A", "B"])
    close_all_but(g, 1, 4, 1)
    set_marks(g, 0, 4, 3)
    throw(g, "S4", "S1", "S2")
    assert g.winner == 1
    g.undo()
    assert g.phase == rules.PLAY and g.pending == 2 and g.darts_left == 1
    g.undo()
    g.undo()
    assert g.pending == 0 and g.missing(1) == 1


def test_undo_record_is_a_few_bytes_a_dart():
    g = new_game(["A", "B"])
    throw(g, "T5", "S1", "MISS")
    g.next()
    assert len(g.actions) == 4
    assert len(g._undo) <= 4 * 16


# ---- validation ----------------------------------------------------------

def test_bad_rules_are_refused_with_a_clear_code():
    bad = [
        {"beds": []}, {"beds": list(range(1, 21)) + [25, 25]}, {"beds": [0]}, {"beds": [21]},
        {"beds": [1, 1]}, {"beds": "123"}, {"beds": [True]}, {"marks": 0}, {"marks": 10},
        {"darts": 0}, {"darts": 10}, {"darts": 2.5}, {"gift": "some"}, {"win_by_gift": 1},
        {"flat": "yes"}, {"bull_off": None}, {"progressive": 0}, {"colour": "red"}, {"marks": True},
    ]
    for r in bad:
        refused("bad_rules", new_game, ["A", "B"], None, "classic", r)
    refused("bad_rules", new_game, ["A"], None, "darts501")
    refused("bad_rules", new_game, ["A"], None, "classic", [1])


def _words(text):
    out = []
    w = ""
    for ch in text + " ":
        if ch.isalpha() or ch.isdigit() or ch == "_":
            w += ch
        elif w:
            out.append(w)
            w = ""
    return out


def test_a_refused_value_names_its_field_as_the_request_spells_it():
    # the message is for a person, but the field it names is the client's
    # own key: a wrong or garbled name would send them to fix the wrong one
    table = [
        ("marks", {"marks": 0}), ("darts", {"darts": 10}), ("win_by_gift", {"win_by_gift": 1}),
        ("progressive", {"progressive": "no"}), ("flat", {"flat": None}), ("bull_off", {"bull_off": 0}),
    ]
    for key, r in table:
        e = refused("bad_rules", new_game, ["A", "B"], None, "classic", r)
        assert key in _words(e.msg), (key, e.msg)
    e = refused("bad_rules", new_game, ["A", "B"], None, "classic", None, [0, 9])
    assert "cpu" in _words(e.msg), e.msg
    e = refused("bad_rules", new_game, ["A", "B"], None, "classic", None, None, -1)
    assert "seed" in _words(e.msg), e.msg


def test_bad_names_and_sides_are_refused():
    refused("bad_rules", new_game, [])
    refused("bad_rules", new_game, ["P%d" % i for i in range(9)])
    refused("bad_rules", new_game, [""])
    refused("bad_rules", new_game, ["x" * 17])
    refused("bad_rules", new_game, ["tab\there"])
    refused("bad_rules", new_game, ["   "])
    refused("bad_rules", new_game, [3])
    refused("bad_rules", new_game, "Ann")
    refused("bad_rules", new_game, None, [["A", "B", "C", "D", "E"]])
    refused("bad_rules", new_game, None, [[]])
    refused("bad_rules", new_game, ["A"], [["B"]])
    refused("bad_rules", new_game)
    assert new_game(["x" * 16, "Zoë"]).names == ["x" * 16, "Zoë"]


def test_invisible_and_broken_names_are_refused():
    import json

    for name in ("\u200b", "A\u200bB", "\ufeffBob", "Al\u2028ice", "\u00a0", "\u00a0\u3000 ",
                 "x\u202ey", "\u2060", "soft\u00adhy"):
        refused("bad_rules", new_game, [name, "B"])
    # a lone surrogate from a JSON escape: refused, not written out as invalid UTF-8
    for text in ('"\\ud800x"', '"\\udfff"', '"a\\udc00"'):
        name = json.loads(text)
        refused("bad_rules", new_game, ["A", name])
        refused("bad_rules", new_game, None, [["A", name]])
    # ordinary letters, accents, CJK and a space inside stay welcome
    assert new_game(["Zoë", "李 雷", "Ann\u00a0Lee"]).names == ["Zoë", "李 雷", "Ann\u00a0Lee"]


def test_refused_throw_changes_nothing():
    g = new_game(["A", "B"])
    throw(g, "S1")
    before = snapshot(g)
    refused("bad_seg", g.throw, 200)
    refused("bad_seg", g.throw, -1)
    refused("bad_seg", g.throw, segments.COUNT)  # one past the last segment's code
    assert snapshot(g) == before
    g.throw(segments.COUNT - 1)  # the last code is a segment


def test_the_seed_is_thirty_bits_and_one_more_is_refused():
    assert new_game(["A", "B"], seed=0x3FFFFFFF).seed == 0x3FFFFFFF
    refused("bad_rules", new_game, ["A", "B"], None, "classic", None, None, 0x40000000)


def test_limits_accepted_at_their_edges():
    g = new_game(["P%d" % i for i in range(8)], rules={"beds": list(range(1, 21)) + [25], "marks": 9, "darts": 9})
    assert g.nb == 21 and g.n == 8
    t = new_game(teams=[["a", "b", "c", "d"]] * 8)
    assert t.n == 8


# ---- state object --------------------------------------------------------

def test_state_object_has_the_contract_fields():
    g = new_game(teams=[["Ann", "Al"], ["Bob"]], variant="pub")
    st = g.to_state()
    for key in ("sides", "turn", "thrower", "darts_left", "winner", "phase", "rules"):
        assert key in st
    assert st["winner"] is None and st["phase"] == "play" and st["thrower"] == "Ann"
    assert st["rules"] == {
        "beds": [1, 2, 3, 4, 5, 6, 7, 8, 9], "marks": 3, "darts": 3, "gift": "next",
        "win_by_gift": False, "progressive": False, "flat": False, "bull_off": False,
    }
    assert st["sides"][0]["marks"]["9"] == 0
    # and what docs/protocol.md adds: the variant's name, the sides pending a win, the moves so far
    assert st["variant"] == "pub" and st["pending"] == [] and st["moves"] == 0
    assert st["sides"][0]["name"] == "Ann & Al" and st["sides"][0]["members"] == ["Ann", "Al"]


def test_overrides_keep_only_what_differs():
    r = rules.Rules("pub", {"darts": 4, "gift": "next"})
    assert r.overrides() == {"darts": 4}


def test_a_bull_off_dart_scores_nothing_whatever_it_hits():
    g = new_game(["A", "B"], rules={"bull_off": True})
    assert g.throw(segments.DB) == (0, 0, [], 0)  # A's bull
    assert g.throw(segments.encode("T20")) == (0, 0, [], 0)  # B misses the bull: A starts
    assert g.phase == rules.PLAY and g.turn == 0 and not any(g.marks)


def test_building_the_state_reads_the_matrix_once_a_side_and_every_second_bed():
    # each tick() is a read of the matrix (the scan goes on while a long
    # reply is built): at the start, every 2 beds of the beds' names (made
    # once for all sides), every 2 beds and once a side, after the rules'
    # part, and once a dart of the visit (none in a new game); so it is
    # never blind for long and the reply is not slowed down
    table = [(["A", "B"], "classic", None), (["A", "B", "C"], "extended", None),
             (["A"], "classic", {"beds": list(range(1, 21)) + [25]}),
             (["P%d" % i for i in range(8)], "classic", {"beds": [7]})]
    for players, variant, r in table:
        g = new_game(players, None, variant, r)
        calls = []
        st = g.to_state(lambda: calls.append(1))
        assert st == g.to_state()  # the same state either way
        assert len(calls) == 2 + (g.nb + 1) // 2 + g.n * (1 + g.nb // 2), (variant, r, len(calls))


def test_make_sides_takes_players_or_teams():
    assert rules.make_sides(["Ann", "Bob"]) == [["Ann"], ["Bob"]]
    assert rules.make_sides(None, [["Ann", "Cy"], ["Bob"]]) == [["Ann", "Cy"], ["Bob"]]


def test_the_dart_event_names_the_winner_once_there_is_one():
    from shove import events

    g = new_game(["Ann", "Bob"], rules={"beds": [7]})
    code = segments.encode("T7")
    ev = events.dart(g, code, "board", 0, g.throw(code))
    assert ev["winner"] == 0 and ev["phase"] == "over", ev
    g = new_game(["Ann", "Bob"], rules={"beds": [7]})
    ev = events.dart(g, segments.encode("S7"), "board", 0, g.throw(segments.encode("S7")))
    assert ev["winner"] is None, ev

# The state's `visit`: the darts of the visit being thrown, read back from the
# game's own records (so a client that starts late still has them). Plain
# asserts only: this module runs under CPython and inside MicroPython.
from shove import journal, segments
from shove.rules import new_game


def throw(g, *segs):
    for s in segs:
        g.throw(segments.encode(s))


def test_a_visits_darts_with_what_each_did():
    g = new_game(["Ann", "Bob"], None, "classic", None)
    assert g.to_state()["visit"] == []
    throw(g, "T5", "T5", "S20")  # three marks on 5; then 5 closed: three gifted to Bob; 20 is no bed
    assert g.to_state()["visit"] == [["T5", 0, 3, [], 0], ["T5", 0, 0, [[1, 3]], 0], ["S20", 0, 0, [], 0]]
    assert g.to_state()["phase"] == "hold"  # the visit is over, its darts still shown


def test_next_starts_a_new_visit_and_undo_takes_a_dart_back():
    g = new_game(["Ann", "Bob"], None, "classic", None)
    throw(g, "D3")
    g.next()
    assert g.to_state()["visit"] == []
    throw(g, "S4", "D4")
    g.undo()
    assert g.to_state()["visit"] == [["S4", 1, 1, [], 0]]
    g.undo()
    g.undo()  # back through the `next`: Ann's visit again
    assert g.to_state()["visit"] == [["D3", 0, 2, [], 0]]


def test_a_dart_that_scores_and_gifts_is_read_back_with_both():
    # gift all: T5 makes Ann's last two marks on 5 and gives the third to each
    # side still open there
    g = new_game(["Ann", "Bob", "Cy"], None, "classic", {"gift": "all"})
    throw(g, "S5", "T5")
    assert g.to_state()["visit"] == [["S5", 0, 1, [], 0], ["T5", 0, 2, [[1, 1], [2, 1]], 0]]


def test_marks_nobody_can_take_are_lost():
    g = new_game(["Ann", "Bob"], None, "no-gift", None)
    throw(g, "S6", "T6")  # one mark, then two to close and one with nowhere to go
    assert g.to_state()["visit"] == [["S6", 0, 1, [], 0], ["T6", 0, 2, [], 1]]


def test_the_bull_off_is_a_visit_of_its_own():
    g = new_game(["Ann", "Bob"], None, "classic", {"bull_off": True})
    throw(g, "SB")
    assert g.to_state()["visit"] == [["SB", 0, 0, [], 0]]
    throw(g, "DB")  # Bob wins the bull-off and starts: his first visit has no darts yet
    st = g.to_state()
    assert st["phase"] == "play" and st["turn"] == 1 and st["visit"] == []


def test_a_restored_game_has_its_visit():
    g = new_game(["Ann", "Bob"], None, "classic", None)
    throw(g, "T7", "S8")
    h, n, clean = journal.decode(journal.encode(g))  # as after a power cut
    assert clean and h.to_state()["visit"] == [["T7", 0, 3, [], 0], ["S8", 0, 1, [], 0]]


def test_a_long_progressive_visit_names_its_latest_darts():
    g = new_game(["Ann", "Bob"], None, "progressive", None)
    # in progressive a dart that scores keeps the visit going
    darts = ["S1", "S1", "S1", "S2", "S2", "S2", "S3", "S3", "S3", "S4", "S4", "S4", "S5", "S5"]
    throw(g, *darts)
    assert g.to_state()["visit"] == [[d, 0, 1, [], 0] for d in darts[2:]]  # the latest 12 of 14


def test_a_full_visit_is_read_back_with_a_read_of_the_matrix_after_each_dart():
    # Reading a dart back (its undo record, its gifts, its name) is some
    # hundreds of us of bytecode on the chip: nine of them in one stretch,
    # with no read of the matrix, were a gap a 0.5 ms contact fell into
    from shove import rules

    for darts in (1, 3, 9):
        g = new_game(["Ann", "Bob"], None, "classic", {"beds": list(range(1, 21)), "marks": 9, "darts": 9})
        throw(g, *(["T20", "S19", "D18"] * 3)[:darts])
        named = [0]
        most = [0]
        real = rules.segments.name

        def name(code):
            named[0] += 1
            return real(code)

        def tick():
            most[0] = max(most[0], named[0])
            named[0] = 0
        rules.segments.name = name
        try:
            st = g.to_state(tick)
            tick()
        finally:
            rules.segments.name = real
        assert len(st["visit"]) == darts and st == g.to_state(), (darts, st["visit"])
        assert most[0] == 1, (darts, most[0])  # one dart read back between two reads


def test_the_games_visit_is_the_states_and_reads_the_matrix_after_each_dart():
    g = new_game(["Ann", "Bob"], None, "classic", None)
    throw(g, "T5", "S6")
    ticks = []
    assert g.visit(lambda: ticks.append(1)) == g.to_state()["visit"] == [["T5", 0, 3, [], 0], ["S6", 0, 1, [], 0]]
    assert len(ticks) >= 2  # a long visit's reading back does not blind the scan


def test_the_state_reads_the_matrix_at_least_every_two_beds():
    # on the chip each bed's marks take bytecode time: a short contact must
    # meet a read, so no more than two beds go by between two reads
    for beds in ([25, 7], [25, 3, 7, 11, 19], None):
        g = new_game(["Ann", "Bob", "Cy"], None, "classic", {"beds": beds} if beds else None)
        throw(g, "T5", "S6")
        log = []

        class Marks:
            def __init__(self, marks):
                self.marks = marks

            def __getitem__(self, i):
                log.append("bed")
                return self.marks[i]

        real = g.marks
        g.marks = Marks(real)
        try:
            st = g.to_state(lambda: log.append("read"))
        finally:
            g.marks = real
        assert st == g.to_state()
        assert log.count("bed") == 3 * g.nb
        run = 0
        for x in log:
            run = run + 1 if x == "bed" else 0
            assert run <= 2, log

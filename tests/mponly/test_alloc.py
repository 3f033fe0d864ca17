# MicroPython only: the scan loop must not touch the heap.
import gc

import scratch
from shove import scanner
from shove.boards.matrix_model import MatrixModel


def _loop(sc, m, n, t0, period):
    full = (1 << sc.cols) - 1
    t = t0
    for _ in range(n):
        for r in range(sc.rows):
            sc.snap[r] = ~m.levels(r, t) & full
        sc.step(t)
        while sc.pending():
            sc.pop()
        t = (t + period) & 0x3FFFFFFF
    return t


def measure(sc, m, n, t0, period):
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        _loop(sc, m, n, t0, period)
        return gc.mem_alloc() - before
    finally:
        gc.enable()


def test_idle_scans_allocate_nothing():
    sc = scanner.Scanner(8, 8)
    m = MatrixModel(8, 8)
    _loop(sc, m, 10, 0, 100)  # warm up
    assert measure(sc, m, 10000, 1000, 100) == 0


def test_scanning_through_darts_allocates_nothing():
    sc = scanner.Scanner(8, 8, lockout_us=20000)
    m = MatrixModel(8, 8, slots=48)
    for i in range(20):  # a dart every 50 ms, with bounce, while 20 ms lockouts run
        t = 1000 + i * 50000
        assert m.close(i % 8, (i * 3) % 8, t, t + 1500)
        assert m.close(i % 8, (i * 3) % 8, t + 1700, t + 1900)
    _loop(sc, m, 5, 0, 100)
    hits = [0]
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        t = 500
        full = 255
        for _ in range(11000):
            for r in range(8):
                sc.snap[r] = ~m.levels(r, t) & full
            sc.step(t)
            while sc.pending():
                if sc.pop() >> 16 == scanner.EV_HIT:
                    hits[0] += 1
            t += 100
        used = gc.mem_alloc() - before
    finally:
        gc.enable()
    assert hits[0] == 20, hits
    assert used == 0, used


def test_the_main_loop_pass_allocates_nothing_on_the_virtual_board():
    # what App.run does between service passes: the board layer's read and
    # clock, the scanner step, the event-ring check
    from shove import profile
    from shove.boards.virtual import Board

    prof = profile.Profile(profile.default_dict())
    board = Board(prof)
    sc = scanner.Scanner(prof.rows, prof.cols)
    snap = sc.snap
    for _ in range(20):
        board.read_matrix(snap)
        sc.step(board.ticks_us())
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        for _ in range(10000):
            board.read_matrix(snap)
            sc.step(board.ticks_us())
            if sc.qhead != sc.qtail:
                sc.pop()
        used = gc.mem_alloc() - before
    finally:
        gc.enable()
    assert used == 0, used


def test_the_idle_burst_allocates_nothing_on_the_virtual_board():
    # what App._loop does while the scanner is calm: reads in a burst
    from shove import profile
    from shove.boards.virtual import Board

    prof = profile.Profile(profile.default_dict())
    board = Board(prof)
    sc = scanner.Scanner(prof.rows, prof.cols)
    snap = sc.snap
    board.read_matrix(snap)
    sc.step(board.ticks_us())
    assert sc.calm
    board.scan_idle(snap, 16)
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        reads = 0
        for _ in range(500):
            k = board.scan_idle(snap, 16)
            sc.scans += k
            reads += k
        used = gc.mem_alloc() - before
    finally:
        gc.enable()
    assert reads == 500 * 16
    assert used == 0, used


def test_a_scan_point_inside_long_work_reads_the_matrix_and_queues_the_dart():
    # App.scan_point, called from a request's parsing and a state's building
    # and encoding: a short contact during that work is read and voted on
    # there, and its dart waits in the scanner's ring for the loop
    import time

    from shove import app, profile
    from shove.boards.virtual import Board

    prof = profile.Profile(profile.default_dict())

    class Loop:  # the loop's two parts scan_point uses
        pass
    loop = Loop()
    loop.board = Board(prof)
    loop.scanner = scanner.Scanner(prof.rows, prof.cols)
    sc = loop.scanner
    for _ in range(3):
        app.App.scan_point(loop)
    assert sc.calm and not sc.pending()
    # a 20 ms contact, now (this board's clock is the wall clock: a shorter
    # one can pass whole while a loaded machine runs something else)
    assert loop.board.press(3, 5, 20)
    end = time.ticks_add(time.ticks_ms(), 80)
    while time.ticks_diff(end, time.ticks_ms()) > 0:  # the long work: a scan point now and then
        app.App.scan_point(loop)
        time.sleep_us(100)
    got = []
    while sc.pending():
        got.append(sc.pop())
    assert [(w >> 16, (w >> 8) & 0xFF, w & 0xFF) for w in got] == [(scanner.EV_HIT, 3, 5)], got


def _with_app(body):
    """body(app, row, col) with a fresh two-player game in a scratch folder
    (the board's files), and a crossing mapped to one of its beds."""
    import os
    import time

    from shove import app as appmod, request

    class Sink:
        def write(self, s):
            return len(s)

    home = os.getcwd()
    d = "/tmp/hapenny-mponly-%d" % time.ticks_us()
    os.mkdir(d)
    os.chdir(d)
    try:
        a = appmod.App(out=Sink())
        request.new(a.keeper, ["Ann", "Bob"], None, "classic")
        code = None
        k = a.keeper
        for i in range(len(k.map)):
            if k.game.value(k.map[i])[0] >= 0:
                code = i
                break
        row, col = divmod(code, a.prof.cols)
        body(a, row, col)
    finally:
        os.chdir(home)
        scratch.rmtree(d)


def test_a_dart_a_scan_point_left_in_the_ring_is_served_before_the_next_burst():
    # Long work (a request's handling) can hold a whole dart: its scan
    # points read the contact, vote, lock out and re-arm, and the dart
    # waits in the scanner's ring. The loop must serve it before it reads
    # in a burst that may last a second.
    import time

    def body(a, row, col):
        sc = a.scanner
        assert a.board.press(row, col, 2)  # a 2 ms contact, now
        # the long work: scan points until the window, the lockout and the
        # re-arm are over (on the board's clock, which a busy host slows)
        end = time.ticks_add(time.ticks_ms(), 3000)
        while not (sc.calm and sc.pending()) and time.ticks_diff(end, time.ticks_ms()) > 0:
            a.scan_point()
            time.sleep_us(100)
        assert sc.calm and sc.pending(), (sc.state, sc.pending())
        bursts = []
        sent = []
        real = a.board.scan_idle

        def spy(snap, n, until=-1, tx=None):
            bursts.append(n)
            a.commands.leaving = 1  # the loop returns at its next check
            k = real(snap, 1, until, tx)  # one read stands for the burst
            return n if k == 1 else k

        a.board.scan_idle = spy
        a.emit = a.keeper.emit = lambda name, fields=None: sent.append((name, len(bursts)))
        a._loop()
        assert ("dart", 0) in sent, (sent, bursts)

    _with_app(body)


def test_a_darts_window_is_read_without_service_slices():
    # The window (3 ms) decides the dart from the reads in it, and the
    # lockout counts from its start: the loop reads every pass until the
    # hit, and the service waits for the lockout, where it runs every pass.
    def body(a, row, col):
        sc = a.scanner
        states = []
        real = a._service

        def service():
            states.append(sc.state)
            if sc.state >= scanner.LOCKOUT:
                a.commands.leaving = 1  # the loop returns once this slice is done
            real()

        a._service = service
        a.emit = a.keeper.emit = lambda name, fields=None: None
        a.slice = 1  # in the middle of a round of slices, as after any burst
        a.due = 0
        assert a.board.press(row, col, 2)  # a 2 ms contact, now
        a._loop()
        assert a.keeper.darts == 1
        assert scanner.WINDOW not in states, states
        assert states[-1] == scanner.LOCKOUT

    _with_app(body)


def test_a_command_lines_code_is_let_go_once_it_is_answered():
    # A line's handling (shove/request.py) and the state's builder
    # (shove/view.py) are loaded per command: once a line is answered
    # neither is left in sys.modules, and the live heap after a collection
    # is what it was before the line (the game's heap, its undo log
    # included, unchanged by a `state`), so their code holds no heap while
    # darts are thrown.
    import sys

    def body(a, row, col):
        for line in (b'{"cmd":"state","id":1}', b'{"cmd":"throw","seg":"S1","id":2}', b'{"cmd":"undo","id":3}'):
            a.commands.handle_line(line)
            assert "shove.request" not in sys.modules and "shove.view" not in sys.modules, line
        a.tx.q = []  # the replies, as the console would have taken them
        a.tx.pos = a.tx.size = 0
        gc.collect()
        before = gc.mem_alloc()
        a.commands.handle_line(b'{"cmd":"state","id":4}')
        a.tx.q = []
        a.tx.pos = a.tx.size = 0
        gc.collect()
        assert gc.mem_alloc() - before <= 64, gc.mem_alloc() - before

    _with_app(body)


def _port(a, data):
    """The board's serial port as a queue holding `data`, read a few bytes at a time as the UART gives them."""
    waiting = bytearray(data)

    def take(buf, most):
        n = min(most, len(waiting), 16)
        buf[:n] = waiting[:n]
        waiting[:n] = b""
        return n

    a.board.serial_take = take
    return waiting


def test_a_burst_of_lines_loads_their_code_once_and_lets_it_go_when_the_port_is_quiet():
    # Lines read from the port keep the line's code (shove/request.py)
    # loaded while more is waiting, so a burst pays one load, not one a
    # line; the first read that finds the port empty lets it go. (The port
    # here is a queue of bytes: what is under test is Commands.read.)
    import sys

    def body(a, row, col):
        waiting = _port(a, b'{"cmd":"state","id":1}\n{"cmd":"info","id":2}\n{"cmd":"state","id":3}\n')
        answered = []
        handle = a.commands.handle_line

        def handle_line(line, linger=False):
            answered.append(line)
            return handle(line, linger)

        a.commands.handle_line = handle_line
        first = None
        while waiting:
            a.commands.read(64)
            m = sys.modules.get("shove.request")
            if first is None:
                first = m
            assert m is not None and m is first  # loaded once for the whole burst
        assert len(answered) == 3, answered  # every line handled
        assert a.commands.read(64) is False  # nothing waiting
        assert "shove.request" not in sys.modules and "shove.view" not in sys.modules

    _with_app(body)


def test_a_button_pressed_in_a_burst_of_lines_leaves_their_code_loaded_until_the_port_is_quiet():
    # A press is handled by the same code as a line; pressed while a burst
    # is being read it must not let that code go under the burst (the next
    # line would load it again), and the quiet port still lets it go.
    import sys

    from shove import buttons

    def body(a, row, col):
        waiting = _port(a, b'{"cmd":"state","id":1}\n{"cmd":"state","id":2}\n')
        while not a.commands.lingering:  # up to the first line's end: the burst has begun
            a.commands.read(16)
        first = sys.modules["shove.request"]
        a.commands.button("undo", buttons.SHORT)  # nothing to undo: refused, as a player would see
        assert sys.modules.get("shove.request") is first
        while waiting:
            a.commands.read(16)
            assert sys.modules.get("shove.request") is first
        assert a.commands.read(16) is False
        assert "shove.request" not in sys.modules and "shove.view" not in sys.modules

    _with_app(body)


def test_a_hand_over_to_the_repl_in_a_burst_of_lines_lets_their_code_go():
    # Ctrl-C twice ends the loop for the REPL; a line read just before it
    # had its code kept for more lines, which will not come: the REPL must
    # not start with it in the heap.
    import sys

    from shove import handover

    def body(a, row, col):
        _port(a, b'{"cmd":"state","id":1}\n\x03\x03')
        while not a.commands.leaving:
            a.commands.read(64)
        assert a.commands.leaving == handover.TO_REPL
        assert "shove.request" in sys.modules  # the burst's line kept it
        a.commands.give_back()  # as the loop's end does
        assert "shove.request" not in sys.modules and "shove.view" not in sys.modules

    _with_app(body)


def _alloc(fn):
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        fn()
        return gc.mem_alloc() - before
    finally:
        gc.enable()


def test_replaying_a_journal_allocates_little_a_dart():
    # A power cut's start-up and an undo's redo replay the game's records
    # (Game.apply): a replayed dart makes no result (its lists, its tuple),
    # only the undo log grows (now and then, by a quarter). 300 records:
    # about 22 bytes each on this 64-bit port; making the results costs
    # over 130.
    from shove import rules, segments

    codes = [segments.encode(s) for s in ("S1", "T20", "MISS", "D5", "S19", "T17", "S3", "MISS", "D16")]
    played = rules.new_game(["Ann", "Bob", "Cid"], rules={"darts": 9})
    acts = []
    while played.phase != rules.OVER and len(acts) < 300:
        if played.phase == rules.HOLD:
            played.next()
            acts.append(rules.NEXT_ACTION)
        else:
            c = codes[len(acts) % len(codes)]
            played.throw(c)
            acts.append(c)
    g = rules.new_game(["Ann", "Bob", "Cid"], rules={"darts": 9})

    def replay():
        for a in acts:
            g.apply(a)
    used = _alloc(replay)
    assert g.marks == played.marks and g.moves() == played.moves() == len(acts)
    assert used <= 40 * len(acts), used
    # a bull-off's darts too: three sides all missing, round after round
    played = rules.new_game(["Ann", "Bob", "Cid"], rules={"bull_off": True})
    acts = [segments.MISS] * 90
    for a in acts:
        played.throw(a)
    assert played.phase == rules.BULL_OFF
    g = rules.new_game(["Ann", "Bob", "Cid"], rules={"bull_off": True})
    used = _alloc(replay)
    assert g.moves() == played.moves() and used <= 40 * len(acts), used


def test_a_computer_decision_allocates_under_a_kilobyte():
    # The board's darts are chosen without a list of every candidate (only
    # the coach asks for one, for its reasons): a decision allocates a few
    # hundred bytes on this port, the candidates' list over 3 KB more.
    from shove import cpu, rules, segments

    g = rules.new_game(["cpu:4", "Bob"], seed=3)
    p = cpu.player(4)
    p.choose(g)  # its tables made, once
    for s in ("S20", "S19", "T18", None, "S17", "D16"):
        if s is None:
            g.next()
            continue
        g.throw(segments.encode(s))
        used = _alloc(lambda: p.choose(g))
        assert used <= 1024, (s, used)

# The heap tour's driver, run inside the 32-bit WebAssembly MicroPython by
# bench/wasm_heap.py (compiled to .mpy and staged beside the firmware). Each
# function is one step: the host collects garbage and reads the live heap
# between steps (that port collects only between two of its runPython calls),
# so steps are small: a dart, a command, a release. The firmware is started
# as main.py starts it on the chip (safe boot's decision, then the game), with
# a stand-in for `machine` that says power-on.
import gc
import sys

import micropython

T = None  # the tour's state, one object (its own heap share is measured at start)
PHASE_NAMES = ("people", "computer", "bringup", "after", "eight")


class Sink:
    """The console: counts what the firmware writes, and any report of a
    memory shortage in it (the loop reports what it caught). Binary, as
    the chip's is (its `buffer`: write(buf, off, n) straight from the
    output queue): a text stream would cost each line two copies of its
    bytes (the queue's slice, then bytes) that the chip never makes."""

    def __init__(self):
        self.n = 0
        self.short = 0
        self.errors = 0  # error events: an exception the loop caught (a tour that plays must cause none)
        self.buffer = self

    def write(self, s, off=0, n=-1):
        if isinstance(s, str):
            self.n += len(s)
            if "MemoryError" in s or "no_memory" in s:
                self.short += 1
            if '"ev":"error"' in s:
                self.errors += 1
            return
        end = len(s) if n < 0 else off + n
        self.n += end - off
        if _has(s, off, end, b"MemoryError") or _has(s, off, end, b"no_memory"):
            self.short += 1
        if _has(s, off, end, b'"ev":"error"'):
            self.errors += 1


def _has(s, off, end, pat):
    """pat in s[off:end], with no slice allocated (the queue gives memoryviews, which have no find)."""
    if not isinstance(s, memoryview):
        return s.find(pat, off, end) >= 0
    first = pat[0]
    n = len(pat)
    for i in range(off, end - n + 1):
        if s[i] == first:
            j = 1
            while j < n and s[i + j] == pat[j]:
                j += 1
            if j == n:
                return True
    return False


class Machine:
    """What startup asks of `machine` on the chip: a power-on start, no BOOT button."""
    PWRON_RESET = 1

    @staticmethod
    def reset_cause():
        return 1

    class Pin:
        IN = PULL_UP = 0

        def __init__(self, *a):
            raise OSError("no pins here")


class Tour:
    def __init__(self):
        self.peak = [0, 0, 0, 0, 0]
        self.peak_at = [0, 0, 0, 0, 0]  # the sample each was read at
        self.phase = 0
        self.samples = 0
        self.out = Sink()
        self.a = None
        self.cells = None
        self.last = 0
        self.mark100 = 0  # live heap after the soak's first 100 darts
        # the soak's creep is read at one point of a game, right after a
        # won game's `new` (fresh): the first such reading after dart 100,
        # and the last one
        self.renewed = 0
        self.fresh0 = 0
        self.fresh = 0
        self.memerr = 0  # steps a MemoryError ended (caught by the host's guard around each step)
        self.harness = 0  # the live heap before the firmware: the interpreter's and this driver's
        # a step's demand: the live heap it started from plus all it
        # allocated, read at its end (no collection runs inside a step on
        # this port): the most of it in each phase, and the step's number
        self.used = [0, 0, 0, 0, 0]
        self.used_at = [-1, -1, -1, -1, -1]
        self.grew = [0, 0, 0, 0, 0]  # the most one step allocated above its start
        self.grew_at = [-1, -1, -1, -1, -1]
        self.kind = [0] * 24  # the most a step of each kind allocated (bench/wasm_heap.py's KINDS)
        self.marks = [0] * 4  # the live heap at the people's game's milestones (bench/wasm_heap.py's MARKS)
        self.darts = 0  # the keeper's darts at the end (unload)
        self.net = self.clients = self.pending = None  # the Wi-Fi phases' stand-in network stack, the streams kept
        self.server = self.before = 0  # the server's own live heap (viewer_heap)
        self.faults = 0  # requests the server ended in a fault (a MemoryError among them) or answered no_memory
        self.first = -1  # the Wi-Fi phases' first step a MemoryError ended (the rest are skipped)
        self.statuses = 0  # answers that were not the one expected (wifi_steps' checks)
        # the first step in which the firmware reported a memory shortage (no_memory, or an
        # error event) or the server ended a request in a fault, its live heap as it began
        # and what it had allocated by its end
        self.short_at = -1  # (the Wi-Fi phases': wasm_heap.wifi_tour reports it)
        self.short_live = self.short_alloc = 0


# The tour's figures across a power cut (power_cut, then a new interpreter: bench/wasm_heap.py's
# RESTART), in the folder the runner carries over beside the flash's files
SAVED = "/tour/state.json"


def start():
    """The tour's state: new, or the one power_cut saved before the restart."""
    global T
    T = Tour()
    try:
        f = open(SAVED)
    except OSError:
        return
    import json

    with f:
        d = json.load(f)
    T.out.n, T.out.short, T.out.errors = d.pop("out")
    for k, v in d.items():
        setattr(T, k, v)


def measure():
    """After the host's collection: the live heap, into the phase's peak."""
    m = gc.mem_alloc()
    T.last = m
    T.samples += 1
    if m > T.peak[T.phase]:
        T.peak[T.phase] = m
        T.peak_at[T.phase] = T.samples


def used(step, kind):
    """At the end of step number `step` (of kind `kind`), before the
    collection that follows it: what the heap held at the step's worst (at
    most: some of it may have become garbage along the way)."""
    m = gc.mem_alloc()
    w = T.a.commands.web if T.a is not None else None
    if T.net is not None and T.short_at < 0 and (T.out.short or T.faults or (w is not None and w.faults)):
        T.short_at = step
        T.short_live = T.last
        T.short_alloc = m - T.last
        print("SHORT")  # its largest free block follows (bench/wasm_heap.py reads it)
        micropython.mem_info()
    if m - T.last > T.kind[kind]:
        T.kind[kind] = m - T.last
    p = T.phase
    if m > T.used[p]:
        T.used[p] = m
        T.used_at[p] = step
    if m - T.last > T.grew[p]:
        T.grew[p] = m - T.last
        T.grew_at[p] = step


def phase(i):
    T.phase = i


def mark(i):
    """After the host's collection: the live heap, as milestone i."""
    T.marks[i] = gc.mem_alloc()


def boot(esp32=True):
    """main.py's path: safe boot decides, its modules are let go (on the chip
    its check-ins keep them until the start counts as good)."""
    from shove import release, startup

    import os

    go = []  # startup.main() on the chip, with the stand-in machine; the chip the profile is for (bench/wasm_heap.py)
    startup.start(Machine, lambda: go.append(1), "esp32" if esp32 else "unix", os.getenv("HAPENNY_MCU") or "ESP32")
    del startup
    release("startup", "safeboot", "chip")
    if not go:
        raise RuntimeError("safe boot kept the game from starting")


def load():
    """main.py's `from shove import app`: the game's modules."""
    from shove import app  # noqa: F401


class _Opened:
    """What app_board opens for start_app, kept as loading.build keeps it,
    and read_profile's notices: slots of the driver's own (the firmware is
    charged only what it makes)."""
    notices = []
    prof = board = None


def app_board():
    """The App's making up to the collection that starts shove.intern_first
    (the set-up AP's start, bench/wasm_heap.py's ap_steps): the profile read
    and the board opened as loading.build does, kept as it keeps them."""
    from shove import app, loading

    _Opened.prof = app.Kept(loading.read_profile(_Opened))
    _Opened.board = app.open_board(_Opened.prof)


def app_names():
    """loading.build's next part, from that collection to the one that ends
    it: the network's names first (loading.radio_names)."""
    from shove import loading

    loading.radio_names(_Opened.board)


def start_app(restore=False):
    """app.main() up to its loop: the App made and booted (`restore`: after
    a power cut, the stored game read back; for the step's name only). The
    board app_board opened, if it ran: the profile is read again, the names
    read again (all interned by then) and the rest made."""
    import select

    from shove import app

    board = _Opened.board
    _Opened.prof = _Opened.board = None
    a = app.App(board, out=T.out)
    a.poll = select.poll()  # nothing on stdin here: the host's lines are fed below
    a.boot()
    T.a = a
    a.board.clock.slow = False  # no modelled flash or strip waits: the heap is the same
    prof = a.prof
    # the mapped crossings, as row * cols + col in a bytearray: the driver's
    # own data is counted in the live heap, so it is kept small (a list of
    # tuples would be over 1 KB)
    T.cells = bytearray(i for i in range(prof.rows * prof.cols) if a.keeper.map[i] != 255)


def power_cut():
    """A power cut: the App is gone, and on the WebAssembly port the tour's
    figures are saved for the interpreter the host starts next (RESTART:
    the chip starts again into an empty heap); then main.py's path (boot,
    load, start_app: the game read back from flash). (bench/romfs_heap.py
    runs the steps in one unix port: there the App is only let go.)"""
    T.a = None
    if sys.platform != "webassembly":
        return
    import json
    import os

    try:
        os.mkdir("/tour")
    except OSError:
        pass
    d = {"out": [T.out.n, T.out.short, T.out.errors]}
    for k, v in T.__dict__.items():
        if type(v) in (int, list):
            d[k] = v
    with open(SAVED, "w") as f:
        json.dump(d, f)


def passes(n, jump_us=200):
    """Loop passes, the board's clock moved on `jump_us` each (a dart's
    lockout is 60 ms of board time: the heap is the same, the tour faster)."""
    a = T.a
    board = a.board
    sc = a.scanner
    snap = sc.snap
    for _ in range(n):
        board.clock.total += jump_us
        board.read_matrix(snap)
        sc.step(board.ticks_us())
        a.passes += 1
        if sc.qhead != sc.qtail or a.passes >= 8:
            a._serve()


def line(s):
    T.a.commands.handle_line(s.encode() if isinstance(s, str) else s)


def throw_dart(i):
    """A dart at a cell through the matrix, up to the loop pass that scores
    (or ignores) it: the firmware collects right after a dart it scores,
    and this port collects once the step ends, so ending the step there
    gives the firmware its own collection at its own moment."""
    a = T.a
    r, c = divmod(T.cells[(i * 7) % len(T.cells)], a.prof.cols)
    d0 = a.keeper.darts
    i0 = a.keeper.ignored
    a.board.press(r, c, 5)
    n = 0
    while a.keeper.darts == d0 and a.keeper.ignored == i0 and n < 10000:
        passes(1)
        n += 1


def settle():
    """The loop passes after a dart until the scanner is armed again (the
    lockout, the release)."""
    a = T.a
    n = 0
    while a.scanner.state != 0 and n < 400:
        passes(100)
        n += 1


def dart(i):
    throw_dart(i)
    settle()


def advance():
    """What the players do at the end of a visit: `next`, or `new` once the
    game is won (the darts thrown meanwhile were ignored: the game was over)."""
    g = T.a.keeper.game
    if g is not None and g.phase == 3:  # the same variant again: a long run compares like with like
        line('{"cmd":"new","players":["Ann","Bob","Cat","Dan"],"variant":"%s","id":"n"}' % g.rules.variant)
        T.renewed = 1
    else:
        line(b'{"cmd":"next","id":"x"}')


def stage(s):
    """A piece of the code a serial line needs, loaded as the loop's serial
    slice loads it before the line is handled (Commands.stage: a piece a
    slice, each a step here); nothing once all is in."""
    T.a.commands.stage(s.encode() if isinstance(s, str) else s)


def stage_advance():
    """advance()'s line, staged (stage)."""
    g = T.a.keeper.game
    if g is None or g.phase != 3:
        stage(b'{"cmd":"next","id":"x"}')


def play(first, n, nxt=3, state_every=10):
    """Darts first..first+n-1; `next` after every `nxt` (the darts between
    land in the hold; 0: none); a state request every `state_every` (0:
    none); a won game starts anew. (The tour sends each of these as a step
    of its own: this is for a quick look by hand.)"""
    for i in range(first, first + n):
        dart(i)
        if nxt and i % nxt == nxt - 1:
            advance()
        if state_every and i % state_every == state_every - 1:
            line(b'{"cmd":"state","id":"s"}')


def undo_all(most):
    a = T.a
    n = 0
    while a.keeper.game.moves() and n < most:
        line(b'{"cmd":"undo","id":"u"}')
        n += 1
    return a.keeper.game.moves()


def win(most=400):
    """Throws until the game is won (a 2-player piecepack game: one coin a mark)."""
    a = T.a
    i = 0
    while a.keeper.game.phase != 3 and i < most:
        dart(i)
        i += 1
        if a.keeper.game.phase == 2:
            line(b'{"cmd":"next","id":"x"}')
    return a.keeper.game.phase == 3


def cpu_dart(most=2000):
    """One dart of the computer's visit at its pace (`cpu_ms`): the board's
    clock moved on to the moment it is due, then loop passes until it has
    thrown (or made its player change). A step ends there and the host
    collects, as the chip's collector can free a dart's garbage while the
    next is thrown. False once the turn is a person's."""
    a = T.a
    g = a.keeper.game
    if g is None or not g.cpu[g.turn] or g.phase == 3:
        return False
    m = g.moves()
    pace = a.keeper.config["cpu_ms"] * 250
    n = 0
    while a.keeper.game is g and g.moves() == m and g.cpu[g.turn] and n < most:
        passes(8)
        a.board.clock.total += pace  # (a quarter of its pace each 8 passes: the pace starts when it sees the move)
        n += 1
    return True


def between_darts(most=400):
    """The loop's passes between two of the computer's darts (its pace is
    seconds of loop rounds on the chip): until the streams have sent what
    waits and the scanner is armed."""
    a = T.a
    w = a.commands.web
    n = 0
    while (a.scanner.state != 0 or (w is not None and w.busy)) and n < most:
        passes(10)
        n += 1


class _Names:  # getattr on it interns a name (as shove/names.py does)
    pass


def fill_names(n):
    """`n` names of the driver's own interned (bench/wasm_heap.py's names_pool:
    the pools the chip's firmware would fill alone made now, in the driver's time)."""
    for i in range(n):
        getattr(_Names, "_%d" % i, None)


def soak_mark():
    T.mark100 = T.last


def fresh():
    """After the host's collection: if the step before started a new game,
    the live heap now (a game at its start, the same point every time)."""
    if T.renewed:
        T.renewed = 0
        m = gc.mem_alloc()
        if T.mark100 and not T.fresh0:
            T.fresh0 = m
        T.fresh = m
        print("FRESH", m, T.a.keeper.darts)  # the series, for a look at the run's output (wasm_heap.LAST_OUT)


def free_block():
    """The largest free block now (bytes), as mem_info prints it (in 16-byte blocks)."""
    micropython.mem_info()


def unload():
    """After the last readings: the firmware let go (its App, its modules),
    so that the report has room to be written under a cap."""
    T.darts = T.a.keeper.darts if T.a else 0
    w = T.a.commands.web if T.a else None
    if w is not None:
        T.faults += w.faults
    T.a = None
    for name in [n for n in sys.modules if n == "shove" or n.startswith("shove.")]:
        sys.modules.pop(name)


def report():
    import json

    print(json.dumps({"peak": T.peak, "peak_at": T.peak_at, "last": T.last, "mark100": T.mark100, "fresh0": T.fresh0, "fresh": T.fresh, "out": T.out.n, "short": T.out.short, "errors": T.out.errors, "memerr": T.memerr, "harness": T.harness,
                      "used": T.used, "used_at": T.used_at, "grew": T.grew, "marks": T.marks, "grew_at": T.grew_at, "kind": T.kind,
                      "darts": T.darts, "server": T.server, "faults": T.faults, "statuses": T.statuses, "first": T.first,
                      "short_at": T.short_at, "short_live": T.short_live, "short_alloc": T.short_alloc, "mpy": sys.implementation._mpy}))


# ---- the Wi-Fi phases (bench/wasm_heap.py's wifi_steps) -------------------------------------
# The board's own server over the stand-in network stack (bench/wasm_net.py),
# stepped by the loop as on the chip; the requests are those a page sends.
HOST = b"Host: dartboard.local\r\nOrigin: http://dartboard.local\r\n"


def net_load():
    """The stand-in network stack loaded (before the harness's share is read: it is the neighbour's)."""
    import wasm_net

    T.net = wasm_net
    T.clients = []  # the server's ends of the clients the tour keeps (the streams)


def net_stubs(poll=True):
    """The stand-in as `network`, `socket` and (`poll`) `select`, for the
    modules imported from now on (the virtual board keeps the port's
    select). Without select before a boot on a board with a radio: start-up
    interns the network's names first (shove.intern_first), importing the
    server's modules, as on the chip."""
    sys.modules["network"] = sys.modules["socket"] = T.net
    if poll:
        sys.modules["select"] = T.net


def web():
    return T.a.commands.web


def until(cond, most=4000):
    """Loop passes, 10 at a time, until cond() (or `most` run out)."""
    n = 0
    while not cond() and n < most:
        passes(10)
        n += 1
    return cond()


def joined():
    return until(lambda: web() is not None)


def request(method, path, body=b"", code=None, extra=b"", keep=False):
    """A page's request on a new connection, served through the loop's
    passes until the server has closed it (a plain request: its client
    closes once answered) or, for a stream (`keep`), until its snapshot is
    sent. Its status code, 0 if no answer came."""
    head = b"%s %s HTTP/1.1\r\n%s%s" % (method.encode(), path.encode(), HOST, extra)
    if code is not None:
        head += b"X-Hapenny-Code: %s\r\n" % code.encode()
    if body:  # its head now, its body in the next step (body()): the server's reading, then the command
        head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        s = T.net.connect(head + b"\r\n")
        until(lambda: s.at == 0 and not s.rx)
        passes(10)
        T.pending = (s, body)
        return None
    s = T.net.connect(head + b"\r\n")
    return answer(s, keep)


def body():
    """The body of the request whose head request() sent, and its answer's status."""
    s, b = T.pending
    T.pending = None
    s.rx = b
    return answer(s)


def send_body():
    """The body of the request whose head request() sent, served until it is read and
    dispatched: the rest in steps of their own (serving(), answered()), as the chip's
    collector frees a step's garbage before the next (a page's command runs a piece a
    server step: webroutes.Routes.command)."""
    s, b = T.pending
    s.rx = b
    s.peer_closed = True
    T.pending = s
    until(lambda: _read(s), 4000)


def _read(s):
    """Its request read whole and dispatched (its slot past reading), or closed."""
    for c in web().slots:
        if c.sock is s:
            return c.state > 2  # (httpd.BODY)
    return True


def ask(method, path, extra=b""):
    """A plain request sent and served for a server step or so (serving):
    the rest in steps of their own (serving(), answered()), as the chip's
    collector frees a slice's garbage before the next is made."""
    s = T.net.connect(b"%s %s HTTP/1.1\r\n%s%s\r\n" % (method.encode(), path.encode(), HOST, extra))
    s.peer_closed = True
    T.pending = s
    serving()


def serving(most=4):
    """A few of the loop's rounds (`most` times 10 passes, about a server
    step) of the request ask() sent, none once it is answered and closed."""
    s = T.pending
    until(lambda: s.closed, most)


def answered():
    """The answer ask() began, once its server has closed it: its status (0 if it has not)."""
    s = T.pending
    T.pending = None
    until(lambda: s.closed, 40)
    return status_of(s)


def status_of(s):
    h = s.head
    return int(h[9:12]) if len(h) >= 12 and h[9:12].isdigit() else 0


def unlock():
    """A minute of the board's clock: the code checks' lock has run out."""
    T.a.board.clock.total += 60000000
    passes(10)


def answer(s, keep=False):
    if keep:
        until(lambda: s.sent > 0 and not web().busy)
        T.clients.append(s)
    else:
        s.peer_closed = True
        until(lambda: s.closed)
    return status_of(s)


def expect(status, got):
    if got == 503 and status != 503:  # answered no_memory (busy, the server's other 503, is expected where it comes)
        T.faults += 1
    if got != status:
        T.statuses += 1
        print("STATUS", status, got, T.samples)


def raw(data, close=True):
    """A hostile client's bytes as they are (`close`: it then goes)."""
    s = T.net.connect(data)
    if close:
        s.peer_closed = True
    until(lambda: s.closed, 200)
    T.pending = s
    return s


def wait_closed():
    """A second of the board's time (in loop passes) for the client raw() left open: its status then."""
    s = T.pending
    until(lambda: s.closed, 500)
    return status_of(s) if s.closed else 0


def stream_drop():
    """The streams' clients go (a reload): their connections end at the next steps."""
    for s in T.clients:
        s.peer_closed = True
    T.clients = []
    until(lambda: web().open == 0, 400)


def server_off():
    """The server closed and its modules let go (as wifi.leave does): the
    live heap then, against the one before, is the server's own share."""
    from shove import release

    c = T.a.commands
    T.faults += c.web.faults  # (the server made anew after counts from 0)
    c.web.close()
    c.web = None
    release("webroutes", "httpd")  # (close let the requests' code go)
    T.clients = []


def server_on():
    T.a.commands.net._serve()


def requests_done():
    """Six seconds of the board's clock with no request: the server lets the requests' code go
    (httpd._KEEP_MS after the last), as on a board whose pages only watch."""
    T.a.board.clock.total += 6000000
    until(lambda: not web().loaded, 400)


def viewer_heap():
    """After the host's collection with the server off: its share is the live heap before minus now."""
    T.server = T.before - gc.mem_alloc()


def before():
    T.before = gc.mem_alloc()


# ---- a network update (bench/wasm_heap.py's deploy_steps), as host/hapenny/netdeploy.py sends it ----
class _ResetMachine:
    """What the virtual board's deliberate reset asks of `machine` (its mark in RTC memory)."""

    class RTC:
        def memory(self, b=None):
            return b""


def commit(path, extra):
    """The update's commit, as a page's plain request: answered, and the
    board then resets (the virtual board's: SystemExit), its App gone as
    in a power cut. The answer's status (0 if there was no reset)."""
    head = b"POST %s HTTP/1.1\r\n%s%s\r\n" % (path.encode(), HOST, extra)
    s = T.net.connect(head)
    s.peer_closed = True
    sys.modules["machine"] = _ResetMachine
    reset = False
    try:
        until(lambda: False, 400)
    except SystemExit:
        reset = True
    finally:
        sys.modules.pop("machine", None)
    if not reset:
        return 0
    w = T.a.commands.web
    if w is not None:  # (the server's count goes with the reset)
        T.faults += w.faults
    T.a = None
    T.clients = []
    del T.net.backlog[:]
    sys.modules.pop("select", None)  # the next start's board and App take the port's (net_stubs gives it back)
    for name in [n for n in sys.modules if n == "shove" or n.startswith("shove.")]:
        sys.modules.pop(name)
    return status_of(s)


def switch():
    """boot.py's part after a reset with an update staged: the files moved into place."""
    import os

    os.stat("upd.go")  # (an OSError here: the commit wrote no marker)
    import shove.updswitch

    shove.updswitch.run()
    shove.release("updswitch")
    for name in [n for n in sys.modules if n == "shove" or n.startswith("shove.")]:
        sys.modules.pop(name)


# ---- the set-up access point (bench/wasm_heap.py's ap_steps) -------------------------------
def ap_open():
    """The loop's passes until the set-up AP is open and its page served."""
    return until(lambda: web() is not None and getattr(T.a.commands.net, "ap", None) is not None)


def on_ap(yes=True):
    """The next clients are a phone on the set-up AP (or, not `yes`, on the
    home network, asking for the board at the address the page showed)."""
    global HOST
    T.net.peer = ("192.168.4.2", 50000) if yes else ("192.168.1.41", 50000)
    if not yes:
        a = T.a.commands.net.address.encode()
        HOST = b"Host: %s\r\nOrigin: http://%s\r\n" % (a, a)


def dns(query):
    """A phone's DNS query to the AP's responder: True once it is answered."""
    s = T.a.commands.net.dns.sock
    n = s.sent
    s.dgrams.append(query)
    until(lambda: not s.dgrams, 100)
    return s.sent > n


def ap_joined():
    """The loop's passes until the network the page asked for is joined and
    the AP has closed (a game is under way: at once), the game's page then served."""
    return until(lambda: not getattr(T.a.commands.net, "is_setup", False) and web() is not None)

# The App's start-up: its parts made (build), and what it reads from flash
# for them: the profile, the configuration, the map and the stored game,
# each checked; a damaged file is set aside (quarantined) with a notice and
# defaults are used. Loaded by App.__init__ and let go when it ends, with
# the profile's and the settings' modules.
import binascii
import json
import sys

from shove import AP_PHASE, NET_PHASE, Refused, intern_first, journal, jrec, jstore, leds, pacing, profile, release, scanner, store
from shove.commands import Commands
from shove.keeper import Keeper
from shove.settings import CONFIG_FILE, DEFAULT_CONFIG, GAME_FILE, MAP_FILE, PROFILE_FILE, check_config
from shove.strip import Strip


def build(app, board, out, open_board, kept):
    """App.__init__'s parts, from the profile, the configuration, the map
    and the stored game on flash (`board`: one already open, or None for
    open_board(profile); `out`: the console's text stream, or None). The
    profile is kept as kept(profile): a class of this module's would keep
    all of it, and the profile's module, in the heap."""
    text = out or sys.stdout
    app.notices = []  # storage problems found at boot, sent after `boot`
    prof = app.prof = kept(read_profile(app))
    b = app.board = board or open_board(prof)
    radio_names(b)
    binary = getattr(text, "buffer", None)  # bytes straight to the port
    if out is None:  # a board may bring its own console stream (the virtual one's ESP32 model)
        binary = getattr(b, "console", None) or binary
    # output paced to the UART's FIFO, which the board also feeds inside its quiet bursts
    app.tx = pacing.TxQueue(binary, text, b.uart_us_per_byte, b.ticks_us)
    t = prof.timing
    app.scanner = scanner.Scanner(prof.rows, prof.cols, t["window_us"], t["lockout_ms"] * 1000,
                                  t["rearm_ms"] * 1000, t["stuck_ms"] * 1000)
    # the callbacks the parts get, made once (a bound method made per call is garbage)
    app.tick = app.scan_point
    app.emit = app.emit
    changed = app.changed
    config = read_config(app)
    L = prof.leds
    b_ = config["brightness"]
    r = app.renderer = leds.Renderer(L["beds"], L["per_side"], L["status"], prof.brightness if b_ < 0 else b_)
    app.strip = Strip(r, b, app.tick, app.scanner)
    k = app.keeper = Keeper(b, r, config, prof.cols, app.emit, changed, app.tick)
    k.map = read_map(app)
    k.game = read_game(app, k)
    c = app.commands = Commands(k, b, prof, r, app.strip, app.tx, app.emit, app.tick, app.figures, changed)
    c.more["wifi"] = "wifiset"  # the network's command: set, forget, show
    read_wifi(app, c)


_NEW = 2  # the game's buttons (next, undo, new): NEW held at start opens the set-up AP


def radio_names(b):
    """On a board with a radio, the network's names before the game's objects
    (names_first): the set-up AP's too when it will open (no network set, or
    NEW held). The heap tour runs it as a step of its own, after the board's
    opening, as the chip's collection at its start divides them
    (bench/wasm_heap.py's ap_steps)."""
    if getattr(b, "radio", False):  # the network's names before the game's objects (names_first)
        names_first(b.button(_NEW) or b.read_file("wifi.json") is None)


# The modules of the set-up AP's phase (its own, the server's, the page's work) and of
# every command (request, view, extra)
def names_first(ap):
    """The network's names interned while the heap is whole, before the
    game's objects are made (shove.intern_first): some 10 imports at start,
    only on a board with a radio; the set-up AP's too when it opens (`ap`).
    Without it a board with a network set, on the chip's heap, joined and
    then met a MemoryError "allocating 1280" (a names pool) starting its
    server, and answered every command no_memory."""
    intern_first(AP_PHASE if ap else NET_PHASE)


def read_wifi(app, c):
    """The network's join, made only when a network is set; the set-up
    access point (shove/wifiap.py) when none is, or NEW is held, on a board
    with a radio. A board without either loads nothing of the network."""
    b = app.board
    radio = getattr(b, "radio", False)
    held = radio and b.button(_NEW)
    if held:  # its release is not a press (a long one would change the variant)
        bt = c.buttons
        bt.raw[_NEW] = bt.stable[_NEW] = bt.longed[_NEW] = 1
        bt.idle = False
    data = b.read_file("wifi.json")
    joiner = None
    if data is not None:
        from shove import wifi

        try:
            cfg = wifi.load(data)
        except ValueError as e:
            store.quarantine(wifi.FILE)
            _notice(app, wifi.FILE, "damaged (%s); no network is joined" % e)
        else:
            joiner = c.net = wifi.Joiner(cfg, app.renderer, app.changed, app.emit, c, radio)
    if held or (radio and joiner is None):
        from shove import wifiap

        if held:  # the person means another network: the stored one waits behind the AP (HELD_WAIT_MS)
            wifiap.open_ap(c, wifiap.HELD, joiner, wifiap.HELD_WAIT_MS)
        else:
            wifiap.open_ap(c, wifiap.NONE_SET)


def _notice(app, path, msg):
    app.notices.append({"file": path, "error": msg})


def _read_json(app, path):
    # parsed from the open file: the file's whole text (the profile's some
    # 2.5 KB, read in growing chunks) would be garbage beside what it parses to
    try:
        f = open(path, "rb")
    except OSError:
        return None
    try:
        with f:
            return json.load(f)
    except OSError:  # unreadable: as if missing (store.read's way)
        return None
    except Exception:
        store.quarantine(path)
        _notice(app, path, "damaged: not JSON; defaults used")
        return None


def read_profile(app):
    d = _read_json(app, PROFILE_FILE)
    if d is not None:
        try:
            return profile.Profile(d)
        except profile.ProfileError as e:
            store.quarantine(PROFILE_FILE)
            _notice(app, PROFILE_FILE, "invalid: %s; the built-in generic-8x8 is used" % e)
    return profile.Profile(profile.default_dict())


def read_config(app):
    cfg = dict(DEFAULT_CONFIG)
    d = _read_json(app, CONFIG_FILE)
    if d is not None:
        try:
            check_config(d)
            cfg.update(d)
        except Refused as e:
            store.quarantine(CONFIG_FILE)
            _notice(app, CONFIG_FILE, "invalid: %s; defaults used" % e.msg)
    return cfg


def read_map(app):
    d = _read_json(app, MAP_FILE)
    if d is not None:
        try:
            return profile.parse_map(d, app.prof.rows, app.prof.cols)
        except profile.ProfileError as e:
            store.quarantine(MAP_FILE)
            _notice(app, MAP_FILE, "invalid: %s; the profile's map is used" % e)
    return bytearray(app.prof.map)


def load_journal(js):
    """game.jnl and its segments -> (bytes of game.jnl, records after it),
    or None without a game. Stale directories (of a replaced file) go."""
    js.close()
    data = store.read(jstore.GAME)
    if data is None:
        js.clear()
        return None
    tok = "%08x" % (binascii.crc32(data) & 0xFFFFFFFF)
    js.tok = tok
    dirs = []
    for name in jstore.ls(jstore.DIR):
        if name.startswith(tok + "."):
            dirs.append((int(name[9:]), name))
        else:
            jstore.rmtree(jstore.DIR + "/" + name)
    dirs.sort()
    recs = bytearray()
    js.dir = None
    for d, name in dirs:
        segs = sorted(int(s) for s in jstore.ls(jstore.DIR + "/" + name))
        js.dir = jstore.DIR + "/" + name
        js.dir_recs = 0
        for s in segs:
            with open(js.dir + "/%d" % s, "rb") as f:
                part = f.read()
            recs.extend(part)
            js.dir_recs += len(part) // jrec.REC
    return data, bytes(recs)


def read_game(app, keeper):
    js = keeper.jstore
    try:
        found = load_journal(js)
        if found is None:
            return None
        game, keeper.jrecs, clean = journal.decode(found[0] + found[1])
    except journal.JournalError as e:
        store.quarantine(GAME_FILE)
        load_journal(js)  # its segments are stale now
        _notice(app, GAME_FILE, "%s; the game could not be restored" % e)
        return None
    except (OSError, ValueError) as e:
        store.quarantine(GAME_FILE)
        load_journal(js)
        _notice(app, GAME_FILE, "unreadable (%s); the game could not be restored" % e)
        return None
    js.start(keeper.jrecs)
    try:
        js.boundary(game.rules.darts)  # room for the visit in play, made now
    except OSError:
        pass
    # a torn last record (a cut during an append) was never acknowledged:
    # rewrite the file so the next append starts on a record boundary
    keeper.jdirty = not clean
    return game

# What the board reads from flash at start-up (shove/loading.py), on real
# files in a scratch directory: a missing file gives the defaults quietly; a
# damaged or refused one is set aside as NAME.bad, with a notice naming the
# file, and the defaults are used; a good one is used. Runs in CPython and
# MicroPython.
import json
import os

import scratch
from shove import journal, jstore, loading, profile, rules, segments
from shove.settings import CONFIG_FILE, DEFAULT_CONFIG, GAME_FILE, MAP_FILE, PROFILE_FILE


class Start:
    """What loading reads and sets on the App at start-up."""

    def __init__(self):
        self.notices = []
        self.prof = None
        self.jrecs = -1
        self.jdirty = None
        self.jstore = jstore.Store()  # the game keeper's: where the journal's records go


def _in_scratch(name, files):
    path = scratch.folder(name)
    for f, data in files.items():
        with open(path + "/" + f, "wb") as fh:
            fh.write(data if isinstance(data, bytes) else data.encode())
    return path


def _load(name, files):
    here = os.getcwd()
    path = _in_scratch(name, files)
    os.chdir(path)
    try:
        app = Start()
        app.prof = loading.read_profile(app)
        app.config = loading.read_config(app)
        app.map = loading.read_map(app)
        app.game = loading.read_game(app, app)  # (the App and its keeper in one here)
        return app, sorted(os.listdir("."))
    finally:
        os.chdir(here)


def _profile(**change):
    d = profile.default_dict()
    d.update(change)
    return json.dumps(d)


def test_no_files_give_the_defaults_and_no_notice():
    app, left = _load("load1", {})
    assert app.notices == [] and left == []
    assert app.prof.name == "generic-8x8" and app.config == DEFAULT_CONFIG
    assert bytes(app.map) == bytes(app.prof.map) and app.game is None


def test_good_files_are_used():
    g = rules.new_game(["Ann", "Bob"])
    g.throw(segments.encode("T3"))
    cells = [[0, 0, "S20"], [7, 7, "DB"]]
    app, left = _load("load2", {PROFILE_FILE: _profile(name="mine"), CONFIG_FILE: json.dumps({"cpu_ms": 400}),
                                MAP_FILE: json.dumps(cells), GAME_FILE: journal.encode(g)})
    # (the restored game's visit gets its segment made: the journal's directory)
    assert app.notices == [] and left == sorted([PROFILE_FILE, CONFIG_FILE, MAP_FILE, GAME_FILE, jstore.DIR])
    assert app.prof.name == "mine"
    assert app.config["cpu_ms"] == 400 and app.config["variant"] == DEFAULT_CONFIG["variant"]
    assert bytes(app.map) == bytes(profile.parse_map(cells, app.prof.rows, app.prof.cols))
    assert bytes(app.game.marks) == bytes(g.marks) and app.jrecs == 1 and app.jdirty is False


def test_a_torn_last_record_keeps_the_game_and_marks_the_file_for_rewriting():
    g = rules.new_game(["Ann", "Bob"])
    g.throw(segments.encode("S5"))
    data = journal.encode(g) + b"\x05"  # a cut in the middle of the next record
    app, _ = _load("load3", {GAME_FILE: data})
    assert app.notices == [] and app.jdirty is True and bytes(app.game.marks) == bytes(g.marks)


def test_damaged_files_are_set_aside_with_a_notice_and_defaults_used():
    table = [
        (PROFILE_FILE, "{not json", "damaged"),
        (PROFILE_FILE, _profile(name=""), "invalid"),
        (CONFIG_FILE, "[1, 2", "damaged"),
        (CONFIG_FILE, json.dumps({"cpu_ms": "slow"}), "invalid"),
        (MAP_FILE, "nope", "damaged"),
        (MAP_FILE, json.dumps([[0, 0, "Q9"]]), "invalid"),
        (GAME_FILE, b"HPJ2 junk", ""),
    ]
    for i, (name, data, says) in enumerate(table):
        app, left = _load("load4-%d" % i, {name: data})
        assert left == [name + ".bad"], (name, left)
        assert len(app.notices) == 1 and app.notices[0]["file"] == name, app.notices
        assert says in app.notices[0]["error"], app.notices
        assert app.prof.name == "generic-8x8" and app.config == DEFAULT_CONFIG, name
        assert bytes(app.map) == bytes(app.prof.map) and app.game is None, name


def test_a_journal_whose_records_cannot_be_read_is_set_aside_with_a_notice():
    # the game file is sound, but a segment of its records cannot be read
    # (here a directory where the segment's file should be): the game is not
    # restored from half its darts; the file is set aside, the notice names it
    import binascii

    g = rules.new_game(["Ann", "Bob"])
    g.throw(segments.encode("T3"))
    data = journal.encode(g)
    path = _in_scratch("load5", {GAME_FILE: data})
    seg = "%s/%s/%08x.0" % (path, jstore.DIR, binascii.crc32(data) & 0xFFFFFFFF)
    os.mkdir(path + "/" + jstore.DIR)
    os.mkdir(seg)
    os.mkdir(seg + "/0")
    here = os.getcwd()
    os.chdir(path)
    try:
        app = Start()
        app.prof = loading.read_profile(app)
        app.game = loading.read_game(app, app)
        left = sorted(os.listdir("."))
    finally:
        os.chdir(here)
    assert app.game is None
    assert GAME_FILE + ".bad" in left and GAME_FILE not in left, left
    assert len(app.notices) == 1 and app.notices[0]["file"] == GAME_FILE, app.notices
    assert "unreadable" in app.notices[0]["error"], app.notices


def test_a_restored_journal_fills_its_directory_as_one_never_cut_would_and_stale_ones_go():
    # The journal's records go into directories of jstore.DIR_RECS (each a
    # flash block: a new one is an erase). Restored at start-up, the last
    # directory's records count toward it, so the next directory is begun
    # exactly where it would have been without the restart; directories
    # left by a replaced game file are removed.
    import sys

    here = os.getcwd()
    path = _in_scratch("dirfill-" + sys.implementation.name, {})
    os.chdir(path)
    try:
        def put(name, data):
            with open(name, "wb") as f:
                f.write(data)

        def sync(f, rec):
            f.write(rec)
            f.flush()

        js = jstore.Store()
        js.write(b"a game", 0, put)
        kept = 20  # more than a segment holds (jstore.SEG_MAX): the directory has two
        for i in range(kept):
            js.append(bytes((i, 0, 0)), sync)
        js.close()
        os.mkdir(jstore.DIR + "/deadbeef.0")  # a replaced game's
        put(jstore.DIR + "/deadbeef.0/0", b"\x01\x02\x03")
        js = jstore.Store()
        data, recs = loading.load_journal(js)
        assert data == b"a game" and recs == b"".join(bytes((i, 0, 0)) for i in range(kept))
        assert "deadbeef.0" not in os.listdir(jstore.DIR)
        js.start(kept)
        first = sorted(os.listdir(jstore.DIR))
        assert len(first) == 1
        n = 0
        while sorted(os.listdir(jstore.DIR)) == first:
            js.append(b"\x00\x00\x00", sync)
            n += 1
        js.close()
        assert kept + n - 1 == jstore.DIR_RECS  # the record that began the next one is its first
    finally:
        os.chdir(here)

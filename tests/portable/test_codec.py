# Protocol codec, journal and power-safe store. Runs in both interpreters.
import json
import os

import scratch

from shove import protocol, request, store


def feed_all(lb, data):
    out = []
    for b in data:
        r = lb.feed(b)
        if r is not None:
            out.append(r)
    return out


def take_all(lb, data, chunk):
    # what App._read_serial does: a chunk at a time, the runs up to a line end
    # or a REPL byte taken whole, those bytes fed one by one
    out = []
    buf = bytearray(chunk)
    view = memoryview(buf)
    for start in range(0, len(data), chunk):
        part = data[start:start + chunk]
        n = len(part)
        buf[:n] = part
        i = 0
        while i < n:
            i = lb.take(buf, view, i, n)
            if i == n:
                break
            r = lb.feed(buf[i])
            i += 1
            if r is not None:
                out.append(r)
    return out


def test_taking_chunks_gives_the_lines_feeding_bytes_does():
    class Lcg:  # MicroPython's random has no Random: a seeded stream of its own
        def __init__(self, seed):
            self.s = seed

        def randrange(self, lo, hi):
            self.s = (self.s * 1103515245 + 12345) & 0x7FFFFFFF
            return lo + (self.s >> 8) % (hi - lo)

        def choice(self, seq):
            return seq[self.randrange(0, len(seq))]

    rnd = Lcg(5)
    alphabet = b'{}":,ab \r\n\n\x03\x01\x00\t\xc3\xa9'
    cases = [b'{"cmd":"info"}\r\n{"a":1}\n\n', b"x" * 511 + b"\n", b"x" * 512 + b"\n", b"y" * 513 + b"\nok\n",
             b"y" * 700 + b"\n" + b"z" * 600 + b"\n", b"\x03\x03\n\x01a\n", b"no end"]
    for _ in range(200):
        cases.append(bytes(alphabet[rnd.randrange(0, len(alphabet))] for _ in range(rnd.randrange(1, 80))))
        cases.append(b"".join(rnd.choice((b"a" * rnd.randrange(1, 600), b"\n", b"\r\n", b"\x03")) for _ in range(3)))
    for data in cases:
        want = feed_all(protocol.LineBuffer(), data)
        for chunk in (1, 5, 16, 64):
            lb = protocol.LineBuffer()
            got = take_all(lb, data, chunk)
            assert got == want, (data[:40], chunk)


def text(line):
    """A line's text: one string, or the list of chunks a line carrying a state is queued as."""
    if isinstance(line, str):
        return line
    assert isinstance(line, list) and all(isinstance(c, str) for c in line), line
    return "".join(line)


def test_a_reply_built_in_pieces_is_the_same_text_with_reads_between():
    from shove import rules

    g = rules.new_game(["Ann", "Bob", "Cid"], rules={"beds": list(range(1, 21)), "marks": 9})
    for code in (0x114, 0x205, 0x301):
        try:
            g.throw(code)
        except rules.RuleError:
            pass
    ticks = [0]

    def tick():
        ticks[0] += 1
    st = g.to_state(tick)
    assert st == g.to_state() and ticks[0] >= 3 + 3 * 2  # a tick a side and every 8 beds
    cases = [("s", {"state": st}), (7, {"state": st, "extra": [1, [2, 3], {"a": None}]}), (None, None),
             ("x", {"cells": [[0, 1, "S20"], [2, 3, "T5"]], "n": 2}), (1, {"e": {}, "l": [], "s": "\u00e9\n"})]
    for id_, fields in cases:
        ticks[0] = 0
        assert text(protocol.ok(id_, fields, tick)) == protocol.ok(id_, fields), (id_, fields)
        assert text(protocol.event("e", fields, tick)) == protocol.event("e", fields)
        # only a line carrying a state is built in pieces (a dart event is small)
        if fields and "state" in fields:
            assert ticks[0] > 0
        else:
            assert ticks[0] == 0
    line = b'{"cmd":"state","id":"a long enough id to have many tokens","x":[1,2,3,4,5,6,7,8,9]}'
    ticks[0] = 0
    assert request.decode(line, tick) == request.decode(line) and ticks[0] >= 2


def test_any_object_is_encoded_as_a_line_is_and_a_state_in_chunks_with_reads_between():
    # protocol.encode (the network's snapshot): the same text as a reply's
    # fields; carrying a state, with tick() given, the chunks of a state line
    from shove import rules

    st = rules.new_game(["Ann", "Bob", "Cid"]).to_state()
    snap = {"connected": True, "info": {"name": "b"}, "state": st}
    want = protocol.encode(dict(snap))  # no tick: one string, the whole object's
    assert isinstance(want, str) and json.loads(want) == snap and " " not in want
    ticks = [0]

    def tick():
        ticks[0] += 1
    got = protocol.encode(dict(snap), tick)
    assert isinstance(got, list) and len(got) > 1 and text(got) == want and ticks[0] > 0
    ticks[0] = 0
    assert protocol.encode({"connected": False}, tick) == '{"connected":false}' and ticks[0] == 0


def test_the_biggest_state_is_encoded_in_small_pieces_between_reads():
    # 8 sides of the extended set: one json.dumps of it is 1.4 KB (some
    # 30 ms on the chip with no read of the matrix); built with reads
    # between, no piece may be more than a few hundred bytes
    from shove import rules

    g = rules.new_game(["P%d" % i for i in range(8)], variant="extended")
    pieces = []
    since = [0]
    real = protocol._enc

    def enc(obj):
        text = real(obj)
        since[0] += len(text)
        return text

    def tick():
        pieces.append(since[0])
        since[0] = 0
    protocol._enc = enc
    try:
        line = protocol.ok(1, {"state": g.to_state(tick)}, tick)
    finally:
        protocol._enc = real
    pieces.append(since[0])
    line = text(line)
    assert line == protocol.ok(1, {"state": g.to_state()})
    assert len(line) > 1300 and max(pieces) <= 400, (len(line), max(pieces))


def test_a_state_line_is_queued_in_chunks_of_a_few_hundred_bytes_never_joined_whole():
    # The line is never one string: its text whole (1.2 KB for eight sides,
    # more on 20 beds) and the list of its hundred-odd pieces each needed a
    # free block of their own size, which the heap of a new game of eight
    # computer sides may not have (answered no_memory). Its pieces are
    # joined into chunks as they come, so no list holds more than 16 of
    # them (cut finer, a 6-sided `new` once held several hundred pieces at
    # once and ran the ESP32's heap out), a chunk ends after a piece of 64
    # bytes or more, and none is much more than a side.
    from shove import rules, segments

    real = protocol._put
    for n, beds in ((2, None), (6, None), (8, list(range(1, 21)) + [25])):
        g = rules.new_game(["P%d" % i for i in range(n)], rules={"beds": beds} if beds else None)
        g.throw(segments.encode("T20"))  # a dart in the visit
        st = g.to_state()
        side = max(len(protocol._enc(s)) for s in st["sides"])
        for build in (lambda tick: protocol.ok(1, {"state": st}, tick),
                      lambda tick: protocol.event("new", {"state": st}, tick)):
            most = [0]

            def spy(out, piece):
                real(out, piece)
                if isinstance(out[-1], list):
                    most[0] = max(most[0], len(out[-1]))
            protocol._put = spy
            try:
                line = build(lambda: None)
            finally:
                protocol._put = real
            whole = build(None)
            assert text(line) == whole
            assert most[0] < 16  # a 16th piece ends the chunk
            assert max(len(c) for c in line) <= side + 64, (n, [len(c) for c in line])
            assert len(line) <= 2 + len(whole) // 64, (n, len(line))


def test_a_chunk_ends_at_its_sixteenth_piece_or_after_a_piece_of_64_bytes():
    # the bounds at their edges: 15 small pieces stay one run, the 16th
    # ends the chunk; a piece of 63 bytes does not end it, one of 64 does
    out = [[]]
    for i in range(15):
        protocol._put(out, "a")
    assert out == [["a"] * 15]
    protocol._put(out, "b")
    assert out == ["a" * 15 + "b", []]
    protocol._put(out, "x" * 63)
    assert out == ["a" * 15 + "b", ["x" * 63]]
    protocol._put(out, "y" * 64)
    assert out == ["a" * 15 + "b", "x" * 63 + "y" * 64, []]
    protocol._put(out, "z" * 300)  # a side alone: a chunk of its own
    assert out[2:] == ["z" * 300, []]


def test_line_buffer_splits_lines_and_strips_cr():
    lb = protocol.LineBuffer()
    assert feed_all(lb, b'{"cmd":"info"}\r\n{"a":1}\n\n') == [b'{"cmd":"info"}', b'{"a":1}', b""]


def test_line_buffer_bounds_memory_and_reports_too_long():
    lb = protocol.LineBuffer()
    got = feed_all(lb, b"x" * 10000 + b"\n" + b'{"cmd":"state"}\n')
    assert got[0] is protocol.LineBuffer.TOO_LONG
    assert got[1] == b'{"cmd":"state"}'
    assert len(lb.buf) == protocol.MAX_LINE
    # exactly 512 bytes is allowed, 513 is not
    assert feed_all(lb, b"y" * 512 + b"\n") == [b"y" * 512]
    assert feed_all(lb, b"y" * 513 + b"\n") == [protocol.LineBuffer.TOO_LONG]


def decode_error(line):
    """The error decode raises for a line it must refuse (a line it takes fails the test)."""
    try:
        request.decode(line)
    except protocol.ProtoError as e:
        return e
    raise AssertionError(line)


def test_decode_refuses_what_is_not_a_command():
    cases = [
        (b"not json", "bad_json"), (b"[1,2]", "bad_json"), (b'"str"', "bad_json"), (b"\xff\xfe", "bad_json"),
        (b'{"cmd": 5}', "unknown_cmd"), (b'{"id": 3}', "unknown_cmd"), (b'{"cmd"', "bad_json"),
    ]
    for line, code in cases:
        e = decode_error(line)
        assert e.code == code, (line, e.code)
        # the reply's "msg": text for a person, never empty or null
        assert isinstance(e.msg, str) and e.msg and str(e) == e.msg, line
    assert request.decode(b'{"cmd":"info","id":[1,{"x":2}]}')["id"] == [1, {"x": 2}]


def test_strict_utf8():
    good = [b"", b"abc", "Zo\u00eb".encode(), "\u20ac".encode(), "\U0001F3AF".encode(), b"\xef\xbf\xbf"]
    bad = [b"\xff", b"\xc3", b"\xe2\x82", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
           b"\xf8\x88\x80\x80\x80", b"a\xc3", b"\xe0\x80\xaf", b"\xc3\x28"]
    for b in good:
        assert request.valid_utf8(b), b
    for b in bad:
        assert not request.valid_utf8(b), b
        assert decode_error(b'{"cmd": "info", "id": "' + b + b'"}').code == "bad_json", b


def test_unknown_cmd_keeps_the_id():
    try:
        request.decode(b'{"id": "abc", "cmd": 7}')
    except protocol.ProtoError as e:
        assert e.id == "abc"
        return
    raise AssertionError("accepted")


def test_replies_and_events_are_one_json_line():
    import json

    r = json.loads(protocol.ok(7, {"state": None}))
    assert r == {"id": 7, "ok": True, "state": None}
    e = json.loads(protocol.error("x", "bad_seg", "no"))
    assert e == {"id": "x", "ok": False, "error": "bad_seg", "msg": "no"}
    assert json.loads(protocol.event("boot", {"version": "1"})) == {"ev": "boot", "version": "1"}
    assert "\n" not in protocol.ok(1, {"s": "a\nb"})


def _tmpdir(name):
    return scratch.folder(name)


def test_store_replaces_whole_files():
    d = _tmpdir("store1")
    p = d + "/cfg.json"
    assert store.read(p) is None
    store.write_atomic(p, b"one")
    store.write_atomic(p, b"two")
    assert store.read(p) == b"two"
    assert sorted(os.listdir(d)) == ["cfg.json"]


def test_a_torn_first_write_is_no_file_at_all():
    # the very first write of a file cut in the middle: a short .tmp and
    # nothing else; it must not become the file (it would read as damaged)
    d = _tmpdir("store6")
    p = d + "/config.json"
    with open(p + ".tmp", "wb") as f:
        f.write(b'{"learn": tr')
    assert store.read(p) is None
    store.write_atomic(p, b"{}")
    assert store.read(p) == b"{}"


def test_store_quarantines_damaged_files():
    d = _tmpdir("store3")
    p = d + "/map.json"
    store.write_atomic(p, b"{broken")
    store.quarantine(p)
    assert store.read(p) is None
    assert sorted(os.listdir(d)) == ["map.json.bad"]


def test_a_damaged_file_that_cannot_be_set_aside_is_removed():
    # the board must never read the damaged file again (it would loop on it):
    # when PATH.bad cannot be made (here a folder is in the way) the file goes
    d = _tmpdir("store8")
    p = d + "/map.json"
    store.write_atomic(p, b"{broken")
    try:
        os.mkdir(p + ".bad")
    except OSError:
        pass
    try:
        store.quarantine(p)
        assert store.read(p) is None
    finally:
        os.rmdir(p + ".bad")


def test_a_torn_temporary_file_never_replaces_the_committed_one():
    # a cut while the new content was being written leaves a short .tmp
    # beside the good file: the good file is what the board reads, and the
    # next write replaces the leftover
    d = _tmpdir("store4")
    p = d + "/config.json"
    store.write_atomic(p, b'{"auto_next_ms": 500}')
    with open(p + ".tmp", "wb") as f:
        f.write(b'{"auto_ne')
    assert store.read(p) == b'{"auto_next_ms": 500}'
    assert store.read(p) == b'{"auto_next_ms": 500}'  # and again: the leftover did not win later
    store.write_atomic(p, b'{"auto_next_ms": 0}')
    assert store.read(p) == b'{"auto_next_ms": 0}'
    assert sorted(os.listdir(d)) == ["config.json"]


def test_appended_bytes_follow_the_file_and_a_first_append_makes_it():
    # the game journal: a set-up, then records added at its end
    d = _tmpdir("store7")
    p = d + "/game.jnl"
    store.append(p, b"head\n")
    store.append(p, b"\x01\x00\x07")
    assert store.read(p) == b"head\n\x01\x00\x07"
    store.write_atomic(p, b"new\n")  # a new game starts the file again
    store.append(p, b"\x02\x00\x0e")
    assert store.read(p) == b"new\n\x02\x00\x0e"
    store.remove(p)
    assert store.read(p) is None and os.listdir(d) == []


def test_a_cut_inside_a_paced_write_leaves_the_old_content():
    # the virtual board spends its modelled flash time inside the write and
    # before the rename (store.write_atomic's `pause`); a cut there is modelled
    # by the pause raising
    d = _tmpdir("store5")
    p = d + "/map.json"
    store.write_atomic(p, b"old")
    for cut_at in (1, 2):
        calls = []

        def pause():
            calls.append(1)
            if len(calls) == cut_at:
                raise KeyboardInterrupt  # stands in for the power going

        try:
            store.write_atomic(p, b"the new map, long enough to be cut", pause)
        except KeyboardInterrupt:
            pass
        assert store.read(p) == b"old", cut_at
    # with no cut, a paced write stores exactly the new content, and the
    # flash time is spent at both moments a cut is modelled at
    for data in (b"the new map, long enough to be cut", b"x", b""):
        calls = []
        store.write_atomic(p, data, lambda: calls.append(store.read(p + ".tmp")))
        assert store.read(p) == data and sorted(os.listdir(d)) == ["map.json"]
        assert calls == [data[:len(data) // 2], data], data  # halfway through, then whole before the rename


def test_json_the_board_parser_would_take_but_is_not_json_is_refused():
    # MicroPython's json.loads accepts every one of these (commas and colons
    # optional, any closing bracket): noise must not pass as a command
    lenient = [b'{"cmd" "info"}', b'{"cmd":"info"]', b'{"cmd":"info",}', b'{"cmd":"info" "id":1}',
               b'{]', b'{:1}', b'{,}', b'{"cmd":"throw","seg":"T5",,"id":1}', b'{"cmd":"info","id":01}',
               b'{"cmd":"info","id":1.}', b'{"cmd":"info","id":"\\x"}', b'{"cmd":"info","id":[1 2]}',
               b'{"cmd":"info","id":"a\tb"}', b'{"cmd":"info"}}', b'{"cmd":"info"} x', b'{1:"info"}']
    for line in lenient:
        assert not request.valid_json(line), line
        assert decode_error(line).code == "bad_json", line
    strict = [b'{"cmd":"info"}', b' { "cmd" : "info" , "id" : [ ] } ', b'{"cmd":"info","id":{"a":[-0.5e+3,true,null]}}',
              b'{"cmd":"info","id":"\\u00e9\\n\\"\\\\"}', '{"cmd":"info","id":"Zo\u00eb"}'.encode(),
              b'{"cmd":"throw","seg":' + b"[" * 200 + b"]" * 200 + b"}"]
    for line in strict:
        assert request.valid_json(line), line


def test_a_value_broken_after_its_first_byte_is_no_json_even_with_only_white_space_after():
    # a string with no closing quote or with a raw tab, a minus with no
    # digit, a word cut short: the validator must refuse the whole line,
    # never go on as if the value ended at its first byte and the rest were
    # white space
    for line in (b'"', b'"  ', b'"\t', b'"\t ', b'-', b'- ', b'-\t', b't', b't ', b'n', b'f\t', b'tru',
                 b't   ', b'n\t\t\t', b'f     '):
        assert not request.valid_json(line), line
        assert not request.valid_json(line, lambda: None), line
        assert decode_error(line).code == "bad_json", line


def test_a_whole_number_field_is_taken_at_its_edges_and_refused_with_the_callers_code_and_id():
    # `press`: row and col inside the matrix, ms from 1 to 10000 (bad_cell)
    for v in (0, 7, 15):
        assert request.want_int({"row": v}, "row", 0, 15, "bad_cell") == v
    for v in (-1, 16, 2.0, True, False, "3", None, [1]):
        try:
            request.want_int({"cmd": "press", "id": [9], "row": v}, "row", 0, 15, "bad_cell")
        except protocol.ProtoError as e:
            assert e.code == "bad_cell" and e.id == [9], v
            continue
        raise AssertionError(v)
    try:  # a field left out is refused the same way
        request.want_int({"cmd": "press"}, "ms", 1, 10000, "bad_cell")
    except protocol.ProtoError as e:
        assert e.code == "bad_cell" and e.id is None
    else:
        raise AssertionError("no ms accepted")



def test_a_state_is_cut_side_by_side_in_replies_and_in_events():
    # the matrix is read between the sides of a state: no piece of the line
    # built between two reads holds more than one side (two sides and a
    # `new` event, whose object has only two members, too)
    from shove import rules

    g = rules.new_game(["Ann", "Bob"], rules={"beds": list(range(1, 21)) + [25], "marks": 9})
    st = g.to_state()
    side = max(len(protocol._enc(s)) for s in st["sides"])
    real = protocol._enc
    for build in (lambda tick: protocol.ok(3, {"state": st}, tick),
                  lambda tick: protocol.event("new", {"state": st}, tick)):
        pieces = [0]

        def enc(obj):
            text = real(obj)
            pieces[-1] += len(text)
            return text
        protocol._enc = enc
        try:
            line = build(lambda: pieces.append(0))
        finally:
            protocol._enc = real
        assert text(line) == build(None)
        assert max(pieces) <= side + 20, (max(pieces), side)


def test_the_strict_json_check_at_the_edges_of_every_token():
    # (line, is exactly one JSON value in strict UTF-8): RFC 8259 at the edges
    # the board's own check must get right (MicroPython's parser takes all of
    # the bad ones, so nothing behind this check would refuse them)
    table = (
        (b'"abc"', True), (b'""', True), (b'"', False), (b'"abc', False), (b'"\\', False), (b'["\\', False),
        (b'"\\"', False), (b'"\\""', True), (b'"\\\\"', True), (b'"\\/\\b\\f\\n\\r\\t"', True), (b'"\\x"', False),
        (b'"\\u"', False), (b'"\\u1"', False), (b'"\\u12"', False), (b'"\\u123"', False), (b'"\\u1234"', True),
        (b'"\\u12345"', True), (b'"\\u1234', False), (b'"\\u123', False), (b'"\\uABCD"', True), (b'"\\uabcd"', True),
        (b'"\\uabcG"', False), (b'"\\ug000"', False), (b'"\\u00e9"', True), (b'"\\U0041"', False),
        (b'"a\x1fb"', False), (b'"a\x7fb"', True), (b'"\x80"', False), (b'"\xc3\xa9"', True), (b'"\xc3"', False),
        (b'"\xdf\xbf"', True), (b'"\xe0\xa0\x80"', True), (b'"\xe0\x9f\xbf"', False), (b'"\xe1\x80\x80"', True),
        (b'"\xed\x9f\xbf"', True), (b'"\xed\xa0\x80"', False), (b'"\xef\xbf\xbf"', True), (b'"\xf0\x90\x80\x80"', True),
        (b'"\xf0\x8f\xbf\xbf"', False), (b'"\xf4\x8f\xbf\xbf"', True), (b'"\xf4\x90\x80\x80"', False),
        (b'"\xf5\x80\x80\x80"', False), (b'"\xe1\x80"', False), (b'"\xe1\x80\xc0"', False), (b'"\xe1\xc0\x80"', False),
        (b'"\xc2\x7f"', False), (b'"\xc1\xbf"', False), (b'"\xe0\xbf\xc0"', False), (b'"\xf1\x80\x80\x7f"', False),
        (b'"\xf1\x80\x80\x80"', True), (b'"\xe1\x80\x80', False), (b'"\xf1\x80\x80', False),
        (b"0", True), (b"-0", True), (b"-", False), (b"01", False), (b"1.5", True), (b"1.", False), (b"1.e5", False),
        (b"1e5", True), (b"1E5", True), (b"1e+5", True), (b"1e-5", True), (b"1e", False), (b"1e+", False),
        (b"1.5e", False), (b"9", True), (b"[9]", True), (b"[-9.25e-3]", True), (b"[1e]", False), (b"[1.]", False),
        (b"[-]", False), (b"{\"a\":-}", False), (b"12 ", True), (b" 12", True), (b"1 2", False),
        (b"true", True), (b"tru", False), (b"truex", False), (b"[true]", True), (b"[tru]", False), (b"t", False),
        (b"false", True), (b"fals", False), (b"null", True), (b"nul", False), (b"[null,false]", True),
        (b"{}", True), (b"[]", True), (b"{", False), (b"[", False), (b"]", False), (b"{]", False), (b"[}", False),
        (b'{"a":1}', True), (b'{"a" 1}', False), (b'{"a":}', False), (b'{"a"}', False), (b'{"a":1,}', False),
        (b'{"a":1,"b":[2,{"c":null}]}', True), (b"[1,]", False), (b"[,1]", False), (b"[1 2]", False),
        (b'{1:2}', False), (b'{"a":1 "b":2}', False), (b" \t\r\n[ 1 , 2 ]\n", True), (b"", False), (b"   ", False),
        (b"[1]]", False), (b"[[1]", False), (b"x", False), (b'{"a":1}x', False),
        # letters that are no white space, escape, hex digit, exponent or sign; bytes at the UTF-8 bounds
        (b"X1", False), (b"[1 X]", False), (b'"\\uX000"', False), (b'"\\X"', False), (b"1X5", False),
        (b"1eX5", False), (b"[1:]", False), (b'"\xc2\x80"', True), (b'"\xc3\xc0"', False),
        (b'"\xf1\xc0\x80\x80"', False),
        # an object's key must be a whole string, then a colon
        (b'{"\\\\":1}', True), (b'{"\\x":1}', False), (b'{"a', False), (b'{"a"-1}', False), (b'{"a"', False),
        (b'{"a" ', False),
    )
    for line, want in table:
        assert request.valid_json(line) is want, line
        assert request.valid_json(line, lambda: None) is want, line
    # deep nesting up to the stack's size is fine, one more is refused
    deepest = protocol.MAX_LINE // 2 + 1
    assert request.valid_json(b"[" * deepest + b"]" * deepest)
    assert not request.valid_json(b"[" * (deepest + 1) + b"]" * (deepest + 1))
    # the reads between tokens: one every TICK_TOKENS tokens, on long lines only
    for tokens in (1, request.TICK_TOKENS - 1, request.TICK_TOKENS, 5 * request.TICK_TOKENS + 3):
        line = b"[" + b",".join(b"1" for _ in range(tokens)) + b"]"
        ticks = []
        assert request.valid_json(line, lambda: ticks.append(1))
        # about 2 tokens a value (it and its comma): a read every TICK_TOKENS of them, not more often
        lo, hi = (2 * tokens) // request.TICK_TOKENS, (2 * tokens + 2) // request.TICK_TOKENS
        assert lo <= len(ticks) <= hi, (tokens, len(ticks))

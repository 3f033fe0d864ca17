# The append-only game journal and the compact `dart` event. Runs in both
# interpreters: the board restores and reports with exactly this code.
import json

from shove import events, journal, protocol, rules, segments


def _played():
    g = rules.new_game(None, [["Ann", "Al"], ["Bob"]], "progressive", {"bull_off": True, "darts": 4})
    for s in ("SB", "MISS", "T1", "D2", "S20"):
        g.throw(segments.encode(s))
    g.next()
    g.throw(segments.encode("T9"))
    g.undo()
    g.throw(segments.encode("S9"))
    return g


class Log:
    """The journal as the board keeps it: a header, then one record a action."""

    def __init__(self, game):
        self.data = bytearray(journal.header(game))
        self.n = 0

    def add(self, action):
        self.data.extend(journal.record(action, self.n))
        self.n += 1


def _played_with_log():
    g = rules.new_game(None, [["Ann", "Al"], ["Bob"]], "progressive", {"bull_off": True, "darts": 4})
    log = Log(g)
    for s in ("SB", "MISS", "T1", "D2", "S20", "next", "T9", "undo", "S9", "T8", "undo", "undo", "D3"):
        if s == "next":
            g.next()
            log.add(rules.NEXT_ACTION)
        elif s == "undo":
            g.undo()
            log.add(journal.UNDO)
        else:
            code = segments.encode(s)
            g.throw(code)
            log.add(code)
    return g, log


def test_records_are_three_bytes_and_a_header_is_written_once():
    g, log = _played_with_log()
    assert len(journal.record(5, 300)) == 3
    assert len(log.data) == len(journal.header(g)) + 3 * 13


def test_journal_round_trip_restores_the_exact_game():
    g = _played()
    h, n, clean = journal.decode(journal.encode(g))
    assert clean and n == g.moves()
    assert h.to_state() == g.to_state()
    assert h.actions.bytes() == g.actions.bytes()
    # and undo still walks back through the restored game
    while h.moves():
        h.undo()
        g.undo()
        assert h.to_state() == g.to_state()


def test_appended_log_with_undo_records_replays_exactly():
    g, log = _played_with_log()
    h, n, clean = journal.decode(bytes(log.data))
    assert clean and n == 13
    assert h.to_state() == g.to_state()
    assert h.actions.bytes() == g.actions.bytes()


def test_every_prefix_restores_the_actions_wholly_on_file():
    # a cut during an append leaves a partial last record: it is dropped, and
    # every whole record before it is kept
    g0 = rules.new_game(["Ann", "Bob"], None, "classic", None)
    log = Log(g0)
    head = len(log.data)
    states = [g0.to_state()]
    g = rules.new_game(["Ann", "Bob"], None, "classic", None)
    for s in ("T1", "T1", "S2", "next", "D3", "undo", "T4", "MISS", "next"):
        if s == "next":
            g.next()
            log.add(rules.NEXT_ACTION)
        elif s == "undo":
            g.undo()
            log.add(journal.UNDO)
        else:
            g.throw(segments.encode(s))
            log.add(segments.encode(s))
        states.append(g.to_state())
    data = bytes(log.data)
    for cut in range(head, len(data) + 1):
        h, n, clean = journal.decode(data[:cut])
        whole = (cut - head) // journal.REC
        assert n == whole
        assert clean == ((cut - head) % journal.REC == 0)
        assert h.to_state() == states[whole], cut


def test_journal_refuses_any_damage():
    g, log = _played_with_log()
    data = bytes(log.data)
    head = len(journal.header(g))
    bad = [data[:10], b"", b"HPJ2 00000000\n{}\n", data.replace(b"HPJ2", b"HPJ1")]
    for i in (6, 20, head - 2, head, head + 1, head + 2, head + 7, len(data) - 1):  # a flipped bit anywhere
        bad.append(data[:i] + bytes([data[i] ^ 1]) + data[i + 1:])
    bad.append(data[:head] + data[head + 3:])  # a record missing in the middle
    for d in bad:
        try:
            journal.decode(d)
        except journal.JournalError:
            continue
        raise AssertionError(d)


def test_crc8_catches_every_single_bit_flip_of_a_record():
    for action in (0, 1, 102, journal.UNDO, rules.NEXT_ACTION):
        for seq in (0, 1, 255):
            r = journal.record(action, seq)
            for byte in range(3):
                for bit in range(8):
                    t = bytearray(r)
                    t[byte] ^= 1 << bit
                    assert t[2] != journal.crc8(t[0], t[1]) or t[1] != seq


def _line(game, code, side, result, cell=(15, 15)):
    return protocol.event("dart", events.dart(game, code, "matrix", side, result, cell))


def test_dart_event_carries_what_changed():
    g = rules.new_game(["Ann", "Bob"], None, "classic", None)
    g.throw(segments.encode("D5"))
    g.next()
    g.throw(segments.encode("S5"))
    g.next()
    res = g.throw(segments.encode("T5"))  # Ann needs 1 on 5: 2 gifted, Bob's 5 closes
    ev = json.loads(protocol.event("dart", events.dart(g, segments.encode("T5"), "host", 0, res)))
    assert ev == {"ev": "dart", "seg": "T5", "src": "host", "side": 0, "marks": 3, "own": 1, "gifts": [[1, 2]],
                  "lost": 0, "bed": 5, "tally": [3, 3], "turn": 0, "darts_left": 2, "phase": "play",
                  "winner": None, "moves": 5}
    res = g.throw(segments.encode("S20"))
    ev = json.loads(protocol.event("dart", events.dart(g, segments.encode("S20"), "matrix", 0, res, (3, 4))))
    assert ev["bed"] is None and ev["tally"] == [] and ev["row"] == 3 and ev["col"] == 4
    assert ev["darts_left"] == 1


def test_bull_off_dart_carries_the_contenders():
    g = rules.new_game(None, [["Ann", "Al"], ["Bob"]], "classic", {"bull_off": True})
    res = g.throw(segments.encode("SB"))
    ev = events.dart(g, segments.encode("SB"), "host", 0, res, None)
    assert ev["phase"] == "bull_off" and ev["contenders"] == [0, 1] and ev["turn"] == 1
    assert ev["tally"] == [] and ev["bed"] is None
    # a side out of the bull-off is no longer a contender in the events that follow
    g = rules.new_game(["Ann", "Bob", "Cid"], None, "classic", {"bull_off": True})
    for s in ("SB", "MISS"):
        g.throw(segments.encode(s))
    res = g.throw(segments.encode("SB"))
    ev = events.dart(g, segments.encode("SB"), "host", 2, res, None)
    assert ev["contenders"] == [0, 2] and ev["turn"] == 0
    res = g.throw(segments.encode("MISS"))
    ev = events.dart(g, segments.encode("MISS"), "host", 0, res, None)
    assert ev["contenders"] == [0, 2] and ev["turn"] == 2


def _long(i):
    return chr(0x10000 + i) * 16  # 16 four-byte characters: the longest name (not in the event)


def test_dart_event_fits_256_bytes_in_the_worst_cases():
    worst = 0
    # 8 sides, gift to all, every opponent completed by the gift (pending), a matrix crossing
    g = rules.new_game([_long(i) for i in range(8)], None, "classic",
                       {"gift": "all", "marks": 9, "beds": [20, 19], "darts": 9})
    b20 = g.rules.beds.index(20)
    g.marks[b20] = 9  # the thrower has closed 20; every opponent needs only its last 3 on 20
    for s in range(1, 8):
        g.marks[s * g.nb + b20] = 6
        g.marks[s * g.nb + 1 - b20] = 9
    code = segments.encode("T20")
    res = g.throw(code)
    line = _line(g, code, 0, res)
    ev = json.loads(line)
    assert g.to_state()["pending"] == [1, 2, 3, 4, 5, 6, 7]
    assert ev["tally"] == [9] * 8 and len(ev["gifts"]) == 7
    worst = len(line)
    # 8-side bull-off: every side still in, the next thrower's long name
    g = rules.new_game([_long(i) for i in range(8)], None, "classic", {"bull_off": True})
    for s in range(7):
        code = segments.encode("DB")
        res = g.throw(code)
        worst = max(worst, len(_line(g, code, s, res)))
    assert worst <= events.MAX_DART_EVENT, worst


def test_a_game_against_the_board_comes_back_with_its_computer_sides_and_seed():
    # after a power cut the board must go on playing the same computer sides
    # at the same levels, drawing its darts from the same seed
    g = rules.new_game(["Ann", "cpu:4", "cpu:2"], None, "classic", None, None, 0x2345678)
    for s in ("T1", "S2"):
        g.throw(segments.encode(s))
    g.next()
    h, n, clean = journal.decode(journal.encode(g))
    assert clean and n == 3
    assert list(h.cpu) == [0, 4, 2] and h.seed == 0x2345678
    assert h.to_state() == g.to_state() and h.to_state()["cpu"] == [0, 4, 2]
    # a people-only game has no computer sides to restore
    p = journal.decode(journal.encode(rules.new_game(["Ann", "Bob"], None, "classic", None, None, 7)))[0]
    assert list(p.cpu) == [0, 0] and "cpu" not in p.to_state()


def test_damage_to_a_record_within_eight_neighbouring_bits_is_always_refused():
    # what a CRC-8 with a polynomial of eight degrees promises: every burst
    # of errors no longer than 8 bits is seen (a scratch on flash, a torn
    # program); a damaged record must never replay as another action
    g = rules.new_game(["Ann", "Bob"], None, "classic", None)
    log = Log(g)
    log.add(segments.encode("T20"))
    data = bytes(log.data)
    head = len(data) - journal.REC
    rec = int.from_bytes(data[head:], "big")
    missed = []
    for length in range(1, 9):
        ends = 1 | (1 << (length - 1))
        for middle in range(1 << max(0, length - 2)):
            burst = ends | (middle << 1) if length > 2 else ends
            for shift in range(25 - length):
                bad = (rec ^ (burst << shift)).to_bytes(3, "big")
                try:
                    journal.decode(data[:head] + bad)
                except journal.JournalError:
                    continue
                missed.append((length, burst << shift))
    assert missed == [], missed[:5]


def test_a_records_check_is_the_crc8_the_format_names():
    # polynomial 0x07, initial value 0 (CRC-8/SMBUS): the journal on flash is
    # read by the next release of the firmware, so the check may not change
    def crc(data):
        c = 0
        for x in data:
            c ^= x
            for _ in range(8):
                c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        return c

    assert crc(b"123456789") == 0xF4  # the standard check value: this is that CRC
    for a in range(256):
        for b in (0, 1, 0x5A, 0x80, 0xFF):
            assert journal.crc8(a, b) == crc(bytes((a, b)))
    assert journal.record(3, 258) == bytes((3, 2, crc(b"\x03\x02")))

# The pairing code on the strip (leds.Renderer.show_code): its digits 1..9
# as beds lit one at a time, after the status pixels that mark where it
# begins, a dark gap before each digit. Table-driven on the board's clock,
# and the code's form (shove/wifiset.py). Runs in both interpreters: plain asserts only.
import gc

from shove import leds, rules, wifiset

BEDS, PS, STATUS = 9, 3, 3


def shown(r, now, game=None):
    """What the frame shows: "S" (the status pixels: the start), a bed's
    number, "." (dark), or the lit pixels' indexes for anything else."""
    f = r.render(game, now)
    lit = [i for i in range(r.count) if f[3 * i] or f[3 * i + 1] or f[3 * i + 2]]
    if not lit:
        return "."
    base = BEDS * 2 * PS
    if lit == list(range(base, base + STATUS)):
        return "S"
    for b in range(BEDS):
        if lit == list(range(b * 2 * PS, (b + 1) * 2 * PS)):
            assert f[3 * lit[0]] == f[3 * lit[0] + 1] == f[3 * lit[0] + 2] > 0  # white, at full strength
            return b + 1
    return lit


def renderer():
    return leds.Renderer(beds=BEDS, per_side=PS, status=STATUS, brightness=255)


def test_each_digit_lights_its_bed_after_a_gap_and_the_start_is_marked():
    r = renderer()
    t0 = 5000
    assert r.show_code("5519", t0)
    table = (  # ms after the hold began, what the strip shows
        (0, "S"), (1199, "S"), (1200, "."), (1599, "."), (1600, 5), (2599, 5), (2600, "."), (2999, "."),
        (3000, 5), (3999, 5), (4000, "."), (4400, 1), (5399, 1), (5400, "."), (5800, 9), (6799, 9),
        (6800, "S"), (6800 + 1600, 5),  # and again, from the start
    )
    for ms, want in table:
        assert shown(r, t0 + ms) == want, (ms, want)
        assert r.animating(None, t0 + ms)


def test_a_round_reads_the_code_whatever_its_digits():
    for code in ("1234567899", "9999999999", "7", wifiset.new_code()):
        r = renderer()
        assert r.show_code(code, 0)
        seq = []
        for ms in range(0, leds.CODE_START_MS + len(code) * (leds.CODE_GAP_MS + leds.CODE_ON_MS), 50):
            s = shown(r, ms)
            if not seq or seq[-1] != s:
                seq.append(s)
        want = ["S"]
        for ch in code:
            want += [".", int(ch)]
        assert seq == want, (code, seq)


def test_let_go_the_strip_shows_what_it_showed_before():
    g = rules.new_game(["A", "B"])
    for game in (None, g):
        r = renderer()
        r.net = 2  # joined
        before = bytes(r.render(game, 100))
        assert r.show_code("123", 100)
        assert shown(r, 150, game) == "S"  # over a game too (the firmware asks only when none is in play)
        r.hide_code()
        assert bytes(r.render(game, 200)) == before
        assert not r.animating(game, 200)


def test_across_the_clocks_wrap():
    r = renderer()
    near = (1 << 30) - 700  # the board's ticks wrap at 2^30
    assert r.show_code("42", near)
    assert shown(r, near + 600) == "S"
    assert shown(r, 700) == "."  # 1400 ms after, past the wrap: the gap before the first digit
    assert shown(r, 900) == 4


def test_a_code_shown_at_the_clocks_zero_is_spelled_and_animates():
    # (the board's ticks pass 0 at each wrap: a hold that begins there is a hold like any other)
    r = renderer()
    assert r.code_at == -1 and not r.animating(None, 0)
    assert r.show_code("7", 0)
    assert r.animating(None, 0) and r.animating(None, 1) and shown(r, 0) == "S" and shown(r, 1600) == 7


def test_a_code_the_strip_cannot_spell_shows_nothing():
    for code, beds in (("", 9), ("12a4", 9), ("1204", 9), ("12 4", 9), ("95", 4), ("9", 8)):
        r = leds.Renderer(beds=beds, per_side=PS, status=STATUS, brightness=255)
        assert not r.show_code(code, 0), code
        assert r.code_at == -1 and not r.animating(None, 10)


def test_a_frame_of_the_code_allocates_nothing():
    mem_alloc = getattr(gc, "mem_alloc", None)
    if mem_alloc is None:  # CPython: the MicroPython run of this test measures
        return
    r = renderer()
    r.show_code("1234567899", 0)
    r.render(None, 0)
    gc.collect()
    before = mem_alloc()
    for ms in range(0, 16000, 97):
        r.render(None, ms)
    assert mem_alloc() == before


def test_the_codes_are_digits_1_to_9_and_hard_to_guess():
    codes = [wifiset.new_code() for _ in range(200)]
    assert len(set(codes)) == 200
    for c in codes:
        assert wifiset.is_code(c) and len(c) == wifiset.CODE_LEN
        for ch in c:
            assert "1" <= ch <= "9"
    seen = set("".join(codes))
    assert seen == set(wifiset.CODE_ALPHABET)  # every digit drawn: none left out
    # over the network, at 10 wrong guesses a second (the server allows fewer), half the codes take years
    assert 9 ** wifiset.CODE_LEN / 2 / 10 / (365 * 24 * 3600) > 5
    for bad in ("123456789", "12345678901", "abcdefghjk", "0123456789", None, 1234567891):
        assert not wifiset.is_code(bad), bad

# The board's clocks wrap at 2**30: buttons and the LED flash must behave the
# same on either side of the wrap and across it. Runs in both interpreters.
from shove import buttons, leds, rules, segments

WRAP = 1 << 30
# start times: far from the wrap, just before it (the events straddle it), at it
STARTS = (1000, WRAP - 5, WRAP - 31, WRAP - 999, WRAP - 1001, 0)


def _w(t):
    return t % WRAP


def _press(start, held_ms, step=5):
    """Hold button 0 from `start` for `held_ms`, then release; the events seen."""
    b = buttons.Buttons(("new",), debounce_ms=30, long_ms=1000)
    out = []
    t = 0
    while t <= held_ms:
        b.update(0, True, _w(start + t), out)
        t += step
    end = t + 200
    while t <= end:
        b.update(0, False, _w(start + t), out)
        t += step
    return [kind for _, kind in out]


def test_short_press_across_the_wrap():
    for start in STARTS:
        assert _press(start, 200) == [buttons.PRESS, buttons.SHORT], start


def test_long_press_across_the_wrap():
    for start in STARTS:
        assert _press(start, 1500) == [buttons.PRESS, buttons.LONG], start


def test_bounce_shorter_than_debounce_is_ignored_across_the_wrap():
    for start in STARTS:
        assert _press(start, 15) == [], start


def test_debounce_and_long_thresholds_table():
    # (held ms, events): the edges of the 30 ms debounce and the 1 s long press
    table = ((20, []), (40, [buttons.PRESS, buttons.SHORT]), (900, [buttons.PRESS, buttons.SHORT]),
             (1100, [buttons.PRESS, buttons.LONG]))
    for start in STARTS:
        for held, want in table:
            assert _press(start, held) == want, (start, held)


def _flash_at(start, after):
    g = rules.new_game(["A", "B"])
    g.throw(segments.encode("T5"))
    r = leds.Renderer(brightness=255)
    r.gift([(1, 3)], 4, _w(start))
    return r.animating(g, _w(start + after))


def test_gift_flash_lasts_its_time_across_the_wrap():
    # (ms after the gift, still flashing)
    table = ((0, True), (300, True), (leds.FLASH_MS - 1, True), (leds.FLASH_MS, False), (5000, False))
    for start in STARTS:
        for after, want in table:
            assert _flash_at(start, after) is want, (start, after)


def test_flash_ends_even_when_the_clock_comes_round_again():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer()
    r.gift([(1, 3)], 4, WRAP - 10)
    assert r.animating(g, 100) is True
    assert r.animating(g, _w(WRAP - 10 + leds.FLASH_MS)) is False
    # a whole wrap later the same tick comes back: the flash must not
    assert r.animating(g, WRAP - 5) is False


def test_tick_differences_are_signed_and_stay_right_across_the_wrap():
    # the ESP32's ticks_diff: the difference of two 30-bit ticks, read as a
    # signed number from -2**29 to 2**29 - 1 (ticks more than half the period
    # apart are taken as the other way round)
    from shove import ticks_add, ticks_diff

    half = WRAP // 2
    table = (
        (5, 3, 2), (3, 5, -2), (0, WRAP - 1, 1), (WRAP - 1, 0, -1), (7, WRAP - 3, 10), (WRAP - 3, 7, -10),
        (half - 1, 0, half - 1), (0, half - 1, -(half - 1)), (half, 0, -half), (0, half, -half),
        (half + 1, 0, -(half - 1)), (WRAP - 1, half, half - 1), (123, 123, 0),
    )
    for a, b, want in table:
        assert ticks_diff(a, b) == want, (a, b)
    for a in (0, 1000, WRAP - 1, half):
        for d in (0, 1, 60000, half - 1, -1, -60000, -half):
            assert ticks_add(a, d) == (a + d) % WRAP and ticks_diff(ticks_add(a, d), a) == d, (a, d)

# The status pixels and the network's state (leds.Renderer.net, set by
# shove/wifi.py): with no game they show it, with a game they count darts
# as ever, and a board without a network leaves them dark. Runs in both
# interpreters: plain asserts only.
from shove import leds, rules


def pixels(r, g):
    f = r.render(g, 0)
    return [tuple(f[i:i + 3]) for i in range(0, len(f), 3)]


def test_no_game_shows_the_network_on_the_status_pixels_only():
    r = leds.Renderer(beds=2, per_side=1, status=2, brightness=255)
    assert pixels(r, None) == [(0, 0, 0)] * 6  # no network: dark, as before
    seen = []
    for state in (1, 2, 3):  # joining, joined, failed
        r.net = state
        p = pixels(r, None)
        assert p[:4] == [(0, 0, 0)] * 4  # the beds stay dark
        assert p[4] == p[5] != (0, 0, 0)
        seen.append(p[4])
    blue, green, red = seen
    assert blue[2] > blue[0] and green[1] > green[0] and green[1] > green[2] and red[0] > 0 == red[1] == red[2]


def test_a_game_keeps_the_status_pixels_for_the_darts_left():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer(beds=2, per_side=1, status=2, brightness=255)
    before = pixels(r, g)
    r.net = 3
    assert pixels(r, g) == before


def test_the_network_is_shown_at_the_level_of_a_lit_square_not_at_full_strength():
    # (the status pixels take the level of a lit square, leds._LIT, as the renderer draws them)
    r = leds.Renderer(beds=2, per_side=1, status=2, brightness=255)
    for state in (1, 2, 3, 4):
        r.net = state
        b = 255 * 110 // 255  # the lit level (leds._LIT) at full brightness
        assert pixels(r, None)[4] == tuple(c * b // 255 for c in leds.NET_COLOURS[state - 1])

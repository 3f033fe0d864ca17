# LED renderer and buttons. Runs in both interpreters.
from shove import buttons, leds, rules, segments
from scenario import won_by_second


def px(r, i):
    f = r.frame
    return (f[3 * i], f[3 * i + 1], f[3 * i + 2])


def lit(r, i):
    return sum(px(r, i)) > 3 * 255 * r.brightness // 255 // 10  # brighter than the dim glow


def square(r, bed_i, slot):
    base = (bed_i * 2 + slot) * r.per_side
    return [lit(r, base + k) for k in range(r.per_side)]


def test_marks_show_as_lit_pixels_in_each_sides_square():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer(brightness=255)
    assert r.count == 9 * 2 * 3 + 3
    g.throw(segments.encode("D4"))
    g.throw(segments.encode("S9"))
    r.render(g, 0)
    assert square(r, 3, 0) == [True, True, False]
    assert square(r, 8, 0) == [True, False, False]
    assert square(r, 3, 1) == [False] * 3
    # status: darts left in the thrower's colour
    base = 9 * 2 * 3
    assert [px(r, base + k) for k in range(3)] == [leds.COLOURS[0], (0, 0, 0), (0, 0, 0)]
    g.throw(segments.encode("S1"))
    g.next()  # B to throw, three darts: the status pixels in B's colour
    r.render(g, 0)
    assert [px(r, base + k) for k in range(3)] == [leds.COLOURS[1]] * 3


def test_right_square_is_side_one_and_colours_differ():
    g = rules.new_game(["A", "B"])
    g.next()
    g.throw(segments.encode("T1"))
    r = leds.Renderer(brightness=255)
    r.render(g, 0)
    assert square(r, 0, 1) == [True] * 3 and square(r, 0, 0) == [False] * 3
    assert px(r, 3) == leds.COLOURS[1]  # a closed bed at full strength


def test_more_than_two_sides_show_thrower_and_leading_opponent():
    g = rules.new_game(["A", "B", "C"])
    g.next()  # B throws
    g.throw(segments.encode("S2"))
    g.next()  # C throws
    g.throw(segments.encode("D2"))
    g.next()  # A to throw
    r = leds.Renderer(brightness=255)
    r.render(g, 0)
    assert square(r, 1, 0) == [False] * 3  # A, the thrower, has none
    g.next()  # B to throw: the left square is B's (2 marks on bed 2, none of them by B)
    r.render(g, 0)
    assert square(r, 1, 0) == [True, False, False] and px(r, 6) == tuple(c * 110 // 255 for c in leds.COLOURS[1])
    g.undo()
    r.render(g, 0)
    assert square(r, 1, 1) == [True, True, False]  # C leads on bed 2 with 2
    assert px(r, 1 * 6 + 3) == tuple(c * 110 // 255 for c in leds.COLOURS[2])


def test_scaled_marks_and_one_side():
    g = rules.new_game(["Solo"], rules={"marks": 9})
    g.throw(segments.encode("T5"))
    r = leds.Renderer(brightness=255)
    r.render(g, 0)
    assert square(r, 4, 0) == [True, False, False]  # 3 of 9 marks: a third
    assert square(r, 4, 1) == [False] * 3 and px(r, 4 * 6 + 3) == (0, 0, 0)


def test_hold_gift_flash_and_win():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer(brightness=255)
    for s in ("T5", "S5", "MISS"):
        g.throw(segments.encode(s))
    r.gift([(1, 1)], 4, 1000)
    r.render(g, 1000)
    assert px(r, 4 * 6 + 3) == (255, 255, 255)  # B's square flashes
    assert px(r, 54) == (40, 40, 40)  # hold: pull the darts
    assert r.animating(g, 1200) and not r.animating(g, 1000 + leds.FLASH_MS)
    r.render(g, 1000 + leds.FLASH_MS)
    assert px(r, 4 * 6 + 3) != (255, 255, 255)
    g.next()
    for bed in range(1, 10):
        g.marks[9 + bed - 1] = 3
    g.marks[9 + 8] = 2
    g.throw(segments.encode("S9"))
    assert g.phase == rules.OVER
    r.render(g, 0)
    first = bytes(r.frame)
    r.render(g, 400)
    assert bytes(r.frame) != first and r.animating(g, 0)


def test_brightness_scales_every_pixel():
    g = rules.new_game(["A", "B"])
    g.throw(segments.encode("T1"))
    r = leds.Renderer(brightness=64)
    r.render(g, 0)
    assert px(r, 0) == tuple(c * 64 // 255 for c in leds.COLOURS[0])
    assert max(r.frame) <= 64


def test_a_new_brightness_reaches_the_next_frame():
    # the shades are made once per brightness: a change must remake them
    g = rules.new_game(["A", "B"])
    g.throw(segments.encode("T1"))
    r = leds.Renderer(brightness=64)
    r.render(g, 0)
    made = []  # shades written into the table (the chip: a millisecond or so of bytecode each time)
    real = r._shade

    def spy(t, o, rgb, scale):
        if t is r._tab:
            made.append(o)
        return real(t, o, rgb, scale)
    r._shade = spy
    for now in (0, 40, 1000):
        r.render(g, now)
    assert made == []  # ... and not again while the brightness stays
    r.brightness = 200
    r.render(g, 0)
    assert px(r, 0) == tuple(c * 200 // 255 for c in leds.COLOURS[0])
    assert len(made) == 3 * len(leds.COLOURS) + 2


def test_a_frame_reads_the_matrix_after_each_bed_and_is_the_same_frame():
    g = rules.new_game(["A", "B", "C"], None, "classic", {"beds": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]})
    g.throw(segments.encode("T1"))
    g.throw(segments.encode("D12"))
    r = leds.Renderer(beds=9)
    plain = bytes(r.render(g, 0))
    ticks = []
    assert bytes(r.render(g, 0, lambda: ticks.append(1))) == plain
    assert len(ticks) == 9  # the strip's nine beds, a read after each
    r.render(None, 0, lambda: ticks.append(1))
    assert len(ticks) == 9 and not any(r.frame)


def run_buttons(timeline, debounce=30, long_ms=1000):
    """timeline: (t_ms, pressed) samples of button 0 -> [(t, kind)]."""
    b = buttons.Buttons(("new",), debounce, long_ms)
    out = []
    for t, p in timeline:
        ev = []
        b.update(0, p, t, ev)
        out += [(t, k) for _, k in ev]
    return out


def samples(changes, until, step=5):
    """changes: [(t, level)] -> level sampled every step ms."""
    out = []
    level = False
    i = 0
    for t in range(0, until, step):
        while i < len(changes) and changes[i][0] <= t:
            level = changes[i][1]
            i += 1
        out.append((t, level))
    return out


def test_buttons_debounce_short_and_long_presses():
    table = [
        ([(100, True), (300, False)], [(130, buttons.PRESS), (330, buttons.SHORT)]),
        # contact bounce on press and release: still one press
        ([(100, True), (104, False), (108, True), (300, False), (303, True), (306, False)],
         [(140, buttons.PRESS), (340, buttons.SHORT)]),
        ([(100, True), (1500, False)], [(130, buttons.PRESS), (1130, buttons.LONG)]),
        ([(100, True), (115, False)], []),  # a 15 ms glitch is no press
    ]
    for changes, want in table:
        assert run_buttons(samples(changes, 2000)) == want, changes


def test_a_hint_blinks_the_throwers_square_of_its_bed_for_its_time():
    W = (255, 255, 255)
    g = rules.new_game(["A", "B"])
    g.next()  # B throws: the hint is B's (the right) square
    g.throw(segments.encode("S4"))
    r = leds.Renderer(brightness=255)
    r.hint(3, 1000)  # bed 4
    sq = [4 * 6 + 3 - 6 + k for k in range(3)]  # bed index 3, right square
    r.render(g, 1000)
    assert [px(r, i) for i in sq] == [W] * 3  # on
    assert px(r, 3 * 6) != W  # A's square of that bed is not hinted
    assert r.animating(g, 1100)
    r.render(g, 1250)  # off half of the blink: the marks show
    assert [px(r, i) for i in sq] != [W] * 3 and lit(r, sq[0]) and not lit(r, sq[1])
    r.render(g, 1500)
    assert [px(r, i) for i in sq] == [W] * 3
    end = 1000 + leds.HINT_MS
    r.render(g, end - 1 - 250 * ((end - 1) // 250 % 2))  # the last "on" moment before its end
    assert px(r, sq[0]) == W
    assert not r.animating(g, end)
    r.render(g, end + 1000)  # an "on" phase of the blink, but the hint is over
    assert [px(r, i) for i in sq] != [W] * 3


def test_a_hint_for_a_bed_off_the_strip_blinks_the_status_pixels():
    g = rules.new_game(["A", "B"], None, "classic", {"beds": list(range(1, 13))})
    r = leds.Renderer(beds=9, brightness=255)
    base = 9 * 2 * 3
    for bed in (9, 11, -1):  # beds 10 and 12 are not on a nine-bed strip; -1: no bed at all
        r.hint(bed, 2000)
        r.render(g, 2000)
        assert [px(r, base + k) for k in range(3)] == [(255, 255, 255)] * 3, bed
        assert not any(px(r, i) == (255, 255, 255) for i in range(base)), bed
        r.render(g, 2250)  # off: the darts left in the thrower's colour
        assert [px(r, base + k) for k in range(3)] == [leds.COLOURS[0]] * 3, bed


def test_the_right_square_shows_the_leading_opponent_ties_to_the_next_in_turn_order():
    # four sides, A to throw: on each bed the right square is the opponent
    # with most marks there, a tie going to the one who throws sooner after A
    g = rules.new_game(["A", "B", "C", "D"])
    nb = g.nb
    g.marks[0 * nb + 0] = 3  # bed 1: A (the thrower) leads, but A is never its own opponent
    g.marks[2 * nb + 0] = 1  # ... C is the leading opponent
    g.marks[1 * nb + 1] = 2  # bed 2: B and D tie with 2: B throws sooner after A
    g.marks[3 * nb + 1] = 2
    g.marks[3 * nb + 2] = 1  # bed 3: D alone
    r = leds.Renderer(brightness=255)
    r.render(g, 0)

    def right(bed_i):  # the right square's first pixel
        return px(r, (bed_i * 2 + 1) * 3)

    def shade(side, level):  # a side's colour at a level (110: lit, 6: the faint glow)
        return tuple(c * level // 255 for c in leds.COLOURS[side])
    assert right(0) == shade(2, 110) and right(1) == shade(1, 110) and right(2) == shade(3, 110)
    assert right(4) == shade(1, 6)  # nobody has a mark on bed 5: the next to throw, in its faint glow
    g.turn = 2  # C to throw: on bed 2 the tie now goes to D, who throws before B
    r.render(g, 0)
    assert px(r, 1 * 6) == shade(2, 6)  # the left square is C's now: none on bed 2, its faint glow
    assert right(1) == shade(3, 110) and right(0) == shade(0, 255)  # A's closed 1 at full strength


def test_a_frame_is_three_bytes_for_each_pixel_of_the_strip_and_still_until_something_happens():
    g = rules.new_game(["A", "B"])
    for beds, per_side, status in ((9, 3, 3), (7, 2, 1), (15, 1, 4)):
        r = leds.Renderer(beds, per_side, status, 100)
        assert r.count == beds * 2 * per_side + status
        for t in (100, 0, 5000):  # a fresh board: nothing to animate, whatever the clock says
            assert len(r.render(g, t)) == 3 * r.count and not r.animating(g, t), t
    r = leds.Renderer(brightness=100)
    r.gift([(1, 3)], 4, 1000)
    assert r.animating(g, 1000 + leds.FLASH_MS - 1) and not r.animating(g, 1000 + leds.FLASH_MS)
    for t in (300, 0, 1000, 1200):  # over: no later time brings the flash back
        assert not r.animating(g, t), t
        assert len(r.render(g, t)) == 3 * r.count


def test_a_hint_given_at_tick_zero_blinks_and_a_finished_hint_stays_finished():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer(brightness=255)
    assert not r.animating(None, 0) and not r.animating(g, 0)
    r.hint(2, 0)  # the clock reads 0 once in every wrap
    assert r.animating(g, 100)
    r.render(g, 0)
    assert px(r, 2 * 6) == (255, 255, 255)
    assert not r.animating(g, leds.HINT_MS)
    for t in (300, 0, 2000):  # over: no later time brings it back
        assert not r.animating(g, t), t
        r.render(g, t)
        assert px(r, 2 * 6) != (255, 255, 255), t


def test_the_dimmest_brightness_still_shows_a_closed_bed():
    g = rules.new_game(["A", "B"])
    g.throw(segments.encode("T1"))
    r = leds.Renderer(brightness=1)
    r.render(g, 0)
    assert px(r, 0) == tuple(c * 1 // 255 for c in leds.COLOURS[0]) and px(r, 0) != (0, 0, 0)


def test_a_hint_for_the_first_bed_blinks_its_square_not_the_status_pixels():
    g = rules.new_game(["A", "B"])
    r = leds.Renderer(brightness=255)
    r.hint(0, 1000)  # bed 1, the first on the strip
    r.render(g, 1000)
    base = 9 * 2 * 3
    assert [px(r, k) for k in range(3)] == [(255, 255, 255)] * 3
    assert [px(r, base + k) for k in range(3)] == [leds.COLOURS[0]] * 3  # the darts left, as ever


def test_a_win_runs_a_short_bright_chase_forward_over_a_dim_strip_in_the_winners_colour():
    g = won_by_second()
    r = leds.Renderer(brightness=255)
    heads = []
    for t in (0, 200, 400):
        r.render(g, t)
        pixels = [px(r, i) for i in range(r.count)]
        for p in pixels:  # every pixel in B's colour, none dark
            assert p != (0, 0, 0) and all((p[k] == 0) == (leds.COLOURS[1][k] == 0) for k in range(3)), p
        bright = [i for i, p in enumerate(pixels) if max(p) > 60]
        assert 1 <= len(bright) <= 8, bright  # a short chase, the rest dim
        heads.append(max(range(r.count), key=lambda i: max(pixels[i])))
    assert heads[0] < heads[1] < heads[2]  # it runs forward along the strip


def test_a_gifts_flash_shows_on_the_receivers_square_after_the_turn_passes_to_them():
    # Ann's spare mark on bed 2 goes to Bob, and she passes the turn at
    # once: Bob's square still flashes white for its time, even where an
    # earlier hint (long over) pointed
    g = rules.new_game(["Ann", "Bob"])
    r = leds.Renderer(brightness=255)
    r.hint(1, 0)  # bed 2, over at HINT_MS
    r.render(g, 100)
    assert square(r, 1, 0) == [True] * 3
    now = leds.HINT_MS + 1000
    g.throw(segments.encode("T2"))
    _, _, gifts, _ = g.throw(segments.encode("S2"))
    assert gifts == [(1, 1)]
    r.gift(gifts, 1, now)
    g.next()
    assert g.turn == 1
    r.render(g, now + 100)
    assert [px(r, (1 * 2 + 1) * 3 + k) for k in range(3)] == [(255, 255, 255)] * 3


def test_marks_are_scaled_to_the_square_rounding_up():
    # a mark always shows: 1 of 2 marks lights 2 of 3 pixels, 1 of 9 one
    for marks, hits, want in ((2, 1, [True, True, False]), (9, 1, [True, False, False]),
                              (4, 3, [True, True, True]), (4, 2, [True, True, False])):
        g = rules.new_game(["A", "B"], rules={"marks": marks})
        for _ in range(hits):
            g.throw(segments.encode("S5"))
            if g.phase == rules.HOLD:
                g.next()
                g.next()
        r = leds.Renderer(brightness=255)
        r.render(g, 0)
        assert square(r, 4, 0) == want, (marks, hits, square(r, 4, 0))


def test_the_win_chase_moves_a_pixel_every_40_ms_with_a_six_pixel_tail():
    # the head at full strength, each of the 5 pixels behind it 40/255
    # dimmer, every other pixel a glow of 20/255, all in the winner's colour
    g = won_by_second()
    r = leds.Renderer(brightness=255)
    c = leds.COLOURS[1]
    for t, head in ((0, 0), (39, 0), (40, 1), (200, 5), (40 * r.count, 0)):
        r.render(g, t)
        for i in range(r.count):
            d = (head - i) % r.count
            scale = 255 - 40 * d if d < 6 else 20
            assert px(r, i) == tuple(v * scale // 255 for v in c), (t, i, px(r, i))

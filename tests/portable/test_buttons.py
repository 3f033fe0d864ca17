# The buttons' "settled" promise: the loop stops feeding all-up levels once
# settled() is true, so settled() must be true only when such a feed could
# never produce an event. Runs in both interpreters.
from shove import buttons


def _all_up_events(b, now, ms=3000, step=5):
    out = []
    t = 0
    while t <= ms:
        for i in range(len(b.names)):
            b.update(i, False, now + t, out)
        t += step
    return out


def test_settled_only_when_all_up_levels_can_change_nothing():
    # (level of button 1 at each 5 ms step before the check, settled then?,
    # what feeding all-up levels afterwards reports)
    S, L = buttons.SHORT, buttons.LONG
    table = (
        ((), True, []),  # never touched
        ((1,) * 2, False, []),  # pressed, not yet debounced (the level must still be fed)
        ((1,) * 20, False, [S]),  # held: its release must still be reported
        ((1,) * 20 + (0,) * 2, False, [S]),  # released, the release not yet debounced
        ((1,) * 20 + (0,) * 10, True, []),  # press and release both reported
        ((1,) * 250, False, []),  # long press reported; its release reports nothing more
        ((1,) * 250 + (0,) * 10, True, []),
        ((1, 0) * 5, True, []),  # bounce shorter than the debounce: nothing happened
    )
    for levels, want, after in table:
        b = buttons.Buttons(("next", "new"), debounce_ms=30, long_ms=1000)
        out = []
        t = 1000
        for lv in levels:
            b.update(1, lv == 1, t, out)
            b.update(0, False, t, out)
            t += 5
        assert b.settled() is want, levels
        assert [k for _, k in _all_up_events(b, t)] == after, levels

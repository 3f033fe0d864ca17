"""Hypothesis strategies for games: setups across every rule, and action scripts."""
import os

from hypothesis import strategies as st

from shove import rules, segments


# make test runs a third of each property test's examples, make soak all of
# them (HAPENNY_SOAK=1): the full counts cost minutes on a 2-core machine.
SOAK = bool(os.environ.get("HAPENNY_SOAK"))


def examples(n):
    return n if SOAK else max(50, n // 3)


SEGS = [segments.name(c) for c in range(segments.COUNT)]
NAMES = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij é", min_size=1, max_size=16).filter(lambda s: s.strip())


@st.composite
def setups(draw, max_sides=4):
    variant = draw(st.sampled_from(sorted(rules.VARIANTS)))
    over = {}
    if draw(st.booleans()):
        over["beds"] = draw(st.lists(st.sampled_from(rules.BED_CHOICES), min_size=1, max_size=6, unique=True))
    for key, strat in (
        ("marks", st.integers(1, 4)), ("darts", st.integers(1, 4)),
        ("gift", st.sampled_from(rules.GIFTS)), ("win_by_gift", st.booleans()),
        ("progressive", st.booleans()), ("flat", st.booleans()), ("bull_off", st.booleans()),
    ):
        if draw(st.booleans()):
            over[key] = draw(strat)
    n = draw(st.integers(1, max_sides))
    if draw(st.booleans()):
        return {"players": draw(st.lists(NAMES, min_size=n, max_size=n)), "variant": variant, "rules": over}
    teams = draw(st.lists(st.lists(NAMES, min_size=1, max_size=3), min_size=n, max_size=n))
    return {"teams": teams, "variant": variant, "rules": over}


def live_segs(beds):
    out = []
    for b in beds:
        if b == 25:
            out += ["SB", "DB"]
        else:
            out += ["S%d" % b, "D%d" % b, "T%d" % b, "SI%d" % b]
    return out


@st.composite
def scripts(draw, setup, max_len=60):
    beds = setup.get("rules", {}).get("beds") or list(rules.VARIANTS[setup["variant"]][0])
    live = live_segs(beds)
    action = st.one_of(
        st.sampled_from(live), st.sampled_from(live), st.sampled_from(SEGS),
        st.just("next"), st.just("undo"),
    )
    return draw(st.lists(action, max_size=max_len))

# The `config` command's settings: what is accepted, and what is refused whole
# with `bad_config` (docs/protocol.md's table). Runs in both interpreters.
from shove import Refused
from shove.settings import DEFAULT_CONFIG, check_config


def _refused(cfg):
    try:
        check_config(cfg)
    except Refused as e:
        return e.code
    return None


def test_the_defaults_and_every_setting_at_its_edges_are_accepted():
    assert _refused(dict(DEFAULT_CONFIG)) is None
    assert _refused({}) is None  # a `set` of nothing changes nothing and is fine
    good = (
        {"learn": True}, {"learn": False},
        {"auto_next_ms": 0}, {"auto_next_ms": 600000},
        {"brightness": -1}, {"brightness": 0}, {"brightness": 255},
        {"cpu_ms": 0}, {"cpu_ms": 60000},
        {"variant": "classic"}, {"variant": "piecepack"}, {"variant": "no-gift"},
        {"players": ["Ann"]}, {"players": ["Ann", "cpu:6"]}, {"players": ["A", "B", "C", "D", "E", "F", "G", "H"]},
    )
    for cfg in good:
        assert _refused(cfg) is None, cfg


def test_every_bad_value_is_refused_with_bad_config():
    bad = (
        [], "learn", 3, None,  # not an object
        {"colour": "red"}, {"Learn": True},  # no such setting
        {"learn": 1}, {"learn": "true"}, {"learn": None},
        {"auto_next_ms": -1}, {"auto_next_ms": 600001}, {"auto_next_ms": 1.5}, {"auto_next_ms": True},
        {"auto_next_ms": "5"}, {"auto_next_ms": None},
        {"brightness": -2}, {"brightness": 256}, {"brightness": False}, {"brightness": 100.0},
        {"cpu_ms": -1}, {"cpu_ms": 60001}, {"cpu_ms": True}, {"cpu_ms": "fast"},
        {"variant": "cricket"}, {"variant": None}, {"variant": "Classic"},
        {"players": []}, {"players": "Ann"}, {"players": ["Ann", ""]}, {"players": ["A"] * 9}, {"players": [3]},
        {"players": None},
        # one bad setting among good ones refuses the whole set
        {"learn": True, "brightness": 300}, {"variant": "pub", "players": ["Ann", "x" * 17]},
    )
    for cfg in bad:
        assert _refused(cfg) == "bad_config", cfg


def test_a_refused_set_leaves_the_given_object_as_it_was():
    cfg = {"learn": True, "brightness": 999}
    assert _refused(cfg) == "bad_config"
    assert cfg == {"learn": True, "brightness": 999}

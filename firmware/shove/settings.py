# Settings the host can change (`config`): their defaults and the check that
# refuses a bad set whole.
from shove import Refused, rules

VERSION = "0.1.0"
PROFILE_FILE = "profile.json"
CONFIG_FILE = "config.json"
MAP_FILE = "map.json"
GAME_FILE = "game.jnl"

DEFAULT_CONFIG = {
    "learn": False,  # report closures as `raw` events instead of scoring
    "auto_next_ms": 0,  # automatic player change after the last dart (0: off)
    "brightness": -1,  # LED brightness 0..255; -1: the profile's
    "variant": "classic",  # what the new-game button starts
    "players": ["Home", "Away"],  # who the new-game button starts it for (cpu:N: the board plays)
    "cpu_ms": 1500,  # the board's pace as a player: between its darts, and before its player change
}


def check_config(new):
    """Validate a whole configuration; Refused('bad_config') otherwise."""
    def bad(msg):
        return Refused("bad_config", msg)

    if not isinstance(new, dict):
        raise bad("config set takes an object")
    for k in new:
        if k not in DEFAULT_CONFIG:
            raise bad("unknown setting %r; settings: %s" % (str(k)[:20], ", ".join(sorted(DEFAULT_CONFIG))))
    v = new.get("learn", False)
    if not isinstance(v, bool):
        raise bad("learn must be true or false")
    for key, lo, hi in (("auto_next_ms", 0, 600000), ("brightness", -1, 255), ("cpu_ms", 0, 60000)):
        v = new.get(key, DEFAULT_CONFIG[key])
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise bad("%s must be a whole number from %d to %d" % (key, lo, hi))
    if new.get("variant", "classic") not in rules.VARIANTS:
        raise bad("variant must be one of " + ", ".join(sorted(rules.VARIANTS)))
    try:
        rules.make_sides(new.get("players", DEFAULT_CONFIG["players"]))
    except rules.RuleError as e:
        raise bad("players: " + e.msg)



# Plays a scripted game and records what happened after every action.
# Imported by CPython tests and by the MicroPython worker: the differential
# test compares the two records as parsed JSON.
from shove import segments
from shove.rules import RuleError, new_game


def play(setup, actions):
    """setup: {"players"|"teams", "variant", "rules"}; actions: segments, "next", "undo"."""
    try:
        g = new_game(setup.get("players"), setup.get("teams"), setup.get("variant", "classic"), setup.get("rules"))
    except RuleError as e:
        return [{"error": e.code}]
    out = [{"state": g.to_state()}]
    for a in actions:
        try:
            if a == "next":
                g.next()
                rec = {}
            elif a == "undo":
                g.undo()
                rec = {}
            else:
                k, own, gifts, lost = g.throw(segments.encode(a))
                rec = {"dart": [k, own, [list(x) for x in gifts], lost]}
        except RuleError as e:
            rec = {"error": e.code}
        except segments.SegError:
            rec = {"error": "bad_seg"}
        rec["state"] = g.to_state()
        out.append(rec)
    return out


def won_by_second():
    """A two-player classic game the second side ("B") has just won with S9."""
    g = new_game(["A", "B"])
    g.next()
    for bed in range(1, 10):
        g.marks[g.nb + bed - 1] = 3
    g.marks[g.nb + 8] = 2
    g.throw(segments.encode("S9"))
    assert g.winner == 1
    return g

"""A client's copy of the board's game, kept current from events.

The board's `dart` event carries what one dart changed, not the whole state
(docs/protocol.md). `apply(state, ev)` brings a copy of the state up to date
from it; `visit`, `undo`, `new` and `win` carry the whole state and replace
the copy, as does the network transport's `link` event when it is back on
the board (host/hapenny/netlink.py: the events meanwhile were missed). The scoreboard and any other client share this one piece of code."""

WHOLE = ("visit", "undo", "new", "win")
VISIT_MAX = 12  # the darts the state's `visit` names at most (firmware: view.VISIT_MAX)


def apply(state, ev):
    """The state after event `ev` (a parsed event line); `state` is not changed.
    Returns None when there is no game, and `state` unchanged for events that
    do not touch the game."""
    name = ev.get("ev")
    if name in WHOLE:
        return ev.get("state")
    if name == "link":  # the network transport's: back on the board, with the whole game as it is now
        snap = ev.get("snapshot")
        if ev.get("up") and isinstance(snap, dict) and snap.get("connected", True) and "state" in snap:
            return snap["state"]
        return state
    if name != "dart" or state is None:
        return state
    if "state" in ev:  # boards before the compact event sent the whole state
        return ev["state"]
    st = dict(state)
    sides = [dict(s, marks=dict(s["marks"])) for s in state["sides"]]
    if ev.get("bed") is not None:
        bed = str(ev["bed"])
        who = [ev["side"]] + [g[0] for g in ev.get("gifts", [])]
        for side, marks in zip(who, ev["tally"]):
            sides[side]["marks"][bed] = marks
    st["sides"] = sides
    for key in ("turn", "darts_left", "phase", "winner", "moves"):
        st[key] = ev[key]
    if "contenders" in ev:
        st["contenders"] = ev["contenders"]
    else:
        st.pop("contenders", None)
    if "visit" in state:  # boards that name the visit's darts in the state
        if state["phase"] == "bull_off" and st["phase"] != "bull_off":
            st["visit"] = []  # the dart that ended the bull-off: the first visit starts
        else:
            st["visit"] = (state["visit"] + [[ev["seg"], ev["side"], ev["own"], ev.get("gifts", []),
                                              ev["lost"]]])[-VISIT_MAX:]
    if st["turn"] != state["turn"]:
        # only the bull-off passes the turn on a dart: each side throws it with its first member
        st["thrower"] = sides[st["turn"]]["members"][0]
    st["pending"] = pending(st)
    return st


def pending(st):
    """Sides whose win by gift waits for the end of the visit: those, other
    than a winner, that have closed every bed while nobody has won."""
    if st["winner"] is not None:
        return []
    full = st["rules"]["marks"]
    return [i for i, s in enumerate(st["sides"]) if all(m >= full for m in s["marks"].values())]

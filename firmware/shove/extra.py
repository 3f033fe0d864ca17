# Command handlers rarely used (bring-up, settings, diagnostics, stats):
# loaded for the command and let go after it (Commands.extra), so their code
# holds no heap while a game is played. Each takes the App, validates
# everything before it changes anything and returns the reply's fields.
import gc
import json
import sys

from shove import protocol, release, rules


def _mem_peak():
    """Peak heap use since boot, where the port counts it (unix does; ESP32 builds usually not)."""
    try:
        import micropython

        return micropython.mem_peak()
    except (ImportError, AttributeError):
        return None


def cmd_diag(app, cmd, after):
    # bring-up diagnostics (hapenny doctor): loaded for the command, let go after
    from shove import diag

    try:
        return diag.run(app, cmd)
    finally:
        release("diag")


def cmd_info(app, cmd, after):
    from shove.settings import VERSION

    return {"version": VERSION, "protocol": protocol.PROTOCOL, "board": app.prof.name,
            "matrix": {"rows": app.prof.rows, "cols": app.prof.cols}, "platform": sys.platform,
            "variants": sorted(rules.VARIANTS), "leds": app.renderer.count,
            "strip": {"beds": app.renderer.beds, "per_side": app.renderer.per_side,
                      "status": app.renderer.status}}


def cmd_map(app, cmd, after):
    # A full map does not fit one 512-byte line: `"more": true` stages
    # cells, and the chunk without it applies the whole map at once.
    from shove import profile
    from shove.settings import MAP_FILE

    if "set" in cmd:
        cells = cmd["set"]
        staged = app._map_staged
        app._map_staged = None
        if not isinstance(cells, list):
            raise protocol.ProtoError("bad_map", "set takes a list of [row, col, segment]")
        if staged:
            cells = staged + cells
        try:
            if len(cells) > app.prof.rows * app.prof.cols:
                raise profile.ProfileError("more cells than the matrix has crossings")
            table = profile.parse_map(cells, app.prof.rows, app.prof.cols)
        except profile.ProfileError as e:
            raise protocol.ProtoError("bad_map", str(e))
        if cmd.get("more") is True:
            app._map_staged = cells
            return {"staged": len(cells)}
        app.board.write_file(MAP_FILE, json.dumps(profile.map_cells(table, app.prof.cols)).encode())
        app.map = table
    return {"cells": profile.map_cells(app.map, app.prof.cols)}


def cmd_leds(app, cmd, after):
    f = app.last_frame
    return {"pixels": [[f[i], f[i + 1], f[i + 2]] for i in range(0, len(f), 3)]}


def cmd_config(app, cmd, after):
    from shove.settings import CONFIG_FILE, check_config

    if "set" in cmd:
        new = dict(app.config)
        if not isinstance(cmd["set"], dict):
            raise protocol.ProtoError("bad_config", "config set takes an object")
        new.update(cmd["set"])
        check_config(new)
        app.board.write_file(CONFIG_FILE, json.dumps(new).encode())
        app.config = new
        app.renderer.brightness = app._brightness()
        app._changed()
    return {"config": app.config}


def cmd_stats(app, cmd, after):
    return {"stats": stats(app)}


def stats(app):
    from shove.boards import idf_heap

    gc.collect()
    return {"scans": app.scanner.scans, "darts": app.darts,
            "scanner": ("idle", "window", "lockout", "release")[app.scanner.state], "ignored": app.ignored,
            "dropped": app.scanner.dropped, "queued": app.scanner.pending(), "errors": app.errors,
            "ctrl_c": app.watch.lone, "mem_alloc": gc.mem_alloc(), "mem_free": gc.mem_free(),
            "strip_count": app.renderer.count, "stalls": getattr(app.board, "stalls", 0),
            "idles": getattr(app.board, "idles", 0), "slices": app.slices, "armed_slices": app.armed_slices,
            "mem_peak": _mem_peak(), "idf_heap": idf_heap()}


def cmd_end(app, cmd, after):
    """Discard the game (the board then has none, as when new)."""
    old = app.game
    app.game = None
    app._save_game(lambda: setattr(app, "game", old))
    app._changed()
    app.hold_since = -1
    app.drop_cpu()
    after.append(("new", {"state": None}))
    return {"state": None}

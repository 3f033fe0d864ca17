# Command handlers rarely used (bring-up, settings, diagnostics, stats):
# loaded for the command and let go after it (Commands.extra), so their code
# holds no heap while a game is played. Each takes the command handlers'
# parts (commands.Commands: the keeper, the board, the strip...), validates
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


def cmd_diag(c, cmd, after):
    # bring-up diagnostics (hapenny doctor): loaded for the command, let go after
    from shove import diag

    try:
        return diag.run(c, cmd)
    finally:
        release("diag")


def cmd_info(c, cmd, after):
    from shove.settings import VERSION

    r = c.renderer
    return {"version": VERSION, "protocol": protocol.PROTOCOL, "board": c.prof.name,
            "matrix": {"rows": c.prof.rows, "cols": c.prof.cols}, "platform": sys.platform,
            "variants": sorted(rules.VARIANTS), "leds": r.count,
            "strip": {"beds": r.beds, "per_side": r.per_side, "status": r.status},
            "romfs": __file__.startswith("/rom/"),  # the package runs from a ROMFS image (deploy --romfs)
            "wifi": wifi_report(c)}


def wifi_report(c):
    """The network's state (shove/wifi.py), without the pairing code: `off` when none is set."""
    return c.net.report() if c.net is not None else {"state": "off"}


def cmd_map(c, cmd, after):
    # A full map does not fit one 512-byte line: `"more": true` stages
    # cells, and the chunk without it applies the whole map at once.
    from shove import profile
    from shove.settings import MAP_FILE

    if "set" in cmd:
        cells = cmd["set"]
        staged = c.map_staged
        c.map_staged = None
        if not isinstance(cells, list):
            raise protocol.ProtoError("bad_map", "set takes a list of [row, col, segment]")
        if staged:
            cells = staged + cells
        try:
            if len(cells) > c.prof.rows * c.prof.cols:
                raise profile.ProfileError("more cells than the matrix has crossings")
            table = profile.parse_map(cells, c.prof.rows, c.prof.cols)
        except profile.ProfileError as e:
            raise protocol.ProtoError("bad_map", str(e))
        if cmd.get("more") is True:
            c.map_staged = cells
            return {"staged": len(cells)}
        c.board.write_file(MAP_FILE, json.dumps(profile.map_cells(table, c.prof.cols)).encode())
        c.keeper.map = table
    return {"cells": profile.map_cells(c.keeper.map, c.prof.cols)}


def cmd_leds(c, cmd, after):
    f = c.strip.last
    return {"pixels": [[f[i], f[i + 1], f[i + 2]] for i in range(0, len(f), 3)]}


def cmd_config(c, cmd, after):
    from shove.settings import CONFIG_FILE, check_config

    k = c.keeper
    if "set" in cmd:
        new = dict(k.config)
        if not isinstance(cmd["set"], dict):
            raise protocol.ProtoError("bad_config", "config set takes an object")
        new.update(cmd["set"])
        check_config(new)
        c.board.write_file(CONFIG_FILE, json.dumps(new).encode())
        k.config = new
        b = new["brightness"]
        c.renderer.brightness = c.prof.brightness if b < 0 else b
        c.changed()
    return {"config": k.config}


def cmd_stats(c, cmd, after):
    return {"stats": stats(c)}


def stats(c):
    from shove.boards import idf_heap

    f = c.figures()  # the loop's: scans, scanner state, dropped, queued, errors, ctrl_c, slices, armed slices
    gc.collect()
    k = c.keeper
    return {"scans": f[0], "darts": k.darts, "scanner": ("idle", "window", "lockout", "release")[f[1]],
            "ignored": k.ignored, "dropped": f[2], "queued": f[3], "errors": f[4],
            "ctrl_c": f[5], "mem_alloc": gc.mem_alloc(), "mem_free": gc.mem_free(),
            "strip_count": c.renderer.count, "stalls": getattr(c.board, "stalls", 0),
            "idles": getattr(c.board, "idles", 0), "slices": f[6], "armed_slices": f[7],
            "mem_peak": _mem_peak(), "idf_heap": idf_heap(), "tx_waits": c.tx.waits,
            "web": c.web.figures() if c.web is not None else None}  # the board's web server (shove/httpd.py)


def cmd_end(c, cmd, after):
    """Discard the game (the board then has none, as when new)."""
    from shove.request import end  # loaded: extra's commands come through its handle()

    end(c.keeper)
    after.append(("new", {"state": None}))
    return {"state": None}

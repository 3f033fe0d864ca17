# The page's routes on the board's own server (shove/httpd.py): what
# shove/webroutes.py (kept in the heap while the server runs) names, loaded
# while requests are under way and let go with shove/httpreq.py. `w`: the
# webroutes.Routes, which keeps what lasts (the code, the lock's count).
# They have the same paths and meaning as `hapenny web` (host/hapenny/web/server.py) and
# the same rules of who may do what (host/hapenny/web/guard.py):
#   /, /static/<file>   the page, gzipped on the flash (web/*.gz: deploy puts it there)
#   /api/access         whether this page may play
#   /api/snapshot       info, config and state, as the serial replies give them
#   /api/cmd            a command, through the serial port's own handlers
#                       (request.handle), with the pairing code; its reply as is
#   /api/events         Server-Sent Events: a snapshot, then every event line
# This module answers the page's files and what a watching page reads (the
# snapshot, the stream); the pairing code's and the owner code's paths
# (access, commands, updates) are shove/webgate.py's, loaded only for them:
# a page that reconnects or reloads, the biggest answer, costs 3 KB less.
#
# Who may do what: the Host must be one of the board's names (its address,
# NAME.local, NAME; a board whose address is a loopback one, the virtual
# board, also localhost); an Origin, when sent, must be http:// and that
# Host (a page of another site, or a DNS-rebinding one, is refused); a
# command is application/json and carries the pairing code (wifiset.py
# keeps it; the page has it from the address's #code= fragment, never in a
# request line). Watching needs no code.
from shove import protocol
from shove.httpreq import host_name

# the page on the flash: web/NAME.gz
FILES = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
         "style.css": "text/css; charset=utf-8"}


def names(w):
    net = w.net
    out = [net.name + ".local", net.name]
    a = net.address
    if a:
        out.append(a)
        if a.startswith("127."):
            out.append("localhost")
    return out


def guard(w, req, now):
    name = host_name(req.host) if req.host else None
    if name is None or name not in names(w):
        req.error(421, "wrong_host", "this board answers only at its own address or name")
        return False
    if req.origin is not None and req.origin.lower() != "http://" + req.host.lower():
        req.error(403, "wrong_origin", "only the board's own page may send it requests")
        return False
    return True


def serve(w, req, now):
    """The route of req.path (webroutes.Routes names the paths and their methods)."""
    p = req.path
    if p == "/":
        if not req.send_file("web/index.html.gz", FILES["index.html"]):
            req.error(404, "no_page", "the page is not on this board's flash: hapenny deploy puts it there")
    elif p.startswith("/static/"):
        name = p[8:]
        if name not in FILES or not req.send_file("web/" + name + ".gz", FILES[name]):
            req.error(404, "not_found", "no such file")
    elif p == "/api/snapshot":
        req.reply(200, snap(w))
    elif p == "/api/events":
        req.stream(snap(w), now)
    else:  # the paths that need a code (webroutes.Routes.needs loaded their module)
        from shove import webgate

        webgate.serve(w, req, now)


def board_info(w):
    """`info` as its reply gives it: the kept part (webroutes.keep_info:
    at every page load, reconnect and network link's hello its module cost
    darts) and the network's state, asked each time."""
    if w.info is None:
        w.keep_info()
    info = dict(w.info)
    info["wifi"] = w.net.report()
    return info


def snap(w):
    """The snapshot's JSON text: info (board_info), config and state as
    their replies give them (the state encoded in pieces, a read of the
    matrix between)."""
    c = w.c
    k = c.keeper
    info = board_info(w)
    c.tick()
    st = None
    g = k.game
    if g:  # keeper.state's, but view (the state's builder) is kept with the requests' code (srv.lazy), not loaded each time
        st = g.to_state(c.tick)
        st["ignored"] = k.ignored
        c.tick()
    return protocol.encode({"connected": True, "info": info, "config": k.config,
                            "state": st, "visit": [], "last": None}, c.tick)

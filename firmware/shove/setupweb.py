# The set-up page's routes on the board's own server (shove/httpd.py) while
# the set-up access point is open (shove/wifiap.py starts the server with
# them when the AP opens and closes it with the AP; the game's routes,
# shove/webroutes.py, take its place once a network is joined):
#   /setup                the page (web/setup.html.gz: deploy puts it there)
#   /api/setup/networks   the networks in reach (wifipage.scan)
#   /api/setup/join       POST {"ssid", "key"}: the network joined behind the AP
#   /api/setup/state      setup, joining, joined (the new address), failed (the reason)
#   anything else         the operating systems' connectivity probes
#                         (probes.probe_reply), and every other path, lead to
#                         /setup: a phone joining the AP opens the page itself
# Who may ask: only a client on the AP's own network (from_ap, here: the guard
# runs at every request, and loading the page's work for it was its 2 KB each). No
# Host, Origin or pairing-code check: the captive DNS sends a phone here
# under any name, and the AP's WPA2 passphrase is the pairing code, so a
# client on its network has proved it knows the code.
# The page's work (wifipage) and the probes' table (probes) are loaded per
# request and let go after (shove.call): the AP waiting for a phone keeps
# only this module and the server in the heap. A board on its home network
# never loads any of it.
import json

from shove import call

PAGE = "web/setup.html.gz"
_HTML = "text/html; charset=utf-8"


class SetupRoutes:
    """The set-up routes on `srv`, for the handlers' parts `c` (Commands:
    `net` is the SetupAP while it is open); `port`: where the server
    listens (a redirect names it when it is not 80)."""

    def __init__(self, c, srv, port):
        self.c = c
        self.port = port
        srv.guard = self.guard
        srv.route("/setup", self.page)
        srv.route("/api/setup/networks", self.networks)
        srv.route("/api/setup/join", self.join, ("POST",))
        srv.route("/api/setup/state", self.state)
        srv.route("/*", self.other)

    def guard(self, req, now):
        from shove.httpd import peer_address

        if not from_ap(self.c, peer_address(req.c.peer)):
            req.error(403, "not_setup_network", "the set-up page answers only the board's own set-up network")
            return False
        return True

    def address(self):
        """The AP's address as a link names it (with the port when not 80)."""
        ap = self.c.net.ap
        a = ap.ifconfig()[0] if ap is not None else "192.168.4.1"
        return a if self.port == 80 else "%s:%d" % (a, self.port)

    def page(self, req, now):
        if not req.send_file(PAGE, _HTML):
            req.error(404, "no_page", "the set-up page is not on this board's flash: hapenny deploy puts it there")

    def networks(self, req, now):
        req.reply(200, json.dumps(call("wifipage", "scan", self.c)))

    def state(self, req, now):
        req.reply(200, json.dumps(call("wifipage", "state", self.c)))

    def join(self, req, now):
        t = req.ctype
        if t is None or t.split(";")[0].strip().lower() != "application/json":
            req.error(415, "not_json", "the join is sent as Content-Type: application/json")
            return
        try:
            body = json.loads(bytes(req.body))
        except Exception:  # not JSON (not text, cut short, nested past the parser's depth)
            req.error(400, "bad_json", "send one JSON object: {\"ssid\": ..., \"key\": ...}")
            return
        # the reply as the page's work gives it, refusals included (the board answered)
        req.reply(200, json.dumps(call("wifipage", "join", self.c, body)))

    def other(self, req, now):
        """A connectivity probe (a redirect to the page until joined, then
        what its OS expects), or any other path: a redirect to the page."""
        online = call("wifipage", "online", self.c)
        r = call("probes", "probe_reply", req.path, online, self.address())
        if r is None:
            r = (302, None, b"", "http://%s/setup" % self.address())
        status, ctype, body, where = r
        req.reply(status, body.decode(), ctype or "text/plain", "Location: %s\r\n" % where if where else "")


def from_ap(parts, peer):
    """Whether a request from address `peer` came through the set-up AP (its
    clients get 192.168.4.2 on from the AP's DHCP server): the set-up
    routes answer only those, never the home network (the AP stays open a
    while after the join)."""
    ap = parts.net
    if not getattr(ap, "is_setup", False) or ap.ap is None or not isinstance(peer, str):
        return False
    own = ap.ap.ifconfig()[0]
    return peer != own and peer.rsplit(".", 1)[0] == own.rsplit(".", 1)[0]


def start(c, addr):
    """The server with the set-up routes, listening at addr (host, port)."""
    from shove.httpd import Server

    srv = Server(addr, c.tick)
    SetupRoutes(c, srv, addr[1])
    return srv

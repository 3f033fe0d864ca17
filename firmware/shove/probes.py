# The operating systems' connectivity probes, as data for the board's HTTP
# routes while the set-up access point is open (shove/wifiap.py): every host
# name is the board's there (shove/captive.py's DNS), so the path alone
# picks the probe. Loaded by the routes for a request and let go after: the
# AP waiting for a phone keeps none of it in the heap. Pure: runs in CPython
# and MicroPython alike (tests/portable/test_captive.py).
#
# PROBES: (path, who asks, the status,
# content type and body that mean "online"). While the set-up AP is open the
# HTTP routes answer these paths with a redirect to the set-up page (anything
# but the expected answer makes the OS show its sign-in sheet); once the
# board has joined the home network, with the expected answer, so the sheet
# closes by itself.
# - Android and ChromeOS: AOSP's NetworkStack, NetworkMonitor.java
#   (DEFAULT_HTTP_URL http://connectivitycheck.gstatic.com/generate_204, the
#   fallbacks http://www.google.com/gen_204 and play.googleapis.com's):
#   an HTTP 204 with no body is "validated", anything else a portal.
# - Apple (iOS, macOS): http://captive.apple.com/hotspot-detect.html and
#   http://www.apple.com/library/test/success.html, answered by Apple with
#   this "Success" page; any other body opens the Captive Network Assistant.
# - Windows 10 and 11: the Network Connectivity Status Indicator (Microsoft's
#   "NCSI overview", learn.microsoft.com): http://www.msftconnecttest.com/
#   connecttest.txt expects "Microsoft Connect Test"; Windows 7 and 8 asked
#   http://www.msftncsi.com/ncsi.txt for "Microsoft NCSI". Windows then opens
#   http://www.msftconnecttest.com/redirect in the browser.
# - Firefox: its preferences (modules/libpref/init/all.js and
#   StaticPrefList.yaml): captivedetect.canonicalURL http://detectportal.
#   firefox.com/canonical.html, whose content is the meta refresh below, and
#   network.connectivity-service's http://detectportal.firefox.com/success.txt
#   ("success\n").
# - Linux with NetworkManager (GNOME's default, NetworkManager.conf
#   [connectivity] uri): http://nmcheck.gnome.org/check_network_status.txt,
#   "NetworkManager is online\n"; Ubuntu's http://connectivity-check.ubuntu.com/
#   is an HTTP 204.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

PROBES = (
    ("/generate_204", "android", 204, None, b""),
    ("/gen_204", "android", 204, None, b""),
    ("/hotspot-detect.html", "apple", 200, "text/html",
     b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("/library/test/success.html", "apple", 200, "text/html",
     b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("/connecttest.txt", "windows", 200, "text/plain", b"Microsoft Connect Test"),
    ("/ncsi.txt", "windows", 200, "text/plain", b"Microsoft NCSI"),
    ("/redirect", "windows", 302, None, b""),  # the page Windows opens: always to the set-up page
    ("/canonical.html", "firefox", 200, "text/html",
     b'<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>'),
    ("/success.txt", "firefox", 200, "text/plain", b"success\n"),
    ("/check_network_status.txt", "linux", 200, "text/plain", b"NetworkManager is online\n"),
)


_SETUP_PATH = const("/setup")  # the set-up page (host/hapenny/web/static/setup.html, served by the board)


def probe_reply(path, online, address):
    """What the HTTP route answers to a request for `path` while the set-up
    AP is open: None when it is no probe; else (status, content type or
    None, body, Location or None). Not yet `online` (no network joined):
    a redirect to the set-up page at the AP's `address`, which every OS
    takes for a portal to sign in to. Online: the answer the OS expects,
    so its sign-in sheet closes by itself. Windows' /redirect always leads
    to the page."""
    row = probe(path)
    if row is None:
        return None
    if online and row[2] != 302:
        return row[2], row[3], row[4], None
    return 302, None, b"", "http://%s%s" % (address, _SETUP_PATH)


def probe(path):
    """The PROBES row of a request's path (its query string ignored), or None."""
    q = path.find("?")
    if q >= 0:
        path = path[:q]
    for row in PROBES:
        if row[0] == path:
            return row
    return None

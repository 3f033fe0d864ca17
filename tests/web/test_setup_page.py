"""The set-up page (host/hapenny/web/static/setup.html) in a real browser at
a phone's size (390x844), against the set-up AP's own functions
(firmware/shove/wifiap.py: scan, join, state) on the virtual `network`
model, behind the three paths the board's HTTP routes will serve. The
server here is a small stand-in for those routes (http.server in a thread);
the logic it calls is the firmware's. A screenshot goes to build/web/."""
import json
import os
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("HAPENNY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("the browser tests need Chromium: apt-get install chromium (Debian), or set "
                "HAPENNY_CHROMIUM to a Chromium binary", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from test_setup_ap import Board, Parts  # noqa: E402
from test_wifi_join import RUNTIME  # noqa: E402

expect.set_options(timeout=20000)  # a bound on waiting only

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "host" / "hapenny" / "web" / "static" / "setup.html"
SHOTS = ROOT / "build" / "web"
PASSWORD = "correct horse battery"
AIR = {"home": {"key": PASSWORD, "rssi": -52, "addr": "192.168.1.40"}, "cafe": {"rssi": -71},
       "neighbours": {"key": "their own pw", "rssi": -84}}
TIMES = {"join_ms": 400, "refuse_ms": 400, "scan_ms": 400, "beacon_ms": 400}


class Clock:
    def __init__(self):
        self.t0 = time.monotonic()

    def __call__(self):
        return int((time.monotonic() - self.t0) * 1000) & 0x3FFFFFFF


@pytest.fixture
def board(monkeypatch):
    """The set-up AP open on a fresh `network` model, stepped every 20 ms as the loop would."""
    import importlib.util
    import sys

    from shove import wifiap, wifipage

    spec = importlib.util.spec_from_file_location("network", RUNTIME / "network.py")
    net = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net)
    clock = Clock()
    net._clock = clock
    monkeypatch.setitem(sys.modules, "network", net)
    net.set_air(AIR, TIMES)
    parts = Parts(Board(clock))
    wifiap.open_ap(parts, wifiap.NONE_SET)
    lock = threading.Lock()
    stop = threading.Event()
    sent = []  # every body the routes sent

    def loop():
        while not stop.is_set():
            with lock:
                parts.net.step(clock())
            time.sleep(0.02)

    class Routes(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, status, ctype, body):
            sent.append(body)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            with lock:
                if self.path == "/setup":
                    return self.reply(200, "text/html; charset=utf-8", PAGE.read_bytes())
                if self.path == "/api/setup/networks":
                    return self.reply(200, "application/json", json.dumps(wifipage.scan(parts)).encode())
                if self.path == "/api/setup/state":
                    return self.reply(200, "application/json", json.dumps(wifipage.state(parts)).encode())
            self.reply(404, "text/plain", b"not here")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                if self.path == "/api/setup/join":
                    return self.reply(200, "application/json", json.dumps(wifipage.join(parts, body)).encode())
            self.reply(404, "text/plain", b"not here")

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Routes)
    threads = [threading.Thread(target=srv.serve_forever, daemon=True), threading.Thread(target=loop, daemon=True)]
    for t in threads:
        t.start()
    yield {"url": "http://127.0.0.1:%d/setup" % srv.server_address[1], "parts": parts, "sent": sent, "net": net}
    stop.set()
    srv.shutdown()
    srv.server_close()
    for t in threads:
        t.join(timeout=5)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def test_a_phone_picks_a_network_is_refused_then_joins(browser, board):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(board["url"])
    name = board["parts"].net.name
    expect(page.locator("#title")).to_have_text("Set up " + name)
    rows = page.locator("#networks button .name")
    expect(rows).to_have_text(["home", "cafe", "neighbours"])  # strongest first
    expect(page.locator("#networks .lock").nth(1)).to_have_attribute("aria-label", "open")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "setup-phone.png"))

    page.locator("#networks button").first.click()
    expect(page.locator("#key")).to_be_focused()
    page.fill("#key", "wrong password")
    page.click("#join")
    expect(page.locator("#msg")).to_contain_text("refused the password")
    assert board["net"].WLAN(board["net"].AP_IF).active()  # the set-up network stays for another try

    page.fill("#key", PASSWORD)
    page.click("#show")
    expect(page.locator("#key")).to_have_attribute("type", "text")
    page.click("#join")
    expect(page.locator("#msg")).to_contain_text("joined home at 192.168.1.40")
    expect(page.locator("#msg a")).to_have_attribute("href", "http://192.168.1.40/")
    expect(page.locator("#pick")).to_be_hidden()
    page.screenshot(path=str(SHOTS / "setup-phone-joined.png"))
    assert page.locator("#key").input_value() == ""  # not kept on the page once sent
    assert json.loads(board["parts"].board.files["wifi.json"])["ssid"] == "home"
    for body in board["sent"]:
        if body.startswith(b"{"):
            assert PASSWORD.encode() not in body and b"wrong password" not in body
    page.close()


def test_an_open_network_asks_no_password_and_a_hidden_one_is_typed(browser, board):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(board["url"])
    page.locator("#networks button", has_text="cafe").click()
    expect(page.locator("#keybox")).to_be_hidden()
    page.click("#other")
    expect(page.locator("#ssid")).to_be_focused()
    expect(page.locator("#keybox")).to_be_visible()
    page.fill("#ssid", "attic")
    page.fill("#key", "short")
    page.click("#join")
    expect(page.locator("#msg")).to_contain_text("8 to 63")  # the board's own check, word for word
    page.fill("#key", "long enough now")
    page.click("#join")
    expect(page.locator("#msg")).to_contain_text("cannot find that network")
    page.close()

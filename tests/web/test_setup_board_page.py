"""The set-up page (host/hapenny/web/static/setup.html) in a real browser at
a phone's size (390x844) against the board's own server: a virtual board
with no network set, its set-up AP on the loopback (SimBoard.ap_addr
127.0.0.2, so the browser at 127.0.0.1 is one of its clients), the page as
deploy puts it on the flash (gzipped), the scan, a refused password and
the join, all through the firmware's routes (shove/setupweb.py). A
screenshot goes to build/web/."""
import io
import os
import shutil
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("HAPENNY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("the browser tests need Chromium: apt-get install chromium (Debian), or set "
                "HAPENNY_CHROMIUM to a Chromium binary", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from hapenny.connect import connect  # noqa: E402
from hapenny.sim.board import VirtualBoard  # noqa: E402

expect.set_options(timeout=20000)  # a bound on waiting only

SHOTS = Path(__file__).resolve().parents[2] / "build" / "web"
PASSWORD = "correct horse battery"
AIR = {"home": {"key": PASSWORD, "rssi": -52, "addr": "127.0.0.1"}, "cafe": {"rssi": -71},
       "neighbours": {"key": "their own pw", "rssi": -84}}
TIMES = {"join_ms": 300, "refuse_ms": 300, "scan_ms": 300, "beacon_ms": 300}
WAIT = 30.0


@pytest.fixture(scope="module")
def board():
    vb = VirtualBoard(fast=True, log=io.BytesIO())
    vb.ap_addr = "127.0.0.2"
    vb.air(AIR, TIMES)
    vb.start()
    end = time.monotonic() + WAIT
    while True:
        try:
            link, _, ser = connect(vb.port)
            break
        except Exception:
            assert time.monotonic() < end
            time.sleep(0.3)
    while True:
        w = link.request("wifi")["wifi"]
        if w["state"] == "setup" and w["ap"]["address"]:
            break
        assert time.monotonic() < end, w
        time.sleep(0.1)
    yield {"vb": vb, "link": link, "name": w["name"]}
    ser.close()
    vb.stop()


def test_a_phone_sets_up_the_board_through_its_own_server(board):
    vb = board["vb"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = b.new_page(viewport={"width": 390, "height": 844})
            # (the probes' redirect names the AP's address, 127.0.0.2 here, where the virtual
            # board's server does not listen: tests/test_setup_web.py follows it by hand)
            page.goto("http://127.0.0.1:%d/setup" % vb.web_port)
            expect(page.locator("#title")).to_have_text("Set up " + board["name"])
            expect(page.locator("#networks button .name")).to_have_text(["home", "cafe", "neighbours"])
            assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "setup-board-phone.png"))

            page.locator("#networks button").first.click()
            page.fill("#key", "wrong password")
            page.click("#join")
            expect(page.locator("#msg")).to_contain_text("refused the password")
            assert board["link"].request("wifi")["wifi"]["state"] == "setup"  # the set-up network stays

            page.fill("#key", PASSWORD)
            page.click("#join")
            expect(page.locator("#msg")).to_contain_text("joined home at 127.0.0.1")
            page.screenshot(path=str(SHOTS / "setup-board-phone-joined.png"))
            assert page.locator("#key").input_value() == ""  # not kept on the page once sent
        finally:
            b.close()
    assert board["link"].request("wifi")["wifi"]["ssid"] == "home"

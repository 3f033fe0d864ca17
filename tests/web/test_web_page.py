"""The web scoreboard in a real browser: Debian's chromium driven by
Playwright against `hapenny web` (the CLI, in its own process) on a virtual
board. Screenshots at phone, tablet and TV sizes go to build/web/."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hapenny.sim.board import VirtualBoard

import website
from website import free_port

CHROMIUM = os.environ.get("HAPENNY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("the browser tests need Chromium: apt-get install chromium (Debian), or set "
                "HAPENNY_CHROMIUM to a Chromium binary", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

# what the page shows is waited for, however loaded the machine (a bound on
# waiting only: no test here is about how fast the page is; `make bench` is)
expect.set_options(timeout=20000)

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "web"
SIZES = {"phone": (390, 844), "tablet": (1024, 768), "laptop": (1280, 720), "tv": (1920, 1080)}
# what a player needs, on one screen without scrolling at these sizes
NEEDED = ["#status", "#turn", "#tally", "#dartboard", "#visit", "#rules", "#next", "#undo", "#show-new",
          "#show-settings"]
FITS = ("laptop", "tv")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         # a hostile name that resolves to this machine, as after DNS rebinding
         "--host-resolver-rules=MAP rebind.test 127.0.0.1"]


class Site(website.Site):
    def cells(self):
        st = self.cmd(cmd="state")
        assert st["ok"]
        return st


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shared_site(tmp_path_factory):
    s = Site(tmp_path_factory.mktemp("site"))
    s.defaults = s.cmd(cmd="config")["config"]
    yield s
    s.close()


@pytest.fixture
def site(shared_site):
    """The module's board and server as a test finds them after a fresh
    start: the server running and connected, the settings the board's
    defaults, a new game of Ann and Bob. (A board and a server of a test's
    own cost some 1.5 s each time, on a loaded machine more; the tests that
    stop the server or the board leave both running again.)"""
    s = shared_site
    if s.proc.poll() is not None:  # a test that stopped the server failed before starting it again
        s.start_server()
    s.wait(lambda x: x["connected"] and x["config"] is not None)
    assert s.cmd(cmd="config", set=s.defaults)["ok"]
    assert s.cmd(cmd="new", players=["Ann", "Bob"])["ok"]
    s.wait(lambda x: x["config"] == s.defaults and x["state"] is not None and x["state"]["moves"] == 0
           and [d["name"] for d in x["state"]["sides"]] == ["Ann", "Bob"])
    return s


def open_page(browser, site, size="tablet"):
    w, h = SIZES[size]
    page = browser.new_page(viewport={"width": w, "height": h})
    page.goto(site.url)
    expect(page.locator("#status")).to_have_text(re.compile("board connected"))
    return page


MAP = json.loads((ROOT / "hardware" / "profiles" / "generic-8x8.json").read_text())["map"]


def crossing(site, seg):
    return next((r, c) for r, c, s in MAP if s == seg)


def test_a_dart_on_the_matrix_appears_on_the_page_with_what_it_did(browser, site):
    page = open_page(browser, site)
    r, c = crossing(site, "T5")
    site.vb.close(r, c, ms=3)
    dart = page.locator('.visit .dart[data-seg="T5"]')
    expect(dart).to_contain_text("3 marks on 5", )
    expect(page.locator('tr[data-side="0"] td[data-bed="5"]')).to_have_text("⊗")
    expect(page.locator('#dartboard circle.dart[data-seg="T5"]')).to_have_count(1)
    # a gift: Ann's second treble on 5 gives Bob the marks, shown on his side
    site.vb.wait_rearmed()
    site.vb.close(r, c, ms=3)
    expect(page.locator(".visit .dart").nth(1)).to_contain_text("3 gifted to Bob", )
    expect(page.locator('tr[data-side="1"] td[data-bed="5"]')).to_have_class(re.compile("gifted"))
    expect(page.locator("#turn")).to_contain_text("Ann throws")
    page.close()


def test_next_and_undo_from_the_page_change_the_board(browser, site):
    page = open_page(browser, site)
    page.click("#next")
    expect(page.locator("#turn")).to_contain_text("Bob throws")
    assert site.cells()["state"]["thrower"] == "Bob"  # asked of the board itself
    page.click("#undo")
    expect(page.locator("#turn")).to_contain_text("Ann throws")
    assert site.cells()["state"]["thrower"] == "Ann"
    page.close()


def test_a_refused_command_shows_the_boards_error_in_words(browser, site):
    page = open_page(browser, site)
    page.click("#undo")  # nothing to undo at the start of a game
    expect(page.locator("#error")).to_have_text(re.compile("Refused: nothing to undo"))
    page.close()


def test_a_new_game_with_teams_and_a_variant_from_the_page(browser, site):
    page = open_page(browser, site)
    page.click("#show-new")
    page.check("#use-teams")
    page.fill("#teams", "Ann, Bob\nCid, Dee")
    page.select_option("#variant", "pub")
    page.fill("#overrides", '{"darts": 2}')
    page.click("#new-game button[type=submit]")
    expect(page.locator("#rules")).to_contain_text("pub:")
    st = site.cells()["state"]
    assert st["variant"] == "pub" and st["rules"]["darts"] == 2
    assert [s["members"] for s in st["sides"]] == [["Ann", "Bob"], ["Cid", "Dee"]]
    expect(page.locator("#turn")).to_contain_text("Ann throws")
    page.close()


def test_two_pages_stay_in_step(browser, site):
    a, b = open_page(browser, site, "phone"), open_page(browser, site, "tv")
    a.click("#next")
    expect(b.locator("#turn")).to_contain_text("Bob throws")
    b.click("#show-settings")
    b.fill("#auto_next_ms", "2500")
    b.click("#settings button[type=submit]")
    expect(a.locator("#auto_next_ms")).to_have_value("2500")
    assert site.cmd(cmd="config")["config"]["auto_next_ms"] == 2500
    a.close()
    b.close()


def test_the_board_gone_and_back_shows_disconnected_then_the_restored_game(browser, site):
    page = open_page(browser, site)
    assert site.cmd(cmd="throw", seg="D7")["ok"]
    expect(page.locator('tr[data-side="0"] td[data-bed="7"]')).to_have_text("X")
    site.vb.power_off()  # unplugged until the page has said so
    expect(page.locator("#status")).to_have_text("board disconnected")
    expect(page.locator("main")).to_have_css("opacity", "0.45")  # the last game shown, dimmed: not live
    site.vb.power_on()
    expect(page.locator("#status")).to_have_text(re.compile("board connected"), timeout=30000)
    expect(page.locator("main")).to_have_css("opacity", "1")
    expect(page.locator('tr[data-side="0"] td[data-bed="7"]')).to_have_text("X")
    expect(page.locator("#turn")).to_contain_text("Ann throws")
    page.close()


def test_screenshots_of_a_game_in_progress(browser, site):
    site.cmd(cmd="new", players=["Ann", "Bob", "Cid"])
    for seg in ("T5", "D3", "S9"):
        assert site.cmd(cmd="throw", seg=seg)["ok"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        page = open_page(browser, site, size)
        expect(page.locator(".visit .dart")).to_have_count(3)
        path = SHOTS / ("web-%s.png" % size)
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10000
        # nothing runs off the side: the page fits the screen's width
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0]
        page.close()


def test_everything_a_player_needs_fits_the_screen_without_scrolling(browser, site):
    # a long game: four sides with long names, the extended variant's 15 beds, a full visit
    site.cmd(cmd="new", players=["Annabel", "Bartholomew", "Cid", "Dee"], variant="extended")
    for seg in ("T15", "D13", "S9"):
        assert site.cmd(cmd="throw", seg=seg)["ok"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for size in FITS:
        w, h = SIZES[size]
        page = open_page(browser, site, size)
        expect(page.locator(".visit .dart")).to_have_count(3)
        page.screenshot(path=str(SHOTS / ("fit-%s.png" % size)))
        for sel in NEEDED:
            box = page.locator(sel).bounding_box()
            assert box is not None and box["width"] > 0 and box["height"] > 0, (sel, size)
            assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= w and \
                box["y"] + box["height"] <= h, (sel, box, size)
        assert page.evaluate("document.documentElement.scrollHeight") <= h
        assert page.evaluate("document.documentElement.scrollWidth") <= w
        # large enough to read from the oche, 2.4 m away: a row of the tally is over a twentieth of the screen
        assert page.locator("#tally td").first.bounding_box()["height"] >= h / 20, size
        page.close()


def test_a_page_whose_stream_broke_reconnects_and_catches_up(browser, site):
    from hapenny.connect import connect

    page = open_page(browser, site)
    site.proc.terminate()  # the stream breaks, as when Wi-Fi goes (here: the server goes)
    site.proc.wait(10)
    expect(page.locator("#status")).to_contain_text("server unreachable", )
    link, _, ser = connect(site.vb.port)  # meanwhile the game goes on at the board
    link.request("throw", seg="T4")
    link.request("next")
    ser.close()
    site.start_server()
    # the page's stream reconnects by itself, and the whole picture comes first
    expect(page.locator("#status")).to_contain_text("board connected", )
    expect(page.locator('tr[data-side="0"] td[data-bed="4"]')).to_have_text("⊗")
    expect(page.locator("#turn")).to_contain_text("Bob throws")
    page.close()


def test_the_visits_darts_are_shown_however_late_the_host_started(browser, site):
    from hapenny.connect import connect

    site.proc.terminate()  # the host is away while Ann throws two darts at the board
    site.proc.wait(10)
    link, _, ser = connect(site.vb.port)
    link.request("throw", seg="T5")
    link.request("throw", seg="D3")
    ser.close()
    site.start_server()  # it starts mid-visit: the darts come from the board's state
    page = open_page(browser, site, "laptop")
    darts = page.locator(".visit .dart")
    expect(darts).to_have_count(2)
    expect(darts.nth(0)).to_contain_text("T5 3 marks on 5")
    expect(darts.nth(1)).to_contain_text("D3 2 marks on 3")
    expect(page.locator("#dartboard circle.dart")).to_have_count(2)
    r, c = crossing(site, "S9")  # the visit's last dart joins them
    site.vb.close(r, c, ms=3)
    expect(darts).to_have_count(3, )
    expect(darts.nth(2)).to_contain_text("S9 1 mark on 9")
    page.close()


class FreezingProxy:
    """A TCP relay to the server whose open event streams can be frozen: they
    stay open and deliver nothing, as a stream does when a tablet's Wi-Fi
    goes while it sleeps. Other connections, and streams opened after the
    freeze, pass (the browser reuses idle connections for new requests)."""

    def __init__(self, upstream):
        import threading

        self.upstream = upstream
        self.frozen = threading.Event()
        self.conns = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = "http://127.0.0.1:%d/" % self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading

        while True:
            try:
                down, _ = self.sock.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.upstream))
            conn = {"stream": False, "frozen": False}
            self.conns.append(conn)
            for a, b, up_way in ((down, up, True), (up, down, False)):
                threading.Thread(target=self._pump, args=(a, b, conn, up_way), daemon=True).start()

    @staticmethod
    def _pump(src, dst, conn, up_way):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if up_way:
                    conn["stream"] = b"GET /api/events" in data
                elif conn["frozen"]:
                    continue  # swallowed: the connection stays open and says nothing
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

    def freeze(self):
        for conn in self.conns:
            conn["frozen"] = conn["stream"]

    def close(self):
        self.sock.close()


def test_a_stream_that_went_silent_is_opened_again(browser, site):
    proxy = FreezingProxy(site.http)
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.clock.install()  # the page's own clock, to jump past its 25-s watchdog
    page.goto(proxy.url)
    expect(page.locator("#status")).to_have_text(re.compile("board connected"))
    proxy.freeze()
    r, c = crossing(site, "T4")
    site.vb.close(r, c, ms=3)
    site.wait(lambda s: s["state"]["sides"][0]["marks"].get("4") == 3)
    time.sleep(0.5)
    # the frozen stream delivered nothing: the page has not seen the dart
    expect(page.locator('tr[data-side="0"] td[data-bed="4"]')).not_to_have_text("⊗")
    page.clock.fast_forward("00:31")  # nothing heard for 31 s, not even the server's ping
    expect(page.locator('tr[data-side="0"] td[data-bed="4"]')).to_have_text("⊗", )
    page.close()
    proxy.close()


# ---- a hostile page in the same browser ----------------------------------------------
EVIL = """<!doctype html><title>a page from elsewhere</title>
<form id="form" method="POST" action="%(target)sapi/cmd" enctype="text/plain" target="sink">
  <input name='{"cmd":"end","x":"' value='"}'></form>
<iframe name="sink"></iframe>
<script>
window.tried = {};
async function attack() {
  const body = JSON.stringify({cmd: "end"});
  try {  // a "simple" request: no preflight, so it does reach the server
    const r = await fetch("%(target)sapi/cmd", {method: "POST", mode: "no-cors",
                                               headers: {"Content-Type": "text/plain"}, body});
    tried.plain = "sent (" + r.type + ")";
  } catch (e) { tried.plain = "failed: " + e.message; }
  try {  // JSON: the browser asks first (a preflight), and the answer must allow it
    const r = await fetch("%(target)sapi/cmd", {method: "POST", headers: {"Content-Type": "application/json"}, body});
    tried.json = "answered " + r.status;
  } catch (e) { tried.json = "failed: " + e.message; }
  document.getElementById("form").submit();
  tried.form = "submitted";
}
</script>"""


class EvilSite:
    """Another origin on this machine (another port of 127.0.0.1) serving the hostile page."""

    def __init__(self, target):
        import http.server
        import threading

        page = (EVIL % {"target": target}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def game(site):
    st = site.cells()["state"]
    assert st is not None
    return st


def test_a_page_from_another_origin_cannot_touch_the_game_while_the_scoreboard_plays(browser, site):
    assert site.cmd(cmd="throw", seg="T5")["ok"]
    before = game(site)
    evil = EvilSite(site.url)
    page = browser.new_page()
    seen = []
    page.on("response", lambda r: seen.append((r.request.method, r.url, r.status)) if "/api/cmd" in r.url else None)
    page.goto(evil.url)
    page.evaluate("attack()")
    page.wait_for_function("window.tried.form === 'submitted'")
    page.wait_for_timeout(500)  # the form's POST lands in its frame
    tried = page.evaluate("window.tried")
    assert tried["plain"].startswith("sent")  # the browser sent it: the server refused it
    assert tried["json"].startswith("failed")  # its preflight was refused, so the POST never went
    posts = [(m, st) for m, url, st in seen if m == "POST"]
    assert posts and all(st == 403 for m, st in posts), seen  # the text/plain fetch and the form: refused
    assert game(site) == before  # nothing changed: no `end`, the dart still there
    page.close()
    evil.close()
    # the scoreboard's own page plays on
    page = open_page(browser, site)
    page.click("#next")
    expect(page.locator("#turn")).to_contain_text("Bob throws")
    assert game(site)["thrower"] == "Bob"
    page.close()


def test_a_rebound_name_reaches_nothing(browser, site):
    # DNS rebinding: a hostile name that resolves to this machine. Its page's
    # requests are same-origin for the browser, so only the server's check
    # of Host stands in the way: the page itself is refused, and what a
    # script on it sends too
    before = game(site)
    host = "http://rebind.test:%d/" % site.http
    page = browser.new_page()
    resp = page.goto(host)
    assert resp.status == 421 and "wrong_host" in page.content()
    got = page.evaluate("""async () => {
        const r = await fetch("/api/cmd", {method: "POST", headers: {"Content-Type": "application/json"},
                                            body: JSON.stringify({cmd: "end"})});
        const s = await fetch("/api/snapshot");
        return [r.status, (await r.json()).error, s.status];
    }""")
    assert got == [421, "wrong_host", 421]
    assert game(site) == before
    page.close()


def test_beyond_this_computer_the_page_plays_only_with_the_code_from_its_url(browser, tmp_path):
    # a code asked for with --code is needed on this computer too, as it is
    # beyond it: watching is free, playing needs the code
    vb = VirtualBoard(board_dir=tmp_path / "flash").start()
    http = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hapenny.cli", "web", "--port", vb.port, "--listen",
                             "127.0.0.1:%d" % http, "--code", "TestCode-123"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not lines or "Ctrl-C" not in lines[-1]:
            lines.append(proc.stdout.readline())
            assert lines[-1], lines
        url = "http://127.0.0.1:%d/" % http
        assert "open %s#code=TestCode-123\n" % url in lines
        watcher = browser.new_page()
        watcher.goto(url)
        expect(watcher.locator("#status")).to_have_text(re.compile("board connected"), )
        expect(watcher.locator("#watching")).to_be_visible()
        expect(watcher.locator("#next")).to_be_hidden()
        refused = watcher.evaluate("""async () => (await fetch("/api/cmd", {method: "POST",
            headers: {"Content-Type": "application/json"}, body: JSON.stringify({cmd: "new", players: ["X", "Y"]})})).status""")
        assert refused == 403
        player = browser.new_page()
        player.goto(url + "#code=TestCode-123")
        expect(player.locator("#next")).to_be_visible()
        assert "#code" not in player.url  # taken off the address bar
        player.click("#show-new")
        player.fill("#players", "Ann, Bob")
        player.click("#new-game button[type=submit]")
        expect(watcher.locator("#turn")).to_contain_text("Ann throws")  # the watcher sees it
        player.reload()  # the code was kept for this origin
        expect(player.locator("#next")).to_be_visible()
        player.click("#next")
        expect(watcher.locator("#turn")).to_contain_text("Bob throws")
        # the code typed in on a watching screen (as read off the board's beds): a wrong one says so
        watcher.fill("#code", "TestCode-124")
        watcher.click("#watching button[type=submit]")
        expect(watcher.locator("#error")).to_have_text(re.compile("not the pairing code"))
        expect(watcher.locator("#next")).to_be_hidden()
        watcher.fill("#code", " TestCode-123 ")
        watcher.click("#watching button[type=submit]")
        expect(watcher.locator("#next")).to_be_visible()
        expect(watcher.locator("#watching")).to_be_hidden()
        watcher.click("#next")
        expect(player.locator("#turn")).to_contain_text("Ann throws")
        watcher.reload()  # kept, as a code from the address is
        expect(watcher.locator("#next")).to_be_visible()
        watcher.close()
        player.close()
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0]
        vb.stop()
    # the code is printed where it belongs (the addresses to open) and nowhere else
    for line in "".join(lines).splitlines() + out.splitlines():
        assert "TestCode-123" not in line or line.startswith(("open http", "on the home network: http")), line


# ---- the page keeps the game from events --------------------------------------------------
# Every stream's messages, as the page's EventSource receives them (before its own listeners)
COUNT_STREAM = """
window.streamed = [];
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(url) {
    super(url);
    for (const k of ["snapshot", "event"]) super.addEventListener(k, (e) => window.streamed.push([k, JSON.parse(e.data)]));
  }
};
"""


def test_after_the_first_snapshot_the_page_is_drawn_from_events_alone(browser, site):
    """A dart, a gift, a player change, an undo and a win: the server sends
    the snapshot once and then events only, and the page's copy is the
    board's state after each (the board's: what gamestate.py computes,
    tests/test_gamestate.py)."""
    from hapenny import gamestate

    assert site.cmd(cmd="new", players=["Ann", "Bob"], rules={"beds": [4, 5], "marks": 3, "darts": 3})["ok"]
    site.wait(lambda s: s["state"] and s["state"]["rules"]["beds"] == [4, 5] and s["state"]["moves"] == 0)
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.add_init_script(COUNT_STREAM)
    page.goto(site.url)
    expect(page.locator("#status")).to_have_text(re.compile("board connected"))
    copy = site.cells()["state"]
    steps = [("throw", "T5"), ("throw", "T5"), ("throw", "S4"), ("next", None), ("throw", "D4"), ("undo", None),
             ("throw", "S4"), ("throw", "MISS"), ("throw", "S4"), ("next", None), ("throw", "T4")]
    for i, (cmd, seg) in enumerate(steps):
        reply = site.cmd(cmd=cmd, seg=seg) if seg else site.cmd(cmd=cmd)
        assert reply["ok"], reply
        board = site.cells()["state"]
        page.wait_for_function("(n) => snap && snap.state && snap.state.moves === n", arg=board["moves"])
        mine = page.evaluate("snap")
        assert mine["state"] == board, (i, cmd, seg)
        assert mine["state"]["pending"] == gamestate.pending(board)
        assert [d["seg"] for d in mine["visit"]] == [d[0] for d in board["visit"]], (i, cmd, seg)
        copy = board
    assert copy["phase"] == "over" and copy["winner"] == 0  # Ann closed 4 and 5, gifting Bob his last marks
    expect(page.locator("#turn")).to_have_text("Ann wins!")
    expect(page.locator('tr[data-side="0"] td[data-bed="4"]')).to_have_text("⊗")
    expect(page.locator('tr[data-side="1"] td[data-bed="5"]')).to_have_text("⊗")
    kinds = [k for k, _ in page.evaluate("window.streamed")]
    assert kinds[0] == "snapshot" and "snapshot" not in kinds[1:], kinds
    names = [m["ev"] for k, m in page.evaluate("window.streamed")[1:]]
    for ev in ("dart", "visit", "undo", "win"):
        assert ev in names, names
    # the page keeps the last event as the snapshot's `last`
    assert page.evaluate("snap.last")["ev"] == "win"
    page.close()


def random_games(n, seed):
    """Event streams of random games as a board sends them: the state the
    page starts from, then the events (half of them from a board whose
    state does not name the visit's darts: the page keeps those itself)."""
    import random

    from shove import events, protocol, rules, segments
    from shove.rules import RuleError
    from strategies import SEGS, live_segs

    rnd = random.Random(seed)
    games = []
    for k in range(n):
        variant = rnd.choice(sorted(rules.VARIANTS))
        over = {}
        for key, choice in (("marks", [1, 2, 3]), ("darts", [1, 2, 3, 4]), ("gift", list(rules.GIFTS)),
                            ("win_by_gift", [True, False]), ("bull_off", [True, False])):
            if rnd.random() < 0.5:
                over[key] = rnd.choice(choice)
        if rnd.random() < 0.5:
            over["beds"] = rnd.sample(list(rules.BED_CHOICES), rnd.randint(1, 3))
        players = ["P%d" % i for i in range(rnd.randint(1, 4))]
        g = rules.new_game(players, None, variant, over)
        named = k % 2 == 0

        def state():
            st = g.to_state()
            if not named:
                st.pop("visit", None)
            return st

        start = state()
        evs = []
        beds = over.get("beds") or list(rules.VARIANTS[variant][0])
        for _ in range(rnd.randint(10, 80)):
            a = rnd.choice(live_segs(beds) * 3 + SEGS + ["next", "undo"] * 8)
            try:
                if a == "next":
                    g.next()
                    evs.append({"ev": "win" if g.phase == rules.OVER else "visit", "state": state()})
                elif a == "undo":
                    g.undo()
                    evs.append({"ev": "undo", "state": state()})
                else:
                    code = segments.encode(a)
                    side = g.turn
                    res = g.throw(code)
                    evs.append(json.loads(protocol.event("dart", events.dart(g, code, "matrix", side, res, (1, 2)))))
                    if g.phase == rules.OVER:
                        evs.append({"ev": "win", "winner": g.winner, "name": "x", "state": state()})
            except RuleError:
                continue
            if rnd.random() < 0.05:
                evs.append({"ev": "ignored", "seg": "S1", "row": 0, "col": 0, "why": "hold", "ignored": 1})
        games.append((start, evs))
    return games


def test_the_pages_copy_follows_events_exactly_as_the_hosts(browser, site):
    """The page's port of gamestate.apply and bridge.follow, fed the event
    streams of random games of every kind, keeps exactly the snapshot the
    host's code keeps after every event."""
    from hapenny.web import bridge

    page = open_page(browser, site)
    for start, evs in random_games(60, 39):
        snap = {"connected": True, "info": None, "config": None, "state": start,
                "visit": bridge.visit_of(start, []), "last": None}
        want = []
        for ev in evs:
            snap = bridge.follow(snap, ev)
            want.append(snap)
        got = page.evaluate("([s, evs]) => evs.map((ev) => (s = follow(s, ev)))",
                            [{"connected": True, "info": None, "config": None, "state": start,
                              "visit": [], "last": None}, evs])
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, (i, evs[i])
        assert len(got) == len(want)
    page.close()


def test_a_stream_as_the_board_serves_it_is_drawn_whole(browser, site):
    """The board's own server sends `"visit": []` and `"last": null` and
    lets the state name the visit's darts, then the board's events as they
    are: the page takes the darts from the state and applies the next dart
    itself (the streams here are that server's, word for word)."""
    from shove import events, protocol, rules, segments

    g = rules.new_game(["Ann", "Bob"], None, "classic", None)
    for seg in ("T5", "D3"):
        g.throw(segments.encode(seg))
    snap = "event: snapshot\ndata: %s\n\n" % json.dumps(dict(site.snapshot(), state=g.to_state(), visit=[], last=None),
                                                        separators=(",", ":"))
    code = segments.encode("S9")
    side = g.turn
    dart = "event: event\ndata: %s\n\n" % protocol.event("dart", events.dart(g, code, "matrix", side, g.throw(code),
                                                                            (1, 2))).strip()
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    streams = []
    body = ["retry: 3600000\n\n" + snap]  # the snapshot alone, and no reconnecting for an hour

    def serve(route):
        streams.append(1)
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
                      body=body[0])

    page.route("**/api/events", serve)
    page.goto(site.url)
    darts = page.locator(".visit .dart")
    expect(darts).to_have_count(2)  # from the state: the snapshot's own list is empty
    expect(darts.nth(0)).to_contain_text("T5 3 marks on 5")
    expect(darts.nth(1)).to_contain_text("D3 2 marks on 3")
    expect(page.locator("#dartboard circle.dart")).to_have_count(2)
    body[0] = "retry: 1000\n\n" + snap + dart  # reloaded: the snapshot, then the visit's last dart
    page.reload()
    expect(darts).to_have_count(3)
    expect(darts.nth(2)).to_contain_text("S9 1 mark on 9")
    expect(page.locator('tr[data-side="0"] td[data-bed="9"]')).to_have_text("/")
    expect(page.locator("#turn")).to_contain_text("Ann's visit is over")
    expect(page.locator("#dartboard circle.dart")).to_have_count(3)
    # each time the stream ends the page opens it again: the snapshot replaces its copy, so nothing doubles
    seen = len(streams)
    end = time.monotonic() + 30
    while len(streams) < seen + 2:
        assert time.monotonic() < end, "the page did not open its stream again"
        page.wait_for_timeout(100)
    expect(darts).to_have_count(3)
    assert len(page.evaluate("snap.visit")) <= 3
    assert page.evaluate("snap.state")["moves"] == 3 and page.evaluate("snap.last")["seg"] == "S9"
    page.close()

"""The page as the board itself serves it (firmware/shove/httpd.py,
webroutes.py) on its virtual network, in a real browser: Debian's chromium
driven by Playwright, as tests/web/test_web_page.py drives it against
`hapenny web`. Names, a dart at the matrix or over the serial port, the
controls with the pairing code and without it, and a page that comes back
after its network dropped. Every wait is for what the page shows (a bound on
waiting only); the board's deadlines are moved on with its clock."""
import os
import re
import shutil
import socket
import threading

import pytest

from boardsite import WAIT, BoardSite

CHROMIUM = os.environ.get("HAPENNY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("the browser tests need Chromium: apt-get install chromium (Debian), or set "
                "HAPENNY_CHROMIUM to a Chromium binary", allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

expect.set_options(timeout=int(WAIT * 1000))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Link:
    """The Wi-Fi between the page and the board: a TCP relay on a port of its
    own (the board answers to 127.0.0.1 whatever the port) that can drop
    every connection and refuse new ones, then come back."""

    def __init__(self, port):
        self.to = port
        self.up = True
        self.conns = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if not self.up:
                    c.close()
                    continue
                try:
                    u = socket.create_connection(("127.0.0.1", self.to), timeout=WAIT)
                except OSError:
                    c.close()
                    continue
                u.settimeout(None)
                self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                got = a.recv(65536)
                if not got:
                    break
                b.sendall(got)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def drop(self):
        with self.lock:
            self.up = False
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.conns = []

    def restore(self):
        with self.lock:
            self.up = True

    def close(self):
        self.drop()
        self.sock.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    b = BoardSite(board_dir=tmp_path_factory.mktemp("board"))
    yield b
    b.close()


@pytest.fixture
def game(board):
    """A new game of Ann and Bob, the code's lock (if a test met it) over."""
    board.vb.advance(31000)
    assert board.req("new", players=["Ann", "Bob"])["ok"]
    return board


def open_page(browser, board, code=True, url=None):
    """A page in a browser profile of its own (the code is kept per profile)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto((url or board.url) + ("#code=" + board.code if code else ""))
    expect(page.locator("#status")).to_have_text(re.compile("board connected"))
    return page


def shut(page):
    ctx = page.context
    page.close()
    ctx.close()


def test_the_boards_page_shows_the_names_and_a_dart_at_the_matrix_or_over_the_cable(browser, game):
    page = open_page(browser, game)
    expect(page.locator("#tally")).to_contain_text("Ann")
    expect(page.locator("#tally")).to_contain_text("Bob")
    expect(page.locator("#turn")).to_contain_text("Ann throws")
    game.dart("T5")  # the scanner finds it on the virtual matrix
    expect(page.locator('.visit .dart[data-seg="T5"]')).to_contain_text("3 marks on 5")
    expect(page.locator('tr[data-side="0"] td[data-bed="5"]')).to_have_text("⊗")
    assert game.req("throw", seg="D7")["ok"]  # entered over the serial port
    expect(page.locator('.visit .dart[data-seg="D7"]')).to_contain_text("2 marks on 7")
    expect(page.locator('#dartboard circle.dart[data-seg="D7"]')).to_have_count(1)
    shut(page)


def test_with_the_code_the_pages_controls_play_the_board(browser, game):
    page = open_page(browser, game)
    expect(page.locator("#watching")).to_be_hidden()
    page.click("#show-new")
    page.fill("#players", "Cid, Dee")
    page.click("#new-game button[type=submit]")
    expect(page.locator("#turn")).to_contain_text("Cid throws")
    assert [s["name"] for s in game.req("state")["state"]["sides"]] == ["Cid", "Dee"]  # the board's own
    page.click("#hint")
    expect(page.locator(".visit .coach")).to_contain_text(re.compile(r"^Hint: "))
    page.click("#show-throw")
    page.locator('#throwboard path[data-seg="T7"]').click()  # a tap on the drawn board throws it
    expect(page.locator('.visit .dart[data-seg="T7"]')).to_contain_text("3 marks on 7")
    assert game.req("state")["state"]["visit"][0][0] == "T7"
    page.click("#next")
    expect(page.locator("#turn")).to_contain_text("Dee throws")
    assert game.req("state")["state"]["thrower"] == "Dee"
    page.click("#undo")
    expect(page.locator("#turn")).to_contain_text("Cid throws")
    assert game.req("state")["state"]["thrower"] == "Cid"
    page.click("#undo")
    expect(page.locator(".visit .dart")).to_have_count(0)
    assert game.req("state")["state"]["moves"] == 0
    shut(page)


def test_without_the_code_the_page_watches_and_the_board_refuses_it(browser, game):
    player = open_page(browser, game)
    watcher = open_page(browser, game, code=False)
    expect(watcher.locator("#watching")).to_be_visible()
    expect(watcher.locator("#next")).to_be_hidden()
    expect(watcher.locator("#show-throw")).to_be_hidden()
    before = game.req("state")["state"]
    # a command sent all the same, as the page's own code sends one: refused, and said in words
    watcher.evaluate("""() => send({cmd: "next"})""")
    expect(watcher.locator("#error")).to_have_text(re.compile("Refused: this page may watch but not play"))
    status = watcher.evaluate("""async () => (await fetch("/api/cmd", {method: "POST",
        headers: {"Content-Type": "application/json"}, body: JSON.stringify({cmd: "undo"})})).status""")
    assert status == 403
    assert game.req("state")["state"] == before
    game.dart("S3")  # watching is live all the same
    expect(watcher.locator('.visit .dart[data-seg="S3"]')).to_have_count(1)
    watcher.fill("#code", "1" * len(game.code) if game.code != "1" * len(game.code) else "2" * len(game.code))
    watcher.click("#watching button[type=submit]")
    expect(watcher.locator("#error")).to_have_text(re.compile("not the pairing code"))
    expect(watcher.locator("#next")).to_be_hidden()
    game.vb.advance(31000)  # the wrong guess's lock over on the board's clock
    watcher.fill("#code", game.code)  # as read off the beds with Next held
    watcher.click("#watching button[type=submit]")
    expect(watcher.locator("#next")).to_be_visible()
    watcher.click("#next")
    expect(player.locator("#turn")).to_contain_text("Bob throws")
    shut(watcher)
    shut(player)


def test_a_page_whose_network_dropped_comes_back_with_the_visits_darts(browser, game):
    link = Link(game.vb.web_port)
    try:
        page = open_page(browser, game, url="http://127.0.0.1:%d/" % link.port)
        game.dart("T4")
        expect(page.locator('.visit .dart[data-seg="T4"]')).to_have_count(1)
        link.drop()  # Wi-Fi gone: the stream cut, and nothing gets through
        expect(page.locator("#status")).to_contain_text("server unreachable")
        game.dart("D6")  # the game goes on at the board meanwhile
        assert game.req("throw", seg="S9")["ok"]
        link.restore()
        expect(page.locator("#status")).to_have_text(re.compile("board connected"))
        for seg in ("T4", "D6", "S9"):  # the whole visit, the darts thrown while away among it
            expect(page.locator('.visit .dart[data-seg="%s"]' % seg)).to_have_count(1)
        expect(page.locator('tr[data-side="0"] td[data-bed="4"]')).to_have_text("⊗")
        page.reload()  # and a page opened again mid-visit shows the same
        expect(page.locator("#status")).to_have_text(re.compile("board connected"))
        expect(page.locator(".visit .dart")).to_have_count(3)
        shut(page)
    finally:
        link.close()
    assert game.req("stats")["stats"]["web"]["faults"] == 0

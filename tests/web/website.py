"""A virtual board with `hapenny web` on it (the CLI, in its own process),
as the browser tests drive it: its snapshot, its commands, a wait on what
it shows."""
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from hapenny.sim.board import VirtualBoard


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Page:
    """A client of a scoreboard's web API at `url`, as a page is: its
    snapshot, its commands (with the pairing code `code`, if any), a wait
    on what it shows."""
    WAIT_S = 30.0  # a bound on waiting only

    def __init__(self, url, code=None):
        self.url = url
        self.code = code

    def snapshot(self):
        with urllib.request.urlopen(self.url + "api/snapshot", timeout=5) as r:
            return json.loads(r.read())

    def cmd(self, **body):
        """A command through the server to the board itself (the server owns the port)."""
        headers = {"Content-Type": "application/json"}
        if self.code:
            headers["X-Hapenny-Code"] = self.code
        req = urllib.request.Request(self.url + "api/cmd", data=json.dumps(body).encode(), method="POST",
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())

    def wait(self, cond, timeout=None):
        end = time.monotonic() + (timeout or self.WAIT_S)
        while True:
            s = self.snapshot()
            if cond(s):
                return s
            assert time.monotonic() < end, s
            time.sleep(0.05)


class Site(Page):
    """`code`: the pairing code the server asks for (None: none, as on this
    computer alone); commands send it."""

    def __init__(self, tmp, code=None):
        self.vb = VirtualBoard(board_dir=tmp / "flash", fast=True).start()  # no timing measured here
        self.code = code
        self.http = free_port()
        self.url = "http://127.0.0.1:%d/" % self.http
        self.start_server()

    def start_server(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "hapenny.cli", "web", "--port", self.vb.port,
                                      "--listen", "127.0.0.1:%d" % self.http]
                                     + (["--code", self.code] if self.code else []),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        while line and "open http" not in line:
            line = self.proc.stdout.readline()
        if self.code:
            assert line.startswith("open %s#code=%s" % (self.url, self.code)), line
        else:
            assert "open %s" % self.url in line, line
        self.wait(lambda s: s["connected"] and s["config"] is not None)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.vb.stop()

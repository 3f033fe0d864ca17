"""`hapenny deploy --port <board on the network>`: the firmware copied over
the board's own web server (firmware/shove/update.py), guarded by the
owner code that only USB sets or shows (`hapenny wifi --owner-code`).

The same checks as over USB (deploy.check_board: the board's chip, its
MicroPython's .mpy version, architecture and the profile it keeps) run on
the host before anything is sent; only files whose hash differs from the
board's go, in pieces of the server's body size, each file's size and hash
checked by the board; the commit makes the board switch at its next start,
whole, whatever cuts it."""
import hashlib
import http.client
import json
import os
import sys
import time
from urllib.parse import quote

from hapenny import firmware
from hapenny.deploy import DeployError, check_board, default_profile, profile_chip_problem
from hapenny.netlink import resolve

OWNER_HEADER = "X-Hapenny-Owner"
PIECE = 512  # the board server's body bound (httpd.py: _BODY_MAX)
STEP_S = 30.0  # one request's answer: the board hashes its files for the first
TOPS = ("boot.py", "main.py", "profile.json")


class Board:
    """The update routes of one board on the network."""

    def __init__(self, addr, owner):
        self.addr = addr
        self.owner = owner
        self.ip = resolve(addr)
        self.sent = []  # (method, path) of every request, in order

    def request(self, method, path, body=b"", timeout=STEP_S):
        """(status, reply object); DeployError when the board cannot be reached."""
        self.sent.append((method, path))
        h = {"Host": str(self.addr), "Content-Type": "application/octet-stream", "Content-Length": str(len(body))}
        if self.owner:
            h[OWNER_HEADER] = self.owner
        conn = http.client.HTTPConnection(self.ip, self.addr.port, timeout=timeout)
        try:
            conn.request(method, path, body, h)
            resp = conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise DeployError("the board at %s stopped answering in the middle of the update (%s): the firmware it "
                              "runs is whole; run the deploy again" % (self.addr, e or type(e).__name__)) from e
        finally:
            conn.close()
        try:
            reply = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            reply = {}
        return resp.status, reply

    def ok(self, method, path, body=b""):
        status, reply = self.request(method, path, body)
        if status == 200 and reply.get("ok") is True:
            return reply
        if status == 403 and reply.get("error") == "owner":
            raise DeployError("the board at %s refused the update: %s; nothing was changed"
                              % (self.addr, reply.get("msg")))
        if status == 429:
            raise DeployError("the board at %s refuses updates for a while after wrong codes: wait, then give the "
                              "right owner code; nothing was changed" % self.addr)
        if status == 404 and reply.get("error") == "not_found":
            raise DeployError("the board at %s has no update routes: its firmware is older than updates over the "
                              "network; deploy once over USB" % self.addr)
        raise DeployError("the board at %s refused the update: %s (%s, HTTP %d); the firmware it runs is whole"
                          % (self.addr, reply.get("msg"), reply.get("error"), status))


def _prepare(reply, profile, debug):
    """(target, {path: bytes}) for the board as its `files` reply describes it, after the .mpy checks."""
    board = reply["board"]
    target = "sim" if board["platform"] == "linux" else firmware.esp32_target(board.get("mpy"))
    files = firmware.build(target, debug=debug)
    check_board(board, target, files)
    local = {rel: path.read_bytes() for rel, path in files.items()}
    if profile is not None or reply.get("profile") is None:
        local["profile.json"] = firmware.profile_path(profile or default_profile(board)).read_bytes()
        text = local["profile.json"].decode("utf-8", "replace")
    else:
        text = reply["profile"]
        why = firmware.profile_problem(text)
        if why:
            raise DeployError("the board's profile.json is refused by this firmware (%s): deploy with --profile "
                              "NAME; nothing was sent" % why)
    if target != "sim":
        why = profile_chip_problem(board, text)
        if why:
            raise DeployError(why + "; nothing was sent")
    return target, local


def send_file(b, rel, data):
    """One file in pieces; the last names its size and hash, which the board checks."""
    sha = hashlib.sha256(data).hexdigest()
    at = 0
    while True:
        piece = data[at:at + PIECE]
        last = at + len(piece) >= len(data)
        q = "path=%s&at=%d" % (quote(rel, safe="/"), at)
        if last:
            q += "&size=%d&sha=%s" % (len(data), sha)
        b.ok("PUT", "/api/update/file?" + q, piece)
        at += len(piece)
        if last:
            return


def deploy(addr, owner=None, profile=None, out=sys.stderr, force=False, debug=False, boot_timeout=60.0):
    """Copy what changed to the board at `addr` (netlink.Address) and switch
    to it; returns a summary as deploy.deploy does."""
    owner = owner or os.environ.get("HAPENNY_OWNER")
    if not owner:
        raise DeployError("updates over the network need the board's owner code: give it with --owner or "
                          "$HAPENNY_OWNER (over USB, `hapenny wifi --owner-code` shows it); nothing was sent")
    started = time.monotonic()
    b = Board(addr, owner)
    reply = b.ok("GET", "/api/update/files")
    target, local = _prepare(reply, profile, debug)
    have = reply["files"]
    changed = [rel for rel in sorted(local) if force or have.get(rel) != hashlib.sha256(local[rel]).hexdigest()]
    stale = [rel for rel in sorted(have) if rel.startswith(("shove/", "web/")) and rel not in local]
    summary = {"port": str(addr), "target": target, "copied": changed, "removed": stale, "total": len(local)}
    if not changed and not stale:
        out.write("the board at %s runs this firmware already: nothing sent\n" % addr)
        summary["seconds"] = round(time.monotonic() - started, 2)
        return summary
    b.ok("POST", "/api/update/begin")
    for i, rel in enumerate(changed):
        out.write("\r[%d/%d] %s" % (i + 1, len(changed), rel))
        send_file(b, rel, local[rel])
    out.write("\n")
    staged = len(changed)
    if stale:
        send_file(b, ".remove", "\n".join(stale).encode())
        staged += 1
    b.ok("POST", "/api/update/commit?files=%d" % staged)
    out.write("%d of %d files sent, %d stale to remove, to %s (%s); the board restarts into them\n"
              % (len(changed), len(local), len(stale), addr, target))
    want = {rel: hashlib.sha256(data).hexdigest() for rel, data in local.items()}
    wrong = wait_back(b, boot_timeout, lambda back: [rel for rel in changed if back.get(rel) != want[rel]]
                      + [rel for rel in stale if rel in back])
    if wrong:
        raise DeployError("the board at %s came back without the new %s: run the deploy again"
                          % (addr, ", ".join(wrong[:3])))
    out.write("board is up with the new firmware at %s\n" % addr)
    summary["seconds"] = round(time.monotonic() - started, 2)
    return summary


def wait_back(b, timeout, wrong):
    """Once the board answers again after its restart: what of its files is
    still `wrong` (a list; empty when the new firmware is in place)."""
    end = time.monotonic() + timeout
    last = None
    while True:
        time.sleep(0.5)
        try:
            status, reply = b.request("GET", "/api/update/files", timeout=10.0)
            if status == 200 and reply.get("ok"):
                last = wrong(reply["files"])
                if not last:
                    return last
        except DeployError:
            pass
        if time.monotonic() > end:
            if last is not None:
                return last
            raise DeployError("the board at %s did not come back within %d s of the update: it restarts into "
                              "a whole firmware, old or new; look at it over USB" % (b.addr, timeout))


"""`hapenny deploy` over the network (host/hapenny/netdeploy.py,
firmware/shove/update.py, boot.py's switch) on a virtual board joined to
its virtual Wi-Fi: the owner code USB alone shows, only what changed sent,
and the power cut at the update's steps, the running firmware's writes
(each staged piece, the marker: the flash's own cut) and boot.py's moves
(cut_boot_flash), each leaving a board that starts with a whole firmware,
old or new, which a later deploy (or the next start) completes.

make test cuts at one step of each kind; HAPENNY_SOAK=1 (make soak) at every
one, and drops the connection without a cut."""
import hashlib
import io
import itertools
import os
import threading
import time

import pytest

from hapenny import firmware, netdeploy
from hapenny.deploy import DeployError
from hapenny.netlink import Address
from test_board_web import WAIT, Board

SOAK = os.environ.get("HAPENNY_SOAK") == "1"
FW = ("shove/", "web/", "boot.py", "main.py")


def _sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def board():
    b = Board()
    b.owner = b.req("wifi", owner=True)["owner"]
    b.addr = Address("127.0.0.1", b.vb.web_port)
    new = {rel: p.read_bytes() for rel, p in firmware.build("sim").items()}
    old = {rel: p.read_bytes() for rel, p in firmware.build("sim", debug=True).items()}
    # the "old" firmware: two modules as the debug build makes them (other bytes, the same code), a page
    # file of another day, and a file the new firmware no longer has (small ones: make soak cuts every
    # write of their update)
    b.old = {"shove/variants.mpy": old["shove/variants.mpy"], "shove/events.mpy": old["shove/events.mpy"],
             "web/index.html.gz": b"an older page", "web/gone.js.gz": b"a file of an earlier firmware"}
    b.new = {rel: new[rel] for rel in b.old if rel in new}
    yield b
    b.ser.close()
    b.vb.stop()


def up(b):
    """The board answering on its own server again (it rejoins its network at every start)."""
    end = time.monotonic() + WAIT
    while True:
        try:
            if b.http("GET", "/api/access").status == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < end, "the board's server did not come back"
        time.sleep(0.2)


def firmware_files(b):
    return {p: d for p, d in b.vb.files().items() if p.startswith(FW)}


def make_old(b):
    b.vb.edit_flash(files=b.old)
    up(b)


def which(b):
    """'old' or 'new': the changed files all as one firmware or the other (never a mix), nothing staged left
    in force, and the board serving."""
    files = b.vb.files()
    got = {rel: files.get(rel) for rel in b.old}
    want_new = dict(b.new, **{"web/gone.js.gz": None})
    assert got in (b.old, want_new), {rel: _sha(d) if d else None for rel, d in got.items()}
    return "old" if got == b.old else "new"


def deploy(b, **kw):
    return netdeploy.deploy(b.addr, owner=b.owner, out=io.StringIO(), **kw)


def update(b, headers, method="GET", path="/api/update/files", body=None):
    return b.http(method, path, body, headers)


def test_the_owner_code_is_usbs_own_and_never_said_over_the_network(board):
    code = board.owner
    assert len(code) == 10 and code.isdigit() and "0" not in code and code != board.code
    assert board.req("wifi", owner=True)["owner"] == code  # made once, kept
    assert code not in json_text(board.req("wifi")) and code not in json_text(board.req("info"))
    for path in ("/api/snapshot", "/api/access", "/"):
        assert code.encode() not in board.http("GET", path).body
    refused = board.cmd({"cmd": "wifi", "owner": True})
    assert refused.status == 403 and refused.json()["error"] == "usb_only" and code not in refused.body.decode()


def json_text(obj):
    import json

    return json.dumps(obj)


@pytest.mark.parametrize("method, path, body", [("GET", "/api/update/files", None),
                                                ("POST", "/api/update/begin", b""),
                                                ("PUT", "/api/update/file?path=shove/rules.mpy&at=0", b"evil"),
                                                ("POST", "/api/update/commit?files=0", b"")])
def test_without_the_owner_code_an_update_changes_nothing(board, method, path, body):
    before = firmware_files(board)
    tries = [{}, {"X-Hapenny-Code": board.code},  # the pairing code alone opens nothing of it
             {"X-Hapenny-Owner": board.code}, {"X-Hapenny-Owner": "1234567891"}]
    for h in tries:
        a = update(board, h, method, path, body)
        assert a.status in (403, 429) and a.json()["error"] in ("owner", "slow_down"), (h, a.status, a.body)
        assert board.owner.encode() not in a.body
    # wrong guesses are locked out as the pairing code's are: the right one too, until the lock has gone
    a = update(board, {"X-Hapenny-Owner": "1234567891"})
    assert a.status == 429 and int(a.headers["retry-after"]) >= 1
    assert update(board, {"X-Hapenny-Owner": board.owner}).status == 429
    board.vb.advance(31000)
    assert update(board, {"X-Hapenny-Owner": board.owner}).status == 200
    after = firmware_files(board)
    assert after == before and not [p for p in board.vb.files() if p.startswith("upd")]


def test_a_deploy_sends_only_what_changed_and_the_board_restarts_into_it(board, monkeypatch):
    make_old(board)
    assert which(board) == "old"
    sent = []
    real = netdeploy.send_file
    monkeypatch.setattr(netdeploy, "send_file", lambda b, rel, data: (sent.append(rel), real(b, rel, data)))
    summary = deploy(board)
    assert sorted(summary["copied"]) == ["shove/events.mpy", "shove/variants.mpy", "web/index.html.gz"]
    assert summary["removed"] == ["web/gone.js.gz"]
    assert sorted(sent) == [".remove", "shove/events.mpy", "shove/variants.mpy", "web/index.html.gz"]
    assert which(board) == "new"
    assert not [p for p in board.vb.files() if p.startswith("upd")]
    board.ser.close()
    board.open()  # it plays on the new firmware
    assert board.req("new", players=["Ann", "Bob"])["ok"] is True
    sent.clear()
    assert deploy(board)["copied"] == [] and sent == []  # nothing changed: nothing sent


def test_without_the_owner_code_the_host_sends_nothing(board, monkeypatch):
    monkeypatch.delenv("HAPENNY_OWNER", raising=False)
    with pytest.raises(DeployError, match="owner code"):
        netdeploy.deploy(board.addr, owner=None, out=io.StringIO())
    with pytest.raises(DeployError, match="wrong owner code"):
        netdeploy.deploy(board.addr, owner="1234567891", out=io.StringIO())
    board.vb.advance(31000)


def _cut_run(b, arm):
    """A deploy with the power cut where `arm` set it: whether the cut came (the board was held), and the
    deploy's outcome (None, or its error) once the board is up again."""
    result = []

    def run():
        try:
            result.append(deploy(b))
        except Exception as e:  # the cut drops its connection
            result.append(e)

    t = threading.Thread(target=run, daemon=True)
    b.vb.held.clear()  # (an earlier cut's)
    arm()
    t.start()
    held = False
    while t.is_alive() and not held:
        held = b.vb.held.wait(0.2)
    if held:
        b.vb.power_cut()
    t.join(2 * WAIT)
    assert not t.is_alive()
    up(b)
    return held, result[0]


# make test: one cut of each kind, at a write known to be the update's (the 9th: a staged piece; the 3rd
# of the next start: a move); make soak: every one from the first until the update runs past the last
STEPS = itertools.count(1) if SOAK else None


def test_a_power_cut_at_any_write_of_an_update_leaves_a_whole_firmware(board):
    """The flash's own cut in the op-th erase or program from the update's start (its staged pieces, the
    marker): the board starts old or new, and the next deploy completes it."""
    for op in STEPS or (9,):
        make_old(board)
        held, _ = _cut_run(board, lambda: board.vb.cut_flash(op))
        state = which(board)
        if not SOAK:  # the 9th write is a staged piece's: the running firmware is untouched
            assert held and state == "old"
        if not held:
            assert state == "new"  # past the update's last write: it completed
            break
        deploy(board)
        assert which(board) == "new" and not [p for p in board.vb.files() if p.startswith("upd")]


def test_a_power_cut_at_any_step_of_the_switch_at_boot_leaves_a_whole_firmware(board):
    """The cut inside boot.py's moves (the stale files' removal, each rename, the marker's removal): the next
    start finishes them, so the deploy that made them sees the new firmware come up."""
    for op in STEPS or (3,):
        make_old(board)
        marked = []
        real = netdeploy.Board.ok

        def ok(self, method, path, body=b""):
            if path.startswith("/api/update/commit"):
                board.vb.cut_boot_flash(op)  # the start after the commit's reset
                marked.append(path)
            return real(self, method, path, body)

        netdeploy.Board.ok = ok
        try:
            held, outcome = _cut_run(board, lambda: None)
        finally:
            netdeploy.Board.ok = real
        assert marked, (held, outcome)
        assert held or SOAK  # the 3rd is a move's (make test's sample)
        assert not isinstance(outcome, Exception), outcome  # the deploy saw the new firmware come up
        assert which(board) == "new" and not [p for p in board.vb.files() if p.startswith("upd")]
        if not held:  # past the switch (the game's own writes): every step of it was cut
            break


@pytest.mark.skipif(not SOAK, reason="make soak (make test's cuts drop the connection with the power)")
def test_a_dropped_connection_leaves_the_old_firmware_and_the_next_deploy_completes_it(board, monkeypatch):
    make_old(board)
    real = netdeploy.send_file
    sent = []

    def drop_after_one(b, rel, data):
        if sent:
            raise DeployError("the connection dropped")
        sent.append(rel)
        real(b, rel, data)

    monkeypatch.setattr(netdeploy, "send_file", drop_after_one)
    with pytest.raises(DeployError, match="dropped"):
        deploy(board)
    assert which(board) == "old" and "upd.go" not in board.vb.files() and sent
    monkeypatch.setattr(netdeploy, "send_file", real)
    deploy(board)
    assert which(board) == "new"


def test_the_board_checks_each_file_and_the_whole_before_the_switch(board):
    make_old(board)
    h = {"X-Hapenny-Owner": board.owner}
    assert update(board, h, "POST", "/api/update/begin", b"").status == 200
    data = board.new["shove/variants.mpy"]
    a = update(board, h, "PUT", "/api/update/file?path=shove/variants.mpy&at=0&size=%d&sha=%s"
               % (len(data), _sha(data + b"x")), data[:512])
    assert a.status == 400 and a.json()["error"] == "bad_file"
    a = update(board, h, "PUT", "/api/update/file?path=shove/variants.mpy&at=512", data[512:])
    assert a.status == 409 and a.json()["error"] == "out_of_order"
    for bad in ("../boot.py", "/boot.py", "wifi.json", "owner.key", "shove/x.mpy.part"):
        a = update(board, h, "PUT", "/api/update/file?path=%s&at=0" % bad, b"x")
        assert a.status == 400 and a.json()["error"] == "bad_path", bad
    a = update(board, h, "PUT", "/api/update/file?path=web/index.html.gz&at=0", b"half")  # never finished
    assert a.status == 200
    a = update(board, h, "POST", "/api/update/commit?files=1", b"")
    assert a.status == 409 and a.json()["error"] == "incomplete"
    assert which(board) == "old" and "upd.go" not in board.vb.files()

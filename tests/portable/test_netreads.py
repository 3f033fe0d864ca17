# The reads a link over the network asks most (shove/webgate.py READS: its
# hello `info`, `state`, and `leds`, which `play` asks after each dart) are
# answered by the command route itself as the handlers answer them, with no
# line through the handlers (request.py, extra.py: loading them leaves the
# matrix unread tens of ms on the chip); any other form of them, and every
# other command, goes through the handlers. Table-driven over a route's
# parts. Runs in both interpreters.
import json

from shove import webgate

PAIR = b"5372914826"
STATE = {"phase": "play", "turn": 0}
INFO = {"version": "1.0", "protocol": 1, "board": "generic-8x8"}


class Keeper:
    def __init__(self, game):
        self.game = game

    def state(self):
        return dict(STATE)


class Tx:
    waits = 0


class Strip:
    last = bytes([1, 2, 3, 4, 5, 6])


class Net:
    def report(self):
        return {"state": "joined", "address": "192.168.1.20"}


class Cmds:
    """A route's command handlers, as commands.Commands offers them: what goes through them is counted."""

    def __init__(self, game=True):
        self.keeper = Keeper(game)
        self.tx = Tx()
        self.strip = Strip()
        self.lines = []
        self.extras = []

    def tick(self):
        pass

    def handle_line(self, line):
        self.lines.append(bytes(line))
        self.tx.put('{"id":null,"ok":true,"via":"handlers"}')

    def extra(self, name, cmd, after):
        self.extras.append(name)
        return dict(INFO, wifi={"state": "off"})


class Routes:
    def __init__(self, c):
        self.c = c
        self.net = Net()
        self.code = PAIR
        self.fails = self.until = self.ofails = self.ountil = 0
        self.info = None

    def keep_info(self):  # webroutes.Routes.keep_info's, over this double's handlers
        info = self.c.extra("info", {}, [])
        info.pop("wifi", None)
        self.info = info


class Req:
    def __init__(self, body):
        self.ctype = "application/json"
        self.code = PAIR
        self.body = memoryview(body)
        self.answer = None
        self.c = object()  # its connection, which a handed-over command is answered on
        self.waiting = False

    def later(self):
        self.waiting = True

    def reply(self, status, text, ctype="application/json", extra=""):
        self.answer = (status, json.loads("".join(text) if isinstance(text, list) else text))

    def error(self, status, code, msg, extra=""):
        self.answer = (status, {"error": code})


HANDLERS = None  # handed over, to run in the server's next steps (webroutes.Routes.command)
# (the command's body, whether a game is on, whether `info` is kept, the reply, whether it was handed over)
TABLE = (
    (b'{"cmd":"info"}', True, True, dict(INFO, id=None, ok=True, wifi=Net().report()), False),
    (b'{"cmd":"info"}', True, False, HANDLERS, True),  # not kept yet: its module is loaded in steps of its own
    (b'{"cmd":"state"}', True, False, {"id": None, "ok": True, "state": STATE}, False),
    (b'{"cmd":"state"}', False, False, {"id": None, "ok": True, "state": None}, False),
    (b'{"cmd":"leds"}', True, False, {"id": None, "ok": True, "pixels": [[1, 2, 3], [4, 5, 6]]}, False),
    (b'{"cmd":"state","id":7}', True, True, HANDLERS, True),  # another form: as over USB
    (b'{"cmd": "state"}', True, True, HANDLERS, True),
    (b'{"cmd":"info","more":1}', True, True, HANDLERS, True),
    (b'{"cmd":"leds"} ', True, True, HANDLERS, True),
    (b'{"cmd":"new"}', True, True, HANDLERS, True),
    (b'{"cmd":"hint"}', True, True, HANDLERS, True),
)


def test_the_links_reads_are_answered_by_the_route_as_the_handlers_answer_them():
    for body, game, kept, reply, handed in TABLE:
        c = Cmds(game)
        req = Req(body)
        w = Routes(c)
        w.pending = None
        if kept:
            w.keep_info()
        webgate.cmd(w, req, 0)
        if handed:  # no answer yet: the command, whole, waits for the handlers with its connection
            assert req.answer is None and req.waiting and w.pending == [req.c, body, None], body
        else:
            assert req.answer == (200, reply) and not req.waiting and w.pending is None, (body, req.answer)
        assert c.lines == [], (body, c.lines)


def test_info_once_kept_is_not_made_again_and_its_network_state_is_asked_each_time():
    c = Cmds()
    w = Routes(c)
    w.keep_info()
    for addr in ("192.168.1.20", "192.168.1.31"):
        w.net.report = lambda a=addr: {"state": "joined", "address": a}
        req = Req(webgate.READS[0])
        webgate.cmd(w, req, 0)
        assert req.answer[1]["wifi"]["address"] == addr and req.answer[1]["board"] == "generic-8x8"
    assert c.extras == ["info"] and c.lines == []


def test_a_read_without_the_pairing_code_is_refused_and_reads_nothing():
    c = Cmds()
    req = Req(webgate.READS[1])
    req.code = None
    webgate.cmd(Routes(c), req, 0)
    assert req.answer == (403, {"error": "pairing"}) and c.lines == []

# The board as a player: when a side of the game is a computer, the board
# throws its visit itself, one dart at a time at the configured pace
# (`cpu_ms`), and makes its player change. Each dart is stored and reported
# like any other (`dart` event, "src": "cpu"), so undo and a power cut treat
# it like a person's. The dart is drawn from the throw model with a generator
# seeded by the game's seed and its move count: after an undo or a reboot the
# same position gives the same dart, and a test can predict every one.
# The strategy's modules are loaded only when a game has a computer side.
from shove import protocol, rules
from shove.scanner import ticks_diff

UNDO_PAUSE = 3  # after an undo, wait this many paces: time for another undo


class Autoplay:
    def __init__(self):
        self.game = None  # the game the clock below belongs to
        self.moves = 0
        self.since = 0
        self.wait = 0
        self.rng = None

    def step(self, app, now):
        g = app.game
        if g is None or g.phase == rules.OVER or not g.cpu[g.turn]:
            self.game = None
            return
        m = g.moves()
        pace = app.config["cpu_ms"]
        if g is not self.game or m != self.moves:
            # the game moved: the pace starts again (longer after an undo)
            self.wait = pace * UNDO_PAUSE if g is self.game and m < self.moves else pace
            self.game = g
            self.moves = m
            self.since = now
            return
        if ticks_diff(now, self.since) < self.wait:
            return
        self.since = now  # a refused step is tried again a pace later
        try:
            if g.phase == rules.HOLD:
                st, evs = app.do_next()
                for name, fields in evs:
                    app.emit(name, fields)
            else:
                app._after_dart(app.do_throw(self.dart(g), "cpu"))
        except protocol.ProtoError as e:  # the flash refused: nothing happened
            app.emit("refused", {"src": "cpu", "error": e.code, "msg": e.msg})

    def dart(self, g):
        """Where the computer's next dart lands (a segment code)."""
        from shove import board_geom, cpu, throwing

        p = cpu.player(g.cpu[g.turn])
        aim = p.choose(g)
        if self.rng is None:
            self.rng = throwing.Rng()
        self.rng.seed(g.seed + 7919 * g.moves())
        return throwing.throw(board_geom.face(board_geom.DEFAULT_FACE), p.sigma, aim, self.rng)

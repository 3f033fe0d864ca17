# LED bed indicators: a pure renderer from game state to the strip's frame.
#
# Layout (bed-major): for each bed on the strip, `per_side` pixels for the
# left chalk square then `per_side` for the right, then `status` pixels.
# Two sides: left is side 0, right side 1, like the two ends of a pub
# board. More sides: left is the side to throw, right the opponent leading
# on that bed (most marks, ties to the next in turn order), in its colour.
# One side: the left square only. A game with more beds than the strip has
# shows its first `beds` beds (the scoreboard shows all). Lit pixels: marks
# scaled to `per_side`;
# a closed bed's square is lit at full strength.
# Status: darts left, in the thrower's colour; during hold all status pixels
# glow dim white (pull the darts); a bull-off lights them in the thrower's
# colour. A gift lights the receiving square white for FLASH_MS, steady:
# a blink would need frames written while a dart may come. A win runs a
# chase in the winner's colour over the whole strip. A coach's hint blinks
# the thrower's square of the recommended bed white for HINT_MS (the status
# pixels when the advice is a bed not on the strip, or no bed).
from shove import rules
from shove.scanner import ticks_diff

FLASH_MS = 600
HINT_MS = 4000
COLOURS = (
    (255, 40, 0), (0, 90, 255), (0, 200, 40), (200, 0, 200),
    (255, 180, 0), (0, 200, 200), (255, 255, 255), (120, 60, 20),
)
_DIM = 6  # open-square pixels: a faint glow so the bed is visible


class Renderer:
    def __init__(self, beds=9, per_side=3, status=3, brightness=64):
        self.beds = beds
        self.per_side = per_side
        self.status = status
        self.count = beds * 2 * per_side + status
        self.frame = bytearray(3 * self.count)
        self.brightness = brightness
        self.flash_at = -1  # tick the last gift's flash began; -1: none (ticks wrap, so no deadline)
        self.flash = []  # (side, bed index) receiving a gift
        self.hint_at = -1  # tick a hint began; -1: none
        self.hint_bed = -1  # its bed index; -1: the status pixels

    def hint(self, bed_index, now_ms):
        self.hint_bed = bed_index if bed_index < self.beds else -1
        self.hint_at = now_ms

    def _hinting(self, now_ms):
        if self.hint_at < 0:
            return False
        if 0 <= ticks_diff(now_ms, self.hint_at) < HINT_MS:
            return True
        self.hint_at = -1
        return False

    def gift(self, gifts, bed_index, now_ms):
        self.flash = [(s, bed_index) for s, _ in gifts]
        self.flash_at = now_ms

    def _flashing(self, now_ms):
        if self.flash_at < 0:
            return False
        if 0 <= ticks_diff(now_ms, self.flash_at) < FLASH_MS:
            return True
        self.flash_at = -1  # over: forget it, so the clock's wrap cannot revive it
        return False

    def _px(self, i, rgb, scale=255):
        b = self.brightness * scale // 255
        f = self.frame
        f[3 * i] = rgb[0] * b // 255
        f[3 * i + 1] = rgb[1] * b // 255
        f[3 * i + 2] = rgb[2] * b // 255

    def _square(self, game, bed_i, slot, side, now_ms):
        base = (bed_i * 2 + slot) * self.per_side
        if side < 0:
            for k in range(self.per_side):
                self._px(base + k, (0, 0, 0))
            return
        m = game.marks[side * game.nb + bed_i]
        full = game.rules.marks
        lit = (m * self.per_side + full - 1) // full
        flashing = self._flashing(now_ms) and (side, bed_i) in self.flash
        if bed_i == self.hint_bed and side == game.turn and self._hinting(now_ms):
            flashing = (now_ms // 250) % 2 == 0
        for k in range(self.per_side):
            if flashing:
                self._px(base + k, (255, 255, 255))
            elif k < lit:
                self._px(base + k, COLOURS[side], 255 if m == full else 110)
            else:
                self._px(base + k, COLOURS[side], _DIM)

    def _leader(self, game, bed_i):
        best = -1
        top = -1
        for step in range(1, game.n):
            s = (game.turn + step) % game.n
            m = game.marks[s * game.nb + bed_i]
            if m > top:
                top = m
                best = s
        return best

    def render(self, game, now_ms):
        """Fill self.frame for `game` (None: all dark) at time now_ms."""
        f = self.frame
        for i in range(len(f)):
            f[i] = 0
        if game is None:
            return f
        if game.phase == rules.OVER:
            return self._win(game.winner, now_ms)
        shown = min(self.beds, game.nb)
        for b in range(shown):
            if game.n == 1:
                self._square(game, b, 0, 0, now_ms)
                self._square(game, b, 1, -1, now_ms)
            elif game.n == 2:
                self._square(game, b, 0, 0, now_ms)
                self._square(game, b, 1, 1, now_ms)
            else:
                self._square(game, b, 0, game.turn, now_ms)
                self._square(game, b, 1, self._leader(game, b), now_ms)
        base = self.beds * 2 * self.per_side
        colour = COLOURS[game.turn]
        blink = self.hint_bed < 0 and self._hinting(now_ms) and (now_ms // 250) % 2 == 0
        for k in range(self.status):
            if blink:
                self._px(base + k, (255, 255, 255))
            elif game.phase == rules.HOLD:
                self._px(base + k, (255, 255, 255), 40)
            elif k < game.darts_left:
                self._px(base + k, colour)
        return f

    def _win(self, winner, now_ms):
        colour = COLOURS[winner % len(COLOURS)]
        head = (now_ms // 40) % self.count
        for i in range(self.count):
            d = (head - i) % self.count
            if d < 6:
                self._px(i, colour, 255 - d * 40)
            else:
                self._px(i, colour, 20)
        return self.frame

    def animating(self, game, now_ms):
        """True while the frame changes with time alone (flash, win chase)."""
        if game is None:
            return False
        if self.flash_at < 0 and self.hint_at < 0:  # the usual case, checked without a call
            return game.phase == rules.OVER
        return game.phase == rules.OVER or self._flashing(now_ms) or self._hinting(now_ms)

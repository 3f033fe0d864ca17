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
# With no game the status pixels show the network's state while one is set
# (`net`, set by shove/wifi.py): joining blue, joined green, failed red, the
# set-up access point open violet (shove/wifiap.py); a
# board without a network leaves them dark, as the rest.
# The pairing code (digits 1 to 9, shove/wifiset.py), while someone holds
# the next button for it (shove/request.py): the status pixels lit white
# mark where it begins, then each digit lights bed N (both its squares,
# white) for CODE_ON_MS after a dark CODE_GAP_MS, so "5, 5" reads as two
# digits; then it starts again. It takes the whole strip, over any game.
from shove import rules, ticks_diff

FLASH_MS = 600
HINT_MS = 4000
COLOURS = (
    (255, 40, 0), (0, 90, 255), (0, 200, 40), (200, 0, 200),
    (255, 180, 0), (0, 200, 200), (255, 255, 255), (120, 60, 20),
)
# the network joining, joined, failed; the set-up access point open (shove/wifiap.py)
NET_COLOURS = ((0, 90, 255), (0, 200, 40), (255, 0, 0), (160, 0, 255))
_DIM = 6  # open-square pixels: a faint glow so the bed is visible
_LIT = 110  # lit pixels of a square not yet closed (a closed one: full)
CODE_START_MS = 1200  # the status pixels: the code begins
CODE_GAP_MS = 400  # dark before each digit
CODE_ON_MS = 1000  # a digit's bed lit
_WHITE = 9 * len(COLOURS)  # shade entries after the side colours': a flash, a hint
_HOLD = _WHITE + 3  # dim white: pull the darts


class Renderer:
    def __init__(self, beds=9, per_side=3, status=3, brightness=64):
        self.beds = beds
        self.per_side = per_side
        self.status = status
        self.count = beds * 2 * per_side + status
        self.frame = bytearray(3 * self.count)
        self._dark = bytes(3 * self.count)
        self._tab = bytearray(3 * (3 * len(COLOURS) + 2))  # see _shades
        self._tab_b = -1  # the brightness it was made for
        self.brightness = brightness
        self.flash_at = -1  # tick the last gift's flash began; -1: none (ticks wrap, so no deadline)
        self.flash = []  # (side, bed index) receiving a gift
        self.hint_at = -1  # tick a hint began; -1: none
        self.hint_bed = -1  # its bed index; -1: the status pixels
        self.net = 0  # the network's state (shove/wifi.py: 0 none set, 1 joining, 2 joined, 3 failed; 4 set-up AP)
        self.code = b""  # the pairing code's digits (1..9), spelled while code_at >= 0
        self.code_at = -1  # tick the spelling began; -1: not shown

    def show_code(self, code, now_ms):
        """Spell `code` (a string of digits 1..9, each at most `beds`) from
        now on, until hide_code(); False (and nothing shown) for one the
        strip cannot spell."""
        if not code:
            return False
        digits = bytearray(len(code))
        for i in range(len(code)):
            d = ord(code[i]) - 48
            if not 1 <= d <= self.beds:
                return False
            digits[i] = d
        self.code = digits
        self.code_at = now_ms
        return True

    def hide_code(self):
        self.code_at = -1

    def _spell(self, now_ms):
        """The frame at now_ms of the code's spelling: a frame a call, no allocation."""
        self._shades()
        step = CODE_GAP_MS + CODE_ON_MS
        t = ticks_diff(now_ms, self.code_at) % (CODE_START_MS + len(self.code) * step)
        if t < CODE_START_MS:
            self._fill(self.beds * 2 * self.per_side, self.status, _WHITE)
        else:
            t -= CODE_START_MS
            if t % step >= CODE_GAP_MS:
                n = 2 * self.per_side
                self._fill((self.code[t // step] - 1) * n, n, _WHITE)
        return self.frame

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
        self._shade(self.frame, 3 * i, rgb, scale)

    def _shades(self):
        """Each colour's bytes at each level for this brightness, made once:
        a frame is filled by copying them (a pixel's arithmetic for every
        frame was milliseconds of bytecode on the chip). Entry 9*c + 3*level
        (levels: closed, lit, open) for side colour c; _WHITE and _HOLD."""
        b = self.brightness
        if b == self._tab_b:
            return
        t = self._tab
        for c in range(len(COLOURS)):
            for lvl in range(3):
                self._shade(t, 9 * c + 3 * lvl, COLOURS[c], (255, _LIT, _DIM)[lvl])
        self._shade(t, _WHITE, (255, 255, 255), 255)
        self._shade(t, _HOLD, (255, 255, 255), 40)
        self._tab_b = b

    def _shade(self, t, o, rgb, scale):
        """rgb at scale/255 of the brightness, into t at byte o."""
        b = self.brightness * scale // 255
        t[o] = rgb[0] * b // 255
        t[o + 1] = rgb[1] * b // 255
        t[o + 2] = rgb[2] * b // 255

    def _fill(self, px, n, o):
        """n pixels from pixel px with shade entry o."""
        t = self._tab
        r = t[o]
        g = t[o + 1]
        b = t[o + 2]
        f = self.frame
        for p in range(3 * px, 3 * (px + n), 3):
            f[p] = r
            f[p + 1] = g
            f[p + 2] = b

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

    def render(self, game, now_ms, tick=None):
        """Fill self.frame for `game` (None: all dark) at time now_ms; with
        `tick`, tick() after each bed (a frame written while a dart may come
        must not leave the matrix unread for long)."""
        f = self.frame
        f[:] = self._dark
        if self.code_at >= 0:
            return self._spell(now_ms)
        if game is None:
            if self.net:
                base = self.beds * 2 * self.per_side
                for i in range(self.status):
                    self._px(base + i, NET_COLOURS[self.net - 1], _LIT)
            return f
        if game.phase == rules.OVER:
            return self._win(game.winner, now_ms)
        self._shades()
        flash = self._flashing(now_ms)
        hint = (2 if (now_ms // 250) % 2 == 0 else 1) if self._hinting(now_ms) else 0
        # the chalk squares, inline: a call a square or a pixel was most of
        # a frame's time on the chip
        n = game.n
        ps = self.per_side
        t = self._tab
        marks = game.marks
        nb = game.nb
        full = game.rules.marks
        turn = game.turn
        hb = self.hint_bed if hint else -1
        p = 0
        for b in range(min(self.beds, nb)):
            for slot in (0, 1):
                side = (0 if n < 3 else turn) if slot == 0 else -1 if n == 1 else 1 if n == 2 else self._leader(game, b)
                if side < 0:  # dark: cleared above
                    p += 3 * ps
                    continue
                if b == hb and side == turn:  # the hint's square blinks, gift or not
                    white = hint == 2
                else:
                    white = flash and (side, b) in self.flash
                if white:
                    lit = ps
                    o1 = _WHITE
                else:
                    m = marks[side * nb + b]
                    lit = (m * ps + full - 1) // full
                    o1 = 9 * side + (0 if m == full else 3)
                o2 = 9 * side + 6
                for k in range(ps):
                    o = o1 if k < lit else o2
                    f[p] = t[o]
                    f[p + 1] = t[o + 1]
                    f[p + 2] = t[o + 2]
                    p += 3
            if tick is not None:
                tick()
        base = self.beds * 2 * self.per_side
        if hint == 2 and self.hint_bed < 0:
            self._fill(base, self.status, _WHITE)
        elif game.phase == rules.HOLD:
            self._fill(base, self.status, _HOLD)
        else:
            self._fill(base, min(game.darts_left, self.status), 9 * game.turn)
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
        """True while the frame changes with time alone (flash, win chase, the code spelled)."""
        if self.code_at >= 0:
            return True
        if game is None:
            return False
        if self.flash_at < 0 and self.hint_at < 0:  # the usual case, checked without a call
            return game.phase == rules.OVER
        return game.phase == rules.OVER or self._flashing(now_ms) or self._hinting(now_ms)

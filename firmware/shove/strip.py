# When the strip may be written. A strip write blocks for ~30 us a pixel
# (and the frame takes ms to render): it is done while the scanner is
# locked out after a dart (it could not take another one anyway) or when no
# dart can score. While one can, a change of the game is written once it
# has waited QUIET_MS, which can block a scan for a frame's length: a
# contact shorter than that landing exactly then would be missed. A gift's
# flash does not force frames: after the dart its square shows lit (the
# frame written in the lockout) until the next moment no dart can score, or
# the flash's end, which does force one. The frame's rendering reads the
# matrix, which can re-arm the scanner before the write: the write then
# waits too, as a change does.
from shove import leds, rules, ticks_add, ticks_diff
from shove.scanner import LOCKOUT

QUIET_MS = 250  # write a pending frame anyway after this long


class Strip:
    """The strip's writes, paced: step() renders and writes a frame when
    one is due and may be written now. `waits`: the next frame is due only
    once time passes, at the tick `at` (ms; -1: no time set), so the loop
    may read in a quiet burst until then."""

    def __init__(self, renderer, board, tick, scanner):
        self.renderer = renderer
        self.board = board
        self.tick = tick  # a read of the matrix from inside the frame's rendering
        self.scanner = scanner  # which those reads step
        self.dirty = True  # the game changed since the last frame
        self.anim_dirty = False  # only an animation's step is waiting
        self.animated = False  # the renderer was animating at the last look
        self.since = 0  # tick a changed frame began to wait (0: none waits)
        self.last = bytes(3 * renderer.count)  # the frame on the strip
        self.diag = None  # the doctor holds the strip (diag led) while set
        self.waits = False
        self.at = -1

    def changed(self):
        self.dirty = True
        self.waits = False

    def idle(self):
        """Nothing to write and nothing that changes with time alone (what
        step() has just found): quiet until the next change."""
        return not (self.dirty or self.anim_dirty or self.animated)

    def step(self, now, g, armed):
        """`g`: the game (or None); `armed`: a dart could score now (the
        scanner is neither locked out nor waiting for the release)."""
        if self.diag is not None:
            self.waits = False
            return
        r = self.renderer
        # from here only time makes a frame due (the loop may read in a quiet
        # burst until `at`), unless a hint blinks, a win's chase runs or the
        # pairing code is spelled: they need every frame
        self.waits = r.hint_at < 0 and r.code_at < 0 and (g is None or g.phase != rules.OVER)
        anim = r.animating(g, now)
        if anim:
            if r.hint_at < 0 and r.code_at < 0 and g.phase != rules.OVER:
                self.anim_dirty = True  # a gift's flash alone: its frames can wait (below)
            else:
                self.dirty = True  # the hint someone asked for blinks; a win's chase
        elif self.animated:
            self.dirty = True  # an animation has ended: its last frame must go
        self.animated = anim
        self.at = ticks_add(r.flash_at, leds.FLASH_MS) if r.flash_at >= 0 else -1  # the flash's end
        if not (self.dirty or self.anim_dirty):
            return
        if armed and g is not None and g.phase == rules.PLAY:
            if not self.dirty:
                return
            if self.since == 0:
                self.since = now or 1
            if ticks_diff(now, self.since) < QUIET_MS:
                at = ticks_add(self.since, QUIET_MS)  # or the flash's end, if sooner
                if self.at < 0 or ticks_diff(at, self.at) < 0:
                    self.at = at
                return
        frame = r.render(g, now, self.tick)
        new = frame != self.last
        if new:
            self.tick()  # the write itself blocks the scan: nothing more before it
            if not armed and self.scanner.state < LOCKOUT and g is not None and g.phase == rules.PLAY:
                # the lockout ended while the frame was rendered (its reads step the scanner): a
                # write now would leave the matrix unread for 1.7 ms while a dart can score (a
                # 1 ms contact lost), so it waits as a change does and is made again when it goes
                return self.step(now, g, True)
        self.dirty = False
        self.anim_dirty = False
        self.since = 0
        if new:
            self.last = bytes(frame)
            self.board.strip_write(frame)

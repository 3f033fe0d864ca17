# Debounced push buttons (active low, internal pull-ups), pure logic.
# A press is reported once the level has been steady for `debounce_ms`;
# a hold past `long_ms` is reported once as LONG; a release before that as
# SHORT, so one button can carry two actions (new game / variant select).
# Times are the board's 30-bit wrapping milliseconds: compared only through
# ticks_diff, so a press across the wrap (every ~12 days) behaves.
from shove import ticks_diff

PRESS = 1
SHORT = 2
LONG = 3


class Buttons:
    def __init__(self, names, debounce_ms=30, long_ms=1000):
        self.names = names
        n = len(names)
        self.debounce_ms = debounce_ms
        self.long_ms = long_ms
        self.raw = bytearray(n)  # last level read, 1 = pressed
        self.stable = bytearray(n)
        self.changed = [0] * n  # time of the last raw change
        self.down_at = [0] * n
        self.longed = bytearray(n)
        self._up = bytearray(n)
        self.idle = True  # settled() when last fed: the loop skips a feed of all-up levels then

    def settled(self):
        """Every button up and steady: reading levels that are all up changes nothing."""
        return self.raw == self._up and self.stable == self._up

    def update(self, i, pressed, now_ms, out):
        """Feed button i's level; append (name, kind) events to out."""
        p = 1 if pressed else 0
        if p != self.raw[i]:
            self.raw[i] = p
            self.changed[i] = now_ms
            return
        if p != self.stable[i] and ticks_diff(now_ms, self.changed[i]) >= self.debounce_ms:
            self.stable[i] = p
            if p:
                self.down_at[i] = now_ms
                self.longed[i] = 0
                out.append((self.names[i], PRESS))
            elif not self.longed[i]:
                out.append((self.names[i], SHORT))
        elif p and self.stable[i] and not self.longed[i] and ticks_diff(now_ms, self.down_at[i]) >= self.long_ms:
            self.longed[i] = 1
            out.append((self.names[i], LONG))

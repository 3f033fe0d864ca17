# The serial port's bytes into lines, and the buttons into presses, apart
# from the main loop. Built from the parts a command acts on (the game's
# keeper, the board, the strip...) and callbacks into the loop (send a
# line, emit an event, read the matrix, its figures). What a line or a
# press then does is shove/request.py's (rare commands: shove/extra.py),
# loaded for it and let go after: none of it runs for a dart.
import json
import sys

from shove import buttons, handover, protocol, release

# Serial bytes taken in one slice (each a look and a one-byte read on the
# chip, then a step of the line buffer: some 60 us); a line is handled when
# its last byte is in. While more keeps coming, later slices take more at a
# time and follow each other (SERIAL_RUN in a row, then one other slice):
# bytes arrive every 87 us at 115200 baud into a 259-byte ring, and one
# left there when it is full is lost (tests/test_esp32_timing.py).
SERIAL_SLICE = 16
SERIAL_MORE = 64
SERIAL_RUN = 7


class Commands:
    def __init__(self, keeper, board, prof, renderer, strip, tx, emit, tick, figures, changed):
        self.keeper = keeper
        self.board = board
        self.prof = prof
        self.renderer = renderer
        self.strip = strip
        self.tx = tx  # the console's queue (shove/pacing.py)
        self.emit = emit
        self.tick = tick  # a read of the matrix from inside long work
        self.figures = figures  # the loop's own figures (stats)
        self.changed = changed  # the game or the strip's owner changed
        self.map_staged = None  # cells of a map sent in several lines
        # commands of the parts above the lines (the network's `wifi`): name -> the
        # module (shove.NAME) with its cmd_NAME, loaded for the command and let go after
        self.more = {}
        self.net = None  # the network's Joiner (shove/wifi.py) while a network is set
        self.web = None  # the board's web server (shove/httpd.py) once it has joined one
        self.lines = protocol.LineBuffer()
        self._sbuf = bytearray(SERIAL_MORE)  # the console's bytes of one serial slice
        self._sview = memoryview(self._sbuf)
        self._at = self._end = 0  # bytes of _sbuf read but not yet taken in (read: a full queue)
        self.watch = handover.Watch()
        self.leaving = 0  # set to handover.TO_REPL or TO_RAW to end the loop
        self.left_over = b""  # bytes read after the hand-over's, given back to the REPL
        self.lingering = False  # a line's code is loaded until the port has nothing waiting
        self.held = None  # a line read whole whose code is being loaded, a piece a slice (stage)
        t = prof.timing
        self.buttons = buttons.Buttons(("next", "undo", "new"), t["debounce_ms"], t["long_press_ms"])
        self._btn_events = []

    # ---- the serial port's lines ----------------------------------------------------------
    def read(self, most):
        """Up to `most` bytes from the port; True when it stopped at that
        bound (more may be waiting: the next slice reads on, so input at the
        full baud rate never backs up into the UART's ring). Once a line's
        reply leaves the console's queue without room for another step
        (pacing: ready), the bytes read after that line stay in the slice's
        buffer for a later slice, and True says so. So do they behind a
        line whose code is being loaded, a piece a slice (stage)."""
        line = self.held
        if line is not None:  # its code is still being loaded (stage), or it is handled now
            if self.stage(line):
                return True
            self.held = None
            self.handle_line(line, True)
            if self._at < self._end and not self.tx.ready():
                return True
        buf = self._sbuf
        i = self._at
        n = self._end
        if i >= n:  # nothing held from an earlier slice: take from the port
            self.tick()  # the take is a look and a read a byte on the chip (~30 us each): a read before and after
            n = self.board.serial_take(buf, most)
            if not n:
                if self.lingering:  # the host has sent all it had: the lines' code goes now
                    self.lingering = False
                    release("request", "view")
                return False
            self.tick()
            i = 0
        self._at = self._end = 0
        watch = self.watch
        lines = self.lines
        now = -1
        while i < n:
            if not watch.armed:  # printable bytes go straight into the line
                i = lines.take(buf, self._sview, i, n)
                if i == n:
                    break
            b = buf[i]  # a line end or a control byte: through the REPL watch
            i += 1
            if now < 0:
                now = self.board.ticks_ms()
            act = watch.feed(b, now)
            if act == handover.PASS:
                line = lines.feed(b)
                if line is not None:
                    self.tick()
                    if self.stage(line):  # its code first, a piece a slice: the rest waits behind it
                        self.held = line
                        self._at = i
                        self._end = n
                        return True
                    self.handle_line(line, True)
                    if i < n and not self.tx.ready():  # the rest waits for room in the queue
                        self._at = i
                        self._end = n
                        return True
            elif act != handover.DROP:
                self.leaving = act  # the REPL's turn: what came after is the REPL's too
                self.left_over = bytes(buf[i:n])
                return False
        return n == most

    def give_back(self):
        """The loop has ended for the REPL: the bytes that came after the
        hand-over are the REPL's (shove/giveback.py)."""
        if self.lingering:  # a burst cut short by the hand-over: its lines' code is not the REPL's
            self.lingering = False
            release("request", "view")
        from shove.giveback import give_back

        if self.leaving == handover.TO_RAW:
            give_back(b"\x01" + self.left_over)
        elif self.left_over:
            give_back(self.left_over)


    # ---- the protocol's commands ------------------------------------------------------------
    def stage(self, line):
        """The code a line needs, loaded before the line is handled, one
        piece a call (a serial slice each): the collector can then free
        each piece's garbage (its .mpy's reading) before the next, where
        all of it at once, beside pages watching, may find no room (a
        first hint: the computer's and the coach's code and the level's
        tables, some 40 KB allocated). True: a piece was loaded now, the
        line waits; False: all is in, handle it (request.stage names the rest).
        A piece with no room (MemoryError): False, the line handled now, and
        answered no_memory if its code is missing (handle_line): escaping, it
        took the line with it, and the host waited for a reply for ever."""
        try:
            if "shove.request" not in sys.modules:
                from shove import request  # noqa: F401

                return True
            from shove import request

            return request.stage(self, line)
        except MemoryError:
            return False

    def handle_line(self, line, linger=False):
        """A line's reply and events: shove/request.py, loaded for the line
        and let go once it is answered (a command's time, never a dart's).
        With `linger` (lines read from the port), it is let go once the port
        has nothing more waiting: a burst of lines loads it once, not once a
        line (a load is some 17 ms on the chip). Without room for its code
        (a load needs blocks of several hundred bytes, which a heap cut up
        may not have), the line is answered no_memory all the same."""
        try:
            from shove import request
        except MemoryError:  # (a module whose import failed is not kept: nothing to let go)
            try:
                id_ = json.loads(line)["id"]
            except Exception:
                id_ = None
            self.tx.put(protocol.error(id_, "no_memory", "the request did not fit in memory"))
            return
        try:
            request.handle(self, line)
        finally:
            if linger:
                self.lingering = True
            else:
                release("request", "view")  # view: an undo's, the coach's (Keeper.state lets its own go)

    def extra(self, name, cmd, after):
        """A rarely used command (request.EXTRA): its module is loaded for it and let
        go after, so its code is in the heap only meanwhile."""
        from shove import extra

        try:
            return getattr(extra, "cmd_" + name)(self, cmd, after)
        finally:
            release("extra", "settings", "profile")

    def stats(self):
        return self.extra("stats", None, None)["stats"]

    # ---- the board's buttons ----------------------------------------------------------------
    def buttons_slice(self):
        """The buttons' slice: debounced presses, then what each does."""
        board = self.board
        bt = self.buttons
        out = self._btn_events
        if board.buttons_down() or not bt.idle:
            now = board.ticks_ms()
            for i in range(3):
                bt.update(i, board.button(i), now, out)
            bt.idle = bt.settled()
            if self.renderer.code_at >= 0 and not bt.stable[0]:  # next let go: the pairing code's spelling ends
                self.renderer.hide_code()
                self.changed()
        while out and self.tx.ready():  # a press's action waits for room in the console's queue
            name, kind = out.pop(0)
            self.button(name, kind)

    def waiting(self):
        """Input taken in and not yet acted on, for want of room in the
        console's queue: a line's bytes, a button's press."""
        return self.held is not None or self._at < self._end or self._btn_events

    def button(self, name, kind):
        from shove import request  # as for a line: loaded for the press, let go after

        try:
            request.button(self, name, kind)
        finally:
            if not self.lingering:  # in a burst of lines the first empty read lets it go
                release("request", "view")

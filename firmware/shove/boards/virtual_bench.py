# The virtual board's control channel: two pipes handed down by the
# simulator (HAPENNY_SIM_CTL="rfd,wfd"), through which the test bench
# closes crossings, holds buttons, sets wiring and flash faults and reads
# the strip and the board's figures. Loaded only when the simulator runs the
# board; the lines it serves are the bench's work, not the chip's.
import json
import select
import sys
import time
from binascii import hexlify

from shove import scanner
from shove.boards.virtual_clock import MASK, READ_US, WAKE_EVERY, WAKE_US, host_open, readable

BUTTONS = ("next", "undo", "new")
# Idle like a board, not a busy loop: with no closure scheduled, no button
# held and the scanner idle, wait for the serial port or the control channel
# this long at most. Nothing the firmware could see happens meanwhile, and
# the wait counts on the board's clock, so it is no stall.
IDLE_MS = 20


# The flash's side of the control channel (boards/virtual_flash.py's Flash
# and its counting block device): here, not in the Flash, since only the
# simulator's bench uses it (its code then holds no heap in a board without one).
def time_steps(board, cls):
    """cls.step (shove/httpd.py's Server) timed on the board's clock while a
    client is connected (or one is accepted): board.web_steps."""
    step = cls.step
    c = board.clock
    board.web_steps = [0, 0, 0]

    def timed(srv, now):
        c.ticks_us()
        t0 = c.total
        n = srv.open
        a = srv.accepted
        step(srv, now)
        if n or srv.open or srv.accepted != a:  # a client's work (an accept among it), not an idle look
            c.ticks_us()
            dt = c.total - t0
            w = board.web_steps
            w[0] += 1
            w[1] += dt
            if dt > w[2]:
                w[2] = dt

    cls.step = timed


def flash_counts(fl):
    """What littlefs did to the flash since start, and the stall time."""
    d = fl.dev
    if not d:
        return {}
    st = {}
    for k, v in d.counts().items():
        st["flash_" + k] = v
    st["flash_busy_us"] = fl.busy_us
    st["store_max_us"] = fl.store_max_us
    fl.store_max_us = 0
    return st


def flash_unseen(fl, f):
    """f(), its flash operations neither counted nor timed: the test
    bench's doing (the stats it asks for load modules from the flash)."""
    d = fl.dev
    if not d:
        return f()
    was = d.counts()
    d.clock = None
    try:
        return f()
    finally:
        d.clock = fl
        d.erases, d.programs, d.pages = was["erases"], was["programs"], was["pages"]
        d.prog_bytes, d.reads, d.read_bytes = was["prog_bytes"], was["reads"], was["read_bytes"]


class Bench:
    def __init__(self, board, fds):
        self.board = board
        rfd, wfd = fds.split(",")
        self.cin = host_open("/dev/fd/" + rfd, "rb")
        self.out = host_open("/dev/fd/" + wfd, "wb")
        self._poll = select.poll()
        self._poll.register(self.cin, select.POLLIN)
        self.wake = select.poll()  # what ends an idle wait: a serial byte or a control line
        self.wake.register(self.cin, select.POLLIN)
        self.wake.register(sys.stdin, select.POLLIN)
        # the flash's reports come here, and a cut inside a flash operation
        # holds the board until the simulator cuts the power
        fl = board.flash
        fl.send = self.send
        if fl.dev:
            fl.dev.on_cut = self._cut

    def _cut(self):
        """The power goes in the middle of a flash operation (the control
        channel's `cut_flash`): the block device has done part of it; wait
        here for the simulator to cut the power."""
        self.send({"held": "cut"})
        while True:
            time.sleep_ms(100)

    def send(self, obj):
        # unbuffered already; flush() would fsync, which a pipe refuses
        self.out.write(json.dumps(obj).encode() + b"\n")

    def service(self, stats, quiet):
        """The loop's slice for the board: the bench's lines, then, with
        nothing due, an idle wait."""
        b = self.board
        c = b.clock
        c.sim(0)  # (the board charged the slice's call: the rest is the bench's)
        b._served = True
        if b.crash_mid and b.serial.mid_line:  # a test's stand-in for a bug inside the loop's slices
            b.crash_mid = False
            raise RuntimeError("injected fault with a line partly sent")
        c.in_sim = True  # the control channel is the test bench, not the board
        try:
            self.serve(stats)
        finally:
            c.in_sim = False
        # nothing due: no closure scheduled, the scanner idle, no button
        # held, no output waiting for the UART, no byte on its way in (the
        # timers are fed by the loop and due no sooner than IDLE_MS)
        idle = b.model.idle and quiet() and not b.serial.rxq and not b.buttons_down()
        c.sim(0)  # the control channel and this check are the test bench's, not the board's
        if idle:
            c.ticks_us()
            c.wait(self.wake, b.timer_wait(IDLE_MS))

    def look(self, stats, left, until, tx):
        """Between two bursts of a quiet scan_idle: the bench's lines, served
        here (the simulator's work, not the chip's, and no reason for the
        loop to wake); then, if nothing can close, a doze. Returns the reads
        the doze stood for."""
        b = self.board
        c = b.clock
        self.serve(stats)  # (in_sim: scan_idle set it, the test bench is not the board)
        c.sim(0)
        m = b.model
        if not m.idle or m.grounded or m.shorts or b.crash or b.buttons_down() or b.serial.rxq:
            return 0
        most = scanner.ticks_diff(until, c.look_ms()) if until >= 0 else IDLE_MS
        if tx is not None:  # until the FIFO has room for the next load
            t = (scanner.ticks_diff(tx.end, c.now_us()) + 999) // 1000
            if t < most:
                most = t
        return self._doze(left, most)

    def _doze(self, left, most):
        """No closure is scheduled, so every read until the next serial byte
        or control line would find the matrix open: wait for one (at most
        the burst's remaining reads' time, `most` ms or IDLE_MS) instead of
        reading. Returns the reads it stands for."""
        per = READ_US + WAKE_US // WAKE_EVERY
        wait = left * per // 1000
        if wait > most:
            wait = most
        wait = self.board.timer_wait(wait if wait < IDLE_MS else IDLE_MS)
        if wait <= 0:
            return 0
        r = self.board.clock.wait(self.wake, wait) // per
        if r > left:
            r = left
        self.board.doze_reads += r
        return r

    def serve(self, stats):
        # every line waiting: the test bench's messages are not the
        # firmware's to pace (the service polls this once in five slices).
        # The simulator writes each line with one write() to a pipe, which
        # is atomic (under PIPE_BUF), so a readable pipe holds whole lines;
        # reading them whole keeps the bench's garbage out of the board's heap.
        for _ in range(64):
            if not readable(self._poll):
                return
            line = self.cin.readline()
            if not line:  # the simulator went away: the power is off
                sys.exit(0)
            try:
                self._control(json.loads(line), stats)
            except Exception as e:
                self.send({"error": str(e)})

    # An act anchored to "serial" waits for the board to take its next byte from the console:
    # the command the host sends next (the doctor's "watch"), so that the act lands inside
    # what that command starts however late the host sends it.
    def _pulses(self, pulses):
        b = self.board
        now = b.ticks_us()
        ok = True
        for row, col, delay, length in pulses:
            on = (now + delay) & MASK
            ok = b.model.close(row, col, on, (on + length) & MASK) and ok
        if hasattr(b.clock, "due"):
            b.clock.wake()
        return ok

    def _press(self, i, ms):
        b = self.board
        b.held[i] = (b.ticks_ms() + ms) & MASK or 1

    def _control(self, msg, stats):
        b = self.board
        op = msg.get("op")
        seq = msg.get("seq")
        if op == "close":
            ok = b.close_us(msg["row"], msg["col"], msg["us"], msg.get("delay_us", 0))
            if hasattr(b.clock, "due"):  # the ESP32 model's edge interrupt looks out for it
                b.clock.wake()
            self.send({"seq": seq, "ok": ok})
        elif op == "line_times":
            # the board time each console line from number `from` on finished
            # going into the UART (null for one too old to be kept)
            self.send({"seq": seq, "times": b.serial.line_times(msg["from"])})
        elif op == "pulses":
            # a whole pattern against one board timestamp: [row, col, delay_us, us]
            if msg.get("anchor") == "serial":
                b.serial.on_take = lambda: self._pulses(msg["pulses"])
                self.send({"seq": seq, "ok": True, "at": None})
            else:
                ok = self._pulses(msg["pulses"])
                self.send({"seq": seq, "ok": ok, "at": b.clock.total})
        elif op == "button":
            i = BUTTONS.index(msg["name"])
            if i not in b.dead_buttons:  # a broken wire: the press never reaches the pin
                if msg.get("anchor") == "serial":
                    b.serial.on_take = lambda: self._press(i, msg["ms"])
                else:
                    self._press(i, msg["ms"])
            self.send({"seq": seq, "ok": True})
        elif op == "wiring":
            # wiring faults for the doctor to find: lines (rows, then columns)
            # shorted together or to ground, a dead button, a strip fault
            m = b.model
            m.shorts = [tuple(p) for p in msg.get("shorts", [])]
            m.grounded = 0
            for line in msg.get("grounded", []):
                m.grounded |= 1 << line
            b.dead_buttons = [BUTTONS.index(n) for n in msg.get("dead_buttons", [])]
            b.strip_fault = msg.get("strip")
            self.send({"seq": seq, "ok": True})
        elif op == "frame":
            self.send({"seq": seq, "frame": hexlify(b.frame).decode()})
        elif op == "crash":
            if msg.get("mid_line"):  # in the service slice, once the console is partway through a line
                b.crash_mid = True
            else:
                b.crash = True
            self.send({"seq": seq, "ok": True})
        elif op == "hold":
            b.flash.hold = msg["stage"]
            self.send({"seq": seq, "ok": True})
        elif op == "cut_flash":
            # the power goes in the middle of the n-th erase or program from now
            b.flash.dev.cut_in = msg["ops"]
            self.send({"seq": seq, "ok": True})
        elif op == "flash":
            b.flash.full = bool(msg["full"])
            self.send({"seq": seq, "ok": True})
        elif op == "air":
            # the networks in reach, their passwords and signal; the network
            # model's times (the runtime's `network`, loaded only now: a board
            # whose bench never changes the air, and whose firmware joins none, has it not)
            import network

            network.set_air(msg["aps"], msg.get("times"))
            self.send({"seq": seq, "ok": True})
        elif op == "time_web":
            # the web server's steps with a client timed on the board's clock from now on, for
            # stats (web_steps: [steps, their us, the longest since the last stats]): a service
            # slice's cost on the model (bench/web_load.py). Reached through sys.modules, once
            # the firmware has loaded it: the board layer imports nothing above itself
            srv = sys.modules.get("shove.httpd")
            if srv is not None and b.web_steps is None:
                time_steps(b, srv.Server)
            self.send({"seq": seq, "ok": srv is not None})
        elif op == "advance":
            # the board's clock moved on at once (deadlines tested without waiting for them)
            b.clock.ticks_us()
            b.clock.spent(msg["ms"] * 1000)
            self.send({"seq": seq, "ok": True})
        elif op == "idf":
            # the classic ESP32's ESP-IDF heap model (the runtime's `esp32`):
            # its state, and what the bench holds back of it ("hold": bytes)
            import esp32

            h = esp32.heap()
            if "hold" in msg:
                h.hold(msg["hold"])
            rep = h.report()
            if msg.get("clear"):  # the faults read are cleared
                rep["faults"] = list(rep["faults"])
                del esp32.FAULTS[:]
            self.send({"seq": seq, "idf": rep})
        elif op == "stats":
            self.send({"seq": seq, "stats": self._stats(flash_unseen(b.flash, stats))})
        elif op == "scanner":
            # what a wait for the scanner or the buttons looks at, often: stats collects the
            # heap (2 ms of the host's CPU a look) and resets the figures kept since the last
            sc = getattr(b, "scanner", None)
            b.clock.ticks_us()
            self.send({"seq": seq, "idle": sc is not None and sc.state == scanner.IDLE and b.model.idle,
                       "buttons_down": b.buttons_down(), "board_us": b.clock.total})
        else:
            self.send({"seq": seq, "error": "unknown op"})

    def _stats(self, st):
        b = self.board
        c = b.clock
        s = b.serial
        c.ticks_us()
        st["board_us"] = c.total  # the board's clock since start, unwrapped
        st["sent_us"] = s.sent_us
        st["lines_out"] = s.lines_out
        st["uart_blocked_us"] = s.blocked_us
        st["idle_us"] = c.idle_us
        st["gap_max_us"] = b.gap_max_us
        st["gap_quiet_max_us"] = b.gap_quiet_max_us  # (see Board.stretch)
        st["gap_os_max_us"] = b.gap_os_max_us
        st["gap_flash_max_us"] = b.gap_flash_max_us
        st["doze_reads"] = b.doze_reads
        st["input_reads"] = b.input_reads  # idle reads with the host's bytes on their way in (since start)
        st["rx_dropped"] = s.dropped
        st["rx_in"] = s.arrived  # bytes into the ring since start (with rx_dropped: every byte the host sent)
        st["rx_peak"] = s.peak  # since the last stats, like gap_max_us
        s.peak = s.ring
        st["rx_last_us"] = s.last_in
        st.update(flash_counts(b.flash))  # what littlefs did to the flash since start; the longest storage call
        # a closure is scheduled or still closed: the scanner may not
        # have seen it yet, so "idle" alone does not mean "decided"
        st["closing"] = not b.model.idle
        st["buttons_down"] = b.buttons_down()
        st["unseen"] = b.model.unseen  # closures no read of the matrix fell inside (since start) ...
        st["unseen_os"] = b.model.unseen_os  # ... in a stretch the OS interrupted
        if hasattr(c, "due"):  # the ESP32 model's edge interrupt: handlers run, the reads they made, those a collection held
            st["edges"] = c.counts
        w = b.web_steps  # the web server's steps with a client (time_steps), once the bench asked
        if w is not None:
            st["web_steps"] = list(w)
            # the socket calls (the runtime's socket, vsocket.py): calls, bytes, the chip's us, the host's us
            st["sockets"] = list(getattr(sys.modules.get("socket"), "stats", ()))
            w[2] = 0  # the longest: since the last stats, like gap_max_us
        b.gap_max_us = b.gap_quiet_max_us = b.gap_os_max_us = b.gap_flash_max_us = 0
        return st

    def frame(self, frame, at):
        """A strip write, with the board's time of writing it (unwrapped us)."""
        self.send({"frame": hexlify(frame).decode(), "at": at})

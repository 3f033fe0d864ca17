"""`hapenny play`: a live scoreboard in the terminal.

Sides are rows, beds are columns, each cell the chalk tally (`/` one mark,
`X` two, `⊗` closed). Keys: `n` next (player change), `u` undo, type a
segment (T5, D7, SB, MISS) and Enter to throw it, `q` to quit. Darts
detected by the board arrive as events and redraw the board at once.
"""
import io
import os
import select
import sys
import time

from rich.color import Color
from rich.control import Control, ControlType
from rich.style import Style
from rich.text import Text

from hapenny import gamestate, term
from hapenny.link import BoardError, LinkError

CLOSED = "⊗"


def tally(marks, full):
    """The chalk for `marks` of `full`: / for one, X for two, ⊗ when closed."""
    if marks >= full:
        return CLOSED
    return "X" * (marks // 2) + "/" * (marks % 2)


def strip_line(pixels):
    """The LED strip as coloured blocks, scaled up so dim pixels show."""
    if not pixels:
        return None
    top = max(max(p) for p in pixels) or 1
    k = 255.0 / top
    line = Text("LEDs ")
    for r, g, b in pixels:
        line.append("█", style=Style(color=Color.from_rgb(min(255, r * k), min(255, g * k), min(255, b * k))))
    return line


def screen(state, log=(), typed="", pixels=None, height=None, keys=True):
    """The scoreboard as rich lines for a protocol state object (or None);
    `height` keeps it within a terminal that size (the log gives way)."""
    lines = []
    if state is None:
        lines.append(Text("No game on the board. Press the board's new-game button, or run `hapenny new`."))
    else:
        rules = state["rules"]
        beds = [str(b) for b in rules["beds"]]
        full = rules["marks"]
        cell = max(3, (full + 1) // 2 + 1)
        namew = max(8, max(len(s["name"]) for s in state["sides"]) + 2)
        flags = [k for k in ("progressive", "flat", "bull_off") if rules.get(k)]
        head = "%s: %d marks to close, %d darts, gift %s%s%s" % (
            state.get("variant", "custom"), full, rules["darts"], rules["gift"],
            "" if rules["win_by_gift"] else ", pub rule (no winning gifts)",
            (", " + ", ".join(flags)) if flags else "")
        lines.append(Text.assemble(("Shove Ha'penny", "bold"), "  " + head))
        lines.append(Text(""))
        lines.append(Text(" " * (namew + 2) + "".join(b.center(cell) for b in beds)))
        for i, side in enumerate(state["sides"]):
            mark = "▶ " if i == state["turn"] and state["phase"] != "over" else "  "
            if state["winner"] == i:
                mark = "★ "
            row = Text(mark + side["name"].ljust(namew), style="bold" if mark != "  " else "")
            for b in beds:
                m = side["marks"][b]
                row.append(tally(m, full).center(cell), style="dim" if m >= full else "")
            lines.append(row)
        lines.append(Text(""))
        phase = state["phase"]
        if phase == "over":
            w = state["sides"][state["winner"]]["name"]
            lines.append(Text.assemble(("%s wins!" % w, "bold"), "  (u: undo the last dart, or start a new game)"))
        elif phase == "hold":
            lines.append(Text("%s's visit is over: pull the darts, then n for the next player." % state["thrower"]))
        elif phase == "bull_off":
            lines.append(Text("Bull-off: %s throws one dart at the bull." % state["thrower"]))
        else:
            darts = "●" * state["darts_left"] + "○" * (rules["darts"] - state["darts_left"])
            lines.append(Text.assemble("To throw: ", (state["thrower"], "bold"), "  darts " + darts))
        if state.get("pending"):
            names = ", ".join(state["sides"][i]["name"] for i in state["pending"])
            lines.append(Text("Pending win by gift: %s (unless %s closes out this visit)" % (names, state["thrower"])))
    leds = strip_line(pixels)
    if leds is not None:
        lines.append(leds)
    tail = [Text(""), Text("n next · u undo · h hint · type T5/D7/SB/MISS + Enter to throw · q quit"),
            Text("> " + typed)] if keys else []
    room = 6 if height is None else max(0, min(6, height - len(lines) - len(tail) - 1))
    shown = list(log)[-room:] if room else []
    if shown:
        lines.append(Text(""))
        lines += [Text(entry, style="dim") for entry in shown]
    return lines + tail


def render(state, log=(), typed="", width=80, pixels=None, color=True, height=None, keys=True):
    """The whole screen as text (with colour and bold codes if `color`)."""
    buf = io.StringIO()
    c = term.console(buf, width, color)
    for line in screen(state, log, typed, pixels, height, keys):
        c.print(line, overflow="crop", no_wrap=True)
    return buf.getvalue().rstrip("\n")


def describe(ev, state):
    """One log line for a dart, visit, win or fault event."""
    kind = ev.get("ev")
    names = [s["name"] for s in state["sides"]] if state else []
    if kind == "dart":
        who = names[ev["side"]] if ev.get("side") is not None and names else "?"
        parts = ["%s: %s" % (who, ev["seg"])]
        if ev["marks"] == 0:
            parts.append("dead")
        else:
            parts.append("%d mark%s" % (ev["own"], "" if ev["own"] == 1 else "s"))
            for side, n in ev["gifts"]:
                parts.append("%d gifted to %s" % (n, names[side]))
            if ev["lost"]:
                parts.append("%d lost" % ev["lost"])
        return ", ".join(parts)
    if kind == "visit":
        return "Next: %s" % ev["thrower"]
    if kind == "win":
        return "%s wins!" % ev["name"]
    if kind == "undo":
        return "Undone."
    if kind == "hint":
        return "Hint: %s" % ev["hint"]["reason"]
    if kind == "new":
        return "New game."
    if kind == "fault":
        return "Stuck switch at row %d, col %d: masked until it is released." % (ev["row"], ev["col"])
    if kind == "ignored":
        return "%s ignored (%s)" % (ev["seg"], ev["why"])
    if kind == "storage":
        return "Board storage: %s %s" % (ev["file"], ev["error"])
    if kind == "wifi":
        return wifi_line(ev)
    if kind == "link":  # the network transport's (host/hapenny/netlink.py)
        if ev.get("up"):
            return "Back on the board: the whole game as it is now."
        return "Lost the board, trying again: %s" % ev.get("msg")
    return None


def wifi_line(ev):
    """The board's network changed (the `wifi` event)."""
    st = ev.get("state")
    if st == "joined":
        return "Wi-Fi: joined, at %s" % ev.get("address")
    if st == "failed":
        return "Wi-Fi: joining failed (%s); the board keeps trying" % ev.get("reason")
    if st == "joining":
        return "Wi-Fi: the network was lost; joining again" if ev.get("reason") == "lost" else "Wi-Fi: joining"
    if st == "setup":
        return "Wi-Fi: the board's set-up network is open (%s): join it from a phone" % SETUP_WHY.get(
            ev.get("reason"), ev.get("reason"))
    return "Wi-Fi: off"


# why the board opened its set-up network (firmware/shove/wifiap.py), for a person
SETUP_WHY = {"none_set": "no network set", "button": "NEW held at start", "wrong_password": "the network refused "
             "the password", "no_network": "the network is not in reach", "timeout": "the network did not answer"}


class Scoreboard:
    def __init__(self, link, out=sys.stdout, inp=sys.stdin):
        self.link = link
        self.out = out
        self.inp = inp
        self.state = None
        self.log = []
        self.typed = ""
        self.quit = False
        self.pixels = None

    def refresh_leds(self):
        try:
            self.pixels = self.link.request("leds")["pixels"]
        except (BoardError, LinkError):
            self.pixels = None

    def draw(self):
        width, height = term.size(self.out)
        color = term.wants_colour(self.out)
        text = render(self.state, self.log, self.typed, width=width, pixels=self.pixels if color else None,
                      color=color, height=height)
        # the terminal is raw (keys arrive one by one): lines need their carriage return
        top = str(Control(ControlType.HOME, ControlType.CLEAR)) if term.is_terminal(self.out) else "\r\n"
        self.out.write(top + text.replace("\n", "\r\n") + "\r\n")
        self.out.flush()

    def _cmd(self, cmd, **fields):
        try:
            rep = self.link.request(cmd, **fields)
            if "state" in rep:
                self.state = rep["state"]
        except BoardError as e:
            self.log.append("Refused: %s" % e.reply.get("msg"))
        except LinkError as e:  # a board on the network out of reach for now: its stream comes back by itself
            self.log.append("Not sent: %s" % e)

    def key(self, ch):
        if ch in ("\r", "\n"):
            seg, self.typed = self.typed.strip(), ""
            if seg:
                self._cmd("throw", seg=seg)
        elif ch in ("\x7f", "\x08"):
            self.typed = self.typed[:-1]
        elif ch in ("\x03", "\x04") or (ch in "qQ" and not self.typed):
            self.quit = True
        elif ch in "nN" and not self.typed:
            self._cmd("next")
        elif ch in "uU" and not self.typed:
            self._cmd("undo")
        elif ch in "hH" and not self.typed:
            try:
                self.log.append("Hint: %s" % self.link.request("hint")["hint"]["reason"])
            except BoardError as e:
                self.log.append("No hint: %s" % e.reply.get("msg"))
            except LinkError as e:
                self.log.append("Not sent: %s" % e)
        elif ch == "\x1b":
            self.typed = ""
        elif ch.isalnum() and len(self.typed) < 6:
            self.typed += ch.upper()

    def events(self):
        changed = False
        while self.link.events:
            ev = self.link.events.popleft()
            self.state = gamestate.apply(self.state, ev)
            line = describe(ev, self.state)
            if line:
                self.log.append(line)
                changed = True
        return changed

    def run(self):
        rep = self.link.request("state")
        self.state = rep.get("state")
        fd = self.inp.fileno()
        self.refresh_leds()
        self.draw()
        led_due = 0.0
        while not self.quit:
            r, _, _ = select.select([fd], [], [], 0.05)
            redraw = False
            if r:
                data = os.read(fd, 64)
                if not data:
                    break
                for ch in data.decode("utf-8", "ignore"):
                    self.key(ch)
                redraw = True
            try:
                self.link._pump(0.0)
            except LinkError:
                self.log.append("Lost the board: its port closed.")
                self.draw()
                return 1
            if self.events():
                redraw = True
                led_due = time.monotonic() + 0.15  # the board writes its strip just after a dart
            if led_due and time.monotonic() >= led_due:
                led_due = 0.0
                self.refresh_leds()
                redraw = True
            if redraw:
                self.draw()
        return 0


def play(link, out=sys.stdout, inp=sys.stdin):
    import termios
    import tty

    saved = None
    if inp.isatty():
        saved = termios.tcgetattr(inp.fileno())
        tty.setraw(inp.fileno())
    try:
        return Scoreboard(link, out, inp).run()
    finally:
        if saved is not None:
            termios.tcsetattr(inp.fileno(), termios.TCSADRAIN, saved)
        out.write("\r\n")
        out.flush()
        time.sleep(0)

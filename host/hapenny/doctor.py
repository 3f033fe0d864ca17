"""`hapenny doctor`: a guided bring-up for a freshly wired board.

The board reports raw facts through the protocol's `diag` command (versions,
free memory and flash, which matrix lines read low, the closures and button
presses it sees); this module turns them into findings a builder with a
multimeter can act on: each names the GPIO pins and the segments involved
and says what to check next."""
from dataclasses import dataclass, field

from hapenny import mpyformat
from hapenny.link import BoardError

BUTTONS = ("next", "undo", "new")
RECLOSE_MS = 200  # a re-closure of a crossing this soon after its hit is one dart bouncing


@dataclass
class Finding:
    step: str
    ok: bool
    text: str
    check: str = ""  # what to check next (failures)


@dataclass
class Report:
    findings: list = field(default_factory=list)
    real_board: list = field(default_factory=list)  # steps left out: a virtual board has no such parts
    cable: list = field(default_factory=list)  # steps left out: a board on the network (diag is USB's)

    def add(self, step, ok, text, check=""):
        f = Finding(step, ok, text, check)
        self.findings.append(f)
        return f

    @property
    def failed(self):
        return [f for f in self.findings if not f.ok]


# ---- the matrix's lines ----------------------------------------------------------------
def line_names(pins, rows):
    return ["row %d (GPIO %d)" % (i, p) if i < rows else "column %d (GPIO %d)" % (i - rows, p)
            for i, p in enumerate(pins)]


def _segs(cells, line, rows):
    """The segments a line carries, from the board's map."""
    if line < rows:
        out = [s for r, c, s in cells if r == line]
    else:
        out = [s for r, c, s in cells if c == line - rows]
    return ", ".join(out[:8]) + (" ..." if len(out) > 8 else "") if out else "no segment mapped"


def analyse_lines(pins, rows, levels, cells):
    """Findings from the line test: levels[0] = lines low with none driven,
    levels[1 + i] = lines low with line i driven."""
    names = line_names(pins, rows)
    seg_at = {(r, c): s for r, c, s in cells}
    n = len(pins)
    out = []
    grounded = levels[0]
    for i in range(n):
        if grounded >> i & 1:
            out.append((False, "%s reads low with nothing driven: it is shorted to ground (it carries %s)"
                        % (names[i], _segs(cells, i, rows)),
                        "look for a solder bridge or a stray strand between GPIO %d and a GND pin or the "
                        "ribbon's ground; with the board unpowered, the multimeter between GPIO %d and GND "
                        "must not beep" % (pins[i], pins[i])))
    seen = set()
    for i in range(n):
        follow = levels[1 + i] & ~grounded
        for j in range(n):
            if not follow >> j & 1 or (min(i, j), max(i, j)) in seen:
                continue
            seen.add((min(i, j), max(i, j)))
            a, b = min(i, j), max(i, j)
            if a < rows <= b:  # a row and a column: a crossing reads closed at rest
                seg = seg_at.get((a, b - rows), "unmapped")
                out.append((False, "crossing %s x %s reads closed at rest: segment %s"
                            % (names[a], names[b], seg),
                            "a dart left in %s, or a stuck contact in the membrane; if the board is empty, "
                            "the two wires may touch (a short between GPIO %d and GPIO %d)"
                            % (seg, pins[a], pins[b])))
            else:
                kind = "rows" if b < rows else "columns"
                out.append((False, "%s and %s follow each other: the two %s are shorted together "
                            "(they carry %s; and %s)" % (names[a], names[b], kind, _segs(cells, a, rows),
                                                         _segs(cells, b, rows)),
                            "look for a solder bridge between GPIO %d and GPIO %d, or a ribbon plugged in one "
                            "pin off; the multimeter between them (unpowered) must not beep"
                            % (pins[a], pins[b])))
    if not out:
        out.append((True, "all %d matrix lines are free: none shorted to ground or to another, "
                    "no crossing closed at rest" % n, ""))
    return out


# ---- the closures of real darts ----------------------------------------------------------
def crossings(matrix, rows_count):
    """Raw matrix changes [[t_us, row, closed-columns mask], ...] -> per
    crossing, its contacts [(on_us, off_us or None)]."""
    state = {}
    out = {}
    for t, r, mask in matrix:
        before = state.get(r, 0)
        for c in range(16):
            bit = 1 << c
            if (mask ^ before) & bit:
                contacts = out.setdefault((r, c), [])
                if mask & bit:
                    contacts.append([t, None])
                elif contacts and contacts[-1][1] is None:
                    contacts[-1][1] = t
        state[r] = mask
    return out


def analyse_darts(matrix, timing, cells):
    """What the recorded darts say about the profile's timing. Returns
    (findings, summary rows)."""
    seg_at = {(r, c): s for r, c, s in cells}
    window = timing["window_us"]
    lockout = timing["lockout_ms"] * 1000
    rearm = timing["rearm_ms"] * 1000
    found = []
    rows = []
    per = crossings(matrix, 16)
    hits = 0
    for (r, c), contacts in sorted(per.items(), key=lambda kv: kv[1][0][0]):
        seg = seg_at.get((r, c), "unmapped (row %d, column %d)" % (r, c))
        # group the contacts into darts: a new dart starts after a long gap
        darts = []
        for on, off in contacts:
            if darts and on - darts[-1][-1][0] < RECLOSE_MS * 1000:
                darts[-1].append((on, off))
            else:
                darts.append([(on, off)])
        for d in darts:
            hits += 1
            first_on = d[0][0]
            lengths = [(off - on) if off is not None else None for on, off in d]
            closed = sum(x for x in lengths if x is not None)
            rows.append("%s: %d contact(s), first %s, %.1f ms closed in all, over %.1f ms" % (
                seg, len(d), "%.1f ms" % (lengths[0] / 1000) if lengths[0] is not None else "still closed",
                closed / 1000, ((d[-1][1] or d[-1][0]) - first_on) / 1000))
            if lengths[0] is not None and lengths[0] < 300:
                found.append((False, "%s: a contact of %d us; the scanner must see it in one scan"
                               % (seg, lengths[0]), "check that `hapenny stats` reports no stalls; a "
                               "contact this short is at the limit of what the board can read"))
            # a re-closure after the lockout, once the crossing had been open
            # for the re-arm time, is counted as a second dart
            for k in range(1, len(d)):
                on = d[k][0]
                prev_off = d[k - 1][1]
                if prev_off is None:
                    continue
                if on - first_on >= lockout and on - prev_off >= rearm:
                    found.append((False, "%s: the contact closed again %.0f ms after the hit, after %.0f ms "
                                  "open: that counts as a second dart with lockout %d ms and re-arm %d ms"
                                  % (seg, (on - first_on) / 1000, (on - prev_off) / 1000,
                                     timing["lockout_ms"], timing["rearm_ms"]),
                                  "raise the profile's timing.lockout_ms to %d or more (no one throws two darts "
                                  "that fast) and deploy it" % ((on - first_on) // 1000 + 10)))
    if not hits:
        found.append((False, "no closure recorded", "throw again; if nothing ever shows, run the line test "
                      "and check the ribbon's orientation"))
    elif not [f for f in found if not f[0]]:
        found.append((True, "%d dart(s) recorded; the window (%d us), lockout (%d ms) and re-arm (%d ms) "
                      "fit them" % (hits, window, timing["lockout_ms"], timing["rearm_ms"]), ""))
    return found, rows


# ---- the guided run ------------------------------------------------------------------
def _release(about):
    return list(about["micropython"][:3]) + [about.get("prerelease", "")]


def release_problem(about):
    """None if the board's MicroPython loads what `hapenny deploy` compiles
    for it (any release with the same .mpy format), else one line saying
    what to do."""
    from hapenny import firmware

    if "mpy" not in about:
        return ("the board's firmware is older than this hapenny and does not report the .mpy format its "
                "MicroPython loads: run hapenny deploy (it checks the format), then hapenny doctor again")
    _, fmt = firmware.mpy_cross_version()
    target = firmware.esp32_target(about["mpy"]) if about["platform"] == "esp32" else "sim"
    native = mpyformat.ARCHS.index(firmware.ARCH[target]) if firmware.ARCH[target] else 0
    return mpyformat.release_problem(_release(about), about["mpy"], fmt, native)


CONSOLES = {
    "uart": "UART0 behind the board's USB-UART bridge: the firmware paces its output to 115200 baud",
    "usb-serial-jtag": "the chip's USB-Serial/JTAG: no baud rate on the link, and a byte the board has no room "
                       "for waits in the peripheral instead of being lost",
    "usb-cdc": "the chip's native USB (TinyUSB CDC): no baud rate on the link, and a byte the board has no "
               "room for waits instead of being lost",
}


def console(about, port=None):
    """One line on the console the host talks to: the port's USB IDs say
    which, else the board's own word (a virtual board's); a stock S3 or C3
    image runs its console on UART0 too."""
    from hapenny.connect import port_console

    board = about.get("console") or "uart"  # firmware from before the chips: a classic ESP32's UART
    kinds = board.split("+")
    kind = (port_console(port) if port else None) or kinds[0]
    text = "console: %s" % CONSOLES.get(kind, kind)
    if kind != "uart" and "uart" in kinds:
        text += "; the stock image writes it to UART0 as well, so the output keeps its 115200-baud pacing"
    return text


def diag(link, op, timeout=10.0, **fields):
    try:
        return link.request("diag", timeout=timeout, op=op, **fields)
    except BoardError as e:
        if getattr(e, "code", None) == "unknown_cmd":
            raise BoardError({"error": "unknown_cmd", "msg": "the board's firmware has no diagnostics: "
                              "deploy this version first (hapenny deploy)"})
        raise


LARGEST_MIN = 4096  # twice the largest the firmware asks for while playing (a journal rewrite: about 1.8 KB)


def heap_and_flash(link, about, rep, say):
    """The chip's heap as the game meets it (the largest single allocation,
    the IDF heap MicroPython grows into) and what the flash costs a dart
    (one journal append, timed on the board). Firmware older than these
    diagnostics answers bad_diag: skipped."""
    try:
        h = diag(link, "heap", timeout=20.0)
        fl = diag(link, "flash", timeout=20.0)
    except BoardError as e:
        if getattr(e, "code", None) == "bad_diag":
            return
        raise
    idf = h.get("idf")
    say("heap: largest single allocation %d B%s" % (
        h["largest_alloc"], "; ESP-IDF heap %d B free, largest block %d B" % tuple(idf) if idf else ""))
    rep.add("about", h["largest_alloc"] >= LARGEST_MIN, "largest allocation %d B" % h["largest_alloc"],
            "the heap is fragmented or nearly full: under %d B in one piece; reset the board, and check "
            "`stats` mem_peak" % LARGEST_MIN)
    apps = fl["append_us"]
    say("flash: a new game's journal (%d B) written in %.1f ms; a dart's record appended in %s ms" % (
        fl["bytes"], fl["replace_us"] / 1000, ", ".join("%.1f" % (u / 1000) for u in apps)))
    lockout_us = about["timing"]["lockout_ms"] * 1000
    worst = max(apps)
    rep.add("about", worst < lockout_us, "a journal append takes up to %.1f ms here" % (worst / 1000),
            "longer than the lockout (%d ms): the scanner is blind meanwhile, so a dart right after "
            "another can be missed; check the flash (a worn or slow chip) with `hapenny doctor` again"
            % about["timing"]["lockout_ms"])


WIFI_CHECKS = {
    "wrong_password": "the network refused the password: set it again with `hapenny wifi NETWORK`",
    "no_network": "no network of that name in reach: its name (case matters), the router on, the board "
                  "within its range (the ESP32 joins 2.4 GHz networks only)",
}


def wifi_finding(w, rep):
    """The board's network, when one is set (the board never reports the password)."""
    if not w or w["state"] == "off":
        return
    if w["state"] == "joined":
        sig = ", signal %d dBm" % w["rssi"] if w.get("rssi") is not None else ""
        rep.add("about", True, "Wi-Fi: joined %s as %s.local at %s%s" % (w["ssid"], w["name"], w["address"], sig))
    elif w["state"] == "failed":
        rep.add("about", False, "Wi-Fi: joining %s failed (%s) after %d attempts; the board keeps trying"
                % (w["ssid"], w["reason"], w["tries"]),
                WIFI_CHECKS.get(w["reason"], "the router's log; `hapenny wifi` shows the state"))
    elif w["state"] == "setup":
        from hapenny.scoreboard import SETUP_WHY

        rep.add("about", True, "Wi-Fi: the set-up network %s is open (%s); join it from a phone"
                % (w["ap"]["essid"], SETUP_WHY.get(w["reason"], w["reason"])))
    else:
        rep.add("about", True, "Wi-Fi: joining %s as %s.local" % (w["ssid"], w["name"]))


# the steps a person does at the board itself: look at the LEDs, press the buttons, throw darts
PHYSICAL = ("leds", "buttons", "darts")
STEPS = ("about", "lines") + PHYSICAL
FREE_MIN = 16384  # free heap below this: the finding fails


def run_network(link, info, say, steps=STEPS):
    """The checks a board on the network allows: its diagnostics (`diag`)
    are USB's, so the firmware, protocol, heap, errors and Wi-Fi come from
    `info` and `stats`; the other steps are listed as needing the cable."""
    from hapenny import __version__

    rep = Report()
    if "about" in steps:
        say("hapenny %s, protocol %s, on board profile %s (%s)" % (info.get("version"), info.get("protocol"),
                                                                  info.get("board"), info.get("platform")))
        rep.add("about", info.get("version") == __version__,
                "firmware %s, this hapenny %s" % (info.get("version"), __version__),
                "deploy this version's firmware over USB (hapenny deploy)")
        st = link.request("stats")["stats"]
        say("heap: %d B free, %d B used (peak %s B)" % (st["mem_free"], st["mem_alloc"], st.get("mem_peak")))
        rep.add("about", st["mem_free"] > FREE_MIN, "free heap %d B" % st["mem_free"],
                "under 16 KB free: use a board without PSRAM contention, or fewer variants")
        rep.add("about", not st.get("errors"), "%d unexpected errors since the board started" % st.get("errors", 0),
                "the board's error events say where (hapenny play shows them); over USB hapenny doctor tells more")
        wifi_finding(info.get("wifi"), rep)
    rep.cable = [s for s in steps if s != "about"]
    return rep


def run(link, info, ask, say, record_ms=0, darts=3, button_ms=5000, steps=("about", "lines", "leds",
                                                                             "buttons", "darts"),
        acts_on_virtual=False, port=None):
    """The bring-up, step by step. `ask(question) -> bool` (the person's
    answer), `say(text)` prints; `press(button)` is asked for through
    `ask` too. On a virtual board the physical steps (PHYSICAL) are left
    to a real board, unless `acts_on_virtual`: `ask` then acts on the
    virtual board's own models (its simulator's control channel, as the
    tests do). Returns a Report."""
    rep = Report()
    cells = link.request("map")["cells"]
    about = diag(link, "about")
    if about["platform"] != "esp32" and not acts_on_virtual:
        rep.real_board = [s for s in PHYSICAL if s in steps and (s != "darts" or record_ms)]
        steps = [s for s in steps if s not in PHYSICAL]
    if "about" in steps:
        say("hapenny %s, protocol %s, on board profile %s" % (info.get("version"), info.get("protocol"),
                                                              info.get("board")))
        say("MicroPython %s on %s (%s)" % (mpyformat.release_name(_release(about)),
                                            about.get("machine") or about["platform"], about["platform"]))
        say(console(about, port))
        why = release_problem(about)
        rep.add("about", why is None, why or "MicroPython %s loads this firmware's .mpy files"
                % mpyformat.release_name(_release(about)))
        free = about.get("flash_free")
        say("heap: %d B free, %d B used; flash: %s" % (
            about["mem_free"], about["mem_alloc"],
            "%d KB free of %d KB" % (free // 1024, about["flash_total"] // 1024) if free is not None else "unknown"))
        rep.add("about", about["mem_free"] > 16384, "free heap %d B" % about["mem_free"],
                "under 16 KB free: use a board without PSRAM contention, or fewer variants")
        if free is not None:
            rep.add("about", free > 32768, "free flash %d KB" % (free // 1024),
                    "under 32 KB of flash free: the journal and settings may not fit; remove stray files "
                    "with mpremote")
        heap_and_flash(link, about, rep, say)
        wifi_finding(about.get("wifi"), rep)
    if "lines" in steps:
        lines = diag(link, "lines")
        say("matrix lines: %d rows, %d columns" % (lines["rows"], len(lines["pins"]) - lines["rows"]))
        for ok, text, check in analyse_lines(lines["pins"], lines["rows"], lines["levels"], cells):
            rep.add("lines", ok, text, check)
    if rep.real_board:
        say("This is a virtual board (%s): it has no LEDs to look at, buttons to press or darts to throw, "
            "so %s need a real board (its own models of them are checked by hapenny test --sim)."
            % (about["platform"], _and(rep.real_board)))
    if "leds" in steps and about["leds"].get("pin", 0) < 0:
        say("LEDs: the profile has no strip (its \"leds\" pin is -1): nothing to check")
    elif "leds" in steps:
        L = about["leds"]
        bad = []
        try:
            for bed in list(range(1, L["beds"] + 1)) + ["status"]:
                diag(link, "led", bed=bed)
                what = "the status LEDs" if bed == "status" else "bed %d's LEDs (both chalk squares)" % bed
                if not ask("Are %s lit white, and no others? [y/n] " % what):
                    bad.append(bed)
            dark = False
            if len(bad) == L["beds"] + 1:  # all wrong: dark, or lit in the wrong places?
                diag(link, "led", bed=1)
                dark = not ask("Is any LED lit at all? [y/n] ")
        finally:
            diag(link, "led", bed=None)
        if not bad:
            rep.add("leds", True, "all %d LEDs light where the profile says" % L["count"])
        elif dark:
            rep.add("leds", False, "no LED lights at all",
                    "the strip's data wire (the profile's LED pin), its 5 V and ground, and that the "
                    "data goes into the strip's DIN end (the arrow points away from it)")
        else:
            rep.add("leds", False, "LEDs wrong for %s" % (
                "every bed" if len(bad) == L["beds"] + 1 else ", ".join(str(b) for b in bad)),
                    "the profile's leds.per_side and beds against the strip as fitted: if the lit LEDs are "
                    "shifted, the strip starts earlier or later than the profile says; a single dark "
                    "section is a broken joint at its input")
    if "buttons" in steps:
        for i, name in enumerate(BUTTONS):
            pin = about["buttons"][i]
            if pin is None:
                continue
            say("Press and release the %s button now (%d s) ..." % (name.upper(), button_ms // 1000))
            ask("press:" + name)
            seen = diag(link, "watch", ms=button_ms, timeout=button_ms / 1000 + 10)["buttons"]
            if any(b == i and v for _, b, v in seen):
                rep.add("buttons", True, "%s button (GPIO %d) works" % (name, pin))
            else:
                rep.add("buttons", False, "no press of the %s button seen on GPIO %d" % (name, pin),
                        "the button must join GPIO %d to GND when pressed (the pull-up is the chip's, "
                        "or a resistor for GPIO 34-39); the multimeter across it must beep when pressed"
                        % pin)
    if "darts" in steps and record_ms:
        say("Throw %d darts now: recording for %d s ..." % (darts, record_ms // 1000))
        ask("throw")
        rec = diag(link, "watch", ms=record_ms, timeout=record_ms / 1000 + 10)
        found, rows = analyse_darts(rec["matrix"], about["timing"], cells)
        for r in rows:
            say("  " + r)
        if rec.get("full"):
            say("  (the recording buffer filled up: the rest was not kept)")
        for ok, text, check in found:
            rep.add("darts", ok, text, check)
    return rep


def _and(words):
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def print_report(rep, say):
    for f in rep.findings:
        say("%s %-7s %s" % ("ok  " if f.ok else "FAIL", f.step, f.text))
        if not f.ok and f.check:
            say("             check: " + f.check)
    for step in rep.real_board:
        say("skip %-7s needs a real board" % step)
    for step in rep.cable:
        say("skip %-7s needs the USB cable" % step)
    say("%d finding(s), %d failed%s%s" % (
        len(rep.findings), len(rep.failed), "; not run on a virtual board: %s (they need a real board)"
        % _and(rep.real_board) if rep.real_board else "", "; not run over the network: %s (their diagnostics "
        "need the USB cable)" % _and(rep.cable) if rep.cable else ""))

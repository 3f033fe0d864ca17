"""make bench's rows for the heap on the 32-bit WebAssembly MicroPython
(bench/wasm_heap.py), with the goals beside them."""
import re


def _kb(b):
    return "%.1f KB" % (b / 1024)


def rows(w):
    if "tour_capped_112k" not in w:  # a run from before the tour: a 4-player game
        return [("  heap, 32-bit port: boot / game",
                 "%(heap_boot_32bit_B)d B / %(heap_play_max_32bit_B)d B (goal < 40,960)" % w)]
    t, c, p, g = w["tour"], w["tour_capped_112k"], w["people_capped_56k"], w["goals"]

    def vs(key):
        return "%s (goal <= %s)%s" % (_kb(t[key]), _kb(g[key]), "" if t[key] <= g[key] else ", NOT MET")

    return [
        ("  heap, 32-bit: game between people (peak)", vs("people_peak") + "; the virtual board's code %s of it"
         % _kb(w["virtual_layer_code"])),
        ("  heap, 32-bit: game against the computer, hints (peak)", vs("computer_peak")),
        ("  heap, 32-bit: bring-up tools (peak) / people again after", "%s / %s" % (
            vs("bringup_peak"), _kb(t["after_peak"]))),
    ] + _eight_rows(t) + [
        ("  heap capped at 112 KB: whole tour (collected between steps, not inside)",
         "%d MemoryError (goal 0)%s; largest free block after %s" % (
             c["memory_errors"], _failed(c), _kb(c["largest_free_block"] or 0))),
        ("  heap capped at 56 KB: game between people (idem)", "%s MemoryError (goal 0)%s" % (
            _errors(p), _failed(p))),
    ] + _demand_rows(t) + wifi_rows(w.get("wifi"))


def wifi_rows(wi):
    """The Wi-Fi phases (bench/wasm_heap.py's wifi_steps): the board's own server over a stand-in network stack."""
    if not wi:
        return []
    u, c, g, i = wi["uncapped"], wi["capped_112k"], wi["goals"], wi["idf"]
    p = u["peaks"]
    srv = u["server_two_viewers"]
    return [
        ("  heap, 32-bit, on Wi-Fi: joining / page / two pages and commands / hostile client / computer, page "
         "watching (peaks)", " / ".join(_kb(p[k]) for k in ("joining", "page", "viewers", "hostile", "computer_watched"))),
        ("  heap, 32-bit, on Wi-Fi: the server's own, two pages watching",
         "%s (goal <= %s)%s" % (_kb(srv), _kb(g["server_two_viewers"]), "" if wi["met"]["server_two_viewers"]
                                else ", NOT MET")),
        ("  heap capped at 112 KB: the Wi-Fi phases (collected between steps, not inside)",
         "%s MemoryError (goal 0)%s; a step's demand at most %s; ESP-IDF side: %d growth%s%s" % (
             _errors(c), "" if not c["memory_errors"] else ", NOT MET (%(firmware)d reported by the firmware, "
             "%(server)d by the server, %(step)d ending a step)" % c["memory_errors_by"] if "memory_errors_by" in c
             else ", NOT MET (the heap stayed full: no report)",
             _kb(max(u["step_demand"].values())), i["growths"],
             "" if i["growths"] == 1 else "s", ", a second one: NOT MET" if i["second_growth"] or i["idf_failed"]
             else ", never a second") + _computer_words(wi.get("computer"))),
    ] + _deploy_rows(wi.get("deploy")) + _ap_rows(wi.get("ap"))


def _computer_words(cw):
    """The computer with hints while a page watches, from a start of its own, at 112 KB."""
    if not cw:
        return ""
    c = cw["capped_112k"]
    first = c.get("first_memory_error") or (c.get("first_no_memory") or {}).get("step")
    return "; the computer, page watching, from its own start: %s MemoryError%s" % (
        _errors(c), " (first: %s)" % _step_words(first) if first else "")


def _step_words(step):
    """A tour step as words: a page's request as its method and path, else its call."""
    m = re.search(r"'(GET|POST|PUT)', '([^'?]*)", step)
    c = re.search(r'"cmd": ?"(\w+)"', step)  # (the tour's lines are compact JSON, as the links send)
    return "%s %s" % m.groups() if m else "a `%s` command" % c.group(1) if c else step.split("\n")[-1][:40]


def _demand_step(u, phase):
    """The step a phase's demand peaked in (a run recorded before that was kept: the one that
    allocated most in the phase)."""
    return (u.get("step_demand_at") or {}).get(phase) or u["step_alloc_most"][phase]["step"]


def _ap_rows(a):
    """The set-up AP (bench/wasm_heap.py's ap_steps): its phases' peaks, its worst step, at 112 KB."""
    if not a:
        return []
    u, c = a["uncapped"], a["capped_112k"]
    worst = max(u["step_demand"], key=lambda k: u["step_demand"][k])
    return [("  heap, 32-bit: the set-up AP, open / the join and the game's page after it (peaks; the largest "
             "step's demand; capped at 112 KB)",
             "%s; %s (%s); %s MemoryError (goal 0)%s" % (
                 " / ".join(_kb(u["peaks"][k]) for k in ("setup_ap", "join")), _kb(u["step_demand"][worst]),
                 _step_words(_demand_step(u, worst)), _errors(c),
                 "" if not c["memory_errors"] and not u["memory_errors"] and not u["unexpected_answers"]
                 else ", NOT MET"))]


def _deploy_rows(d):
    """A network update (bench/wasm_heap.py's deploy_steps): its phases' peaks, its worst step, at 112 KB."""
    if not d:
        return []
    u, c = d["uncapped"], d["capped_112k"]
    worst = max(u["step_demand"], key=lambda k: u["step_demand"][k])
    return [("  heap, 32-bit, on Wi-Fi: a network update, joined / the update / the start after it (peaks; "
             "the largest step's demand; capped at 112 KB)",
             "%s; %s (%s); %s MemoryError (goal 0)%s" % (
                 " / ".join(_kb(u["peaks"][k]) for k in ("joining", "update", "restart")),
                 _kb(u["step_demand"][worst]), _step_words(_demand_step(u, worst)),
                 _errors(c), "" if not c["memory_errors"] and not u["memory_errors"] and not u["unexpected_answers"]
                 else ", NOT MET"))]


def _eight_rows(t):
    """Eight sides: a new game on 20 beds straight after an extended one (the tour's longest states)."""
    if "eight_peak" not in t:
        return []
    return [("  heap, 32-bit: eight sides, a new game on 20 beds after an extended one (peak / a step's demand)",
             "%s / %s" % (_kb(t["eight_peak"]), _kb(t["step_demand"]["eight"])))]


def stopped(run):
    """A run that could not report (its heap stayed full to the end), or that a step's memory
    error stopped (the Wi-Fi phases skip the steps after it): its count is at least that."""
    return not run.get("reported", True) or bool((run.get("memory_errors_by") or {}).get("step"))


def _errors(run):
    """The count; "at least" when the run stopped short (stopped)."""
    return ("at least %d" if stopped(run) else "%d") % run["memory_errors"]


def _failed(run):
    if not run["memory_errors"]:
        return ""
    return ", NOT MET (%d steps failed in all)" % run.get("steps_failed", 0)


def _demand_rows(t):
    """A step's demand with no collection inside it (the figure a cap checks)."""
    if "step_demand" not in t:
        return []
    d = t["step_demand"]
    worst = max(t["alloc_by_kind"].items(), key=lambda kv: kv[1])
    return [("  heap, 32-bit: a step's demand, people / computer / bring-up",
             "%s / %s / %s (live heap + all one step allocates; most a step allocates: %s, %s)" % (
                 _kb(d["people"]), _kb(d["computer"]), _kb(d["bringup"]), worst[0], _kb(worst[1])))]


DOC_BEGIN = "<!-- heap:begin: made by bench/heap_rows.py from bench/wasm_heap.py's run; do not edit -->"
DOC_END = "<!-- heap:end -->"
ROLE = {  # when each module's code is in the heap
    "shove": "always", "shove.boards": "always", "shove.store": "always", "shove.segments": "always",
    "shove.protocol": "always", "shove.rules": "always", "shove.variants": "always (rules imports it: its heap is in rules' figure)", "shove.events": "always", "shove.jrec": "always",
    "shove.journal": "start-up (a restore); a whole journal written (a new game, a long game's rewrite)",
    "shove.scanner": "always", "shove.buttons": "always", "shove.leds": "always", "shove.handover": "always",
    "shove.giveback": "the loop's end (a hand-over to the REPL)",
    "shove.fault": "an error the loop caught (its report; let go after)",
    "shove.names": "start-up on a board with a radio, and the set-up AP's opening (a network's names read; let go after)",
    "shove.commands": "always", "shove.app": "always",
    "shove.safeboot": "start-up (chip: until the start counts as good)", "shove.startup": "start-up (idem)",
    "shove.chip": "start-up", "shove.loading": "start-up", "shove.profile": "start-up; map command",
    "shove.profile_default": "start-up, no profile on flash", "shove.settings": "start-up; config command",
    "shove.newgame": "a new game, the journal's at start-up", "shove.extra": "a rare command",
    "shove.request": "a command line or a button press (loaded for it, let go after)",
    "shove.view": "a reply or event that carries a state; an undo; a journal written whole or replayed",
    "shove.diag": "a diag command", "shove.wifi": "while a Wi-Fi network is set (never on a board without one)",
    "shove.wifiset": "the wifi command",
    "shove.wifiap": "while the set-up network is open (no network joined)",
    "shove.captive": "while the set-up network is open (its DNS answers)",
    "shove.setupweb": "while the set-up network is open (its page's server)",
    "shove.wifipage": "a request to the set-up page (let go after)",
    "shove.probes": "a phone's connectivity probe on the set-up network (let go after)",
    "shove.update": "an update over the network, once its owner code is right (let go after)",
    "shove.updswitch": "start-up after an update was committed (boot's switch; let go after)", "shove.throwing": "a game with a computer side; a hint",
    "shove.cpu": "a game with a computer side; a hint", "shove.coach": "a hint",
    "shove.cpuloops": "from the first game with a computer side or hint until a reset (on the chip its machine code is in executable RAM outside this heap)",
    "shove.boards.matrix_model": "always on the virtual board (its matrix); on the ESP32 from the first `press` (its closures)",
    "shove.boards.virtual": "always (virtual board only)",
    "shove.boards.virtual_setup": "start-up (virtual board only: its making)",
    "shove.boards.virtual_clock": "always (virtual board only)", "shove.boards.virtual_flash": "always (virtual board only)",
    "shove.boards.virtual_esp32": "virtual board, ESP32 timing model", "shove.boards.virtual_uart":
    "virtual board, ESP32 timing model", "shove.boards.virtual_bench": "virtual board run by the simulator",
    "shove.boards.esp32": "the chip's board layer in place of the virtual one (weighed here as bytecode, "
                          "`machine` stubbed)",
    "shove.boards.esp32_setup": "the chip's board: its making, the watchdog's start, the doctor's line test "
                                "(with safe boot's `chip` and `safeboot` for them; each let go after)",
    "shove.pacing": "always", "shove.keeper": "always", "shove.strip": "always", "shove.jstore": "always",
    "shove.httpd": "while on a network (the server's core)", "shove.webroutes": "while on a network (the routes' kept state)",
    "shove.httpreq": "while a request to the board's server is under way", "shove.webpage": "while a request to the board's server is under way",
    "shove.webgate": "while a request to the board's server that needs a code is under way (access, a command, an update)",
    "shove.webcmd": "a page's command while it runs through the handlers (let go after)",
}


def module_table(w):
    """Markdown: each module's heap once imported, its .mpy size and when it is loaded."""
    lines = ["| module | heap when loaded | .mpy (its code) | given back when let go | in the heap |",
             "|---|---|---|---|---|"]
    for m, c in w["modules"].items():
        back = "%d B" % c["released"] if "released" in c else "-"
        lines.append("| %s | %d B | %d B | %s | %s |" % (m, c["heap"], c["mpy"], back, ROLE.get(m, "?")))
    t = w["tour"]
    lines.append("")
    lines.append("Tour peaks (live heap after a collection, the driver's own %d B taken out): people %d B, "
                 "%scomputer %d B, bring-up %d B, people again after %d B; the virtual board's code %d B of each "
                 "(the ESP32 layer's in its place: %d B)."
                 % (t["driver"], t["people_peak"],
                    "eight sides %d B, " % t["eight_peak"] if "eight_peak" in t else "",
                    t["computer_peak"], t["bringup_peak"], t["after_peak"],
                    w["virtual_layer_code"], w.get("esp32_layer_code", 0)))
    if "people_milestones" in t:
        m = t["people_milestones"]
        lines.append("")
        lines.append("The people's game, live heap (driver out): after boot (start-up let go) %d B, the game's code "
                     "loaded %d B, the App started (board layer, parts, profile and start-up let go) %d B, a new "
                     "game %d B, the peak %d B; with the ESP32 layer's code in place of the virtual board's, and "
                     "no matrix model (the chip loads it for `press` only), the peak would be about %d B." % (m["after_boot"], m["game_code_loaded"], m["app_started"],
                                                     m["new_game"], m["people_peak"],
                                                     w.get("people_peak_esp32_layer", m["people_peak"])))
    if "step_demand" in t:
        d = t["step_demand"]
        lines.append("")
        lines.append("A step's demand (live heap plus all one step allocates, what a cap checks on this port): "
                     "people %d B, %scomputer %d B, bring-up %d B, after %d B. The most one step of each kind "
                     "allocated (in any phase): %s." % (
                         d["people"], "eight sides %d B, " % d["eight"] if "eight" in d else "", d["computer"],
                         d["bringup"], d["after"], ", ".join("%s %d B" % kv for kv in t["alloc_by_kind"].items())))
    c, p = w.get("tour_capped_112k"), w.get("people_capped_56k")
    if c and p:
        lines.append("")
        lines.append("Capped: at 112 KB the whole tour %d MemoryError, %d steps failed, largest free block "
                     "after %d B; at 56 KB the people's game %s MemoryError, %d steps failed%s."
                     % (c["memory_errors"], c.get("steps_failed", 0), c["largest_free_block"] or 0,
                        _errors(p), p.get("steps_failed", 0),
                        "" if p.get("reported", True) else " (the firmware did not fit: the App could not "
                        "start, and the heap stayed full to the end, the tour's report included)"))
    return "\n".join(lines)


def write_doc(w, doc=None):
    from pathlib import Path

    doc = doc or Path(__file__).resolve().parent.parent / "docs" / "performance.md"
    text = doc.read_text()
    if DOC_BEGIN not in text:
        return
    i = text.index(DOC_BEGIN) + len(DOC_BEGIN)
    doc.write_text(text[:i] + "\n" + module_table(w) + "\n" + text[text.index(DOC_END):])


def romfs_rows(r):
    """The people's game from .mpy files and from a ROMFS image (bench/romfs_heap.py)."""
    if not r:  # a run from before it
        return []
    m, f = r["mpy"], r["romfs"]
    return [("  heap, unix port (8-byte words): game between people from .mpy / from ROMFS (peak)",
             "%s / %s: ROMFS keeps %s of code and names' text out (a custom image; none on the 32-bit port)" % (
                 _kb(m["people_peak"]), _kb(f["people_peak"]), _kb(r["saved"]["people_peak"])))]

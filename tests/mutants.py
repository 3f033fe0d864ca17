"""`make mutants`: each mutation below is a defect the suite must catch.
Every one is applied alone to a scratch copy of the tree (never to the
working tree), the named tests are run there, and they must fail. One line
a mutant; exit status 1 if any survives. `python tests/mutants.py 53-58 60`
runs only those (numbered as printed).

A mutant is (file, original text, replacement, tests that must catch it)."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MUTANTS = [
    ("firmware/shove/scanner.py", "ticks_diff(now, self.open_since) >= self.rearm_us",
     "ticks_diff(now, self.open_since) >= 0", ["tests/portable/test_scanner.py"]),
    # the time helpers, in the package's __init__ (which mutmut does not mutate)
    ("firmware/shove/__init__.py", "    if d >= 0x20000000:\n", "    if d > 0x20000000:\n", ["tests/portable/test_wrap.py"]),
    ("firmware/shove/__init__.py", "    return (a + d) & 0x3FFFFFFF\n", "    return a + d\n", ["tests/portable/test_wrap.py"]),
    # ... and the refusal every part raises: its code is what a client reads
    ("firmware/shove/__init__.py", "        self.code = code\n", "        self.code = \"refused\"\n",
     ["tests/portable/test_settings.py"]),
    ("firmware/shove/journal.py", "        for i in range(n):\n",
     "        for i in range(n - 1 if n else 0):\n", ["tests/portable/test_journal.py"]),
    ("firmware/shove/journal.py", "        for i in range(n):\n",
     "        for i in range(n - 1 if n else 0):\n",
     ["tests/hil/test_power_cuts.py::test_power_cuts_keep_every_acknowledged_change"]),
    ("firmware/shove/journal.py", "return game, n, len(body) % REC == 0",
     "return game, n, True", ["tests/portable/test_journal.py"]),
    ("firmware/shove/store.py", "no such file.\"\"\"\n",  # a torn .tmp taken for the file
     "no such file.\"\"\"\n    try:\n        os.rename(path + TMP, path)\n    except OSError:\n        pass\n",
     ["tests/portable/test_codec.py"]),
    ("firmware/shove/store.py", "            f.flush()\n            pause()\n",
     "            f.flush()\n", ["tests/portable/test_codec.py"]),
    ("firmware/shove/events.py", "tally.append(game.marks[r * nb + bi])",
     "tally.append(game.marks[side * nb + bi])", ["tests/test_gamestate.py"]),
    ("host/hapenny/gamestate.py", "return [i for i, s in enumerate(st[\"sides\"]) if all(m >= full",
     "return [i for i, s in enumerate(st[\"sides\"]) if any(m >= full", ["tests/test_gamestate.py"]),
    ("firmware/shove/handover.py", "if b == CTRL_A and live:", "if b == CTRL_A:",
     ["tests/portable/test_handover.py"]),
    ("firmware/shove/handover.py", "if self.armed and (not live or b not in (10, 13)):",
     "if self.armed and not live:", ["tests/portable/test_handover.py"]),
    ("firmware/shove/rules.py", "take -= 1  # the last mark of a game must be scored, never given",
     "take -= 0", ["tests/portable/test_rules.py"]),
    # (tests/hil/test_journal_board.py no longer catches this one since the journal moved to
    # littlefs segments; the start-up's own test does)
    ("firmware/shove/loading.py", "    keeper.jdirty = not clean\n",
     "    keeper.jdirty = False\n",
     ["tests/portable/test_loading.py::test_a_torn_last_record_keeps_the_game_and_marks_the_file_for_rewriting"]),
    # the journal on littlefs: a new game like the last must not inherit its segments
    ("firmware/shove/jstore.py", "        if tok == self.tok:\n", "        if False:\n",
     ["tests/test_flash_journal.py::test_power_cuts_at_random_flash_operations_lose_nothing_acknowledged"]),
    # ... and a new segment directory (an erase) is made only where no dart can follow
    ("firmware/shove/keeper.py", "        if ended:\n            try:\n                self.jstore.boundary",
     "        if False:\n            try:\n                self.jstore.boundary",
     ["tests/test_flash_journal.py::test_a_long_game_erases_a_block_at_most_every_20_darts_and_never_for_a_dart"]),
    ("firmware/shove/boards/virtual_uart.py", "    us_per_byte = UART_US_PER_BYTE  # the app paces",
     "    us_per_byte = 0  # the app paces", ["tests/test_esp32_timing.py"]),
    ("host/hapenny/sim/pulses.py", "            extra.append(ev)\n", "            pass\n",
     ["tests/soak/test_soak.py::test_match_counts_misses_doubles_and_order"]),
    ("firmware/shove/request.py", 'want_int(cmd, "row", 0, c.prof.rows - 1, "bad_cell")',
     'want_int(cmd, "row", 0, c.prof.rows - 1, "bad_json")',
     ["tests/hil/test_reliability.py::test_hostile_input_gets_errors_and_changes_nothing"]),
    ("firmware/boot.py", "callback=lambda _t: _wdt.feed())", "callback=lambda _t: None)",
     ["tests/portable/test_safeboot.py"]),
    # the watchdog armed after every soft reset, also in safe mode
    ("firmware/boot.py", 'if machine.RTC().memory() == b"hapenny:wdt":', "if True:",
     ["tests/portable/test_safeboot.py"]),
    # the game arms the watchdog without the flag boot.py reads after a soft reset
    ("firmware/shove/boards/esp32_setup.py", "    machine.RTC().memory(WDT_ARMED)  # the flag boot.py reads after a soft reset\n", "",
     ["tests/test_esp32_board.py"]),
    ("firmware/shove/boards/virtual_setup.py", "    machine.RTC().memory(WDT_ARMED)", "    pass  # ",
     ["tests/hil/test_esp32_semantics.py::test_a_soft_reset_arms_the_watchdog_only_if_the_game_had_armed_it"]),
    # a WebREPL's dupterm stream lost at the hand-over
    ("firmware/shove/giveback.py", "            o.dupterm(self.prev)", "            o.dupterm(None)",
     ["tests/portable/test_handover.py"]),
    # Ctrl-C live while main.py loads the firmware
    ("firmware/main.py", "micropython.kbd_intr(-1)\ntry:", "try:", ["tests/portable/test_safeboot.py"]),
    # a reset asked for counted as a bad start
    ("firmware/shove/safeboot.py", "if cause == SOFT_RESET or (deliberate and cause == HARD_RESET):",
     "if cause == SOFT_RESET:", ["tests/portable/test_safeboot.py"]),
    # the bytes handed back through a dupterm stream only, which v1.27's REPL never reads
    ("firmware/shove/giveback.py", "        notify(None)\n", "", ["tests/portable/test_handover.py"]),
    ("firmware/shove/giveback.py", "        notify(None)\n", "",
     ["tests/hil/test_handover_releases.py"]),
    # GPIO 16/17 let through on a SPIRAM image
    ("firmware/shove/chip.py", "    bad = sorted(set(p for p in pins if p in PSRAM_PINS))",
     "    bad = []", ["tests/portable/test_chip.py"]),
    # the settle time fixed, whatever the profile says
    ("firmware/shove/boards/esp32_setup.py", 'board._settle = profile.timing["settle_us"] * reads_per_us',
     "board._settle = 6", ["tests/test_esp32_board.py"]),
    # CPython's json refuses what MicroPython's takes: only the run inside MicroPython shows it
    ("firmware/shove/request.py", "if not valid_json(line, tick):", "if not valid_utf8(line):",
     ["tests/test_portable_on_micropython.py"]),
    # the computer's gift under `next`: only the first side still open on the bed is given marks
    ("firmware/shove/cpuloops.py", "                if nxt:\n                    sur = 0",
     "                if False:\n                    sur = 0", ["tests/test_cpu_properties.py"]),
    ("firmware/shove/cpu.py", "        self.moves = g.moves()\n        self.wait = pace\n", "",
     ["tests/portable/test_cpu.py"]),
    # the computer's darts tables: the safe one only where another side has the bed open
    ("firmware/shove/cpu.py", "tabs[i] = self.e_bull if beds[i] == 25 else es if cnt and cnt[i] > 1 else en",
     "tabs[i] = self.e_bull if beds[i] == 25 else es if cnt else en",
     ["tests/portable/test_cpu.py::test_a_bed_another_side_has_open_is_counted_with_the_safe_table"]),
    # a gifted mark counts several times what it saves its taker (three from level 3 up): the
    # oracle adds the others
    ("firmware/shove/cpuloops.py", "y += (e[c - take] - e[c]) * gw", "y += e[c - take] - e[c]",
     ["tests/test_cpu_properties.py"]),
    ("host/hapenny/web/static/app.js", "Date.now() - heard > 25000", "Date.now() - heard > 2500000",
     ["tests/web/test_web_page.py::test_a_stream_that_went_silent_is_opened_again"]),
    # Ctrl-C with a page open: its stream cut off after the shutdown timeout, not ended
    ("host/hapenny/web/server.py", "    app.on_shutdown.append(on_shutdown)\n", "",
     ["tests/test_sim_process.py::test_sim_web_is_make_web"]),
    # settling on the scanner's "idle" alone: a flake under load before
    ("firmware/shove/boards/virtual_bench.py", 'st["closing"] = not b.model.idle', 'st["closing"] = False',
     ["tests/hil/test_board.py::test_settling_waits_for_closures_the_scanner_has_not_seen_yet"]),
    # the ESP32 model charging the host's time between two block-device calls as the chip's work
    ("firmware/shove/boards/virtual_esp32.py",
     "            c.sim(LFS_OP_US)  # since the last operation only littlefs ran",
     "            c.charge()", ["tests/test_portable_on_micropython.py"]),
    # reading in bursts while a stuck crossing is masked: its release would go unseen
    ("firmware/shove/scanner.py", "self.calm = self.state == IDLE and not self.masked", "self.calm = self.state == IDLE",
     ["tests/portable/test_scanner.py::test_reading_in_bursts_while_calm_changes_no_event"]),
    # an idle burst that reads on past a closure: the dart's first read is overwritten
    ("firmware/shove/boards/esp32.py", "        if closed:\n            break\n", "",
     ["tests/test_esp32_board.py::test_an_idle_burst_reads_n_times_in_one_call_and_stops_at_a_closure"]),
    # a long quiet burst that does not look at the console: a request waits for its end
    ("firmware/shove/boards/virtual.py",
     "            if self.buttons_down() or self.serial.waiting():\n",
     "            if self.buttons_down():\n", ["tests/test_esp32_timing.py::test_a_quiet_board_serves_a_request_at_once"]),
    ("firmware/shove/boards/esp32.py", "            if self.serial_ready() or self.buttons_down():\n",
     "            if self.buttons_down():\n",
     ["tests/test_esp32_board.py::test_a_long_idle_burst_looks_at_the_console_buttons_and_clock_between_viper_calls"]),
    # ... or that runs past the time a waiting frame is due
    ("firmware/shove/app.py", "                        until = self.strip.at\n", "",
     ["tests/test_esp32_timing.py::test_a_frame_that_waits_is_written_on_time_during_quiet_bursts"]),
    # the console read a byte at a time through the line buffer, or in short slices only: the
    # UART's ring fills up while a long line comes in at the full baud rate
    ("firmware/shove/commands.py", "            if not watch.armed:  # printable bytes go straight into the line\n",
     "            if False:\n", ["tests/test_app_commands.py::test_a_long_line_is_read_in_growing_slices_its_printable_bytes_in_bulk"]),
    ("firmware/shove/commands.py", "SERIAL_MORE = 64\n", "SERIAL_MORE = 16\n",
     ["tests/test_app_commands.py::test_a_long_line_is_read_in_growing_slices_its_printable_bytes_in_bulk"]),
    # the model letting the board sleep while bytes are on their way in
    ("firmware/shove/boards/virtual_bench.py", "and not b.serial.rxq and not b.buttons_down()",
     "and not b.buttons_down()",
     ["tests/test_esp32_timing.py::test_a_long_line_at_the_full_baud_rate_loses_no_byte_in_the_uarts_ring"]),
    # a REPL byte taken into a line instead of going to the watch
    ("firmware/shove/protocol.py", '_STOPS = (b"\\n", b"\\x03", b"\\x01")', '_STOPS = (b"\\n", b"\\x01")',
     ["tests/hil/test_repl.py"]),
    # long work (a request, a state) without reads of the matrix in it
    ("firmware/shove/app.py", "            board.read_matrix(sc.snap)\n        sc.step(board.ticks_us())\n",
     "            board.read_matrix(sc.snap)\n", ["tests/test_portable_on_micropython.py"]),
    ("firmware/shove/protocol.py", "SLICE_DEPTH = 3 ", "SLICE_DEPTH = 2 ", ["tests/portable/test_codec.py"]),
    # a FIFO load of a long reply written straight from the read loop, no round of slices
    ("firmware/shove/app.py", "                            tx = self.tx\n", "",
     ["tests/test_esp32_timing.py"]),
    # ... and the board's burst writes the next load once the FIFO is empty, then reads on
    ("firmware/shove/boards/esp32.py", "                if not tx.q:\n                    tx = None\n", "                break\n",
     ["tests/test_esp32_board.py"]),
    # the lockout counts from the dart's first contact, not from a late step
    ("firmware/shove/scanner.py", "        self.t0 = ticks_add(self.t0, self.window_us)\n", "        self.t0 = now\n",
     ["tests/portable/test_scanner.py"]),
    # no service slice while a dart's window is being read
    ("firmware/shove/app.py", "                elif st == scanner.IDLE:  # re-armed", "                else:  # re-armed",
     ["tests/test_portable_on_micropython.py"]),
    # a gift's flash waits for its end once its first frame is written (in the lockout)
    ("firmware/shove/strip.py", "self.waits = r.hint_at < 0 and r.code_at < 0 and (g is None or g.phase != rules.OVER)",
     "self.waits = False", ["tests/test_esp32_timing.py"]),
    # a frame reads the matrix after each bed
    ("firmware/shove/leds.py", "            if tick is not None:\n                tick()\n", "",
     ["tests/portable/test_panel.py"]),
    # a dart a scan point left in the ring is served before the next burst
    ("firmware/shove/app.py", "                if sc.qhead != sc.qtail:\n                    # a scan point",
     "                if False:\n                    # a scan point", ["tests/test_portable_on_micropython.py"]),
    # the model jumping to its next change when that is inside the burst
    ("firmware/shove/boards/virtual_esp32.py", "and scanner.ticks_diff(m.next_change, now) > n * READ_US:",
     "and scanner.ticks_diff(m.next_change, now) > 0:", ["tests/test_portable_on_micropython.py"]),
    # a board whose native .mpy sub-version differs passes the release check
    ("host/hapenny/mpyformat.py", "if ver != fmt[0] or (arch and sub != fmt[1]):", "if ver != fmt[0]:",
     ["tests/test_deploy_checks.py"]),
    # the wheel without the board profiles
    ("setup.py", 'DATA = {"firmware": HERE / "firmware", "profiles": HERE / "hardware" / "profiles"}',
     'DATA = {"firmware": HERE / "firmware"}', ["tests/test_package.py"]),
    # the network's join: the port's own retries left on, the host name not set, a refusal not seen,
    # a bad password taken, the password in a report
    ("firmware/shove/wifi.py", "            w.config(reconnects=0)\n", "", ["tests/test_wifi_join.py"]),
    ("firmware/shove/wifi.py", "            network.hostname(self.name)\n", "", ["tests/test_wifi_join.py"]),
    ("firmware/shove/wifi.py", "elif s != self.first and s not in", "elif False and s not in",
     ["tests/test_wifi_join.py"]),
    ("firmware/shove/wifiset.py", 'key = check_key(s.get("key"))', 'key = s.get("key")',
     ["tests/test_wifi_board.py"]),
    ("firmware/shove/wifi.py", '"tries": self.tries}', '"tries": self.tries, "key": self._key}',
     ["tests/test_wifi_board.py"]),
    # the set-up access point: its code let go once joined, NEW's hold at start no press, the DNS's reply sent
    ("firmware/shove/wifiap.py", '        release("wifiap", "captive")\n', "", ["tests/test_setup_board.py"]),
    ("firmware/shove/loading.py", "        bt.raw[_NEW] = bt.stable[_NEW] = bt.longed[_NEW] = 1\n", "",
     ["tests/test_setup_board.py"]),
    ("firmware/shove/captive.py", "                    self.sock.sendto(self._view[:n], peer)\n", "",
     ["tests/test_captive_fuzz.py", "tests/test_portable_on_micropython.py"]),
]


def tree_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (ROOT / p).is_file()]


def main(argv):
    """argv: numbers of the mutants to run (1-based, as printed; `53-58` a range); none: all"""
    py = sys.executable
    survived = 0
    pick = set()
    for a in argv:
        lo, _, hi = a.partition("-")
        pick.update(range(int(lo), int(hi or lo) + 1))
    chosen = [(n, m) for n, m in enumerate(MUTANTS, 1) if not pick or n in pick]
    with tempfile.TemporaryDirectory(prefix="hapenny-mutants-") as tmp:
        base = Path(tmp) / "tree"
        for rel in tree_files():
            dst = base / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dst)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(base / "host"), str(base / "firmware")]))
        # the copy has no .venv: its tests find this tree's interpreter (make exports it too)
        sys.path.insert(0, str(ROOT / "tests"))
        from mphelp import micropython_path
        if micropython_path():
            env.setdefault("HAPENNY_MICROPYTHON", micropython_path())
        # the copy must pass them all unmutated, or "caught" would mean nothing
        every = sorted({t for _, m in chosen for t in m[3]})
        proc = subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *every], cwd=base, env=env,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            # a timing-model test can fail on a loaded machine: the failures are run once more alone
            failed = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("FAILED ")]
            if failed:
                print("unmutated copy: %d failed; run again alone: %s" % (len(failed), " ".join(failed)))
                proc = subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *failed], cwd=base,
                                      env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            print(proc.stdout[-3000:] + proc.stderr[-2000:])
            print("the unmutated copy fails its tests: no mutant can be judged")
            return 1
        print("unmutated copy: %d test files pass" % len(every))
        for n, (rel, old, new, tests) in chosen:
            path = base / rel
            text = path.read_text()
            if text.count(old) != 1:
                print("mutant %2d %s: the original text is not there once: fix the list" % (n, rel))
                survived += 1
                continue
            path.write_text(text.replace(old, new))
            try:
                proc = subprocess.run([py, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                                      cwd=base, env=env, capture_output=True, text=True, timeout=600)
            finally:
                path.write_text(text)
            caught = proc.returncode not in (0, 5)
            survived += not caught
            print("mutant %2d %-32s %s" % (n, rel.split("/")[-1] + ":", "caught" if caught else "SURVIVED"),
                  "(%s -> %s)" % (old.strip()[:40], new.strip()[:40]))
    print("%d of %d mutants caught" % (len(chosen) - survived, len(chosen)))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

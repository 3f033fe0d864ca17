"""The `hapenny` command: one tool for the board, real or virtual.

Port choice everywhere: --port, else $HAPENNY_PORT, else the one board that
looks like an ESP32 (or the one running `hapenny sim`). A board on the network
is a port too (`--port NAME.local`, `--port http://ADDRESS[:PORT]`), with its
pairing code from --code, the URL's `#code=` or $HAPENNY_CODE."""
import argparse
import json
import os
import sys

from hapenny import __version__

EPILOG = "Run `hapenny COMMAND -h` for a command's options. Docs: README.md and docs/."


PORT_HELP = ("serial port, or a board on the network: NAME.local or http://ADDRESS[:PORT] (default: "
             "$HAPENNY_PORT or the one ESP32 found)")


def _shared():
    """The options several commands share, each declared once, as argparse
    parents: [--port, --code] for every command that talks to a board,
    [--port, --code, --json] for those that can print the board's reply as
    JSON, [--profile] for those that deploy, [--port] alone for `web` (its
    --code is its own page's)."""
    bare = argparse.ArgumentParser(add_help=False)
    bare.add_argument("--port", "-p", help=PORT_HELP)
    port = argparse.ArgumentParser(add_help=False, parents=[bare])
    port.add_argument("--code", help="the pairing code of a board on the network (default: the URL's #code= "
                      "or $HAPENNY_CODE)")
    reply = argparse.ArgumentParser(add_help=False, parents=[port])
    reply.add_argument("--json", action="store_true", help="print the board's reply as JSON")
    profile = argparse.ArgumentParser(add_help=False)
    profile.add_argument("--profile", help="board profile to deploy with: a name in hardware/profiles or a "
                         ".json path (default: keep the board's; generic-8x8 on a board with none)")
    return [port], [reply], [profile], [bare]


def _connect(args, events=False):
    """The board's link and its `info`. `events`: the command watches the
    board's events (over USB they always arrive; a board on the network
    then keeps an event stream open for it)."""
    from hapenny.connect import connect

    link, info, ser = connect(args.port, code=getattr(args, "code", None), events=events)
    return link, info


def _on_network(args):
    """The board on the network the command is for, or None (a serial port, or none named)."""
    from hapenny.connect import network_address

    port = args.port or os.environ.get("HAPENNY_PORT")
    return network_address(port) if port else None


def _cable(args, command, why):
    """Refuse, in one line, a command that needs the USB cable when the port is a board on the network."""
    from hapenny.connect import PortError

    addr = _on_network(args)
    if addr is not None:
        raise PortError("%s needs the USB cable (%s): plug the board into this computer and give its serial "
                        "port, not %s (hapenny ports lists them)" % (command, why, addr))


def _print_state(state, as_json):
    if as_json:
        print(json.dumps(state))
        return
    from hapenny import term
    from hapenny.scoreboard import render

    # the screen's key help is for `play`; a one-shot command prints the board only
    width = term.size(sys.stdout)[0]
    print(render(state, width=width, color=term.wants_colour(sys.stdout), keys=False).rstrip())


def _parse_rule(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError("a rule is NAME=VALUE, for example darts=4")
    key, val = text.split("=", 1)
    try:
        return key, json.loads(val)
    except ValueError:
        return key, val


def cmd_ports(args):
    from hapenny.connect import list_ports

    rows = list_ports()
    if not rows:
        print("no serial ports (plug in the ESP32, or start `hapenny sim`)")
    for dev, desc, esp in rows:
        print("%s %-20s %s" % ("*" if esp else " ", dev, desc))
    if rows:
        print("(* looks like an ESP32 board)")
    return 0


def _default_image():
    from hapenny.deploy import default_image

    return default_image()


def cmd_flash(args):
    from hapenny.connect import choose_port
    from hapenny.deploy import deploy, flash

    _cable(args, "flash", "it writes the chip through its serial port")
    port = choose_port(args.port)
    flash(args.image, port, args.chip, args.baud, dry_run=args.dry_run)
    if args.dry_run or args.no_deploy:
        return 0
    deploy(port, profile=args.profile)
    return 0


def cmd_deploy(args):
    from hapenny.deploy import deploy

    addr = _on_network(args)
    if addr is not None:  # over the board's own server, with the owner code
        from hapenny import netdeploy

        if args.romfs:
            _cable(args, "deploy --romfs", "the ROMFS partition is written through the serial port")
        summary = netdeploy.deploy(addr, owner=args.owner, profile=args.profile, force=args.force, debug=args.debug)
        if args.json:
            print(json.dumps(summary))
        return 0
    summary = deploy(args.port, profile=args.profile, reset=not args.no_reset, force=args.force, debug=args.debug,
                     romfs=args.romfs)
    if args.json:
        print(json.dumps(summary))
    return 0


def cmd_new(args):
    if args.teams and args.players:
        raise SystemExit("hapenny new: give player names or --teams, not both (with --teams every "
                         "name goes in a team: --teams %s" % " ".join(args.teams + [",".join(args.players)]) + ")")
    link, _ = _connect(args)
    fields = {"variant": args.variant}
    if args.teams:
        fields["teams"] = [t.split(",") for t in args.teams]
    else:
        fields["players"] = args.players or ["Home", "Away"]
    if args.rule:
        fields["rules"] = dict(args.rule)
    rep = link.request("new", **fields)
    _print_state(rep["state"], args.json)
    return 0


def cmd_hint(args):
    link, _ = _connect(args)
    h = link.request("hint", level=args.level)["hint"]
    if args.json:
        print(json.dumps(h))
    else:
        print(h["reason"])
    return 0


def cmd_variant(args):
    from rich.text import Text

    from hapenny import firmware, term

    rules = firmware.module("rules")

    if not args.name:
        for name in sorted(rules.VARIANTS):
            r = rules.Rules(name).to_dict()
            beds = "%d-%d" % (r["beds"][0], r["beds"][-1])
            print("%-12s beds %-5s marks %d darts %d gift %-4s win_by_gift %-5s progressive %s" % (
                name, beds, r["marks"], r["darts"], r["gift"], str(r["win_by_gift"]).lower(),
                str(r["progressive"]).lower()))
        return 0
    link, _ = _connect(args)
    link.request("config", set={"variant": args.name})
    term.console(sys.stdout).print(Text.assemble("the new-game button now starts ", (args.name, "bold")))
    if args.start:
        rep = link.request("new", variant=args.name, players=link.request("config")["config"]["players"])
        _print_state(rep["state"], False)
    return 0


CONFIG_FORMS = "hapenny config get [NAME ...] shows settings; hapenny config set NAME=VALUE [NAME=VALUE ...] " \
    "changes them (for example brightness=120, players='[\"Mum\",\"Dad\"]')"


def _config_words(action, words):
    """The settings named (get) or the {name: value} to set, checked before
    any port is opened: ValueError naming the real settings and the forms."""
    from hapenny import firmware

    names = sorted(firmware.module("settings").DEFAULT_CONFIG)
    known = "settings: %s. %s" % (", ".join(names), CONFIG_FORMS)
    if action == "set" and not words:
        raise ValueError("config set needs NAME=VALUE; " + known)
    out = []
    for i, w in enumerate(words):
        name, eq, val = w.partition("=")
        if name not in names:
            rule = name in firmware.module("rules").Rules("classic").to_dict()
            raise ValueError("%r is not a setting%s; %s" % (
                name, " but a game's rule (hapenny new --rule %s)" % (w if eq else name + "=VALUE") if rule else "",
                known))
        if action == "get" and eq:
            raise ValueError("config get takes names only (%s), not %r; %s" % (name, w, known))
        if action == "set" and not eq:
            nxt = words[i + 1] if i + 1 < len(words) and "=" not in words[i + 1] else "VALUE"
            raise ValueError("config set takes NAME=VALUE: did you mean %s=%s? %s" % (name, nxt, known))
        out.append((name, _parse_rule(w)[1] if eq else None))
    return out


def cmd_config(args):
    pairs = _config_words(args.action, args.pairs)
    link, _ = _connect(args)
    if args.action == "set":
        rep = link.request("config", set=dict(pairs))
    else:
        rep = link.request("config")
    cfg = rep["config"]
    if args.action == "get" and pairs:
        cfg = {k: cfg.get(k) for k, _ in pairs}
    if args.json:
        print(json.dumps(cfg))
    else:
        for k in sorted(cfg):
            print("%s = %s" % (k, json.dumps(cfg[k])))
    return 0


def _simple(cmd):
    def run(args):
        link, _ = _connect(args)
        fields = {"seg": args.seg} if cmd == "throw" else {}
        rep = link.request(cmd, **fields)
        _print_state(rep.get("state"), args.json)
        return 0

    return run


def wifi_line(w):
    """One line for a person: the board's network state (never a password: the board sends none)."""
    st = w["state"]
    if st == "off":
        return "Wi-Fi: no network set (set one: hapenny wifi NETWORK)"
    where = "%s.local" % w["name"]
    if st == "joined":
        sig = " signal %d dBm" % w["rssi"] if w.get("rssi") is not None else ""
        return "Wi-Fi: joined %s as %s at %s%s" % (w["ssid"], where, w["address"], sig)
    if st == "failed":
        return "Wi-Fi: %s failed (%s); retrying (%d attempts so far)" % (w["ssid"], w["reason"], w["tries"])
    if st == "setup":
        from hapenny.scoreboard import SETUP_WHY

        return ("Wi-Fi: set-up network %s open (%s): join it from a phone with the pairing code as its password"
                % (w["ap"]["essid"], SETUP_WHY.get(w["reason"], w["reason"])))
    return "Wi-Fi: joining %s as %s" % (w["ssid"], where)


def board_urls(w):
    """The board's own page while it is joined, the pairing code in the
    fragment (a browser never sends it: hapenny/web/server.py page_url): at
    its address, then at NAME.local. [] otherwise."""
    if w.get("state") != "joined" or not w.get("address") or not w.get("code"):
        return []
    if "web_port" in w and not w["web_port"]:  # joined, but its server is not listening (a `web` event said why)
        return []
    port = w.get("web_port") or 80  # (80 on the chip; the virtual board's server sits on a free port)
    return ["http://%s%s/#code=%s" % (host, "" if port == 80 else ":%d" % port, w["code"])
            for host in (w["address"], "%s.local" % w["name"])]


def cmd_wifi(args):
    import getpass
    import time

    if args.owner_code:  # the owner code, USB's alone: made on first asking
        if args.network or args.forget:
            raise SystemExit("hapenny wifi: --owner-code takes no network and no --forget")
        _cable(args, "wifi --owner-code", "the owner code is set and shown over USB only")
        link, _ = _connect(args)
        code = link.request("wifi", owner=True)["owner"]
        print(json.dumps({"owner": code}) if args.json else
              "owner code: %s (updates over the network need it: hapenny deploy --port <board> --owner %s)"
              % (code, code))
        return 0
    if args.forget and (args.network or args.hostname or args.password_stdin):
        raise SystemExit("hapenny wifi: --forget takes no network, password or --hostname")
    if (args.password_stdin or args.hostname) and not args.network:
        raise SystemExit("hapenny wifi: name the network: hapenny wifi NETWORK")
    if args.network or args.forget:  # the network's name and password, and the pairing code, are USB's
        _cable(args, "wifi %s" % ("NETWORK" if args.network else "--forget"),
               "the board takes a network and its password over USB only")
    fields = {}
    if args.network:
        if args.password_stdin:
            key = sys.stdin.readline().rstrip("\r\n")
        else:
            key = getpass.getpass("password for %s (Enter for an open network): " % args.network)
        fields["set"] = {"ssid": args.network, "key": key}
        if args.hostname:
            fields["set"]["name"] = args.hostname
    elif args.forget:
        fields["forget"] = True
    link, info = _connect(args)
    if _on_network(args) is not None:  # the state as `info` gives it: without the pairing code
        w = info.get("wifi") or {"state": "off"}
        print(json.dumps(w) if args.json else wifi_line(w))
        return 0
    w = link.request("wifi", **fields)["wifi"]
    if "set" in fields and args.wait > 0:  # the join's outcome, unless asked not to wait
        end = time.monotonic() + args.wait
        while w["state"] == "joining" and time.monotonic() < end:
            time.sleep(0.5)
            w = link.request("wifi")["wifi"]
    urls = board_urls(w)
    if args.json:
        print(json.dumps(dict(w, url=urls[0] if urls else None)))
        return 0
    print(wifi_line(w))
    if w.get("code"):
        print("pairing code: %s" % w["code"])
    if urls:
        from hapenny.web.server import qr_text

        print("the scoreboard on a phone, tablet or TV on this network (the address carries the code):")
        for u in urls:
            print("  %s" % u)
        print(qr_text(urls[0]))
    return 0


def cmd_play(args):
    from hapenny.scoreboard import play

    link, _ = _connect(args, events=True)
    if args.players or args.variant or link.request("state").get("state") is None:
        link.request("new", players=args.players or ["Home", "Away"], variant=args.variant or "classic")
    return play(link)


def cmd_learn(args):
    from hapenny.learn import learn

    link, info = _connect(args, events=True)
    segments = args.segments.split(",") if args.segments else None
    learn(link, info, args.out, split=args.split, segments=segments)
    return 0


def cmd_wiring(args):
    from hapenny import wiring

    prof = wiring.load(args.profile)
    text = wiring.svg(prof)
    out = args.out or "%s-wiring.svg" % prof["name"]
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w") as f:
            f.write(text)
        print("wrote %s" % out)
        for n in wiring.warnings(prof):
            print("warning: %s" % n)
    return 0


def cmd_doctor(args):
    from hapenny import doctor

    link, info = _connect(args)
    if _on_network(args) is not None:  # its diagnostics are USB's: what the network can check
        rep = doctor.run_network(link, info, print, steps=[s for s in doctor.STEPS if s not in (args.skip or [])])
        doctor.print_report(rep, print)
        return 1 if rep.failed else 0
    answers = list(args.answers) if args.answers is not None else None

    def ask(question):
        if question.startswith("press:") or question == "throw":
            return True  # the person acts while the board watches
        if answers is not None:  # scripted (a bench test rig)
            a = answers.pop(0) if answers else "n"
            print(question + a)
            return a.lower() == "y"
        while True:
            a = input(question).strip().lower()
            if a in ("y", "n", "yes", "no"):
                return a.startswith("y")

    steps = [s for s in doctor.STEPS if s not in (args.skip or [])]
    rep = doctor.run(link, info, ask, print, record_ms=int(args.record * 1000), darts=args.darts, steps=steps,
                     port=args.port or os.environ.get("HAPENNY_PORT"))
    doctor.print_report(rep, print)
    return 1 if rep.failed else 0


def cmd_web(args):
    from hapenny.connect import choose_port
    from hapenny.web.server import parse_listen, serve

    from hapenny.web.guard import check_code

    parse_listen(args.listen)  # clear errors before the port is opened
    if args.code:
        check_code(args.code)
    port = choose_port(args.port)
    if _on_network(args) is not None:
        # a board on the network: its pairing code and address checked once, now, in words (the
        # server's own retries would only guess the same wrong code again and again)
        from hapenny.connect import connect

        connect(port, events=False)[2].close()
    serve(port, args.listen, code=args.code)


def cmd_sim(args):
    from hapenny.sim.server import play_on_sim, serve, web_on_sim

    if args.repl_ignores_dupterm:  # read by every VirtualBoard this process starts
        os.environ["HAPENNY_REPL_DUPTERM"] = "0"
    if args.romfs:  # idem
        os.environ["HAPENNY_ROMFS"] = "1"
    if args.chip:  # idem: the chip the board is, and its own profile unless one is named
        os.environ["HAPENNY_CHIP"] = args.chip
    if args.wifi and (args.web or args.play):
        raise SystemExit("hapenny sim: --wifi is the board serving its own page; not with --web or --play")
    if args.web:
        return web_on_sim(args.board_dir, args.profile, args.web)
    if args.play:
        return play_on_sim(args.board_dir, args.profile)
    return serve(args.board_dir, args.profile, args.control, fast=args.fast, wifi=args.wifi)


def cmd_test(args):
    from hapenny.hil import run_suite

    _cable(args, "test", "the suite presses crossings and resets the board, which only USB may")
    if args.chip and not args.sim:
        raise SystemExit("--chip is for --sim: a real board is the chip it is")
    if args.chip:  # the suite's virtual board is that chip
        os.environ["HAPENNY_CHIP"] = args.chip
    return run_suite(args.port, junit=args.junit, extra=args.pytest_args, sim=args.sim)


def build_parser():
    p = argparse.ArgumentParser(prog="hapenny", description="Shove Ha'penny on a soft-tip dartboard: "
                                "flash, deploy, configure, play, calibrate and test the board.", epilog=EPILOG)
    p.add_argument("--version", action="version", version="hapenny " + __version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    port, reply, profile, bare = _shared()

    s = sub.add_parser("ports", help="list serial ports, marking the ones that look like an ESP32")
    s.set_defaults(fn=cmd_ports)

    s = sub.add_parser("flash", parents=port + profile,
                       help="erase the chip and write a MicroPython image with esptool, then deploy")
    s.add_argument("image", nargs="?", help="the MicroPython .bin for your chip (micropython.org/download; "
                   "default: the chip's stock image in this folder, e.g. %s)" % _default_image())
    s.add_argument("--chip", help="esp32, esp32s3 or esp32c3 (default: asked of the board through esptool)")
    s.add_argument("--baud", type=int, default=460800)
    s.add_argument("--no-deploy", action="store_true", help="only write MicroPython")
    s.add_argument("--dry-run", action="store_true", help="print the esptool commands, run nothing")
    s.set_defaults(fn=cmd_flash)

    s = sub.add_parser("deploy", parents=reply + profile,
                       help="compile the firmware with mpy-cross and copy what changed with mpremote")
    s.add_argument("--no-reset", action="store_true", help="do not reset the board afterwards")
    s.add_argument("--force", action="store_true", help="copy every file, changed or not")
    s.add_argument("--owner", help="a board on the network: its owner code (default $HAPENNY_OWNER; over USB "
                   "`hapenny wifi --owner-code` shows it)")
    s.add_argument("--debug", action="store_true", help="keep line numbers in the board's tracebacks "
                   "(about 4 KB more code, which the board keeps in RAM)")
    s.add_argument("--romfs", action="store_true", help="put the firmware into the board's ROMFS partition, "
                   "where its code stays out of RAM (an estimated 24 KB less heap in a game); needs a MicroPython "
                   "image built with one, which none of the stock images is (untested on a chip: hardware/README.md)")
    s.set_defaults(fn=cmd_deploy)

    s = sub.add_parser("new", parents=reply, help="start a new game")
    s.add_argument("players", nargs="*", help="player names (default: Home Away); cpu:N (N 1 to 6, "
                   "beginner to strong league player) is a side the board plays itself")
    s.add_argument("--teams", nargs="+", metavar="A,B", help="teams: comma-separated member names")
    s.add_argument("--variant", "-v", default="classic", help="classic, no-gift, extended, pub, progressive, piecepack")
    s.add_argument("--rule", "-r", action="append", type=_parse_rule, metavar="NAME=VALUE",
                   help="override a rule, e.g. darts=4, gift=all, beds=[1,2,3,25]")
    s.set_defaults(fn=cmd_new)

    s = sub.add_parser("variant", parents=port, help="list the variants, or set the one the new-game button starts")
    s.add_argument("name", nargs="?")
    s.add_argument("--start", action="store_true", help="and start a game of it now")
    s.set_defaults(fn=cmd_variant)

    s = sub.add_parser("config", parents=reply, help="show or change the board's settings")
    s.add_argument("action", choices=("get", "set"), nargs="?", default="get")
    s.add_argument("pairs", nargs="*", metavar="NAME or NAME=VALUE",
                   help="get: the settings to show (default: all); set: NAME=VALUE, e.g. brightness=120")
    s.set_defaults(fn=cmd_config)

    for name, text in (("state", "show the game"), ("undo", "take back the last dart or player change"),
                       ("next", "player change: end the visit")):
        s = sub.add_parser(name, parents=reply, help=text)
        s.set_defaults(fn=_simple(name))
    s = sub.add_parser("throw", parents=reply,
                       help="score a segment for the thrower, as a dart on the board would be; "
                       "refused (visit_over) once the visit's darts are thrown, until the player change")
    s.add_argument("seg", help="T5, D7, S20, SB, DB, MISS ...")
    s.set_defaults(fn=_simple("throw"))

    s = sub.add_parser("hint", parents=reply, help="where the thrower should aim next, and why")
    s.add_argument("--level", "-l", type=int, default=3, help="the thrower's skill, 1 (beginner) to 6 (default 3)")
    s.set_defaults(fn=cmd_hint)

    s = sub.add_parser("wifi", parents=reply, help="put the board on the home Wi-Fi, show its state, or forget the "
                       "network (the password is asked without echo and never shown again)")
    s.add_argument("network", nargs="?", help="the network's name (SSID); none: show the state")
    s.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of stdin (for scripts)")
    s.add_argument("--hostname", help="the board's host name: it answers as NAME.local (default hapenny-XXXX "
                   "from its MAC)")
    s.add_argument("--forget", action="store_true", help="leave the network and clear its name and password")
    s.add_argument("--owner-code", action="store_true", help="show the board's owner code, made on first asking "
                   "(USB only): `hapenny deploy` over the network needs it")
    s.add_argument("--wait", type=float, default=20.0, metavar="S",
                   help="after setting a network, wait up to S seconds for the join's outcome (default 20)")
    s.set_defaults(fn=cmd_wifi)

    s = sub.add_parser("play", parents=port,
                       help="live scoreboard: n next, u undo, h hint, type a segment to throw, q quit")
    s.add_argument("players", nargs="*", help="start a new game for these players (cpu:N: the board plays that side)")
    s.add_argument("--variant", "-v", help="start a new game of this variant")
    s.set_defaults(fn=cmd_play)

    s = sub.add_parser("learn", parents=port, help="calibrate: map the board's matrix segment by segment")
    s.add_argument("--out", "-o", help="profile file to write (default: BOARD-learned.json)")
    s.add_argument("--split", action="store_true", help="the board has inner and outer singles apart")
    s.add_argument("--segments", help="learn only these, comma-separated (e.g. to redo a few)")
    s.set_defaults(fn=cmd_learn)

    s = sub.add_parser("wiring", help="draw a profile's wiring as an SVG picture")
    s.add_argument("profile", help="profile name (hardware/profiles) or .json path")
    s.add_argument("--out", "-o", help="SVG file (default: NAME-wiring.svg; - for stdout)")
    s.set_defaults(fn=cmd_wiring)

    s = sub.add_parser("doctor", parents=port, help="guided bring-up of a freshly wired board: versions, memory, "
                       "matrix lines, LEDs, buttons and the timing of real darts")
    s.add_argument("--record", type=float, default=10.0, metavar="S",
                   help="seconds to record the closures of real darts (0: skip; default 10)")
    s.add_argument("--darts", type=int, default=3, help="darts to throw while recording (default 3)")
    s.add_argument("--skip", action="append", choices=["about", "lines", "leds", "buttons", "darts"],
                   help="leave a step out (repeatable)")
    s.add_argument("--answers", metavar="YN", help="answers to the LED questions in order, e.g. yyyyyyyyyy")
    s.set_defaults(fn=cmd_doctor)

    s = sub.add_parser("web", parents=bare, help="the live scoreboard and controls as a web page for any browser "
                       "(a TV, a tablet, a phone)")
    s.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="where to serve (default 127.0.0.1:8080, this computer only; 0.0.0.0:8080 for "
                        "the home network: anyone on it can watch, playing needs the pairing code)")
    s.add_argument("--code", metavar="CODE",
                   help="the pairing code the controls need (8-64 letters, digits, - or _); default: "
                        "beyond this computer a new random one each start, printed in the URL and its QR "
                        "code; on it none")
    s.set_defaults(fn=cmd_web)

    s = sub.add_parser("sim", help="run a virtual board behind a pseudo-terminal (prints PORT <path>)")
    s.add_argument("--board-dir", help="the board's flash (kept across runs); default: a fresh temporary one")
    s.add_argument("--profile", help="the board profile (default: the chip's: generic-8x8, s3-devkitc-8x8, "
                   "c3-supermini-beds)")
    s.add_argument("--chip", choices=("esp32", "esp32s3", "esp32c3"),
                   help="the chip the virtual board is: its MCU name, pins, console, heap and clock (default "
                        "esp32, or $HAPENNY_CHIP)")
    s.add_argument("--control", help="control socket path")
    s.add_argument("--fast", action="store_true", help="skip the slow strip and flash models")
    s.add_argument("--play", action="store_true", help="and open the live scoreboard on it (make sim)")
    s.add_argument("--repl-ignores-dupterm", action="store_true",
                   help="a REPL that never reads os.dupterm streams, as MicroPython v1.27 on the ESP32 "
                        "(default: v1.28 and later, which do; or set HAPENNY_REPL_DUPTERM=0)")
    s.add_argument("--romfs", action="store_true",
                   help="a board with a ROMFS partition, as a custom MicroPython image has it, for "
                        "`hapenny deploy --romfs` (or set HAPENNY_ROMFS=1)")
    s.add_argument("--web", nargs="?", const="127.0.0.1:8080", metavar="HOST:PORT",
                   help="and serve the web scoreboard for it (make web)")
    s.add_argument("--wifi", action="store_true",
                   help="the board joins its virtual Wi-Fi and serves its own page on a free port of "
                        "127.0.0.1: prints WEB <url> (with the pairing code) after PORT and CONTROL")
    s.set_defaults(fn=cmd_sim)

    s = sub.add_parser("test", parents=port,
                       help="run the hardware-in-the-loop suite on a board (or a virtual one)")
    s.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    s.add_argument("--sim", action="store_true", help="run it on a virtual board started for the run")
    s.add_argument("--chip", choices=("esp32", "esp32s3", "esp32c3"),
                   help="with --sim: the chip the virtual board is (default esp32)")
    s.add_argument("pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments after --")
    s.set_defaults(fn=cmd_test)
    return p


def main(argv=None):
    from hapenny.connect import PortError
    from hapenny.deploy import DeployError
    from hapenny.firmware import FirmwareError
    from hapenny.link import BoardError, LinkError
    from hapenny.sim.board import SimError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return 2
    try:
        return args.fn(args) or 0
    except BoardError as e:
        print("hapenny: the board refused: %s (%s)" % (e.reply.get("msg"), e.code), file=sys.stderr)
    except (PortError, LinkError, DeployError, FirmwareError, SimError, ValueError) as e:
        print("hapenny: %s" % e, file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())

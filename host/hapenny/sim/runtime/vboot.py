# The virtual board's boot ROM, run by the MicroPython unix port with the
# board's flash as working directory: boot.py, then main.py (not after a
# raw-REPL soft reset), then the friendly or raw REPL as an ESP32 offers them
# on its serial port. Soft reset and machine.reset() end this process with
# an exit status; the simulator prints the ESP32's lines and starts it again.
import os
import sys

RUNTIME = sys.path[0]
sys.path[:] = ["", ".frozen", "lib", RUNTIME]

SOFT_EXIT = 10  # soft reboot, then boot.py, main.py, friendly REPL
SOFT_RAW_EXIT = 11  # soft reboot from the raw REPL: boot.py, then raw REPL
HARD_EXIT = 12  # machine.reset(): a power cycle
BANNER = "MicroPython %s on %s; %s\r\nType \"help()\" for more information.\r\n"
RAW_PROMPT = "raw REPL; CTRL-B to exit\r\n>"
WINDOW = 256  # raw-paste flow-control window

import machine  # noqa: E402  the runtime's, on the path just set
import select  # noqa: E402
import vmicropython  # noqa: E402

# `import micropython` finds this one first (a loaded module wins over a built-in):
# its kbd_intr tells the simulator, which turns 0x03 into SIGINT only while it is 3
sys.modules["micropython"] = vmicropython

import flashdev  # noqa: E402

if os.getenv("HAPENNY_ROMFS") == "1":  # a board made with a ROMFS partition: its image at /rom (else no heap spent)
    import romfsdev

    romfsdev.setup()



class Lazy:
    """A runtime module (network.py, idfheap.py ...) read from the host when
    first used. On the chip such a module is built in and costs no heap;
    here a board that never touches it carries none of its bytecode either.
    (The host's files are out of reach of `import` once the flash is mounted
    at "/".) `given`: names the module's code finds ready."""

    def __init__(self, name, file, given=None):
        self._lazy = (name, file, given)

    def __getattr__(self, name):
        mod, file, given = self._lazy
        g = {"__name__": mod}
        if given:
            g.update(given)
        with flashdev.host_open(RUNTIME + "/" + file, "r") as f:
            src = f.read()
        exec(compile(src, file, "exec"), g)
        for k in g:
            setattr(self, k, g[k])
        return g[name]


# `network`: the ESP32's station over a model of the air
sys.modules["network"] = Lazy("network", "network.py")
# The classic ESP32's `esp32` (its ESP-IDF heap, which Wi-Fi and every socket
# take from: idfheap.py), and its `socket`: the unix port's own, charged to
# that heap (vsocket.py). The S3 and C3 have more RAM and no model here: no
# `esp32`, as on the unix port, and its sockets uncharged. The model is read
# at its first use (Wi-Fi's start, a socket, the bench): until then nothing
# has changed the heap it starts with, and idf_heap_info() gives that
# (IDF_START: tests/test_idf_heap.py checks it is the model's), so a board
# that never joins a network carries none of its bytecode.
IDF_START = [(4452, 4452, 4352, 4452), (78852, 21504, 21504, 21504), (13440, 13440, 13312, 13440),
             (112208, 54860, 53248, 54860)]


def _idf_start(capabilities):
    return IDF_START if capabilities & 4 else []


if (os.getenv("HAPENNY_CHIP") or "esp32") == "esp32":
    import socket as _socket  # noqa: E402  the unix port's own, before its name is taken

    _esp32 = Lazy("esp32", "idfheap.py")
    _esp32.HEAP_DATA = 4  # MALLOC_CAP_8BIT, as idfheap.py has them
    _esp32.HEAP_EXEC = 1
    _esp32.idf_heap_info = _idf_start  # replaced by the model's once it is read
    sys.modules["esp32"] = _esp32
    sys.modules["socket"] = Lazy("socket", "vsocket.py", {"_real": _socket, "esp32": _esp32})

if os.getenv("HAPENNY_MODELS"):
    # a board given an air (a radio): its models are loaded now, from the .mpy the
    # simulator compiled (SimBoard: models_mpy), before anything of the firmware.
    # Compiled here from source, on the board's heap, they would take some 70 KB for
    # a moment and leave their names scattered through the heap (first met as the
    # set-up AP's first command failing with a MemoryError under a chip-sized heap)
    sys.path.insert(0, os.getenv("HAPENNY_MODELS"))  # the host's folder: before the flash is mounted
    sys.modules["network"] = __import__("_hp_network")
    if "esp32" in sys.modules:
        sys.modules["esp32"] = __import__("_hp_esp32")
        sys.modules["_hp_real_socket"] = _socket
        sys.modules["socket"] = __import__("_hp_socket")
    sys.path.pop(0)

# A board made to join a network (VirtualBoard(wifi=True)) with no air yet: the
# network's models read now, into a heap the firmware has not yet cut up (read at the join, under
# the ESP32 timing model's tight heap, their compiling could find no room)
if os.getenv("HAPENNY_WIFI") == "1":
    sys.modules["network"].WLAN
    if "esp32" in sys.modules:
        sys.modules["esp32"].heap
        sys.modules["socket"].socket

# The flash: the board folder's image, mounted at "/" as the ESP32 port's
# _boot.py mounts its "vfs" partition; the host's files are out of sight
# from here on (flashdev.host_open reaches the simulator's pipes)
_dev = flashdev.mount_root()
if os.getenv("HAPENNY_CUT_BOOT"):  # VirtualBoard.cut_boot_flash: a cut inside boot.py's flash work
    import time

    # made now: the cut may come while the heap is locked (a file's finaliser writing)
    _ctl = flashdev.host_open("/dev/fd/" + os.getenv("HAPENNY_SIM_CTL").split(",")[1], "wb")
    _HELD = b'{"held": "cut"}\n'

    def _held():
        _ctl.write(_HELD)
        while True:  # held until the simulator cuts the power
            time.sleep_ms(100)

    _dev.cut_in = int(os.getenv("HAPENNY_CUT_BOOT"))
    _dev.on_cut = _held

out = sys.stdout
stdin = sys.stdin.buffer
_wait = select.poll()
_wait.register(stdin, select.POLLIN)


def write(s):
    out.write(s)


def getch():
    """One byte from the serial port; Ctrl-C (a SIGINT from the simulator) reads as 0x03.
    Bytes os.dupterm_notify() put into the stdin ring come first, then an
    attached dupterm stream's on a release whose REPL reads it (the ESP32
    reads it when its UART ring is empty; here nothing else is waiting in
    the ring at that moment)."""
    c = os.repl_read()
    if c is not None:
        return c
    try:
        # while waiting, the board's timers run (a watchdog is fed from one)
        while True:
            nxt = machine._run_timers()
            if _wait.poll(1000 if nxt is None else max(1, nxt)):
                break
        b = stdin.read(1)
    except KeyboardInterrupt:
        return 3
    if not b:
        sys.exit(0)  # the simulator closed the port: power off
    return b[0]


def run_file(path, g):
    try:
        os.stat(path)
    except OSError:
        return
    try:
        with open(path) as f:
            src = f.read()
        exec(compile(src, path, "exec"), g)
        import gc

        gc.collect()  # files the script left open and unreachable are closed (committed), as a collection would
    except KeyboardInterrupt as e:
        sys.print_exception(e)
    except SystemExit as e:
        exit_for(e)
    except Exception as e:
        sys.print_exception(e)


def exit_for(e):
    code = e.args[0] if e.args else 0
    if code == HARD_EXIT:
        sys.exit(HARD_EXIT)
    soft_exit(SOFT_EXIT)


_opened = []  # files opened by code typed at the REPL


def _open(*args, **kw):
    f = open(*args, **kw)
    _opened.append(f)
    return f


def soft_exit(code):
    """A soft reboot: as on the chip (main.c: gc_sweep_all runs every
    finaliser), files left open are closed first, so what was written to
    them reaches the flash (littlefs commits a file when it is closed).
    Here: those the REPL's code opened, and any other the collector finds."""
    import gc

    for f in _opened:
        try:
            f.close()
        except Exception:
            pass
    gc.collect()
    sys.exit(code)


def execute(src, g, mode):
    try:
        exec(compile(src, "<stdin>", mode), g)
        return None
    except SystemExit as e:
        exit_for(e)
    except BaseException as e:  # KeyboardInterrupt included: show it, stay at the REPL
        return e


state = {"raw": False}


def raw_repl(g):
    state["raw"] = True
    write(RAW_PROMPT)
    while True:
        buf = bytearray()
        while True:
            c = getch()
            if c == 1:  # Ctrl-A again: a fresh raw prompt
                write("\r\n" + RAW_PROMPT)
                buf = bytearray()
            elif c == 2:  # Ctrl-B: back to the friendly REPL
                write("\r\n")
                state["raw"] = False
                return
            elif c == 3:  # Ctrl-C: drop what was typed
                buf = bytearray()
            elif c == 4:
                break
            elif c == 5 and not buf:  # maybe raw-paste: \x05 A \x01
                if getch() == 65 and getch() == 1:
                    raw_paste(g)
                    buf = None
                    break
            else:
                buf.append(c)
        if buf is None:
            write(">")
            continue
        write("OK")
        if not buf:  # Ctrl-D on an empty command: soft reset
            write("\r\n")
            soft_exit(SOFT_RAW_EXIT)
        run_raw(bytes(buf), g)
        write(">")


def run_raw(src, g):
    err = execute(src, g, "exec")
    write("\x04")
    if err is not None:
        sys.print_exception(err)
    write("\x04")


def raw_paste(g):
    write("R\x01")
    write(chr(WINDOW & 0xFF) + chr(WINDOW >> 8))
    buf = bytearray()
    used = 0
    while True:
        c = getch()
        if c == 4:
            break
        if c == 3:
            write("\x04")
            return
        buf.append(c)
        used += 1
        if used == WINDOW:
            used = 0
            write("\x01")
    write("\x04")
    run_raw(bytes(buf), g)


def banner():
    """The interpreter's own release, as an ESP32's banner gives it: v1.29.0,
    or v1.29.0-preview with the build's commit for a pre-release (the unix
    port's sys.version reads "3.4.0; MicroPython COMMIT on DATE")."""
    v = sys.implementation.version
    rel = "v" + ".".join(str(x) for x in v[:3]) + ("-" + v[3] if len(v) > 3 and v[3] else "")
    build, _, date = sys.version.split("MicroPython ", 1)[-1].partition(" on ")
    mcu = os.getenv("HAPENNY_MCU") or "ESP32 module (virtual hapenny board) with ESP32"  # os.uname().machine
    return BANNER % (rel if build.startswith(rel) else "%s (%s)" % (rel, build), date or "virtual", mcu)


def friendly_repl(g, greet=True):
    if greet:
        write(banner())
    line = ""
    cont = []
    while True:
        write("... " if cont else ">>> ")
        line = ""
        while True:
            c = getch()
            if c == 1:  # Ctrl-A: the main loop enters the raw REPL
                write("\r\n")
                state["raw"] = True
                return
            if c == 2:  # Ctrl-B
                write("\r\n" + banner())
                line = None
                break
            if c == 3:  # Ctrl-C
                write("\r\nKeyboardInterrupt\r\n" if line or cont else "\r\n")
                line = None
                cont = []
                break
            if c == 4:  # Ctrl-D: soft reset
                if line or cont:
                    continue
                write("\r\n")
                soft_exit(SOFT_EXIT)
            if c in (13, 10):
                write("\r\n")
                break
            if c in (8, 127):
                if line:
                    line = line[:-1]
                    write("\x08 \x08")
                continue
            if c >= 32:
                ch = chr(c)
                line += ch
                write(ch)
        if line is None:
            continue
        if cont or line.rstrip().endswith(":"):
            if line.strip() or not cont:
                cont.append(line)
                continue
            src = "\n".join(cont) + "\n"
            cont = []
        else:
            src = line
        if not src.strip():
            continue
        err = execute(src, g, "single")
        if err is not None:
            sys.print_exception(err)


def main():
    mode = os.getenv("HAPENNY_BOOT") or "normal"
    # one namespace for boot.py, main.py and the REPL, as pyexec runs them all in __main__'s
    g = {"__name__": "__main__", "open": _open}
    run_file("boot.py", g)
    if mode == "raw":
        state["raw"] = True
    else:
        run_file("main.py", g)
    greet = True
    while True:
        # a Ctrl-C that lands outside a read (mid-output) must not end the board
        try:
            if state["raw"]:
                raw_repl(g)
                greet = True
            else:
                friendly_repl(g, greet)
        except KeyboardInterrupt:
            write("\r\n")
            greet = False


main()

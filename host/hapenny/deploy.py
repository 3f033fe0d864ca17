"""`hapenny flash` and `hapenny deploy`: MicroPython onto the chip with
esptool, then the compiled firmware onto its filesystem with mpremote."""
import hashlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from hapenny import firmware
from hapenny.connect import PortError, connect, wait_for_port

# where the MicroPython image goes, by chip (Espressif's bootloader layout)
FLASH_OFFSET = {"esp32": "0x1000", "esp32s2": "0x1000", "esp32s3": "0x0", "esp32c3": "0x0",
                "esp32c6": "0x0", "esp32c2": "0x0", "esp32h2": "0x0", "esp32p4": "0x2000"}

# runs on the board: sha256 of every firmware file it holds
_HASHES = """
import os, hashlib, binascii
def _h(p):
    h = hashlib.sha256()
    with open(p, 'rb') as f:
        while True:
            b = f.read(512)
            if not b:
                break
            h.update(b)
    return binascii.hexlify(h.digest()).decode()
def _walk(d, out):
    for e in os.ilistdir(d):
        p = d + '/' + e[0]
        if e[1] == 0x4000:
            _walk(p, out)
        else:
            out[p] = _h(p)
_o = {}
for _d in ('shove', 'web'):
    try:
        _walk(_d, _o)
    except OSError:
        pass
for _f in ('boot.py', 'main.py', 'profile.json', 'boot.py.part', 'main.py.part', 'profile.json.part'):
    try:
        _o[_f] = _h(_f)
    except OSError:
        pass
print(repr(_o))
"""

# runs on the board: what it is, before anything is copied
_PROBE = """
import os, sys
try:
    _m = os.uname().machine
except AttributeError:
    _m = ''
print(repr({'platform': sys.platform, 'machine': _m, 'mpy': getattr(sys.implementation, '_mpy', None),
            'version': list(sys.implementation.version)}))
"""

PART = ".part"  # a file being copied: renamed over the real name once complete


class DeployError(Exception):
    pass


# MicroPython's stock image of each chip the firmware runs on (micropython.org/download/<BOARD>)
IMAGES = {"esp32": "ESP32_GENERIC", "esp32s3": "ESP32_GENERIC_S3", "esp32c3": "ESP32_GENERIC_C3"}
CHIP_NAMES = {"esp32": "ESP32", "esp32s3": "ESP32-S3", "esp32c3": "ESP32-C3"}


def default_image(chip="esp32"):
    """The stock image of the release this firmware is built for, as
    micropython.org/download/ESP32_GENERIC (_S3, _C3) names it."""
    from hapenny.mpyformat import RELEASE, release_name

    return "%s-%s.bin" % (IMAGES.get(chip, IMAGES["esp32"]), release_name(RELEASE))


def shown(chip):
    """A chip's name as Espressif writes it: "esp32s3" -> "ESP32-S3"."""
    up = chip.upper()
    return up if up == "ESP32" or not up.startswith("ESP32") else "ESP32-" + up[5:]


def esptool_chip(name):
    """esptool's --chip spelling of a chip esptool names ("ESP32-S3" -> "esp32s3")."""
    return name.lower().replace("-", "")


def read_chip(port, baud=115200):
    """The chip on `port`, asked through esptool's ROM loader (the board goes
    into its bootloader for it, as for the flash that follows): "esp32s3"..."""
    from esptool.cmds import detect_chip

    try:
        esp = detect_chip(port, baud)
    except Exception as e:  # esptool's FatalError, a serial error: no chip answered
        raise DeployError("esptool found no chip on %s (%s): hold BOOT while it connects if your board needs "
                          "it; nothing was erased" % (port, e))
    try:
        try:  # back out of the bootloader: a refusal that follows leaves the board running
            esp.hard_reset()
        except Exception:  # a port without the control lines: the flash's own esptool resets it again
            pass
        return esptool_chip(esp.CHIP_NAME)
    finally:
        esp._port.close()


def image_chip(path):
    """The chip an ESP firmware image is for, from its header (the ESP-IDF
    image format: magic 0xE9, then at bytes 12-13 of the extended header
    the chip id esptool's targets give as IMAGE_CHIP_ID), or None when the
    file has no such header."""
    from esptool.targets import CHIP_DEFS

    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[0] != 0xE9:
        return None
    cid = int.from_bytes(head[12:14], "little")
    for name, rom in CHIP_DEFS.items():
        if getattr(rom, "IMAGE_CHIP_ID", None) == cid:
            return name
    return "chip id %d" % cid


def check_image(image, chip):
    """Refuse, before anything is erased, a chip the firmware does not run
    on and an image made for another chip than the board's."""
    if chip not in IMAGES:
        raise DeployError("esptool says this board is an %s; this firmware runs on %s, whose GPIO registers its "
                          "scan drives: nothing was erased" % (shown(chip), firmware.chip_module().SUPPORTED))
    made_for = image_chip(image)
    if made_for is None:
        raise DeployError("%s is no ESP firmware image (no 0xE9 header): download %s from "
                          "https://micropython.org/download/%s/; nothing was erased"
                          % (image, default_image(chip), IMAGES[chip]))
    if made_for != chip:
        raise DeployError("%s is an image for the %s, and this board is an %s: download %s from "
                          "https://micropython.org/download/%s/; nothing was erased"
                          % (image, shown(made_for), CHIP_NAMES[chip],
                             default_image(chip), IMAGES[chip]))


def esptool_major():
    """The major version of the esptool that `python -m esptool` runs here
    (the first one on sys.path, as the import finds it), or None."""
    from importlib import metadata

    try:
        return int(metadata.version("esptool").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return None


def esptool_command(name, major):
    """esptool 5 spells its commands with hyphens (write-flash); 4.x, the only
    one Python 3.9 can have, with underscores (write_flash) and knows no
    other. 5 still takes underscores, but warns that they are deprecated."""
    return name.replace("-", "_") if major is not None and major < 5 else name


def flash_commands(image, port, chip="esp32", baud=460800, major=None):
    if chip not in FLASH_OFFSET:
        raise DeployError("unknown chip %r; one of %s" % (chip, ", ".join(sorted(FLASH_OFFSET))))
    base = [sys.executable, "-m", "esptool", "--chip", chip, "--port", port, "--baud", str(baud)]
    major = esptool_major() if major is None else major
    erase, write, verify = (esptool_command(c, major) for c in ("erase-flash", "write-flash", "verify-flash"))
    # verify-flash reads the image back: write-flash alone only checks a digest
    return [base + [erase], base + [write, "-z", FLASH_OFFSET[chip], str(image)],
            base + [verify, FLASH_OFFSET[chip], str(image)]]


def flash(image, port, chip=None, baud=460800, dry_run=False, out=sys.stdout):
    """Erase the chip and write `image` (None: the chip's stock image in this
    folder). `chip`: esptool's name for it; None asks the board through
    esptool first. A missing image, or one made for another chip, stops it
    before anything is erased."""
    from pathlib import Path

    if image is not None and not Path(image).is_file():  # said before the board is bothered
        raise DeployError("no firmware image at %s: download %s (or the image for your chip) from "
                          "https://micropython.org/download/; nothing was erased" % (image, default_image(chip or "esp32")))
    if chip is None:
        chip = read_chip(port)
        out.write("the board is an %s (esptool)\n" % shown(chip))
    image = image or default_image(chip)
    if not Path(image).is_file():
        raise DeployError("no firmware image at %s: download %s from https://micropython.org/download/%s/ "
                          "(or give the path of the .bin for your chip)"
                          % (image, default_image(chip), IMAGES.get(chip, IMAGES["esp32"])))
    check_image(image, chip)
    for cmd in flash_commands(image, port, chip, baud):
        out.write("$ %s\n" % " ".join(cmd))
        if not dry_run and subprocess.run(cmd).returncode:
            raise DeployError("esptool failed (hold BOOT while it connects if your board needs it)")


class _Bar:
    """The copy's progress: a rich progress bar on a terminal, a line a file
    otherwise (a log, a pipe, a terminal without colour)."""

    def __init__(self, total, out):
        from hapenny import term

        self.total, self.out = total, out
        self.progress = None
        if term.is_terminal(out):
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.progress = Progress(TextColumn("copying"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[name]}"), console=term.console(out, width=80))
            self.task = self.progress.add_task("copy", total=total, name="")
            self.progress.start()

    def step(self, done, name):
        if self.progress is not None:
            self.progress.update(self.task, completed=done, name=name[:32])
        elif done < self.total:
            self.out.write("copying %d/%d %s\n" % (done + 1, self.total, name))

    def stop(self, done=True):
        if self.progress is not None:
            if done:
                self.progress.update(self.task, completed=self.total, name="done")
            self.progress.stop()
            self.progress = None


def remote_hashes(t):
    return _answer(t.exec(_HASHES), {})


def _answer(raw, empty=None):
    """The literal a command printed (its last line; `empty` if it printed
    nothing). Bytes the board sent before the command can arrive late, ahead
    of its answer: a game's last lines, a banner (a start's, as a power-on
    prints it, was once seen ahead of the hashes under load)."""
    import ast

    lines = raw.decode(errors="replace").strip().splitlines()
    if not lines and empty is not None:
        return empty
    try:
        return ast.literal_eval(lines[-1].strip())
    except (IndexError, SyntaxError, ValueError):
        raise DeployError("the board did not answer as expected (%r): try again, or reset it"
                          % (lines[-1][:80] if lines else "nothing")) from None


def probe(t):
    """The board's platform, machine, .mpy format and release: the first
    command after entering the raw REPL. Bytes the board sent before it (a
    game's last lines, a second banner when it was at the raw REPL already)
    can arrive late and put mpremote's raw-paste handshake out of step
    (`could not exec command`); the raw REPL is then entered again and the
    command sent once more (mpremote falls back to the plain raw REPL)."""
    from mpremote.transport import TransportError

    try:
        text = t.exec(_PROBE)
    except TransportError:
        t.enter_raw_repl(soft_reset=False)
        text = t.exec(_PROBE)
    return _answer(text)


def check_board(board, target, files, mpy_cross=None):
    """Refuse (DeployError) a board this build cannot run, before anything is
    copied: a chip other than the classic ESP32, or a MicroPython that cannot
    load these .mpy files (any release with their format can), in one line
    that says what to do."""
    from hapenny import mpyformat

    chip = firmware.chip_module()
    if target != "sim":
        why = chip.problem(board["machine"])
        if why:
            raise DeployError(why)
    heads = {rel: Path(files[rel]).read_bytes()[:4] for rel in sorted(files) if rel.endswith(".mpy")}
    native = [mpyformat.header(h)[2] for h in heads.values() if mpyformat.header(h)[2]]
    _, fmt = mpy_cross or firmware.mpy_cross_version()
    why = mpyformat.release_problem(board.get("version"), board.get("mpy"), fmt, native[0] if native else 0)
    if why:
        raise DeployError(why + "; nothing was copied")
    for rel, head in heads.items():  # each file as the board's loader will judge it
        why = mpyformat.mpy_problem(head, board["mpy"], rel)
        if why:
            raise DeployError(why + "; nothing was copied")


def write_file(t, rel, data):
    """Copy one file so that a reset at any moment leaves the old file or the
    new one, never a truncated one: write REL.part, then rename it over REL
    (littlefs replaces the target in one step; a leftover .part is ignored by
    MicroPython's import and removed by the next deploy)."""
    t.fs_writefile(rel + PART, data, chunk_size=512)
    t.exec("import os\ntry:\n os.rename(%r, %r)\nexcept OSError:\n os.remove(%r)\n os.rename(%r, %r)"
           % (rel + PART, rel, rel, rel + PART, rel))


class _Stall:
    """mpremote waits for the raw REPL's answer without a time limit, so a
    board reset or unplugged in the middle of a deploy would hang it for
    ever. Each step gets a deadline; when one passes, the port is closed
    under mpremote, whose next read fails, and the deploy says why."""

    def __init__(self, ser):
        self.ser = ser
        self.fired = False
        self.deadline = None
        self.done = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def step(self, seconds):
        self.deadline = time.monotonic() + seconds

    def _watch(self):
        while not self.done.wait(0.2):
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.fired = True
                try:
                    self.ser.close()
                except Exception:
                    pass
                return

    def stop(self):
        self.done.set()


RESET_MARK = b"hapenny:reset"  # firmware/shove/__init__.py's: a reset made on purpose
STEP_S = 15  # the longest any one step may go without an answer
REPL_S = 15  # ... and the board may take to hand over its REPL

NO_REPL = ("the board on %s did not hand over its REPL (%s): nothing was copied; check that nothing else has "
           "the port open and run the deploy again")
STALLED = ("the board stopped answering in the middle of the deploy (reset, power lost or unplugged?). "
           "Files already copied are whole, and a half-copied one never replaces the old file: "
           "run the deploy again")


# an image without the native emitter gets the bytecode build: it runs, but its scan is slow
NO_NATIVE = ("warning: this board's MicroPython was built without the native code emitter (an ESP32-C3 "
             "image before v1.24), so the firmware goes as bytecode and its scan reads the GPIO registers "
             "through machine.mem32: some 2 to 3 ms a read (the native scan: some 40 us), where a "
             "dart closes its contact for a few ms, so many darts are missed. Flash %s (or the image for "
             "your chip) for the native scan")


def _prepare(t, profile, debug=False):
    """What to copy, once the board is known to be able to run it: (target, {path: bytes}, board hashes)."""
    board = probe(t)
    # the build for the native code the board loads: xtensawin (classic ESP32, S3) or rv32imc (C3)
    target = "sim" if board["platform"] == "linux" else firmware.esp32_target(board.get("mpy"))
    files = firmware.build(target, debug=debug)
    check_board(board, target, files)
    local = {rel: path.read_bytes() for rel, path in files.items()}
    have = remote_hashes(t)
    if profile is not None or "profile.json" not in have:
        local["profile.json"] = firmware.profile_path(profile or default_profile(board)).read_bytes()
        text = local["profile.json"].decode("utf-8", "replace")
    else:  # the board keeps its profile: only if this firmware accepts it
        text = t.fs_readfile("profile.json").decode("utf-8", "replace")
        why = firmware.profile_problem(text)
        if why:
            raise DeployError("the board's profile.json is refused by this firmware (%s): deploy with "
                              "--profile NAME or a fixed profile file; nothing was copied" % why)
    if target != "sim":  # a profile for another chip's pins: said before anything is copied
        why = profile_chip_problem(board, text)
        if why:
            raise DeployError(why + "; nothing was copied")
    return target, local, have


# the shipped profile a board gets when it has none, by its chip
DEFAULT_PROFILES = {"esp32": "generic-8x8", "esp32s3": "s3-devkitc-8x8", "esp32c3": "c3-supermini-beds"}


def default_profile(board):
    kind = firmware.chip_module().kind(board.get("machine") or "")  # a virtual board names its chip too
    return DEFAULT_PROFILES.get(kind or "esp32")


def profile_chip_problem(board, text):
    """None when the profile (JSON text) is for the board's chip, else why not."""
    try:
        chip = json.loads(text).get("chip", "esp32")
    except (ValueError, AttributeError):
        return None  # profile_problem has said what is wrong with it
    return firmware.chip_module().profile_problem(board.get("machine") or "", chip)


# runs on the board: its ROMFS partition's size in bytes (0: none; a custom
# image's, ports/esp32/esp32_partition.c: rom_ioctl(2, 0) is the partition)
_ROMFS_SIZE = """
import vfs
_n = 0
if hasattr(vfs, 'rom_ioctl') and vfs.rom_ioctl(1) > 0:
    _d = vfs.rom_ioctl(2, 0)
    _n = _d.ioctl(4, 0) * _d.ioctl(5, 0)
print(_n)
"""

# runs on the board: sha256 of the first %d bytes of its ROMFS partition (the new image's
# length), read a sector at a time: is the image there already the one to write?
_ROMFS_HASH = """
import vfs, hashlib, binascii
_d = vfs.rom_ioctl(2, 0)
_b = bytearray(4096)
_s = hashlib.sha256()
_n = %d
for _i in range((_n + 4095) // 4096):
    _d.readblocks(_i, _b)
    _s.update(_b if (_i + 1) * 4096 <= _n else memoryview(_b)[:_n - _i * 4096])
print(binascii.hexlify(_s.digest()).decode())
"""

NO_ROMFS = ("this board's MicroPython has no ROMFS partition (no stock ESP32 image has one: it takes an image "
            "built with MICROPY_VFS_ROM and a romfs partition); deploy without --romfs; nothing was copied")


def romfs_image(files):
    """The firmware package (its files under shove/: {path: bytes}) as a
    ROMFS image, the format `mpremote romfs` writes."""
    from mpremote.romfs import VfsRomWriter

    tree = {}
    for rel, data in files.items():
        node = tree
        *dirs, name = rel.split("/")
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = data
    w = VfsRomWriter()

    def put(node):
        for name in sorted(node):
            if isinstance(node[name], dict):
                w.opendir(name)
                put(node[name])
                w.closedir()
            else:
                w.mkfile(name, node[name])

    put(tree)
    return w.finalise()


def _romfs_fits(t, image):
    """The board's ROMFS partition size; DeployError if it has none or the image does not fit."""
    size = int(t.exec(_ROMFS_SIZE).decode().strip() or 0)
    if not size:
        raise DeployError(NO_ROMFS)
    if len(image) > size:
        raise DeployError("the firmware's ROMFS image (%d bytes) is larger than the board's ROMFS partition (%d "
                          "bytes); nothing was copied" % (len(image), size))
    return size


# runs on the board: _rm(d) removes folder d and all in it, if it is there
_RM = """
import os
def _rm(d):
    try:
        for e in os.ilistdir(d):
            p = d + '/' + e[0]
            if e[1] == 0x4000:
                _rm(p)
            else:
                os.remove(p)
        os.rmdir(d)
    except OSError:
        pass
"""
STAGED = "shove.new"  # the package copied here while the filesystem has none, then renamed whole into place
RETIRED = "shove.old"  # the package moved aside in one rename once the ROMFS image holds it, then removed


def _write_romfs(t, image, size, out):
    """The image into the board's ROMFS partition, by mpremote's own
    `romfs deploy` (erase, then base64 or deflated chunks); the board mounts
    it at its next start."""
    import contextlib
    import io
    import tempfile

    from mpremote import commands
    from mpremote.transport import TransportExecError

    write = getattr(commands, "_do_romfs_deploy", None)  # what `mpremote romfs deploy` runs (mpremote 1.29)
    if write is None:
        raise DeployError("this mpremote cannot write a ROMFS image (install mpremote 1.29); the package on the "
                          "filesystem is whole and the board starts from it")

    class State:  # what mpremote's command asks of its session: the raw REPL this deploy holds
        transport = t

        def ensure_raw_repl(self):
            pass

        def did_action(self):
            pass

    class Args:
        partition = 0
        mpy = False

    # A soft reset first: it stops the game's timers (ports/esp32/main.c's soft-reset path:
    # machine_timer_deinit_all up to v1.28.0, the timers' finalisers in gc_sweep_all after)
    # and leaves only boot.py run, so no code from the old image can run while its flash is
    # erased and written (the image is mounted, not copied)
    t.enter_raw_repl(soft_reset=True)
    log = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        Args.path = tmp + "/shove.romfs"
        with open(Args.path, "wb") as f:
            f.write(image)
        try:
            with contextlib.redirect_stdout(log):
                write(State(), Args())
        except (SystemExit, commands.CommandError, TransportExecError) as e:  # mpremote exits on a bad image
            raise DeployError("the ROMFS image was not written (%s %s); the package on the filesystem is whole "
                              "and the board starts from it: run the deploy again"
                              % (log.getvalue().strip()[-200:], e)) from e
    if "ROMFS image deployed" not in log.getvalue():
        raise DeployError("mpremote did not write the ROMFS image: %s" % log.getvalue().strip()[-300:])
    out.write("ROMFS image written: %d of %d bytes\n" % (len(image), size))


def _resume(t):
    """Leave the raw REPL and soft-reset, so main.py runs again (best effort)."""
    try:
        t.exit_raw_repl()
        t.serial.write(b"\x04")
    except Exception:
        pass


def deploy(port=None, profile=None, out=sys.stderr, reset=True, boot_timeout=20.0, force=False, debug=False,
           romfs=False):
    """Compile, copy what changed, remove stale firmware files, reset, wait for `boot`.
    `romfs`: the firmware package goes into the board's ROMFS partition as
    one image (its code then stays out of the heap); its copy on the
    filesystem, which would come first on sys.path, is kept whole until the
    image is written, then removed. Returns a summary dict."""
    from mpremote.transport import TransportError
    from mpremote.transport_serial import SerialTransport

    from hapenny.connect import choose_port

    port = choose_port(port)
    try:
        t = SerialTransport(port, baudrate=115200)
    except TransportError as e:
        raise PortError("cannot open %s: %s (busy, or no board there)" % (port, e))
    started = time.monotonic()
    stall = _Stall(t.serial)
    bar = None
    entered = False
    try:
        # on a pseudo-terminal mpremote waits for the raw REPL's prompt without a time limit
        stall.step(REPL_S)
        t.enter_raw_repl(soft_reset=False)
        entered = True
        image = None
        try:
            stall.step(4 * STEP_S)  # compiling the firmware on the host is part of it
            target, local, have = _prepare(t, profile, debug)
            if target == "esp32bc":
                out.write(NO_NATIVE % default_image("esp32c3") + "\n")
            if romfs:
                image = romfs_image({rel: data for rel, data in local.items() if rel.startswith("shove/")})
                rom_size = _romfs_fits(t, image)
                # a board already running this image (nothing of the package on its filesystem) only
                # gets what changed beside it, as a plain deploy
                if not force and not any(rel.startswith("shove/") for rel in have) and \
                        t.exec(_ROMFS_HASH % len(image)).decode().strip() == hashlib.sha256(image).hexdigest():
                    local = {rel: data for rel, data in local.items() if not rel.startswith("shove/")}
                    romfs = False
                    out.write("the board's ROMFS image is this firmware's already\n")
        except DeployError:
            _resume(t)  # refused before copying: the board goes back to its game
            raise
        changed = [rel for rel in sorted(local)
                   if force or have.get(rel) != hashlib.sha256(local[rel]).hexdigest()]
        stale = [rel for rel in sorted(have)
                 if (rel.startswith(("shove/", "web/")) and rel not in local) or rel.endswith(PART)]
        # A board running from ROMFS has no package on the filesystem, and a part of one
        # copied there would be found first on sys.path (py/builtinimport.c takes the first
        # folder of that name) and hide the image: the package goes to STAGED, renamed whole
        # into place (littlefs renames in one step)
        staged = romfs and not any(rel.startswith("shove/") for rel in have)

        def dest(rel):
            return STAGED + rel[5:] if staged and rel.startswith("shove/") else rel

        dirs = sorted({dest(rel).rsplit("/", 1)[0] for rel in changed if "/" in rel})
        stall.step(STEP_S)
        t.exec(_RM + "_rm(%r)\n_rm(%r)" % (STAGED, RETIRED))  # what a cut left of an earlier deploy
        for d in dirs:  # parents first: sorted puts "shove" before "shove/boards"
            t.exec("import os\ntry:\n os.mkdir(%r)\nexcept OSError:\n pass" % d)
        bar = _Bar(len(changed), out)
        for i, rel in enumerate(changed):
            bar.step(i, rel)
            stall.step(STEP_S + len(local[rel]) / 2000)  # raw REPL writes run at a few KB/s at worst
            write_file(t, dest(rel), local[rel])
        stall.step(STEP_S)
        if staged:
            t.exec("import os\nos.rename(%r, 'shove')" % STAGED)
        for rel in stale:
            t.fs_rmfile(rel)
        retired = []
        written = False
        if romfs:
            # The new package is whole on the filesystem now, where sys.path finds it before /rom:
            # a cut while the image is rewritten leaves a board that starts from it. Once the
            # image is written the package is moved aside in one rename (an empty shove/ would
            # still come first, as a package with nothing in it) and removed.
            stall.step(STEP_S + len(image) / 2000)
            _write_romfs(t, image, rom_size, out)
            written = True
            stall.step(STEP_S)
            t.exec(_RM + "os.rename('shove', %r)\n_rm(%r)" % (RETIRED, RETIRED))
            retired = [rel for rel in sorted(local) if rel.startswith("shove/")]
        # new firmware gets a fresh start: forget the bad starts that put it in safe mode
        t.exec("import os\ntry:\n os.remove('boots')\nexcept OSError:\n pass")
        stall.stop()
        bar.stop()
        out.write("%d of %d files copied, %d stale removed, to %s (%s)\n"
                  % (len(changed), len(local), len(stale), port, target))
        if retired:
            out.write("the package (%d files) runs from ROMFS; its copy on the filesystem was removed\n"
                      % len(retired))
        boot = None
        if reset:
            # marked, so that the board's safe mode does not count it as a bad start
            t.exec_raw_no_follow("import machine\nmachine.RTC().memory(%r)\nmachine.reset()" % RESET_MARK)
            boot = _boot_on_same_port(t.serial, boot_timeout)
    except DeployError:
        raise
    except Exception as e:
        if not entered:
            why = "no answer within %d s" % REPL_S if stall.fired else str(e) or type(e).__name__
            raise DeployError(NO_REPL % (port, why)) from e
        if stall.fired:
            raise DeployError(STALLED) from e
        raise
    finally:
        stall.stop()
        if bar is not None:
            bar.stop(done=False)  # a failed copy leaves the bar where it stopped
        try:
            t.close()
        except Exception:
            pass
    summary = {"port": port, "target": target, "copied": changed, "removed": stale, "total": len(local),
               "romfs_bytes": len(image) if image else 0, "retired": retired,
               "romfs_written": written}
    if reset:
        if boot is None:  # the port went away with the reset (native USB): open it again
            wait_for_port(port, 10)
            time.sleep(0.3)
            link, boot, ser = _connect_after_reset(port, boot_timeout)
            ser.close()
        summary["version"] = boot.get("version")
        summary["boot_event"] = "ev" in boot
        out.write("board is up: hapenny %s on %s\n" % (boot.get("version"), boot.get("board")))
    summary["seconds"] = round(time.monotonic() - started, 2)
    return summary


def _boot_on_same_port(ser, timeout):
    """The `boot` event, read on the port still open from the deploy; None if the port is gone."""
    from hapenny.link import Link, LinkError, SerialTransport

    try:
        return Link(SerialTransport(ser)).wait_event("boot", timeout=timeout)
    except (LinkError, OSError):
        return None
    except Exception:  # pyserial's SerialException when the device vanished
        return None


def _connect_after_reset(port, timeout):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            return connect(port, timeout=3.0)
        except PortError as e:
            last = e
            time.sleep(0.5)
    raise DeployError("the board did not come back after the reset: %s" % last)

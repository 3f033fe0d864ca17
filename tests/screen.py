"""Reading what a terminal program shows, for tests that drive one through a pty."""
import os
import select
import time


def read_screen(fd, until, timeout=8.0):
    """The last full screen (after the last clear) once `until(screen)` holds."""
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
            screen = buf.rsplit(b"\x1b[H\x1b[2J", 1)[-1].decode("utf-8", "replace")
            if until(screen):
                return screen
    raise AssertionError("screen never showed it:\n" + buf[-1500:].decode("utf-8", "replace"))


class Terminal:
    """A program running in a pseudo-terminal: `with Terminal(argv) as t:`.
    The program is killed on the way out if it has not ended."""

    def __init__(self, argv):
        self.argv = argv

    def __enter__(self):
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(self.argv[0], self.argv)
        return self

    def read(self, until, timeout=8.0):
        return read_screen(self.fd, until, timeout)

    def write(self, data):
        os.write(self.fd, data)

    def quit(self, key=b"q"):
        """Press key; the program's exit status."""
        os.write(self.fd, key)
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return os.WEXITSTATUS(status)

    def __exit__(self, *exc):
        if self.pid:
            try:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
        os.close(self.fd)

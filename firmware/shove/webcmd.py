# A page's command line through the serial port's own handlers
# (request.handle, by Commands.handle_line), for shove/webroutes.py's
# Routes.command: its reply line kept for the HTTP answer, its events to
# every reader as a serial line's are. Loaded for that step and let go after,
# so a board driven over USB carries none of it while its lines are handled.
from shove import protocol


class Reply:
    """The console's queue, as a command's handlers see it while a page's
    command runs (run): its reply line is kept."""

    def __init__(self, waits):
        self.line = None
        self.waits = waits

    def put(self, line):
        self.line = line

    def flush(self):
        pass


def run(c, line):
    """The reply line to a page's command line; its events go where the loop's emit sends them."""
    tx = c.tx
    c.tx = Reply(tx.waits)
    try:
        c.handle_line(line)
        r = c.tx.line
    finally:
        c.tx = tx
    return r if r is not None else protocol.error(None, "bad_json", "no command")

"""Talks to a running `hapenny sim` over its control socket."""
import json
import socket


class SimClient:
    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.f = self.sock.makefile("rwb")

    def call(self, op, **fields):
        self.f.write((json.dumps(dict(fields, op=op)) + "\n").encode())
        self.f.flush()
        rep = json.loads(self.f.readline())
        if not rep.get("ok"):
            raise RuntimeError(rep.get("error"))
        return rep

    def close(self, row, col, ms=None, us=None, delay_us=0):
        self.call("close", row=row, col=col, ms=ms, us=us, delay_us=delay_us)

    def pulses(self, pattern):
        self.call("pulses", pulses=[list(p) for p in pattern])

    def button(self, name, ms=100):
        self.call("button", name=name, ms=ms)

    def pixels(self):
        return [tuple(p) for p in self.call("pixels")["pixels"]]

    def power_cut(self, off_s=0.0):
        self.call("power_cut", off_s=off_s)

    def stats(self):
        return self.call("stats")["stats"]

    def shutdown(self):
        self.sock.close()

# The heap tour's stand-in for the network stack (bench/heap_tour.py's Wi-Fi
# phases): the WebAssembly port has no sockets and no radio, so this one
# module is put in sys.modules as `network`, `socket` and `select`. It is the
# neighbour, not the thing measured: the board's server (shove/httpd.py,
# shove/webroutes.py) runs as it is over it. What it keeps of the ESP32's:
# - `network`: WLAN.connect() returns at once and status() reports
#   STAT_CONNECTING, then STAT_GOT_IP at a later poll (network_wlan.c);
# - `socket`: non-blocking sockets; readinto() gives None while nothing
#   waits, 0 once the client has closed; write(b, off, n) takes at most one
#   TCP segment's worth (lwIP's send window is the same in kind); accept()
#   raises OSError(EAGAIN) while none waits, as modsocket.c does; a
#   datagram socket (the set-up AP's DNS) has recvfrom and sendto;
# - `select`: poll().ipoll(0) yields the socket registered with it when a
#   client waits (a listener) or a datagram does;
# - the set-up AP: WLAN(AP_IF) takes its config and has the AP's address,
#   the station's scan() finds a few networks; a client's address is the
#   home network's, or the AP's side (`peer`) while a phone is on it.
# Its objects are small and few (a socket: one instance, the bytes a client
# sent kept as one bytes object), so that the server's share of the heap is
# read with little of the neighbour in it; what a client is sent is counted
# and its first bytes kept (its status line), never stored whole.
SOL_SOCKET = 1
SO_REUSEADDR = 4
AF_INET = 2
SOCK_DGRAM = 2
POLLIN = 1
STAT_IDLE = 1000
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
_SEG = 1436  # one TCP segment (lwIP's MSS on the ESP32)

backlog = []  # accepted-to-be server sockets (a client's connect)
peer = ("192.168.1.41", 50000)  # the next client's address (a phone on the AP: 192.168.4.2)
_SCAN = [(b"home", b"\x01" * 6, 6, -48, 3, False), (b"next door", b"\x02" * 6, 1, -71, 3, False),
         (b"cafe", b"\x03" * 6, 11, -80, 0, False)]


def getaddrinfo(host, port):
    return [(2, 1, 0, "", (host, port))]


def hostname(name=None):
    return "mpy-esp32" if name is None else None


class WLAN:
    IF_STA = 0
    IF_AP = 1

    def __init__(self, i=0):
        self.polls = -1
        self.i = i

    def active(self, on=None):
        return True

    def config(self, *a, **kw):
        pass

    def scan(self):
        return list(_SCAN)

    def ifconfig(self):
        return ("192.168.4.1", "255.255.255.0", "192.168.4.1", "192.168.4.1") if self.i else \
            ("192.168.1.40", "255.255.255.0", "192.168.1.1", "192.168.1.1")

    def connect(self, ssid, key):
        self.polls = 0

    def status(self, what=None):
        if what == "rssi":
            return -55
        if self.polls < 0:
            return STAT_IDLE
        self.polls += 1
        return STAT_GOT_IP if self.polls > 2 else STAT_CONNECTING

    def ipconfig(self, key):
        return ("192.168.1.40", "255.255.255.0")

    def disconnect(self):
        self.polls = -1


class socket:
    """A server-side socket: the listener, or one accepted."""

    def __init__(self, *a):
        self.dgrams = [] if len(a) > 1 and a[1] == SOCK_DGRAM else None  # a datagram socket's queue
        self.rx = b""  # what the client sent and the server has not read
        self.at = 0
        self.peer_closed = False
        self.sent = 0  # bytes the server wrote
        self.head = b""  # their first bytes (the status line)
        self.closed = False

    def setsockopt(self, *a):
        pass

    def bind(self, addr):
        pass

    def listen(self, n):
        pass

    def setblocking(self, flag):
        pass

    def fileno(self):
        return self  # (the poll below takes it back as the socket)

    def ready(self):
        return bool(self.dgrams) if self.dgrams is not None else bool(backlog)

    def accept(self):
        if not backlog:
            raise OSError(11)
        return backlog.pop(0), peer

    def recvfrom(self, n):
        if not self.dgrams:
            raise OSError(11)
        return self.dgrams.pop(0)[:n], ("192.168.4.2", 5353)

    def sendto(self, b, to):
        self.sent += len(b)
        return len(b)

    def readinto(self, buf, n=-1):
        left = len(self.rx) - self.at
        if left <= 0:
            if self.peer_closed:
                return 0
            return None
        k = len(buf) if n < 0 else n
        if k > left:
            k = left
        if k > _SEG:
            k = _SEG
        mv = memoryview(buf)
        mv[:k] = memoryview(self.rx)[self.at:self.at + k]
        self.at += k
        if self.at == len(self.rx):
            self.rx = b""
            self.at = 0
        return k

    def write(self, b, off=0, n=-1):
        if self.closed:
            raise OSError(104)
        end = len(b) if n < 0 else off + n
        k = end - off
        if k > _SEG:
            k = _SEG
        if len(self.head) < 12:
            self.head = bytes(memoryview(b)[off:off + 12])
        self.sent += k
        return k

    def close(self):
        self.closed = True


class poll:
    def __init__(self):
        self.s = None

    def register(self, obj, mask=POLLIN):
        self.s = obj

    def unregister(self, obj):
        self.s = None

    def ipoll(self, timeout=0):
        s = self.s
        return _READY if s is not None and s.ready() else ()  # no generator made: the chip's ipoll allocates nothing either


_READY = ((3, POLLIN),)


def connect(request=b""):
    """A client connects (and sends `request`): the server's end of it, for the client to watch."""
    s = socket()
    s.rx = request
    backlog.append(s)
    return s

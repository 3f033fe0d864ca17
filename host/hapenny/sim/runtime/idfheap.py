# The virtual board's `esp32` (the classic ESP32 only): ESP-IDF's data heap
# as a model, and idf_heap_info() reading it. MicroPython's GC heap, Wi-Fi
# and every socket take their memory from it, by the port's rules:
# - the GC heap's first area at start (ports/esp32/main.c: MP_PLAT_ALLOC_HEAP,
#   malloc, of MICROPY_GC_INITIAL_HEAP_SIZE, 56 KB: mpconfigport.h);
# - a growth when a collection leaves no room (py/gc.c gc_try_add_heap,
#   MICROPY_GC_SPLIT_HEAP_AUTO): double the heap, or less when ESP-IDF's
#   largest free block is smaller (gc_get_max_new_split in
#   ports/esp32/gccollect.c: heap_caps_get_largest_free_block, no reserve);
# - a grown area found empty at a sweep is handed back (gc_sweep_free_blocks:
#   MP_PLAT_FREE_HEAP), never the first.
# The allocator is best fit over the free blocks (TLSF, ESP-IDF's since v5.0,
# is a good fit), with a 4-byte header and 4-byte alignment a block; the
# largest free block is reported as ESP-IDF reports it, rounded down to a
# sixteenth of its power of two (micropython#8940: a 112,208-byte block
# reported as 110,592; #18859's 53,248 and #14421's 21,504 are such values).
# A refused allocation fails as the chip's does: Wi-Fi's start with
# OSError("WiFi Out of Memory") (ports/esp32/network_common.c, ESP_ERR_NO_MEM),
# socket() with ENOBUFS (lwIP's lwip_socket when netconn_new fails; #14421),
# a connection's buffers with ENOMEM (lwIP's ERR_MEM). Each refusal and any
# second growth is kept in FAULTS, which the test bench reads.
# Numbers: v1.28.0 and the v1.29 tree of MicroPython, ESP-IDF v5.5.2 (the
# release MicroPython v1.29 builds with: ports/esp32/README.md) with the
# port's sdkconfig (ports/esp32/boards/sdkconfig.base sets none of the
# buffers below, so ESP-IDF's Kconfig defaults hold). "est." marks a size
# not read from a source: a conservative estimate.

ENOMEM = 12
ENOBUFS = 105
HEAP_DATA = 4  # MALLOC_CAP_8BIT (ports/esp32/modesp32.c)
HEAP_EXEC = 1  # MALLOC_CAP_EXEC: not modelled (native code's RAM)
HEADER = 4  # TLSF's block header (no heap poisoning: components/heap/Kconfig, HEAP_POISONING_DISABLED)

# ESP-IDF's free data heap after boot, before MicroPython's first heap, as
# free blocks in address order. Three are micropython#8940's start-up layout
# (IDF v4.4): 4,452 B at 0x3ffbb4e8, 13,440 B in the 15,072-byte region at
# 0x3ffe0440 and 112,208 B in the 113,840-byte region at 0x3ffe4350 (those two
# regions are the same in every dump since 2017). The main DRAM block is
# derived: micropython#18859 (v1.27.0, IDF v5.5.1, a classic ESP32, the heap
# grown once, Wi-Fi off) read 94,256 B free with the largest 53,248; the
# first heap (57,344) and a doubling (57,344) taken from this layout leave
# exactly that when the main block is 78,852 B (not measured as such).
BOOT_FREE = (4452, 78852, 13440, 112208)
FIRST_HEAP = 56 * 1024  # MICROPY_GC_INITIAL_HEAP_SIZE (mpconfigport.h, CONFIG_IDF_TARGET_ESP32)

# Wi-Fi, at network.WLAN() (esp_initialise_wifi: esp_netif_init's TCP/IP
# task, the two netifs, esp_wifi_init) and at active(True) (esp_wifi_start):
TCPIP_TASK = 3072 + 352  # LWIP_TCPIP_TASK_STACK_SIZE 3072 (components/lwip/Kconfig); its FreeRTOS TCB 352 (est.)
TCPIP_MBOX = 80 + 32 * 4  # LWIP_TCPIP_RECVMBOX_SIZE 32 pointers, the queue's header 80 (est.)
WIFI_STATIC_RX = 10  # ESP_WIFI_STATIC_RX_BUFFER_NUM default 10 (components/esp_wifi/Kconfig) ...
WIFI_RX_BUF = 1696  # ... "approximately 1.6KB" each: 1,696-byte blocks in espressif/esp-idf#11753's heap dump
WIFI_TASK = 6656 + 352  # the Wi-Fi driver task's stack: "stack:6656" (espressif/esp-idf#12100's log); TCB (est.)
WIFI_INIT = 28 * 1024  # all of esp_wifi_init: "28kiB for initialisation" (micropython#8940, IDF v4.4) ...
WIFI_START = 2560  # ... and "2.5kiB for active" (esp_wifi_start)

# A socket (ESP-IDF's lwIP, MEMP_MEM_MALLOC: every pool object from the heap):
TCP_PCB = 256  # struct tcp_pcb, about 200 B on 32 bits (est.)
UDP_PCB = 64  # struct udp_pcb (est.)
NETCONN = 64  # struct netconn (est.)
MBOX = 80 + 6 * 4  # LWIP_TCP_RECVMBOX_SIZE, LWIP_UDP_RECVMBOX_SIZE, LWIP_TCP_ACCEPTMBOX_SIZE: 6 each
# A connection at its worst: its send buffer full and unacknowledged, each
# segment also copied by the Wi-Fi driver, and its receive window full of
# frames the firmware has not read yet:
MSS = 1440  # LWIP_TCP_MSS default
SEGMENTS = 5760 // MSS  # LWIP_TCP_SND_BUF_DEFAULT and LWIP_TCP_WND_DEFAULT: 5760 (4 * MSS) each
TX_SEG = 16 + 54 + MSS + 32  # a PBUF_RAM pbuf (struct pbuf, link/IP/TCP headers, data) and its tcp_seg (est. 32)
TX_COPY = 1600  # the driver's copy of each frame (ESP_WIFI_DYNAMIC_TX_BUFFER_NUM's help: "makes a copy ... in a TX buffer")
RX_FRAME = 1600 + 32  # a dynamic RX buffer per frame, lent to lwIP (wifi.rst: shared by reference), and its pbuf (est.)

SLOTS = 128  # blocks held at once: Wi-Fi's 14, two GC areas, 3 sockets' 7, 3 connections' 45, a bench's squeeze
FAULTS = []  # what a test must fail on: ("enomem", what, bytes) or ("growth", n, bytes)


def _round(n):
    return (n + 3) & ~3


def reported(size):
    """A free block's size as heap_caps_get_largest_free_block gives it."""
    if size < 256:
        return size & ~3
    p = 1 << (len(bin(size)) - 3)  # the highest power of two in it
    return size - size % (p >> 4)


class Heap:
    """ESP-IDF's free blocks at boot (in address order), each with its free
    spans now, and the blocks handed out (id -> (boot block, offset, size))."""

    def __init__(self, boot=BOOT_FREE, first=FIRST_HEAP):
        self.spans = [[[0, s]] for s in boot]  # each block's free spans [offset, size]
        self.boot = tuple(boot)
        # the blocks handed out, in a table made whole here: growing a dict later
        # (a rehash of some 1 KB) failed in a chip-sized heap the firmware had cut up,
        # where the chip's C allocator takes nothing from MicroPython's heap
        self.used = [0] * (SLOTS * 3)  # a slot's id (0: free), block and offset (off << 2 | block), size
        self.count = 0  # allocations so far: an id is its count and its slot (unique)
        self.areas = []  # the GC heap's areas: (id, bytes); the first first
        self.growths = 0
        self.min_free = sum(boot)
        self.wifi = []  # esp_wifi_init's blocks (kept: MicroPython never deinitialises Wi-Fi)
        self.started = []  # esp_wifi_start's, while an interface is active
        self.sockets = []  # [socket, its blocks]: the runtime's sockets (vsocket.py)
        self.held = []  # what the test bench holds back (hold())
        self.gc_add(first, first=True)

    # ---- the allocator ----------------------------------------------------------------
    def malloc(self, n):
        """An id, or None: the smallest free span that holds n (best fit)."""
        need = _round(n) + HEADER
        best = None
        for i, spans in enumerate(self.spans):
            for j, (off, size) in enumerate(spans):
                if size >= need and (best is None or size < best[2]):
                    best = (i, j, size, off)
        if best is None:
            return None
        i, j, size, off = best
        u = self.used
        k = 0
        while u[3 * k]:  # a free slot (the table holds more blocks than the budget affords at once)
            k += 1
            if k == SLOTS:
                raise RuntimeError("the ESP-IDF model's table is full: SLOTS too small")
        if size == need:
            del self.spans[i][j]
        else:  # the span shrinks in place (no new list)
            sp = self.spans[i][j]
            sp[0] = off + need
            sp[1] = size - need
        self.count += 1
        h = self.count * SLOTS + k
        u[3 * k] = h
        u[3 * k + 1] = off << 2 | i
        u[3 * k + 2] = need
        f = self.total_free()
        if f < self.min_free:
            self.min_free = f
        return h

    def live(self, h):
        """h is a block handed out and not yet released."""
        return self.used[3 * (h % SLOTS)] == h

    def release(self, h):
        u = self.used
        k = 3 * (h % SLOTS)
        where, size = u[k + 1], u[k + 2]
        u[k] = 0
        i, off = where & 3, where >> 2
        spans = self.spans[i]
        spans.append([off, size])
        spans.sort()
        k = 0
        while k + 1 < len(spans):  # join neighbours
            a, b = spans[k], spans[k + 1]
            if a[0] + a[1] == b[0]:
                a[1] += b[1]
                del spans[k + 1]
            else:
                k += 1

    def total_free(self):
        return sum(s for spans in self.spans for _, s in spans)

    def largest(self):
        return max([s for spans in self.spans for _, s in spans] or [0])

    def info(self):
        """idf_heap_info(HEAP_DATA)'s tuples: (total, free, largest free, least free ever) a block."""
        self.sweep()
        out = []
        for i, spans in enumerate(self.spans):
            free = sum(s for _, s in spans)
            big = max([s for _, s in spans] or [0])
            out.append((self.boot[i], free, reported(big), free))
        if out:  # the least free ever: the heap's, given once (its regions' own are not kept)
            t = out[0]
            out[0] = (t[0], t[1], t[2], min(t[3], self.min_free))
        return out

    def take(self, sizes, what, err):
        """All of sizes, or none: the ids, or the error `err` raised (and kept in FAULTS)."""
        got = []
        for n in sizes:
            h = self.malloc(n)
            if h is None:
                for g in got:
                    self.release(g)
                FAULTS.append(("enomem", what, sum(sizes)))
                raise err
            got.append(h)
        return got

    # ---- MicroPython's GC heap (py/gc.c) -------------------------------------------------
    def gc_add(self, n, first=False):
        h = self.malloc(n)
        if h is None:
            if first:  # main.c: "mp_task_heap allocation failed!", then esp_restart()
                raise MemoryError("mp_task_heap allocation failed")
            return False
        self.areas.append((h, n))
        return True

    def gc_total(self):
        """py/gc.c's total_heap for the areas' blocks: as large as the areas
        (each was made that way), to within one 16-byte block."""
        return sum(n for _, n in self.areas)

    def gc_grow(self, failed_alloc):
        """gc_try_add_heap(failed_alloc): True when an area was added. A
        second grown area (beside the first) starves the network: it is kept in FAULTS."""
        needed = failed_alloc + max(2048, failed_alloc * 13 // 512)
        avail = reported(self.largest())  # gc_get_max_new_split: no reserve kept
        if avail < needed:
            return False
        to_alloc = min(avail, max(self.gc_total(), needed))
        if not self.gc_add(to_alloc):
            return False
        self.growths += 1
        if len(self.areas) > 2:  # one grown area at a time: one handed back may be taken again
            FAULTS.append(("growth", len(self.areas) - 1, to_alloc))
        return True

    def gc_sweep(self, empty):
        """A sweep found the grown areas at these places (1: the first grown)
        empty: each is handed back to ESP-IDF."""
        for k in sorted(empty, reverse=True):
            if k > 0:
                h, _ = self.areas.pop(k)
                self.release(h)

    def gc_capacity(self, n):
        """The bytes an area of n bytes holds for objects (py/gc.c's
        gc_setup_area on 32 bits with finalisers, no weak references: 16-byte
        blocks, a byte of allocation table for 4, of finaliser table for 8;
        56,000 of 57,344; a grown area's own header, some 30 B, left out)."""
        return (n - 1) * 8 // 524 * 64

    def gc_live(self, live):
        """The GC heap after a collection, `live` bytes (32-bit objects)
        still needed, the allocation that asked for the collection included:
        a growth when they do not fit the areas held (gc_try_add_heap, with
        the shortfall as its failed allocation); the grown areas handed back
        when the first holds them all (optimistic: on the chip one object
        left in a grown area keeps it). A bench (the heap tour) reports its
        steps so; the virtual board itself reports nothing (its 64-bit heap
        is not the chip's). The number of grown areas held after."""
        room = sum(self.gc_capacity(n) for _, n in self.areas)
        if live > room:
            self.gc_grow(live - room)
        elif len(self.areas) > 1 and live <= self.gc_capacity(self.areas[0][1]):
            self.gc_sweep(range(1, len(self.areas)))
        return len(self.areas) - 1

    # ---- Wi-Fi and sockets ---------------------------------------------------------------
    def wifi_init(self):
        """network.WLAN(): esp_initialise_wifi, once (a refusal leaves
        nothing taken, and the next WLAN() tries again, as on the chip)."""
        if not self.wifi:
            rest = WIFI_INIT - TCPIP_TASK - TCPIP_MBOX - WIFI_STATIC_RX * WIFI_RX_BUF - WIFI_TASK
            sizes = [TCPIP_TASK, TCPIP_MBOX, WIFI_TASK] + [WIFI_RX_BUF] * WIFI_STATIC_RX + ([rest] if rest > 0 else [])
            self.wifi = self.take(sizes, "wifi init", OSError("WiFi Out of Memory"))

    def wifi_active(self, on):
        """WLAN.active(on) for the last active interface (esp_wifi_start, esp_wifi_stop)."""
        if on and not self.started:
            self.started = self.take([WIFI_START], "wifi start", OSError("WiFi Out of Memory"))
        elif not on:
            self.give(self.started)
            self.started = []

    def socket(self, udp=False):
        return self.take([UDP_PCB if udp else TCP_PCB, NETCONN, MBOX], "socket", OSError(ENOBUFS))

    def listening(self):
        return self.take([MBOX], "listen", OSError(ENOBUFS))

    def connection(self):
        """An accepted connection at its worst (see SEGMENTS)."""
        sizes = [TCP_PCB, NETCONN, MBOX] + [TX_SEG, TX_COPY, RX_FRAME] * SEGMENTS
        return self.take(sizes, "connection", OSError(ENOMEM))

    def give(self, ids):
        for h in ids:
            if self.live(h):
                self.release(h)

    def sweep(self):
        """Hand back the memory of every socket closed since the last look."""
        keep = []
        for s in self.sockets:
            if s[0].fileno() < 0:
                self.give(s[1])
            else:
                keep.append(s)
        self.sockets = keep

    def hold(self, n):
        """The test bench's squeeze: hold back about n bytes (in the largest
        spans first), after giving back what it held before."""
        self.give(self.held)
        self.held = []
        while n > 0:
            big = self.largest() - HEADER
            if big <= 0:
                break
            h = self.malloc(min(n, big))
            self.held.append(h)
            n -= min(n, big) + HEADER

    def report(self):
        """The model's state for the test bench."""
        self.sweep()
        return {"free": self.total_free(), "largest": reported(self.largest()), "min_free": self.min_free,
                "areas": [n for _, n in self.areas], "growths": self.growths, "wifi": bool(self.wifi),
                "started": bool(self.started), "sockets": len(self.sockets), "faults": FAULTS}


HEAP = [None]


def heap():
    """The board's heap model, made at the first look: the first GC area
    taken, and the one growth the firmware's game needs by the time the
    loop runs (the 32-bit heap tour's people's game peaks above 56 KB:
    docs/performance.md), before Wi-Fi starts (the join is stepped by the
    loop)."""
    h = HEAP[0]
    if h is None:
        h = Heap()
        h.gc_grow(2048)
        HEAP[0] = h
    return h


def idf_heap_info(capabilities):
    if capabilities & HEAP_DATA:
        return heap().info()
    return []

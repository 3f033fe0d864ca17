# The names a module uses, interned from its .mpy without loading its code
# (shove.intern_first: the network's names before the game's objects cut the
# heap up). Loaded for that and let go after.


class _Names:  # getattr on it interns a name (a str made a qstr), as a module's loading does
    pass


# The reads' buffers, made once for all the modules of an intern_first (this module lives
# only that long): a buffer per module, and its views, were some 500 B of garbage each
_one = bytearray(1)
_buf = bytearray(48)
_mv = memoryview(_buf)
_views = [None] * 48  # _views[k]: _buf's first k bytes, made once (a view a name would be 16 B each)


def read(path):
    """The names in the table of the .mpy at `path` interned (MicroPython's
    .mpy v6: "M", its version, two bytes, the count of names and of
    objects, then each name: its length times two, plus one for a name the
    interpreter has built in, whose text is not there; else its bytes and a
    NUL); False if there is no such file or it is not one to read. A new
    name's string is all it allocates (a read goes straight into a buffer)."""
    global _buf, _mv, _views
    try:
        f = open(path, "rb")
    except OSError:
        return False
    one = _one
    try:
        with f:
            if f.readinto(_buf, 4) != 4 or _buf[0] != 77 or _buf[1] != 6:
                return False
            n = _uint(f, one)
            _uint(f, one)
            buf, mv, views = _buf, _mv, _views
            for _ in range(n):
                k = _uint(f, one)
                if k & 1:
                    continue
                k >>= 1
                if k >= len(buf):
                    buf = _buf = bytearray(k + 1)
                    mv = _mv = memoryview(buf)
                    views = _views = [None] * (k + 1)
                if f.readinto(buf, k + 1) != k + 1:
                    return False
                v = views[k]
                if v is None:
                    v = views[k] = mv[:k]
                # a name already interned comes back as it is (no string made); a new one is made and interned
                getattr(_Names, str(v, "utf-8"), None)
    except (ValueError, UnicodeError):  # cut short, or not text: its import interns them
        return False
    return True


def _uint(f, one):
    """A .mpy's variable-length number: 7 bits a byte, the high bit set on all but the last."""
    v = 0
    while True:
        if not f.readinto(one):
            raise ValueError("cut short")
        b = one[0]
        v = (v << 7) | (b & 0x7F)
        if b < 0x80:
            return v

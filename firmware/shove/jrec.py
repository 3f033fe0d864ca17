# A game journal's record (the format is described in journal.py): what a
# dart, a `next` or an undo writes to flash. Apart from journal.py because a
# game in play needs only this; the rest (a whole journal written, one read
# back at start-up) is loaded when used and let go after.
UNDO = 254  # record for `undo`; darts use their segment code, `next` rules.NEXT_ACTION
REC = 3  # bytes a record


def crc8(a, b):
    """CRC-8 (polynomial 0x07) of two bytes: catches a torn or shifted record."""
    c = 0
    for x in (a, b):
        c ^= x
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
    return c


def record(action, seq):
    s = seq & 0xFF
    return bytes((action, s, crc8(action, s)))

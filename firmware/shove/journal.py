# The game journal: a set-up header written once, then one 3-byte record
# per action appended to the open file.
#
# Why append: on LittleFS a rewritten file beyond the inline size costs a
# fresh 4 KB block (an erase of tens of ms), while bytes appended to a file
# kept open are programmed into the block already erased for it. A dart
# therefore costs three bytes of flash, whatever the length of the game.
#
#   header:  b"HPJ2 " + crc32(setup) as 8 hex digits + b"\n" + setup JSON + b"\n"
#   record:  action, sequence (record index & 0xFF), crc8(action, sequence)
#
# A power cut during an append leaves at most a partial last record: it was
# never acknowledged (replies and events go out after the append returns),
# so the restore drops it. Any other damage fails the check and is reported.

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

import binascii
import json

from shove import rules
from shove.jrec import REC, UNDO, crc8, record  # noqa: F401 (also this module's names)

_MAGIC = const(b"HPJ2")


class JournalError(Exception):
    pass


def header(game):
    setup = {"teams": game.sides, "variant": game.rules.variant, "rules": game.rules.overrides()}
    if any(game.cpu):  # computer sides, and the seed their darts come from
        setup["cpu"] = list(game.cpu)
        setup["seed"] = game.seed
    setup = json.dumps(setup).encode()
    return _MAGIC + b" %08x\n" % (binascii.crc32(setup) & 0xFFFFFFFF) + setup + b"\n"


def encode(game):
    """The whole journal of a game: its header and its actions (undone ones left out)."""
    acts = game.actions.bytes()
    out = bytearray(header(game))
    for i in range(len(acts)):
        out.extend(record(acts[i], i))
    return bytes(out)


def decode(data):
    """bytes -> (Game replayed, records, clean). `records` is how many are
    on file (the next record's sequence number); `clean` is False when a torn
    last record was dropped, and the file must be rewritten before appending.
    JournalError for anything else damaged."""
    try:
        if data[:5] != _MAGIC + b" ":
            raise JournalError("not a game journal")
        nl = data.index(b"\n")
        crc = int(data[5:nl], 16)
        end = data.index(b"\n", nl + 1)
        setup = data[nl + 1:end]
        if crc != binascii.crc32(setup) & 0xFFFFFFFF:
            raise JournalError("checksum mismatch in the set-up")
        setup = json.loads(setup)
        game = rules.new_game(None, setup["teams"], setup["variant"], setup["rules"], setup.get("cpu"),
                              setup.get("seed", 0))
        body = data[end + 1:]
        n = len(body) // REC
        for i in range(n):
            a = body[i * REC]
            s = body[i * REC + 1]
            if s != i & 0xFF or body[i * REC + 2] != crc8(a, s):
                raise JournalError("damaged record %d" % i)
            if a == UNDO:
                game.undo()
            else:
                game.apply(a)
        return game, n, len(body) % REC == 0
    except JournalError:
        raise
    except Exception as e:
        raise JournalError("damaged journal: %s" % (e,))

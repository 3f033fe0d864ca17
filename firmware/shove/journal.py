# The game journal: the game's set-up plus one byte per action, guarded by a
# CRC. Small enough to rewrite whole after every dart; a restore replays it.
import binascii
import json

from shove import rules

MAGIC = b"HPJ1"


class JournalError(Exception):
    pass


def encode(game):
    setup = {"teams": game.sides, "variant": game.rules.variant, "rules": game.rules.overrides()}
    body = json.dumps(setup).encode() + b"\n" + binascii.hexlify(game.actions.bytes()) + b"\n"
    return MAGIC + b" %08x\n" % (binascii.crc32(body) & 0xFFFFFFFF) + body


def decode(data):
    """bytes -> Game, replayed; JournalError for anything damaged."""
    try:
        head, body = data.split(b"\n", 1)
        magic, crc = head.split(b" ")
        if magic != MAGIC or int(crc, 16) != binascii.crc32(body) & 0xFFFFFFFF:
            raise JournalError("checksum mismatch")
        setup_line, acts, tail = body.split(b"\n")
        if tail:
            raise JournalError("trailing bytes")
        setup = json.loads(setup_line)
        game = rules.new_game(None, setup["teams"], setup["variant"], setup["rules"])
        for a in binascii.unhexlify(acts):
            game.apply(a)
        return game
    except JournalError:
        raise
    except Exception as e:
        raise JournalError("damaged journal: %s" % (e,))

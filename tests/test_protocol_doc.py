"""What docs/protocol.md tells a client about Ctrl-C is what shove/handover.py
does: a lone 0x03 is data; two within the window, or Ctrl-C then Ctrl-A,
hand the port to the REPL."""
import re
from pathlib import Path

import mphelp  # noqa: F401  (puts the firmware on sys.path)
from shove import handover

ROOT = Path(__file__).resolve().parents[1]


def _ctrl_c_item(text):
    items = [i for i in re.split(r"\n(?=- )", text) if "0x03" in i]
    assert len(items) == 1, items
    return " ".join(items[0].split())


def test_the_protocol_doc_says_a_lone_ctrl_c_is_data_and_names_both_sequences():
    said = _ctrl_c_item((ROOT / "docs" / "protocol.md").read_text())
    window = "within %d s" % (handover.WINDOW_MS // 1000)
    assert "lone Ctrl-C (byte 0x03) is data" in said, said
    assert "Ctrl-C twice " + window in said and "Ctrl-C then Ctrl-A " + window in said, said
    # and the firmware does so: one 0x03 hands nothing over, the two sequences do
    w = handover.Watch()
    assert w.feed(3, 0) == handover.DROP and w.feed(ord("x"), 10) == handover.PASS
    assert w.feed(3, 5000) == handover.DROP and w.feed(3, 5000 + handover.WINDOW_MS - 1) == handover.TO_REPL
    assert w.feed(3, 9000) == handover.DROP and w.feed(1, 9500) == handover.TO_RAW
    assert w.feed(3, 20000) == handover.DROP and w.feed(3, 20000 + handover.WINDOW_MS) == handover.DROP


def test_no_doc_says_one_ctrl_c_stops_main_py():
    for path in [ROOT / "README.md", ROOT / "hardware" / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
        flat = " ".join(path.read_text().split())
        assert not re.search(r"Ctrl-C \(byte 0x03\) interrupts", flat), path

"""What tests/mutants_equivalent.txt's entries are matched on (tests/mutation.py):
the function and the changed line's code, never a mutant's number (mutmut
numbers a function's mutants afresh when it changes) nor the line's comment
(reworded, it would leave the entry stale and its survivor unlisted)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutation  # noqa: E402


def test_an_entry_is_keyed_by_its_function_and_code_not_the_comment():
    key = mutation.equivalent_key
    fn = "shove.pacing.x\u01c1TxQueue\u01c1__init__"
    assert key(fn, "self.end = 0  # tick (us) the FIFO", "self.end = 1  # tick (us) the FIFO") == \
        key(fn, "self.end = 0  # reworded since", "self.end = 1  # reworded since") == (fn, "self.end = 0", "self.end = 1")
    assert key(fn, "self.end = 0", "self.end = 1") != key(fn, "self.end = 0", "self.end = 2")
    assert key(fn, "if k > n:", "if k >= n:") != key("shove.pacing.x\u01c1TxQueue\u01c1drain", "if k > n:", "if k >= n:")


def test_a_hash_inside_a_string_is_code_and_a_statement_cut_across_lines_keeps_its_parts():
    code = mutation._code
    assert code('x = "a # b"  # c') == 'x = "a # b"'
    assert code('return MAGIC + b" %08x\\n" % (crc)') == 'return MAGIC + b" %08x\\n" % (crc)'
    assert code("foo(a,  # first / b)  # second") == "foo(a, / b)"  # (mutmut's lines, joined by " / ")
    assert code("else:  # none") == "else:" and code("if k > n:") == "if k > n:"

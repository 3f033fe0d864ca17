"""Scratch folders for tests that write a board's files (in CPython and in
the MicroPython unix port alike: os.listdir/remove/rmdir only)."""
import os


def rmtree(path):
    """Remove path and all below it: files, and the journal's folders of segments."""
    empty(path)
    os.rmdir(path)


def empty(path):
    """Remove everything below path, keeping path itself."""
    for f in os.listdir(path):
        p = path + "/" + f
        try:
            os.remove(p)
        except OSError:
            rmtree(p)

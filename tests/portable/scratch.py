"""Scratch folders for tests that write a board's files (in CPython and in
the MicroPython unix port alike: os.listdir/remove/rmdir only)."""
import os
import sys
import time


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


# This process's own: the same tests run in CPython and in MicroPython, in
# parallel workers, and in other clones' suites on the same machine, so a
# fixed folder would be written by two at once.
_TAG = "%s-%d" % (sys.implementation.name, time.time_ns())


def folder(name):
    """An empty folder /tmp/hapenny-test-<this process>-NAME, made if missing."""
    path = "/tmp/hapenny-test-%s-%s" % (_TAG, name)
    try:
        os.mkdir(path)
    except OSError:
        empty(path)
    return path

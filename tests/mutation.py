"""`make mutants`, the machine's half: mutmut (pinned in pyproject.toml)
makes every small defect it knows in the pure firmware modules and runs the
tests that reach each one, in CPython. Results are kept in
build/mutmut/mutants/, so a later run tests only the functions that changed
(and, when the tests changed, the mutants that were not caught before).
The figures go into docs/reliability.md, between the `mutmut` markers.

    python tests/mutation.py            run, then write the figures
    python tests/mutation.py --report   write the figures of the last run (and its coverage)
    python tests/mutation.py --fresh    forget every kept result first
    python tests/mutation.py --chip-entries 12 40-45 rank
                                        listed equivalents (by number in the file,
                                        or a word of theirs) applied by hand and tried
                                        on the MicroPython side (no mutmut run needed)

A survivor of the CPython tests is not yet a survivor: the second phase
(chip_phase) applies it to the firmware of a scratch copy of the tree and runs
the tests that see what the chip sees (MicroPython's heap and allocation
tests, the virtual board under the ESP32's heap and timing model, the heap
tour's checks); one they catch counts as killed. CHIP=0 leaves that phase out
(while working on one module's CPython tests; never for the figures).

Exit status 1 if a mutant survived that tests/mutants_equivalent.txt does not
list, or if a mutant has no test.

Why a staged copy (build/mutmut/): mutmut names a mutant after its file's
path (firmware/shove/rules.py would be `firmware.shove.rules`) while the
firmware imports it as `shove.rules`; with `shove/` at the top of the staged
tree the two agree. The copy differs from the firmware in one way only:
`@micropython.native` lines are commented out, because mutmut leaves
decorated functions alone, and under CPython that decorator returns the
function unchanged (scanner.py's fallback), so nothing else changes."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGE = ROOT / "build" / "mutmut"
DOC = ROOT / "docs" / "reliability.md"
EQUIVALENT = ROOT / "tests" / "mutants_equivalent.txt"
RUN_LOG = STAGE / "mutants" / "hapenny-run.json"  # how long the last run took, and the machine's load

# the firmware modules that import nothing from the board and whose every line
# the CPython tests run (app, commands, startup, diag and extra drive the
# board; boards/ is the board; jstore is the journal's littlefs layout, run
# by the tests inside MicroPython: docs/reliability.md says why each is left out)
PURE = ("rules", "newgame", "variants", "view", "scanner", "journal", "jrec", "protocol", "request", "keeper",
        "store", "loading", "segments", "leds", "strip", "pacing", "events", "buttons", "settings", "profile",
        "profile_default", "chip", "safeboot", "handover", "giveback", "cpu", "cpuloops", "coach", "throwing")
# MUTATE=rules,journal: try only those modules' mutants not yet caught (while
# working on their tests); the others keep what their last run found
SELECT = tuple(m for m in PURE if m in os.environ.get("MUTATE", ",".join(PURE)).split(","))
# mutants tried at a time (JOBS=1 make mutants: one core, the other for something else)
JOBS = os.environ.get("JOBS", "2")
PROVISIONAL = ()  # modules being rewritten, whose figures are provisional (none now)
# every test that runs the firmware inside CPython; the rest run it in the
# MicroPython port (tests/mutants.py covers what only they can catch)
# (not tests/test_cpu_sim.py: its games, a dozen seconds of statistics, would be
# paid by every mutant of the computer player, the throw model and the segment
# codes that survives; make test and make computer run it)
TESTS = ["tests/portable", "tests/test_rules_properties.py", "tests/test_cpu_properties.py",
         "tests/test_gamestate.py", "tests/test_esp32_board.py", "tests/test_app_start.py",
         "tests/test_app_commands.py"]

# Message text is not mutated: the human-readable argument of an error
# (the protocol promises a code, which is mutated, and "a message", whose
# wording no client may depend on), the error reply's own `msg` (protocol.error's
# third argument: its code, the second, is mutated) and a start-up notice's
# sentence (loading._notice's third: the file it names is mutated). Call name ->
# index of its message argument.
MESSAGE_ARG = {"RuleError": 1, "ProtoError": 1, "Refused": 1, "_bad": 0, "bad": 0, "JournalError": 0, "SegError": 0,
               "ValueError": 0, "ProfileError": 0, "error": 2, "_notice": 2}
# Sentences for a person built from pieces of prose: the coach's advice, the
# chip check's and the safe start's explanations. In these modules a string
# of two words or more is prose and is not mutated; what the sentence names
# is (the target, the words for numbers of marks, the opponent's name, a
# reason code, a pin: single words and numbers, and the code that picks them).
PROSE = ("coach.py", "chip.py", "safeboot.py")

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 36: "timeout",
          -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", None: "not run"}


# Loaded into every test run of a mutant (pytest -p): the tests run fastest
# first, so a caught mutant is usually caught in a fraction of a second; the
# property tests try a twentieth of make test's examples (at least 20), the
# same ones every run (derandomized: a verdict does not change from one run
# to the next), and a failing example is not shrunk (the verdict is all that
# is wanted); a mutant only the full count would catch counts as survived,
# so the score is if anything low. 30 minutes on two cores is the budget
# for a whole run.
PLUGIN = """
import gc
import importlib
import json
import os
import signal
import sys

import pytest
from hypothesis import Phase, settings

# Imported here, in the fork server before it forks a run per mutant: a
# module imported inside a function (rules imports newgame when a game is
# made) was otherwise compiled afresh in every run, a quarter of a second
# for a mutated newgame.
for name in %r:
    importlib.import_module("shove." + name)

# ... and each run starts with their module-level state as it was imported:
# mutmut forks the server after a run of every test, whose left-overs (the
# computer player's shared work space, made at its first decision) would
# otherwise hide a mutant that a fresh start meets (make test).
_KINDS = (type(None), bool, int, float, str, bytes, tuple, list, dict, set, bytearray)
_FRESH = []
for mod_name, mod in list(sys.modules.items()):
    if mod_name == "shove" or mod_name.startswith("shove."):
        state = {k: v for k, v in vars(mod).items()
                 if type(v) in _KINDS and not k.startswith(("mutants_", "__", "_mutmut"))}
        _FRESH.append((mod, state, {k: v.copy() for k, v in state.items() if isinstance(v, (list, dict, set, bytearray))}))


def pytest_sessionstart(session):
    for mod, state, copies in _FRESH:
        for k, v in state.items():
            setattr(mod, k, v)
        for k, v in copies.items():  # the same object, its first content (a cache filled since)
            got = getattr(mod, k)
            if isinstance(got, (dict, set)):
                got.clear()
                got.update(v)
            else:
                got[:] = v


def pytest_sessionfinish(session):
    # what the fork server has imported stays out of every later collection:
    # pytest collects the garbage at the end of each run, and the mutated
    # modules (every mutant is a function) made that the dearest part of a run
    gc.freeze()


_took = {}  # test -> its time in mutmut's recording run (traced: slower than a plain run)


class Overran(BaseException):
    # (a BaseException: code under test that catches Exception cannot swallow it)
    pass


def _overran(signum, frame):
    raise Overran("a test ran %%.1f s of CPU time, three times its recorded run and a second more: "
                  "the mutant makes it loop" %% _limit[0])


_limit = [0.0]
_SPECIAL = ("", "stats", "fail", "list_all_tests", "mutant_generation")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    # A mutant that makes a test loop fails that test once it has used three
    # times the test's recorded time (CPU, whatever the machine's load) and a
    # second more, instead of holding its run until mutmut's limit for every
    # test it reaches (twice their recorded time plus 4 s): the fastest test
    # is run first, so a loop is usually stopped within a second. Only a
    # mutant's run: the recording and clean runs are never stopped.
    took = _took.get(item.nodeid)
    on = took is not None and os.environ.get("MUTANT_UNDER_TEST", "") not in _SPECIAL
    if on:
        _limit[0] = 1.0 + 3 * took
        old = signal.signal(signal.SIGPROF, _overran)
        signal.setitimer(signal.ITIMER_PROF, _limit[0])
    try:
        yield
    finally:
        if on:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)


def pytest_collection_modifyitems(items):
    try:
        with open("mutmut-stats.json") as f:
            took = json.load(f)["duration_by_test"]
    except (OSError, ValueError, KeyError):
        took = {}
    _took.clear()
    _took.update(took)
    items.sort(key=lambda item: took.get(item.nodeid, 0.0))
    for item in items:
        fn = getattr(item, "obj", None)
        # (the test modules stay imported from one run to the next: the
        # count is taken from the test's own settings, never from ours)
        s = getattr(fn, "_hapenny_settings", None) or getattr(fn, "_hypothesis_internal_use_settings", None)
        if s is not None:
            fn._hapenny_settings = s
            fn._hypothesis_internal_use_settings = settings(
                s, max_examples=min(s.max_examples, max(20, s.max_examples // 20)), derandomize=True,
                database=None, deadline=None, phases=(Phase.explicit, Phase.generate), print_blob=False)
""" % (PURE,)


# ---- the staged tree --------------------------------------------------------------
def _stage_text(rel, data):
    if rel.endswith(".py"):
        text = data.decode()
        text = re.sub(r"(?m)^(\s*)@micropython\.native\b", r"\1# @micropython.native", text)
        return text.encode()
    return data


def _sync(src, dst, transform=None, top_only=False):
    """Make dst a copy of src, rewriting only files whose content changed
    (mutmut makes a file's mutants again when it is newer than they are)."""
    seen = set()
    for path in sorted(src.glob("*") if top_only else src.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = path.relative_to(src)
        seen.add(rel)
        data = path.read_bytes()
        if transform:
            data = transform(str(rel), data)
        out = dst / rel
        if out.exists() and out.read_bytes() == data:
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)  # now: newer than any mutant made from the old content
    if dst.exists() and not top_only:
        for path in sorted(dst.rglob("*"), reverse=True):
            if path.is_file() and path.relative_to(dst) not in seen and "__pycache__" not in path.parts:
                path.unlink()


def _toml_list(items):
    return "[" + ", ".join(json.dumps(x) for x in items) + "]"


def stage():
    STAGE.mkdir(parents=True, exist_ok=True)
    _sync(ROOT / "firmware" / "shove", STAGE / "shove", _stage_text)
    _sync(ROOT / "tests", STAGE / "tests")
    _sync(ROOT / "bench", STAGE / "bench")
    _sync(ROOT / "hardware", STAGE / "hardware")
    (STAGE / "pyproject.toml").write_text(
        "# made by tests/mutation.py\n"
        "[tool.mutmut]\n"
        'source_paths = ["shove"]\n'
        "only_mutate = %s\n" % _toml_list("shove/%s.py" % m for m in PURE)
        + 'also_copy = ["bench", "hardware"]\n'
        "pytest_add_cli_args_test_selection = %s\n" % _toml_list(TESTS)
        # (plugins a mutant's run has no use for: unraisableexception collects
        # the garbage twice at the end of each run)
        + 'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "hapenny_mutation", '
          '"-m", "not micropython", "-p", "no:unraisableexception", "-p", "no:doctest", "-p", "no:junitxml", '
          '"-p", "no:pastebin"]\n'
        # a mutant that loops for ever is stopped after twice its tests' time (CPU seconds)
        "timeout_multiplier = 1.0\ntimeout_constant = 2.0\n"
        'use_git_change_detection = false\n'
        # which function calls which is not needed (a changed function's own
        # mutants are made again), and recording it slows every call in the
        # first pass over the tests
        "track_dependencies = false\n"
        'on_dependency_change = "ignore"\n'
        "\n[tool.pytest.ini_options]\n"
        'markers = ["micropython: runs code inside the MicroPython unix port"]\n'
    )
    mutants = STAGE / "mutants"
    mutants.mkdir(exist_ok=True)
    for m in PURE:
        # a module new to the list was copied there unmutated, newer than its
        # source: mutmut would take it as done
        if not (mutants / "shove" / (m + ".py.meta")).exists():
            (mutants / "shove" / (m + ".py")).unlink(missing_ok=True)
    (mutants / "hapenny_mutation.py").write_text(PLUGIN)
    # the data files the modules read (cpu.dat): mutmut copies its sources' folder at its first run only
    for p in (ROOT / "firmware" / "shove").glob("*.dat"):
        dst = mutants / "shove" / p.name
        if dst.parent.is_dir() and (not dst.exists() or dst.read_bytes() != p.read_bytes()):
            shutil.copy2(p, dst)
    shutil.rmtree(mutants / "tests", ignore_errors=True)  # mutmut copies them again: none left over
    # the tests find the firmware at ROOT/firmware: here, its top files and the mutated package
    fw = mutants / "firmware"
    if fw.is_symlink():
        fw.unlink()
    _sync(ROOT / "firmware", fw, lambda rel, data: data, top_only=True)
    if not (fw / "shove").is_symlink():
        (fw / "shove").symlink_to(Path("..") / "shove")


def tests_digest():
    h = hashlib.sha256()
    for top in ("tests", "bench"):
        for path in sorted((STAGE / top).rglob("*.py")):
            h.update(str(path.relative_to(STAGE)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


# ---- every line reached -----------------------------------------------------------
COVERAGE = STAGE / "coverage.json"


def _firmware_files():
    return [ROOT / "firmware" / "shove" / (m + ".py") for m in PURE]


def coverage(measure=True):
    """{module: [line numbers no test runs]}: the same tests, once, under
    coverage.py, on the firmware itself (a mutant on a line no test runs can
    only survive). Kept until the tests or the modules change; measure=False:
    what was kept, said to be out of date if it is."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "bench").glob("*.py")) + _firmware_files():
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    digest = h.hexdigest()
    kept = json.loads(COVERAGE.read_text()) if COVERAGE.exists() else {}
    if kept and kept.get("digest") != digest and not measure:
        print("the lines no test runs were measured before the tests or the modules last changed")
    elif kept.get("digest") != digest:
        data = STAGE / "coverage.dat"
        include = ",".join(str(f) for f in _firmware_files())
        run = [sys.executable, "-m", "coverage", "run", "--data-file", str(data), "--include", include,
               "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", "not micropython", *TESTS]
        if subprocess.run(run, cwd=ROOT).returncode:
            raise SystemExit("the tests fail on the firmware as it is: no mutant can be judged")
        out = STAGE / "coverage-report.json"
        subprocess.run([sys.executable, "-m", "coverage", "json", "-q", "--data-file", str(data), "-o", str(out)],
                       cwd=ROOT, check=True)
        files = json.loads(out.read_text())["files"]
        missing = {}
        for m, path in zip(PURE, _firmware_files()):
            f = next((v for k, v in files.items() if Path(ROOT, k).resolve() == path.resolve()), None)
            missing[m] = f["missing_lines"] if f else ["all"]
        kept = {"digest": digest, "missing": missing}
        COVERAGE.write_text(json.dumps(kept))
    return kept["missing"]


# ---- the second phase: what the chip sees ---------------------------------------------
# A survivor of the CPython tests is tried once more before it may be listed
# as equivalent: applied to the firmware itself (in a scratch copy of the
# tree, the one the MicroPython port and the virtual board load), against the
# tests that run it inside MicroPython: the portable and MicroPython-only
# tests (the heap's and the allocation's among them), the virtual board
# under the ESP32's heap and timing model, and the heap tour's checks on the
# 32-bit WebAssembly port capped at the chip's grown heap. Only survivors
# come here, and they come in groups (CHIP_GROUP mutants at once, never two
# on one line): a group whose tests pass counts every member as surviving;
# one that fails is halved until the mutants that fail alone are found, and
# each of those is tried once more before it counts as caught (a timing
# test that failed on a loaded machine does not catch twice). Verdicts are
# kept until the firmware, the tests or this phase change.
CHIP_TESTS = ("tests/test_portable_on_micropython.py", "tests/test_esp32_timing.py")
CHIP_TOUR_DARTS = 30  # the heap tour's games, short: its checks are no memory error and no step failed
CHIP_GROUP = int(os.environ.get("CHIP_GROUP", "25"))
CHIP_LOG = STAGE / "mutants" / "hapenny-chip.json"
CHIP_TOUR = """
import sys
import wasm_heap
r = wasm_heap.tour(cap=wasm_heap.CHIP_CAP, darts=%d)
print(r.get("memory_errors"), r.get("steps_failed"), r.get("failed"))
sys.exit(1 if r.get("memory_errors") or r.get("steps_failed") else 0)
""" % CHIP_TOUR_DARTS


def _func_of(name):
    """'shove.cpu.xǁPlayerǁrank__mutmut_3' or 'shove.cpu.xǁPlayerǁrank' -> ('cpu', 'Player', 'rank')."""
    name = re.sub(r"__mutmut_\d+$", "", name)
    mod, _, f = name.rpartition(".")
    if f.startswith("x\u01c1"):
        _, cls, fn = f.split("\u01c1")
        return mod.split(".")[-1], cls, fn
    return mod.split(".")[-1], None, f[2:]


def _span(text, cls, fn):
    """(first, last) line index (0-based, inclusive) of a function or method in a module's text."""
    import ast
    for node in ast.parse(text).body:
        if cls is None and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == fn:
            return node.lineno - 1, node.end_lineno - 1
        if cls is not None and isinstance(node, ast.ClassDef) and node.name == cls:
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == fn:
                    return sub.lineno - 1, sub.end_lineno - 1
    raise KeyError("%s.%s" % (cls, fn) if cls else fn)


def _nth(lines, lo, hi, text, n):
    """Index of the n-th line (0-based) in lines[lo..hi] whose stripped text is `text`."""
    for i in range(lo, hi + 1):
        if lines[i].strip() == text:
            if n == 0:
                return i
            n -= 1
    raise KeyError(text)


def mutant_edits(key):
    """A mutmut mutant as line edits on its firmware file: (module, [(line index,
    old line, new line)]), read from mutmut's kept mutants (cwd: STAGE)."""
    import difflib

    import libcst as cst
    from mutmut.mutation.diff_apply import read_functions_from_index, read_mutant_function, \
        read_mutants_module, read_original_function
    mod, cls, fn = _func_of(key)
    path = Path("shove") / (mod + ".py")
    funcs = read_functions_from_index(key, path)
    if funcs is None:
        module = read_mutants_module(path)
        funcs = (read_original_function(module, key), read_mutant_function(module, key))
    old, new = (cst.Module([f]).code.strip("\n").split("\n") for f in funcs)
    text = (ROOT / "firmware" / "shove" / (mod + ".py")).read_text()
    lines = text.split("\n")
    lo, hi = _span(text, cls, fn)
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    edits = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag != "replace" or i2 - i1 != j2 - j1:
            raise ValueError("%s: not a change of whole lines" % key)
        for i, j in zip(range(i1, i2), range(j1, j2)):
            nth = sum(1 for ln in old[:i] if ln.strip() == old[i].strip())
            at = _nth(lines, lo, hi, old[i].strip(), nth)
            indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
            edits.append((at, lines[at], indent + new[j].strip()))
    return mod, edits


def entry_edits(entry):
    """An entry of mutants_equivalent.txt as the line edits it may mean: one
    (module, [edit]) for each line of its function that reads like its
    original line (`return -1` may be any of five)."""
    func, old, new, _ = entry
    mod, cls, fn = _func_of(func)
    text = (ROOT / "firmware" / "shove" / (mod + ".py")).read_text()
    lines = text.split("\n")
    lo, hi = _span(text, cls, fn)
    out = []
    for i in range(lo, hi + 1):
        if _code(lines[i].strip()) == _code(old):  # (its comment may have been reworded since)
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            out.append((mod, [(i, lines[i], indent + new)]))
    return out


class ChipTree:
    """A scratch copy of the tree (the files git knows) whose firmware the
    mutants are applied to; its tests run with its own host package and
    firmware on the path, as tests/mutants.py runs them."""

    def __init__(self, where):
        import tempfile
        self.tmp = tempfile.mkdtemp(prefix="hapenny-chip-", dir=where)
        self.base = Path(self.tmp) / "tree"
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        for rel in out.splitlines():
            if (ROOT / rel).is_file():
                dst = self.base / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, dst)
        wasm = ROOT / "build" / "wasm"  # the WebAssembly port's npm package: one install serves every copy
        if wasm.is_dir():
            (self.base / "build").mkdir(exist_ok=True)
            (self.base / "build" / "wasm").symlink_to(wasm)
        sys.path.insert(0, str(ROOT / "tests"))
        from mphelp import micropython_path
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(self.base / "host"), str(self.base / "firmware")]))
        self.env.pop("MUTANT_UNDER_TEST", None)
        if micropython_path():
            self.env.setdefault("HAPENNY_MICROPYTHON", micropython_path())

    def apply(self, groups):
        """groups: [(module, [(line index, old, new)])]; returns the files' texts to put back."""
        by_mod = {}
        for mod, edits in groups:
            by_mod.setdefault(mod, []).extend(edits)
        saved = {}
        for mod, edits in by_mod.items():
            path = self.base / "firmware" / "shove" / (mod + ".py")
            text = path.read_text()
            saved[path] = text
            lines = text.split("\n")
            for at, old, new in edits:
                if lines[at] != old:
                    raise ValueError("%s:%d is not %r" % (path.name, at + 1, old))
                lines[at] = new
            path.write_text("\n".join(lines))
        return saved

    def run(self, groups, tour=True):
        """The MicroPython-side checks with `groups` applied: None if all pass,
        else what failed first."""
        saved = self.apply(groups)
        try:
            for t in CHIP_TESTS:
                proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                       "-p", "no:xdist", t], cwd=self.base, env=self.env, capture_output=True,
                                      text=True, timeout=900)
                if proc.returncode not in (0, 5):
                    failed = [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
                    return (failed[0] if failed else t + ": exit %d" % proc.returncode)[:300]
            if tour:
                proc = subprocess.run([sys.executable, "-c", CHIP_TOUR], cwd=self.base / "bench", env=self.env,
                                      capture_output=True, text=True, timeout=1800)
                if proc.returncode:
                    return ("heap tour: memory errors, steps failed: " + (proc.stdout.strip() or proc.stderr[-300:]))[:300]
            return None
        finally:
            for path, text in saved.items():
                path.write_text(text)  # (newer than the mutant: the next build compiles it again)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def _lines_of(edits):
    return {(mod, at) for mod, es in edits for at, _, _ in es}


def chip_judge(cands, jobs=2, tour=True, log=None, size=None):
    """cands: {name: [(module, [edit])]} (one mutant each); returns {name: None
    (survived) or what caught it}. Groups of up to CHIP_GROUP, never two
    mutants on one line; a failing group is halved down to the mutants that
    fail alone, and each of those is tried again before it counts."""
    import queue
    import threading
    log = log or (lambda text: print(text, flush=True))
    verdict = {}
    pending = queue.Queue()
    groups = []
    for name in sorted(cands):
        for g in groups:
            if len(g) < (size or CHIP_GROUP) and not (_lines_of(cands[name]) & set().union(*(_lines_of(cands[n]) for n in g))):
                g.append(name)
                break
        else:
            groups.append([name])
    for g in groups:
        pending.put(g)
    lock = threading.Lock()
    left = [len(groups)]
    if tour:  # the WebAssembly port's npm package, installed once (build/wasm) for every copy
        subprocess.run([sys.executable, "-c", "import wasm_heap; wasm_heap.ensure_package()"], cwd=ROOT / "bench",
                       check=True)
    trees = [ChipTree(STAGE) for _ in range(max(1, jobs))]
    # the scratch copy must pass unmutated, or "caught" would mean nothing
    clean = trees[0].run([], tour)
    if clean is not None:  # (once more: a timing test may fail once on a loaded machine)
        clean = trees[0].run([], tour)
    if clean is not None:
        for t in trees:
            t.close()
        raise SystemExit("the MicroPython-side checks fail on the firmware as it is: %s" % clean)

    def work(tree):
        while True:
            with lock:
                if left[0] == 0:
                    return
            try:
                g = pending.get(timeout=1)
            except queue.Empty:
                continue
            why = tree.run([e for n in g for e in cands[n]], tour)
            if why is not None and len(g) == 1:
                again = tree.run(cands[g[0]], tour)  # caught twice, or a flake
                why = why if again is not None else None
            with lock:
                if why is None:
                    for n in g:
                        verdict[n] = None
                elif len(g) == 1:
                    verdict[g[0]] = why
                    log("caught on the chip: %s (%s)" % (g[0], why))
                else:
                    half = len(g) // 2
                    pending.put(g[:half])
                    pending.put(g[half:])
                    left[0] += 2
                left[0] -= 1

    threads = [threading.Thread(target=work, args=(t,)) for t in trees]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in trees:
        t.close()
    return verdict


def _chip_digest():
    """What a kept verdict depends on: the firmware, the tests and benches, and this phase's code."""
    import inspect
    h = hashlib.sha256()
    for top in ("firmware", "tests", "bench"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc" and \
                    path.name not in ("mutation.py", "mutants_equivalent.txt"):
                h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    h.update((inspect.getsource(ChipTree) + repr(CHIP_TESTS) + CHIP_TOUR).encode())
    return h.hexdigest()


def chip_phase(results, jobs):
    """Every survivor of the CPython tests (`results`: load_results()) not
    judged yet is tried on the MicroPython side; the verdicts are kept, and
    load_results() counts those caught as killed."""
    survivors = [k for m in results for k, s in results[m].items() if s == "survived"]
    if not survivors:
        return
    kept = json.loads(CHIP_LOG.read_text()) if CHIP_LOG.exists() else {}
    digest = _chip_digest()
    if kept.get("digest") != digest:
        kept = {"digest": digest, "verdicts": {}}
    os.chdir(STAGE)
    todo = {}
    for k in survivors:
        if k in kept["verdicts"]:
            continue
        try:
            todo[k] = [mutant_edits(k)]
        except (KeyError, ValueError) as e:
            print("not tried on the chip: %s (%s)" % (k, e))
    os.chdir(ROOT)
    if todo:
        print("%d survivors of the CPython tests tried on the MicroPython side, %d at a time" % (len(todo), jobs),
              flush=True)
        kept["verdicts"].update(chip_judge(todo, jobs))
        CHIP_LOG.write_text(json.dumps(kept))


def chip_entries(args):
    """`--chip-entries [N|N-M|TEXT ...]`: the listed equivalents (numbered in
    the file's order; or those whose function, lines or reason contain TEXT)
    applied by hand and tried on the MicroPython side, as the second phase
    tries survivors; no mutmut run needed."""
    pick, words = set(), []
    for a in args:
        lo, _, hi = a.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            pick.update(range(int(lo), int(hi or lo) + 1))
        else:
            words.append(a)
    todo = {}
    for n, e in enumerate(load_equivalent(), 1):
        if (pick or words) and n not in pick and not any(w in part for w in words for part in e):
            continue
        for i, edits in enumerate(entry_edits(e)):
            todo["%03d.%d %s" % (n, i, e[0])] = [edits]
        if not entry_edits(e):
            print("entry %d (%s: %s): no such line in the function" % (n, e[0], e[1]))
    if not todo:
        return 0
    verdict = chip_judge(todo, int(JOBS))
    # an entry is one mutant: where its line reads the same at several places
    # (`return -1`), it is caught only if every one of them is
    per = {}
    for k in sorted(verdict):
        per.setdefault(k.split(".")[0] + k[k.index(" "):], []).append(verdict[k])
    caught = 0
    for e, vs in sorted(per.items()):
        hit = all(vs)
        caught += hit
        print("%-9s %s" % ("CAUGHT" if hit else "survived", e) + ("  (%s)" % vs[0] if hit else "") +
              ("  (%d of its %d places caught)" % (sum(1 for v in vs if v), len(vs)) if len(vs) > 1 else ""))
    print("%d of %d entries caught on the MicroPython side" % (caught, len(per)))
    return 1 if caught else 0


# ---- inside the staged tree: mutmut itself ------------------------------------------
def _patch_mutmut():
    """Leave message text alone (MESSAGE_ARG); mutmut has no setting for one argument."""
    import libcst as cst
    from mutmut.mutation import file_mutation

    orig = file_mutation.MutationVisitor._skip_node_and_children

    def skip(self, node):
        quiet = self.__dict__.setdefault("_hapenny_messages", set())
        if id(node) in quiet:
            return True
        if prose[0] and isinstance(node, (cst.SimpleString, cst.FormattedStringText)) and len(
                node.value.strip("\"'").split()) >= 2:
            return True
        if isinstance(node, cst.Call):
            f = node.func
            name = f.value if isinstance(f, cst.Name) else f.attr.value if isinstance(f, cst.Attribute) else None
            i = MESSAGE_ARG.get(name)
            if i is not None and len(node.args) > i and node.args[i].keyword is None:
                quiet.add(id(node.args[i].value))
        return orig(self, node)

    def create(self, node):
        # a call's own mutations that change only its message argument (to None)
        i = None
        if isinstance(node, cst.Call):
            f = node.func
            name = f.value if isinstance(f, cst.Name) else f.attr.value if isinstance(f, cst.Attribute) else None
            i = MESSAGE_ARG.get(name)
        if i is None or len(node.args) <= i:
            return create_orig(self, node)
        before = len(self.mutations)
        create_orig(self, node)
        kept = self.mutations[:before]
        for mu in self.mutations[before:]:
            new = mu.mutated_node
            same_but_message = (isinstance(new, cst.Call) and new.func is node.func and len(new.args) == len(node.args)
                                and all(new.args[j] is node.args[j] for j in range(len(node.args)) if j != i))
            if not same_but_message:
                kept.append(mu)
        self.mutations[:] = kept

    prose = [False]  # the file being mutated is one of PROSE
    create_file_orig = file_mutation.create_mutations

    def create_file(filename, *args, **kw):
        prose[0] = str(filename).endswith(PROSE)
        try:
            return create_file_orig(filename, *args, **kw)
        finally:
            prose[0] = False

    file_mutation.create_mutations = create_file
    _fast_trampoline()
    create_orig = file_mutation.MutationVisitor._create_mutations
    file_mutation.MutationVisitor._skip_node_and_children = skip
    file_mutation.MutationVisitor._create_mutations = create


def _fast_trampoline():
    """Every call of a mutated module's function goes through mutmut's
    trampoline, which works out from os.environ, at each call, which
    function to run: the scanner's tests ran 2.5 times slower for it. Here
    each function works that out once per mutant under test (a test run
    has one) and then calls the original or the mutant straight away; the
    stats and forced-fail runs take mutmut's own path."""
    import inspect

    from mutmut.mutation import trampoline as tr

    wrap_orig = tr.wrap_in_trampoline
    special = ("", "stats", "fail", "list_all_tests", "mutant_generation")

    def wrap(mutants_dict, is_classmethod=False):
        def deco(func):
            slow = wrap_orig(mutants_dict, is_classmethod)(func)
            if is_classmethod or not inspect.isfunction(func) or inspect.isgeneratorfunction(func) or \
                    inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
                return slow
            state = [slow, None]  # the mutant under test it was worked out for, and what to call

            def fast(*args, **kwargs):
                m = tr._mutant_under_test
                if m is not state[1]:
                    state[1] = m
                    if m is None or m in special:
                        state[0] = slow
                    else:
                        module, _, name = m.rpartition(".")
                        state[0] = (mutants_dict.get(name) if module == func.__module__ else None) or \
                            mutants_dict["_mutmut_orig"]
                return state[0](*args, **kwargs)

            fast.__wrapped__ = func
            fast.__name__, fast.__qualname__, fast.__doc__ = func.__name__, func.__qualname__, func.__doc__
            fast.__module__ = func.__module__
            return fast
        return deco

    tr.wrap_in_trampoline = wrap


def mutmut_main(args):
    os.chdir(STAGE)
    sys.path.insert(0, str(STAGE / "mutants"))
    _patch_mutmut()
    from mutmut.__main__ import cli
    cli.main(args, prog_name="mutmut")


def load_results():
    """{module: {mutant key: status}} from mutmut's files."""
    out = {}
    for m in PURE:
        meta = STAGE / "mutants" / "shove" / (m + ".py.meta")
        if not meta.exists():
            out[m] = {}
            continue
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        out[m] = {k: STATUS.get(v, "suspicious (%s)" % v) for k, v in codes.items()}
    # survivors of the CPython tests that the MicroPython side caught (chip_phase)
    for k in chip_caught():
        m = k.split(".x")[0].split(".")[-1]
        if out.get(m, {}).get(k) == "survived":
            out[m][k] = "killed"
    return out


def chip_caught():
    """{mutant: what caught it} kept by the second phase, while it still holds."""
    kept = json.loads(CHIP_LOG.read_text()) if CHIP_LOG.exists() else {}
    if not kept or kept.get("digest") != _chip_digest():
        return {}
    return {k: v for k, v in kept["verdicts"].items() if v}


def diffs(keys):
    """mutant key -> (function, original line, mutated line), read with mutmut's own helper."""
    os.chdir(STAGE)
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    out = {}
    for k in keys:
        mod = k.split(".x")[0]
        d = get_diff_for_mutant(k, path=Path(*mod.split(".")).with_suffix(".py"))
        minus = [ln[1:].strip() for ln in d.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:].strip() for ln in d.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        out[k] = (k.split("__mutmut_")[0], " / ".join(minus), " / ".join(plus))
    return out


def load_equivalent():
    """Entries of four lines: function, `- original`, `+ mutated`, `= why`; '#' comments."""
    entries = []
    lines = [ln.rstrip("\n") for ln in EQUIVALENT.read_text().splitlines()] if EQUIVALENT.exists() else []
    block = []
    for ln in lines + [""]:
        if ln.startswith("#"):
            continue
        if ln.strip():
            block.append(ln)
            continue
        if block:
            if len(block) != 4 or not (block[1].startswith("- ") and block[2].startswith("+ ")
                                       and block[3].startswith("= ")):
                raise SystemExit("%s: an entry is function, '- line', '+ line', '= reason': %r" % (EQUIVALENT, block))
            entries.append((block[0].strip(), block[1][2:].strip(), block[2][2:].strip(), block[3][2:].strip()))
            block = []
    return entries


def _code(line):
    """A mutant's line (or lines, joined by " / ") without its trailing
    comments: an entry names the code it changes, so a comment reworded
    since does not make it stale (nor leave its survivor unlisted)."""
    import io
    import tokenize

    out = []
    for part in line.split(" / "):
        cut = len(part)
        try:
            for tok in tokenize.generate_tokens(io.StringIO(part).readline):
                if tok.type == tokenize.COMMENT:
                    cut = tok.start[1]
                    break
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass  # (a line of a longer statement: its comment, if any, came before the error)
        out.append(part[:cut].rstrip())
    return " / ".join(out)


def equivalent_key(func, old, new):
    """What an entry of mutants_equivalent.txt and a survivor are matched
    on: the function (mutmut's name, never a mutant's number, which shifts
    when the function changes) and the changed line's code, comments left out."""
    return func, _code(old), _code(new)


def match_equivalent(results):
    """(the survivors, their diffs, {survivor: why} for those listed, the
    entries, the indexes of the entries matched)."""
    survivors = [k for m in results for k, s in results[m].items() if s == "survived"]
    d = diffs(survivors)
    entries = load_equivalent()
    keys = [equivalent_key(*e[:3]) for e in entries]
    used = set()
    equivalent = {}
    for k in survivors:
        key = equivalent_key(*d[k])
        for i, e in enumerate(entries):
            if i not in used and key == keys[i]:
                used.add(i)
                equivalent[k] = e[3]
                break
    return survivors, d, equivalent, entries, used


def report(write=True, measure=True):
    missing = coverage(measure)
    results = load_results()
    survivors, d, equivalent, entries, used = match_equivalent(results)
    rows = []
    tot = dict(mutants=0, killed=0, equivalent=0, survived=0, timeout=0, untested=0, notrun=0)
    for m in PURE:
        r = results[m]
        c = dict(mutants=len(r), killed=0, equivalent=0, survived=0, timeout=0, untested=0, notrun=0)
        for k, s in r.items():
            if s == "killed":
                c["killed"] += 1
            elif s == "survived":
                c["equivalent" if k in equivalent else "survived"] += 1
            elif s == "timeout":
                c["timeout"] += 1
            elif s == "not run":
                c["notrun"] += 1
            else:
                c["untested"] += 1
        for key in tot:
            tot[key] += c[key]
        rows.append((m, c))
    rows.append(("all", tot))

    def pct(c):
        real = c["mutants"] - c["equivalent"] - c["notrun"]
        return "%.1f %%" % (100.0 * (c["killed"] + c["timeout"]) / real) if real else "-"

    table = ["| module | mutants | killed | timed out | survived | equivalent | untested | not run | score "
             "| lines no test runs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    unreached = sum(len(v) for v in missing.values())
    for m, c in rows:
        name = ("**%s**" % m) if m == "all" else ("`%s`%s" % (m, " (provisional)" if m in PROVISIONAL else ""))
        table.append("| %s | %d | %d | %d | %d | %d | %d | %d | %s | %d |" % (
            name, c["mutants"], c["killed"], c["timeout"], c["survived"], c["equivalent"], c["untested"], c["notrun"],
            pct(c), unreached if m == "all" else len(missing[m])))
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    import datetime
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    section = ["Recorded %s at commit %s (`make mutants`):" % (when, rev or "?"), ""] + table
    runs = json.loads(RUN_LOG.read_text()) if RUN_LOG.exists() else {}
    for what, took in (("The last run from scratch", runs.get("fresh")), ("The last run", runs.get("last"))):
        if took and (what == "The last run from scratch" or took is not runs.get("fresh")) and not (
                what == "The last run" and took == runs.get("fresh")):
            done = ("took %.1f minutes (%d mutants tried, %d at a time, niced, plus the tests once under "
                    "coverage.py)" % (took["seconds"] / 60.0, took["tried"], took.get("jobs", 2))
                    if not took.get("stopped") else
                    "was stopped after %.1f minutes with %d of its %d mutants tried (2 at a time, niced)" % (
                        took["seconds"] / 60.0, took["tried"], took["stopped"]))
            section += ["", "%s %s, the machine's 1-minute load average meanwhile %.1f to %.1f, "
                        "mean %.1f (2.0: two busy cores)." % (
                            what, done, min(took["load"]), max(took["load"]),
                            sum(took["load"]) / len(took["load"]))]
            if took.get("cpu") and took["tried"]:
                # what the run costs whatever else the machine does: on two
                # idle cores it takes about half its CPU time
                section[-1] += (" It used %.1f minutes of CPU time (user + system, every process it started): "
                                "%.2f s a mutant, so about %.1f minutes on two idle cores." % (
                                    took["cpu"] / 60.0, took["cpu"] / took["tried"], took["cpu"] / 120.0))
    chip = chip_caught()
    kept = json.loads(CHIP_LOG.read_text()) if CHIP_LOG.exists() else {}
    judged = [k for m in results for k in results[m] if k in kept.get("verdicts", {})] if kept.get(
        "digest") == _chip_digest() else []
    if judged:
        section += ["", "The second phase tried %d survivors of the CPython tests on the MicroPython side "
                    "(the tests inside MicroPython, the ESP32-heap virtual board, the heap tour's checks): "
                    "%d were caught there." % (len(judged), sum(1 for k in judged if k in chip))]
    for k in sorted(k for k in chip if any(k in results[m] for m in results)):
        print("CAUGHT ON THE CHIP %s: %s" % (k, chip[k]))
    for m in PURE:
        if missing[m]:
            src = (ROOT / "firmware" / "shove" / (m + ".py")).read_text().splitlines()
            for n in missing[m][:40]:
                print("NOT REACHED shove/%s.py:%s: %s" % (m, n, src[n - 1].strip() if isinstance(n, int) else ""))
    for line in table:
        print(line)
    stale = [e for i, e in enumerate(entries) if i not in used]
    for e in stale:
        print("listed as equivalent but no such survivor (remove it): %s: %s -> %s" % e[:3])
    bad = [k for k in survivors if k not in equivalent]
    for k in bad[:300]:
        print("SURVIVED %s: %s -> %s" % (k, d[k][1], d[k][2]))
    untested = [k for m in results for k, s in results[m].items()
                if s not in ("killed", "survived", "timeout", "not run")]
    for k in untested[:50]:
        print("%s: %s" % (results[k.split(".x")[0].split(".")[-1]][k].upper(), k))
    print("equivalent: %d of %d mutants (%.1f %%)" % (tot["equivalent"], tot["mutants"],
                                                     100.0 * tot["equivalent"] / max(1, tot["mutants"])))
    if write:
        text = DOC.read_text()
        start, end = "<!-- mutmut -->\n", "<!-- /mutmut -->"
        a = text.index(start) + len(start)
        b = text.index(end, a)
        DOC.write_text(text[:a] + "\n".join(section) + "\n" + text[b:])
    notrun = tot["notrun"]
    if notrun:
        print("%d mutants not tried yet (an interrupted run): make mutants goes on from here" % notrun)
    return 1 if bad or untested or notrun or unreached else 0


def run_mutmut(*args):
    return subprocess.run([sys.executable, __file__, "--mutmut", *args], cwd=STAGE).returncode


def main(argv):
    if argv[:1] == ["--mutmut"]:
        return mutmut_main(argv[1:])
    if argv[:1] == ["--diffs"]:
        for k, v in diffs(argv[1:]).items():
            print(k, v)
        return 0
    if argv[:1] == ["--chip-entries"]:
        return chip_entries(argv[1:])
    if argv[:1] == ["--report"]:
        stage()
        return report(measure=False)
    if argv[:1] == ["--fresh"]:
        shutil.rmtree(STAGE / "mutants", ignore_errors=True)
    stage()
    # the mutants themselves depend on this file's settings (the message rule,
    # the staging): when those change, mutant numbers may mean other defects
    made = STAGE / "mutants" / "hapenny-config.sha256"
    import inspect
    # (not the test plugin: it decides how each mutant is tried, never which mutants there are)
    config = hashlib.sha256((repr(MESSAGE_ARG) + repr(PROSE) + inspect.getsource(_stage_text)
                             + inspect.getsource(_patch_mutmut)).encode()).hexdigest()
    if made.exists() and made.read_text() != config:
        print("tests/mutation.py changed: every mutant is made and tried again")
        shutil.rmtree(STAGE / "mutants")
        stage()
    made.write_text(config)
    digest = tests_digest()
    # which tests each module's uncaught mutants were last tried against, and
    # which tests mutmut learnt what reaches what from
    mark = STAGE / "mutants" / "hapenny-tests.json"
    seen = json.loads(mark.read_text()) if mark.exists() else {}
    if seen.get("stats", digest) != digest:
        # the tests changed: which test reaches which function is learnt again
        (STAGE / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    seen["stats"] = digest
    # the mutants not caught when last tried, in the modules whose tests changed since
    before = load_results()
    fresh = not any(before.values())
    clock = _Clock()
    # (not those listed as equivalent: a test cannot catch them, and trying
    # each again costs every test that reaches it; nor those stopped as
    # looping, caught already: the limit is CPU time, whatever the load)
    listed = set(match_equivalent(before)[2]) if any(before.values()) else set()
    os.chdir(ROOT)
    again = [k for m in SELECT if seen.get(m) != digest  # (a module with no record: tried against other tests)
             for k, st in before[m].items() if st not in ("killed", "not run", "timeout") and k not in listed]
    if SELECT == PURE:
        rc = run_mutmut("run", "--max-children", JOBS)  # every mutant not tried yet
        if rc:
            return rc
    if os.environ.get("RETRY"):  # RETRY=1: the uncaught ones tried again with the tests as they are
        now = load_results()
        again = [k for m in SELECT for k, st in now[m].items() if st not in ("killed", "not run")]
    elif SELECT != PURE:  # and, for a few modules, the ones not tried yet too
        again += [k for m in SELECT for k, st in before[m].items() if st == "not run"]
        # (a module new to the list has no mutants yet: mutmut makes them for its name)
        again += ["shove.%s.*" % m for m in SELECT if not before[m]]
    if again:
        rc = run_mutmut("run", "--max-children", JOBS, *again)
        if rc:
            return rc
    for m in SELECT:
        seen[m] = digest
    mark.write_text(json.dumps(seen))
    if os.environ.get("CHIP", "1") != "0":  # (CHIP=0: CPython's phase alone, while working on a module's tests)
        chip_phase(load_results(), int(JOBS))
    after = load_results()
    tried = sum(1 for m in PURE for k, st in after[m].items()
                if st != "not run" and (k in again or before[m].get(k, "not run") == "not run"))
    coverage()  # counted in the run's time (report() reads what it kept)
    clock.stop(fresh, tried)
    return report()


class _Clock:
    """How long a run takes, and how busy the machine was meanwhile (the
    load average, sampled every 30 s): the budget is 30 minutes from
    scratch on two cores."""

    def __init__(self):
        import threading
        import time
        self.t0 = time.time()
        self.cpu0 = self._cpu()
        self.load = [os.getloadavg()[0]]
        self.done = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    @staticmethod
    def _cpu():
        # this process and every process it started that has ended (mutmut,
        # its fork server and a child per mutant, coverage.py): user + system
        import resource
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    def _sample(self):
        while not self.done.wait(30):
            self.load.append(os.getloadavg()[0])

    def stop(self, fresh, tried):
        import time
        self.done.set()
        self.load.append(os.getloadavg()[0])
        rec = json.loads(RUN_LOG.read_text()) if RUN_LOG.exists() else {}
        entry = {"seconds": time.time() - self.t0, "cpu": self._cpu() - self.cpu0, "tried": tried, "fresh": fresh,
                 "load": self.load, "jobs": int(JOBS)}
        rec["last"] = entry
        if fresh:
            rec["fresh"] = entry
        RUN_LOG.write_text(json.dumps(rec))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

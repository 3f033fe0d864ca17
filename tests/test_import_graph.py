"""The import graph of firmware/, host/ and bench/, read from the source with
ast: no module imports itself through others (a circle), no pure firmware
module imports hardware (`machine`, `esp32`, `network`) or the board layer,
and no firmware module imports a part above its own (PARTS, below).

Every import counts, wherever it is written: at module level, inside a
function (a lazy import is still a dependency, only a later one), the
literal forms `__import__("name")` and `importlib.import_module("name")`,
and the firmware's `call("name", ...)` (shove.call: a module loaded for one
call and let go)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each tree is a sys.path entry with the entries its code can import from, in
# the order they are searched: the host puts firmware/ on its path (deploy,
# the profiles), the bench scripts put bench/, host/ and firmware/ there. The
# virtual board's boot ROM (host/hapenny/sim/runtime) is a tree of its own:
# inside MicroPython its files are the top-level `machine`, `os`, ...
TREES = {
    "firmware": ("firmware", ["firmware"]),
    "host": ("host", ["host", "firmware"]),
    "runtime": ("host/hapenny/sim/runtime", ["runtime"]),
    "bench": ("bench", ["bench", "host", "firmware"]),
}

# The pure firmware modules: all of firmware/shove/ but the ones below. They
# run unchanged in CPython and in MicroPython, so none may import `machine`,
# `esp32`, `network` or the board layer (shove.boards and its modules).
# Not pure, and why (each imports the board layer, or the chip directly):
# - app: the game loop; it opens the board (shove.boards.open_board).
# - commands: the protocol's handlers (the board's reset among them).
# - extra: the rarely used handlers, loaded per command; `stats` reports the
#   chip's own heap (shove.boards.idf_heap).
# - startup: safe boot, then the game; it hooks the board as it opens
#   (shove.boards.ON_OPEN); its main() imports `machine` and hands it on.
# - diag: bring-up diagnostics, loaded on demand: the chip's heap and flash
#   timings (shove.boards), line levels through the board object.
# - the boards package: the hardware layer itself.
# - wifi, wifiset, wifiap, wifipage: the network's join (the chip's
#   `network`), its command (the chip's MAC names the board), the set-up
#   access point and its page's work (the scan), loaded only for a network.
# - httpd, httpreq, webroutes, webpage, webgate, setupweb, update: the board's web server
#   (sockets, the flash's files), loaded only once the board has joined a
#   network or opened its set-up access point.
NOT_PURE = {"shove.app", "shove.commands", "shove.extra", "shove.startup", "shove.diag", "shove.wifi",
            "shove.wifiset", "shove.httpd", "shove.httpreq", "shove.webroutes", "shove.webpage", "shove.webgate",
            "shove.wifiap", "shove.wifipage", "shove.setupweb", "shove.update"}
HARDWARE = ("machine", "esp32", "network", "shove.boards")

# The firmware's parts, from the bottom: (level, part, its modules). A module
# may import its own part and the parts of lower levels; never a part above,
# nor a sibling on its own level (the serial lines and the network are two
# ways in, side by side). Every module of firmware/ is in exactly one part.
# Names are firmware/shove's modules (`shove`: the package's __init__), or
# firmware/'s own (main, boot). docs/architecture.md ("The parts") shows this
# table, and test_the_architecture_page_shows_the_part_map holds it to it.
PARTS = (
    (1, "base", "shove segments store names"),
    (2, "boards", "scanner profile profile_default chip boards boards.esp32 boards.esp32_setup boards.esp32_mem32 "
                  "boards.matrix_model boards.virtual boards.virtual_clock boards.virtual_esp32 "
                  "boards.virtual_uart boards.virtual_flash boards.virtual_setup boards.virtual_bench"),
    (3, "referee", "variants newgame rules view"),
    (4, "computer", "throwing cpuloops cpu coach"),
    (5, "game", "events jrec journal jstore settings keeper"),
    (6, "show", "leds strip buttons"),
    (7, "handlers", "protocol request extra diag"),
    (8, "lines", "commands handover giveback pacing"),
    (8, "network", "wifi wifiset httpd httpreq webroutes webpage webgate webcmd wifiap wifipage setupweb captive probes update"),
    (9, "loop", "app loading fault"),
    (10, "start", "startup safeboot updswitch main boot"),
)


def modules(tree_dir):
    """{module name: file} for the .py files under tree_dir (a sys.path entry).
    Folders without __init__.py are left out unless tree_dir is the top (a
    script folder): they are not packages the tree can import."""
    out = {}
    for path in sorted(tree_dir.rglob("*.py")):
        rel = path.relative_to(tree_dir)
        parts = list(rel.parts)
        if any(not (tree_dir.joinpath(*parts[:i]) / "__init__.py").exists() for i in range(1, len(parts))):
            continue
        parts[-1] = parts[-1][:-3]
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            out[".".join(parts)] = path
    return out


def imported_names(source, module, is_package):
    """Every module name the source asks for, as written (absolute), with the
    line: import statements anywhere, and the literal __import__ and
    importlib.import_module calls."""
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join(parts + ([base] if base else []))
            # `from a import b`: b may be a module of package a, or a name in a
            for alias in node.names:
                found.append((base + "." + alias.name if alias.name != "*" else base, node.lineno, base))
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("__import__", "import_module") and node.args:
                a = node.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    found.append((a.value, node.lineno))
            elif name == "call" and module.split(".")[0] == "shove" and node.args:
                a = node.args[0]  # shove.call("boards.esp32_setup", "build", ...): shove.boards.esp32_setup
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    found.append(("shove." + a.value, node.lineno))
    return found


def import_graph(trees):
    """trees: {name: (directory, [names of the trees it imports from, in
    path order])}. Returns (graph, where): graph maps "tree:module" to the
    set of "tree:module" it imports (modules outside the trees, such as the
    standard library, are left out); where maps an edge to the file and line
    that makes it."""
    mods = {name: modules(Path(d)) for name, (d, _) in trees.items()}
    graph, where = {}, {}

    def resolve(name, path_order):
        for t in path_order:
            if name in mods[t]:
                return "%s:%s" % (t, name)
        return None

    for name, (d, path_order) in trees.items():
        for mod, path in mods[name].items():
            node = "%s:%s" % (name, mod)
            graph.setdefault(node, set())
            for item in imported_names(path.read_text(), mod, path.name == "__init__.py"):
                # `from a import b`: the module a.b if there is one, else a
                target = resolve(item[0], path_order)
                if target is None and len(item) == 3:
                    target = resolve(item[2], path_order)
                if target is not None and target != node:
                    graph[node].add(target)
                    where.setdefault((node, target), "%s:%d" % (path, item[1]))
                elif target == node:
                    graph[node].add(node)  # a module importing itself by name
                    where.setdefault((node, node), "%s:%d" % (path, item[1]))
    return graph, where


def cycles(graph):
    """One circle for each group of modules that import each other (the
    strongly connected components with more than one module, or a module
    importing itself), each as a list of modules that closes on its first."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):  # Tarjan's algorithm, iterative so deep graphs are fine
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == node:
                            break
                    if len(group) > 1 or node in graph.get(node, ()):
                        out.append(_circle(graph, set(group)))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _circle(graph, group):
    """A shortest path from the group's first module back to itself."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    return paths[v] + [start]
                if w in group and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("not a strongly connected group: %s" % sorted(group))


def _trees():
    return {name: (str(ROOT / d), order) for name, (d, order) in TREES.items()}


def _describe(circle, where):
    return " -> ".join(m for m in circle) + "\n" + "\n".join(
        "    %s imports %s at %s" % (a, b, where[(a, b)]) for a, b in zip(circle, circle[1:]))


def test_no_import_circle():
    graph, where = import_graph(_trees())
    assert len(graph) > 60  # the trees were found and read
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(_describe(c, where) for c in found)


def pure_modules(files):
    """The pure modules among firmware's {module: file}."""
    return [m for m in sorted(files) if m.split(".")[0] == "shove" and m not in NOT_PURE
            and m != "shove.boards" and not m.startswith("shove.boards.")]


def hardware_imports(files, pure):
    """What the pure modules import of HARDWARE, one line each."""
    bad = []
    for m in pure:
        for item in imported_names(files[m].read_text(), m, files[m].name == "__init__.py"):
            if any(item[0] == h or item[0].startswith(h + ".") for h in HARDWARE):
                bad.append("%s imports %s (%s:%d)" % (m, item[0], files[m], item[1]))
    return bad


def test_pure_firmware_modules_import_no_hardware():
    files = modules(ROOT / "firmware")
    pure = pure_modules(files)
    assert {"shove.scanner", "shove.rules", "shove.journal", "shove.protocol", "shove.store"} <= set(pure)
    assert NOT_PURE <= set(files)  # the exceptions name modules that exist
    bad = hardware_imports(files, pure)
    assert not bad, "pure modules reaching hardware:\n" + "\n".join(bad)


def part_map(parts, files):
    """{module: (level, part)} from a map such as PARTS, the names made
    module names of `files` ({module: file}), and the map's own faults: a
    name no module has, a module in two parts, a module in none."""
    where, faults = {}, []
    for level, part, names in parts:
        for n in names.split():
            m = "shove." + n if "shove." + n in files else n
            if m not in files:
                faults.append("%s: no module %s" % (part, n))
            elif m in where:
                faults.append("%s is in %s and %s" % (m, where[m][1], part))
            else:
                where[m] = (level, part)
    faults += ["%s is in no part" % m for m in sorted(files) if m not in where]
    return where, faults


def part_violations(graph, where_edge, parts_of, tree="firmware"):
    """Each import of a part above the importer's own, or of a sibling on
    its level, one line each."""
    bad = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            ma, mb = a.split(":", 1)[1], b.split(":", 1)[1]
            if not (a.startswith(tree + ":") and b.startswith(tree + ":")) or ma not in parts_of or mb not in parts_of:
                continue
            (la, pa), (lb, pb) = parts_of[ma], parts_of[mb]
            if pa != pb and lb >= la:
                bad.append("%s (%s) imports %s (%s, %s) at %s" % (
                    ma, pa, mb, pb, "above" if lb > la else "a sibling", where_edge[(a, b)]))
    return bad


def test_every_firmware_module_is_in_one_part():
    _, faults = part_map(PARTS, modules(ROOT / "firmware"))
    assert not faults, "the part map (PARTS):\n" + "\n".join(faults)


def test_no_firmware_module_imports_a_part_above_its_own():
    parts_of, _ = part_map(PARTS, modules(ROOT / "firmware"))
    graph, where = import_graph({"firmware": _trees()["firmware"]})
    assert ("firmware:shove.boards.esp32", "firmware:shove.boards.esp32_setup") in where  # call() is seen
    bad = part_violations(graph, where, parts_of)
    assert not bad, "imports against the parts' order:\n" + "\n".join(bad)


def test_the_architecture_page_shows_the_part_map():
    """docs/architecture.md's table of the parts is PARTS, row for row."""
    import re

    doc = (ROOT / "docs" / "architecture.md").read_text()
    table = doc.partition("\n## The parts\n")[2].partition("\n| level | part | modules |")[2]
    rows = []
    for line in table.split("\n")[2:]:  # past the header's end and its rule
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((int(cells[0]), cells[1].strip("*"), " ".join(re.findall(r"`([^`]+)`", cells[2]))))
    assert rows == [(lv, part, " ".join(names.split())) for lv, part, names in PARTS]


# The checks themselves, on small trees made for them: each way of importing
# closes a circle the graph must find, and a tree without one passes.
def _tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {"t": (str(tmp_path), ["t"])}


@pytest.mark.parametrize("files, circle", [
    # module level, both ways
    ({"a.py": "import b\n", "b.py": "from a import X\n"}, ["t:a", "t:b", "t:a"]),
    # lazy, inside a function (profile and profile_default were so)
    ({"a.py": "def f():\n    import b\n", "b.py": "import a\n"}, ["t:a", "t:b", "t:a"]),
    # hidden behind __import__ (bench/run.py and bench/report.py were so)
    ({"a.py": "def f():\n    return __import__('b').g()\n", "b.py": "def g():\n    from a import f\n"},
     ["t:a", "t:b", "t:a"]),
    # importlib, through a third module
    ({"a.py": "import importlib\nM = importlib.import_module('b')\n", "b.py": "import c\n",
      "c.py": "from importlib import import_module\nimport_module('a')\n"}, ["t:a", "t:b", "t:c", "t:a"]),
    # a package and its module (the board layer was so), absolute and relative
    ({"p/__init__.py": "def open():\n    from p import m\n", "p/m.py": "from p import K\n"},
     ["t:p", "t:p.m", "t:p"]),
    ({"p/__init__.py": "from . import m\n", "p/m.py": "from . import n\n", "p/n.py": "from . import K\n"},
     ["t:p", "t:p.m", "t:p.n", "t:p"]),
    # a module importing itself
    ({"a.py": "import a\n"}, ["t:a", "t:a"]),
])
def test_the_graph_finds_a_circle(tmp_path, files, circle):
    graph, where = import_graph(_tree(tmp_path, files))
    assert cycles(graph) == [circle]
    for a, b in zip(circle, circle[1:]):
        assert where[(a, b)].startswith(str(tmp_path))  # each step names its file and line


def test_the_graph_passes_a_tree_without_circles(tmp_path):
    graph, _ = import_graph(_tree(tmp_path, {
        "a.py": "import b, c\nimport os\n", "b.py": "from c import X\n", "c.py": "import json\n",
        "p/__init__.py": "", "p/m.py": "from p import n\n", "p/n.py": "__import__('c')\n",
        "notpkg/x.py": "import a\n"}))  # a folder that is not a package is not importable
    assert graph == {"t:a": {"t:b", "t:c"}, "t:b": {"t:c"}, "t:c": set(), "t:p": set(),
                     "t:p.m": {"t:p.n"}, "t:p.n": {"t:c"}}
    assert cycles(graph) == []


def test_the_purity_check_finds_hardware(tmp_path):
    _tree(tmp_path, {
        "shove/__init__.py": "", "shove/fine.py": "import micropython\nfrom shove import rules\n",
        "shove/rules.py": "def f():\n    import machine\n",
        "shove/leds.py": "from shove.boards import WOKE_INPUT\n", "shove/net.py": "import network as n\n",
        "shove/app.py": "import machine\n",  # not pure: allowed
        "shove/boards/__init__.py": "import esp32\n"})  # the board layer: allowed
    files = modules(tmp_path)
    pure = pure_modules(files)
    assert pure == ["shove", "shove.fine", "shove.leds", "shove.net", "shove.rules"]
    bad = hardware_imports(files, pure)
    assert [b.split(" (")[0] for b in bad] == [
        "shove.leds imports shove.boards.WOKE_INPUT", "shove.net imports network", "shove.rules imports machine"]


def test_the_part_check_finds_imports_upward_and_sideways(tmp_path):
    _tree(tmp_path, {
        "shove/__init__.py": "", "shove/low.py": "",
        "shove/mid.py": "from shove import low\ndef f():\n    from shove import top\n",  # lazy, upward
        "shove/serial.py": "import shove.low\n", "shove/net.py": "from shove.serial import X\n",  # a sibling
        "shove/top.py": "from shove import mid, net, serial\n", "shove/board.py": "from shove import call\n"
                                                                 "call('low', 'f')\ncall('top', 'f')\n"})
    parts = ((1, "base", "shove low board"), (2, "middle", "mid"), (3, "serial", "serial"), (3, "network", "net"),
             (4, "top", "top"))
    files = modules(tmp_path)
    parts_of, faults = part_map(parts, files)
    assert faults == []
    graph, where = import_graph({"firmware": (str(tmp_path), ["firmware"])})
    assert [b.split(" at ")[0] for b in part_violations(graph, where, parts_of)] == [
        "shove.board (base) imports shove.top (top, above)",
        "shove.mid (middle) imports shove.top (top, above)",
        "shove.net (network) imports shove.serial (serial, a sibling)"]
    # and the map's own faults: a name with no module, a module twice, one in none
    _, faults = part_map(((1, "a", "shove low ghost"), (2, "b", "low mid")), files)
    assert faults == ["a: no module ghost", "shove.low is in a and b", "shove.board is in no part",
                      "shove.net is in no part", "shove.serial is in no part", "shove.top is in no part"]


def test_the_architecture_page_names_every_module():
    """docs/architecture.md has a line for each module; a new one must get
    its line (what it owns, who calls it, what it may import)."""
    import re

    doc = (ROOT / "docs" / "architecture.md").read_text()
    picture = doc.partition("```\n")[2].partition("```")[0]  # the dart's path (the tables follow)
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", picture))
    for code in re.findall(r"`([^`]+)`", doc.replace(picture, "").replace("```", "")):
        named.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    graph, _ = import_graph(_trees())
    missing = sorted(n for n in graph if n.rsplit(".", 1)[-1].split(":")[-1] not in named)
    assert not missing, "modules docs/architecture.md does not name: %s" % ", ".join(missing)

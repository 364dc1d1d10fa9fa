"""The house reads at a glance: the package is rooms (subpackages named after their jobs) and a few
loose modules, and imports flow one way between them (each room's ``__init__`` says what it may
import; the loose modules' rules are :data:`LOOSE_RULES` below); no import cycle between modules
(lazy imports inside functions included), no private name imported from another module, what one
module takes from another is in that module's ``__all__``, every module is a room a person can read
(:data:`MAX_MODULE_LINES`), and the compiled kernels' source is what their build stamp hashes."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from divergence.kernels import compiled

PACKAGE = Path(__file__).resolve().parents[1] / "divergence"


def _dotted(path: Path) -> str:
    """A module's name under the package: ``scan``, ``stats.assess``; a subpackage's ``__init__``
    is the subpackage (``stats``), the package's own stays ``__init__``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


MODULES = {_dotted(p): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
           for p in sorted(PACKAGE.rglob("*.py")) if not any(s.startswith(".") for s in p.relative_to(PACKAGE).parts)}
#: the subpackages (rooms): every folder of the package with an ``__init__.py``
ROOMS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
#: the modules at the top, beside the rooms
LOOSE = sorted(name for name in MODULES if "." not in name and name not in ROOMS)

#: what each loose module may import (rooms and loose modules; the rooms' rules are their docstrings)
LOOSE_RULES = {
    "errors": set(),
    "vocabulary": set(),
    "budget": set(),
    "hooks": set(),
    "outcome_rules": {"errors"},
    "scores": {"errors"},
    "settings": {"fields", "budget", "outcome_rules", "scores", "errors", "vocabulary"},
    "table": {"data", "prepare", "settings", "scores", "errors", "hooks"},
    "scan": {"data", "prepare", "mining", "stats", "table", "settings", "budget", "errors", "vocabulary", "kernels"},
    "simulate": {"scan"},
}
#: the public surface and the command line's entry: they may import any room
UNRULED = {"__init__", "__main__"}


def _is_package(name: str) -> bool:
    return name in ROOMS


def _imports(tree: ast.Module, importer: str = ""):
    """(imported module of the package, names taken) for every import anywhere in the module:
    at the top, inside functions, under ``if TYPE_CHECKING``. ``importer`` is the importing module's
    name under the package (to resolve relative imports); a name taken from a subpackage that is
    one of its modules counts as that module."""
    if importer in ROOMS:
        base_package = importer.split(".")
    else:
        base_package = importer.split(".")[:-1] if importer not in ("", "__init__", "__main__") else []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base_package[:len(base_package) - (node.level - 1)] if node.level > 1 else base_package
                parts = anchor + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "divergence":
                parts = node.module.split(".")[1:]
            else:
                continue
            source = ".".join(parts)
            if not source or _is_package(source):
                for a in node.names:
                    sub = f"{source}.{a.name}" if source else a.name
                    if sub in MODULES:
                        yield sub, []
                    elif source:
                        yield source, [a.name]
            else:
                yield source, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "divergence" and len(parts) > 1:
                    yield ".".join(parts[1:]), []


def _room(name: str) -> str:
    """The room of a module: its subpackage, or the loose module itself."""
    return name.split(".")[0]


def _graph() -> dict[str, set[str]]:
    return {name: {m for m, _ in _imports(tree, name) if m in MODULES and m != name}
            for name, tree in MODULES.items() if name not in UNRULED}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a path, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_resolved_to_modules():
    assert list(_imports(ast.parse("from ..mining.lattice import walk_order"), "stats.assess")) == [
        ("mining.lattice", ["walk_order"])]
    assert list(_imports(ast.parse("from .fisher import fisher_exact_p"), "stats.stats")) == [
        ("stats.fisher", ["fisher_exact_p"])]
    assert list(_imports(ast.parse("from .stats.assess import assess"), "__init__")) == [("stats.assess", ["assess"])]
    assert list(_imports(ast.parse("from divergence.stats import fisher"), "")) == [("stats.fisher", [])]
    assert list(_imports(ast.parse("import divergence.present.views"), "")) == [("present.views", [])]
    assert list(_imports(ast.parse("from ..errors import message"), "data.io")) == [("errors", ["message"])]


def test_no_import_cycle():
    graph = _graph()
    assert len(graph) > 30 and graph["scan"] >= {"stats.tabulate", "stats.assess"}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_name_crosses_modules():
    bad = [(name, mod, n) for name, tree in MODULES.items() for mod, names in _imports(tree, name)
           for n in names if n.startswith("_") and mod in MODULES]
    assert not bad, f"private names imported from another module: {bad}"


def _all_names(tree: ast.Module, value: ast.expr) -> list:
    """``__all__``'s names: a literal list, or ``list(_EXPORTS)`` of a literal mapping (the
    package's lazy exports)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
            and len(value.args) == 1 and isinstance(value.args[0], ast.Name):
        source = value.args[0].id
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == source
                                                    for t in node.targets):
                return list(ast.literal_eval(node.value))
    return list(ast.literal_eval(value))


def test_what_a_module_takes_is_in_its_all():
    declared = {}
    for name, tree in MODULES.items():
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets):
                declared[name] = set(_all_names(tree, node.value))
    assert set(MODULES) - set(declared) <= {"__main__"} | set(ROOMS), "every module says what it offers"
    missing = sorted({(mod, n, name) for name, tree in MODULES.items() for mod, names in _imports(tree, name)
                      for n in names if mod in declared and n not in declared[mod]})
    assert not missing, f"(module, name, taken by) not in the module's __all__: {missing}"


# ----------------------------------------------------------------------------- rooms and layers
def _may_import(room: str) -> set[str]:
    """A room's rule, from its ``__init__``'s docstring: ``May import: a, b, c.`` (or ``nothing``)."""
    doc = ast.get_docstring(MODULES[room]) or ""
    found = re.search(r"^May import: (.*?)\.\s*$", doc, re.M | re.S)
    assert found, f"divergence/{room}/__init__.py does not say what the room may import ('May import: ...')"
    words = " ".join(found.group(1).split())
    return set() if words == "nothing" else {w.strip() for w in words.split(",")}


RULES = {**{room: _may_import(room) for room in ROOMS}, **LOOSE_RULES}


def test_the_tree_is_rooms_and_a_few_loose_modules():
    assert {"data", "prepare", "mining", "stats", "explain", "comparison", "engines", "present", "report",
            "cli", "kernels"} <= set(ROOMS)
    assert len([m for m in LOOSE if m != "__init__"]) <= 11, LOOSE  # hooks (issue 31): the notebook views a table calls, registered by the package
    assert set(LOOSE) - UNRULED == set(LOOSE_RULES), "every loose module has its rule in LOOSE_RULES"


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_says_what_it_holds_and_holds_nothing_else(room):
    """A subpackage's ``__init__`` is its docstring only (what it holds, what it may import): the
    code lives in its modules, imported by their full names."""
    tree = MODULES[room]
    assert len(tree.body) == 1 and ast.get_docstring(tree), f"divergence/{room}/__init__.py holds code"
    assert _may_import(room) <= set(RULES), (room, _may_import(room) - set(RULES))
    modules = {name.split(".", 1)[1] for name in MODULES if name.startswith(room + ".")}
    named = set(re.findall(r"``(\w+)``", ast.get_docstring(tree)))
    assert modules <= named, f"{room}'s docstring names every module: {modules - named}"


def test_the_rules_have_no_back_arrow():
    """The rules are layers: no room may import, however indirectly, a room that may import it."""
    cycle = _cycle(RULES)
    assert cycle is None, "the rules go round: " + " -> ".join(cycle)


def test_imports_follow_the_rules():
    broken = sorted({(name, mod) for name, tree in MODULES.items() if name not in UNRULED
                     for mod, _ in _imports(tree, name)
                     if mod in MODULES and _room(mod) != _room(name) and _room(mod) not in RULES[_room(name)]})
    assert not broken, f"(importer, imported) outside the importer's rule: {broken}"


def test_the_rules_catch_a_back_arrow():
    tree = ast.parse("from ..engines.sql import anything\nfrom ..present.formats import format_count")
    taken = {_room(m) for m, _ in _imports(tree, "stats.assess")}
    assert taken == {"engines", "present"} and not taken & RULES["stats"]


@pytest.mark.parametrize("room, never", [
    ("data", {"prepare", "mining", "stats", "table", "scan", "settings"}),  # data is the ground floor
    ("kernels", set(RULES) - {"kernels", "errors"}),  # errors: a bad number of processes is the caller's
    ("mining", {"stats", "explain", "scan", "present", "engines"}),  # it mines; statistics read what it mined
    ("stats", {"explain", "present", "comparison", "engines", "report", "cli", "scan"}),
    ("present", {"mining", "stats", "engines", "scan", "report", "cli"}),  # it shows tables: never the miner
    ("comparison", {"present", "report", "cli", "scan"}),
    ("explain", {"present", "comparison", "engines", "report", "cli", "scan"}),
    ("engines", {"present", "comparison", "report", "cli", "scan"}),  # they end in mining.mined, then stats.tabulate
])
def test_the_headline_rules(room, never):
    assert not RULES[room] & never, (room, RULES[room] & never)


# ----------------------------------------------------------------------------- module size
#: the most lines a module of the engine or the dashboard may have (issue 46: a room a person can
#: read); a longer one is split along the seams it has, into modules named after what they hold
MAX_MODULE_LINES = 800


def _module_lines() -> dict[str, int]:
    """Lines of every module of ``divergence/`` and ``ui/`` (as ``wc -l`` counts them), by path."""
    root = PACKAGE.parent
    paths = [*PACKAGE.rglob("*.py"), *(root / "ui").rglob("*.py")]
    return {p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(paths)
            if not any(s.startswith(".") for s in p.relative_to(root).parts)}


def test_the_line_count_sees_every_module():
    lines = _module_lines()
    assert {"divergence/stats/assess.py", "divergence/data/io.py", "divergence/__init__.py", "ui/state.py"} <= set(lines)
    assert len(lines) == len(MODULES) + len(list((PACKAGE.parent / "ui").rglob("*.py")))
    text = (PACKAGE / "errors.py").read_text(encoding="utf-8")
    assert lines["divergence/errors.py"] == text.count("\n") + (not text.endswith("\n"))


def test_every_module_is_a_room_a_person_can_read():
    """No module of the engine or the dashboard is over :data:`MAX_MODULE_LINES` lines: none is
    allowed to be, so a module that grows past it is split in the change that grows it."""
    too_long = {path: n for path, n in _module_lines().items() if n > MAX_MODULE_LINES}
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split each along its seams): {too_long}"


# ----------------------------------------------------------------------------- compiled kernels
def _decorated_kernels(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if isinstance(target, ast.Name) and target.id == "kernel":
                    return True
    return False


def test_kernel_sources_are_hashed_into_the_build():
    """Every module with kernels is one whose source the build's stamp hashes, and a kernel
    module takes from the package only the compile helpers and other hashed modules (numba
    freezes the constants a kernel reads into the compiled code)."""
    with_kernels = {name for name, tree in MODULES.items() if _decorated_kernels(tree)}
    assert with_kernels and with_kernels <= set(compiled.KERNEL_MODULES)
    assert set(compiled.KERNEL_MODULES) <= set(MODULES)
    for name in compiled.KERNEL_MODULES:
        taken = {m for m, _ in _imports(MODULES[name], name) if m in MODULES}
        assert taken <= {"kernels.compiled"} | set(compiled.KERNEL_MODULES), (name, taken)


#: the miner: what mines itemsets (the walks over a mined lattice are not it)
MINER = {"mining.mining", "mining.mining_kernel", "mining.mining_driver", "mining.mined", "mining.mlxtend_reference"}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.split(".")[0] in ("stats", "explain"))
                         + ["mining.lattice"])
def test_statistics_never_call_the_miner(name):
    """The statistics read a mined table (and walk its lattice); mining it is the caller's step
    (``scan``, the engines, the comparison), so ``stats`` and ``explain`` never reach the miner."""
    assert not {m for m, _ in _imports(MODULES[name], name)} & MINER


#: words of a statistic: a function of the mining room named with one holds statistics
STATISTIC_WORDS = ("verdict", "strata", "residual", "pair_z", "fisher", "interval", "shrink", "bootstrap_p",
                   "p_value", "baseline", "reference", "majority", "median", "moments")


def test_the_mining_room_holds_no_statistics():
    """No test, interval, verdict, reference model or residual sum is defined under ``mining/``
    (issue 29: they moved to ``stats.verdict_walk`` and the statistics room)."""
    found = [(name, node.name) for name, tree in MODULES.items() if name.split(".")[0] == "mining"
             for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))
             if any(w in node.name.lower() for w in STATISTIC_WORDS)]
    assert not found, found


def test_every_import_of_the_package_resolves():
    """Every relative import (lazy ones inside functions included) names a module that exists: a
    move that misses one fails here, not on the first user who reaches that function."""
    import importlib.util

    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts  # the module's package: parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(parts[:-1])[:len(parts) - node.level]
                name = ".".join(base + ([node.module] if node.module else []))
                if importlib.util.find_spec(name) is None:
                    missing.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {name}")
    assert missing == []


def test_every_label_of_a_vocabulary_word_is_in_the_vocabulary():
    """A mapping from a setting's words (the corrections, the tasks, the replication kinds, the metrics)
    to what people read is written once, in ``divergence/vocabulary.py``: nowhere else in the package,
    the dashboard or its pages; and it labels every word."""
    from divergence import outcome_rules
    from divergence import vocabulary as v

    word_sets = [set(v.CORRECTIONS), set(v.TASKS), set(v.REPLICATION_KINDS), set(v.FAMILIES), set(v.BINNINGS),
                 set(outcome_rules.CLASSIFICATION_METRICS)]
    root = PACKAGE.parent
    found = []
    for path in [*PACKAGE.rglob("*.py"), *(root / "ui").glob("*.py"), *(root / "pages").glob("*.py"), root / "app.py"]:
        if path.name == "vocabulary.py" or not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and node.keys and all(isinstance(k, ast.Constant) for k in node.keys):
                keys = {k.value for k in node.keys}
                texts = [x.value for x in node.values if isinstance(x, ast.Constant) and isinstance(x.value, str)]
                values_text = (len(texts) == len(node.values) and all(len(t.split()) <= 6 for t in texts)  # names,
                               and any(t[:1].isupper() or " " in t for t in texts))  # not sentences nor codes
                if values_text and any(len(keys & words) >= min(3, len(words)) for words in word_sets):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == [], found
    assert set(v.TASK_LABELS) == set(v.TASKS) and set(v.CORRECTION_NAMES) == set(v.CORRECTIONS)
    assert set(v.CORRECTION_CHOICES) == set(v.CORRECTIONS) and set(v.CORRECTION_SHORT) == set(v.CORRECTIONS)
    assert set(v.REPLICATION_LABELS) == set(v.REPLICATION_KINDS) and set(v.BINNING_LABELS) == set(v.BINNINGS)
    assert set(v.METRIC_LABELS) == set(outcome_rules.CLASSIFICATION_METRICS) | set(outcome_rules.REGRESSION_METRICS)


def test_the_dashboard_never_imports_the_miner():
    """ui/ and pages/ reach the engine through the public names, ``present`` and a few helpers;
    never the miner or the compiled kernels."""
    root = PACKAGE.parent
    found = []
    for path in [*(root / "ui").glob("*.py"), *(root / "pages").glob("*.py"), root / "app.py"]:
        for module, _ in _imports(ast.parse(path.read_text(encoding="utf-8")), ""):
            if module.split(".")[0] in ("mining", "kernels"):
                found.append((path.name, module))
    assert found == []


def test_the_templates_ship_with_the_package():
    """The report's page is template files, not modules: an installed package has them only when
    pyproject.toml's package data names them (setuptools copies no other file), and the page
    finds each through the package's loader."""
    import fnmatch
    import tomllib

    from divergence.report.page import _environment

    package_data = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]
    templates = sorted(p for p in PACKAGE.rglob("templates/*") if p.is_file())
    assert {p.name for p in templates} >= {"report.html.j2", "parts.html.j2", "comparison.html.j2", "report.css",
                                           "sort.js"}
    for path in templates:
        package = ".".join(("divergence", *path.parent.parent.relative_to(PACKAGE).parts))
        inside = path.relative_to(path.parent.parent).as_posix()
        assert any(fnmatch.fnmatch(inside, glob) for glob in package_data.get(package, [])), \
            f"{path.relative_to(PACKAGE.parent)} is not in pyproject.toml's package data"
    env = _environment()
    assert sorted(env.list_templates()) == sorted(p.name for p in templates if p.parent.parent.name == "report")
    for name in env.list_templates(extensions=["j2"]):
        env.get_template(name)  # parses

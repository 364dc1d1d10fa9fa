"""The house reads at a glance: imports flow one way (no cycle, lazy imports inside functions
included), no private name is imported from another module, what one module takes from another
is in that module's ``__all__``, and the compiled kernels' source is what their build stamp
hashes."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from divergence import compiled

PACKAGE = Path(__file__).resolve().parents[1] / "divergence"
MODULES = {p.stem: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for p in sorted(PACKAGE.glob("*.py"))}


def _imports(tree: ast.Module):
    """(imported module of the package, names taken) for every import anywhere in the module:
    at the top, inside functions, under ``if TYPE_CHECKING``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                yield node.module.split(".")[0], [a.name for a in node.names]
            elif node.level == 1:  # from . import x
                for a in node.names:
                    yield a.name, []
            elif node.module and node.module.split(".")[0] == "divergence":
                parts = node.module.split(".")
                if len(parts) > 1:
                    yield parts[1], [a.name for a in node.names]
                else:
                    for a in node.names:
                        yield a.name, []
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "divergence" and len(parts) > 1:
                    yield parts[1], []


def _graph() -> dict[str, set[str]]:
    return {name: {m for m, _ in _imports(tree) if m in MODULES and m != name}
            for name, tree in MODULES.items() if name not in ("__init__", "__main__")}


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


def test_no_import_cycle():
    graph = _graph()
    assert len(graph) > 30 and graph["scan"] >= {"mining", "assess"}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_name_crosses_modules():
    bad = [(name, mod, n) for name, tree in MODULES.items() for mod, names in _imports(tree)
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
    assert set(MODULES) - set(declared) <= {"__main__"}, "every module says what it offers"
    missing = sorted({(mod, n, name) for name, tree in MODULES.items() for mod, names in _imports(tree)
                      for n in names if mod in declared and n not in declared[mod]})
    assert not missing, f"(module, name, taken by) not in the module's __all__: {missing}"


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
    for name in compiled.KERNEL_MODULES:
        taken = {m for m, _ in _imports(MODULES[name]) if m in MODULES}
        assert taken <= {"compiled"} | set(compiled.KERNEL_MODULES), (name, taken)


@pytest.mark.parametrize("name", ["stats", "lattice", "fisher", "shrinkage", "assess", "paired", "shapley"])
def test_statistics_do_not_import_the_miner(name):
    assert not {m for m, _ in _imports(MODULES[name])} & {"mining", "mining_kernel", "mining_driver"}

"""The dashboard's support package imports one way: no cycle among ``ui/*.py`` (imports inside
functions included), and the worker process's module imports neither Streamlit nor the rest of ``ui``."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

from conftest import ROOT

UI = ROOT / "ui"


def _ui_imports(path: Path) -> set[str]:
    """The ``ui`` modules a file imports, anywhere in it (``from ui import a``, ``import ui.a``,
    ``from ui.a import x``, and the relative forms)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ui.")}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and not module or node.level == 0 and module == "ui":
                out |= {a.name for a in node.names}
            elif node.level == 1:
                out.add(module.split(".")[0])
            elif module.startswith("ui."):
                out.add(module.split(".")[1])
    return out


def _graph(folder: Path) -> dict[str, set[str]]:
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return {p.stem: _ui_imports(p) & modules - {p.stem} for p in folder.glob("*.py") if p.stem in modules}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def test_the_ui_package_has_no_import_cycle():
    graph = _graph(UI)
    assert {"state", "settings", "data", "cache", "run", "render"} <= set(graph)  # the layout read is the real one
    assert _cycle(graph) is None, f"import cycle in ui/: {' -> '.join(_cycle(graph))}"


def test_a_cycle_is_found_in_function_bodies_too(tmp_path):
    (tmp_path / "a.py").write_text("from ui import b\n")
    (tmp_path / "b.py").write_text("def f():\n    import ui.c as c\n    return c\n")
    (tmp_path / "c.py").write_text("def g():\n    from .a import x\n    return x\n")
    graph = _graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert set(_cycle(graph)) == {"a", "b", "c"}


def _imported(path: Path) -> set[str]:
    """Top-level names of what a module imports (``ui.pool`` as ``ui.pool``)."""
    tree = ast.parse(path.read_text())
    out = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 0:
            out |= {f"{n.module}.{a.name}" for a in n.names} if n.module == "ui" else {n.module or ""}
    return {name if name.startswith("ui.") else name.split(".")[0] for name in out}


def test_the_worker_module_imports_no_streamlit_and_only_the_pool_of_ui():
    imported = _imported(UI / "worker.py")
    assert "streamlit" not in imported
    assert {name for name in imported if name.startswith("ui")} == {"ui.pool"}


def test_the_pool_imports_neither_streamlit_nor_the_engine_nor_ui():
    """Issue 29 point 4: processes, queue and memory limits are generic code of their own."""
    imported = _imported(UI / "pool.py")
    assert not imported & {"streamlit", "divergence", "ui", "pandas", "numpy"}, imported
    assert not {name for name in imported if name.startswith("ui.")}

"""The dashboard's support package imports one way: no cycle among ``ui/*.py`` (imports inside
functions included), and the worker process's module imports neither Streamlit nor the rest of ``ui``."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("name", ["streamlit", "ui"])
def test_the_worker_module_imports_no_streamlit_and_no_other_ui_module(name):
    tree = ast.parse((UI / "worker.py").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert name not in imported

"""The record checks itself (issue 29): every file, test id and module the README and docs name
exists, and so does every entry of the slow-test registry. A move that forgets the docs fails here,
not in a reader's hands."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import FAST_ANYWAY, SLOW

ROOT = Path(__file__).resolve().parents[1]
RECORD = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("requirements*.txt"))]
#: a path under one of the checkout's folders, with an optional test id (``file.py::name``) or glob
PATH = re.compile(r"(?<![\w./-])((?:tests|benchmarks|divergence|docs|ui|pages|\.ci|\.streamlit)/[\w./*-]*[\w*])"
                  r"(::\w+)?")
#: a dotted name of the package in code quotes: ``divergence.stats.assess`` or a name in a module
DOTTED = re.compile(r"`(divergence(?:\.\w+)+)")
#: folders a command makes and git ignores (``artifacts/`` in tests/e2e/.gitignore): cited, not checked in
MADE = {str((ignore.parent / line.strip().strip("/")).relative_to(ROOT))
        for ignore in [*ROOT.glob(".gitignore"), *ROOT.glob("*/.gitignore"), *ROOT.glob("*/*/.gitignore")]
        for line in ignore.read_text().splitlines() if line.strip() and not line.startswith("#") and "*" not in line}


def _defined(path: Path) -> set[str]:
    """Names a module defines or imports at any depth (functions, classes, assignments, imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _missing_path(text: str) -> str | None:
    """Why a cited path (with its test id) does not resolve, or None."""
    m = PATH.fullmatch(text)
    path, test = m.group(1), m.group(2)
    if "*" in path:
        return None if (ROOT / path).parent.is_dir() else "no such folder"
    target = ROOT / path
    if not target.exists():
        return None if path.strip("/") in MADE else "no such file"
    if test and test[2:] not in _defined(target):
        return f"no {test[2:]} in it"
    return None


def _missing_dotted(name: str) -> str | None:
    """Why ``divergence.a.b.c`` names no module, or no name in its module, or None."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:k])
        module = base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"
        if module.exists():
            rest = parts[k:]
            if not rest or rest[0] in _defined(module):
                return None
            return f"no {rest[0]} in {module.relative_to(ROOT)}"
    return "no such module"


def _citations():
    for doc in RECORD:
        for i, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in PATH.finditer(line):
                yield doc, i, "path", m.group(0)
            for m in DOTTED.finditer(line):
                yield doc, i, "dotted", m.group(1)


def test_every_cited_path_and_module_exists():
    broken = []
    for doc, line, kind, text in _citations():
        why = _missing_path(text) if kind == "path" else _missing_dotted(text)
        if why:
            broken.append(f"{doc.relative_to(ROOT)}:{line}: {text} ({why})")
    assert not broken, "\n".join(broken)


def test_the_checker_catches_a_stale_citation():
    assert _missing_path("tests/test_nowhere.py") == "no such file"
    assert _missing_path("tests/test_docs_paths.py::test_nowhere") == "no test_nowhere in it"
    assert _missing_path("tests/test_docs_paths.py::test_every_cited_path_and_module_exists") is None
    assert _missing_dotted("divergence.stats.assess.assess") is None
    assert _missing_dotted("divergence.mining.lattice.walk_verdict") == "no walk_verdict in divergence/mining/lattice.py"


def test_the_docs_cite_no_file_outside_the_checkout():
    """The team's design notes live outside the repository: the docs say what they need themselves."""
    cited = [f"{d.relative_to(ROOT)}:{i}" for d in RECORD
             for i, line in enumerate(d.read_text(encoding="utf-8").splitlines(), 1) if "DESIGN.md" in line]
    assert not cited, cited


@pytest.mark.parametrize("entry", sorted(SLOW) + sorted(FAST_ANYWAY))
def test_every_slow_entry_resolves(entry):
    why = _missing_path(f"tests/{entry}")
    assert why is None, f"registry entry {entry}: {why}"


def test_the_fast_run_keeps_a_dashboard_smoke_run_and_a_compiled_kernel_check():
    assert any(e.startswith("app/") for e in FAST_ANYWAY) and any(e.startswith("kernels/") for e in FAST_ANYWAY)

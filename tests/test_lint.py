"""The code is checked as well as run (issue 29 point 5): ruff's defect rules over the repository and
mypy over the typed modules (pyproject.toml's [tool.ruff] and [tool.mypy] say which)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


def _tool(name: str) -> list[str]:
    exe = shutil.which(name, path=str(ROOT / ".venv" / "bin")) or shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (pip install -r requirements-dev.txt)")
    return [exe]


def test_ruff_finds_no_defect():
    proc = subprocess.run(_tool("ruff") + ["check", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_the_typed_modules_type_check():
    # mypy's own cache folder in this checkout (ignored by git): never shared with another checkout's run
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if "No module named mypy" in proc.stderr:
        pytest.skip("mypy is not installed (pip install -r requirements-dev.txt)")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]

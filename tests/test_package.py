"""The package is installed in the venv the Makefile makes (issue 29, packaging): importable from any
folder, its console script on the venv's path, its metadata and its package data found through the
installed distribution rather than through the checkout being the working folder."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import divergence

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib.metadata as md, importlib.resources as res, divergence
print(divergence.__file__)
print(md.version("divergence"))
print(sorted(p.name for p in res.files("divergence.report").joinpath("templates").iterdir()))
print([e.value for e in md.entry_points(group="console_scripts") if e.name == "divergence"])
import ui.worker  # the dashboard's package, installed with the engine (no Streamlit imported by this one)
print(ui.worker.__file__)
"""


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}


def test_the_package_imports_from_outside_the_checkout(tmp_path):
    p = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=_clean_env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"divergence is not installed in {sys.prefix} (run `make setup`):\n{p.stderr}"
    path, version, templates, scripts, ui_path = p.stdout.splitlines()
    assert Path(path).resolve() == ROOT / "divergence" / "__init__.py"  # this checkout, editable
    assert Path(ui_path).resolve() == ROOT / "ui" / "worker.py"
    assert version == divergence.__version__
    assert "report.html.j2" in templates and "report.css" in templates
    assert scripts == "['divergence.cli.cli:console']"


def test_the_console_script_runs_from_outside_the_checkout(tmp_path):
    script = Path(sys.executable).parent / "divergence"
    assert script.exists(), f"no console script {script} (run `make setup`)"
    p = subprocess.run([str(script), "--help"], cwd=tmp_path, env=_clean_env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: divergence") and "scan" in p.stdout


def test_every_long_install_says_what_it_is_doing_first(tmp_path):
    """issue 32 point 5: pip runs quietly for a minute or more; the Makefile says what is being installed
    and for about how long before each install (read from `make -n`, nothing is run)."""
    import shutil

    if shutil.which("make") is None:
        import pytest

        pytest.skip("make is not installed here")
    venv = tmp_path / "venv"
    for target, words, needs in ((".installed", "installing the packages", "requirements.lock"),
                                 (".installed-dev", "installing the test tools", "requirements-dev.lock"),
                                 (".installed-spark", "installing pyspark", "requirements-spark.lock")):
        p = subprocess.run(["make", "-n", "-B", f"VENV={venv}", f"{venv}/{target}"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        said = next(i for i, line in enumerate(lines) if words in line)
        install = next(i for i, line in enumerate(lines) if "install --require-hashes" in line and needs in line)
        assert said < install, (target, lines)  # said before pip starts, not after


def test_nothing_patches_sys_path():
    """Issue 46 point 5: the dashboard's package is installed with the engine (pyproject.toml), the tests'
    shared helpers are on pytest's ``pythonpath`` (pytest.ini) and a benchmark runs another checkout
    in that checkout's folder or with PYTHONPATH: no file edits ``sys.path``."""
    import re

    edit = re.compile(r"sys\.path\s*(\.\s*(insert|append|extend)\b|\+=|\[[^\]]*\]\s*=)")
    files = [p for p in ROOT.rglob("*.py") if not any(part.startswith(".") or part in ("build", "node_modules")
                                                      for part in p.relative_to(ROOT).parts)]
    assert len(files) > 100
    patched = [f"{p.relative_to(ROOT)}:{n}" for p in files
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if edit.search(line)]
    assert patched == []
    assert edit.search("sys.path" + ".insert(0, str(ROOT))") and edit.search("sys.path" + "[:0] = [here]")
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'include = \[[^\]]*"ui"', pyproject), "pyproject.toml installs the dashboard's package ui"

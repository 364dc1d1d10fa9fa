"""The benchmarks grouped by purpose (issue 29 point 6): speed/, validation/, tools/ and one runner.
Each script imports as it runs (its own folder first on the path, the others reached as it reaches
them) and finds the checkout's root; the runner lists every command docs/performance.md cites."""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p for d in ("speed", "validation", "tools") for p in (BENCH / d).glob("*.py"))
IMPORT = """
import importlib.util, sys
from pathlib import Path
path = Path(sys.argv[1])
spec = importlib.util.spec_from_file_location("benchmark_under_test", path)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module  # as a running script is (dataclasses look their module up)
spec.loader.exec_module(module)
root = getattr(module, "ROOT", None) or getattr(module, "HERE", None)
print("ROOT", root)
"""


def test_the_benchmarks_are_grouped_by_purpose():
    loose = sorted(p.name for p in BENCH.glob("*.py"))
    assert loose == ["run.py"], loose
    assert len(SCRIPTS) >= 25
    names = [p.stem for p in SCRIPTS]
    assert len(names) == len(set(names)), "a script name in two folders would shadow the other on sys.path"


def test_every_benchmark_imports_as_it_runs():
    def load(path: Path):
        # its folder first on the path, as for a running script (its neighbours import as they do then)
        done = subprocess.run([sys.executable, "-c", IMPORT, str(path)], cwd=ROOT, capture_output=True, text=True,
                              timeout=300,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join([str(path.parent), os.environ.get("PYTHONPATH", "")])})
        return path, done

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(load, SCRIPTS))
    for path, done in results:
        rel = path.relative_to(ROOT)
        assert done.returncode == 0, f"{rel}: {done.stderr.strip().splitlines()[-1:]}"
        root = done.stdout.split("ROOT", 1)[1].strip()
        assert root in ("None", str(ROOT)), f"{rel} takes {root} for the checkout"


def test_the_runner_lists_every_command_the_performance_page_cites():
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchmarks_run", BENCH / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    commands = run.cited()
    text = (ROOT / "docs" / "performance.md").read_text()
    assert len(commands) == len({c for _, c in commands}) and len(commands) >= 15
    for heading, command in commands:
        assert (ROOT / command.split()[0]).exists(), command
        assert heading and f"## {heading}" in text or f"### {heading}" in text
    listed = subprocess.run([sys.executable, str(BENCH / "run.py")], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and listed.stdout.count("benchmarks/") == len(commands)
    assert "needs --set OLD" in listed.stdout

"""The benchmarks grouped by purpose (issue 29 point 6): speed/, validation/, tools/ and one runner.
Each script imports as it runs (its own folder first on the path, the others reached as it reaches
them) and finds the checkout's root; the runner lists every command docs/performance.md cites."""
from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


# a script run as a program measures the checkout it lives in (benchmarks/tools/checkout.py), whichever
# divergence the venv has installed; same_outputs.py imports the checkout it is given (--write ROOT)
IMPORTS = re.compile(r"^\s*(from|import) (divergence|ui)\b", re.M)
USES = 'runpy.run_path(str({} / "benchmarks" / "tools" / "checkout.py"))["use_checkout"]({}, __name__)'
AS_PROGRAM = """
import atexit, importlib.util, runpy, sys
atexit.register(lambda: print("DIVERGENCE", importlib.util.find_spec("divergence").origin, flush=True))
script = sys.argv[1]
sys.argv = [script, "--help"]
runpy.run_path(script, run_name="__main__")
"""


def test_every_benchmark_that_imports_the_package_asks_for_its_checkout_first():
    asking = []
    for path in SCRIPTS:
        text = path.read_text(encoding="utf-8")
        first = IMPORTS.search(text)
        if first is None or path.name == "same_outputs.py":
            continue
        calls = [text.find(USES.format(v, v)) for v in ("ROOT", "HERE")]
        call = max(calls)
        assert call >= 0 and call < first.start(), f"{path.relative_to(ROOT)} imports the package before it asks for its checkout"
        asking.append(path.name)
    assert "sim_verdicts.py" in asking and "bench_verdict.py" in asking and len(asking) >= 25


def test_a_benchmark_run_as_a_program_imports_its_checkout_not_another(tmp_path):
    """Another ``divergence`` ahead of this checkout's on the path (an editable install of another
    checkout, or PYTHONPATH): the script starts again with its own checkout first."""
    decoy = tmp_path / "other"
    (decoy / "divergence").mkdir(parents=True)
    (decoy / "divergence" / "__init__.py").write_text('raise ImportError("the other checkout")\n')
    scripts = [BENCH / "validation" / "sim_verdicts.py", BENCH / "speed" / "bench_compare.py"]

    def run(path: Path):
        env = {k: v for k, v in os.environ.items() if k != "DIVERGENCE_BENCHMARK_CHECKOUT"}
        env["PYTHONPATH"] = os.pathsep.join([str(path.parent), str(decoy)])
        return subprocess.run([sys.executable, "-c", AS_PROGRAM, str(path)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, scripts))
    for path, done in zip(scripts, results):
        assert done.returncode == 0 and "usage:" in done.stdout, (path.name, done.stderr[-500:])
        origin = done.stdout.rsplit("DIVERGENCE", 1)[1].strip()
        assert Path(origin) == ROOT / "divergence" / "__init__.py", (path.name, origin)


def test_a_benchmark_loaded_by_another_module_says_which_checkout_to_put_first(tmp_path):
    checkout = runpy.run_path(str(BENCH / "tools" / "checkout.py"))
    other = tmp_path / "elsewhere"
    (other / "divergence").mkdir(parents=True)
    assert not checkout["imported_from"](other)
    with pytest.raises(ImportError, match=f"not from the checkout {other}: run with PYTHONPATH={other}"):
        checkout["use_checkout"](other, "benchmark_under_test")
    assert checkout["imported_from"](ROOT)
    checkout["use_checkout"](ROOT, "__main__")  # this process already imports this checkout: nothing to do


def _verdict_case(prelude: str = "") -> subprocess.CompletedProcess:
    """One case of bench_verdict.py (the built-in data, 0/1 error, support 0.05) in a process of its own."""
    child = runpy.run_path(str(BENCH / "speed" / "bench_verdict.py"))["CHILD"]
    spec = {"data": "demo", "metric": "error", "support": 0.05, "walk": True}
    return subprocess.run([sys.executable, "-c", prelude + child, str(ROOT), json.dumps(spec), str(BENCH / "tools")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_verdict_benchmark_times_the_walk():
    done = _verdict_case()
    assert done.returncode == 0, done.stderr[-800:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["slices"] > 0 and 0 < out["walk"] < out["seconds"], out


def test_the_verdict_benchmark_stops_when_the_walk_is_not_where_it_looks():
    done = _verdict_case("import divergence.stats.verdict_walk as v\ndel v.walk_verdict\n")
    assert done.returncode != 0
    assert "no walk_verdict in divergence.stats.verdict_walk or divergence.mining.lattice" in done.stderr

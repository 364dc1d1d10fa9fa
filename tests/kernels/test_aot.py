"""The compiled kernels (divergence/kernels/compiled.py, built ahead of time by divergence/kernels/_aot.py into
divergence/kernels/_kernels*.so by `make`): the same results as numba's JIT, bit for bit; numba never
imported by an ordinary command-line job; a build made from other sources, or with other numba
or numpy versions, ignored; arguments of the wrong type refused; long kernels called in pieces."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, data_file

from divergence import scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo
from divergence.kernels import compiled
from divergence.kernels.compiled import ArgType, f4, f8, i4, i8
from divergence.mining import lattice, mining_driver
from divergence.stats import fisher, verdict_walk

FRESH = compiled.load_build()[0] is not None
needs_build = pytest.mark.skipif(not FRESH, reason="no fresh ahead-of-time build of the kernels "
                                                   "(`make setup` or `python -m divergence.kernels._aot` builds it)")


@needs_build
@pytest.mark.parametrize("roles", ["classification", "regression"])
def test_scan_identical_with_either_kernels(monkeypatch, roles):
    """A scan with bootstrap (the lattice walks, the verdict's walk for error metrics) and
    replication on a second table (walk_tallies), ahead of time then JIT: identical frames."""
    demo = load_demo()
    first, later = demo.iloc[:6000], demo.iloc[6000:]

    def job():
        return scan(first, attributes=DEMO_ATTRIBUTES, min_support=0.01, bootstrap=40, seed=3,
                    replicate=later, **DEMO_ROLES[roles]).frame

    monkeypatch.setenv("DIVERGENCE_KERNELS", "aot")
    aot = job()
    monkeypatch.setenv("DIVERGENCE_KERNELS", "jit")
    jit = job()
    assert len(aot) > 500
    assert aot.filter(like="boot").notna().any().any()
    pd.testing.assert_frame_equal(aot, jit, check_exact=True)


@needs_build
def test_adult_identical_with_either_kernels(monkeypatch):
    df = pd.read_csv(data_file("adult_discretized.csv"))
    for exhaustive, count in ((True, 32_944), (False, 27_175)):
        frames = []
        for mode in ("aot", "jit"):
            monkeypatch.setenv("DIVERGENCE_KERNELS", mode)
            frames.append(scan(df, target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"],
                               min_support=0.01, exhaustive=exhaustive).frame)
        assert len(frames[0]) == count
        pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)


def test_long_kernels_return_to_python_often(monkeypatch):
    """The miner, the lattice walks and Fisher's test run a quota of work per call (the
    ahead-of-time functions hold the GIL while they run): many calls on a large job, and the
    same result however small the quota."""
    rng = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame({f"a{j}": rng.integers(0, k, n) for j, k in enumerate((3, 4, 2, 5, 3, 4))})
    df["y"] = rng.integers(0, 2, n)
    df["p"] = np.where(rng.random(n) < 0.8, df["y"], 1 - df["y"])
    roles = dict(target="y", prediction="p", positive=1, metrics=["error", "fpr"], min_support=0.002,
                 exhaustive=True, bootstrap=20, holdout=0.3)
    whole = scan(df, **roles).frame
    calls = {"mine": 0, "walk": 0, "fisher": 0}

    def counted(name, fn):
        def call(*args):
            calls[name] += 1
            return fn(*args)
        return call

    monkeypatch.setattr(mining_driver, "QUOTA", 2_000)
    # the miner's step for 32-bit codes and its copy for 8-bit ones (every attribute here has at most 127 items)
    monkeypatch.setattr(mining_driver, "mine_step", counted("mine", mining_driver.mine_step))
    monkeypatch.setattr(mining_driver, "mine_step8", counted("mine", mining_driver.mine_step8))
    monkeypatch.setattr(lattice, "QUOTA", 2_000)
    for module, step in ((lattice, "_tallies_step"), (lattice, "_boot_step"),
                         (verdict_walk, "_verdict_rows_step"), (verdict_walk, "_verdict_counts_step")):
        monkeypatch.setattr(module, step, counted("walk", getattr(module, step)))
    monkeypatch.setattr(fisher, "CHUNK", 100)
    monkeypatch.setattr(fisher, "_fisher_many", counted("fisher", fisher._fisher_many))
    pieces = scan(df, **roles).frame
    assert len(whole) > 2000
    assert calls["mine"] > 50 and calls["walk"] > 50 and calls["fisher"] > 10, calls
    pd.testing.assert_frame_equal(whole, pieces, check_exact=True)


def test_arguments_are_checked_against_the_signature():
    """A kernel takes exactly its declared types: an array of another dtype or layout is refused
    (numba's ahead-of-time wrapper would read its bytes as the declared type), a scalar is
    converted without loss."""
    parent = np.array([-1, 0, 0, 1, 2, 1], dtype=np.int64)
    np.testing.assert_array_equal(lattice._preorder(parent), [0, 1, 3, 5, 2, 4])
    with pytest.raises(TypeError, match=r"_preorder, argument 1: expected i8\[::1\].*int32"):
        lattice._preorder(parent.astype(np.int32))
    with pytest.raises(TypeError, match="contiguous"):
        lattice._preorder(np.repeat(parent, 2)[::2])
    with pytest.raises(TypeError, match="takes 1 arguments"):
        lattice._preorder(parent, parent)
    assert i8.check(np.int32(3)) == 3 and f8.check(2) == 2.0
    with pytest.raises(TypeError):
        i8.check(2.5)
    with pytest.raises(TypeError):
        f4[:, ::1].check(np.zeros((2, 2)))
    assert (i4[::1, :].layout, i4[::1, :].ndim) == ("F", 2)
    assert (f8[:, ::1].layout, repr(f8[:, ::1])) == ("C", "f8[:, ::1]")
    assert isinstance(i8[::1], ArgType) and i8[::1] == ArgType("i8", (slice(None, None, 1),))


def _package_copy(tmp_path: Path) -> Path:
    """The package, its build and its stamp, copied into ``tmp_path``."""
    dest = tmp_path / "divergence"
    shutil.copytree(ROOT / "divergence", dest, ignore=shutil.ignore_patterns("__pycache__", ".aot-build-*"))
    return tmp_path


def test_stale_when_sources_or_versions_differ(tmp_path, monkeypatch):
    """The stamp records what a build was made from; any difference makes it stale, and the
    line saying so names it."""
    package = tmp_path / "divergence"
    folder = package / "kernels"
    folder.mkdir(parents=True)
    for name in compiled.KERNEL_MODULES:
        path = Path(*name.split(".")).with_suffix(".py")
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "divergence" / path, package / path)
    (folder / "_kernels.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    monkeypatch.setattr(compiled, "HERE", folder)
    monkeypatch.setattr(compiled, "PACKAGE", package)
    # the empty file stands for a build: loading it is not what this test is about
    monkeypatch.setattr(compiled, "importlib", types.SimpleNamespace(import_module=types.ModuleType))
    now = compiled.build_identity()
    (folder / compiled.STAMP).write_text(json.dumps(dict(now, target="host")))
    assert "is fresh" in compiled._find_build()[1]
    for key, value in (("numba", "0.1.0"), ("numpy", "1.0.0"), ("python", "cpython-39"), ("cpu", "other")):
        (folder / compiled.STAMP).write_text(json.dumps(dict(now, target="host", **{key: value})))
        module, why = compiled._find_build()
        assert module is None and "stale" in why and key in why, why
    # a build for any CPU of the architecture does not depend on the CPU
    (folder / compiled.STAMP).write_text(json.dumps(dict(now, target="generic", cpu="other")))
    assert "is fresh" in compiled._find_build()[1]
    (folder / compiled.STAMP).write_text(json.dumps(dict(now, target="host")))
    with open(package / "mining" / "lattice.py", "a", encoding="utf-8") as fh:
        fh.write("# an edit\n")
    assert compiled.build_identity()["sources"] != now["sources"]
    module, why = compiled._find_build()
    assert module is None and "sources changed" in why


_CHILD = r"""
import json, sys
import numpy as np
from divergence.kernels import compiled
from divergence.stats.fisher import fisher_exact_p
rng = np.random.default_rng(0)
n = rng.integers(1, 900, 3000).astype(float)
p = fisher_exact_p(np.floor(n * rng.random(3000)), n, 300.0, 1000.0)
np.save(sys.argv[1], p)
print(json.dumps({"status": compiled.build_status(), "numba": "numba" in sys.modules, "file": compiled.__file__}))
"""


def _child(root: Path, out: Path) -> tuple[dict, np.ndarray]:
    env = {k: v for k, v in os.environ.items() if k not in ("DIVERGENCE_KERNELS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(root)
    run = subprocess.run([sys.executable, "-c", _CHILD, str(out)], capture_output=True, text=True, cwd=root,
                         env=env, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1]), np.load(out)


@needs_build
def test_stale_build_falls_back_to_the_jit(tmp_path):
    """A fresh build runs without importing numba; once a kernel module differs from the build
    (an edit), the build is ignored and numba's JIT gives the same values."""
    root = _package_copy(tmp_path)
    fresh, a = _child(root, tmp_path / "fresh.npy")
    assert fresh["file"].startswith(str(root))
    with open(root / "divergence" / "stats" / "fisher.py", "a", encoding="utf-8") as fh:
        fh.write("# an edit since the build\n")
    stale, b = _child(root, tmp_path / "stale.npy")
    assert "is fresh" in fresh["status"] and not fresh["numba"]
    assert "stale (sources changed)" in stale["status"] and stale["numba"]
    assert np.isfinite(a).sum() > 2000
    np.testing.assert_array_equal(a, b)


JOBS = {
    "rates": ["--target", "class", "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr",
              "--min-support", "0.05"],
    "error, bootstrap, holdout": ["--target", "class", "--prediction", "predicted", "--positive", "1",
                                  "--metric", "error,fpr", "--min-support", "0.05", "--bootstrap", "50",
                                  "--holdout", "0.3"],
    "regression": ["--regression", "--target", "class", "--prediction", "predicted", "--metric",
                   "abs_error,squared_error", "--min-support", "0.05", "--attributes", "age,sex,race"],
}


@needs_build
@pytest.mark.parametrize("job", list(JOBS))
def test_command_line_never_imports_numba(tmp_path, job):
    """Every kernel of an ordinary command-line job is in the build: the miner, Fisher's test,
    the verdict's walk (error metrics), the bootstrap's walk, the replication's walk."""
    out = tmp_path / "out.csv"
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "divergence", "scan",
                          str(data_file("compas_discretized.csv")), *JOBS[job], "--output", str(out)],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert len(pd.read_csv(out)) > 20
    assert not re.search(r"\|\s+numba(\.|\s*$)", run.stderr, flags=re.M)


def test_build_says_what_it_is_doing(monkeypatch, capsys, tmp_path):
    """`python -m divergence.kernels._aot --host` (what `make` runs) says before the minute-long build what
    it builds, why, how long it usually takes and that a failure falls back to the JIT; after it,
    the seconds it took (or, on a failure, the seconds and the fallback)."""
    from divergence.kernels import _aot

    built = tmp_path / "_kernels.so"
    monkeypatch.setattr(_aot, "build", lambda target_cpu="": built)
    assert _aot.main(["--host"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3
    assert "ahead of time" in out[0] and "this CPU" in out[0] and "1-2 minutes" in out[0] and "JIT" in out[0]
    assert out[1].startswith("  (now: ") and ("fresh" in out[1] or "stale" in out[1] or "no ahead" in out[1])
    assert re.fullmatch(rf"built {re.escape(str(built))} in \d+ s", out[2])

    def fails(target_cpu=""):
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(_aot, "build", fails)
    assert _aot.main([]) == 1
    captured = capsys.readouterr()
    assert "any CPU of this kind" in captured.out
    assert re.search(r"not built after \d+ s \(RuntimeError: no C compiler\); numba's JIT", captured.err)
    # --check is unchanged: one line, the build's status, nothing built
    assert _aot.main(["--check"]) in (0, 1)
    assert capsys.readouterr().out.strip() == compiled.build_status()


def test_pycc_is_still_only_pending_deprecation():
    """The trigger of docs/kernels.md's plan: numba's `pycc` (behind the ahead-of-time build)
    warns of a *pending* deprecation (since numba 0.57; 0.68.1 pinned). numba's schedule: a
    NumbaDeprecationWarning once its replacement exists, then at least two releases before
    removal. This fails the day an upgrade of numba turns the warning into a deprecation: then
    move to the plan's next step (docs/kernels.md)."""
    import importlib
    import warnings

    numba_errors = pytest.importorskip("numba.core.errors")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numba.pycc

        importlib.reload(numba.pycc)
    kinds = {type(w.message) for w in caught if "pycc" in str(w.message)}
    assert numba_errors.NumbaDeprecationWarning not in kinds, "numba now deprecates pycc: see docs/kernels.md"
    assert numba_errors.NumbaPendingDeprecationWarning in kinds


def test_a_cold_jit_says_what_it_is_doing_once(monkeypatch, tmp_path):
    """A process about to compile a kernel it has no cache of says so on stderr, once; with the
    cache there it says nothing."""
    import io
    from types import SimpleNamespace

    from divergence.kernels import compiled

    def dispatcher(index):
        return SimpleNamespace(_cache=SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index))))

    monkeypatch.setattr(compiled, "_SAID", [])
    (tmp_path / "warm.nbi").write_text("")
    out = io.StringIO()
    assert not compiled.say_compiling(dispatcher(tmp_path / "warm.nbi"), out) and out.getvalue() == ""
    assert compiled.say_compiling(dispatcher(tmp_path / "cold.nbi"), out)
    assert not compiled.say_compiling(dispatcher(tmp_path / "cold2.nbi"), out)  # once per process
    assert out.getvalue().count("compiling the kernels") == 1 and out.getvalue().endswith("ahead of time)\n")
    # another numba's cache layout: silent, never an error
    monkeypatch.setattr(compiled, "_SAID", [])
    assert not compiled.say_compiling(SimpleNamespace(), out)


def test_builds_never_touch_each_other(monkeypatch, tmp_path):
    """Issue 32 point 2: pycc's build folder lives in the build's own temporary folder (another build's,
    in the system's temporary folder, is left alone: it used to be removed mid-build), and two builds
    into one folder take turns (a file lock), each installing a whole module."""
    import sys
    import tempfile
    import threading
    import time
    import types

    from divergence.kernels import _aot

    foreign = Path(tempfile.mkdtemp(prefix=f"pycc-build-{compiled.EXTENSION}-"))  # another build's, running
    inside, spans = [], []

    class FakeCC:
        def __init__(self, name):
            self.name, self.output_dir, self.target_cpu = name, None, ""

        def export(self, name, sig):
            return lambda f: f

        def compile(self):
            work = Path(tempfile.mkdtemp(prefix=f"pycc-build-{self.name}-"))  # as pycc does
            inside.append(work.parent == Path(self.output_dir))
            start = time.monotonic()
            time.sleep(0.3)
            (Path(self.output_dir) / f"{self.name}.cpython-test.so").write_bytes(b"module")
            spans.append((start, time.monotonic()))

    monkeypatch.setattr(_aot, "load_numba", lambda: None)
    monkeypatch.setitem(sys.modules, "numba.pycc", types.SimpleNamespace(CC=FakeCC))
    out = tmp_path / "kernels"
    out.mkdir()
    threads = [threading.Thread(target=_aot.build, args=(out,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inside == [True, True] and foreign.is_dir()
    (a0, a1), (b0, b1) = sorted(spans)
    assert a1 <= b0  # one after the other
    assert (out / f"{compiled.EXTENSION}.cpython-test.so").read_bytes() == b"module" and (out / compiled.STAMP).is_file()
    assert not list(out.glob(".aot-build-*")) and tempfile.tempdir != str(out)
    foreign.rmdir()


@pytest.mark.slow
def test_the_statistics_kernels_warmed_beside_a_first_run_are_the_ones_it_calls(tmp_path):
    """A first run without a build compiles the statistics' kernels in a second process
    (``_aot --warm``, divergence.kernels.warm); the run then loads them from numba's cache: every
    warmed kernel it calls is a cache hit (the declared types are the calls' types), none compiled
    again."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), DIVERGENCE_KERNELS="jit", DIVERGENCE_WARM="0")
    done = subprocess.run([sys.executable, "-m", "divergence.kernels._aot", "--warm"], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    job = textwrap.dedent("""
        import json
        from divergence import scan
        from divergence.data.datasets import DEMO_ROLES, load_demo
        from divergence.kernels.compiled import REGISTRY
        from divergence.kernels.warm import WARMED
        scan(load_demo(), **DEMO_ROLES["regression"], min_support=0.05, bootstrap=50)
        called = {k: v._jit.stats for k, v in REGISTRY.items() if v._jit is not None
                  and k.startswith(tuple(f"divergence.{m}." for m in WARMED))}
        print(json.dumps({k: [len(s.cache_hits), len(s.cache_misses)] for k, s in called.items()}))
    """)
    done = subprocess.run([sys.executable, "-c", job], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    called = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(called) >= 4, called  # the lattice walks, Fisher's test, the verdict walk
    assert all(hits >= 1 and misses == 0 for hits, misses in called.values()), called

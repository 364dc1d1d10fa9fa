"""The ahead-of-time kernels (divergence/_kernels*.so, built by `make`): the same results as
numba's JIT, bit for bit, numba never imported for an ordinary job, and a stale build ignored."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from divergence import _aot, lattice, mining, scan, stats
from divergence.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

from conftest import ROOT, data_file

FRESH = _aot._load() is not None
needs_build = pytest.mark.skipif(not FRESH, reason="no fresh ahead-of-time build of the kernels "
                                                   "(`make setup` or `python -m divergence._aot` builds it)")


def _frames(monkeypatch, mode: str, job) -> pd.DataFrame:
    monkeypatch.setenv("DIVERGENCE_KERNELS", mode)
    return job()


@needs_build
@pytest.mark.parametrize("roles", ["classification", "regression"])
def test_scan_identical_with_either_kernels(monkeypatch, roles):
    """A scan with bootstrap (the lattice walks, a median baseline for abs_error) and
    replication on a second table (walk_tallies), ahead of time then JIT: identical frames."""
    demo = load_demo()
    first, later = demo.iloc[:6000], demo.iloc[6000:]

    def job():
        return scan(first, attributes=DEMO_ATTRIBUTES, min_support=0.01, bootstrap=40, seed=3,
                    replicate=later, **DEMO_ROLES[roles]).frame

    aot = _frames(monkeypatch, "aot", job)
    jit = _frames(monkeypatch, "jit", job)
    assert len(aot) > 500
    assert aot.filter(like="boot").notna().any().any()
    pd.testing.assert_frame_equal(aot, jit, check_exact=True)


@needs_build
def test_adult_identical_with_either_kernels(monkeypatch):
    df = pd.read_csv(data_file("adult_discretized.csv"))

    def job():
        return scan(df, target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"],
                    min_support=0.01, exhaustive=exhaustive).frame

    for exhaustive, count in ((True, 32_944), (False, 27_175)):
        aot = _frames(monkeypatch, "aot", job)
        jit = _frames(monkeypatch, "jit", job)
        assert len(aot) == count
        pd.testing.assert_frame_equal(aot, jit, check_exact=True)


@needs_build
def test_large_jobs_on_jit_threads_identical(monkeypatch):
    """Above the thresholds the miner and Fisher's test run numba's JIT on threads: the same
    itemsets, tallies and p-values as the ahead-of-time kernels on one thread."""
    rng = np.random.default_rng(5)
    codes = np.column_stack([rng.integers(0, k, 4000) for k in (3, 4, 2, 5, 3, 4)]).astype(np.int32)
    w = np.column_stack([np.ones(4000), rng.random(4000), rng.random(4000) ** 2])
    nv = np.array([3, 4, 2, 5, 3, 4])
    monkeypatch.setenv("DIVERGENCE_THREADS", "2")
    monkeypatch.setenv("DIVERGENCE_KERNELS", "aot")
    one = mining.mine(codes, w, nv, min_support=0.002, exhaustive=True)
    monkeypatch.setenv("DIVERGENCE_KERNELS", "auto")
    monkeypatch.setattr(mining, "JIT_MIN_ROWS", 0)
    assert mining._mine_step.pick(large=True)[1]  # the JIT, releasing the GIL
    many = mining.mine(codes, w, nv, min_support=0.002, exhaustive=True)
    assert len(one.codes) > 1000
    for a, b in ((one.codes, many.codes), (one.parent, many.parent), (one.tallies, many.tallies)):
        np.testing.assert_array_equal(a, b)
    n = rng.integers(1, 3000, 50_000).astype(float)
    x = np.floor(n * rng.random(50_000))
    monkeypatch.setenv("DIVERGENCE_KERNELS", "aot")
    p1 = stats.fisher_exact_p(x, n, 1234.0, 5000.0)
    monkeypatch.setenv("DIVERGENCE_KERNELS", "auto")
    monkeypatch.setattr(stats, "FISHER_JIT_MIN", 0)
    p2 = stats.fisher_exact_p(x, n, 1234.0, 5000.0)
    np.testing.assert_array_equal(p1, p2)


def test_kernel_hash_follows_code_and_constants(monkeypatch):
    """Any edit of a kernel, or of a module constant frozen into one, changes the build's hash."""
    before = _aot.source_hash()
    assert before == _aot.source_hash()
    monkeypatch.setattr(mining, "S_WORK", mining.S_WORK + 100)
    assert _aot.source_hash() != before
    monkeypatch.undo()
    k = mining._root_tallies
    monkeypatch.setattr(k.py_func, "__code__", k.py_func.__code__.replace(co_consts=k.py_func.__code__.co_consts + ("x",)))
    assert _aot.source_hash() != before
    monkeypatch.undo()
    assert _aot.source_hash() == before


def test_other_argument_types_go_to_the_jit():
    """The build takes only its own types; anything that would lose value (float64 Poisson
    weights, int32 parents) is handed to the JIT, with the same answer."""
    parent = np.array([-1, 0, 0, 1, 2, 1], dtype=np.int64)
    order = lattice._preorder(parent)
    np.testing.assert_array_equal(order, [0, 1, 3, 5, 2, 4])
    np.testing.assert_array_equal(lattice._preorder(parent.astype(np.int32)), order)
    with pytest.raises(_aot._Mismatch):
        _aot._converter("f4", 2, "C")(np.zeros((2, 2)))
    assert _aot._converter("f8", 1, "C")(np.arange(3, dtype=np.int32)).dtype == np.float64
    assert _aot._parse("i4[::1, :], f8, b1[::1]") == [("i4", 2, "F"), ("f8", 0, ""), ("b1", 1, "C")]


_CHILD = r"""
import json, sys
import pandas as pd
import divergence.mining as m
from divergence import _aot, scan
from divergence.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo
if sys.argv[1] == "stale":  # an edit of a kernel since the build: an unused constant more
    k = m._root_tallies
    k.py_func.__code__ = k.py_func.__code__.replace(co_consts=k.py_func.__code__.co_consts + ("edited",))
t = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.02, bootstrap=20, **DEMO_ROLES["regression"])
t.frame.to_pickle(sys.argv[2])
print(json.dumps({"status": _aot.status(), "numba": "numba" in sys.modules}))
"""


def _child(tmp_path, kind: str) -> tuple[dict, pd.DataFrame]:
    out = tmp_path / f"{kind}.pkl"
    env = {k: v for k, v in __import__("os").environ.items() if k != "DIVERGENCE_KERNELS"}
    run = subprocess.run([sys.executable, "-c", _CHILD, kind, str(out)], capture_output=True, text=True,
                         cwd=ROOT, env=env, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1]), pd.read_pickle(out)


@needs_build
def test_stale_build_falls_back_to_the_jit(tmp_path):
    """A fresh build runs without importing numba; once a kernel differs from the build, the
    build is ignored and numba's JIT gives the same frame."""
    fresh, a = _child(tmp_path, "fresh")
    stale, b = _child(tmp_path, "stale")
    assert "is fresh" in fresh["status"] and not fresh["numba"]
    assert "stale" in stale["status"] and stale["numba"]
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@needs_build
def test_command_line_never_imports_numba(tmp_path):
    out = tmp_path / "out.csv"
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "divergence", "scan",
                          str(data_file("compas_discretized.csv")), "--target", "class",
                          "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr",
                          "--min-support", "0.05", "--output", str(out)],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert len(pd.read_csv(out)) > 100
    assert not re.search(r"\|\s+numba(\.|\s*$)", run.stderr, flags=re.M)

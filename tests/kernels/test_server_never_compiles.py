"""Issue 47 N9: the dashboard's server never compiles a kernel. It measures a typed slice itself
(``measure_slice`` calls Fisher's test kernel): without the ahead-of-time build that call imported numba
and compiled in the server (16 s on a loaded machine: benchmarks/speed/bench_server_kernels.py). After
``never_compile_here`` a kernel runs from the build or as Python, with the same p-values."""
from __future__ import annotations

from unittest.mock import MagicMock

import numpy as np
import pytest

import divergence
from divergence.data.datasets import DEMO_ROLES, load_demo
from divergence.kernels import compiled

TYPED = ["region=South", "channel=App", "education=Primary", "sex=Female"]  # longer than mined: measured


@pytest.fixture(scope="module")
def demo():
    df = load_demo(4000)
    return df, divergence.scan(df, **dict(DEMO_ROLES["classification"], metrics=["fpr", "fnr"]))


def _p(table, df):
    m = divergence.measure_slice(table, TYPED, data=df)
    return np.array([m.table.frame[c].iloc[-1] for c in ("fpr_p", "fnr_p", "fpr_q")], dtype=float)


def test_a_process_that_never_compiles_measures_a_typed_slice_without_numba(demo, monkeypatch):
    df, table = demo
    expected = _p(table, df)  # with the build (or the JIT)

    def no_numba():
        raise AssertionError("numba was asked for in a process that never compiles")

    monkeypatch.setenv("DIVERGENCE_KERNELS", "jit")  # as without the build
    monkeypatch.setattr(compiled, "load_numba", no_numba)
    monkeypatch.setattr(compiled, "_INTERPRET", [])
    for k in compiled.REGISTRY.values():  # no dispatcher made earlier in this process may serve
        monkeypatch.setattr(k, "_jit", None)
    assert compiled.compiles_here()
    compiled.never_compile_here()
    assert not compiled.compiles_here()
    got = _p(table, df)
    assert np.isfinite(expected).all() and np.allclose(got, expected, rtol=1e-9, atol=0)


def test_the_server_sets_it_and_apptest_does_not(monkeypatch):
    from streamlit import runtime

    from ui.dashboard import server_never_compiles

    monkeypatch.setattr(compiled, "_INTERPRET", [])
    assert server_never_compiles() is False and compiled.compiles_here()  # a test: no runtime
    # AppTest's runtime is a stand-in (a mock with the Runtime class's spec): its process runs the tests'
    # scans too, which keep the compiled kernels (set there, every later test ran the kernels as Python)
    monkeypatch.setattr(runtime.Runtime, "_instance", MagicMock(spec=runtime.Runtime))
    assert runtime.exists() and server_never_compiles() is False and compiled.compiles_here()
    monkeypatch.setattr(runtime.Runtime, "_instance", object.__new__(runtime.Runtime))  # the server's own
    assert server_never_compiles() is True and not compiled.compiles_here()

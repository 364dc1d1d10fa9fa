"""The shrinkage computed for speed gives the floats of its plain formulas, to the last bit: the
increments from each parent's terms computed once against the formula at each (slice, parent) pair."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.stats.shrinkage import _increments, _parent_terms


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the bit, NaN where NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nan = np.isnan(a)
    return a.shape == b.shape and np.array_equal(nan, np.isnan(b)) and np.array_equal(
        a[~nan].view(np.uint64), b[~nan].view(np.uint64))


def _increment(n_s, mean_s, var_s, n_j, mean_j, var_j, binary, base, parent_shrunk):
    """A slice's increment over its parent's shrunk divergence, at each (slice, parent) pair (the
    formula before the parents' terms)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        n_0, mean_0 = base
        raw_j = mean_j - mean_0
        f = np.where(raw_j != 0, np.asarray(parent_shrunk, dtype=float) / np.where(raw_j != 0, raw_j, 1.0), 1.0)
        f = np.clip(np.where(np.isfinite(f), f, 1.0), 0.0, 1.0)
        d = mean_s - f * mean_j - (1.0 - f) * mean_0
        inv = lambda m: 1.0 / np.where(m > 0, m, np.nan)  # noqa: E731
        share = np.maximum(inv(n_s) - f * (2.0 - f) * inv(n_j) - (1.0 - f) ** 2 / n_0, 0.0)
        if binary:
            sigma2 = mean_j * (1.0 - mean_j)
        else:
            sigma2 = np.fmax(np.where(np.isfinite(var_s), var_s, var_j), var_j)
        se = np.sqrt(sigma2 * share)
    d = np.where(n_s >= n_j, 0.0, d)
    se = np.where(n_s >= n_j, 0.0, se)
    return d, se


@pytest.mark.parametrize("binary", [True, False])
def test_increments_from_the_parents_terms_are_the_formulas(binary):
    rng = np.random.default_rng(3)
    items = 500
    n = rng.integers(0, 400, items).astype(float)
    n[0] = 5_000.0
    n[1:20] = 0.0
    n[20:30] = 1.0
    s = np.where(binary, np.rint(n * rng.random(items)), n * rng.normal(0.3, 1.0, items))
    q = np.where(binary, s, s * s / np.maximum(n, 1.0) + n * rng.random(items))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)
        var = np.where(n > 1, np.maximum(q - s * mean, 0.0) / np.maximum(n - 1.0, 1.0), np.nan)
    shrunk = np.where(rng.random(items) < 0.3, 0.0, (mean - mean[0]) * rng.uniform(-0.2, 1.3, items))
    shrunk[30:40] = np.nan
    shrunk[0] = 0.0
    mean[40:45] = mean[0]  # a parent whose raw divergence is 0
    rows = np.arange(100, items)
    parents = rng.integers(-1, 100, (rows.size, 3))
    p = np.maximum(parents, 0)
    terms = np.empty((6, items))
    _parent_terms(terms, np.zeros(1, dtype=np.int64), n, mean, shrunk, binary)
    _parent_terms(terms, np.arange(1, 100), n, mean, shrunk, binary)
    me = rows[:, None]
    d, se = _increments(n[me], mean[me], var[me] if not binary else None, p, terms, var, binary)
    d0, se0 = _increment(n[me], mean[me], var[me], n[p], mean[p], var[p], binary, (n[0], mean[0]), shrunk[p])
    assert _same(d, d0) and _same(se, se0)

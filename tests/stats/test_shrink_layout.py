"""The shrinkage computed for speed gives the floats of its plain formulas, to the last bit: the
posterior with the prior's components as rows (each operation along a row of slices) against a
row per slice, the sums over components in numpy's order, and the increments (from each parent's
terms computed once) and the nearest parent, in one compiled pass, against the formula at every
(slice, parent) pair at once and numpy's argmin."""
from __future__ import annotations

import numpy as np
import pytest

from divergence.stats import shrinkage
from divergence.stats.shrinkage import _component_sums, _parent_terms, shrink
from divergence.stats.shrinkage_kernel import nearest_parents


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the bit, NaN where NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nan = np.isnan(a)
    return a.shape == b.shape and np.array_equal(nan, np.isnan(b)) and np.array_equal(
        a[~nan].view(np.uint64), b[~nan].view(np.uint64))


def _row_likelihood(x, v, scales2):
    """The likelihood with a row per estimate (the shrinkage's formula before the columns)."""
    total = v[:, None] + scales2[None, :]
    loglik = -0.5 * (np.log(total) + x[:, None] ** 2 / total)
    loglik -= loglik.max(axis=1, keepdims=True)
    return np.exp(loglik)


def _row_shrink(estimate, se, null_pseudocount=shrinkage.NULL_PSEUDOCOUNT):
    """:func:`shrink` with a row per slice, as it was computed before the columns."""
    est, s = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    out = np.full(est.shape, np.nan)
    exact = np.isfinite(est) & (s == 0)
    out[exact] = est[exact]
    ok = np.isfinite(est) & np.isfinite(s) & (s > 0)
    if not ok.any():
        return out
    x, v = est[ok], s[ok] ** 2
    scales2 = shrinkage.prior_scales(x, v)  # the grid is the same in both layouts: only the sums differ
    fit = np.arange(x.size)
    if x.size > shrinkage.FIT_MAX:
        fit = np.sort(np.random.default_rng(0).choice(x.size, shrinkage.FIT_MAX, replace=False))
    w = shrinkage._fit_weights(_row_likelihood(x[fit], v[fit], scales2), 100, 1e-4, null_pseudocount)
    post = _row_likelihood(x, v, scales2) * w[None, :]
    post /= post.sum(axis=1, keepdims=True)
    out[ok] = x * (post * (scales2[None, :] / (v[:, None] + scales2[None, :]))).sum(axis=1)
    return out


@pytest.mark.parametrize("k", [0, 1, 2, 7, 8, 9, 15, 16, 17, 21, 24, 63, 127, 128, 129, 200])
def test_component_sums_are_numpys_row_sums(k):
    rng = np.random.default_rng(k)
    a = rng.random((k, 3001)) * 10.0 ** rng.integers(-12, 12, (k, 3001))
    a[:, :5] = 0.0
    assert _same(_component_sums(a), np.ascontiguousarray(a.T).sum(axis=1))


@pytest.mark.parametrize("size", [1, 40, 2_999, 3_001, 9_000, 20_000])
def test_shrink_by_columns_is_shrink_by_rows(size):
    rng = np.random.default_rng(size)
    se = rng.uniform(0.002, 0.2, size)
    est = rng.normal(0, se) + (rng.random(size) < 0.1) * rng.normal(0, 0.1, size)
    est[::97] = np.nan
    se[5::101] = 0.0
    pseudo = max(shrinkage.NULL_PSEUDOCOUNT, float(np.isfinite(est).sum()))
    assert _same(shrink(est, se, null_pseudocount=pseudo), _row_shrink(est, se, pseudo))


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
def test_nearest_parents_are_the_formulas_and_numpys_argmin(binary):
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
    parents[:5] = -1  # none listed
    p = np.maximum(parents, 0)
    terms = np.empty((6, items))
    _parent_terms(terms, np.zeros(1, dtype=np.int64), n, mean, shrunk, binary)
    _parent_terms(terms, np.arange(1, 100), n, mean, shrunk, binary)
    by_slice = np.full((6, items), 7.0)  # a length's rows together (a mined table's) are read as a slice
    _parent_terms(by_slice, slice(1, 100), n, mean, shrunk, binary)
    assert _same(by_slice[:, 1:100], terms[:, 1:100]) and (by_slice[:, 100:] == 7.0).all()
    me = rows[:, None]
    d, se = _increment(n[me], mean[me], var[me], n[p], mean[p], var[p], binary, (n[0], mean[0]), shrunk[p])
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, np.abs(d) / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.inf))
    z = np.where((parents >= 0) & np.isfinite(d), z, np.inf)
    pick = np.argmin(z, axis=1)
    at = np.arange(rows.size)
    ok = np.isfinite(z[at, pick])
    best_d, best_se, best_parent = np.empty(rows.size), np.empty(rows.size), np.empty(rows.size, dtype=np.int64)
    nearest_parents(rows, parents, n, mean, var, terms, int(binary), best_d, best_se, best_parent)
    assert _same(best_d, np.where(ok, d[at, pick], np.nan))
    assert _same(best_se, np.where(ok, se[at, pick], np.nan))
    assert np.array_equal(best_parent, np.where(ok, parents[at, pick], -1))
    assert ok.sum() > rows.size // 2 and (~ok).sum() > 0 and (best_se == 0).sum() > 0


def test_a_table_of_the_whole_dataset_alone_shrinks_to_zero():
    from divergence.stats.shrinkage import shrink_lattice

    for columns in (0, 3):
        codes = np.full((1, columns), -1, dtype=np.int32)
        out = shrink_lattice(codes, np.array([10.0]), np.array([3.0]), np.array([3.0]), True,
                             lambda c: np.full(len(c), -1), parent=np.array([-1]))
        assert out.tolist() == [0.0]

"""The distinct rows of a table and their tallies from one key per row (pandas' hash
factorization of the mixed radix of the codes) and numpy's counting passes, sorted by their codes:
the order the miner's own merge (:func:`divergence.mining.mining.mine`) gives them, so it has
nothing left to merge or reorder and holds no second copy of them.

The same numbers as the compiled :func:`divergence.prepare.compression.compress_outcomes` followed by
the miner's merge, bit for bit: each group's sums in row order, and the root's tallies (``totals``)
summed over the groups in the order they first appear, as the miner summed them; without growing
tables (every array is allocated once at its size) and in about half the time. Used when a row's
codes fit one int64 key.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .compression import Compressed
from .tallies import COUNT, DEFINED, METRIC0, PER_AUX, PER_METRIC, SQUARES, SUM

__all__ = ["fits_one_key", "group_outcomes", "sorted_distinct", "sequential_sum"]


def fits_one_key(n_values: np.ndarray) -> bool:
    """Whether a row's codes (each from -1 to its attribute's count of items) fit one int64 key."""
    radix = np.asarray(n_values, dtype=np.float64) + 1.0
    return bool(len(radix)) and float(np.log2(radix).sum()) < 62.0


def _multipliers(n_values: np.ndarray) -> np.ndarray:
    n_attr = len(n_values)
    mult = np.ones(n_attr, dtype=np.int64)
    for a in range(n_attr - 2, -1, -1):
        mult[a] = mult[a + 1] * (int(n_values[a + 1]) + 1)
    return mult


def group_outcomes(codes: np.ndarray, n_values: np.ndarray, min_count: float, values: Sequence[np.ndarray],
                   vshift: np.ndarray, aux: Sequence[np.ndarray], tshift: np.ndarray) -> tuple[Compressed, np.ndarray]:
    """Distinct rows (items below ``min_count`` rows dropped to -1) with their summed tallies in the
    layout of :mod:`divergence.prepare.tallies`, sorted by their codes, and the root's tallies (their
    sum in the order the rows first appear); ``values`` one array per metric (NaN where undefined),
    ``aux`` one per auxiliary column. Needs :func:`fits_one_key`."""
    n, n_attr = codes.shape
    mult = _multipliers(n_values)
    group, rows = _groups(codes, mult)
    out_codes = codes[rows]
    sizes = np.bincount(group, minlength=len(rows))
    # items of fewer than min_count rows (counted over the groups) become -1, and the groups they
    # told apart merge: the groups' own rows are grouped again
    pruned = False
    for a in range(n_attr):
        col = out_codes[:, a]
        counts = np.bincount(col + 1, weights=sizes, minlength=int(n_values[a]) + 1)
        dropped = counts < min_count
        dropped[0] = False  # -1 stays -1
        if dropped.any():
            out_codes[:, a] = np.where(dropped[col + 1], -1, col)
            pruned = True
    if pruned:
        merged, rows = _groups(out_codes, mult)
        group = merged[group]
        out_codes = out_codes[rows]
        sizes = np.bincount(group, minlength=len(rows))
    k = len(rows)
    del rows
    # sorted by their codes: group g (numbered as first seen) becomes rank[g]
    order = np.argsort(np.einsum("ij,j->i", out_codes, mult), kind="stable")
    rank = np.empty(k, dtype=np.intp)
    rank[order] = np.arange(k, dtype=np.intp)
    group = rank[group]
    out_codes = out_codes[order]
    sizes = sizes[order]
    del order
    n_met, n_aux = len(values), len(aux)
    weights = np.empty((k, METRIC0 + PER_METRIC * n_met + PER_AUX * n_aux), dtype=np.float64)
    weights[:, COUNT] = sizes
    for m, v in enumerate(values):
        c = METRIC0 + PER_METRIC * m
        defined = ~np.isnan(v)
        x = np.where(defined, v - vshift[m], 0.0)  # an undefined row adds 0.0: the sums of the rows defined
        weights[:, c + DEFINED] = np.bincount(group, weights=defined, minlength=k)
        weights[:, c + SUM] = np.bincount(group, weights=x, minlength=k)
        np.multiply(x, x, out=x)
        weights[:, c + SQUARES] = np.bincount(group, weights=x, minlength=k)
    for j, y in enumerate(aux):
        c = METRIC0 + PER_METRIC * n_met + PER_AUX * j
        x = np.where(np.isnan(y), 0.0, y - tshift[j])
        weights[:, c] = np.bincount(group, weights=x, minlength=k)
        np.multiply(x, x, out=x)
        weights[:, c + 1] = np.bincount(group, weights=x, minlength=k)
    del group
    return Compressed(out_codes, weights, np.empty(0, np.int64)), sequential_sum(weights, rank)


def _groups(codes: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group, numbered in the order the groups first appear, and a row of each group (any:
    a group's rows have the same codes). Grouping the groups again keeps that order: a merged group
    first appears where the first of its groups does."""
    import pandas as pd

    key = np.einsum("ij,j->i", codes, mult)  # the mixed radix of the codes + 1, less sum(mult): one key per distinct row
    group, _ = pd.factorize(key)
    del key
    rows = np.empty(int(group.max(initial=-1)) + 1, dtype=np.intp)
    rows[group] = np.arange(len(group), dtype=np.intp)
    return group, rows


def sequential_sum(weights: np.ndarray, index: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """``weights[index].sum(axis=0)`` with its bits (numpy sums a C-ordered table's rows one after
    the other), a block of rows at a time instead of a copy of the whole table."""
    if weights.shape[1] < 2 or not len(index):  # one column: numpy's sum pairs; a count is exact in any order
        return weights[index].sum(axis=0)
    total = None
    for start in range(0, len(index), block):
        rows = weights[index[start:start + block]]
        if total is not None:
            rows = np.vstack([total[None, :], rows])
        total = rows.sum(axis=0)
    assert total is not None
    return total


def sorted_distinct(codes: np.ndarray) -> bool:
    """Whether the rows of ``codes`` are distinct and sorted by their codes (each row's first differing
    code larger than the row before's): a table the miner's merge would leave as it is."""
    n, n_attr = codes.shape
    if n < 2:
        return True
    if not n_attr:
        return False
    radix = codes.max(axis=0).astype(np.int64) + 2
    if float(np.log2(radix.astype(float)).sum()) >= 62.0:
        return False
    mult = np.ones(n_attr, dtype=np.int64)
    for a in range(n_attr - 2, -1, -1):
        mult[a] = mult[a + 1] * radix[a + 1]
    key = np.einsum("ij,j->i", codes, mult)
    return bool(np.all(key[1:] > key[:-1]))

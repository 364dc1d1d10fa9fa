"""The distinct rows of a table and their tallies from one key per row (pandas' hash
factorization of the mixed radix of the codes) and numpy's counting passes.

The same table as the compiled :func:`divergence.prepare.compression.compress_outcomes`, bit for bit:
the rows in the order they first appear, each group's sums in row order; without its growing tables
(every array is allocated once at its size) and in about half its time. Used when a row's codes fit
one int64 key.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .compression import Compressed
from .tallies import COUNT, DEFINED, METRIC0, PER_AUX, PER_METRIC, SQUARES, SUM

__all__ = ["fits_one_key", "group_outcomes"]


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
                   vshift: np.ndarray, aux: Sequence[np.ndarray], tshift: np.ndarray) -> Compressed:
    """Distinct rows (items below ``min_count`` rows dropped to -1) with their summed tallies in the
    layout of :mod:`divergence.prepare.tallies`, in the order they first appear; ``values`` one array per
    metric (NaN where undefined), ``aux`` one per auxiliary column. Needs :func:`fits_one_key`."""
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
    return Compressed(out_codes, weights, np.empty(0, np.int64))


def _groups(codes: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group, numbered in the order the groups first appear, and a row of each group (any:
    a group's rows have the same codes). Grouping the groups again keeps that order: a merged group
    first appears where the first of its groups does."""
    import pandas as pd

    key = codes @ mult  # the mixed radix of the codes + 1, less sum(mult): one key per distinct row
    group, _ = pd.factorize(key)
    del key
    rows = np.empty(int(group.max(initial=-1)) + 1, dtype=np.intp)
    rows[group] = np.arange(len(group), dtype=np.intp)
    return group, rows

"""The compiled sums the findings' score tests read: per candidate, from its entries (its rows'
tallies in each cell of the model), in one pass and without a candidates-by-cells block."""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import f8, i8, kernel

__all__ = ["sum_rows_by", "binary_score_sums"]


@kernel(i8[::1], i8[::1], f8[::1], f8[:, ::1], f8[:, ::1])
def sum_rows_by(c, h, weights, M, out):
    """``out[c[e]] += weights[e] * M[h[e]]`` for every entry e (zeros of ``M`` skipped: a design's
    columns are mostly 0/1 bits of a cell's pattern)."""
    cols = M.shape[1]
    for e in range(c.shape[0]):
        w = weights[e]
        if w == 0.0:
            continue
        j = c[e]
        r = h[e]
        for col in range(cols):
            m = M[r, col]
            if m != 0.0:
                out[j, col] += w * m


@kernel(i8[::1], i8[::1], f8[:, ::1], f8[::1], f8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[:, ::1])
def binary_score_sums(c, h, t, mu, v, M, N, sums, a):
    """A 0/1 model's score-test sums per candidate, in one pass over its entries (``c``, cell ``h``,
    tallies ``t``: rows, events, squares) with the cells' fitted rates ``mu``, their variances ``v``,
    design ``M`` and rows ``N``: into ``sums`` the rows, events, expected events, the score (events
    less expected), the information and the entries that hold part of their cell only; into ``a``
    the information times the design. Each sum in the entries' order (as ``np.bincount`` adds)."""
    cols = M.shape[1]
    for e in range(c.shape[0]):
        j = c[e]
        r = h[e]
        n = t[e, 0]
        events = np.rint(t[e, 1])
        expected = n * mu[r]
        sums[j, 0] += n
        sums[j, 1] += events
        sums[j, 2] += expected
        sums[j, 3] += events - expected
        w = n * v[r]
        sums[j, 4] += w
        if n < N[r] - 0.5:
            sums[j, 5] += 1.0
        if w == 0.0:
            continue
        for col in range(cols):
            m = M[r, col]
            if m != 0.0:
                a[j, col] += w * m

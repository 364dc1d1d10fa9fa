"""The compiled sum the findings' score tests read most: per candidate, its entries' weights times
a row of a cells-by-columns matrix (the model's design), without a candidates-by-cells block."""
from __future__ import annotations

from ..kernels.compiled import f8, i8, kernel

__all__ = ["sum_rows_by"]


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

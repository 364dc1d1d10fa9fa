"""Walks over the mined lattice with per-row data: each itemset's rows are its parent's rows
filtered by one item, so a depth-first walk visits every itemset at the cost of its parent's
size. Used for what additive tallies cannot give: slice medians, tallies of a second table
(replication) and bootstrap replicates.
"""
from __future__ import annotations

import numpy as np

from .mining import _njit

__all__ = ["walk_order", "walk_tallies", "walk_median_abs", "walk_bootstrap"]


def walk_order(parent: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Depth-first pre-order of the itemsets, with each one's last attribute, value and length."""
    n = len(parent)
    present = codes >= 0
    idx = np.arange(codes.shape[1])
    last_attr = np.where(present, idx, -1).max(axis=1) if codes.shape[1] else np.full(n, -1)
    last_val = np.where(last_attr >= 0, codes[np.arange(n), np.maximum(last_attr, 0)], -1)
    length = present.sum(axis=1)
    order = _preorder(parent.astype(np.int64))
    return order, last_attr.astype(np.int64), last_val.astype(np.int64), length.astype(np.int64)


@_njit(export="i8[::1]")
def _preorder(parent):
    n = parent.shape[0]
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n):
        counts[parent[i] + 1] += 1
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        start[i + 1] = start[i] + counts[i + 1]
    fill = start.copy()
    kids = np.empty(max(n - 1, 0), dtype=np.int64)
    for i in range(1, n):
        p = parent[i]
        kids[fill[p]] = i
        fill[p] += 1
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    stack[0] = 0
    top = 1
    k = 0
    while top > 0:
        top -= 1
        node = stack[top]
        order[k] = node
        k += 1
        # push children in reverse so they are visited in order
        for j in range(start[node + 1] - 1, start[node] - 1, -1):
            stack[top] = kids[j]
            top += 1
    return order[:k]


@_njit
def _filter(rows, lo, hi, row_codes, attr, val, dst, out_lo):
    k = out_lo
    for j in range(lo, hi):
        r = rows[j]
        if row_codes[r, attr] == val:
            dst[k] = r
            k += 1
    return k


@_njit
def _walk_state(row_codes, length):
    """Arena of row lists, one per depth, with the root (every row) at depth 0."""
    n_rows = row_codes.shape[0]
    max_len = 0
    for i in range(length.shape[0]):
        max_len = max(max_len, length[i])
    arena = np.empty(n_rows * (max_len + 1), dtype=np.int32)
    for r in range(n_rows):
        arena[r] = r
    f_lo = np.zeros(max_len + 2, dtype=np.int64)
    f_hi = np.zeros(max_len + 2, dtype=np.int64)
    f_hi[0] = n_rows
    return arena, f_lo, f_hi


@_njit
def _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi):
    """Rows of itemset i (visited in pre-order): its parent's rows with its last item; returns depth."""
    d = length[i]
    if d > 0:
        start = f_hi[d - 1]
        end = _filter(arena, f_lo[d - 1], f_hi[d - 1], row_codes, last_attr[i], last_val[i], arena, start)
        f_lo[d] = start
        f_hi[d] = end
    return d


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], f8[:, ::1]")
def walk_tallies(order, last_attr, last_val, length, row_codes, weights):
    """Per itemset, the sum of ``weights`` over its rows (a table of another dataset's rows)."""
    n_rows = row_codes.shape[0]
    n_items = order.shape[0]
    t = weights.shape[1]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    out = np.zeros((n_items, t), dtype=np.float64)
    for k in range(n_items):
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            for c in range(t):
                out[i, c] += weights[r, c]
    return out


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], f8[::1]")
def walk_median_abs(order, last_attr, last_val, length, row_codes, values):
    """Per itemset, the median of ``values`` over its rows (NaN skipped) and the mean absolute
    deviation from it: the error of the best constant prediction under absolute error."""
    n_rows = row_codes.shape[0]
    n_items = order.shape[0]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    med = np.full(n_items, np.nan)
    mad = np.full(n_items, np.nan)
    buf = np.empty(n_rows, dtype=np.float64)
    for k in range(n_items):
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        m = 0
        for j in range(f_lo[d], f_hi[d]):
            v = values[arena[j]]
            if not np.isnan(v):
                buf[m] = v
                m += 1
        if m == 0:
            continue
        x = np.sort(buf[:m])
        if m % 2 == 1:
            c = x[m // 2]
        else:
            c = 0.5 * (x[m // 2 - 1] + x[m // 2])
        s = 0.0
        for j in range(m):
            s += abs(x[j] - c)
        med[i] = c
        mad[i] = s / m
    return med, mad


@_njit
def _weighted_median_abs(xs, ws, total):
    """Weighted median of sorted xs and the weighted mean absolute deviation from it."""
    half = 0.5 * total
    acc = 0.0
    c = xs[xs.shape[0] - 1]
    for j in range(xs.shape[0]):
        acc += ws[j]
        if acc >= half:
            c = xs[j]
            if acc == half:
                # an even split: any point between this value and the next is a median
                for j2 in range(j + 1, xs.shape[0]):
                    if ws[j2] > 0:
                        c = 0.5 * (xs[j] + xs[j2])
                        break
            break
    s = 0.0
    for j in range(xs.shape[0]):
        s += ws[j] * abs(xs[j] - c)
    return s / total


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], b1[::1], f4[:, ::1], f8[::1], f8[::1], i8")
def walk_bootstrap(order, last_attr, last_val, length, row_codes, wanted, poisson, values,
                   target, baseline_kind):
    """Bootstrap replicates of the flagged itemsets, all from one resample of the rows.

    ``poisson`` (rows x B) holds each row's Poisson(1) weight in each replicate: every
    slice sees its own rows resampled with replacement (the Poisson bootstrap), and the
    whole dataset (itemset 0) uses the same weights, so divergences keep their correlation.
    Returns per itemset and replicate the mean outcome and, when ``baseline_kind`` > 0, the
    error of the slice's own best constant prediction (1 mean, 2 median, 3 majority, 4 base
    rate). NaN for itemsets not flagged or replicates with no defined row.
    """
    n_rows = row_codes.shape[0]
    n_items = order.shape[0]
    b_count = poisson.shape[1]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    means = np.full((n_items, b_count), np.nan)
    bases = np.full((n_items, b_count), np.nan)
    num = np.zeros(b_count)
    den = np.zeros(b_count)
    ty = np.zeros(b_count)
    ty2 = np.zeros(b_count)
    xs = np.empty(n_rows)
    rs = np.empty(n_rows, dtype=np.int64)
    ws = np.empty(n_rows)
    for k in range(n_items):
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        if not wanted[i]:
            continue
        for b in range(b_count):
            num[b] = 0.0
            den[b] = 0.0
            ty[b] = 0.0
            ty2[b] = 0.0
        m = 0
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            v = values[r]
            if np.isnan(v):
                continue
            y = target[r]
            if baseline_kind == 2:
                xs[m] = y
                rs[m] = r
                m += 1
            for b in range(b_count):
                w = poisson[r, b]
                num[b] += w * v
                den[b] += w
                if baseline_kind == 1 or baseline_kind >= 3:
                    ty[b] += w * y
                    ty2[b] += w * y * y
        if baseline_kind == 2 and m > 0:
            perm = np.argsort(xs[:m])
            xs_sorted = xs[:m][perm]
            rows_sorted = rs[:m][perm]
        for b in range(b_count):
            if den[b] <= 0:
                continue
            means[i, b] = num[b] / den[b]
            if baseline_kind == 1:
                mu = ty[b] / den[b]
                bases[i, b] = max(ty2[b] / den[b] - mu * mu, 0.0)
            elif baseline_kind == 3:
                p = ty[b] / den[b]
                bases[i, b] = min(p, 1.0 - p)
            elif baseline_kind == 4:
                p = ty[b] / den[b]
                bases[i, b] = p * (1.0 - p)
            elif baseline_kind == 2 and m > 0:
                for j in range(m):
                    ws[j] = poisson[rows_sorted[j], b]
                bases[i, b] = _weighted_median_abs(xs_sorted, ws[:m], den[b])
    return means, bases

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


@_njit
def _sorted_median(x):
    m = x.shape[0]
    if m % 2 == 1:
        return x[m // 2]
    return 0.5 * (x[m // 2 - 1] + x[m // 2])


@_njit
def _median_without(x, j):
    """Median of sorted ``x`` without its element at position ``j``."""
    m = x.shape[0] - 1
    if m <= 0:
        return np.nan
    k = m // 2
    a = x[k] if k < j else x[k + 1]
    if m % 2 == 1:
        return a
    k0 = k - 1
    b = x[k0] if k0 < j else x[k0 + 1]
    return 0.5 * (a + b)


#: columns of :func:`walk_verdict`'s output
VERDICT_COLUMNS = ("n", "error", "baseline", "psi2", "psi_psi0", "reference", "a1", "a2", "a3", "a4")


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], f8[::1], f8[::1], f8[::1], f8[::1], i8, f8")
def walk_verdict(order, last_attr, last_val, length, row_codes, err, target, pred, psi0, kind, c0):
    """Per itemset, what tells a defect from a hard cohort (see ``divergence.assess``).

    ``err`` is the model's per-row error (NaN: undefined), ``target`` the true value and
    ``pred`` the model's prediction (its score for Brier). ``kind`` is the slice baseline:
    1 mean (squared error), 2 median (absolute error), 3 majority class (0/1 error), 4 base
    rate (Brier). Per itemset the output columns are (see VERDICT_COLUMNS):

    n, the mean error E, the constant baseline's error B (the slice's own best constant), the
    sum of squared influences of R = E/B, psi = (err - R*beta)/B (beta: a row's baseline
    error), the sum of psi times ``psi0`` (the whole dataset's influence of its own ratio),
    the reference error (the model with the slice's own offset removed, leave-one-out) and
    four kind-specific counts for the offset test: mean kinds: sum and sum of squares of the
    residual r = pred - target (and 0, 0); median: rows with r > c0 and r < -c0 (and 0, 0);
    majority: rows predicted 1, of them wrong, rows predicted 0, of them wrong.
    """
    n_rows = row_codes.shape[0]
    n_items = order.shape[0]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    out = np.full((n_items, 10), np.nan)
    ys = np.empty(n_rows)
    rs = np.empty(n_rows)
    es = np.empty(n_rows)
    ps = np.empty(n_rows)
    for k in range(n_items):
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        m = 0
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            e = err[r]
            if np.isnan(e):
                continue
            ys[m] = target[r]
            rs[m] = pred[r] - target[r]
            es[m] = e
            ps[m] = psi0[r]
            m += 1
        if m == 0:
            out[i, 0] = 0.0
            continue
        y = ys[:m]
        # the slice's best constant prediction
        if kind == 2:
            c = _sorted_median(np.sort(y))
        else:
            c = 0.0
            for j in range(m):
                c += y[j]
            c /= m
            if kind == 3:
                c = 1.0 if c > 0.5 else 0.0
        e_sum = 0.0
        b_sum = 0.0
        for j in range(m):
            e_sum += es[j]
            if kind == 2:
                b_sum += abs(y[j] - c)
            elif kind == 3:
                b_sum += 1.0 if y[j] != c else 0.0
            else:
                b_sum += (y[j] - c) * (y[j] - c)
        big_e = e_sum / m
        big_b = b_sum / m
        if kind == 3:
            p1 = 0.0
            for j in range(m):
                p1 += y[j]
            p1 /= m
            big_b = min(p1, 1.0 - p1)
        out[i, 0] = m
        out[i, 1] = big_e
        out[i, 2] = big_b
        if big_b > 0:
            ratio = big_e / big_b
            s2 = 0.0
            s0 = 0.0
            for j in range(m):
                if kind == 2:
                    beta = abs(y[j] - c)
                elif kind == 3:
                    beta = 1.0 if y[j] != c else 0.0
                else:
                    beta = (y[j] - c) * (y[j] - c)
                psi = (es[j] - ratio * beta) / big_b
                s2 += psi * psi
                s0 += psi * ps[j]
            out[i, 3] = s2
            out[i, 4] = s0
        # the reference: the model with the slice's own offset removed, leave-one-out
        if kind == 1 or kind == 4:
            sr = 0.0
            sq = 0.0
            for j in range(m):
                sr += rs[j]
                sq += rs[j] * rs[j]
            if m > 1:
                out[i, 5] = (m / (m - 1.0)) ** 2 * max(sq / m - (sr / m) ** 2, 0.0)
            out[i, 6] = sr
            out[i, 7] = sq
            out[i, 8] = 0.0
            out[i, 9] = 0.0
        elif kind == 2:
            x = np.sort(rs[:m])
            if m > 1:
                tot = 0.0
                for j in range(m):
                    tot += abs(x[j] - _median_without(x, j))
                out[i, 5] = tot / m
            above = 0.0
            below = 0.0
            for j in range(m):
                if x[j] > c0:
                    above += 1.0
                elif x[j] < -c0:
                    below += 1.0
            out[i, 6] = above
            out[i, 7] = below
            out[i, 8] = 0.0
            out[i, 9] = 0.0
        else:
            # confusion counts per predicted class: (ones, zeros) among rows predicted 1 and 0
            n1 = 0.0
            w1 = 0.0
            n0 = 0.0
            w0 = 0.0
            for j in range(m):
                if rs[j] + y[j] > 0.5:  # predicted 1
                    n1 += 1.0
                    if y[j] < 0.5:
                        w1 += 1.0
                else:
                    n0 += 1.0
                    if y[j] > 0.5:
                        w0 += 1.0
            # leave-one-out relabelling: each row gets the majority of the other rows of its cell
            # (the model's own label on a tie)
            loo = 0.0
            right1 = n1 - w1  # predicted 1, truly 1
            if right1 > 0:
                keep = right1 - 1.0 >= w1
                loo += 0.0 if keep else right1
            if w1 > 0:
                keep = right1 >= w1 - 1.0
                loo += w1 if keep else 0.0
            right0 = n0 - w0
            if right0 > 0:
                keep = right0 - 1.0 >= w0
                loo += 0.0 if keep else right0
            if w0 > 0:
                keep = right0 >= w0 - 1.0
                loo += w0 if keep else 0.0
            out[i, 5] = loo / m
            out[i, 6] = n1
            out[i, 7] = w1
            out[i, 8] = n0
            out[i, 9] = w0
    return out

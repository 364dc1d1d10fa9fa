"""Walks over the mined lattice with per-row data: each itemset's rows are its parent's rows
filtered by one item, so a depth-first walk visits every itemset at the cost of its parent's
size. Used for what additive tallies cannot give: slice medians, tallies of a second table
(replication) or of bootstrap weights per distinct row, and the references behind the verdict.
"""
from __future__ import annotations

import numpy as np

from .mining import _njit

__all__ = ["walk_order", "walk_tallies", "walk_median_abs", "walk_verdict"]


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


@_njit
def _loo_median_errors(x, out):
    """out[j] = |x[j] - median of x without x[j]| for every j (x in any order)."""
    m = x.shape[0]
    order = np.argsort(x)
    xs = x[order]
    for jj in range(m):
        out[order[jj]] = abs(xs[jj] - _median_without(xs, jj))


@_njit
def _loo_majority(ones, zeros, y, tie):
    """The class the other rows of a cell hold most (``tie`` on a tie), for a row of class y."""
    o = ones - (1.0 if y > 0.5 else 0.0)
    z = zeros - (0.0 if y > 0.5 else 1.0)
    if o > z:
        return 1.0
    if o < z:
        return 0.0
    return tie


#: columns of :func:`walk_verdict`'s output
VERDICT_COLUMNS = ("n", "error", "baseline", "psi2", "psi_psi0", "achievable", "gap", "gap2", "ach2", "which")


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i8[:, ::1], i8[::1], f8[::1], f8[::1], f8[::1], f8[::1], i8")
def walk_verdict(order, last_attr, last_val, length, row_codes, item_codes, n_values, err, target, pred, psi0, kind):
    """Per itemset, what tells a defect from a hard cohort (see ``divergence.assess``).

    ``err`` is the model's per-row error (NaN: undefined), ``target`` the true value and
    ``pred`` the model's prediction (its score for Brier); ``item_codes`` the itemsets' codes
    (-1: no item on an attribute) and ``n_values`` the items per attribute. ``kind`` is the
    slice baseline: 1 mean (squared error), 2 median (absolute error), 3 majority class (0/1
    error), 4 base rate (Brier). Per itemset (columns VERDICT_COLUMNS):

    n; the mean error E; the constant baseline's error B (the slice's best constant); the sum
    of squared influences of R = E/B, psi = (err - R*beta)/B (beta: a row's baseline error),
    and the sum of psi times ``psi0`` (the whole dataset's influence of its own ratio); the
    achievable error A: the least mean error, leave-one-out (each row predicted from the
    slice's other rows), of three kinds of reference fitted within the slice: its best
    constant, the model with the slice's own offset removed (the median or mean residual;
    for 0/1 error, each predicted class relabelled to its majority), and for each attribute
    the slice does not fix, one constant per item of that attribute (the mean target; the
    majority class for 0/1 error); the sum and sum of squares of err - r (r: the chosen
    reference's per-row error), the sum of squares of r, and which reference was chosen (-2
    constant, -1 offset, else the attribute).
    """
    n_rows = row_codes.shape[0]
    n_items = order.shape[0]
    n_attr = row_codes.shape[1]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    out = np.full((n_items, 10), np.nan)
    ys = np.empty(n_rows)
    rs = np.empty(n_rows)
    es = np.empty(n_rows)
    ps = np.empty(n_rows)
    rows = np.empty(n_rows, dtype=np.int64)
    cand = np.empty(n_rows)
    best = np.empty(n_rows)
    max_k = 1
    for a in range(n_attr):
        max_k = max(max_k, n_values[a] + 1)
    cell_n = np.zeros(max_k)
    cell_s = np.zeros(max_k)
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
            rows[m] = r
            m += 1
        if m == 0:
            out[i, 0] = 0.0
            continue
        y = ys[:m]
        # ---- the slice's best constant (in the slice, as the baseline column) and the lift's influence
        ysum = 0.0
        for j in range(m):
            ysum += y[j]
        ymean = ysum / m
        if kind == 2:
            c = _sorted_median(np.sort(y))
        elif kind == 3:
            c = 1.0 if ymean > 0.5 else 0.0
        else:
            c = ymean
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
        big_b = min(ymean, 1.0 - ymean) if kind == 3 else b_sum / m
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
        if m < 2:
            continue
        # ---- the achievable error: references fitted within the slice, leave-one-out
        best_mean = np.inf
        which = -3
        # (1) the best constant
        if kind == 2:
            _loo_median_errors(y, cand)
        else:
            for j in range(m):
                if kind == 3:
                    p = _loo_majority(ysum, m - ysum, y[j], c)
                    cand[j] = 1.0 if p != y[j] else 0.0
                else:
                    p = (ysum - y[j]) / (m - 1.0)
                    cand[j] = (y[j] - p) * (y[j] - p)
        tot = 0.0
        for j in range(m):
            tot += cand[j]
        if tot / m < best_mean:
            best_mean = tot / m
            which = -2
            for j in range(m):
                best[j] = cand[j]
        # (2) the model with the slice's own offset removed
        if kind == 2:
            _loo_median_errors(rs[:m], cand)
        elif kind == 3:
            n1 = 0.0
            o1 = 0.0
            n0 = 0.0
            o0 = 0.0
            for j in range(m):
                if rs[j] + y[j] > 0.5:
                    n1 += 1.0
                    o1 += y[j]
                else:
                    n0 += 1.0
                    o0 += y[j]
            for j in range(m):
                if rs[j] + y[j] > 0.5:
                    p = _loo_majority(o1, n1 - o1, y[j], 1.0)
                else:
                    p = _loo_majority(o0, n0 - o0, y[j], 0.0)
                cand[j] = 1.0 if p != y[j] else 0.0
        else:
            rsum = 0.0
            for j in range(m):
                rsum += rs[j]
            for j in range(m):
                off = (rsum - rs[j]) / (m - 1.0)
                cand[j] = (rs[j] - off) * (rs[j] - off)
        tot = 0.0
        for j in range(m):
            tot += cand[j]
        if tot / m < best_mean:
            best_mean = tot / m
            which = -1
            for j in range(m):
                best[j] = cand[j]
        # (3) one constant per item of each attribute the slice does not fix
        for a in range(n_attr):
            if item_codes[i, a] >= 0:
                continue
            for v in range(n_values[a] + 1):
                cell_n[v] = 0.0
                cell_s[v] = 0.0
            for j in range(m):
                v = row_codes[rows[j], a]
                if v < 0:
                    v = n_values[a]
                cell_n[v] += 1.0
                cell_s[v] += y[j]
            tot = 0.0
            for j in range(m):
                v = row_codes[rows[j], a]
                if v < 0:
                    v = n_values[a]
                if cell_n[v] > 1.0:
                    if kind == 3:
                        p = _loo_majority(cell_s[v], cell_n[v] - cell_s[v], y[j], c)
                    else:
                        p = (cell_s[v] - y[j]) / (cell_n[v] - 1.0)
                else:
                    if kind == 3:
                        p = _loo_majority(ysum, m - ysum, y[j], c)
                    else:
                        p = (ysum - y[j]) / (m - 1.0)
                if kind == 3:
                    cand[j] = 1.0 if p != y[j] else 0.0
                elif kind == 2:
                    cand[j] = abs(y[j] - p)
                else:
                    cand[j] = (y[j] - p) * (y[j] - p)
                tot += cand[j]
            if tot / m < best_mean:
                best_mean = tot / m
                which = a
                for j in range(m):
                    best[j] = cand[j]
        g1 = 0.0
        g2 = 0.0
        r2 = 0.0
        for j in range(m):
            dj = es[j] - best[j]
            g1 += dj
            g2 += dj * dj
            r2 += best[j] * best[j]
        out[i, 5] = best_mean
        out[i, 6] = g1
        out[i, 7] = g2
        out[i, 8] = r2
        out[i, 9] = which
    return out


@_njit(export="i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], b1[::1], f4[:, ::1], i8, f8[::1]")
def walk_boot_means(order, last_attr, last_val, length, row_codes, wanted, weights, replicates, shifts):
    """Bootstrap means of the flagged itemsets, from per-row replicate sums.

    ``weights`` (float32: Poisson counts are exact up to 2**24) holds, per row (here: per
    distinct row) and metric k, ``replicates`` columns of weight sums then ``replicates``
    columns of weighted outcome sums (metric k's block starts at column 2 * k * replicates).
    Returns, per itemset, metric k's replicate means in columns k * replicates onwards
    (``shifts[k]`` added back; NaN where a replicate holds no row, and for itemsets not
    flagged), as float32.
    """
    n_items = order.shape[0]
    t = weights.shape[1]
    n_met = shifts.shape[0]
    arena, f_lo, f_hi = _walk_state(row_codes, length)
    out = np.full((n_items, n_met * replicates), np.nan, dtype=np.float32)
    acc = np.zeros(t, dtype=np.float32)
    for k in range(n_items):
        i = order[k]
        d = _descend(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        if not wanted[i]:
            continue
        acc[:] = 0.0
        for j in range(f_lo[d], f_hi[d]):
            acc += weights[arena[j]]
        for m in range(n_met):
            base = 2 * m * replicates
            for b in range(replicates):
                den = acc[base + b]
                if den > 0:
                    out[i, m * replicates + b] = shifts[m] + acc[base + replicates + b] / den
    return out

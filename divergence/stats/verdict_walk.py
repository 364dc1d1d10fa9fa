"""The verdict's reference models, fitted per slice in one walk of the mined lattice: for each
itemset, the model's error, its slice baseline's, and the achievable error of references fitted
within the slice (a constant, the model with the slice's offset removed, one constant per item of
an attribute the slice does not fix), with the moment sums the delta method's variances need
(:func:`walk_verdict`; read by :mod:`divergence.stats.defect_tests`). The walk itself is the mining
room's (:func:`divergence.mining.lattice.run_walk`)."""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import f8, i4, i8, kernel
from ..mining.lattice import Walk, descend_rows, rows_visited, run_walk

__all__ = ["walk_verdict", "VERDICT_COLUMNS"]

#: columns of :func:`walk_verdict`'s output: per itemset its defined rows, mean error, constant
#: baseline's error, achievable error (any reference) and which reference, the best model-free
#: reference's error and which; then sums over its rows of products of a row's baseline error
#: (beta), model error (err), chosen reference's error (ref) and best model-free reference's error
#: (free), and of the whole dataset's chosen reference's error of the same row (ref0)
VERDICT_COLUMNS = ("n", "error", "baseline", "achievable", "which", "free", "which_free",
                   "beta2", "beta_err", "err2", "ref2", "ref_err", "free2", "free_err",
                   "ref_ref0", "err_ref0", "ref0")


def walk_verdict(walk: Walk, row_codes: np.ndarray, item_codes: np.ndarray, n_values: np.ndarray, err: np.ndarray,
                 target: np.ndarray, pred: np.ndarray, kind: int) -> np.ndarray:
    """Per itemset (columns :data:`VERDICT_COLUMNS`), what tells a defect from a hard cohort (see ``divergence.assess``).

    ``err`` is the model's per-row error (NaN: undefined), ``target`` the true value and
    ``pred`` the model's prediction (its score for Brier); ``item_codes`` the itemsets' codes
    (-1: no item on an attribute) and ``n_values`` the items per attribute. ``kind`` is the
    slice baseline: 1 mean (squared error), 2 median (absolute error), 3 majority class (0/1
    error), 4 base rate (Brier). ``walk`` must visit the whole dataset (itemset 0) first.

    Per itemset: n; the mean error E; the constant baseline's error B (the slice's best
    constant); the achievable error A: the least mean error, leave-one-out (each row predicted
    from the slice's other rows), of three kinds of reference fitted within the slice: its best
    constant, the model with the slice's own offset removed (the median or mean residual; for
    0/1 error, each predicted class relabelled to its majority), and for each attribute the
    slice does not fix, one constant per item of that attribute (the mean target; the majority
    class for 0/1 error), with which reference it is (-2 constant, -1 offset, else the
    attribute); the least of those that do not use the model (the constant and the attributes'),
    with which; and the moment sums over the slice's rows that the delta method's variances
    need: of the squares and products of a row's baseline error, model error, chosen
    reference's and model-free reference's errors, and of the chosen reference's and model
    error with the whole dataset's chosen reference's error of the same row (the slice and the
    whole dataset overlap).

    Rows with an undefined error take no part, so they are dropped first. A 0/1 error walks
    the distinct rows (codes, class, prediction) with their counts: every number it gives is a
    count, so the walk is exact. The other kinds walk the rows, every sum in the rows' order.
    """
    err = np.asarray(err, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    defined = ~np.isnan(err)
    if not defined.all():
        row_codes, err, target, pred = row_codes[defined], err[defined], target[defined], pred[defined]
    row_codes = np.asfortranarray(row_codes, dtype=np.int32)
    item_codes = np.ascontiguousarray(item_codes, dtype=np.int64)
    n_values = np.ascontiguousarray(n_values, dtype=np.int64)
    out = np.full((len(walk.order), len(VERDICT_COLUMNS)), np.nan)
    if len(walk.order) and walk.order[0] != 0:
        raise ValueError("the verdict's walk must visit the whole dataset first")
    grouped = _distinct_01_rows(row_codes, err, target, pred) if int(kind) == 3 else None
    if grouped is not None:
        codes, weight, ye, pc = grouped
        run_walk(_verdict_counts_step, walk, codes, item_codes, n_values, weight, ye, pc,
              np.full(len(weight), np.nan), out)
    else:
        run_walk(_verdict_rows_step, walk, row_codes, item_codes, n_values, np.ascontiguousarray(err),
              np.ascontiguousarray(target), np.ascontiguousarray(pred), int(kind), np.full(row_codes.shape[0], np.nan),
              out)
    return out


def _distinct_01_rows(row_codes, err, target, pred):
    """Distinct rows of a 0/1 error: (codes, count, class * 2 + error, predicted class); None
    where the rows are not 0/1."""
    n, n_attr = row_codes.shape
    if n == 0 or not (np.isin(err, (0.0, 1.0)).all() and np.isin(target, (0.0, 1.0)).all()):
        return None
    ye = (2 * target + err).astype(np.int64)
    pc = ((pred - target) + target > 0.5).astype(np.int64)  # the offset reference's class, as per row
    radix = row_codes.max(axis=0).astype(np.int64) + 2 if n_attr else np.zeros(0, np.int64)
    if float(np.log2(radix.astype(float)).sum()) + 3.0 >= 62.0:
        return None
    key = ye * 2 + pc
    for a in range(n_attr):
        key = key * radix[a] + (row_codes[:, a].astype(np.int64) + 1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    weight = np.bincount(inverse.reshape(-1), minlength=len(first)).astype(np.float64)
    return (np.asfortranarray(row_codes[first]), weight, np.ascontiguousarray(ye[first]),
            np.ascontiguousarray(pc[first]))



@kernel
def _cell_offsets(n_values):
    """Start of each attribute's cells (its items, then one for rows without an item)."""
    n_attr = n_values.shape[0]
    offs = np.zeros(n_attr + 1, dtype=np.int64)
    for a in range(n_attr):
        offs[a + 1] = offs[a] + n_values[a] + 1
    return offs


@kernel
def _free_attributes(item_codes, i, free):
    """The attributes itemset i does not fix, into ``free``; returns their count."""
    nf = 0
    for a in range(item_codes.shape[1]):
        if item_codes[i, a] < 0:
            free[nf] = a
            nf += 1
    return nf


@kernel
def _middle(x, m):
    """(x[h-1], x[h], x[h+1]) of sorted x[:m], h = m // 2 (NaN outside): all a median, with
    or without one row, needs."""
    h = m // 2
    s = np.partition(x[:m], h)
    lo = np.nan
    hi = np.nan
    if h > 0:
        lo = s[0]
        for j in range(1, h):
            if s[j] > lo:
                lo = s[j]
    if h + 1 < m:
        hi = s[h + 1]
        for j in range(h + 2, m):
            if s[j] < hi:
                hi = s[j]
    return lo, s[h], hi


@kernel
def _median_of(m, lo, mid):
    """Median of m values from :func:`_middle`'s pieces."""
    if m % 2 == 1:
        return mid
    return 0.5 * (lo + mid)


@kernel
def _loo_median(v, m, lo, mid, hi):
    """Median of m values (pieces from :func:`_middle`) without one row of value v (m >= 2):
    the same whichever tied row is left out, so the value decides."""
    if m % 2 == 0:  # m - 1 odd: the middle of the rest is sorted position h - 1 or h
        return lo if v > lo else mid
    a = mid if v > mid else hi
    b = lo if v > lo else mid
    return 0.5 * (a + b)


@kernel
def _row_reference(which, kind, y, rr, e, cell, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0, o0,
                   ylo, ymid, yhi, rlo, rmid, rhi):
    """A row's leave-one-out error under reference ``which`` (-2 constant, -1 offset, else a
    cell of an attribute); the formulas of the per-reference passes, term for term."""
    if which == -2:
        if kind == 2:
            return abs(y - _loo_median(y, m, ylo, ymid, yhi))
        if kind == 3:
            p = _loo_majority(ysum, m - ysum, y, c)
            return 1.0 if p != y else 0.0
        p = (ysum - y) / (m - 1.0)
        return (y - p) * (y - p)
    if which == -1:
        if kind == 2:
            return abs(rr - _loo_median(rr, m, rlo, rmid, rhi))
        if kind == 3:
            if rr + y > 0.5:
                p = _loo_majority(o1, n1 - o1, y, 1.0)
            else:
                p = _loo_majority(o0, n0 - o0, y, 0.0)
            return 1.0 if p != y else 0.0
        off = (rsum - rr) / (m - 1.0)
        return (rr - off) * (rr - off)
    if cell_n[cell] > 1.0:
        if kind == 3:
            p = _loo_majority(cell_s[cell], cell_n[cell] - cell_s[cell], y, c)
        else:
            p = (cell_s[cell] - y) / (cell_n[cell] - 1.0)
    else:
        if kind == 3:
            p = _loo_majority(ysum, m - ysum, y, c)
        else:
            p = (ysum - y) / (m - 1.0)
    if kind == 3:
        return 1.0 if p != y else 0.0
    if kind == 2:
        return abs(y - p)
    return (y - p) * (y - p)


@kernel
def _constant_or_offset(tot_c, tot_o, m):
    """The lesser mean error of a slice's first two references and which it is (-2 the constant,
    -1 the offset; -3 when neither is defined); a tie keeps the constant."""
    best_mean = np.inf
    which = -3
    if tot_c / m < best_mean:
        best_mean = tot_c / m
        which = -2
    if tot_o / m < best_mean:
        best_mean = tot_o / m
        which = -1
    return best_mean, which


@kernel
def _loo_majority(ones, zeros, y, tie):
    """The class the other rows of a cell hold most, for a row of class y (``tie`` on a tie).
    Within one of a tie the cell's own majority decides (with the row): plain leave-one-out
    would predict the other class for every row of a balanced cell, an error of 1 where a coin
    errs half the time."""
    o = ones - (1.0 if y > 0.5 else 0.0)
    z = zeros - (0.0 if y > 0.5 else 1.0)
    if o - z >= 2.0:
        return 1.0
    if z - o >= 2.0:
        return 0.0
    if ones > zeros:
        return 1.0
    if ones < zeros:
        return 0.0
    return tie


@kernel
def _add_moments(out, i, w, beta, e, b, bf, r0, has_ref, has_free):
    """Add ``w`` rows' baseline error ``beta``, model error ``e``, chosen reference's error ``b``
    and best model-free reference's error ``bf`` (and the whole dataset's chosen reference's
    error ``r0`` of the same rows) to itemset i's moment sums (:data:`VERDICT_COLUMNS` 7 onwards)."""
    out[i, 7] += w * (beta * beta)
    out[i, 8] += w * (beta * e)
    out[i, 9] += w * (e * e)
    if has_ref:
        out[i, 10] += w * (b * b)
        out[i, 11] += w * (b * e)
        out[i, 14] += w * (b * r0)
        out[i, 15] += w * (e * r0)
        out[i, 16] += w * r0
    if has_free:
        out[i, 12] += w * (bf * bf)
        out[i, 13] += w * (bf * e)


@kernel
def _clear_moments(out, i, has_ref, has_free):
    for j in range(7, 10):
        out[i, j] = 0.0
    if has_ref:
        for j in (10, 11, 14, 15, 16):
            out[i, j] = 0.0
    if has_free:
        out[i, 12] = 0.0
        out[i, 13] = 0.0


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1],
        f8[::1], f8[::1], f8[::1], i8, f8[::1], f8[:, ::1])
def _verdict_rows_step(start, quota, order, last_attr, last_val, length, row_codes, arena, f_lo, f_hi, item_codes,
                       n_values, err, target, pred, kind, whole, out):
    """:func:`walk_verdict` over the rows, from the ``start``-th itemset of the walk until ``quota``
    units of work are done; returns where to resume (the walk's length when done). Three passes
    over a slice's rows: its tallies (and each row's cell per attribute the slice does not fix),
    every reference's leave-one-out error, each row's errors into the moment sums. The whole
    dataset (the walk's first itemset) writes its rows' chosen reference's errors into
    ``whole``, which every later itemset's cross sums read."""
    n_rows = row_codes.shape[0]
    n_attr = row_codes.shape[1]
    n_items = order.shape[0]
    ys = np.empty(n_rows)
    rs = np.empty(n_rows)
    es = np.empty(n_rows)
    rid = np.empty(n_rows, dtype=np.int64)
    scratch = np.empty(n_rows)
    cells = np.empty(n_rows * max(n_attr, 1), dtype=np.int32)
    offs = _cell_offsets(n_values)
    cell_n = np.zeros(offs[n_attr])
    cell_s = np.zeros(offs[n_attr])
    free = np.empty(max(n_attr, 1), dtype=np.int64)
    tots = np.empty(max(n_attr, 1))
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = descend_rows(i, last_attr, last_val, length, row_codes, arena, f_lo, f_hi)
        nf = _free_attributes(item_codes, i, free)
        work += rows_visited(d, f_lo, f_hi) + (f_hi[d] - f_lo[d]) * (3 + nf)
        for t in range(nf):
            a = free[t]
            for v in range(offs[a], offs[a + 1]):
                cell_n[v] = 0.0
                cell_s[v] = 0.0
        # ---- pass 1: the rows' values, sums in row order, each row's cells
        m = 0
        ysum = 0.0
        e_sum = 0.0
        rsum = 0.0
        n1 = 0.0
        o1 = 0.0
        n0 = 0.0
        o0 = 0.0
        for j in range(f_lo[d], f_hi[d]):
            r = arena[j]
            e = err[r]
            if np.isnan(e):
                continue
            y = target[r]
            rr = pred[r] - y
            ys[m] = y
            rs[m] = rr
            es[m] = e
            rid[m] = r
            ysum += y
            e_sum += e
            rsum += rr
            if rr + y > 0.5:
                n1 += 1.0
                o1 += y
            else:
                n0 += 1.0
                o0 += y
            base = m * nf
            for t in range(nf):
                a = free[t]
                v = row_codes[r, a]
                if v < 0:
                    v = n_values[a]
                cell = offs[a] + v
                cells[base + t] = cell
                cell_n[cell] += 1.0
                cell_s[cell] += y
            m += 1
        if m == 0:
            out[i, 0] = 0.0
            continue
        ymean = ysum / m
        ylo = ymid = yhi = rlo = rmid = rhi = np.nan
        if kind == 2:
            for j in range(m):
                scratch[j] = ys[j]
            ylo, ymid, yhi = _middle(scratch, m)
            c = _median_of(m, ylo, ymid)
            if m >= 2:
                for j in range(m):
                    scratch[j] = rs[j]
                rlo, rmid, rhi = _middle(scratch, m)
        elif kind == 3:
            c = 1.0 if ymean > 0.5 else 0.0
        else:
            c = ymean
        # ---- pass 2: the baseline's error and every reference's leave-one-out error
        b_sum = 0.0
        tot_c = 0.0
        tot_o = 0.0
        for t in range(nf):
            tots[t] = 0.0
        for j in range(m):
            y = ys[j]
            if kind == 2:
                b_sum += abs(y - c)
            elif kind == 3:
                b_sum += 1.0 if y != c else 0.0
            else:
                b_sum += (y - c) * (y - c)
            if m < 2:
                continue
            tot_c += _row_reference(-2, kind, y, rs[j], es[j], 0, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0,
                                    o0, ylo, ymid, yhi, rlo, rmid, rhi)
            tot_o += _row_reference(-1, kind, y, rs[j], es[j], 0, cell_n, cell_s, ysum, m, c, rsum, n1, o1, n0,
                                    o0, ylo, ymid, yhi, rlo, rmid, rhi)
            base = j * nf
            for t in range(nf):
                tots[t] += _row_reference(0, kind, y, rs[j], es[j], cells[base + t], cell_n, cell_s, ysum, m, c,
                                          rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
        big_e = e_sum / m
        big_b = min(ymean, 1.0 - ymean) if kind == 3 else b_sum / m
        out[i, 0] = m
        out[i, 1] = big_e
        out[i, 2] = big_b
        # the reference with the least error; on a tie the first (constant, offset, attributes);
        # and the least of those that do not use the model (constant, attributes)
        best_mean = np.inf
        which = -3
        pick = -1
        free_mean = np.inf
        which_free = -3
        pick_free = -1
        if m >= 2:
            best_mean, which = _constant_or_offset(tot_c, tot_o, m)
            if tot_c / m < free_mean:
                free_mean = tot_c / m
                which_free = -2
            for t in range(nf):
                if tots[t] / m < best_mean:
                    best_mean = tots[t] / m
                    which = free[t]
                    pick = t
                if tots[t] / m < free_mean:
                    free_mean = tots[t] / m
                    which_free = free[t]
                    pick_free = t
        has_ref = which != -3
        has_free = which_free != -3
        if has_ref:
            out[i, 3] = best_mean
            out[i, 4] = which
        if has_free:
            out[i, 5] = free_mean
            out[i, 6] = which_free
        # ---- pass 3: each row's errors (the whole dataset's first: every later itemset reads them)
        _clear_moments(out, i, has_ref, has_free)
        for j in range(m):
            y = ys[j]
            r = rid[j]
            if kind == 2:
                beta = abs(y - c)
            elif kind == 3:
                beta = 1.0 if y != c else 0.0
            else:
                beta = (y - c) * (y - c)
            b = 0.0
            bf = 0.0
            if has_ref:
                cell = cells[j * nf + pick] if pick >= 0 else 0
                b = _row_reference(which if pick < 0 else 0, kind, y, rs[j], es[j], cell, cell_n, cell_s, ysum, m,
                                   c, rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
            if has_free:
                cell = cells[j * nf + pick_free] if pick_free >= 0 else 0
                bf = _row_reference(-2 if pick_free < 0 else 0, kind, y, rs[j], es[j], cell, cell_n, cell_s, ysum,
                                    m, c, rsum, n1, o1, n0, o0, ylo, ymid, yhi, rlo, rmid, rhi)
            if d == 0:
                whole[r] = b if has_ref else np.nan
            _add_moments(out, i, 1.0, beta, es[j], b, bf, whole[r], has_ref, has_free)
    return n_items


@kernel
def _majority_error(ones, zeros, y, tie):
    """1 when the leave-one-out majority of a cell (``ones``, ``zeros``) misses class y, else 0."""
    return 1.0 if _loo_majority(ones, zeros, y, tie) != y else 0.0


@kernel
def _count_reference(which, y, p, cell, cc, ysum, m, c, ones_o, n_o):
    """A row's leave-one-out 0/1 error under reference ``which`` (-2 the constant, -1 the offset:
    its predicted class ``p`` relabelled, else attribute ``which``'s cell ``cell``), from the
    slice's counts."""
    if which == -2:
        return _majority_error(ysum, m - ysum, y, c)
    if which == -1:
        return _majority_error(ones_o[p], n_o[p] - ones_o[p], y, float(p))
    cn = cc[cell, 0] + cc[cell, 1] + cc[cell, 2] + cc[cell, 3]
    if cn > 1.0:
        cs = cc[cell, 2] + cc[cell, 3]
        return _majority_error(cs, cn - cs, y, c)
    return _majority_error(ysum, m - ysum, y, c)


@kernel(i8, i8, i8[::1], i8[::1], i8[::1], i8[::1], i4[::1, :], i4[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1],
        f8[::1], i8[::1], i8[::1], f8[::1], f8[:, ::1])
def _verdict_counts_step(start, quota, order, last_attr, last_val, length, codes, arena, f_lo, f_hi, item_codes,
                         n_values, weight, ye, pc, whole, out):
    """:func:`walk_verdict` of a 0/1 error over distinct rows (``codes``, ``weight`` rows of
    class * 2 + error ``ye``, predicted class ``pc``), from the ``start``-th itemset of the walk
    until ``quota`` units of work are done; returns where to resume. One pass over a slice's
    distinct rows counts them per (class, error), per predicted class and per cell of each
    attribute the slice does not fix; every reference's error follows from those counts, and a
    second pass adds each distinct row's errors, times its count, to the moment sums (every term
    0 or 1: exact). The whole dataset writes each distinct row's chosen reference's error into
    ``whole`` first."""
    n_attr = codes.shape[1]
    n_items = order.shape[0]
    offs = _cell_offsets(n_values)
    cc = np.zeros((offs[n_attr], 4))  # per cell, rows per (class, error)
    cnt = np.zeros(8)  # rows per (predicted class, class, error)
    n_ye = np.zeros(4)  # rows per (class, error)
    n_o = np.zeros(2)  # rows per predicted class
    ones_o = np.zeros(2)  # ... of class 1
    free = np.empty(max(n_attr, 1), dtype=np.int64)
    work = 0
    for k in range(start, n_items):
        if work >= quota:
            return k
        i = order[k]
        d = descend_rows(i, last_attr, last_val, length, codes, arena, f_lo, f_hi)
        nf = _free_attributes(item_codes, i, free)
        work += rows_visited(d, f_lo, f_hi) * (2 + nf)
        for t in range(nf):
            a = free[t]
            for v in range(offs[a], offs[a + 1]):
                for q in range(4):
                    cc[v, q] = 0.0
        cnt[:] = 0.0
        for j in range(f_lo[d], f_hi[d]):
            g = arena[j]
            w = weight[g]
            q = ye[g]
            cnt[pc[g] * 4 + q] += w
            for t in range(nf):
                a = free[t]
                v = codes[g, a]
                if v < 0:
                    v = n_values[a]
                cc[offs[a] + v, q] += w
        for q in range(4):
            n_ye[q] = cnt[q] + cnt[4 + q]
        m = n_ye[0] + n_ye[1] + n_ye[2] + n_ye[3]
        if m == 0:
            out[i, 0] = 0.0
            continue
        ysum = n_ye[2] + n_ye[3]
        ymean = ysum / m
        c = 1.0 if ymean > 0.5 else 0.0
        out[i, 0] = m
        out[i, 1] = (n_ye[1] + n_ye[3]) / m
        out[i, 2] = min(ymean, 1.0 - ymean)
        for p in range(2):
            n_o[p] = cnt[p * 4] + cnt[p * 4 + 1] + cnt[p * 4 + 2] + cnt[p * 4 + 3]
            ones_o[p] = cnt[p * 4 + 2] + cnt[p * 4 + 3]
        which = -3
        which_free = -3
        if m >= 2:
            # (1) the constant, (2) the offset: each predicted class relabelled to its majority
            tot_c = 0.0
            tot_o = 0.0
            for q in range(4):
                y = 1.0 if q >= 2 else 0.0
                tot_c += n_ye[q] * _majority_error(ysum, m - ysum, y, c)
                for p in range(2):
                    tot_o += cnt[p * 4 + q] * _majority_error(ones_o[p], n_o[p] - ones_o[p], y, float(p))
            best_mean, which = _constant_or_offset(tot_c, tot_o, m)
            free_mean = tot_c / m
            which_free = -2
            # (3) one majority class per item of each attribute the slice does not fix
            for t in range(nf):
                a = free[t]
                tot = 0.0
                for v in range(offs[a], offs[a + 1]):
                    cn = cc[v, 0] + cc[v, 1] + cc[v, 2] + cc[v, 3]
                    if cn == 0.0:
                        continue
                    cs = cc[v, 2] + cc[v, 3]
                    for q in range(4):
                        y = 1.0 if q >= 2 else 0.0
                        if cn > 1.0:
                            tot += cc[v, q] * _majority_error(cs, cn - cs, y, c)
                        else:
                            tot += cc[v, q] * _majority_error(ysum, m - ysum, y, c)
                if tot / m < best_mean:
                    best_mean = tot / m
                    which = a
                if tot / m < free_mean:
                    free_mean = tot / m
                    which_free = a
            out[i, 3] = best_mean
            out[i, 4] = which
            out[i, 5] = free_mean
            out[i, 6] = which_free
        has_ref = which != -3
        has_free = which_free != -3
        # each distinct row's errors, times its count (the whole dataset's first)
        _clear_moments(out, i, has_ref, has_free)
        for j in range(f_lo[d], f_hi[d]):
            g = arena[j]
            q = ye[g]
            y = 1.0 if q >= 2 else 0.0
            e = float(q % 2)
            beta = 1.0 if y != c else 0.0
            b = 0.0
            bf = 0.0
            if has_ref:
                cell = 0
                if which >= 0:
                    v = codes[g, which]
                    cell = offs[which] + (v if v >= 0 else n_values[which])
                b = _count_reference(which, y, pc[g], cell, cc, ysum, m, c, ones_o, n_o)
            if has_free:
                cell = 0
                if which_free >= 0:
                    v = codes[g, which_free]
                    cell = offs[which_free] + (v if v >= 0 else n_values[which_free])
                bf = _count_reference(which_free, y, 0, cell, cc, ysum, m, c, ones_o, n_o)
            if d == 0:
                whole[g] = b if has_ref else np.nan
            _add_moments(out, i, weight[g], beta, e, b, bf, whole[g], has_ref, has_free)
    return n_items

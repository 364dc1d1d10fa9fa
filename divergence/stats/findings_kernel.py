"""The compiled sums the findings' score tests read: per candidate, from its entries (its rows'
tallies in each cell of the model), in one pass and without a candidates-by-cells block."""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import f8, i8, kernel

__all__ = ["sum_rows_by", "binary_score_sums", "fit_binary", "split_entries"]


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


@kernel(i8[::1], i8[::1], f8[:, ::1], f8[::1], f8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[:, ::1], f8[:, ::1])
def binary_score_sums(c, h, t, mu, v, M, N, sums, a, rows_by):
    """A 0/1 model's score-test sums per candidate, in one pass over its entries (``c``, cell ``h``,
    tallies ``t``: rows, events, squares) with the cells' fitted rates ``mu``, their variances ``v``,
    design ``M`` and rows ``N``: into ``sums`` the rows, events, expected events, the score (events
    less expected), the information and the entries that hold part of their cell only; into ``a``
    the information times the design; into ``rows_by`` (unless it has no rows) the rows times the
    design's columns but the first (each term's rows: :func:`sum_rows_by`'s sums). Each sum in the
    entries' order (as ``np.bincount`` adds)."""
    cols = M.shape[1]
    by = rows_by.shape[0] > 0
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
        if by and n != 0.0:
            for col in range(1, cols):
                m = M[r, col]
                if m != 0.0:
                    rows_by[j, col - 1] += n * m
        if w == 0.0:
            continue
        for col in range(cols):
            m = M[r, col]
            if m != 0.0:
                a[j, col] += w * m


@kernel
def _loglik(X, n, events, b):
    """A 0/1 model's log-likelihood at coefficients ``b`` (cells' events of n, log-odds X @ b)."""
    total = 0.0
    for r in range(X.shape[0]):
        eta = 0.0
        for j in range(X.shape[1]):
            eta += X[r, j] * b[j]
        # log(1 + e^eta), as numpy's logaddexp(0, eta)
        soft = eta + np.log1p(np.exp(-eta)) if eta > 0.0 else np.log1p(np.exp(eta))
        total += events[r] * eta - n[r] * soft
    return total


@kernel
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@kernel(f8[:, ::1], f8[::1], f8[::1], f8[::1], i8, f8[::1], f8, f8, f8)
def fit_binary(X, n, events, start, use_start, beta, bound, runs_off, max_step):
    """A 0/1 model's maximum-likelihood coefficients on cells (design ``X``, rows ``n``, ``events``)
    by Newton's method with a halving line search, from the overall rate (or ``start`` when
    ``use_start`` and it fits better), into ``beta``; returns the log-likelihood. The steps of
    :func:`divergence.stats.findings_model.fit_cells`, whose rules it follows: coefficients held
    within ``bound``, one that runs off past ``runs_off`` sent to the bound, one at the bound that
    the gradient pulls in restarted at ``runs_off``, a step at most ``max_step`` along its line."""
    cells, p = X.shape
    ev_total = 0.0
    n_total = 0.0
    for r in range(cells):
        ev_total += events[r]
        n_total += n[r]
    rate = ev_total / n_total
    for j in range(p):
        beta[j] = 0.0
    beta[0] = np.log(max(rate, 1e-12) / max(1.0 - rate, 1e-12))
    ll = _loglik(X, n, events, beta)
    slack = 1e-13 * max(1.0, abs(ll))
    if use_start:
        ok = True
        for j in range(p):
            if not np.isfinite(start[j]):
                ok = False
        if ok:
            warm = _loglik(X, n, events, start)
            if warm > ll:
                for j in range(p):
                    beta[j] = start[j]
                ll = warm
    pulled = np.zeros(p, dtype=np.bool_)
    mu = np.empty(cells)
    grad = np.empty(p)
    step = np.empty(p)
    new = np.empty(p)
    act = np.empty(p, dtype=np.int64)
    for _ in range(60):
        for r in range(cells):
            eta = 0.0
            for j in range(p):
                eta += X[r, j] * beta[j]
            eta = min(max(eta, -700.0), 700.0)
            mu[r] = 1.0 / (1.0 + np.exp(-eta))
        for j in range(p):
            g = 0.0
            for r in range(cells):
                g += X[r, j] * (events[r] - n[r] * mu[r])
            grad[j] = g
        back = False
        for j in range(p):
            if abs(beta[j]) >= bound and _sign(grad[j]) == -_sign(beta[j]) and not pulled[j]:
                back = True
                pulled[j] = True
                beta[j] = _sign(beta[j]) * runs_off
        if back:
            ll = _loglik(X, n, events, beta)
            continue
        # the information of the coefficients not held at the bound, and Newton's step for them
        k = 0
        for j in range(p):
            step[j] = 0.0
            if not (abs(beta[j]) >= bound and _sign(grad[j]) == _sign(beta[j])):
                act[k] = j
                k += 1
        a = np.zeros((k, k + 1))
        for u in range(k):
            for v in range(u, k):
                s = 0.0
                for r in range(cells):
                    s += X[r, act[u]] * X[r, act[v]] * (n[r] * mu[r] * (1.0 - mu[r]))
                a[u, v] = s
                a[v, u] = s
            a[u, u] += 1e-9
            a[u, k] = grad[act[u]]
        # Gaussian elimination with partial pivoting (a direction of no information steps 0)
        for col in range(k):
            piv = col
            for r in range(col + 1, k):
                if abs(a[r, col]) > abs(a[piv, col]):
                    piv = r
            if piv != col:
                for c in range(k + 1):
                    tmp = a[col, c]
                    a[col, c] = a[piv, c]
                    a[piv, c] = tmp
            if a[col, col] == 0.0:
                continue
            for r in range(col + 1, k):
                f = a[r, col] / a[col, col]
                if f != 0.0:
                    for c in range(col, k + 1):
                        a[r, c] -= f * a[col, c]
        for col in range(k - 1, -1, -1):
            if a[col, col] == 0.0:
                step[act[col]] = 0.0
                continue
            s = a[col, k]
            for c in range(col + 1, k):
                s -= a[col, c] * step[act[c]]
            step[act[col]] = s / a[col, col]
        longest = 0.0
        for j in range(p):
            longest = max(longest, abs(step[j]))
        if longest > max_step:
            for j in range(p):
                step[j] *= max_step / longest
        t = 1.0
        while True:
            for j in range(p):
                new[j] = min(max(beta[j] + t * step[j], -bound), bound)
            new_ll = _loglik(X, n, events, new)
            if new_ll >= ll - slack or t < 1e-4:
                break
            t *= 0.5
        if new_ll < ll - slack:  # no step along Newton's direction helps: settled
            break
        run = False
        for j in range(p):
            if runs_off < abs(new[j]) < bound and _sign(step[j]) == _sign(new[j]) and abs(step[j]) > 0.5 \
                    and not pulled[j]:
                run = True
        if run:
            jump = new.copy()
            for j in range(p):
                if runs_off < abs(new[j]) < bound and _sign(step[j]) == _sign(new[j]) and abs(step[j]) > 0.5 \
                        and not pulled[j]:
                    jump[j] = _sign(new[j]) * bound
            jump_ll = _loglik(X, n, events, jump)
            if jump_ll >= new_ll:
                for j in range(p):
                    new[j] = jump[j]
                new_ll = jump_ll
        done = abs(new_ll - ll) < 1e-9 * max(1.0, abs(ll))
        for j in range(p):
            beta[j] = new[j]
        ll = max(new_ll, ll)
        if done:
            break
    return ll


@kernel(i8[::1], i8[::1], f8[:, ::1], i8[::1], i8[::1], f8[:, ::1], i8[::1], i8[::1], i8, i8[::1], i8[::1],
        f8[:, ::1])
def split_entries(c, lab, t, c_in, lab_in, t_in, map_out, map_in, n_cand, c_out, lab_out, t_out):
    """A forward step's entries from the last step's (``c``, ``lab``, ``t``: each candidate's entries
    consecutive) and those of the new term's rows (``c_in``, ``lab_in``, ``t_in``, from a walk over
    those rows only): per candidate in the last step's order, its old entries less their rows in the
    term (kept where rows remain, labelled ``map_out[lab]``), then its entries in the term (labelled
    ``map_in[lab_in]``). Writes into ``c_out``, ``lab_out``, ``t_out``; returns the entries written."""
    cols = t.shape[1]
    first_in = np.full(n_cand, -1, dtype=np.int64)
    end_in = np.zeros(n_cand, dtype=np.int64)
    e = 0
    while e < c_in.shape[0]:
        j = c_in[e]
        first_in[j] = e
        while e < c_in.shape[0] and c_in[e] == j:
            e += 1
        end_in[j] = e
    n_labels = map_out.shape[0]
    place = np.full(n_labels, -1, dtype=np.int64)
    rest = np.empty((n_labels, cols))
    out = 0
    a = 0
    while a < c.shape[0]:
        j = c[a]
        b = a
        while b < c.shape[0] and c[b] == j:
            place[lab[b]] = b - a
            for col in range(cols):
                rest[b - a, col] = t[b, col]
            b += 1
        lo, hi = first_in[j], end_in[j]
        # the old entries less their rows in the term (each of those lies in one old entry's cell)
        if lo >= 0:
            for y in range(lo, hi):
                x = place[lab_in[y]]
                for col in range(cols):
                    rest[x, col] -= t_in[y, col]
        for x in range(a, b):
            if rest[x - a, 0] > 0.5:
                c_out[out] = j
                lab_out[out] = map_out[lab[x]]
                for col in range(cols):
                    t_out[out, col] = rest[x - a, col]
                out += 1
        if lo >= 0:
            for y in range(lo, hi):
                c_out[out] = j
                lab_out[out] = map_in[lab_in[y]]
                for col in range(cols):
                    t_out[out, col] = t_in[y, col]
                out += 1
        for x in range(a, b):
            place[lab[x]] = -1
        a = b
    return out

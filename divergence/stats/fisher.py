"""Fisher's exact test of each slice against the rest of the rows (a 0/1 outcome), compiled.

The two-sided p-value as R's ``fisher.test`` defines it: the probability, given the margins, of
a table at most as likely as the observed one (tested against ``scipy.stats.fisher_exact``).
Slices sharing their tallies are tested once; the kernel is called a few thousand slices at a
time, so a long scan returns to Python every few milliseconds.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.compiled import f8, kernel

__all__ = ["fisher_exact_p", "FISHER_REL_TOL"]

#: relative tolerance when deciding that two tables are equally likely (as R's fisher.test)
FISHER_REL_TOL = 1e-7
#: distinct slices per kernel call (a few milliseconds)
CHUNK = 4096


@kernel
def _log_comb(a, b):
    return math.lgamma(a + 1.0) - math.lgamma(b + 1.0) - math.lgamma(a - b + 1.0)


@kernel
def _logpmf(k, big_m, big_k, n):
    return _log_comb(big_k, k) + _log_comb(big_m - big_k, n - k) - _log_comb(big_m, n)


@kernel
def _ratio(k, step, big_m, big_k, n):
    """pmf(k + step) / pmf(k) for step = +1 or -1."""
    if step > 0:
        return (big_k - k) * (n - k) / ((k + 1.0) * (big_m - big_k - n + k + 1.0))
    return k * (big_m - big_k - n + k) / ((big_k - k + 1.0) * (n - k + 1.0))


@kernel
def _tail_sum(k, step, lo, hi, big_m, big_k, n):
    """Sum of pmf ratios pmf(j)/pmf(k) for j from k outwards in direction ``step``."""
    total = 1.0
    term = 1.0
    j = k
    while j != (lo if step < 0 else hi):
        term *= _ratio(j, step, big_m, big_k, n)
        j += step
        total += term
        if term < 1e-15 * total:
            break
    return total


@kernel
def _first_at_or_below(a, b, step, lthr, big_m, big_k, n):
    """Bisection between ``a`` (log pmf above ``lthr``) and ``b`` (at or below it), moving
    by ``step``'s sign: the first point at or below the threshold."""
    while abs(b - a) > 1.0:
        mid = math.floor((a + b) / 2.0) if step > 0 else math.ceil((a + b) / 2.0)
        if _logpmf(mid, big_m, big_k, n) > lthr:
            a = mid
        else:
            b = mid
    return b


@kernel
def _fisher_one(x, n, big_k, big_m, rel_tol):
    lo = max(0.0, n - (big_m - big_k))
    hi = min(n, big_k)
    if hi <= lo:
        return 1.0
    mode = math.floor((n + 1.0) * (big_k + 1.0) / (big_m + 2.0))
    mode = min(max(mode, lo), hi)
    lx = _logpmf(x, big_m, big_k, n)
    lmode = _logpmf(mode, big_m, big_k, n)
    lthr = lx + math.log1p(rel_tol)
    if lmode <= lthr:
        return 1.0
    if lx - lmode > -3.0:
        # x near the mode (within about 2.4 standard deviations): p is not small, and
        # 1 - (mass of the more likely tables) is a short sum from the mode outwards,
        # ratios only; precise to about 1e-13 absolute, so only used where p is large
        thr = math.exp(lthr - lmode)
        between = 1.0
        step = 1.0 if x < mode else -1.0
        edge = hi if step > 0 else lo
        term = 1.0
        k = mode
        while k != edge:
            term *= _ratio(k, step, big_m, big_k, n)
            k += step
            if term <= thr:
                break
            between += term
        term = 1.0
        k = mode
        while k - step != x:
            term *= _ratio(k, -step, big_m, big_k, n)
            k -= step
            between += term
        return min(1.0, max(0.0, 1.0 - math.exp(lmode) * between))
    step = 1.0 if x < mode else -1.0
    edge = hi if step > 0 else lo
    near = math.exp(lx) * _tail_sum(x, -step, lo, hi, big_m, big_k, n)
    if _logpmf(edge, big_m, big_k, n) > lthr:
        return min(1.0, near)
    # the first k past the mode, on the other side, at most as likely as x: the mirror
    # image of x is a close guess; walk from it with pmf ratios, bisect if the walk is long
    g = 2.0 * mode - x
    g = max(g, mode + 1.0) if step > 0 else min(g, mode - 1.0)
    g = min(max(g, lo), hi)
    lg = _logpmf(g, big_m, big_k, n)
    thr_rel = math.exp(lthr - lg)  # threshold as a ratio to pmf(g)
    k = g
    term = 1.0
    steps = 0
    found = False
    if lg > lthr:
        # still too likely: walk outwards until the pmf drops to the threshold
        while steps < 64 and k != edge:
            term *= _ratio(k, step, big_m, big_k, n)
            k += step
            steps += 1
            if term <= thr_rel:
                found = True
                break
        if not found:
            k = _first_at_or_below(k, edge, step, lthr, big_m, big_k, n)
    else:
        # already at or below: walk back towards the mode while still at or below
        while steps < 64 and k != mode:
            r = _ratio(k, -step, big_m, big_k, n)
            if term * r > thr_rel:
                found = True
                break
            term *= r
            k -= step
            steps += 1
        if not found and k != mode:
            k = _first_at_or_below(mode, k, step, lthr, big_m, big_k, n)  # pmf(mode) > thr >= pmf(k)
    far = math.exp(_logpmf(k, big_m, big_k, n)) * _tail_sum(k, step, lo, hi, big_m, big_k, n)
    return min(1.0, near + far)


@kernel(f8[::1], f8[::1], f8, f8, f8)
def _fisher_many(x, n, big_k, big_m, rel_tol):
    out = np.empty(x.shape[0], dtype=np.float64)
    for i in range(x.shape[0]):
        if n[i] <= 0 or n[i] >= big_m:
            out[i] = np.nan
        else:
            out[i] = _fisher_one(x[i], n[i], big_k, big_m, rel_tol)
    return out


def fisher_exact_p(ones: np.ndarray, n: np.ndarray, ones_all: float, n_all: float) -> np.ndarray:
    """Two-sided Fisher exact p-value of each slice against its complement (0/1 outcome).

    ``ones`` of ``n`` defined rows in the slice, ``ones_all`` of ``n_all`` in the whole
    dataset. As R's ``fisher.test``: the probability, given the margins, of a table at
    most as likely as the observed one. NaN where the slice has no defined row or no
    defined row lies outside it.
    """
    x = np.ascontiguousarray(ones, dtype=np.float64)
    n = np.ascontiguousarray(n, dtype=np.float64)
    if len(x) > 1000 and np.all(np.isfinite(n)):
        # slices often share their tallies (a superset covering the same rows): each distinct
        # (ones, n) pair once (on Adult at 0.005, 30k and 18k pairs for 65k slices)
        key = n.astype(np.int64) * (int(n_all) + 2) + x.astype(np.int64)
        import pandas as pd

        inverse, uniq = pd.factorize(key)  # hashing, not sorting
        if len(uniq) < 0.8 * len(x):
            first = np.zeros(len(uniq), dtype=np.int64)
            first[inverse[::-1]] = np.arange(len(x) - 1, -1, -1)  # a row holding each pair
            return _fisher_distinct(x[first], n[first], ones_all, n_all)[inverse]
    return _fisher_distinct(x, n, ones_all, n_all)


def _fisher_distinct(x: np.ndarray, n: np.ndarray, ones_all: float, n_all: float) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    n = np.ascontiguousarray(n, dtype=np.float64)
    out = np.empty(len(x), dtype=np.float64)
    for lo in range(0, len(x), CHUNK):
        out[lo:lo + CHUNK] = _fisher_many(x[lo:lo + CHUNK], n[lo:lo + CHUNK], float(ones_all), float(n_all),
                                          FISHER_REL_TOL)
    return out

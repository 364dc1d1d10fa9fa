"""Empirical-Bayes shrinkage of slice divergences: the winner's curse, corrected.

The largest of thousands of noisy divergences is biased upwards. Each slice's estimate is
treated as its true divergence plus normal noise of its own standard error; the true
divergences of all slices share one prior, estimated from all of them: a mixture of normal
distributions centred at zero, from a point mass at zero to a scale wider than the largest
estimate, with weights fitted by maximum likelihood (EM; adaptive shrinkage, Stephens 2017,
"False discovery rates: a new deal"). Each slice's shrunk divergence is its posterior mean:
where the data hold no real divergence the prior is concentrated at zero and every estimate
shrinks towards it; a large, precisely measured divergence keeps almost all of its size.
"""
from __future__ import annotations

import numpy as np

from .shrinkage_kernel import children_of_subsets, hash_children, nearest_parents

__all__ = ["shrink", "shrink_lattice", "prior_scales"]

#: prior weight (pseudo-count) of the null component, as adaptive shrinkage's default
NULL_PSEUDOCOUNT = 10.0
#: most slices the prior is fitted on (a seeded subset beyond; every slice is shrunk)
FIT_MAX = 3_000
#: slices shrunk at a time
BLOCK = 8_192


def prior_scales(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The prior's components' variances for estimates ``x`` of variances ``v``: 0, then from a tenth
    of the smallest standard error to twice the largest plausible divergence, each twice the last
    (squared)."""
    lo = max(float(np.sqrt(v.min())) / 10.0, 1e-12)
    hi = max(2.0 * float(np.sqrt(max((x * x - v).max(), 0.0))), 8.0 * lo)
    k = int(np.ceil(np.log2(hi / lo))) + 1
    return np.concatenate([[0.0], (lo * 2.0 ** np.arange(k)) ** 2])


def shrink(estimate: np.ndarray, se: np.ndarray, *, max_iter: int = 100, tol: float = 1e-4,
           null_pseudocount: float = NULL_PSEUDOCOUNT) -> np.ndarray:
    """Posterior mean of each true divergence under a prior fitted to all of them.

    Parameters
    ----------
    estimate : the divergences (NaN: left out, stays NaN).
    se : their standard errors (NaN or not positive: left out; the estimate is returned as
        it is when the standard error is 0, there is nothing to shrink).
    """
    est = np.asarray(estimate, dtype=float)
    s = np.asarray(se, dtype=float)
    out = np.full(est.shape, np.nan)
    exact = np.isfinite(est) & (s == 0)
    out[exact] = est[exact]
    ok = np.isfinite(est) & np.isfinite(s) & (s > 0)
    if not ok.any():
        return out
    x, v = est[ok], s[ok] ** 2
    scales2 = prior_scales(x, v)
    # the prior is fitted on at most FIT_MAX slices (a fixed, seeded subset), every slice shrunk
    fit = None
    if x.size > FIT_MAX:
        fit = np.sort(np.random.default_rng(0).choice(x.size, FIT_MAX, replace=False))
    # the likelihoods and posterior means with the prior's components as rows and the slices as
    # columns (each operation along a row of slices; the sums over components in numpy's order,
    # _component_sums), in blocks of slices that stay in the CPU's cache (each slice's arithmetic
    # the same whatever the block); with one block, its likelihoods are also the fit's
    whole = x.size <= BLOCK
    if whole:
        total = scales2[:, None] + v[None, :]
        lik = _likelihood_columns(x, total)
        on = lik if fit is None else lik[:, fit]
    else:
        on = _likelihood_columns(x[fit], scales2[:, None] + v[fit][None, :])
    w = _fit_weights(np.ascontiguousarray(on.T), max_iter, tol, null_pseudocount)
    factor = np.empty(x.size)
    for a in range(0, x.size, BLOCK):
        if not whole:
            total = scales2[:, None] + v[None, a:a + BLOCK]
            lik = _likelihood_columns(x[a:a + BLOCK], total)
        post = lik
        post *= w[:, None]
        post /= _component_sums(post)[None, :]
        post *= np.divide(scales2[:, None], total, out=total)  # each component's share of the slice's variance
        factor[a:a + BLOCK] = _component_sums(post)
    out[ok] = x * factor
    return out


def _likelihood_columns(x: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each estimate's likelihood under each prior component, a row per component and a column per
    estimate, scaled per column (columns sum freely), from ``total`` (the estimates' variances plus
    each component's, kept): ``−(log total + x²/total)/2`` less its largest over the components,
    exponentiated."""
    lik = np.log(total)
    lik += (x ** 2)[None, :] / total
    lik *= -0.5
    lik -= lik.max(axis=0)[None, :]
    return np.exp(lik, out=lik)


def _component_sums(a: np.ndarray) -> np.ndarray:
    """Each column's sum over the rows of ``a`` (components x estimates), in the order numpy sums a
    row of ``a.T`` held contiguously (``np.ascontiguousarray(a.T).sum(axis=1)``, the same floats to
    the last bit; a test holds it to that): from 0, the rows one by one when there are fewer than 8,
    else numpy's pairwise sum of up to 128 (eight running sums, combined in pairs, then the rest)."""
    k = a.shape[0]
    if k < 8:
        res = np.zeros(a.shape[1])
        for j in range(k):
            res += a[j]
        return res
    if k > 128:  # beyond one pairwise block: numpy's own sum
        return np.ascontiguousarray(a.T).sum(axis=1)
    r = a[:8].copy()
    i = 8
    while i < k - k % 8:
        r += a[i:i + 8]
        i += 8
    res = (r[0] + r[1]) + (r[2] + r[3])
    res += (r[4] + r[5]) + (r[6] + r[7])
    for j in range(i, k):
        res += a[j]
    return 0.0 + res


def _fit_weights(lik: np.ndarray, max_iter: int, tol: float, null_pseudocount: float = NULL_PSEUDOCOUNT) -> np.ndarray:
    """Maximum penalized-likelihood mixture weights: EM, accelerated by SQUAREM (Varadhan and
    Roland 2008), until no weight moves by more than ``tol``."""
    prior = np.ones(lik.shape[1])
    prior[0] = null_pseudocount

    def step(w):
        counts = w * (lik.T @ (1.0 / (lik @ w))) + prior - 1.0
        return np.maximum(counts, 0.0) / max(counts.sum(), 1e-300)

    def objective(w):
        return float(np.log(lik @ w).sum() + ((prior - 1.0) * np.log(np.maximum(w, 1e-300))).sum())

    w = np.full(lik.shape[1], 1.0 / lik.shape[1])
    for _ in range(max_iter):
        w1 = step(w)
        w2 = step(w1)
        r, u = w1 - w, w2 - 2.0 * w1 + w
        nr, nu = float(np.sqrt(r @ r)), float(np.sqrt(u @ u))
        new = w2
        if nu > 0:
            a = -nr / nu
            trial = np.maximum(w - 2.0 * a * r + a * a * u, 0.0)
            if trial.sum() > 0:
                trial = step(trial / trial.sum())
                if objective(trial) >= objective(w2):
                    new = trial
        done = float(np.abs(new - w).max()) < tol
        w = new
        if done:
            break
    return w


def shrink_lattice(codes: np.ndarray, n: np.ndarray, s: np.ndarray, q: np.ndarray, binary: bool,
                   index_of, subsets: dict | None = None, parent: np.ndarray | None = None) -> np.ndarray:
    """Shrunk divergences that respect the lattice: a refinement shrunk towards its parent.

    A slice S with parent J (an itemset one item shorter, holding S's rows) has the increment
    ``d = raw(S) − shrunk(J)`` over what the parent's divergence is estimated to be: where J keeps
    its size that is ``mean(S) − mean(J)``, of variance ``σ²(1/n_S − 1/n_J)`` (σ² pooled in J for a
    0/1 outcome; for a real one S's variance taken as at least J's), the overlap of the two slices
    accounted for; where J shrinks to 0 (its divergence is not told from noise) it is S's own
    divergence from the whole dataset, of variance ``σ²(1/n_S − 1/N)``, so that an interaction of
    items that do not diverge alone keeps its size as a single item does (between the two, see
    :func:`_parent_terms`). The parent is the one-item-shorter subset the increment is smallest
    against (in standard errors): the subset S is most like. The increments of each length share a
    prior (:func:`shrink`, fitted on that length's increments: the whole dataset is the parent of
    every single item), so where the data hold real cohorts at one length and only noise in their
    refinements, a refinement's increment shrinks to about 0 and the refinement to its parent's
    shrunk value, while a real cohort keeps its size. The shrunk divergence is the sum of the
    shrunk increments along the path (row 0, the whole dataset, is 0).

    ``codes``: the itemsets (row 0 the whole dataset); ``n``, ``s``, ``q``: the metric's defined
    count, shifted sum and sum of squares per itemset; ``index_of``: code rows to itemset rows (-1
    when not listed); ``subsets``: a dict kept between calls on the same itemsets (each length's
    rows and one-item-shorter subsets, looked up once for every metric); ``parent``: each itemset
    without its last attribute's item (the lattice's, -1 for none), when known: the subsets are then
    found from the shorter itemsets' subsets (:func:`_subsets_from_parents`), ``index_of`` asked only
    for those it does not find."""
    n = np.ascontiguousarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    q = np.asarray(q, dtype=float)
    n_items = codes.shape[0]
    out = np.full(n_items, np.nan)
    if n_items == 0:
        return out
    out[0] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)
        var = np.where(n > 1, np.maximum(q - s * mean, 0.0) / np.maximum(n - 1.0, 1.0), np.nan)
    cache = {} if subsets is None else subsets
    shape = cache.get("shape")
    if shape is None:  # each itemset's length and last attribute, found once for every metric
        present = codes >= 0
        lengths = np.zeros(n_items, dtype=np.int64)
        for j in range(codes.shape[1]):  # a column at a time: twice as fast as a sum over rows of 11
            lengths += present[:, j]
        last = (codes.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1) if codes.shape[1]
                else np.zeros(n_items, dtype=np.int64))
        rank = np.zeros(n_items, dtype=np.int64)  # each itemset's place among those of its length
        for length in range(int(lengths.max(initial=0)) + 1):
            at = np.nonzero(lengths == length)[0]
            rank[at] = np.arange(at.size)
        shape = cache["shape"] = (lengths, last, rank)
    lengths, last = shape[:2]
    # the terms of the increment that are the parent's alone, for row 0 and then for each length
    # as its shrunk values are known (see _parent_terms); read at each one-item-shorter subset
    terms = np.empty((6, n_items))
    _parent_terms(terms, np.zeros(1, dtype=np.int64), n, mean, out, binary)
    for length in range(1, int(lengths.max(initial=0)) + 1):
        if length not in cache and not (lengths == length).any():
            cache[length] = np.zeros(0, dtype=np.int64), np.zeros((0, length), dtype=np.int64)
        if length not in cache:
            rows = np.nonzero(lengths == length)[0]
            # every one-item-shorter subset of these itemsets, looked up at once
            if length == 1:
                found = np.zeros(rows.size, dtype=np.int64)
            elif parent is not None and length - 1 in cache:
                found = _subsets_from_parents(codes, rows, length, last, parent, cache, index_of)
            else:
                found = np.asarray(index_of(_without_each_item(codes, rows, length)), dtype=np.int64)
            cache[length] = rows, found.reshape(rows.size, length)
        rows, parents = cache[length]
        if rows.size == 0:
            continue
        # each slice's increment over the subset it is nearest (see _parent_terms and the kernel)
        best_d, best_se = np.empty(rows.size), np.empty(rows.size)
        best_parent = np.empty(rows.size, dtype=np.int64)
        nearest_parents(rows, np.ascontiguousarray(parents), n, mean, var, terms, int(binary), best_d, best_se,
                        best_parent)
        # a real increment is rare among many: the null's pseudo-count grows with their number (as
        # many as there are increments), so a lucky one (|z| about 3 among tens, 4 among thousands)
        # keeps its parent's value while a real one, measured precisely, keeps its size
        shrunk = shrink(best_d, best_se, null_pseudocount=max(NULL_PSEUDOCOUNT, float(np.isfinite(best_d).sum())))
        ok = best_parent >= 0
        out[rows[ok]] = out[best_parent[ok]] + shrunk[ok]
        # a mined table lists each length's itemsets together: its rows read as a slice, not gathered
        contiguous = int(rows[-1]) - int(rows[0]) + 1 == rows.size
        _parent_terms(terms, slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows, n, mean, out, binary)
    return out


def _without_each_item(codes: np.ndarray, rows: np.ndarray, length: int) -> np.ndarray:
    """Each itemset of ``rows`` (all of ``length`` items) without each of its items in turn, its
    attributes in ascending order: ``length`` code rows per itemset."""
    present = codes[rows] >= 0
    attrs = np.nonzero(present)[1].reshape(rows.size, length)  # each itemset's attributes, ascending
    subs = np.repeat(codes[rows], length, axis=0)
    subs[np.arange(subs.shape[0]), attrs.ravel()] = -1
    return subs


def _subsets_from_parents(codes: np.ndarray, rows: np.ndarray, length: int, last: np.ndarray, parent: np.ndarray,
                          cache: dict, index_of) -> np.ndarray:
    """Each itemset of ``rows`` (all of ``length`` items) without its j-th attribute's item (its
    attributes in ascending order; ``length`` rows per itemset, raveled) from the lattice: without the
    last attribute's item (``last``: each itemset's last attribute) it is the itemset's parent P;
    without an earlier one, the child by that last item of P's subset without the same item (one
    length shorter, in ``cache``). The rows found are right when every parent is its itemset without
    its last item (checked once, over the whole lattice, and kept in ``cache``); otherwise each is
    checked against its codes. The rest (a subset the lattice does not hold so) are looked up by
    ``index_of``: the same rows as ``index_of`` of every subset."""
    parent = np.asarray(parent, dtype=np.int64)
    lengths = cache["shape"][0]
    p = parent[rows]
    last_attr = last[rows]
    last_val = codes[rows, last_attr].astype(np.int64)
    found: np.ndarray = np.full((rows.size, length), -1, dtype=np.int64)  # 2-D, then raveled
    found[:, -1] = p
    prev_rows, prev_subs = cache[length - 1]
    if length > 1 and prev_rows.size:
        child = cache.get("children")
        if child is None:  # (parent, last item) -> itemset, for every itemset with a parent, in a hash table
            width = int(codes.max(initial=0)) + 2
            has = np.nonzero(parent >= 0)[0]
            at = np.where(lengths[has] > 0, last[has], 0)
            keys = (parent[has] * codes.shape[1] + at) * width + codes[has, at].astype(np.int64)
            bits = max(int(keys.size * 2 - 1).bit_length(), 4)  # at most half the slots filled
            table = np.zeros((1 << bits, 2), dtype=np.int64)
            table[:, 1] = -1
            hash_children(keys, has, bits, table)
            child = cache["children"] = (table, bits, width)
        table, bits, width = child
        rank = cache["shape"][2]  # P's row among the shorter itemsets', when P is one of them
        pos = np.where((p >= 0) & (lengths[np.maximum(p, 0)] == length - 1), rank[np.maximum(p, 0)], -1)
        children_of_subsets(pos, np.ascontiguousarray(prev_subs), np.ascontiguousarray(last_attr), last_val,
                            codes.shape[1], width, bits, table, found)
    found = found.ravel()
    good = found >= 0
    hold = cache.get("parents hold")
    if hold is None:  # is every itemset's parent the itemset without its last attribute's item?
        # (yes when the parent lacks the last item and differs from the itemset in that one column)
        has = np.nonzero(parent >= 0)[0]
        up = codes[parent[has]]
        hold = cache["parents hold"] = bool((lengths[has] > 0).all() and (up[np.arange(has.size), last[has]] < 0).all()
                                            and np.count_nonzero(up != codes[has]) == has.size)
    if not hold:
        good[good] = np.all(codes[found[good]] == _without_each_item(codes, rows, length)[good], axis=1)
    if not good.all():
        missing = np.nonzero(~good)[0]
        at, item = np.divmod(missing, length)
        listed, where = np.unique(at, return_inverse=True)
        subs = _without_each_item(codes, rows[listed], length)
        found[missing] = np.asarray(index_of(subs[where * length + item]), dtype=np.int64)
    return found


def _parent_terms(terms: np.ndarray, at: np.ndarray | slice, n: np.ndarray, mean: np.ndarray, shrunk: np.ndarray,
                  binary: bool) -> None:
    """The parts of a slice's increment (:func:`divergence.stats.shrinkage_kernel.nearest_parents`) that
    are its parent J's alone, computed once per parent and read at each of its children, written in
    ``terms``' columns ``at`` (J's rows, an index array or a slice): with ``f = shrunk(J)/raw(J)`` clipped to [0, 1] (1 where
    J's raw divergence is 0 or f is not finite), the rows are ``f·mean_J``, ``(1−f)·mean_0``,
    ``f(2−f)/n_J``, ``(1−f)²/N`` and, for a 0/1 outcome, ``σ² = mean_J(1−mean_J)``; row 5 is J's
    count. Row 0 of the table (the whole dataset) gives ``N`` and ``mean_0``."""
    n_j, mean_j = n[at], mean[at]
    n_0, mean_0 = n[0], mean[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        raw_j = mean_j - mean_0
        f = np.where(raw_j != 0, shrunk[at] / np.where(raw_j != 0, raw_j, 1.0), 1.0)
        f = np.clip(np.where(np.isfinite(f), f, 1.0), 0.0, 1.0)
        terms[0, at] = f * mean_j
        terms[1, at] = (1.0 - f) * mean_0
        terms[2, at] = f * (2.0 - f) * (1.0 / np.where(n_j > 0, n_j, np.nan))
        terms[3, at] = (1.0 - f) ** 2 / n_0
        terms[4, at] = mean_j * (1.0 - mean_j) if binary else np.nan
    terms[5, at] = n_j

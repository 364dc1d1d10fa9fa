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

__all__ = ["shrink"]

#: prior weight (pseudo-count) of the null component, as adaptive shrinkage's default
NULL_PSEUDOCOUNT = 10.0


def shrink(estimate: np.ndarray, se: np.ndarray, *, max_iter: int = 500, tol: float = 1e-8) -> np.ndarray:
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
    # the grid of prior scales: 0, then from a tenth of the smallest standard error to twice
    # the largest plausible divergence, each sqrt(2) times the last
    lo = max(float(np.sqrt(v.min())) / 10.0, 1e-12)
    hi = max(2.0 * float(np.sqrt(max((x * x - v).max(), 0.0))), 8.0 * lo)
    k = int(np.ceil(np.log(hi / lo) / np.log(np.sqrt(2.0)))) + 1
    scales2 = np.concatenate([[0.0], (lo * np.sqrt(2.0) ** np.arange(k)) ** 2])
    total = v[:, None] + scales2[None, :]
    loglik = -0.5 * (np.log(total) + x[:, None] ** 2 / total)
    loglik -= loglik.max(axis=1, keepdims=True)
    lik = np.exp(loglik)
    prior = np.ones(scales2.size)
    prior[0] = NULL_PSEUDOCOUNT
    w = np.full(scales2.size, 1.0 / scales2.size)
    w[0] = 0.5
    w /= w.sum()
    last = -np.inf
    for _ in range(max_iter):
        mix = lik * w[None, :]
        norm = mix.sum(axis=1, keepdims=True)
        post = mix / norm
        objective = float(np.log(norm).sum() + ((prior - 1.0) * np.log(np.maximum(w, 1e-300))).sum())
        counts = post.sum(axis=0) + prior - 1.0
        w = np.maximum(counts, 0.0) / max(counts.sum(), 1e-300)
        if objective - last < tol * max(1.0, abs(objective)):
            break
        last = objective
    mix = lik * w[None, :]
    post = mix / mix.sum(axis=1, keepdims=True)
    factor = (post * (scales2[None, :] / total)).sum(axis=1)
    out[ok] = x * factor
    return out

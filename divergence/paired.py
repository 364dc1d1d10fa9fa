"""Paired tests and intervals for the change between two models measured on the same rows.

Everything works on per-slice tallies, vectorized over slices:

- 0/1 outcomes: McNemar's exact test (a two-sided binomial test of the discordant rows,
  ``n10`` of ``n10 + n01`` at 1/2) and Tango's score interval for the difference of paired
  proportions ``(n10 - n01) / n``.
- Real outcomes (the per-row difference ``d = model − reference``): the larger of two
  p-values, each valid where the other may fail (see :class:`PooledNull` and :func:`paired_t`):
  Student's paired t on the slice's own ``d`` (valid when the slice shows its own spread;
  wrong for skewed ``d`` in small slices that missed the tail) and the mean of the slice's
  ``n`` rows against ``n`` draws from the whole dataset's centred differences, computed by a
  saddlepoint approximation (valid for a slice whose differences are shaped like the
  dataset's, tail included, however skewed; wrong for a slice whose spread is larger). The
  maximum of two p-values is valid whenever either one is; its interval is the union of the
  two intervals, so the interval excludes 0 exactly when the test rejects.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mcnemar_p", "paired_proportion_interval", "paired_t", "PooledNull"]


# ----------------------------------------------------------------------------- 0/1 outcomes

def mcnemar_p(n10: np.ndarray, n01: np.ndarray) -> np.ndarray:
    """McNemar's exact two-sided p-value: ``n10`` successes in ``n10 + n01`` trials at 1/2.

    As ``scipy.stats.binomtest(n10, n10 + n01, 0.5).pvalue`` (the binomial at 1/2 is
    symmetric, so the tables at most as likely are the two tails beyond the smaller count);
    1 where no row is discordant (the models agree on every row: nothing against no change).
    """
    from scipy import special as sp

    b = np.rint(np.asarray(n10, dtype=float))
    c = np.rint(np.asarray(n01, dtype=float))
    m = b + c
    with np.errstate(invalid="ignore"):
        p = np.where(b == c, 1.0, 2.0 * sp.bdtr(np.minimum(b, c), np.where(m > 0, m, 1.0), 0.5))
    return np.minimum(np.where(m > 0, p, 1.0), 1.0)


def _tango_z(delta, b, c, n):
    """Tango's score statistic for the paired difference ``delta`` (decreasing in delta)."""
    a2 = 2.0 * n
    bb = -b - c + (2.0 * n - b + c) * delta
    cc = -c * delta * (1.0 - delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (-bb + np.sqrt(np.maximum(bb * bb - 4.0 * a2 * cc, 0.0))) / (2.0 * a2)
        var = n * (2.0 * r + delta - delta * delta)
        num = b - c - n * delta
        z = np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)),
                     np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0)))
    return z


def paired_proportion_interval(n10: np.ndarray, n01: np.ndarray, n: np.ndarray,
                               confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Tango's (1998) score interval for ``(n10 − n01) / n``, the change of a 0/1 outcome
    between two models on the same ``n`` rows: every change its score test does not reject.
    It never collapses to a point (no discordant row still gives ±z²/(n + z²)); NaN where n is 0.
    """
    from .stats import z_value

    z = z_value(confidence)
    b = np.asarray(n10, dtype=float)
    c = np.asarray(n01, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = n > 0
    nn = np.where(ok, n, 1.0)
    est = (b - c) / nn
    bounds = []
    for target, lo, hi in ((z, -np.ones_like(est), est), (-z, est, np.ones_like(est))):
        lo, hi = lo.copy(), hi.copy()
        for _ in range(60):  # bisection: the statistic decreases in delta
            mid = 0.5 * (lo + hi)
            above = _tango_z(mid, b, c, nn) > target
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        bounds.append(0.5 * (lo + hi))
    low, high = bounds
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


# ----------------------------------------------------------------------------- real outcomes

def paired_t(n: np.ndarray, mean: np.ndarray, var: np.ndarray,
             confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Student's paired t: two-sided p-value of mean 0 and the interval of the mean, from the
    slice's row count, mean difference and sample variance (n − 1 denominator). NaN below
    2 rows; a slice whose differences are all equal gets p = 1 if they are 0, else 0."""
    from scipy import special as sp

    n = np.asarray(n, dtype=float)
    ok = n >= 2
    nn = np.where(ok, n, 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(var, 0.0) / nn)
        t = np.abs(mean) / np.where(se > 0, se, 1.0)
        p = 2.0 * sp.stdtr(nn - 1.0, -t)
        p = np.where(se > 0, p, np.where(mean == 0, 1.0, 0.0))
        half = sp.stdtrit(nn - 1.0, 0.5 + confidence / 2.0) * se
    nan = np.full(n.shape, np.nan)
    return (np.where(ok, np.minimum(p, 1.0), nan), np.where(ok, mean - half, nan),
            np.where(ok, mean + half, nan))


#: points of the λ grid on which the cumulant generating function is tabulated
GRID = 601
#: the whole dataset's differences are tabulated exactly up to this many distinct values;
#: beyond, the sorted middle is merged into equal-count groups (the extremes stay exact)
EXACT_VALUES = 2048
_KEEP_EXTREMES = 256


def _reduce(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values with their weights; many values: the sorted middle in equal-count groups
    (their mean), the ``_KEEP_EXTREMES`` smallest and largest kept as they are."""
    v, c = np.unique(values, return_counts=True)
    if v.size <= EXACT_VALUES:
        return v, c.astype(float)
    e = np.sort(values)
    k = _KEEP_EXTREMES
    mid = e[k:e.size - k]
    groups = EXACT_VALUES - 2 * k
    edges = np.linspace(0, mid.size, groups + 1).astype(np.int64)
    sums = np.add.reduceat(mid, edges[:-1])
    counts = np.diff(edges).astype(float)
    return (np.concatenate([e[:k], sums / counts, e[e.size - k:]]),
            np.concatenate([np.ones(k), counts, np.ones(k)]))


class PooledNull:
    """The distribution of the mean of ``n`` rows drawn from the whole dataset's differences,
    centred at 0: the null of a slice whose differences are shaped like everyone's.

    Tail probabilities come from the Lugannani–Rice / Barndorff-Nielsen r* saddlepoint
    approximation on the empirical cumulant generating function K(λ) = log mean exp(λ e),
    tabulated once on a grid of λ (the rate function λK'(λ) − K(λ) is interpolated with its
    derivative λ, cubic Hermite). It is the analytic counterpart of a bootstrap test of the
    mean from the pooled differences, accurate far into the tails, where a normal or
    Edgeworth approximation fails on skewed differences (squared errors, lognormal outcomes).
    """

    def __init__(self, differences: np.ndarray) -> None:
        d = np.asarray(differences, dtype=float)
        d = d[np.isfinite(d)]
        self.degenerate = d.size < 2 or float(np.ptp(d)) == 0.0
        if self.degenerate:
            return
        v, c = _reduce(d - d.mean())
        w0 = c / c.sum()
        v = v - float(np.sum(w0 * v))  # exactly centred after merging
        sd = float(np.sqrt(np.sum(w0 * v * v)))
        u = np.linspace(-np.arcsinh(2e5), np.arcsinh(2e5), GRID)
        lam = 0.05 * np.sinh(u) / sd
        k0, k1, k2 = (np.empty(GRID) for _ in range(3))
        for lo in range(0, GRID, 128):  # in blocks: a grid x values matrix at a time is large
            sl = slice(lo, min(lo + 128, GRID))
            le = lam[sl, None] * v[None, :]
            top = le.max(axis=1, keepdims=True)
            w = np.exp(le - top) * w0[None, :]
            s0 = w.sum(axis=1)
            k0[sl] = top[:, 0] + np.log(s0)
            k1[sl] = (w @ v) / s0
            k2[sl] = np.maximum((w @ (v * v)) / s0 - k1[sl] ** 2, 0.0)
        keep = np.ones(GRID, dtype=bool)
        keep[1:] = np.diff(k1) > 1e-12 * sd  # the far ends saturate at the extreme values
        keep &= k2 > 1e-12 * sd * sd
        self.lam, self.x, self.k2 = lam[keep], k1[keep], k2[keep]
        self.rate = self.lam * self.x - k0[keep]  # the rate function I(x) at the grid points
        self.sd = sd

    def _r(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Barndorff-Nielsen's r* for a mean x of n draws (x beyond the grid: its end, which
        makes the p-value larger, never smaller)."""
        xc = np.clip(x, self.x[0], self.x[-1])
        j = np.clip(np.searchsorted(self.x, xc) - 1, 0, self.x.size - 2)
        x0, x1 = self.x[j], self.x[j + 1]
        h = x1 - x0
        t = (xc - x0) / h
        h00, h10 = 2 * t ** 3 - 3 * t ** 2 + 1, t ** 3 - 2 * t ** 2 + t
        h01, h11 = -2 * t ** 3 + 3 * t ** 2, t ** 3 - t ** 2
        rate = np.maximum(h00 * self.rate[j] + h10 * h * self.lam[j] + h01 * self.rate[j + 1]
                          + h11 * h * self.lam[j + 1], 0.0)
        lam = self.lam[j] + t * (self.lam[j + 1] - self.lam[j])
        k2 = self.k2[j] + t * (self.k2[j + 1] - self.k2[j])
        w = np.sign(xc) * np.sqrt(2.0 * n * rate)
        u = lam * np.sqrt(n * k2)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = w + np.log(u / w) / w
        # near the centre r* is 0/0; there w alone is accurate (p above 0.7)
        return np.where((np.abs(w) < 0.3) | ~np.isfinite(r), w, r)

    def p_value(self, n: np.ndarray, mean: np.ndarray) -> np.ndarray:
        """Two-sided p-value of a slice mean difference ``mean`` over ``n`` rows (NaN below 1)."""
        from scipy import special as sp

        n = np.asarray(n, dtype=float)
        mean = np.asarray(mean, dtype=float)
        if self.degenerate:
            p = np.where(mean == 0, 1.0, 0.0)
        else:
            p = np.minimum(1.0, 2.0 * sp.ndtr(-np.abs(self._r(np.maximum(n, 1.0), mean))))
        return np.where((n >= 1) & np.isfinite(mean), p, np.nan)

    def interval(self, n: np.ndarray, mean: np.ndarray,
                 confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """Every true mean μ the test does not reject at ``1 − confidence``: the slice mean
        minus the null's upper and lower quantiles for n rows."""
        from .stats import z_value

        n = np.asarray(n, dtype=float)
        mean = np.asarray(mean, dtype=float)
        ok = (n >= 1) & np.isfinite(mean)
        if self.degenerate:
            return np.where(ok, mean, np.nan), np.where(ok, mean, np.nan)
        z = z_value(confidence)
        nn = np.maximum(n, 1.0)
        qs = []
        for sign in (1.0, -1.0):
            # bisection over the grid: the first grid point (from 0 outwards) with |r*| >= z
            side = self.x > 0 if sign > 0 else self.x < 0
            xs = self.x[side] if sign > 0 else self.x[side][::-1]
            lo = np.zeros(n.shape, dtype=np.int64)
            hi = np.full(n.shape, xs.size - 1, dtype=np.int64)
            for _ in range(int(np.ceil(np.log2(max(xs.size, 2)))) + 1):
                mid = (lo + hi) // 2
                big = sign * self._r(nn, xs[mid]) >= z
                hi = np.where(big, mid, hi)
                lo = np.where(big, lo, np.minimum(mid + 1, hi))
            # refine between the bracketing grid points by bisection on x
            a = np.where(hi > 0, xs[np.maximum(hi - 1, 0)], 0.0)
            b = xs[hi]
            for _ in range(30):
                m = 0.5 * (a + b)
                big = sign * self._r(nn, m) >= z
                b = np.where(big, m, b)
                a = np.where(big, a, m)
            qs.append(b)
        q_hi, q_lo = qs
        return np.where(ok, mean - q_hi, np.nan), np.where(ok, mean - q_lo, np.nan)

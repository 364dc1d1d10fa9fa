"""Paired tests and intervals for the change between two models measured on the same rows.

Everything works on per-slice tallies, vectorized over slices:

- 0/1 outcomes: McNemar's exact test (a two-sided binomial test of the discordant rows,
  ``n10`` of ``n10 + n01`` at 1/2) and Tango's score interval for the difference of paired
  proportions ``(n10 - n01) / n``.
- Real outcomes (the per-row difference ``d = model − reference``): the larger of two
  p-values, each valid where the other may fail: Student's paired t on the slice's own ``d``
  (valid when the slice shows its own spread, e.g. a hard cohort where both models err more;
  wrong for skewed ``d`` in a small slice that missed the tail) and the slice mean against
  the mean of ``n`` draws from the whole dataset's differences tilted to mean 0
  (:class:`PooledNull`: valid for a slice whose differences are shaped like the dataset's,
  however skewed, including a slice that missed a rare tail; wrong for a slice whose spread
  is larger). The maximum of two p-values is valid wherever either one is; its interval is
  the union of the two intervals (each the set of changes its test does not reject), so
  the interval excludes 0 exactly when the test rejects.
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
        p = np.where(b == c, 1.0, 2.0 * sp.bdtr(np.minimum(b, c).astype(np.int64), np.where(m > 0, m, 1.0).astype(np.int64), 0.5))
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
    b = np.rint(np.asarray(n10, dtype=float))
    c = np.rint(np.asarray(n01, dtype=float))
    n = np.rint(np.asarray(n, dtype=float))
    if b.size > 1000:
        # slices often share their counts (a superset covering the same rows): each distinct
        # (n10, n01, n) once
        import pandas as pd

        base = float(np.nanmax(n)) + 1.0 if np.isfinite(n).any() else 1.0
        if base ** 3 < 2.0 ** 62 and np.all(np.isfinite(n)):
            key = (n.astype(np.int64) * int(base) + b.astype(np.int64)) * int(base) + c.astype(np.int64)
            inverse, uniq = pd.factorize(key)  # hashing, not sorting
            first = np.zeros(len(uniq), dtype=np.int64)
            first[inverse[::-1]] = np.arange(b.size - 1, -1, -1)  # a row holding each triple
        else:
            _, first, inverse = np.unique(np.column_stack([b, c, n]), axis=0, return_index=True,
                                          return_inverse=True)
            inverse = inverse.reshape(-1)
        if len(first) < 0.8 * b.size:
            lo, hi = _tango_interval(b[first], c[first], n[first], z)
            return lo[inverse], hi[inverse]
    return _tango_interval(b, c, n, z)


def _tango_interval(b: np.ndarray, c: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    ok = n > 0
    nn = np.where(ok, n, 1.0)
    est = (b - c) / nn
    bounds = []
    for target, lo, hi in ((z, -np.ones_like(est), est), (-z, est, np.ones_like(est))):
        lo, hi = lo.copy(), hi.copy()
        for _ in range(48):  # bisection to 2^-47: the statistic decreases in delta
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


class _Saddle:
    """The mean of n draws from a weighted set of values: its CDF by the Lugannani–Rice /
    Barndorff-Nielsen r* saddlepoint approximation on the empirical cumulant generating
    function K(λ) = log Σ w exp(λ (v − μ)), tabulated once on a grid of λ; the rate function
    λK'(λ) − K(λ) is interpolated with its derivative λ (cubic Hermite)."""

    def __init__(self, values: np.ndarray, weights: np.ndarray, grid: int) -> None:
        w0 = weights / weights.sum()
        self.mu = float(np.sum(w0 * values))
        v = values - self.mu
        sd = float(np.sqrt(np.sum(w0 * v * v)))
        self.point = None
        if not sd > 0 or values.size < 2:
            self.point = self.mu  # a single value: the mean of n draws is that value
            return
        u = np.linspace(-np.arcsinh(2e5), np.arcsinh(2e5), grid)
        lam = 0.05 * np.sinh(u) / sd
        k0, k1, k2 = (np.empty(grid) for _ in range(3))
        v_lo, v_hi = float(v.min()), float(v.max())
        for lo in range(0, grid, 128):  # in blocks: a grid x values matrix at once is large
            sl = slice(lo, min(lo + 128, grid))
            le = lam[sl, None] * v[None, :]
            top = np.where(lam[sl] > 0, lam[sl] * v_hi, lam[sl] * v_lo)[:, None]
            w = np.exp(le - top) * w0[None, :]
            s0 = w.sum(axis=1)
            k0[sl] = top[:, 0] + np.log(s0)
            k1[sl] = (w @ v) / s0
            k2[sl] = np.maximum((w @ (v * v)) / s0 - k1[sl] ** 2, 0.0)
        keep = np.ones(grid, dtype=bool)
        keep[1:] = np.diff(k1) > 1e-12 * sd  # the far ends saturate at the extreme values
        keep &= k2 > 1e-12 * sd * sd
        self.lam, self.x, self.k2 = lam[keep], k1[keep], k2[keep]
        self.rate = self.lam * self.x - k0[keep]  # the rate function I(x) at the grid points
        self.sd = sd

    def r(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """r* of a mean x of n draws (x beyond the grid: its end)."""
        xc = np.minimum(np.maximum(x - self.mu, self.x[0]), self.x[-1])
        j = np.minimum(np.maximum(np.searchsorted(self.x, xc) - 1, 0), self.x.size - 2)
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

    def cdf(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """P(mean of n draws <= x)."""
        from scipy import special as sp

        if self.point is not None:
            return np.where(x >= self.point, 1.0, 0.0)
        return sp.ndtr(self.r(n, x))

    def sf(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """P(mean of n draws >= x)."""
        from scipy import special as sp

        if self.point is not None:
            return np.where(x <= self.point, 1.0, 0.0)
        return sp.ndtr(-self.r(n, x))


#: shares of the whole dataset's most extreme differences that a slice may miss entirely
#: (see PooledNull); a ladder, so a rare tail of any size between 0.05% and 20% is near one
TAIL_SHARES = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
#: λ grid and value count of the trimmed distributions (their tails are lighter)
TRIMMED_GRID = 201
TRIMMED_VALUES = 768


def _merge(v: np.ndarray, c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted weighted values in at most ``size`` points: the ``size // 6`` smallest and largest
    as they are, the middle in groups of equal count (their weighted mean)."""
    if v.size <= size:
        return v, c
    k = size // 6
    mid_v, mid_c = v[k:v.size - k], c[k:c.size - k]
    groups = size - 2 * k
    edges = np.linspace(0, mid_v.size, groups + 1).astype(np.int64)
    wsum = np.add.reduceat(mid_c, edges[:-1])
    vsum = np.add.reduceat(mid_v * mid_c, edges[:-1])
    return (np.concatenate([v[:k], vsum / wsum, v[v.size - k:]]),
            np.concatenate([c[:k], wsum, c[c.size - k:]]))


class _Lazy:
    """A trimmed distribution's saddlepoint, tabulated on first use (most slices never need it)."""

    def __init__(self, values: np.ndarray, weights: np.ndarray) -> None:
        self.values, self.weights = values, weights
        self.saddle: _Saddle | None = None

    def _get(self) -> _Saddle:
        if self.saddle is None:
            self.saddle = _Saddle(*_merge(self.values, self.weights, TRIMMED_VALUES), TRIMMED_GRID)
        return self.saddle

    def cdf(self, n, x):
        return self._get().cdf(n, x)

    def sf(self, n, x):
        return self._get().sf(n, x)


def _tilt_to_zero(v: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Weights ∝ c·exp(η v) with weighted mean exactly 0: the distribution closest to the data
    (in Kullback–Leibler divergence) under which there is no change. Unlike shifting every
    value by the mean, tilting moves weight: a rare tail that the data hold a little less
    often than the null needs gets a little more weight, and the bulk stays where it is.
    Where 0 is not between the smallest and largest value, the values are shifted instead."""
    lo, hi = float(v.min()), float(v.max())
    w = c / c.sum()
    if not (lo < 0.0 < hi):
        return c  # cannot tilt: the caller's values are then shifted (see PooledNull)
    a, b = -50.0 / (hi - lo) * 1e3, 50.0 / (hi - lo) * 1e3
    for _ in range(200):  # bisection on η: the tilted mean increases with η
        eta = 0.5 * (a + b)
        z = eta * v
        e = np.exp(z - z.max()) * w
        if float(e @ v) > 0:
            b = eta
        else:
            a = eta
    z = 0.5 * (a + b) * v
    e = np.exp(z - z.max()) * w
    return e / e.sum() * c.sum()


def _raise(p: np.ndarray, n: np.ndarray, x: np.ndarray, share: float, tail) -> np.ndarray:
    """max(p, (1 − share)^n · tail(n, x)), evaluated only where the factor is not negligible."""
    factor = np.exp(n * np.log1p(-share))
    live = factor > p  # the bound can only matter where it exceeds p (tail <= 1)
    if not live.any():
        return p
    out = p.copy()
    out[live] = np.maximum(p[live], factor[live] * tail(n[live], x[live]))
    return out


class PooledNull:
    """The distribution of the mean of ``n`` rows drawn from the whole dataset's differences,
    exponentially tilted to mean 0 (:func:`_tilt_to_zero`): the null of a slice whose
    differences are shaped like everyone's (the analytic counterpart of a bootstrap test of
    the mean from the pooled differences, with the null imposed by tilting).

    Each tail probability is the larger of two approximations of the same bootstrap law:

    - the saddlepoint approximation of the mean of n draws (:class:`_Saddle`), accurate far
      into the tails of smooth skewed distributions (squared errors, lognormal outcomes),
      where a normal or Edgeworth approximation fails;
    - for a slice that may have missed a rare tail altogether (a model exact on 98% of rows
      and far off on 2%: a slice of 100 rows has none of them with probability 0.13), the
      exact decomposition P(mean ≤ x) ≥ (1 − q)^n · P(mean of n draws from the rest ≤ x),
      where q is the share of the largest differences (the smallest, for the upper tail),
      maximised over the shares in ``TAIL_SHARES``. The saddlepoint of the whole distribution
      is continuous and misses this point mass of "no tail row at all"; the bound restores it.
    """

    def __init__(self, differences: np.ndarray) -> None:
        d = np.asarray(differences, dtype=float)
        d = d[np.isfinite(d)]
        self.degenerate = d.size < 2 or float(np.ptp(d)) == 0.0
        if self.degenerate:
            return
        v, c = _reduce(d)
        if v.min() < 0.0 < v.max():
            c = _tilt_to_zero(v, c)
        else:  # every difference on one side of 0: no tilt reaches mean 0, shift instead
            v = v - float(np.sum(c * v) / c.sum())
        self.main = _Saddle(v, c, GRID)
        total = c.sum()
        cum_hi = np.cumsum(c[::-1])[::-1]  # weight at or above each value
        cum_lo = np.cumsum(c)  # weight at or below each value
        self.lower, self.upper = [], []  # (share missed, saddle of the rest)
        seen_lo, seen_hi = set(), set()
        for q in TAIL_SHARES:
            # lower tail: the slice missed the largest values (at most a share q of the weight)
            cut = int(np.searchsorted(-cum_hi, -q * total, side="left"))  # first index with cum_hi <= q
            if cut < v.size and cut >= 2 and cut not in seen_lo:
                seen_lo.add(cut)
                share = float(cum_hi[cut] / total)
                self.lower.append((share, _Lazy(v[:cut], c[:cut])))
            cut = int(np.searchsorted(cum_lo, q * total, side="right"))  # values [cut:] remain
            if cut > 0 and v.size - cut >= 2 and cut not in seen_hi:
                seen_hi.add(cut)
                share = float(cum_lo[cut - 1] / total)
                self.upper.append((share, _Lazy(v[cut:], c[cut:])))

    def lower_tail(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """P(mean of n draws <= x) under the pooled null."""
        p = self.main.cdf(n, x)
        for share, rest in self.lower:
            p = _raise(p, n, x, share, rest.cdf)
        return p

    def upper_tail(self, n: np.ndarray, x: np.ndarray) -> np.ndarray:
        """P(mean of n draws >= x) under the pooled null."""
        p = self.main.sf(n, x)
        for share, rest in self.upper:
            p = _raise(p, n, x, share, rest.sf)
        return p

    def p_value(self, n: np.ndarray, mean: np.ndarray) -> np.ndarray:
        """Two-sided p-value of a slice mean difference ``mean`` over ``n`` rows (NaN below 1):
        twice the tail on the side of the observation."""
        n = np.asarray(n, dtype=float)
        mean = np.asarray(mean, dtype=float)
        ok = (n >= 1) & np.isfinite(mean)
        if self.degenerate:
            p = np.where(mean == 0, 1.0, 0.0)
        else:
            nn = np.maximum(n, 1.0)
            m = np.where(ok, mean, 0.0)
            tail = np.where(m < 0, self.lower_tail(nn, m), self.upper_tail(nn, m))
            p = np.minimum(1.0, 2.0 * tail)
        return np.where(ok, p, np.nan)

    def quantiles(self, n: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """For each n: the null's lower and upper quantiles (tails of (1 − confidence)/2)."""
        from .stats import z_value

        n = np.asarray(n, dtype=float)
        half = (1.0 - confidence) / 2.0
        guess = 3.0 * z_value(confidence) * self.main.sd / np.sqrt(n)  # three normal quantiles
        out = []
        for sign, tail, end in ((1.0, self.upper_tail, self.main.x[-1]), (-1.0, self.lower_tail, self.main.x[0])):
            b = sign * np.minimum(guess, abs(end))
            b = np.where(tail(n, b) <= half, b, end)  # tail(b) <= half (or b is the end of the support)
            a = np.zeros(n.shape)  # tail(a) > half
            for _ in range(32):
                m = 0.5 * (a + b)
                small = tail(n, m) <= half
                b = np.where(small, m, b)
                a = np.where(small, a, m)
            out.append(b)
        q_hi, q_lo = out
        return q_lo, q_hi

    def interval(self, n: np.ndarray, mean: np.ndarray,
                 confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """Every true mean μ the test does not reject at ``1 − confidence``: the slice mean
        minus the null's upper and lower quantiles for n rows (computed once per distinct n)."""
        n = np.asarray(n, dtype=float)
        mean = np.asarray(mean, dtype=float)
        ok = (n >= 1) & np.isfinite(mean)
        if self.degenerate:
            return np.where(ok, mean, np.nan), np.where(ok, mean, np.nan)
        distinct, inverse = np.unique(np.maximum(n, 1.0), return_inverse=True)
        q_lo, q_hi = self.quantiles(distinct, confidence)
        inverse = inverse.reshape(n.shape)
        return np.where(ok, mean - q_hi[inverse], np.nan), np.where(ok, mean - q_lo[inverse], np.nan)

"""Per-itemset statistics from the mined tallies: outcome, divergence, t-value, p-value.

``t`` is the divergence paper's score (Beta posteriors for a 0/1 outcome, Welch with
population variances otherwise), kept so results compare with the literature. ``p``
is a proper two-sided test of the slice against the rest of the rows (its
complement): Fisher's exact test for a 0/1 outcome (valid at any slice size), and
Welch's unequal-variance t-test otherwise.
"""
from __future__ import annotations

import math

import numpy as np

from ..prepare.tallies import metric_columns
from ..vocabulary import CORRECTIONS
from .fisher import fisher_exact_p

__all__ = ["beta_t", "welch_t", "fisher_exact_p", "welch_p", "slice_means", "CORRECTIONS", "adjust_p",
           "corrected_level", "detection_power", "first_enough", "smallest_enough", "interval_min_size",
           "interval_width", "mean_difference_test",
           "min_slice_size", "MIN_SIZE_POWER", "paired_power",
           "paired_min_size",
           "normal_quantile", "log_factorials", "rate_difference_interval", "RateDifference", "rest_skew", "SKEW_GUARD",
           "t_interval", "wilson_interval", "z_value"]


def slice_means(n: np.ndarray, s: np.ndarray, shift: float) -> np.ndarray:
    """Mean outcome per slice from defined count and shifted sum; NaN where nothing is defined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, shift + s / np.where(n > 0, n, 1), np.nan)


def beta_t(ones: np.ndarray, zeros: np.ndarray, ones_all: float, zeros_all: float) -> np.ndarray:
    """The paper's t for a 0/1 outcome: distance of Beta(1+ones, 1+zeros) posterior means
    over the root of their summed variances, slice against whole dataset."""
    a, b = 1.0 + ones, 1.0 + zeros
    a0, b0 = 1.0 + ones_all, 1.0 + zeros_all
    mean, mean0 = a / (a + b), a0 / (a0 + b0)
    var = a * b / ((a + b) ** 2 * (a + b + 1.0))
    var0 = a0 * b0 / ((a0 + b0) ** 2 * (a0 + b0 + 1.0))
    t = np.abs(mean - mean0) / np.sqrt(var + var0)
    return np.where(ones + zeros > 0, t, np.nan)


def welch_t(n: np.ndarray, s: np.ndarray, q: np.ndarray, n_all: float, s_all: float,
            q_all: float) -> np.ndarray:
    """The paper's t for a real outcome: Welch's statistic, slice against whole dataset,
    population variances. ``s`` and ``q`` are sums of the shifted outcome and its square."""
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(n > 0, n, 1.0)
        mean = s / safe
        var = np.maximum(q / safe - mean ** 2, 0.0)
        mean0 = s_all / n_all
        var0 = max(q_all / n_all - mean0 ** 2, 0.0)
        diff = np.abs(mean - mean0)
        den = np.sqrt(var / safe + var0 / n_all)
        t = np.where(den > 0, diff / np.where(den > 0, den, 1.0), np.where(diff > 0, np.inf, 0.0))
    return np.where(n > 0, t, np.nan)


def welch_p(n: np.ndarray, s: np.ndarray, q: np.ndarray, n_all: float, s_all: float,
            q_all: float) -> np.ndarray:
    """Two-sided Welch t-test p-value of each slice against its complement (real outcome).

    Falls back to the pooled-variance t-test where either side has a single row, and
    gives 1 or 0 where both sides are constant. NaN where either side is empty.
    """
    from scipy import special as _sp  # imported here: it costs 0.4 s, and 0/1 outcomes never need it

    n = np.asarray(n, dtype=float)
    nc = n_all - n
    sc, qc = s_all - s, q_all - q
    with np.errstate(invalid="ignore", divide="ignore"):
        n1, n2 = np.where(n > 0, n, 1.0), np.where(nc > 0, nc, 1.0)
        m1, m2 = s / n1, sc / n2
        ss1 = np.maximum(q - s * m1, 0.0)
        ss2 = np.maximum(qc - sc * m2, 0.0)
        v1 = ss1 / np.maximum(n1 - 1.0, 1.0) / n1
        v2 = ss2 / np.maximum(n2 - 1.0, 1.0) / n2
        se_w = np.sqrt(v1 + v2)
        df_w = (v1 + v2) ** 2 / (v1 ** 2 / np.maximum(n1 - 1, 1) + v2 ** 2 / np.maximum(n2 - 1, 1))
        pooled = (n < 2) | (nc < 2)
        dfp = np.maximum(n1 + n2 - 2.0, 1.0)
        se_p = np.sqrt((ss1 + ss2) / dfp * (1.0 / n1 + 1.0 / n2))
        se = np.where(pooled, se_p, se_w)
        df = np.where(pooled, dfp, df_w)
        diff = m1 - m2
        tstat = np.abs(diff) / np.where(se > 0, se, 1.0)
        p = 2.0 * _sp.stdtr(np.where(np.isfinite(df) & (df > 0), df, 1.0), -tstat)
    # both sides constant: the difference is certain, or there is none
    p = np.where(se > 0, p, np.where(np.abs(diff) > 0, 0.0, 1.0))
    p = np.where((n <= 0) | (nc <= 0) | ((n + nc) < 3), np.nan, p)
    return np.minimum(p, 1.0)


# ---------------------------------------------------------------- intervals and corrections

def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level (0.95 -> 1.96)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(ones: np.ndarray, n: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a rate; NaN where n is 0."""
    z = z_value(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = ones / n
        denom = 1.0 + z * z / n
        center = (p + z * z / (2.0 * n)) / denom
        half = z / denom * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
        low, high = np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)
    bad = ~(n > 0)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def t_interval(n: np.ndarray, s: np.ndarray, q: np.ndarray, shift: float,
               confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval of a mean from count, shifted sum and sum of squares; NaN below 2 rows."""
    from scipy import special as _sp

    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(n > 1, n, 2.0)
        mean = s / safe
        var = np.maximum((q - s * mean) / (safe - 1.0), 0.0)
        tq = _sp.stdtrit(safe - 1.0, 0.5 + confidence / 2.0)
        half = tq * np.sqrt(var / safe)
    ok = n > 1
    return np.where(ok, shift + mean - half, np.nan), np.where(ok, shift + mean + half, np.nan)




def adjust_p(p: np.ndarray, method: str = "bh") -> np.ndarray:
    """p-values corrected over the finite entries (NaN stays NaN): Benjamini-Hochberg q-values,
    Bonferroni, or Holm's step-down. The number tested is the count of finite p-values."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    m = int(ok.sum())
    if m == 0:
        return out
    x = p[ok]
    # equal p-values get the same corrected value whichever order they are ranked in (each method's
    # value at a tie is its running minimum or maximum over the tie), so the faster unstable sort
    # gives the same floats; a zero of either sign is the one tie of different bits: then stable
    order = np.argsort(x, kind="stable" if np.signbit(x).any() else "quicksort")
    ranked = x[order]
    if method == "bonferroni":
        adj = np.minimum(ranked * m, 1.0)
    elif method == "holm":
        adj = np.minimum(np.maximum.accumulate(ranked * (m - np.arange(m))), 1.0)
    elif method == "bh":
        adj = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
        adj = np.minimum(adj, 1.0)
    else:
        raise ValueError(f"unknown correction {method!r}")
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


#: the probability with which a slice that truly diverges by delta is found at n_min rows
MIN_SIZE_POWER = 0.8


def _ndtr(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def detection_power(n: float, delta: float, bar: float, n_total: float, *, binary: bool, overall: float = 0.0,
                    sigma: float = 1.0, slice_sigma: float | None = None) -> float:
    """The probability that a slice of ``n`` defined rows whose outcome truly differs from the whole
    dataset's by ``delta`` (signed: the divergence, slice minus whole) is significant in the
    two-sided test of the slice against the rest at the per-test level ``bar``; ``n_total`` defined
    rows in all. The slice-minus-rest difference is ``delta * N / (N - n)`` (the whole dataset
    holds the slice). Rates (``overall`` the whole dataset's rate): the normal approximation of the
    test, the null variance at the pooled rate, the alternative's at the slice's rate
    ``overall + delta`` and at the rest's; 0 where no rest rate in [0, 1] gives that divergence.
    Real outcomes: Welch's t-test, power from the noncentral t, ``sigma`` the rest's standard
    deviation and ``slice_sigma`` the slice's (``sigma`` when None)."""
    N = float(n_total)
    n = float(n)
    if not (1.0 <= n <= N - 1.0) or not bar > 0:
        return 0.0
    if binary:
        p0 = float(overall)
        ps = p0 + delta
        pr = (N * p0 - n * ps) / (N - n)
        if not (0.0 <= ps <= 1.0 and -1e-12 <= pr <= 1.0 + 1e-12):
            return 0.0
        pr = min(max(pr, 0.0), 1.0)
        if 0.0 < ps < 1.0 and 0.0 < pr < 1.0 and n == int(n) and N == int(N):
            return _fisher_power(int(n), int(N), int(round(N * p0)), ps, pr, bar)
        d = abs(ps - pr)
        se0 = math.sqrt(max(p0 * (1.0 - p0), 0.0) * (1.0 / n + 1.0 / (N - n)))
        se1 = math.sqrt(ps * (1.0 - ps) / n + pr * (1.0 - pr) / (N - n))
        z = normal_quantile(1.0 - bar / 2.0)
        if se1 == 0:
            return 1.0 if d > z * se0 else 0.0
        return _ndtr((d - z * se0) / se1) + _ndtr((-d - z * se0) / se1)
    from scipy import special as _sp

    s1 = sigma if slice_sigma is None else float(slice_sigma)
    if n < 2 or N - n < 2 or not sigma > 0 or not s1 > 0:
        return 0.0
    d = abs(delta) * N / (N - n)
    v1, v2 = s1 * s1 / n, sigma * sigma / (N - n)
    se = math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1 * v1 / (n - 1.0) + v2 * v2 / (N - n - 1.0))
    t = float(_sp.stdtrit(df, 1.0 - bar / 2.0))
    ncp = d / se
    upper = float(_sp.nctdtr(df, ncp, t))
    lower = float(_sp.nctdtr(df, ncp, -t))  # the wrong side: negligible where it cannot be evaluated
    return (1.0 - upper) + (lower if math.isfinite(lower) else 0.0)


def _fisher_power(n: int, N: int, T: int, ps: float, pr: float, bar: float) -> float:
    """Power of Fisher's exact test (two-sided, as :func:`fisher_exact_p`) of a slice of n rows
    against the other N - n, given the T ones of the whole dataset: the slice's ones follow
    Fisher's noncentral hypergeometric distribution with the odds ratio of rates ps and pr; the
    test rejects where the central one's two-sided p-value is at most ``bar``. Summed over the
    counts within 12 standard deviations of both distributions' means (the rest is negligible)."""
    from .fisher import FISHER_REL_TOL

    lo, hi = max(0, T - (N - n)), min(n, T)
    if hi <= lo:
        return 0.0
    f = T / N
    centre_c = n * f
    sd_c = math.sqrt(max(n * f * (1.0 - f) * (N - n) / max(N - 1.0, 1.0), 1.0))
    centre_a = n * ps
    sd_a = math.sqrt(max(n * ps * (1.0 - ps), 1.0))
    a = max(lo, int(math.floor(min(centre_c - 12 * sd_c, centre_a - 12 * sd_a))))
    b = min(hi, int(math.ceil(max(centre_c + 12 * sd_c, centre_a + 12 * sd_a))))
    k = np.arange(a, b + 1, dtype=float)
    table = log_factorials(N)

    def lg(values: np.ndarray) -> np.ndarray:
        """``math.lgamma`` of each value (Python's own bits), without an array of Python objects: of whole
        numbers 1..N+1, read from the table of them (the same calls, made once)."""
        if table is not None:
            return table[values.astype(np.int64) - 1]
        return np.fromiter(map(math.lgamma, values.tolist()), dtype=float, count=values.size)

    def log_comb(x: float, y: np.ndarray) -> np.ndarray:
        return math.lgamma(x + 1.0) - lg(y + 1.0) - lg(x - y + 1.0)

    central = log_comb(float(n), k) + log_comb(float(N - n), T - k)
    central = np.exp(central - central.max())
    central /= central.sum()
    # the two-sided p-value of each count: the mass of the counts at most as likely
    order = np.argsort(central, kind="stable")
    ranked = central[order]
    cum = np.cumsum(ranked)
    p = cum[np.searchsorted(ranked, central * (1.0 + FISHER_REL_TOL), side="right") - 1]
    log_psi = math.log(ps / (1.0 - ps)) - math.log(pr / (1.0 - pr))
    alt = np.log(np.maximum(central, 1e-300)) + k * log_psi
    alt = np.exp(alt - alt.max())
    alt /= alt.sum()
    return float(alt[p <= bar].sum())



#: the most rows whose log-factorials :func:`_fisher_power` keeps in a table (8 bytes each)
LOG_FACTORIALS_MAX = 200_000
_LOG_FACTORIALS: list[np.ndarray] = []  # math.lgamma(j + 1) for j = 0, 1, ..., grown as asked


def log_factorials(n: int) -> np.ndarray | None:
    """``math.lgamma(j + 1.0)`` for j = 0..n (``math.lgamma`` itself, each value computed once per
    process), or None above :data:`LOG_FACTORIALS_MAX`: every count a minimum size's bisection reads
    (its power at each size it tries) is a whole number of at most the rows."""
    if n > LOG_FACTORIALS_MAX:
        return None
    have = _LOG_FACTORIALS[0] if _LOG_FACTORIALS else np.zeros(0)
    if have.size <= n:  # the values not yet computed: j = have.size..n
        more = np.arange(have.size, n + 1, dtype=float) + 1.0
        have = np.concatenate([have, np.fromiter(map(math.lgamma, more.tolist()), dtype=float, count=more.size)])
        _LOG_FACTORIALS[:] = [have]
    return have


def first_enough(enough, lo: int, hi: int) -> int:
    """The first n in (lo, hi] with ``enough(n)``, by bisection: ``enough(lo)`` is false, ``enough(hi)``
    true, and power grows with n between them."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi

def interval_width(n: float, confidence: float, *, binary: bool, rate: float = 0.0, sigma: float = 1.0) -> float:
    """Upper minus lower bound of the interval the table shows for a slice of ``n`` defined rows:
    Wilson's for a rate (``rate`` the slice's, its events ``n * rate``), Student t's for a mean
    (``sigma`` the slice's standard deviation)."""
    n = float(n)
    if binary:
        low, high = wilson_interval(np.array([n * rate]), np.array([n]), confidence)
        return float(high[0] - low[0])
    if n < 2:
        return math.inf
    from scipy import special as _sp

    return float(2.0 * _sp.stdtrit(n - 1.0, 0.5 + confidence / 2.0) * sigma / math.sqrt(n))


def interval_min_size(delta: float, confidence: float, *, binary: bool, rate: float = 0.0,
                      sigma: float = 1.0) -> int:
    """The method's minimum slice size: the fewest defined rows at which the slice's interval
    (:func:`interval_width`, at ``confidence``) is narrower than ``delta``, for a slice whose rate
    is ``rate`` (a rate) or whose standard deviation is ``sigma`` (a mean). Independent of the
    number of slices tested; near (2·z·σ/δ)² (σ² = rate·(1 − rate) for a rate)."""
    delta = float(delta)

    def enough(n: int) -> bool:
        return interval_width(n, confidence, binary=binary, rate=rate, sigma=sigma) < delta

    lo = 1 if binary else 2
    guess = 2 * int(math.ceil((2.0 * z_value(confidence) * (math.sqrt(rate * (1.0 - rate)) if binary
                                                            else sigma) / delta) ** 2)) + 8
    return smallest_enough(enough, lo, guess)


def smallest_enough(enough, lo: int, guess: int) -> int:
    """The first n ≥ ``lo`` with ``enough(n)``, for an ``enough`` that stays true once it is: from
    ``guess`` (doubled until enough), then by bisection (:func:`first_enough`)."""
    if enough(lo):
        return lo
    hi = max(lo + 1, int(guess))
    while not enough(hi):
        lo, hi = hi, 2 * hi
    return first_enough(enough, lo, hi)


def min_slice_size(delta: float, bar: float, n_total: int, *, binary: bool, overall: float = 0.0,
                   sigma: float = 1.0, slice_sigma: float | None = None, power: float = MIN_SIZE_POWER) -> int | None:
    """The smallest defined-row count at which a slice whose outcome truly differs from the whole
    dataset's by ``delta`` (signed) is significant at the per-test level ``bar`` with probability
    at least ``power`` (see :func:`detection_power`); None when no slice of ``n_total`` rows gets
    there (or, for a rate, when no slice can diverge by delta on that side)."""
    N = int(n_total)
    lo, hi = (1 if binary else 2), N - (1 if binary else 2)
    if hi < lo:
        return None

    def enough(n: int) -> bool:
        return detection_power(n, delta, bar, N, binary=binary, overall=overall, sigma=sigma,
                               slice_sigma=slice_sigma) >= power

    if binary:
        # a rate's slice cannot be so large that the rest's rate leaves [0, 1]
        ps = overall + delta
        if not 0.0 <= ps <= 1.0:
            return None
        if delta > 0 and ps > 0:
            hi = min(hi, int(math.floor(N * overall / ps + 1e-9)))
        elif delta < 0 and ps < 1:
            hi = min(hi, int(math.floor(N * (1.0 - overall) / (1.0 - ps) + 1e-9)))
        if hi < lo:
            return None
    if enough(lo):
        return lo
    # the largest size's power is usually the highest; where it is not (a rate near the edge of
    # what the rest allows), the search below still finds the first size that is enough
    if not enough(hi):
        grid = np.unique(np.linspace(lo, hi, 64).astype(int))
        ok = [int(g) for g in grid if enough(int(g))]
        if not ok:
            return None
        hi = ok[0]
    return first_enough(enough, lo, hi)


def paired_power(n: int, delta: float, bar: float, *, binary: bool, discordant: float = 0.0,
                 sigma: float = 1.0) -> float:
    """The probability that a slice of ``n`` rows whose change (model minus reference, paired on
    its own rows) truly is ``delta`` is significant at the two-sided per-test level ``bar``.
    0/1 outcomes: McNemar's exact test, the discordant rows D ~ Binomial(n, ``discordant``) and
    given D the model's 1-0 rows ~ Binomial(D, (discordant + delta) / (2 discordant)). Real
    outcomes: the paired t-test, power from the noncentral t with ``sigma`` the per-row
    difference's standard deviation."""
    from scipy import special as _sp

    n = int(n)
    if n < 2 or not bar > 0:
        return 0.0
    if binary:
        pi = float(discordant)
        if not (0.0 < pi <= 1.0) or abs(delta) > pi:
            return 0.0
        q = (pi + delta) / (2.0 * pi)
        centre, sd = n * pi, math.sqrt(max(n * pi * (1.0 - pi), 1.0))
        d = np.arange(max(1, int(centre - 8 * sd)), min(n, int(math.ceil(centre + 8 * sd))) + 1, dtype=np.int64)
        if d.size == 0:
            return 0.0
        df_ = d.astype(float)
        weight = np.exp(_sp.gammaln(n + 1.0) - _sp.gammaln(df_ + 1.0) - _sp.gammaln(n - df_ + 1.0)
                        + df_ * math.log(pi) + ((n - df_) * math.log1p(-pi) if pi < 1 else 0.0))

        def rejects(k):  # the two-sided binomial p-value at 1/2 of count k (per D) within the bar
            return (k >= 0) & (2.0 * _sp.bdtr(np.maximum(k, 0), d, 0.5) <= bar)

        # the largest count k (per D) that is rejected, by bisection: -1 when none is
        lo = np.full(d.size, -1, dtype=np.int64)
        hi = (d - 1) // 2 + 1  # first count known not to be rejected (or one past the middle)
        top = rejects(hi - 1)
        lo = np.where(top, hi - 1, lo)
        while True:
            open_ = hi - lo > 1
            if not open_.any():
                break
            mid = (lo + hi) // 2
            good = rejects(mid)
            lo = np.where(open_ & good, mid, lo)
            hi = np.where(open_ & ~good, mid, hi)
        k = lo
        low_tail = np.where(k >= 0, _sp.bdtr(np.maximum(k, 0), d, q), 0.0)
        high_tail = np.where(k >= 0, _sp.bdtrc(np.maximum(d - k - 1, 0), d, q), 0.0)
        return float(np.sum(weight * (low_tail + high_tail)) / max(np.sum(weight), 1e-300))
    if not sigma > 0:
        return 1.0
    df = n - 1.0
    t = float(_sp.stdtrit(df, 1.0 - bar / 2.0))
    ncp = abs(delta) * math.sqrt(n) / sigma
    lower = float(_sp.nctdtr(df, ncp, -t))
    return (1.0 - float(_sp.nctdtr(df, ncp, t))) + (lower if math.isfinite(lower) else 0.0)


def paired_min_size(delta: float, bar: float, n_total: int, *, binary: bool, discordant: float = 0.0,
                    sigma: float = 1.0, power: float = MIN_SIZE_POWER) -> int | None:
    """The smallest row count at which a slice whose paired change truly is ``delta`` is
    significant at the per-test level ``bar`` with probability at least ``power`` (see
    :func:`paired_power`); None when not even ``n_total`` rows get there."""
    N = int(n_total)
    lo, hi = 2, N
    if hi < lo:
        return None

    def enough(n: int) -> bool:
        return paired_power(n, delta, bar, binary=binary, discordant=discordant, sigma=sigma) >= power

    if enough(lo):
        return lo
    if not enough(hi):
        return None
    return first_enough(enough, lo, hi)


# ---------------------------------------------------------------- slice against the rest, valid on skewed data

#: |skewness| of an outcome above which the skew guard applies (see :func:`mean_difference_test`)
SKEW_GUARD = 0.1


def skewness_from_sums(n, s1, s2, s3) -> np.ndarray:
    """Skewness from a count and the sums of x, x^2, x^3 (x shifted near the mean); NaN below
    3 values, 0 for a constant."""
    n, s1, s2, s3 = (np.asarray(x, dtype=float) for x in (n, s1, s2, s3))
    with np.errstate(invalid="ignore", divide="ignore"):
        m = s1 / n
        c2 = s2 / n - m * m
        c3 = s3 / n - 3.0 * m * s2 / n + 2.0 * m ** 3
        g = np.where(c2 > 1e-14 * np.maximum(s2 / n, 1e-300), c3 / np.maximum(c2, 1e-300) ** 1.5, 0.0)
    return np.where(n >= 3, g, np.nan)


def rest_skew(tallies: np.ndarray, k: int, m) -> np.ndarray:
    """Per slice, the skewness of the metric's outcome on the rows outside it (from the cube
    tallies, ``MetricInfo.cube``); the whole dataset's (``MetricInfo.skew``) without them."""
    if getattr(m, "cube", -1) < 0:
        return np.full(tallies.shape[0], getattr(m, "skew", np.nan))
    t0 = tallies[0]
    n, s, q, c = (t0[j] - tallies[:, j] for j in (*metric_columns(k), m.cube))
    return skewness_from_sums(n, s, q, c)


class MeanDifference:
    """Slice minus rest, the difference of two means, with a standard error for each direction.

    ``se_low`` and ``df_low`` bound the difference from below (the test that the true
    difference is smaller than observed), ``se_high`` and ``df_high`` from above. They differ
    only under the skew guard (see :func:`mean_difference_test`). :meth:`p_value` is the
    two-sided test of a zero difference and :meth:`interval` the interval at any level; the
    p-value is below ``1 - level`` exactly when that interval excludes 0.
    """

    def __init__(self, diff, se_low, se_high, df_low, df_high):
        self.diff, self.se_low, self.se_high = diff, se_low, se_high
        self.df_low, self.df_high = df_low, df_high

    def p_value(self) -> np.ndarray:
        from scipy import special as _sp

        d = self.diff
        up = d > 0
        se = np.where(up, self.se_low, self.se_high)
        df = np.where(up, self.df_low, self.df_high)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.abs(d) / np.where(se > 0, se, 1.0)
            p = 2.0 * _sp.stdtr(np.where(np.isfinite(df) & (df > 0), df, 1.0), -t)
        p = np.where(se > 0, p, np.where(d != 0, 0.0, 1.0))
        p = np.where(d == 0, 1.0, p)
        return np.where(np.isfinite(d) & np.isfinite(se), np.minimum(p, 1.0), np.nan)

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        """Two-sided interval of the difference at ``level`` (a number or one per slice)."""
        from scipy import special as _sp

        a = (1.0 + np.asarray(level, dtype=float)) / 2.0
        with np.errstate(invalid="ignore"):
            t_lo = _sp.stdtrit(np.where(np.isfinite(self.df_low) & (self.df_low > 0), self.df_low, 1.0), a)
            t_hi = _sp.stdtrit(np.where(np.isfinite(self.df_high) & (self.df_high > 0), self.df_high, 1.0), a)
            return self.diff - t_lo * self.se_low, self.diff + t_hi * self.se_high


def mean_difference_test(n1, s1, q1, n2, s2, q2, skew=0.0) -> MeanDifference:
    """Mean of group 1 minus mean of group 2 (a slice and the rest of the rows), from counts,
    sums and sums of squares (both groups' values may be shifted by one common constant),
    valid for skewed outcomes at any group size.

    Welch's statistic with one guard. For a right-skewed outcome, a small group that missed
    the long tail has both a low mean and a low variance (their covariance is the third
    central moment over n), so Welch's t runs far into its lower tail: the false findings
    of a plain Welch test on absolute or squared errors and on lognormal columns. On that
    side (the short tail: below for right skew, above for left skew) the group's variance
    is taken as at least the other group's, as if the group were drawn like the rest; the
    long-tail side keeps Welch's own variance, where the same covariance makes Welch
    conservative. The guard applies when ``|skew|`` (the skewness of the outcome's
    distribution the group is compared with: group 2's, one number or one per entry)
    exceeds :data:`SKEW_GUARD`; an unknown skewness (NaN) guards both sides. A
    group with a single row takes the other group's variance. Degrees of freedom are
    Welch-Satterthwaite's, the guarded variance counting with the other group's.
    """
    n1, s1, q1 = (np.asarray(x, dtype=float) for x in (n1, s1, q1))
    n2, s2, q2 = (np.asarray(x, dtype=float) for x in (n2, s2, q2))
    with np.errstate(invalid="ignore", divide="ignore"):
        a1, a2 = np.where(n1 > 0, n1, 1.0), np.where(n2 > 0, n2, 1.0)
        m1, m2 = s1 / a1, s2 / a2
        var1 = np.maximum(q1 - s1 * m1, 0.0) / np.maximum(a1 - 1.0, 1.0)
        var2 = np.maximum(q2 - s2 * m2, 0.0) / np.maximum(a2 - 1.0, 1.0)
        one1, one2 = n1 < 2, n2 < 2
        # a single row has no variance of its own: it takes the other group's
        var1, var2 = np.where(one1, var2, var1), np.where(one2 & ~one1, var1, var2)
        df1 = np.where(one1, np.maximum(a2 - 1.0, 1.0), a1 - 1.0)
        df2 = np.where(one2, np.maximum(a1 - 1.0, 1.0), a2 - 1.0)
        v1, v2 = var1 / a1, var2 / a2
        floor = var2 / a1  # group 1 drawn like group 2
        guarded = v1 < floor
        v1g = np.where(guarded, floor, v1)
        df1g = np.where(guarded, np.maximum(a2 - 1.0, 1.0), df1)

        def _se_df(va, dfa):
            se = np.sqrt(va + v2)
            den = va * va / np.maximum(dfa, 1.0) + v2 * v2 / np.maximum(df2, 1.0)
            df = np.where(den > 0, (va + v2) ** 2 / np.where(den > 0, den, 1.0), np.inf)
            return se, df

        se_w, df_w = _se_df(v1, df1)
        se_g, df_g = _se_df(v1g, df1g)
    skew = np.broadcast_to(np.asarray(skew, dtype=float), np.shape(m1 - m2))
    unknown = np.isnan(skew)
    guard_high = unknown | (skew > SKEW_GUARD)  # right skew (or unknown): the upper end
    guard_low = unknown | (skew < -SKEW_GUARD)  # left skew (or unknown): the lower end
    se_low, df_low = np.where(guard_low, se_g, se_w), np.where(guard_low, df_g, df_w)
    se_high, df_high = np.where(guard_high, se_g, se_w), np.where(guard_high, df_g, df_w)
    bad = (n1 <= 0) | (n2 <= 0) | ((n1 + n2) < 3)
    diff = np.where(bad, np.nan, m1 - m2)
    return MeanDifference(diff, np.where(bad, np.nan, se_low), np.where(bad, np.nan, se_high),
                          df_low, df_high)


class _Wilson:
    """A group's Wilson interval at any ``z``: the parts that do not depend on z computed once."""

    def __init__(self, k: np.ndarray, n: np.ndarray) -> None:
        with np.errstate(invalid="ignore", divide="ignore"):
            self.n, self.p = n, k / n
            self.two_n = 2.0 * n
            self.spread = self.p * (1.0 - self.p) / n
            self.four_nn = 4.0 * n * n

    def at(self, z) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            z2 = z * z
            denom = 1.0 + z2 / self.n
            center = (self.p + z2 / self.two_n) / denom
            half = z / denom * np.sqrt(np.maximum(self.spread + z2 / self.four_nn, 0.0))
            return np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)


class RateDifference:
    """Newcombe's hybrid score interval of rate 1 minus rate 2 (his method 10) at any level
    (:meth:`interval`), from the two Wilson intervals: the parts that do not depend on the level
    computed once (a slice's test asks for its interval at three levels; the same operations on the
    same numbers as :func:`rate_difference_interval` each time)."""

    def __init__(self, k1, n1, k2, n2) -> None:
        k1, n1, k2, n2 = (np.asarray(x, dtype=float) for x in (k1, n1, k2, n2))
        self.one, self.two = _Wilson(k1, n1), _Wilson(k2, n2)
        self.d = self.one.p - self.two.p
        self.bad = ~((n1 > 0) & (n2 > 0))

    def interval(self, level) -> tuple[np.ndarray, np.ndarray]:
        """The interval at ``level`` (a number or one per entry). NaN where a group is empty."""
        z = normal_quantile((1.0 + np.asarray(level, dtype=float)) / 2.0)
        l1, u1 = self.one.at(z)
        l2, u2 = self.two.at(z)
        p1, p2, d = self.one.p, self.two.p, self.d
        with np.errstate(invalid="ignore", divide="ignore"):
            low = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
            high = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
        return np.where(self.bad, np.nan, low), np.where(self.bad, np.nan, high)


def rate_difference_interval(k1, n1, k2, n2, level) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval of rate 1 minus rate 2 (his method 10), from the two
    Wilson intervals: good coverage near rates of 0 and 1, never degenerate for a group with
    no event. ``level`` is a number or one per entry. NaN where a group is empty (see
    :class:`RateDifference` for one pair of groups at several levels)."""
    return RateDifference(k1, n1, k2, n2).interval(level)


# Cephes' rational approximations of the normal quantile (Moshier 1989), the algorithm behind
# scipy.special.ndtri: P0/Q0 near the median, P1/Q1 and P2/Q2 in the tails.
_S2PI = 2.50662827463100050242
_EXP_M2 = 0.13533528323661269189  # exp(-2)
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _ratio(w, x, p: tuple, q: tuple):
    """w * P(x) / Q(x) in Cephes' order, by Horner's rule, Q with a leading coefficient of 1."""
    num = p[0]
    for c in p[1:]:
        num = num * x + c
    den = x + q[0]
    for c in q[1:]:
        den = den * x + c
    return w * num / den


def _quantile(y0: float) -> float:
    if not 0.0 < y0 < 1.0:
        return -math.inf if y0 == 0.0 else math.inf if y0 == 1.0 else math.nan
    upper = y0 > 1.0 - _EXP_M2
    y = 1.0 - y0 if upper else y0
    if y > _EXP_M2:
        y -= 0.5
        y2 = y * y
        return (y + y * _ratio(y2, y2, _P0, _Q0)) * _S2PI
    x = math.sqrt(-2.0 * math.log(y))
    z = 1.0 / x
    x = x - math.log(x) / x - _ratio(z, z, *((_P1, _Q1) if x < 8.0 else (_P2, _Q2)))
    return x if upper else -x


def _quantiles(y0: np.ndarray) -> np.ndarray:
    """:func:`_quantile` of every value of a 1-D array, the same operations in the same order:
    the arithmetic and the square roots elementwise (IEEE-exact, as in Python), the logarithms by
    ``math.log`` (a vectorised logarithm may differ in the last bit)."""
    out = np.where(y0 == 0.0, -math.inf, np.where(y0 == 1.0, math.inf, math.nan))
    inside = np.nonzero((y0 > 0.0) & (y0 < 1.0))[0]
    v = y0[inside]
    upper = v > 1.0 - _EXP_M2
    y = np.where(upper, 1.0 - v, v)
    mid = y > _EXP_M2  # never upper: 1 - exp(-2) > 1/2
    c = y[mid] - 0.5
    c2 = c * c
    out[inside[mid]] = (c + c * _ratio(c2, c2, _P0, _Q0)) * _S2PI
    tail = ~mid
    if tail.any():
        x = np.sqrt(-2.0 * _logs(y[tail]))
        z = 1.0 / x
        near = x < 8.0
        r = np.where(near, _ratio(z, z, _P1, _Q1), _ratio(z, z, _P2, _Q2))
        x = x - _logs(x) / x - r
        out[inside[tail]] = np.where(upper[tail], x, -x)
    return out


def _logs(x: np.ndarray) -> np.ndarray:
    return np.fromiter(map(math.log, x.tolist()), dtype=float, count=x.size)


def normal_quantile(p):
    """The standard normal quantile of ``p`` (a number or an array): the value scipy.special.ndtri
    gives, to the last bit, without importing scipy (0.2 s of a short command-line scan).
    Evaluated once per distinct value, in plain floating point (the logarithms by ``math.log``),
    so no vectorised math library can change a last bit."""
    arr = np.asarray(p, dtype=float)
    if arr.ndim == 0:
        return _quantile(float(arr))
    values, inverse = np.unique(arr, return_inverse=True)
    return _quantiles(values)[inverse].reshape(arr.shape)


def corrected_level(p: np.ndarray, alpha: float, method: str, adjusted: np.ndarray | None = None) -> float:
    """The confidence level of the corrected intervals: a test's interval at this level excludes
    0 exactly when its corrected p-value is at most ``alpha`` (for tests that are inversions of
    their intervals). Bonferroni: ``1 - alpha/m``; Benjamini-Hochberg: ``1 - alpha*R/m`` with R
    the discoveries (Benjamini & Yekutieli's false-coverage-rate intervals, R at least 1);
    Holm: ``1 - alpha/(m - R)`` (the R smallest p-values pass, the next fails). ``adjusted``:
    ``adjust_p(p, method)`` when already computed."""
    p = np.asarray(p, dtype=float)
    finite = np.isfinite(p)
    m = int(finite.sum())
    if m == 0:
        return 1.0 - alpha
    q = adjust_p(p[finite], method) if adjusted is None else np.asarray(adjusted, dtype=float)[finite]
    r = int((q <= alpha).sum())
    if method == "bonferroni":
        return 1.0 - alpha / m
    if method == "bh":
        return 1.0 - alpha * max(r, 1) / m
    if method == "holm":
        return 1.0 - alpha / max(m - r, 1)
    raise ValueError(f"unknown correction {method!r}")

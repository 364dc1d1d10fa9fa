"""t-values (the paper's score) and p-values (proper tests of slice against the rest)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special
from scipy import stats as st

from divergence import scan
from divergence.stats.shrinkage import shrink
from divergence.stats.stats import (
    adjust_p,
    beta_t,
    corrected_level,
    fisher_exact_p,
    mean_difference_test,
    normal_quantile,
    rate_difference_interval,
    skewness_from_sums,
    welch_p,
    welch_t,
)


def test_fisher_matches_scipy_on_random_tables():
    rng = np.random.default_rng(11)
    for _ in range(3000):
        m = int(rng.integers(2, 3000))
        k = int(rng.integers(0, m + 1))
        n = int(rng.integers(1, m))
        lo, hi = max(0, n - (m - k)), min(n, k)
        x = int(rng.integers(lo, hi + 1))
        ref = st.fisher_exact([[x, n - x], [k - x, m - k - n + x]]).pvalue
        got = fisher_exact_p(np.array([x]), np.array([n]), k, m)[0]
        assert got == pytest.approx(ref, rel=1e-8, abs=1e-300), (x, n, k, m)


def test_fisher_undefined_without_rows_on_both_sides():
    p = fisher_exact_p(np.array([0.0, 5.0, 2.0]), np.array([0.0, 10.0, 4.0]), 5, 10)
    assert np.isnan(p[0]) and np.isnan(p[1]) and 0 < p[2] <= 1


def test_welch_p_matches_scipy():
    rng = np.random.default_rng(5)
    for _ in range(200):
        x = rng.normal(0, rng.uniform(0.5, 3), int(rng.integers(2, 40)))
        y = rng.normal(rng.normal(), rng.uniform(0.5, 3), int(rng.integers(2, 400)))
        allv = np.concatenate([x, y])
        p = welch_p(np.array([len(x)]), np.array([x.sum()]), np.array([(x * x).sum()]),
                    len(allv), allv.sum(), (allv * allv).sum())[0]
        assert p == pytest.approx(st.ttest_ind(x, y, equal_var=False).pvalue, rel=1e-7)


def test_welch_p_single_row_uses_pooled_test():
    x, y = np.array([3.0]), np.array([0.0, 1.0, 2.0, 1.0])
    allv = np.concatenate([x, y])
    p = welch_p(np.array([1.0]), x.sum(keepdims=True), (x * x).sum(keepdims=True), 5, allv.sum(),
                (allv * allv).sum())[0]
    assert p == pytest.approx(st.ttest_ind(x, y, equal_var=True).pvalue, rel=1e-10)


def test_beta_t_is_the_papers_formula():
    # COMPAS top FPR slice: 15 false positives of 22 negatives; whole dataset 297 of 3,363
    t = beta_t(np.array([15.0]), np.array([7.0]), 297.0, 3066.0)[0]
    a, b, a0, b0 = 16, 8, 298, 3067
    mean, mean0 = a / (a + b), a0 / (a0 + b0)
    var, var0 = a * b / ((a + b) ** 2 * (a + b + 1)), a0 * b0 / ((a0 + b0) ** 2 * (a0 + b0 + 1))
    assert t == pytest.approx(abs(mean - mean0) / np.sqrt(var + var0), rel=1e-14)
    assert round(t, 2) == 6.12


def test_welch_t_population_variances():
    x = np.array([1.0, 2.0, 4.0])
    allv = np.array([1.0, 2.0, 4.0, 0.0, 0.0, 1.0])
    t = welch_t(np.array([3.0]), x.sum(keepdims=True), (x * x).sum(keepdims=True), 6, allv.sum(),
                (allv * allv).sum())[0]
    want = abs(x.mean() - allv.mean()) / np.sqrt(x.var() / 3 + allv.var() / 6)
    assert t == pytest.approx(want, rel=1e-14)


def test_undefined_slices_are_nan_and_never_poison_sums():
    df = pd.DataFrame({"a": ["x"] * 6 + ["y"] * 4, "y": [0] * 6 + [1] * 4, "p": [1, 0, 0, 1, 0, 0, 1, 1, 0, 1]})
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr", "fnr"], min_support=0.1)
    f = t.frame.set_index("itemset")
    # a=y has only positives: its FPR is undefined
    assert f.loc["a=y", "fpr_count"] == 0
    for col in ("fpr", "fpr_divergence", "fpr_t", "fpr_p"):
        assert np.isnan(f.loc["a=y", col])
    assert f.loc["a=x", "fpr"] == pytest.approx(2 / 6)
    # the whole dataset: divergence 0, t 0, p undefined
    assert f.loc["", "fpr_divergence"] == 0 and f.loc["", "fpr_t"] == 0 and np.isnan(f.loc["", "fpr_p"])
    # a slice equal to all defined rows of a metric has no complement to test against
    assert np.isnan(f.loc["a=x", "fnr"]) and np.isnan(f.loc["a=y", "fnr_p"])
    assert np.nansum(f["fpr_divergence"]) == pytest.approx(2 / 6 - 2 / 6)
    assert f["fpr_divergence"].sort_values(ascending=False, na_position="last").index[-1] == "a=y"


def test_p_values_are_calibrated_for_small_binary_slices():
    """Under the null (every row the same rate), p <= alpha happens at most alpha of the time."""
    rng = np.random.default_rng(0)
    hits, trials = 0, 0
    for _ in range(40):
        n = 400
        df = pd.DataFrame({"g": rng.integers(0, 40, n).astype(str), "o": (rng.random(n) < 0.1).astype(float)})
        t = scan(df, outcome="o", attributes=["g"], min_support=0.001)
        p = t.frame["o_p"].to_numpy()[1:]
        p = p[~np.isnan(p)]
        hits += int((p <= 0.05).sum())
        trials += len(p)
    assert hits / trials <= 0.05


def test_fisher_on_many_slices_sharing_tallies_equals_one_by_one():
    """Distinct (ones, n) pairs are computed once; the result is the same as pair by pair."""
    rng = np.random.default_rng(2)
    n = rng.integers(1, 200, 3000).astype(float)
    x = np.array([rng.integers(max(0, k - 700), min(k, 300) + 1) for k in n.astype(int)]).astype(float)
    n, x = np.concatenate([n, n[:2000], n[:500]]), np.concatenate([x, x[:2000], x[:500]])
    together = fisher_exact_p(x, n, 300, 1000)
    one_by_one = np.concatenate([fisher_exact_p(x[i:i + 1], n[i:i + 1], 300, 1000) for i in range(len(x))])
    np.testing.assert_array_equal(together, one_by_one)


# ---------------------------------------------------------------- the skew-guarded slice-vs-rest test

def _sums(x):
    x = np.asarray(x, dtype=float)
    return len(x), x.sum(), (x * x).sum()


def test_mean_difference_without_skew_is_welch():
    rng = np.random.default_rng(5)
    for _ in range(20):
        x, y = rng.normal(1.0, 2.0, rng.integers(3, 60)), rng.normal(0.5, 0.7, rng.integers(3, 400))
        md = mean_difference_test(*_sums(x), *_sums(y), 0.0)
        ref = st.ttest_ind(x, y, equal_var=False)
        assert md.p_value() == pytest.approx(ref.pvalue, rel=1e-9)
        ci = ref.confidence_interval(0.9)
        assert md.interval(0.9) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_skew_guard_widens_the_short_tail_side_only():
    """Right skew: a slice with less spread than the rest gets the rest's variance for the
    upper end of its interval (it may have missed the long tail); the lower end stays Welch's.
    Left skew mirrors it; an unknown skewness guards both ends."""
    rng = np.random.default_rng(6)
    x, y = rng.normal(0.0, 0.5, 50), rng.normal(0.0, 2.0, 5000)
    welch = mean_difference_test(*_sums(x), *_sums(y), 0.0).interval(0.95)
    right = mean_difference_test(*_sums(x), *_sums(y), 2.0).interval(0.95)
    left = mean_difference_test(*_sums(x), *_sums(y), -2.0).interval(0.95)
    both = mean_difference_test(*_sums(x), *_sums(y), np.nan).interval(0.95)
    d = x.mean() - y.mean()
    va, vb = y.var(ddof=1) / len(x), y.var(ddof=1) / len(y)  # the slice takes the rest's variance
    df = (len(y) - 1) * (va + vb) ** 2 / (va ** 2 + vb ** 2)  # Welch-Satterthwaite, both from the rest
    guarded_half = st.t.ppf(0.975, df) * np.sqrt(va + vb)
    assert right[0] == pytest.approx(welch[0]) and right[1] == pytest.approx(d + guarded_half, rel=1e-9)
    assert left[1] == pytest.approx(welch[1]) and left[0] == pytest.approx(d - guarded_half, rel=1e-9)
    assert both == pytest.approx((left[0], right[1]))
    # a slice as spread as the rest is unaffected
    z = rng.normal(0.0, 3.0, 50)
    assert mean_difference_test(*_sums(z), *_sums(y), 2.0).interval(0.95) == \
        pytest.approx(mean_difference_test(*_sums(z), *_sums(y), 0.0).interval(0.95))


def test_p_value_is_below_one_minus_level_exactly_when_the_interval_excludes_zero():
    rng = np.random.default_rng(7)
    n1, n2 = rng.integers(2, 80, 4000).astype(float), rng.integers(2, 3000, 4000).astype(float)
    m1, m2 = rng.normal(0, 0.4, 4000), rng.normal(0, 0.1, 4000)
    v1, v2 = rng.uniform(0.1, 3, 4000), rng.uniform(0.1, 3, 4000)
    s1, s2 = n1 * m1, n2 * m2
    q1, q2 = v1 * (n1 - 1) + s1 * m1, v2 * (n2 - 1) + s2 * m2
    for skew in (0.0, 3.0, -3.0, np.nan, rng.normal(0, 1, 4000)):
        md = mean_difference_test(n1, s1, q1, n2, s2, q2, skew)
        p = md.p_value()
        for level in (0.9, 0.95, 0.999, 1 - 1e-6):
            lo, hi = md.interval(level)
            excludes = (lo > 0) | (hi < 0)
            near = np.abs(p - (1 - level)) < 1e-9 * (1 - level)
            assert np.array_equal(excludes[~near], (p < 1 - level)[~near])


def test_skewness_from_sums_matches_scipy():
    x = np.random.default_rng(8).lognormal(0, 1, 500)
    c = x - 1.5
    assert skewness_from_sums(len(c), c.sum(), (c * c).sum(), (c ** 3).sum()) == pytest.approx(st.skew(x), rel=1e-9)
    assert skewness_from_sums(5, 5.0, 5.0, 5.0) == 0.0 and np.isnan(skewness_from_sums(2, 1.0, 1.0, 1.0))


def test_normal_quantile_is_scipys_ndtri_to_the_last_bit():
    """The intervals of a 0/1 scan use our port of Cephes' ndtri (no scipy import): it must give
    scipy's values exactly, so tables do not change with the route."""
    rng = np.random.default_rng(4)
    p = np.concatenate([rng.random(50_000), 10.0 ** rng.uniform(-320, 0, 50_000),
                        1.0 - 10.0 ** rng.uniform(-17, 0, 20_000),
                        [0.0, 1.0, -0.5, 1.5, np.nan, 0.5, 0.975, np.exp(-2), 1 - np.exp(-2), 5e-324]])
    ours, theirs = normal_quantile(p), special.ndtri(p)
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert normal_quantile(0.975) == special.ndtri(0.975) and isinstance(normal_quantile(0.975), float)
    assert normal_quantile(np.array([[0.975, 0.5]])).shape == (1, 2)


def test_newcombe_interval_reproduces_the_published_example():
    """Newcombe (1998), Statistics in Medicine 17:873, table II, example (a): 56/70 - 48/80,
    method 10: 0.0524 to 0.3339."""
    lo, hi = rate_difference_interval(56, 70, 48, 80, 0.95)
    assert (round(float(lo), 4), round(float(hi), 4)) == (0.0524, 0.3339)
    # no event in a group still gives an interval of positive width
    lo, hi = rate_difference_interval(0, 40, 600, 2000, 0.95)
    assert lo < -0.3 < hi < 0 and hi - lo > 0.05


def _adjust_p_ranked_stably(p: np.ndarray, method: str) -> np.ndarray:
    """adjust_p as it ranked the p-values before: a stable sort."""
    out = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    x = p[ok]
    m = x.size
    order = np.argsort(x, kind="stable")
    ranked = x[order]
    if method == "bonferroni":
        adj = np.minimum(ranked * m, 1.0)
    elif method == "holm":
        adj = np.minimum(np.maximum.accumulate(ranked * (m - np.arange(m))), 1.0)
    else:
        adj = np.minimum(np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1], 1.0)
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm"])
def test_corrected_p_values_do_not_depend_on_how_ties_are_ranked(method):
    """Equal p-values (half of Adult's are tied) get the same corrected value in any order: the
    unstable sort gives the stable sort's floats, to the last bit; zeros of both signs rank stably."""
    rng = np.random.default_rng(4)
    for size in (1, 2, 17, 1_000, 70_000):
        p = np.round(rng.uniform(0, 1, size) ** 3, int(rng.integers(1, 6)))
        p[rng.random(size) < 0.05] = np.nan
        p[rng.random(size) < 0.05] = 0.0
        signed = p.copy()
        signed[np.nonzero(p == 0)[0][::2]] = -0.0
        for x in (p, signed):
            want, got = _adjust_p_ranked_stably(x, method), adjust_p(x, method)
            assert np.array_equal(np.isnan(want), np.isnan(got))
            assert np.array_equal(want[~np.isnan(want)].view(np.uint64), got[~np.isnan(got)].view(np.uint64))


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm"])
def test_corrected_level_agrees_with_the_corrected_p_values(method):
    rng = np.random.default_rng(9)
    for _ in range(50):
        p = np.concatenate([rng.uniform(0, 1, 300), rng.uniform(0, 1e-3, rng.integers(0, 30))])
        level = corrected_level(p, 0.05, method)
        assert np.array_equal(adjust_p(p, method) <= 0.05, p < 1 - level)
        with_nan = np.concatenate([p, [np.nan]])  # the q-values handed over give the same level
        assert corrected_level(with_nan, 0.05, method, adjust_p(with_nan, method)) == level


def test_shrinkage_pulls_noise_to_zero_and_keeps_a_precise_effect():
    rng = np.random.default_rng(10)
    se = rng.uniform(0.01, 0.05, 3000)
    noise = rng.normal(0, se)
    shrunk = shrink(noise, se)
    assert np.abs(shrunk).max() <= 0.1 * np.abs(noise).max()
    est = noise.copy()
    est[:10], se[:10] = 0.2 + rng.normal(0, 0.01, 10), 0.01
    shrunk = shrink(est, se)
    assert np.abs(shrunk[:10] - 0.2).max() < 0.03
    assert np.abs(shrunk[10:]).max() <= 0.5 * np.abs(est[10:]).max()
    assert np.isnan(shrink(np.array([np.nan, 0.1]), np.array([0.1, np.nan]))).all()
    assert shrink(np.array([0.3]), np.array([0.0]))[0] == 0.3


def test_shrinkage_in_blocks_is_the_shrinkage_of_the_whole(monkeypatch):
    """The posterior means are computed a block of slices at a time: any block size gives the
    same floats, to the last bit."""
    from divergence.stats import shrinkage

    rng = np.random.default_rng(12)
    se = rng.uniform(0.002, 0.2, 20_000)
    est = rng.normal(0, se) + (rng.random(se.size) < 0.1) * rng.normal(0, 0.1, se.size)
    est[:7] = np.nan
    whole = shrink(est, se)
    monkeypatch.setattr(shrinkage, "BLOCK", 999)
    assert np.array_equal(shrink(est, se), whole, equal_nan=True)



def _fisher_power_with_objects(n, N, T, ps, pr, bar):
    """Fisher's power as it was computed with an array of Python floats (np.frompyfunc of math.lgamma)."""
    import math

    from divergence.stats.fisher import FISHER_REL_TOL

    lo, hi = max(0, T - (N - n)), min(n, T)
    if hi <= lo:
        return 0.0
    f = T / N
    sd_c = math.sqrt(max(n * f * (1.0 - f) * (N - n) / max(N - 1.0, 1.0), 1.0))
    sd_a = math.sqrt(max(n * ps * (1.0 - ps), 1.0))
    a = max(lo, int(math.floor(min(n * f - 12 * sd_c, n * ps - 12 * sd_a))))
    b = min(hi, int(math.ceil(max(n * f + 12 * sd_c, n * ps + 12 * sd_a))))
    k = np.arange(a, b + 1, dtype=float)
    lg = np.frompyfunc(math.lgamma, 1, 1)

    def log_comb(x, y):
        return (lg(x + 1.0) - lg(y + 1.0) - lg(x - y + 1.0)).astype(float)

    central = log_comb(float(n), k) + log_comb(float(N - n), T - k)
    central = np.exp(central - central.max())
    central /= central.sum()
    ranked = central[np.argsort(central, kind="stable")]
    p = np.cumsum(ranked)[np.searchsorted(ranked, central * (1.0 + FISHER_REL_TOL), side="right") - 1]
    alt = np.log(np.maximum(central, 1e-300)) + k * (math.log(ps / (1.0 - ps)) - math.log(pr / (1.0 - pr)))
    alt = np.exp(alt - alt.max())
    alt /= alt.sum()
    return float(alt[p <= bar].sum())


def test_fisher_power_is_the_same_bits_without_python_objects():
    """The power of Fisher's test reads math.lgamma of each count into a float array: the same number, bit
    for bit, as the array of Python floats it replaced (the minimum size's bisection calls it often)."""
    from divergence.stats.stats import _fisher_power

    rng = np.random.default_rng(3)
    for _ in range(300):
        N = int(rng.integers(2, 60_000))
        n, T = int(rng.integers(1, N)), int(rng.integers(0, N + 1))
        ps, pr = (float(x) for x in rng.uniform(0.001, 0.999, 2))
        bar = float(10 ** rng.uniform(-12, -0.5))
        assert _fisher_power(n, N, T, ps, pr, bar) == _fisher_power_with_objects(n, N, T, ps, pr, bar)


def test_fisher_power_reads_log_factorials_from_one_table_with_the_same_bits(monkeypatch):
    """The minimum size's bisection asks Fisher's power at many sizes of one table: the log-factorials of its
    counts come from one table of ``math.lgamma(j + 1)`` (each computed once), the same bits; above the
    table's cap they are computed per call, as before."""
    import math

    from divergence.stats import stats as st

    table = st.log_factorials(5_000)
    assert table is not None and table.size >= 5_001
    assert all(table[j] == math.lgamma(j + 1.0) for j in range(0, 5_001, 7))
    assert st.log_factorials(st.LOG_FACTORIALS_MAX + 1) is None
    rng = np.random.default_rng(11)
    for cap in (st.LOG_FACTORIALS_MAX, 10):  # the table, then the per-call path
        monkeypatch.setattr(st, "LOG_FACTORIALS_MAX", cap)
        for _ in range(40):
            N = int(rng.integers(20, 50_000))
            n, T = int(rng.integers(1, N)), int(rng.integers(0, N + 1))
            ps, pr = (float(x) for x in rng.uniform(0.001, 0.999, 2))
            bar = float(10 ** rng.uniform(-12, -0.5))
            assert st._fisher_power(n, N, T, ps, pr, bar) == _fisher_power_with_objects(n, N, T, ps, pr, bar)

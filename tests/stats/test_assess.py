"""Worst-slice statistics: intervals, n_min, corrections, baselines, replication, verdicts."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from divergence import VERDICTS, DivergenceInputError, assess, scan, support_for_min_size
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.stats.replication import apply_bins
from divergence.stats.stats import adjust_p, min_slice_size


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


@pytest.fixture(scope="module")
def demo_regression(demo):
    return scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["regression"])


def test_intervals_match_scipy(demo):
    t = scan(demo, attributes=["region", "education"], min_support=0.01, confidence=0.9,
             **DEMO_ROLES["classification"])
    f = t.frame
    for i in range(1, len(f)):
        k, n = round(f.loc[i, "fpr"] * f.loc[i, "fpr_count"]), f.loc[i, "fpr_count"]
        ci = st.binomtest(k, n).proportion_ci(0.9, method="wilson")
        assert (f.loc[i, "fpr_ci_low"], f.loc[i, "fpr_ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    r = scan(demo, outcome="spend", attributes=["region"], min_support=0.01, confidence=0.99)
    south = demo.loc[demo["region"] == "South", "spend"]
    lo, hi = st.t.interval(0.99, len(south) - 1, loc=south.mean(), scale=st.sem(south))
    row = r.row("region=South")
    assert (row["spend_ci_low"], row["spend_ci_high"]) == pytest.approx((lo, hi), rel=1e-9)
    # the divergence interval: South against the rest of the rows, times the share outside South
    # (the whole dataset holds South); spend is right-skewed, so the lower end is Welch's and the
    # upper end is guarded (South's variance taken as at least the rest's)
    rest = demo.loc[demo["region"] != "South", "spend"]
    share = 1 - len(south) / len(demo)
    welch = st.ttest_ind(south, rest, equal_var=False).confidence_interval(0.99)
    assert row["spend_divergence_ci_low"] == pytest.approx(share * welch.low, rel=1e-9)
    v = max(south.var(), rest.var()) / len(south) + rest.var() / len(rest)
    df = v ** 2 / ((max(south.var(), rest.var()) / len(south)) ** 2 / (len(rest) - 1 if south.var() < rest.var() else len(south) - 1)
                   + (rest.var() / len(rest)) ** 2 / (len(rest) - 1))
    high = south.mean() - rest.mean() + st.t.ppf(0.995, df) * math.sqrt(v)
    assert row["spend_divergence_ci_high"] == pytest.approx(share * high, rel=1e-9)
    assert row["spend_divergence_ci_low"] <= row["spend_divergence"] <= row["spend_divergence_ci_high"]


def test_corrections():
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2])
    finite = p[~np.isnan(p)]
    np.testing.assert_allclose(adjust_p(p, "bh")[~np.isnan(p)], st.false_discovery_control(finite))
    np.testing.assert_allclose(adjust_p(p, "bonferroni")[~np.isnan(p)], [0.04, 0.16, 0.12, 0.8])
    # Holm: sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1, running maximum
    np.testing.assert_allclose(adjust_p(p, "holm")[~np.isnan(p)], [0.04, 0.09, 0.09, 0.2])
    assert np.isnan(adjust_p(p)[2])


def test_min_size_derivation(demo):
    t = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, delta=0.04, confidence=0.9,
             **DEMO_ROLES["classification"])
    info = t.assessment.min_size["fpr"]
    p = t.overall("fpr")
    f = t.frame
    n_total = int(f.loc[0, "fpr_count"])
    m = t.assessment.family_size["fpr"]
    assert info.sigma == pytest.approx(math.sqrt(p * (1 - p)))
    assert info.tests == m == t.n_tested["fpr"]  # the metric's family (the default)
    assert info.bar == pytest.approx(0.1 / m)
    # n_power: the first size at which a slice diverging by delta (either side) is found with 80% power
    from divergence.stats.stats import detection_power, interval_width
    sides = [min_slice_size(s * 0.04, info.bar, n_total, binary=True, overall=p) for s in (1, -1)]
    assert info.n_power == max(sides) and info.sides == {"above": sides[0], "below": sides[1]}
    up = 1 if sides[0] >= sides[1] else -1
    assert detection_power(info.n_power, up * 0.04, info.bar, n_total, binary=True, overall=p) >= 0.8
    assert detection_power(info.n_power - 1, up * 0.04, info.bar, n_total, binary=True, overall=p) < 0.8
    for words in ("n_power", "δ = 0.04", f"{m:,}", "80% power", "p + δ", "Fisher's exact test",
                  f"{info.n_power:,}"):
        assert words in info.power_text, words
    # n_min: the first size at which the 90% Wilson interval at p shifted by delta towards 1/2 is
    # narrower than delta, whatever the number of slices tested
    at = p + 0.04 if abs(p + 0.04 - 0.5) < abs(p - 0.04 - 0.5) else p - 0.04
    assert info.width_at == pytest.approx(at)
    assert interval_width(info.n_min, 0.9, binary=True, rate=at) < 0.04
    assert interval_width(info.n_min - 1, 0.9, binary=True, rate=at) >= 0.04
    closed = (2 * st.norm.isf(0.05)) ** 2 * at * (1 - at) / 0.04 ** 2
    assert abs(info.n_min - closed) < 0.02 * closed
    for words in ("n_min", "δ = 0.04", "Wilson", "narrower than δ", f"{info.n_min:,}", "indicative"):
        assert words in info.text, words
    np.testing.assert_array_equal(f["fpr_meets_min_size"], f["fpr_count"] >= info.n_min)
    # too small: not significant and below n_min; a significant slice keeps its direction at any size
    significant = ((f["fpr_q"] <= 0.1) & ((f["fpr_divergence_adj_low"] > 0) | (f["fpr_divergence_adj_high"] < 0)))
    small = ~f["fpr_meets_min_size"] & (f.index > 0)
    assert (f.loc[small & ~significant, "fpr_verdict"] == "too small").all()
    assert set(f.loc[small & significant, "fpr_verdict"]) <= {"above", "below"}
    assert (f.loc[small & significant].shape[0]) > 0  # the planted slice's refinements, at least
    assert (f.loc[~small & ~significant & (f.index > 0), "fpr_verdict"] == "noise").all()
    s = support_for_min_size(t, "fpr")
    assert s == pytest.approx(info.n_min / f.loc[0, "fpr_count"])
    assert support_for_min_size(t, "fpr", "n_power") == pytest.approx(info.n_power / f.loc[0, "fpr_count"])
    # the method's n_min does not grow with the slices tested: a lower support, more tests, same n_min
    t2 = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.005, delta=0.04, confidence=0.9,
              **DEMO_ROLES["classification"])
    info2 = t2.assessment.min_size["fpr"]
    assert info2.tests > info.tests and info2.n_min == info.n_min
    assert info2.n_power > info.n_power
    # no significant slice is too small; every significant one below n_min reads indicative
    from divergence.present.formats import verdict_label
    sig2 = (t2.frame["fpr_verdict"].isin(["above", "below"]))
    assert not (t2.frame.loc[sig2, "fpr_verdict"] == "too small").any()
    below = t2.frame[sig2 & ~t2.frame["fpr_meets_min_size"]]
    assert len(below) and all(verdict_label(r.fpr_verdict, None, None, r.fpr_meets_min_size).endswith("indicative")
                              for r in below.itertuples())
    assert t.n_tested["fpr"] == f["fpr_p"].notna().sum() == len(f) - 1


def test_min_size_is_power_at_the_scans_bar():
    """The derivation by hand: the 80% point of the power curve, against a simulation of Fisher's
    test and Welch's t-test at the bar, and the (1 - n/N) factor of a large slice."""
    from divergence.stats.fisher import fisher_exact_p
    from divergence.stats.stats import detection_power
    bar = 0.05 / 2000
    n = min_slice_size(0.05, bar, 10_000, binary=True, overall=0.2)
    rng = np.random.default_rng(0)
    N, runs = 10_000, 4000
    pr = 0.2 - 0.05 * n / (N - n)
    ps = pr + 0.05 * N / (N - n)
    k1, k2 = rng.binomial(n, ps, runs), rng.binomial(N - n, pr, runs)
    total = k1 + k2
    p = np.empty(runs)
    for t in np.unique(total):
        sel = total == t
        p[sel] = fisher_exact_p(k1[sel].astype(float), np.full(int(sel.sum()), float(n)), float(t), float(N))
    assert abs((p <= bar).mean() - 0.8) < 0.03
    assert detection_power(n, 0.05, bar, N, binary=True, overall=0.2) == pytest.approx(0.8, abs=0.01)
    # a real outcome: Welch's t-test at the bar, sigma 1, delta 0.2
    n = min_slice_size(0.2, bar, N, binary=False, sigma=1.0)
    x = rng.normal(0.2 * N / (N - n), 1.0, (runs, n)).mean(axis=1)
    y = rng.normal(0.0, 1.0 / math.sqrt(N - n), runs)
    z = (x - y) / math.sqrt(1.0 / n + 1.0 / (N - n))
    assert abs((2 * st.t.sf(np.abs(z), n - 1) <= bar).mean() - 0.8) < 0.03
    # the whole dataset holds the slice: a large slice needs fewer rows than (z sigma / delta)^2 says
    big = min_slice_size(0.02, bar, N, binary=False, sigma=1.0)
    k = ((st.norm.isf(bar / 2) + st.norm.isf(0.2)) / 0.02) ** 2
    assert big < k and big == pytest.approx(k / (1 + k / N), rel=0.02)
    # rates: the side nearer 1/2 has the larger variance; a side beyond 0 or 1 is impossible
    assert min_slice_size(0.05, bar, N, binary=True, overall=0.2) > min_slice_size(-0.05, bar, N, binary=True,
                                                                                    overall=0.2)
    assert min_slice_size(-0.05, bar, N, binary=True, overall=0.02) is None
    assert min_slice_size(0.02, bar, 200, binary=False, sigma=1.0) is None  # no slice of 200 rows gets there
    # a right-skewed outcome keeps its coefficient of variation: a slice above is more spread
    from divergence.stats.assess import min_size_derivation
    skewed = min_size_derivation(1.65, 2.16, False, None, 0.95, "o", n_total=N, tests=2000, skew=6.2)
    plain = min_size_derivation(1.65, 2.16, False, None, 0.95, "o", n_total=N, tests=2000, skew=0.0)
    assert skewed.sides["below"] == plain.n_power < skewed.sides["above"] == skewed.n_power
    # n_min: the t interval's width at the wider side's spread (the skewed slice above)
    assert plain.n_min == pytest.approx((2 * 1.96 * 2.16 / 0.432) ** 2, rel=0.02)
    assert skewed.n_min == pytest.approx((2 * 1.96 * 2.16 * (1.65 + 0.432) / 1.65 / 0.432) ** 2, rel=0.02)
    assert skewed.sides["above"] == min_slice_size(0.432, bar, N, binary=False, sigma=2.16,
                                                      slice_sigma=2.16 * (1.65 + 0.432) / 1.65)
    assert "σ·(μ + δ)/μ" in skewed.text


def test_per_metric_delta_and_bad_settings(demo):
    t = scan(demo, attributes=["region"], min_support=0.05, delta={"fpr": 0.1, "fnr": 0.02},
             **DEMO_ROLES["classification"])
    assert t.assessment.min_size["fpr"].delta == 0.1 and t.assessment.min_size["fnr"].delta == 0.02
    for kwargs, msg in [(dict(delta=-1), "delta must be a positive number; got -1"),
                        (dict(delta={"fpr": -0.1}), "delta for 'fpr' must be a positive number; got -0.1"),
                        (dict(confidence=1.2), r"confidence must be a level from 0.5 to 0.999999999; got 1.2"),
                        (dict(confidence=0), r"confidence must be a level from 0.5 to 0.999999999; got 0"),
                        (dict(correction="fdr"), "correction must be one of bh, bonferroni, holm"),
                        (dict(family="slices"), "family must be one of scan, metric; got 'slices'"),
                        (dict(bootstrap=5), "bootstrap must be 0"),
                        (dict(bootstrap=-1), "bootstrap must be 0 .* got -1"),
                        (dict(holdout=1.5), r"holdout must be a share in \(0, 1\)")]:
        with pytest.raises(DivergenceInputError, match=msg):
            scan(demo, attributes=["region"], **DEMO_ROLES["classification"], **kwargs)


@pytest.mark.parametrize("correction", ["bh", "bonferroni", "holm"])
def test_null_data_false_findings_stay_within_the_promised_rate(correction):
    """Every row has the same true rate: any finding is false. BH, Bonferroni and Holm all
    keep the chance of at least one false finding at or below alpha when every null is true."""
    seeds_with_findings, total_findings, total_tested = 0, 0, 0
    n_seeds = 60
    for seed in range(n_seeds):
        rng = np.random.default_rng(1000 + seed)
        n = 3000
        df = pd.DataFrame({f"a{j}": rng.integers(0, 3, n).astype(str) for j in range(4)})
        df["o"] = (rng.random(n) < 0.2).astype(float)
        t = scan(df, outcome="o", min_support=0.01, correction=correction, delta=0.01)
        f = t.frame.iloc[1:]
        assert t.n_tested["o"] > 200
        found = int((f["o_q"] <= 0.05).sum())
        seeds_with_findings += found > 0
        total_findings += found
        total_tested += t.n_tested["o"]
    # expected at most 3 of 60 at alpha = 0.05; allow binomial noise (P(X >= 8) < 0.01 at p = 0.05)
    assert seeds_with_findings <= 7
    assert total_findings / total_tested <= 0.05


def test_planted_defect_and_hard_cohort_are_told_apart(demo_regression):
    t = demo_regression
    assert t.row(DEMO_TRUTH["defect"])["abs_error_verdict"] == "defect"
    assert t.row(DEMO_TRUTH["hard_cohort"])["abs_error_verdict"] == "hard cohort"
    hard = t.row(DEMO_TRUTH["hard_cohort"])
    # the hard cohort: its baseline reliably above its partition's (the other employment values),
    # its lift (on the squared scale of an absolute error) no shorter
    assert hard["abs_error_baseline"] > 2 * t.frame.loc[0, "abs_error_baseline"]
    assert hard["abs_error_harder_q"] <= 0.05 and hard["abs_error_harder_low"] > 0
    assert hard["abs_error_lift_shortfall"] < 0 and hard["abs_error_lift_shortfall_q"] > 0.05
    defect = t.row(DEMO_TRUTH["defect"])
    # the defect: baseline as elsewhere, the lift reliably short, and the model beaten by its own
    # offset removed (the unit bug)
    assert defect["abs_error_baseline"] == pytest.approx(t.frame.loc[0, "abs_error_baseline"], rel=0.1)
    assert defect["abs_error_harder_q"] > 0.05 and defect["abs_error_harder_low"] < 0 < defect["abs_error_harder_high"]
    assert defect["abs_error_lift_shortfall_q"] <= 0.05 and defect["abs_error_lift_shortfall_low"] > 0
    assert defect["abs_error_worse_q"] <= 0.05
    # ordinary slices (no cohort item) called a defect or a hard cohort are false findings:
    # at most 5% of the findings under BH, none under Bonferroni (here)
    f = t.frame
    ordinary = ~f["itemset"].str.contains("employment=|channel=", regex=True) & (f["length"] > 0)
    findings = f["abs_error_verdict"].isin(["defect", "hard cohort"])
    assert (findings & ordinary).sum() <= 0.05 * findings.sum()
    strict = assess(t, correction="bonferroni").frame
    assert not (strict["abs_error_verdict"].isin(["defect", "hard cohort"]) & ordinary).any()


def test_baselines_by_hand(demo_regression, demo):
    t = demo_regression
    app = demo["channel"] == "App"
    y = demo.loc[app, "spend"]
    row = t.row("channel=App")
    assert row["abs_error_baseline"] == pytest.approx((y - y.median()).abs().mean(), rel=1e-12)
    model = (demo.loc[app, "predicted_spend"] - y).abs().mean()
    # the lift on an absolute error's natural scale: baseline squared minus error squared
    assert row["abs_error_lift"] == pytest.approx((y - y.median()).abs().mean() ** 2 - model ** 2, rel=1e-10)
    # against its partition: every channel with its own median, pooled
    b, e, n = [], [], []
    for ch in ("App", "Branch", "Web"):
        rows = demo["channel"] == ch
        yy, err = demo.loc[rows, "spend"], (demo.loc[rows, "predicted_spend"] - demo.loc[rows, "spend"]).abs()
        b.append((yy - yy.median()).abs().mean())
        e.append(err.mean())
        n.append(rows.sum())
    n = np.array(n, dtype=float)
    pooled_b, pooled_e = (n * b).sum() / n.sum(), (n * e).sum() / n.sum()
    assert row["abs_error_harder"] == pytest.approx(b[0] - pooled_b, rel=1e-9)
    assert row["abs_error_lift_shortfall"] == pytest.approx((pooled_b ** 2 - pooled_e ** 2) - (b[0] ** 2 - e[0] ** 2),
                                                            rel=1e-9)
    sq = scan(demo, attributes=["channel"], min_support=0.05, target="spend", prediction="predicted_spend",
              metrics=["squared_error"])
    assert sq.row("channel=App")["squared_error_baseline"] == pytest.approx(y.var(ddof=0), rel=1e-10)
    err = scan(demo, attributes=["region"], min_support=0.05, target="defaulted", prediction="predicted_default",
               positive="yes", metrics=["error"])
    south = demo["region"] == "South"
    share = (demo.loc[south, "defaulted"] == "yes").mean()
    assert err.row("region=South")["error_baseline"] == pytest.approx(min(share, 1 - share))


def test_tiny_extreme_slice_keeps_its_direction_marked_indicative():
    rng = np.random.default_rng(3)
    n = 2000
    df = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "h": rng.choice(["x", "y"], n)})
    df["o"] = (rng.random(n) < 0.1).astype(float)
    df.loc[:3, "g"] = "tiny"
    df.loc[:3, "o"] = 1.0  # four rows, all ones: point estimate 1.0 against 0.1
    t = scan(df, outcome="o", min_support=0.001)
    row = t.row("g=tiny")
    # Fisher's exact test finds four ones out of four against a rate of 0.1 (p about 1e-4):
    # significant at any size, so it keeps its direction, flagged below the minimum size, with
    # an interval that says how wide its size is
    assert row["o"] == 1.0 and row["o_q"] <= 0.05
    assert row["o_verdict"] == "above" and not row["o_meets_min_size"]
    assert row["o_divergence_ci_high"] - row["o_divergence_ci_low"] > 0.4
    # the same slice with two ones out of four is not significant: too small to tell
    df.loc[:1, "o"] = 0.0
    row = scan(df, outcome="o", min_support=0.001).row("g=tiny")
    assert row["o_q"] > 0.05 and row["o_verdict"] == "too small"


def test_bootstrap_covers_at_about_the_nominal_rate():
    covered, trials = 0, 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        n = 600
        df = pd.DataFrame({"g": rng.choice(["a", "b"], n, p=[0.3, 0.7])})
        df["o"] = rng.exponential(2.0, n)  # skewed outcome, true mean 2 in every slice
        t = scan(df, outcome="o", min_support=0.01, bootstrap=200, seed=seed)
        row = t.row("g=a")
        covered += row["o_boot_low"] <= 2.0 <= row["o_boot_high"]
        trials += 1
    assert 0.88 <= covered / trials <= 0.99


def test_bootstrap_is_seeded_and_limited_to_top_k(demo):
    kw = dict(attributes=DEMO_ATTRIBUTES, min_support=0.02, bootstrap=100, **DEMO_ROLES["classification"])
    a = scan(demo, seed=1, top_k=5, **kw).frame
    b = scan(demo, seed=1, top_k=5, **kw).frame
    c = scan(demo, seed=2, top_k=5, **kw).frame
    pd.testing.assert_series_equal(a["fpr_boot_low"], b["fpr_boot_low"])
    assert not a["fpr_boot_low"].equals(c["fpr_boot_low"])
    boot = a["fpr_boot_low"].notna()
    assert 5 <= boot.sum() <= 6  # the top five by divergence, and the whole dataset
    top = a.iloc[1:].sort_values("fpr_divergence", ascending=False).index[:5]
    assert boot[top].all()


def test_replication_on_a_second_table(demo):
    later = load_demo(seed=99)
    t = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.01, replicate=later, **DEMO_ROLES["regression"])
    assert t.assessment.replication == "second table"
    for key in ("defect", "hard_cohort"):
        assert bool(t.row(DEMO_TRUTH[key])["abs_error_replicated"])
    row = t.row("channel=App")
    app = later["channel"] == "App"
    assert row["abs_error_replicated_value"] == pytest.approx(
        (later.loc[app, "predicted_spend"] - later.loc[app, "spend"]).abs().mean(), rel=1e-12)
    # a significant slice that fails to replicate is called so
    f = t.frame
    assert set(f["abs_error_verdict"][f["abs_error_replicated"] == False]) <= {"not replicated", "noise", "too small"}  # noqa: E712


def test_holdout_replication(demo):
    t = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, holdout=0.5, seed=4, **DEMO_ROLES["classification"])
    assert 4500 < t.n_rows < 5500 and t.assessment.replication_rows == 10_000 - t.n_rows
    assert bool(t.row(DEMO_TRUTH["elevated_fpr"])["fpr_replicated"])
    assert t.row(DEMO_TRUTH["elevated_fpr"])["fpr_verdict"] == "above"


def test_apply_bins_to_new_data():
    df = pd.DataFrame({"x": [1.0, 5.0, 9.0, np.nan], "c": ["a", "b", "a", "b"], "o": [1.0, 2, 3, 4]})
    t = scan(df, outcome="o", bins={"x": [4]}, min_support=0.25)
    new = pd.DataFrame({"x": [4.0, 4.5, np.nan], "c": ["b", "zzz", None]})
    codes = apply_bins(new, t.bins)
    xb, cb = t.bins
    assert [xb.labels[c] for c in codes[:, 0]] == ["<=4", ">4", "missing"]
    assert cb.labels[codes[0, 1]] == "b" and codes[1, 1] == -1 and codes[2, 1] == -1
    with pytest.raises(DivergenceInputError, match="Column 'x' of the original scan is not in the replication data"):
        apply_bins(new.drop(columns="x"), t.bins)


def test_every_slice_gets_exactly_one_verdict(demo_regression):
    v = demo_regression.frame["abs_error_verdict"]
    assert v.iloc[0] == "" and v.iloc[1:].isin(VERDICTS).all()


def test_assess_recomputes_without_mining(demo_regression):
    again = assess(demo_regression, confidence=0.99, correction="bonferroni")
    assert again.assessment.correction == "bonferroni"
    f0, f1 = demo_regression.frame, again.frame
    np.testing.assert_array_equal(f0["abs_error"], f1["abs_error"])
    assert (f1["abs_error_q"].iloc[1:] >= f0["abs_error_q"].iloc[1:] - 1e-15).all()
    assert f1["abs_error_verdict"].isin(["defect", "hard cohort"]).sum() <= f0["abs_error_verdict"].isin(["defect", "hard cohort"]).sum()

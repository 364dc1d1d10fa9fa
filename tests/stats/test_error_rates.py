"""The statistics' promises, checked by simulation on seeded tables with known truth (a few
seeds each; ``benchmarks/validation/sim_error_rates.py`` runs the full count and prints the rates)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import divergence.stats.stats as stats
from divergence import assess, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.simulate import (
    classifier_cohorts_table,
    noisier_labels_table,
    null_table,
    planted_rate_table,
    two_group_table,
)


def _alarms(table) -> int:
    """Slices found significant in a table where none differs."""
    return sum(int((table.frame[f"{m}_q"].iloc[1:] <= 0.05).sum()) for m in table.metric_names)


@pytest.mark.parametrize("kind", ["abs_error", "squared_error", "lognormal"])
def test_skewed_null_outcomes_raise_no_false_finding(kind):
    """Slices down to 50 rows of 10,000; no attribute changes the outcome. A plain Welch test
    finds dozens of slices here (all small, below the whole dataset): they missed the long tail."""
    for seed in range(3):
        df, kw, _ = null_table(kind, seed)
        t = scan(df, min_support=0.005, **kw)
        assert t.n_tested[t.metric_names[0]] > 1500
        assert _alarms(t) == 0


def test_the_skew_guard_is_what_prevents_them(monkeypatch):
    df, kw, _ = null_table("lognormal", 0)
    monkeypatch.setattr(stats, "SKEW_GUARD", math.inf)
    plain = scan(df, min_support=0.005, **kw)
    f = plain.frame.iloc[1:]
    found = f[f["o_q"] <= 0.05]
    assert len(found) > 5 and (found["o_divergence"] < 0).all() and found["o_count"].max() < 400


def test_one_family_per_metric_by_default_and_the_joint_family_as_an_option():
    """Three rates scanned together: by default each metric's q-values are corrected over its own
    slices (issue 43, point 4); ``family="scan"`` corrects over every slice of every metric."""
    df, kw, _ = null_table("three_rates", 1)
    per = scan(df, min_support=0.005, **kw)
    assert per.assessment.family == "metric" and per.assessment.family_size == per.n_tested
    assert per.family == ("metric", per.n_tested)
    for m in per.metric_names:
        np.testing.assert_allclose(per.frame[f"{m}_q"].iloc[1:], stats.adjust_p(per.frame[f"{m}_p"].to_numpy()[1:]))
    t = scan(df, min_support=0.005, family="scan", **kw)
    a = t.assessment
    total = sum(t.n_tested.values())
    assert a.family == "scan" and all(a.family_size[m] == total for m in t.metric_names)
    assert t.family == ("scan", {m: total for m in t.metric_names})
    joined = np.concatenate([t.frame[f"{m}_p"].to_numpy()[1:] for m in t.metric_names])
    q = stats.adjust_p(joined, "bh")
    np.testing.assert_array_equal(np.concatenate([t.frame[f"{m}_q"].to_numpy()[1:] for m in t.metric_names]), q)
    assert (t.frame["fpr_q"].iloc[1:] >= per.frame["fpr_q"].iloc[1:] - 1e-15).all()


@pytest.mark.parametrize("share, kind, slice_mean, rest_mean, slice_sd, rest_sd", [
    (0.01, "normal", 0.3, 0.0, 0.3, 2.0),
    (0.05, "normal", 0.3, 0.0, 0.3, 2.0),
    (0.4, "normal", 0.3, 0.0, 2.0, 0.3),
    (0.01, "rate", 0.02, 0.3, 0, 0),
    (0.05, "rate", 0.02, 0.3, 0, 0),
    (0.4, "rate", 0.3, 0.3, 0, 0),
])
def test_divergence_interval_covers_the_true_divergence(share, kind, slice_mean, rest_mean, slice_sd, rest_sd):
    """Slice against the whole dataset (which holds the slice): unequal spreads, rates near 0,
    shares from 1% to 40%. 4,000 simulated tables per setting, by the functions the scan uses
    (checked equal to the scan's columns below)."""
    rng = np.random.default_rng(11)
    reps, n = 4000, 10_000
    k = int(share * n)
    if kind == "rate":
        k1, k2 = rng.binomial(k, slice_mean, reps), rng.binomial(n - k, rest_mean, reps)
        lo, hi = stats.rate_difference_interval(k1, k, k2, n - k, 0.95)
    else:
        x = rng.normal(slice_mean, slice_sd, (reps, k))
        sums = [x.sum(axis=1), (x * x).sum(axis=1)]
        # the rest's sums drawn from their exact distributions (normal mean, chi-square spread)
        m2 = rng.normal(rest_mean, rest_sd / np.sqrt(n - k), reps)
        ss2 = rest_sd ** 2 * rng.chisquare(n - k - 1, reps)
        md = stats.mean_difference_test(k, sums[0], sums[1], n - k, (n - k) * m2, ss2 + (n - k) * m2 ** 2, 0.0)
        lo, hi = md.interval(0.95)
    truth = slice_mean - rest_mean
    covered = np.mean((lo <= truth) & (truth <= hi))
    assert 0.935 <= covered <= 0.965  # 94-96%, within simulation error (3 standard errors: 0.01)


def test_scan_divergence_interval_is_the_slice_vs_rest_interval_scaled():
    df, kw, truth = two_group_table(3, share=0.05, slice_sd=0.3, rest_sd=2.0)
    t = scan(df, min_support=0.001, **kw)
    r = t.row("g=s")
    x, y = df.loc[df["g"] == "s", "o"].to_numpy(), df.loc[df["g"] == "r", "o"].to_numpy()
    skew = stats.skewness_from_sums(len(y), y.sum(), (y * y).sum(), (y ** 3).sum())
    lo, hi = stats.mean_difference_test(len(x), x.sum(), (x * x).sum(), len(y), y.sum(), (y * y).sum(),
                                        skew).interval(0.95)
    share = 1 - len(x) / len(df)
    assert (r["o_divergence_ci_low"], r["o_divergence_ci_high"]) == pytest.approx((share * lo, share * hi), rel=1e-6)
    df, kw, truth = two_group_table(3, share=0.05, kind="rate", slice_mean=0.02, rest_mean=0.3)
    r = scan(df, min_support=0.001, **kw).row("g=s")
    k1, k2 = df.loc[df["g"] == "s", "o"].sum(), df.loc[df["g"] == "r", "o"].sum()
    lo, hi = stats.rate_difference_interval(k1, 500, k2, 9500, 0.95)
    assert (r["o_divergence_ci_low"], r["o_divergence_ci_high"]) == pytest.approx((0.95 * lo, 0.95 * hi), rel=1e-12)


def test_a_slice_without_events_gets_an_interval_that_covers():
    """40 rows at rate 0.02: no event 45% of the time. Neither the Wilson interval nor the
    bootstrap interval is ever [0, 0], and both cover the true rate."""
    runs, hits, boot_hits = 80, 0, 0
    for seed in range(runs):
        df, kw, _ = two_group_table(seed, share=0.02, n=2000, kind="rate", slice_mean=0.02, rest_mean=0.02)
        r = scan(df, min_support=0.001, bootstrap=200, seed=seed, **kw).row("g=s")
        assert r["o_ci_high"] > r["o_ci_low"] and r["o_boot_high"] > r["o_boot_low"]
        hits += r["o_ci_low"] <= 0.02 <= r["o_ci_high"]
        boot_hits += r["o_boot_low"] <= 0.02 <= r["o_boot_high"]
    assert hits / runs >= 0.93 and boot_hits / runs >= 0.93


def test_test_and_corrected_interval_agree():
    """Real outcomes: q <= alpha exactly when the corrected interval excludes 0 (the test is the
    interval's inversion). Rates (Fisher's test, Newcombe's interval): a finding needs both."""
    t = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["regression"])
    f = t.frame.iloc[1:]
    excludes = (f["abs_error_divergence_adj_low"] > 0) | (f["abs_error_divergence_adj_high"] < 0)
    assert ((f["abs_error_q"] <= 0.05) == excludes).all() and excludes.sum() > 50
    level = t.assessment.corrected_level["abs_error"]
    assert level == pytest.approx(1 - 0.05 * (f["abs_error_q"] <= 0.05).sum() / t.n_tested["abs_error"])
    # the bound nearest zero is the simultaneous (Bonferroni) interval's: 0 for the slices that are
    # noise, never beyond the corrected interval's bound, on the divergence's side where it is not 0
    bound = f["abs_error_divergence_bound"]
    assert (bound[~excludes] == 0).all()
    nonzero = bound != 0
    assert nonzero.sum() > 20 and (np.sign(bound[nonzero]) == np.sign(f["abs_error_divergence"][nonzero])).all()
    adj = np.where(f["abs_error_divergence"] > 0, f["abs_error_divergence_adj_low"], f["abs_error_divergence_adj_high"])
    assert (np.abs(bound[nonzero]) <= np.abs(adj[nonzero.to_numpy()]) + 1e-12).all()
    c = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["classification"]).frame.iloc[1:]
    found = ~c["fpr_verdict"].isin(["noise", "too small"])
    assert found.any() and ((c["fpr_divergence_adj_low"] > 0) | (c["fpr_divergence_adj_high"] < 0))[found].all()
    assert (c.loc[found, "fpr_q"] <= 0.05).all()


def test_noisier_labels_are_a_hard_cohort_and_random_flips_a_defect():
    for seed in range(2):
        df, kw, truth = noisier_labels_table(seed)
        t = scan(df, min_support=0.005, **kw)
        row = t.row(truth["cohort"])
        # the relative lift 1 - error / baseline would be reliably lower (noise raises both by
        # the same amount, not the same factor); on the natural scale it is not
        assert 1 - row["abs_error"] / row["abs_error_baseline"] < 0.7 * (1 - t.overall("abs_error") /
                                                                          t.frame.loc[0, "abs_error_baseline"])
        assert row["abs_error_lift_shortfall_q"] > 0.05 and row["abs_error_harder_q"] <= 0.05
        assert row["abs_error_verdict"] == "hard cohort"
        assert row["abs_error_reference"] == pytest.approx(row["abs_error"], rel=0.02)
        assert row["abs_error_reference"] < row["abs_error_baseline"]
        df, kw, truth = classifier_cohorts_table(seed)
        t = scan(df, min_support=0.005, **kw)
        assert t.row(truth["hard_cohort"])["error_verdict"] == "hard cohort"
        broken = t.row(truth["defect"])
        assert broken["error_verdict"] == "defect" and broken["error_reference"] < broken["error"] - 0.05


def test_refinements_of_a_hard_cohort_are_not_defects():
    for seed in (3, 4):
        t = scan(load_demo(seed=seed), attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["regression"])
        f = t.frame
        assert t.row(DEMO_TRUTH["hard_cohort"])["abs_error_verdict"] == "hard cohort"
        assert t.row(DEMO_TRUTH["defect"])["abs_error_verdict"] == "defect"
        refinements = (f["itemset"].str.contains("employment=Self-employed", regex=False)
                       & ~f["itemset"].str.contains("channel=App", regex=False) & (f["length"] > 1)
                       & (f["abs_error_q"] <= 0.05) & (f["abs_error_divergence"] > 0))
        assert refinements.sum() > 50
        assert (f.loc[refinements, "abs_error_verdict"] == "defect").sum() <= 0.05 * refinements.sum()


def test_without_rows_no_verdict_from_a_point_estimate():
    """Tallies only (as from DuckDB or Spark): the achievable error cannot be computed, so no
    defect is claimed; a hard cohort needs a lift shortfall reliably below 0."""
    t = scan(load_demo(), attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["regression"])
    bare = assess(dataclasses.replace(t, kept_rows=None, assessment=None))
    for key in ("hard_cohort", "defect"):
        assert bare.row(DEMO_TRUTH[key])["abs_error_verdict"] == "undetermined"
    assert bare.assessment.verdicts_from == "tallies" and np.isnan(bare.frame["abs_error_reference"]).all()
    df, kw, truth = classifier_cohorts_table(0)
    t = assess(dataclasses.replace(scan(df, min_support=0.005, **kw), kept_rows=None))
    v = t.frame["error_verdict"]
    assert "defect" not in set(v) and t.row(truth["defect"])["error_verdict"] == "undetermined"
    hard = t.frame[v == "hard cohort"]
    assert (hard["error_lift_shortfall"] < 0).all()


def test_shrunk_divergence_on_null_data_and_a_planted_effect():
    for seed in range(2):
        df, kw, _ = null_table("rate", seed)
        f = scan(df, min_support=0.005, **kw).frame.iloc[1:]
        assert np.abs(f["o_divergence_shrunk"]).max() <= 0.5 * np.abs(f["o_divergence"]).max()
        df, kw, truth = planted_rate_table(seed)
        t = scan(df, min_support=0.005, **kw)
        r = t.row(truth["itemset"])
        true_div = (1 - r["o_count"] / t.frame.loc[0, "o_count"]) * truth["effect"]
        assert abs(r["o_divergence_shrunk"] - true_div) <= 0.03
        top = t.frame.iloc[1:]["o_divergence"].idxmax()
        assert t.frame.loc[top, "o_divergence_shrunk"] < t.frame.loc[top, "o_divergence"]


def test_replicated_divergence_is_the_second_tables_slice_minus_its_whole():
    demo = load_demo()
    later = load_demo(seed=99)
    t = scan(demo, attributes=["channel", "region"], min_support=0.01, replicate=later, **DEMO_ROLES["regression"])
    app = later["channel"] == "App"
    err = (later["predicted_spend"] - later["spend"]).abs()
    row = t.row("channel=App")
    assert row["abs_error_replicated_divergence"] == pytest.approx(err[app].mean() - err.mean(), rel=1e-9)
    assert t.frame.loc[0, "abs_error_replicated_divergence"] == 0

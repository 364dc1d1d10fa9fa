"""Distinct findings and the estimates at the top of the default order, by simulation (a few seeds
of each world; benchmarks/validation/sim_findings.py runs 200 and prints the table in docs/method-record.md)."""
from __future__ import annotations

import pytest

from divergence.simulate import findings_run, findings_summary

SEEDS = range(6)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["one", "two", "null", "planted"])
def test_findings_worlds(kind):
    runs = [findings_run(kind, seed) for seed in SEEDS]
    rows = findings_summary(runs)
    assert rows
    failed = [(setting, value, target) for setting, _, value, target, ok in rows if not ok]
    assert not failed, failed
    if kind == "one":  # every run: the cohort alone, first, its refinements explained
        assert all(r["findings"] == ["a0=v0"] and r["first"] == "a0=v0" for r in runs)
    if kind == "two":
        assert all(set(r["cohorts"]) <= set(r["findings"]) and len(r["findings"]) <= 4 for r in runs)


@pytest.mark.slow
def test_correlated_worlds_name_the_planted_cohorts():
    """Issue 28 (benchmarks/validation/sim_correlated.py runs 100 seeds per world and size): with a stand-in
    attribute agreeing with a cohort's on 80% of rows, the findings at 20,000 rows are the planted
    cohorts; a null world of the same attributes has no finding."""
    from divergence.simulate import correlated_run

    for kind in ("two", "three"):
        runs = [correlated_run(kind, seed, n=20_000) for seed in range(5)]
        exact = sum(sorted(r["findings"]) == sorted(r["cohorts"]) for r in runs)
        assert exact >= 4, [(r["seed"], r["findings"]) for r in runs]
    assert sum(bool(correlated_run("null", seed, n=20_000)["findings"]) for seed in range(5)) <= 1


@pytest.mark.slow
def test_a_lone_interaction_keeps_its_size_when_shrunk():
    """Issue 28 item 5: a two-item effect whose items do not diverge alone is measured from the whole
    dataset, as a single item is (its parents shrink to 0), so it keeps its size; a refinement of a
    real cohort that adds nothing reads the cohort's shrunk value."""
    from divergence.scan import scan
    from divergence.simulate import calibration_slope, correlated_run, correlated_world

    runs = [correlated_run("interaction", seed, n=20_000) for seed in range(5)]
    for r in runs:
        assert abs(r["shrunk"] - r["truth"]) < 0.04, r
    # issue 43: judged against its truth, not a share of its raw divergence: the mean within 0.03,
    # the top of the shrunk list calibrated (the truth on the shrunk estimate, through 0, 1 ± 0.1)
    assert abs(sum(r["shrunk"] - r["truth"] for r in runs) / len(runs)) <= 0.03
    top = [t for r in runs for t in r["top"]]
    assert abs(calibration_slope([t[0] for t in top], [t[2] for t in top], origin=True) - 1.0) <= 0.1, top
    df, kw, _ = correlated_world(0, "two", n=20_000)
    f = scan(df, min_support=0.01, bootstrap=0, **kw).frame.set_index("itemset")
    cohort = f.at["c0=u0", "fpr_divergence_shrunk"]
    assert abs(cohort - f.at["c0=u0", "fpr_divergence"]) < 0.01 and cohort > 0.03
    for refinement in ("c0=u0, c7=q0", "c0=u0, c3=s1", "c0=u0, c4=s2"):
        assert abs(f.at[refinement, "fpr_divergence_shrunk"] - cohort) < 0.01, refinement


def test_the_true_models_bar_is_a_logistic_likelihood_ratio_at_holms_step():
    """sim_model's oracle (whether the true model keeps a planted cohort at the search's bar) is the
    likelihood-ratio test of the cohort given the other cohorts, a logistic model fitted here by scipy,
    held to α/(m − k + 2): in the three-cohort world at 10,000 rows the weak cohort (+0.05 on a
    sixth) passes it in some seeds and fails it in others, the strong ones pass."""
    import numpy as np
    from scipy.optimize import minimize
    from scipy.stats import norm

    from divergence.simulate import _detectable, correlated_world

    m = 4500
    bar = norm.isf(0.05 / (m - 3 + 2) / 2)
    seen = set()
    for seed in range(6):
        df, _, info = correlated_world(seed, "three", n=10_000)
        neg = df[df["y"] == "no"]
        y = (neg["pred"] == "yes").to_numpy(float)
        cols = [np.ones(len(neg))] + [np.logical_and.reduce([(neg[a] == v).to_numpy() for a, v in
                                                            (i.split("=") for i in c.split(", "))]).astype(float)
                                      for c in info["cohorts"]]

        def ll(X):
            f = lambda b: -(y * (X @ b) - np.logaddexp(0, X @ b)).sum()  # noqa: E731
            return -minimize(f, np.zeros(X.shape[1]), method="BFGS").fun

        every = ll(np.column_stack(cols))
        got = _detectable(neg, info["cohorts"], m)
        for i, c in enumerate(info["cohorts"]):
            z = np.sqrt(max(2 * (every - ll(np.column_stack([x for j, x in enumerate(cols) if j != i + 1]))), 0))
            if abs(z - bar) > 0.01:
                assert got[c] == (z >= bar), (seed, c, z, bar)
        assert got["c0=u0"] and got["c0=u2, c2=t1"]
        seen.add(got["c6=r2"])
    assert seen == {True, False}


def test_a_finding_inside_the_defect_worse_than_its_rest_is_not_called_better():
    """Issue 43 (hetero world, absolute error, seed 117, found by re-running 200 seeds): beside a hard
    cohort the defect's overlap with it reads below the additive model, so the refinement the noise
    made lowest has a negative effect given the other findings; it is still worse than the whole
    dataset and than the rest of the defect, so it is ``undetermined``, not ``better``. The hard
    cohort and the defect keep their verdicts."""
    import numpy as np

    from divergence import scan
    from divergence.simulate import hetero_world

    df, kw, _ = hetero_world(117, n=10_000)
    t = scan(df, min_support=0.01, bootstrap=0, **kw)
    f = t.frame
    shown = f[f["abs_error_finding"].astype(bool)]
    verdict = dict(zip(shown["itemset"], shown["abs_error_verdict"]))
    assert verdict["h=v0"] == "hard cohort" and verdict["k=v2"] == "defect"
    inside = shown[shown["abs_error_within"].astype(str) == "k=v2"]
    assert len(inside) == 1
    row = inside.iloc[0]
    assert row["abs_error_effect"] < 0 < row["abs_error_divergence"] and row["abs_error_within_difference"] > 0
    assert row["abs_error_verdict"] == "undetermined"
    assert not np.any(shown["abs_error_verdict"].astype(str) == "better")

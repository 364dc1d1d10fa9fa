"""The built-in dataset: deterministic, and its planted effects are what a scan finds."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from divergence import scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo


def test_deterministic():
    pd.testing.assert_frame_equal(load_demo(), load_demo())
    assert len(load_demo()) == 10_000 and not load_demo(500).isna().any().any()


def _items(itemset: str) -> set[str]:
    return set(itemset.split(", ")) if itemset else set()


def test_elevated_fpr_is_found_and_nothing_else():
    df = load_demo()
    t = scan(df, attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["classification"])
    f = t.frame.iloc[1:]
    planted = _items(DEMO_TRUTH["elevated_fpr"])
    best = t.top(1, metric="fpr", by="fpr_t").iloc[0]
    assert _items(best["itemset"]) == planted
    assert 0.3 < best["fpr"] < 0.42 and 0.08 < t.overall("fpr") < 0.11
    # slices on the other attributes hold the same share of the planted group as the rest
    # of the rows: no p-value survives a Bonferroni correction over all slices tested
    tested = f["fpr_p"].notna().sum()
    other = f["itemset"].map(lambda s: not any(i.startswith(("region=", "education=")) for i in _items(s)))
    assert other.sum() > 100 and f.loc[other, "fpr_p"].min() > 0.05 / tested
    # slices that exclude the planted group have the base false-positive rate, 0.08
    outside = f["itemset"].map(lambda s: any(i.startswith(("region=", "education=")) and i not in planted
                                             for i in _items(s)))
    negatives = np.rint(f["fpr_count"]).astype(int)
    fps = np.rint(f["fpr"] * f["fpr_count"]).astype(int)
    p = [binomtest(k, n, 0.08).pvalue for k, n in zip(fps[outside], negatives[outside])]
    assert len(p) > 100 and min(p) > 0.05 / tested
    assert f["fnr_p"].min() > 0.05 / f["fnr_p"].notna().sum()


def test_regression_cohorts_stand_out():
    df = load_demo()
    t = scan(df, attributes=DEMO_ATTRIBUTES, min_support=0.01, **DEMO_ROLES["regression"])
    f = t.frame
    hard = t.row(DEMO_TRUTH["hard_cohort"])
    defect = t.row(DEMO_TRUTH["defect"])
    assert hard["abs_error"] > 1.7 * t.overall("abs_error") and hard["abs_error_p"] < 1e-10
    assert defect["abs_error"] > 1.5 * t.overall("abs_error") and defect["abs_error_p"] < 1e-10
    # every slice outside both cohorts is ordinary
    outside = ~f["itemset"].map(lambda s: any(i.startswith(("employment=", "channel=")) for i in _items(s)))
    outside &= f["length"] > 0
    assert f.loc[outside, "abs_error_p"].min() > 0.05 / f["abs_error_p"].notna().sum()
    # the defect's cohort is ordinary in its spend; the hard cohort's spend spreads three times wider
    app, self_emp = df["channel"] == "App", df["employment"] == "Self-employed"
    assert abs(df.loc[app & ~self_emp, "spend"].std() / df.loc[~app & ~self_emp, "spend"].std() - 1) < 0.1
    assert df.loc[self_emp, "spend"].std() > 2.5 * df.loc[~self_emp, "spend"].std()

"""Slices typed by hand (divergence.explain.adhoc): their rows, counts, values, tests, q-values and
verdicts against references computed from the rows, and the rows findings share."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import fisher_exact

from divergence import DivergenceInputError, item_contributions, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo
from divergence.explain.adhoc import item_catalog, measure_slice, overlap, rows_covered, slice_rows
from divergence.stats.stats import adjust_p, wilson_interval

STATS = dict(confidence=0.95, correction="bh", bootstrap=200, seed=0)


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture(scope="module")
def table(demo):
    return scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"], **STATS)


@pytest.fixture(scope="module")
def regression(demo):
    return scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["regression"], **STATS)


def _mask(df, **items):
    m = np.ones(len(df), dtype=bool)
    for col, value in items.items():
        m &= (df[col] == value).to_numpy()
    return m


def test_a_mined_slice_is_read_from_the_result(table):
    m = measure_slice(table, ["education=Primary", "region=South"])  # any order
    assert m.mined and m.why_not_mined == "" and m.table is table
    assert m.index == table.lookup("region=South, education=Primary")
    assert m.n_family == table.n_tested


def test_a_slice_below_the_support_against_the_rows(table, demo):
    items = ["sex=Female", "region=South", "education=Primary", "channel=App"]
    m = measure_slice(table, items)
    assert not m.mined and "below the minimum support 0.02" in m.why_not_mined
    row = m.row
    rows = _mask(demo, sex="Female", region="South", education="Primary", channel="App")
    negatives = rows & (demo["defaulted"] == "no").to_numpy()
    fp = negatives & (demo["predicted_default"] == "yes").to_numpy()
    assert row["count"] == rows.sum() and row["fpr_count"] == negatives.sum()
    assert row["fpr"] == pytest.approx(fp.sum() / negatives.sum())
    assert row["fpr_divergence"] == pytest.approx(row["fpr"] - table.overall("fpr"))
    low, high = wilson_interval(np.array([fp.sum()]), np.array([negatives.sum()]), 0.95)
    assert (row["fpr_ci_low"], row["fpr_ci_high"]) == pytest.approx((low[0], high[0]))
    # Fisher's exact test of the slice against the rest of the rows where FPR is defined
    all_neg = (demo["defaulted"] == "no").to_numpy()
    all_fp = all_neg & (demo["predicted_default"] == "yes").to_numpy()
    rest_fp, rest_neg = all_fp.sum() - fp.sum(), all_neg.sum() - negatives.sum()
    _, p = fisher_exact([[fp.sum(), negatives.sum() - fp.sum()], [rest_fp, rest_neg - rest_fp]])
    assert row["fpr_p"] == pytest.approx(p, rel=1e-6)
    # q: the slice is one more member of the family the result tested (fpr's tests of the mined
    # slices, each metric its own family by default, and of the subsets of this one that were not mined)
    new = [i for i in range(len(m.table)) if table.index_of(m.table.codes[i][:len(table.attributes)])[0] < 0]
    family = np.concatenate([table.frame["fpr_p"].to_numpy()[1:], m.table.frame["fpr_p"].to_numpy()[new]])
    q = adjust_p(family, "bh")[len(table) - 1 + new.index(m.index)]
    assert row["fpr_q"] == pytest.approx(q)
    assert m.n_family["fpr"] == table.n_tested["fpr"] + len(new)
    n_min = table.assessment.min_size["fpr"].n_min
    assert row["fpr_meets_min_size"] == (negatives.sum() >= n_min)
    assert not row["fpr_meets_min_size"]  # 30 negatives
    # inside the planted slice (FPR 0.35 against 0.08): significant, so its direction at any size
    assert row["fpr_q"] <= 0.05 and row["fpr_verdict"] == "above"
    assert row["fpr_boot_low"] < row["fpr"] < row["fpr_boot_high"]


def test_mined_subsets_keep_their_numbers(table):
    """The subsets of a typed slice that were mined show the same counts, values, p-values,
    intervals and bootstrap intervals as in the result (same bins, same bootstrap draws)."""
    m = measure_slice(table, ["sex=Female", "region=South", "education=Primary", "channel=App"])
    f, small = table.frame, m.table.frame
    checked = 0
    for i in range(len(m.table)):
        j = int(table.index_of(m.table.codes[i])[0])
        if j < 0:
            continue
        for col in ["count", "fpr", "fpr_p", "fpr_ci_low", "fpr_ci_high", "fpr_boot_low", "fpr_boot_high",
                    "fnr", "fnr_p", "fpr_meets_min_size"]:
            assert small.iloc[i][col] == pytest.approx(f.iloc[j][col], nan_ok=True), (m.table.itemsets[i], col)
        checked += 1
    assert checked >= 8


def test_shapley_of_a_typed_slice_sums_to_its_divergence(table):
    m = measure_slice(table, "sex=Female, region=South, education=Primary, channel=App")
    contrib = item_contributions(m.table, m.itemset, metric="fpr")
    assert contrib["contribution"].sum() == pytest.approx(m.row["fpr_divergence"])
    assert sorted(contrib["item"]) == sorted(m.itemset.split(", "))


def test_a_column_left_out_of_the_scan(demo):
    attrs = [a for a in DEMO_ATTRIBUTES if a not in ("channel", "income")]
    t = scan(demo, attributes=attrs, min_support=0.02, **DEMO_ROLES["classification"], **STATS)
    catalog = item_catalog(t, demo)
    assert {"channel=App", "income=<=37"} <= set(catalog.loc[~catalog["scanned"], "item"])
    assert "applicant_id" not in set(catalog["attribute"])  # row numbers are no attribute
    m = measure_slice(t, ["channel=App", "region=South"], data=demo)
    assert not m.mined and "'channel' was left out of the scan's attributes" == m.why_not_mined
    rows = _mask(demo, channel="App", region="South")
    assert m.row["count"] == rows.sum()
    neg = rows & (demo["defaulted"] == "no").to_numpy()
    assert m.row["fpr"] == pytest.approx((neg & (demo["predicted_default"] == "yes").to_numpy()).sum() / neg.sum())
    # a numeric column is cut as the scan would have cut it
    full = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"], **STATS)
    m = measure_slice(t, ["income=<=37"], data=demo)
    assert m.row["count"] == full.row("income=<=37")["count"]
    assert slice_rows(t, ["income=<=37"], data=demo).sum() == m.row["count"]
    with pytest.raises(DivergenceInputError, match="not the 10,000 rows it mined"):
        measure_slice(t, ["channel=App"], data=demo.head(100))


def test_regression_verdicts_of_a_typed_slice(regression):
    m = measure_slice(regression, ["channel=App", "sex=Female", "region=North"])
    row = m.row
    assert row["abs_error_verdict"] in ("defect", "too small", "noise")
    assert {"abs_error_baseline", "abs_error_lift", "abs_error_lift_shortfall"} <= set(row.index)
    assert row["abs_error_baseline"] > 0


@pytest.mark.parametrize("items, message", [
    (["region=Mars"], "'Mars' is not an item of 'region'"),
    (["region=South", "region=North"], "one item per attribute: 'region' appears twice"),
    (["planet=Mars"], "does not start with a known attribute"),
    ([], "at least one item"),
])
def test_bad_items_are_named(table, items, message):
    with pytest.raises(DivergenceInputError, match=message):
        measure_slice(table, items)


def test_needs_the_rows(table):
    no_rows = dataclasses.replace(table, kept_rows=None)
    assert measure_slice(no_rows, ["region=South"]).mined  # a mined slice still reads
    with pytest.raises(DivergenceInputError, match="needs the rows"):
        measure_slice(no_rows, ["sex=Female", "region=South", "education=Primary", "channel=App"])


def test_overlap_counts_shared_rows(table, demo):
    slices = ["region=South, education=Primary", "education=Primary", "region=South, channel=App", "region=North"]
    shared = overlap(table, slices)
    masks = [_mask(demo, region="South", education="Primary"), _mask(demo, education="Primary"),
             _mask(demo, region="South", channel="App"), _mask(demo, region="North")]
    expected = np.array([[(a & b).sum() for b in masks] for a in masks])
    np.testing.assert_array_equal(shared.to_numpy(), expected)
    assert list(shared.index) == slices
    # without rows: from the mined lattice (NaN where the slice of both was not mined)
    lattice = overlap(dataclasses.replace(table, kept_rows=None), slices)
    known = np.isfinite(lattice.to_numpy())
    np.testing.assert_array_equal(lattice.to_numpy()[known], expected[known])
    assert lattice.iloc[0, 3] == 0  # South and North share no row

    assert rows_covered(table, slices) == (masks[1] | masks[2] | masks[3]).sum()
    assert rows_covered(dataclasses.replace(table, kept_rows=None), slices) is None


def test_items_describing_a_listed_slice_another_way(demo):
    """A result lists each distinct set of rows once: items that hold on the same rows as a
    listed slice (a code beside its label) read that slice, and count once in the family."""
    df = demo.assign(region_code=demo["region"].str[0])
    t = scan(df, attributes=DEMO_ATTRIBUTES + ["region_code"], min_support=0.02,
             **DEMO_ROLES["classification"], **STATS)
    assert not t.exhaustive
    m = measure_slice(t, ["region_code=S", "education=Primary"])
    assert m.mined and m.same_rows_as == "region=South, education=Primary" == m.itemset
    assert m.row["count"] == t.row("region=South, education=Primary")["count"]
    plain = measure_slice(t, ["region=South", "education=Primary"])
    assert plain.mined and plain.same_rows_as == ""
    # below the support: its subsets that are listed under another description count once
    small = measure_slice(t, ["region_code=S", "education=Primary", "sex=Female", "channel=App"])
    assert not small.mined
    unlisted = 0
    for i in range(1, len(small.table)):
        try:
            t.lookup(small.table.itemsets[i])  # itself, or the listed slice with its rows
        except DivergenceInputError:
            unlisted += 1
    assert 0 < unlisted < len(small.table) - 1
    assert small.n_family["fpr"] == t.n_tested["fpr"] + unlisted


def test_a_slice_below_the_support_of_a_real_outcome(regression, demo):
    """The per-row tallies of a real-valued outcome, its cubes for the skew guard included, are
    rebuilt in the result's layout: the slice's value and its test against the rows."""
    items = ["region=South", "channel=App", "education=Primary", "employment=Self-employed"]
    m = measure_slice(regression, items)
    assert not m.mined
    rows = _mask(demo, region="South", channel="App", education="Primary", employment="Self-employed")
    err = np.abs(demo["spend"] - demo["predicted_spend"]).to_numpy()
    assert m.row["count"] == rows.sum() > 0
    assert m.row["abs_error"] == pytest.approx(err[rows].mean(), rel=1e-12)
    assert m.row["abs_error_divergence"] == pytest.approx(err[rows].mean() - err.mean(), rel=1e-9)
    assert 0 <= m.row["abs_error_p"] <= 1


def test_a_cut_typed_on_any_numeric_column_is_measured_from_the_rows():
    """income<=20, income=(20,35] (a scanned attribute's other bins) and a cut on a column left out of
    the scan are measured from the rows with the scan's settings, equal to brute force."""
    from divergence import item_contributions
    from divergence.data.datasets import load_demo

    df = load_demo()
    t = scan(df, target="defaulted", prediction="predicted_default", positive="yes", metrics=["fpr"],
             min_support=0.02, attributes=["age", "sex", "region", "education", "income"])
    neg = df[df["defaulted"] == "no"]
    fp = neg["predicted_default"] == "yes"
    for items, rows in [(["income<=20"], neg["income"] <= 20),
                        ("region=South, income=(20,35]", (neg["income"] > 20) & (neg["income"] <= 35)
                         & (neg["region"] == "South")),
                        (["sex=Female", "income=>35"], (neg["income"] > 35) & (neg["sex"] == "Female")),
                        (["spend<100"], neg["spend"] < 100),
                        (["age=[30,40)"], (neg["age"] >= 30) & (neg["age"] < 40))]:
        ms = measure_slice(t, items, data=df)
        assert not ms.mined and "typed by hand" in ms.why_not_mined
        assert ms.row["fpr_count"] == rows.sum() and ms.row["fpr"] == pytest.approx(fp[rows].mean(), rel=1e-12)
        assert np.isfinite(ms.row["fpr_q"]) and ms.n_family["fpr"] > t.n_tested["fpr"]
        c = item_contributions(ms.table, ms.itemset, metric="fpr")
        assert c["contribution"].sum() == pytest.approx(ms.row["fpr_divergence"], abs=1e-12)
    with pytest.raises(DivergenceInputError, match="not on a numeric column"):
        measure_slice(t, ["nope<=3"], data=df)
    with pytest.raises(DivergenceInputError, match="is empty"):
        measure_slice(t, ["income=(30,20]"], data=df)
    # after tree binning, the typed cut is measured on the rows the table measured (the rest)
    tree = scan(df, target="defaulted", prediction="predicted_default", positive="yes", metrics=["fpr"],
                min_support=0.02, attributes=["region", "income"], binning="tree")
    rest = df.iloc[tree.kept_rows.positions]
    neg = rest[rest["defaulted"] == "no"]
    ms = measure_slice(tree, ["income<=20"], data=df)
    assert ms.row["fpr_count"] == (neg["income"] <= 20).sum()

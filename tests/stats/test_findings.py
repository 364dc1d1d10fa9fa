"""Distinct findings, the default order and the headline tiles (divergence.stats.findings): the planted
cohorts of the built-in data are the findings and lead the order, their spillover is explained by
them, the residual tests equal a computation from the rows, and the tiles add up."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import data_file
from divergence import scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
from divergence.present.cards import headline, headline_tiles
from divergence.vocabulary import SIGNIFICANT_VERDICTS

SPILLOVER = ("sex=Female, education=Primary", "education=Primary, employment=Salaried")


@pytest.fixture(scope="module")
def fpr_table():
    return scan(load_demo(), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES, min_support=0.02)


@pytest.fixture(scope="module")
def regression_table():
    return scan(load_demo(), **DEMO_ROLES["regression"], attributes=DEMO_ATTRIBUTES, min_support=0.02)


def test_built_in_fpr_has_one_distinct_finding_and_its_spillover_is_explained(fpr_table):
    t, f = fpr_table, fpr_table.frame
    planted = DEMO_TRUTH["elevated_fpr"]
    assert list(t.findings("fpr")["itemset"]) == [planted]
    for s in SPILLOVER:  # significant, and with the planted cohort's rows accounted for, no longer
        row = t.row(s)
        assert row["fpr_q"] <= 0.05 and not row["fpr_finding"] and row["fpr_explained_by"] == planted
    # the slices that only look low because the cohort lifts the whole dataset: explained too
    below = f[(f["fpr_verdict"] == "below")]
    assert len(below) and set(below["fpr_explained_by"]) == {planted}
    # every significant slice is the finding or explained by it
    sig = f.iloc[1:][(f["fpr_q"].iloc[1:] <= 0.05) & ((f["fpr_divergence_adj_low"] > 0)
                                                     | (f["fpr_divergence_adj_high"] < 0)).iloc[1:]]
    assert ((sig["fpr_explained_by"] == planted) | sig["fpr_finding"]).all()
    assert t.findings("fpr")["covers"].iloc[0] == len(sig)
    # first in the default order, everywhere: top(), the order column
    assert t.top(1, metric="fpr")["itemset"].iloc[0] == planted
    assert t.row(planted)["fpr_order"] == 1


def test_regression_defect_and_hard_cohort_are_the_findings_first_in_their_verdict(regression_table):
    t, f, m = regression_table, regression_table.frame, "abs_error"
    found = t.findings(m)
    assert set(found["itemset"]) == {DEMO_TRUTH["defect"], DEMO_TRUTH["hard_cohort"]}
    for verdict, planted in (("defect", DEMO_TRUTH["defect"]), ("hard cohort", DEMO_TRUTH["hard_cohort"])):
        assert list(found.loc[found[f"{m}_verdict"] == verdict, "itemset"]) == [planted]
        first = f.iloc[t.default_order(m)]
        assert first[first[f"{m}_verdict"] == verdict]["itemset"].iloc[0] == planted


def test_default_order_findings_lead_and_meets_min_size_first_within_each_group(fpr_table, regression_table):
    for t in (fpr_table, regression_table):
        for m in t.metric_names:
            rows = t.frame.iloc[t.default_order(m)]
            meets = rows[f"{m}_meets_min_size"].to_numpy(dtype=bool)
            finding = rows[f"{m}_finding"].to_numpy(dtype=bool)
            significant = rows[f"{m}_verdict"].isin(SIGNIFICANT_VERDICTS).to_numpy()
            group = np.where(finding, 0, np.where(significant, 1, 2))
            # the distinct findings first, then the other significant slices, then the rest
            assert (np.diff(group) >= 0).all()
            for g in (0, 1, 2):  # within each: never a slice below the minimum size ahead of one that meets it
                inside = meets[group == g]
                assert not (np.nonzero(~inside)[0][:1] < np.nonzero(inside)[0][-1:]).any()
            # a slice neither significant nor big enough (too small) never leads one that meets it
            assert (rows[f"{m}_verdict"].to_numpy()[group == 2][~meets[group == 2]] != "noise").all()
            assert list(t.top(len(t), metric=m).index) == list(rows.index)
            # sorting by any column stays one call away
            by = t.top(5, metric=m, by=f"{m}_divergence")
            assert list(by[f"{m}_divergence"]) == sorted(t.frame[f"{m}_divergence"].iloc[1:], reverse=True)[:5]


def test_residual_tests_equal_a_computation_from_the_rows():
    """The stratified residual statistic from the lattice walks equals one computed from the rows
    by boolean masks, for every candidate, given the findings (0/1 outcome: Cochran–Mantel–Haenszel
    with the continuity correction; each finding alone too)."""
    from divergence.stats.findings import _Rows, _Strata, significant_slices

    t = scan(load_demo(3000, seed=11), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES,
             min_support=0.03, bootstrap=0)
    k = 0
    f = t.frame
    cand = np.nonzero(significant_slices(f["fpr_q"].to_numpy(), f["fpr_divergence_adj_low"].to_numpy(),
                                         f["fpr_divergence_adj_high"].to_numpy(), 0.05))[0]
    cand = np.union1d(cand, np.arange(1, min(len(t), 200)))  # and some more slices
    tal = t.tallies[:, [1, 2, 3]]
    strata = _Strata(tal[cand], tal[0], True)
    rows = _Rows(t, cand, k)
    findings = [int(np.nonzero(cand == t.lookup(DEMO_TRUTH["elevated_fpr"]))[0][0]), 5, 40]
    active = np.ones(cand.size, dtype=bool)
    for pos in findings:
        assert rows.add(strata, pos, active)
    z_all, z_pair = rows.final(np.arange(cand.size), True)
    assert np.allclose(strata.z(), z_all, atol=1e-9)  # the step-by-step strata agree with the final walk
    o = np.asarray(t.outcome("fpr").values)
    d = ~np.isnan(o)
    masks = [t.rows_of(int(cand[p])) for p in findings]
    pattern = sum((m.astype(int) << j) for j, m in enumerate(masks))

    def cmh(s, groups):
        num = var = 0.0
        for g in np.unique(groups[d]):
            h = d & (groups == g)
            n1, big_n = (s & h).sum(), h.sum()
            n0, m = big_n - n1, o[h].sum()
            if n1 == 0 or n0 == 0:
                continue
            num += o[s & h].sum() - n1 * m / big_n
            var += n1 * n0 * m * (big_n - m) / (big_n ** 2 * max(big_n - 1, 1))
        num = np.sign(num) * max(abs(num) - 0.5, 0.0)
        return num / np.sqrt(var) if var > 1e-12 else 0.0

    for j, c in enumerate(cand):
        s = t.rows_of(int(c))
        assert z_all[j] == pytest.approx(cmh(s, pattern), abs=1e-7)
        for q, mask in enumerate(masks):
            assert z_pair[j, q] == pytest.approx(cmh(s, mask.astype(int)), abs=1e-7)


def test_tiles_add_up_with_replication_too():
    t = scan(load_demo(), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES, min_support=0.02, holdout=0.3)
    h = headline(t, "fpr")
    assert h["n_tested"] == h["n_significant"] + h["n_not_significant"]
    assert h["n_significant"] == h["n_findings"] + h["n_explained"] + h["n_unexplained"]
    assert h["n_significant"] == h["n_replicated"] + h["n_not_replicated"]
    tiles = {tile.label: tile for tile in headline_tiles(t, "fpr")}
    assert tiles["Distinct findings"].value == "1"
    assert tiles["Not replicated"].value == f"{h['n_not_replicated']:,}"
    assert tiles["Slices tested"].caption == f"{h['n_significant']:,} significant + {h['n_not_significant']:,} not"


def test_csv_and_frame_carry_the_findings(fpr_table, tmp_path):
    out = tmp_path / "slices.csv"
    fpr_table.to_csv(out)
    f = pd.read_csv(out, keep_default_na=False)
    assert {"fpr_finding", "fpr_explained_by", "fpr_order", "fnr_finding"} <= set(f.columns)
    row = f[f["itemset"] == SPILLOVER[0]].iloc[0]
    assert row["fpr_explained_by"] == DEMO_TRUTH["elevated_fpr"] and str(row["fpr_finding"]) == "False"


@pytest.mark.slow
def test_raw_compas_default_order_leads_with_findings_never_with_tiny_slices():
    """Raw COMPAS's first ten per metric: the distinct findings, then significant slices of at least
    n_min rows; none too small, none of a few rows (the 1-3-row slices at FPR 100% led before)."""
    from divergence.data.io import load_table

    raw = load_table(data_file("compas-scores-two-years.csv")).frame
    t = scan(raw, target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr", "fnr"],
             bootstrap=0)
    for m in ("fpr", "fnr"):
        first = t.top(10, metric=m)
        finding = first[f"{m}_finding"].to_numpy(dtype=bool)
        assert finding[0] and finding.sum() == int(t.frame[f"{m}_finding"].sum())
        assert first[f"{m}_verdict"].isin(SIGNIFICANT_VERDICTS).all()
        assert first.loc[~finding, f"{m}_meets_min_size"].all()
        assert first[f"{m}_count"].min() >= 100


def test_comparison_slices_worse_only_through_a_finding_are_explained_by_it():
    from divergence import compare
    from divergence.data.datasets import DEMO_COMPARE, DEMO_COMPARE_TRUTH, load_demo_models

    c = compare(load_demo_models(), **DEMO_COMPARE["classification"], attributes=DEMO_ATTRIBUTES, min_support=0.02)
    f = c.frame.iloc[1:]
    planted = DEMO_COMPARE_TRUTH["worse_fpr"]
    assert list(f.loc[f["fpr_finding"], "itemset"]) == [planted]
    worse = f[f["fpr_verdict"] == "worse"]
    assert len(worse) > 1 and (worse["fpr_finding"] | (worse["fpr_explained_by"] == planted)).all()
    # the default order: the finding first among the slices of at least the minimum size
    assert c.top(1, metric="fpr")["itemset"].iloc[0] == planted
    assert c.headline("fpr")["findings"]["worse"] == 1


def test_the_table_says_which_finding_explains_a_slice(fpr_table):
    from divergence.present.formats import finding_label
    from divergence.present.views import display_frame, slice_view

    view = slice_view(fpr_table, metric="fpr", top_n=5)
    shown = display_frame(fpr_table, view.rows, "fpr")["Finding"].tolist()
    assert shown[0] == "distinct finding"
    assert shown[1:] == [f"explained by {DEMO_TRUTH['elevated_fpr']}"] * 4
    assert finding_label(False, "") == "" and finding_label(False, float("nan")) == ""


def test_the_revisions_residual_test_is_the_searchs():
    """The residual test a revision computes from the distinct rows' membership equals the search's
    (the strata of every finding, Fisher's exact test where one stratum informs), for every candidate."""
    from divergence.stats.findings import _ResidualTest, _Rows, _Strata, significant_slices

    t = scan(load_demo(3000, seed=11), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES,
             min_support=0.03, bootstrap=0)
    f = t.frame
    cand = np.nonzero(significant_slices(f["fpr_q"].to_numpy(), f["fpr_divergence_adj_low"].to_numpy(),
                                         f["fpr_divergence_adj_high"].to_numpy(), 0.05))[0]
    cand = np.union1d(cand, np.arange(1, min(len(t), 200)))
    tal = t.tallies[:, [1, 2, 3]]
    strata = _Strata(tal[cand], tal[0], True)
    rows = _Rows(t, cand, 0)
    findings = [int(np.nonzero(cand == t.lookup(DEMO_TRUTH["elevated_fpr"]))[0][0]), 5, 40]
    active = np.ones(cand.size, dtype=bool)
    for pos in findings:
        assert rows.add(strata, pos, active)
    every = np.array([p for p in range(cand.size) if p not in findings])
    st = rows.strata_of(every, True)
    searched = st.exact_z(every, st.z())
    test = _ResidualTest(rows, True)
    mine = np.array([test.z(int(p), findings) for p in every])
    np.testing.assert_allclose(mine, searched, atol=1e-7)
    # given no finding, the residual test is the slice's own test against the rest
    own = _Strata(tal[cand], tal[0], True)
    np.testing.assert_allclose([test.z(int(p), []) for p in every[:50]], own.exact_z(every[:50], own.z()), atol=1e-7)


def _look_low_world(seed: int, n: int = 20_000) -> pd.DataFrame:
    """a=v0 (30% of rows) +0.10 and a=v2, b=w1 (15%) +0.20: a=v1 reads low only because they lift
    the whole dataset."""
    rng = np.random.default_rng(seed)
    a = rng.choice(3, n, p=[0.3, 0.4, 0.3])
    b = rng.choice(2, n)
    p = 0.2 + 0.10 * (a == 0) + 0.20 * ((a == 2) & (b == 1))
    return pd.DataFrame({"a": np.array(["v0", "v1", "v2"])[a], "b": np.array(["w0", "w1"])[b],
                         "c": rng.choice(["x", "y", "z"], n), "o": (rng.random(n) < p).astype(float)})


def _look_low_search():
    """The look-low world scanned, its significant slices as the search's candidates, their distinct
    rows, the candidates left (all but the three below) and the positions of the look-low slice and
    the two cohorts."""
    from divergence.stats.findings import _Rows, significant_slices

    t = scan(_look_low_world(1), outcome="o", min_support=0.01, bootstrap=0)
    f = t.frame
    cand = np.nonzero(significant_slices(f["o_q"].to_numpy(), f["o_divergence_adj_low"].to_numpy(),
                                         f["o_divergence_adj_high"].to_numpy(), 0.05))[0]
    pos = {str(f["itemset"].iat[c]): j for j, c in enumerate(cand)}
    three = (pos["a=v1"], pos["a=v0"], pos["a=v2, b=w1"])
    alive = np.ones(cand.size, dtype=bool)
    alive[list(three)] = False
    return t, cand, _Rows(t, cand, 0), alive, three


def test_revision_drops_a_finding_the_later_ones_explain():
    """Backward: a look-low slice chosen among the findings is dropped once the cohorts that lift the
    average are findings too; real findings that do not explain each other stay."""
    from divergence.stats.findings import _revise, _z_two_sided

    t, cand, rows, alive, (low, c1, c2) = _look_low_search()
    revised = _revise(rows, [low, c1, c2], alive, np.zeros(cand.size), True, lambda j: _z_two_sided(0.05 / 1000))
    assert revised == [c1, c2]
    # the real findings stay: neither is explained by the other
    assert _revise(rows, [c1, c2], alive, np.zeros(cand.size), True, lambda j: _z_two_sided(0.05 / 1000)) is None
    # the whole search ends on the two cohorts
    assert sorted(t.findings("o")["itemset"]) == ["a=v0", "a=v2, b=w1"]


def test_the_first_finding_gets_no_margin_when_revised():
    """The backward step's margin keeps a finding that passed its residual test when it joined; the
    first finding was chosen by its test against the whole dataset (which the later findings lift),
    so it is dropped once it falls below the last finding's bar at all."""
    from divergence.stats.findings import DROP_MARGIN, _ResidualTest, _revise

    t, cand, rows, alive, (low, c1, c2) = _look_low_search()
    z_low = _ResidualTest(rows, True).leave_one_out([c1, c2, low])[2]
    bar = z_low + DROP_MARGIN / 2  # the look-low slice given the cohorts: within the margin below the bar
    assert _revise(rows, [c1, c2, low], alive, np.zeros(cand.size), True, lambda j: bar) is None
    assert _revise(rows, [low, c1, c2], alive, np.zeros(cand.size), True, lambda j: bar) == [c1, c2]


def test_a_finding_the_data_do_not_tell_from_a_near_copy_names_it():
    """A cohort and a near copy on a correlated attribute (88% of rows shared): where the copy tested
    stronger and was named, the cohort is its alias (each explains the other at the scan's bar, as
    recomputed from the rows); with twice the rows they are told apart and no alias is named."""
    from divergence.present.cards import findings as cards
    from divergence.simulate import correlated_world
    from divergence.stats.findings import _z_two_sided

    df, kw, info = correlated_world(6, "two", n=10_000)
    t = scan(df, min_support=0.01, bootstrap=0, **kw)
    f = t.frame
    named = f[f["fpr_finding"].astype(bool)].set_index("itemset")["fpr_alias"]
    assert named.to_dict() == {"c0=u0": "", "c0=u2, c5=t1": "c0=u2, c2=t1"}
    # from the rows: each one's residual test given the other (and c0=u0) fails the scan's bar
    neg = df[df["y"] == "no"]
    err = (neg["pred"] == "yes").to_numpy(float)
    mask = {s: np.logical_and.reduce([(neg[a] == v).to_numpy() for a, v in (x.split("=") for x in s.split(", "))])
            for s in ("c0=u0", "c0=u2, c5=t1", "c0=u2, c2=t1")}

    def residual(s, given):  # Cochran-Mantel-Haenszel z, with its continuity correction
        label = sum(mask[g].astype(int) << i for i, g in enumerate(given))
        num = var = 0.0
        for h in np.unique(label):
            r = label == h
            n1, n = (mask[s] & r).sum(), r.sum()
            if 0 < n1 < n:
                x = err[r].sum()
                num += err[mask[s] & r].sum() - n1 * x / n
                var += n1 * (n - n1) * x * (n - x) / (n * n * (n - 1))
        return max(abs(num) - 0.5, 0.0) / np.sqrt(var)

    z_scan = _z_two_sided(1.0 - t.assessment.corrected_level["fpr"])  # the scan's own bar
    assert residual("c0=u2, c2=t1", ["c0=u0", "c0=u2, c5=t1"]) < z_scan
    assert residual("c0=u2, c5=t1", ["c0=u0", "c0=u2, c2=t1"]) < z_scan
    card = next(c for c in cards(t, "fpr")[0] if c.itemset == "c0=u2, c5=t1")
    assert "the data do not tell it from “c0=u2, c2=t1” (they share 80.9% of their rows)" in card.sure
    from divergence.present.views import display_frame

    shown = display_frame(t, t.findings("fpr"), "fpr")["Finding"]
    assert sorted(shown) == ["distinct finding", "distinct finding, not told from c0=u2, c2=t1"]
    df, kw, info = correlated_world(6, "two", n=20_000)
    f = scan(df, min_support=0.01, bootstrap=0, **kw).frame
    assert sorted(f.loc[f["fpr_finding"].astype(bool), "itemset"]) == ["c0=u0", "c0=u2, c2=t1"]
    assert not f["fpr_alias"].astype(bool).any()


@pytest.mark.slow
def test_a_flat_metric_borrows_no_finding_from_another():
    """Issue 30, point 3: FNR is planted flat in the built-in data; scanned with FPR (one BH family, 87
    true FPR discoveries loosening BH's bar) it had a distinct finding in 11 of 20 seeds. The first
    finding of each metric now passes the scan's correction over that metric's slices alone: an FNR
    finding in at most 1 of 20 seeds, the planted FPR cohort found in every one."""
    fnr_found, fpr_found = 0, 0
    for seed in range(20):
        t = scan(load_demo(seed=seed), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES,
                 min_support=0.02, bootstrap=0)
        f = t.frame
        fnr_found += bool(f["fnr_finding"].any())
        fpr_found += DEMO_TRUTH["elevated_fpr"] in set(f.loc[f["fpr_finding"].astype(bool), "itemset"])
    assert fnr_found <= 1 and fpr_found == 20


@pytest.mark.parametrize("high, repeat", [(6, 1), (300, 1), (6, 400), (2 ** 30, 1)])
def test_distinct_rows_are_numpys_in_numpys_order(high, repeat):
    """The findings' distinct rows from one integer key per row (issue 27) are np.unique's, row for
    row and place for place, whatever the codes (-1 included; radixes past int64 take numpy's path)."""
    from divergence.stats.findings import _distinct_rows

    rng = np.random.default_rng(high + repeat)
    codes = rng.integers(-1, high, size=(20_000 // repeat, 7)).astype(np.int32)
    codes[rng.random(codes.shape) < 0.1] = -1
    codes = np.repeat(codes, repeat, axis=0)
    expected, inverse = np.unique(codes, axis=0, return_inverse=True)
    got, got_inverse = _distinct_rows(codes)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got_inverse, inverse.ravel())
    assert _distinct_rows(codes)[0] is got  # the table's other metric reuses them

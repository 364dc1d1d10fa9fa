"""Distinct findings, the default order and the headline tiles (divergence.stats.findings): the planted
cohorts of the built-in data are the findings and lead the order, their spillover is explained by
them, the findings' model and its score tests equal a computation from the rows, and the tiles add up."""
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


def _logistic(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A logistic regression fitted on the rows by Newton's method (the coefficients)."""
    beta = np.zeros(X.shape[1])
    for _ in range(50):
        mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
        step = np.linalg.solve(X.T @ (X * (mu * (1 - mu))[:, None]), X.T @ (y - mu))
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _demo_candidates():
    from divergence.stats.findings import significant_slices

    t = scan(load_demo(3000, seed=11), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES,
             min_support=0.03, bootstrap=0)
    f = t.frame
    cand = np.nonzero(significant_slices(f["fpr_q"].to_numpy(), f["fpr_divergence_adj_low"].to_numpy(),
                                         f["fpr_divergence_adj_high"].to_numpy(), 0.05))[0]
    cand = np.union1d(cand, np.arange(1, min(len(t), 200)))  # and some more slices
    return t, cand


def test_score_tests_equal_a_computation_from_the_rows():
    """The findings' model fitted on the cells of the distinct rows is the logistic regression fitted
    on the rows, and each candidate's score test given the terms (from one walk of the lattice)
    equals the efficient score test computed from the rows by boolean masks (with the continuity
    correction); the test given the terms but one (the cells merged) equals a fresh fit's."""
    from divergence.stats.findings_model import SMALL_EXPECTED, Rows
    from divergence.stats.findings_search import _State

    t, cand = _demo_candidates()
    rows = Rows(t, cand, 0)
    terms = [int(np.nonzero(cand == t.lookup(DEMO_TRUTH["elevated_fpr"]))[0][0]), 5, 40]
    state = _State(rows, terms, True, cand.size)
    o = np.asarray(t.outcome("fpr").values)
    d = ~np.isnan(o)
    y = o[d]
    masks = [t.rows_of(int(cand[p]))[d] for p in terms]
    X = np.column_stack([np.ones(y.size)] + [m.astype(float) for m in masks])
    beta = _logistic(X, y)
    np.testing.assert_allclose(state.cells.fit.beta, beta, atol=1e-6)
    mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
    v = mu * (1 - mu)
    info = X.T @ (X * v[:, None])
    for j, c in enumerate(cand):
        if j in terms:
            continue
        x = t.rows_of(int(c))[d].astype(float)
        u = float(x @ (y - mu))
        a = X.T @ (x * v)
        var = float(x @ (x * v) - a @ np.linalg.solve(info, a))
        expected = np.sign(u) * max(abs(u) - 0.5, 0.0) / np.sqrt(var) if var > 1e-9 * max(x @ (x * v), 1e-12) else 0.0
        pattern = sum(m.astype(int) << q for q, m in enumerate(masks))
        if all(len(set(x[pattern == h])) == 1 for h in np.unique(pattern)):
            expected = 0.0  # made of whole cells (the terms' own rows): no term of its own
        events = float(x @ mu)
        if min(events, x.sum() - events) < SMALL_EXPECTED and abs(expected) > 2.0:
            # few events expected: no stronger than the binomial test
            assert abs(state.full.z[j]) <= abs(expected) + 1e-9 and np.sign(state.full.z[j]) == np.sign(expected)
            continue
        assert state.full.z[j] == pytest.approx(expected, abs=1e-6)
    for i in range(len(terms)):
        others = [f for q, f in enumerate(terms) if q != i]
        fresh = _State(rows, others, True, cand.size)
        looked = state.neighbours()[:, i].copy()  # the term's neighbours and the terms are tested
        looked[terms] = True
        # the gains of the term's neighbours and the terms; the z of the term (the one read: backward)
        np.testing.assert_allclose(state.others(i)[2].gain[looked], fresh.full.gain[looked], rtol=1e-7, atol=1e-9)
        assert state.others(i)[2].z[terms[i]] == pytest.approx(fresh.full.z[terms[i]], abs=1e-9)
        assert not state.others(i)[2].free[~looked].any()
        assert state.others(i)[0].fit.ll == pytest.approx(fresh.ll, abs=1e-8)


def test_a_real_outcomes_model_is_weighted_least_squares_with_each_cells_variance():
    """A real outcome (the regression's absolute error): the fit is least squares weighted by each
    cell's residual variance (shrunk towards the pooled one), computed from the rows."""
    from divergence.stats.findings import significant_slices
    from divergence.stats.findings_model import VARIANCE_PRIOR, Rows
    from divergence.stats.findings_search import _State

    t = scan(load_demo(3000, seed=11), **DEMO_ROLES["regression"], attributes=DEMO_ATTRIBUTES, min_support=0.03,
             bootstrap=0)
    f = t.frame
    cand = np.nonzero(significant_slices(f["abs_error_q"].to_numpy(), f["abs_error_divergence_adj_low"].to_numpy(),
                                         f["abs_error_divergence_adj_high"].to_numpy(), 0.05))[0]
    terms = [int(np.nonzero(cand == t.lookup(DEMO_TRUTH["defect"]))[0][0]),
             int(np.nonzero(cand == t.lookup(DEMO_TRUTH["hard_cohort"]))[0][0])]
    state = _State(Rows(t, cand, 0), terms, False, cand.size)
    y = np.asarray(t.outcome("abs_error").values)
    masks = [t.rows_of(int(cand[p])) for p in terms]
    X = np.column_stack([np.ones(y.size)] + [m.astype(float) for m in masks])
    cell = masks[0].astype(int) + 2 * masks[1].astype(int)
    w = np.ones(y.size)
    for _ in range(4):
        beta = np.linalg.solve(X.T @ (X * w[:, None]), X.T @ (w * y))
        e2 = (y - X @ beta) ** 2
        pooled = e2.mean()
        var = {h: (e2[cell == h].sum() + VARIANCE_PRIOR * pooled) / ((cell == h).sum() + VARIANCE_PRIOR)
               for h in np.unique(cell)}
        new = np.array([1.0 / var[h] for h in cell])
        if np.allclose(new, w, rtol=1e-3):
            break
        w = new
    np.testing.assert_allclose(state.cells.fit.beta[1:], beta[1:], rtol=1e-6)


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
    row = fpr_table.row(DEMO_TRUTH["elevated_fpr"])
    # its effect in the findings' model (alone: against the other rows) with its interval
    assert shown[0].startswith("distinct finding, effect +") and shown[0].endswith("pp given the other findings")
    assert row["fpr_effect_ci_low"] < row["fpr_effect"] < row["fpr_effect_ci_high"]
    assert shown[1:] == [f"explained by {DEMO_TRUTH['elevated_fpr']}"] * 4
    assert finding_label(False, "") == "" and finding_label(False, float("nan")) == ""


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
    rows, and the positions of the look-low slice and the two cohorts."""
    from divergence.stats.findings import significant_slices
    from divergence.stats.findings_model import Rows

    t = scan(_look_low_world(1), outcome="o", min_support=0.01, bootstrap=0)
    f = t.frame
    cand = np.nonzero(significant_slices(f["o_q"].to_numpy(), f["o_divergence_adj_low"].to_numpy(),
                                         f["o_divergence_adj_high"].to_numpy(), 0.05))[0]
    pos = {str(f["itemset"].iat[c]): j for j, c in enumerate(cand)}
    return t, cand, Rows(t, cand, 0), (pos["a=v1"], pos["a=v0"], pos["a=v2, b=w1"])


def _search_from(rows, cand, start, bar):
    from divergence.stats.findings_search import search

    return search(rows, True, cand.size, None, bar, 1, np.arange(cand.size), None, start=start)[0].terms


def test_backward_and_exchange_put_the_cohorts_in_place_of_a_look_low_slice():
    """A search made to start from the slice that reads low only because the cohorts lift the
    average (a=v1) ends on the two cohorts: with them in, its effect is gone (backward), and from it
    alone the exchange puts a cohort in its place; the same from the three together."""
    from divergence.stats.findings_model import z_two_sided

    t, cand, rows, (low, c1, c2) = _look_low_search()
    bar = lambda j: 0.0 if j == 1 else z_two_sided(0.05 / 1000)  # noqa: E731
    assert sorted(_search_from(rows, cand, [low, c1, c2], bar)) == sorted([c1, c2])
    assert sorted(_search_from(rows, cand, [low], bar)) == sorted([c1, c2])
    # the whole search ends on the two cohorts, and a=v1 is explained by one of them
    assert sorted(t.findings("o")["itemset"]) == ["a=v0", "a=v2, b=w1"]
    assert t.row("a=v1")["o_explained_by"] in ("a=v0", "a=v2, b=w1")


def test_a_finding_the_data_do_not_tell_from_a_near_copy_names_it():
    """A cohort and a near copy on a correlated attribute (80% of rows shared): the model named the
    one that fits better and lists the other as tied (its model in the finding's place within 1.92 of
    the log-likelihood, as recomputed from the rows); the card and the table say so; with twice the
    rows the two are told apart."""
    from divergence.present.cards import findings as cards
    from divergence.present.views import display_frame
    from divergence.simulate import correlated_world

    df, kw, info = correlated_world(9, "two", n=10_000)
    t = scan(df, min_support=0.01, bootstrap=0, **kw)
    f = t.frame
    named = f[f["fpr_finding"].astype(bool)].set_index("itemset")["fpr_alias"].to_dict()
    tied = {s: [x for x in a.split(" | ") if x] for s, a in named.items()}
    assert named == {"c0=u0": "c1=w0 | c0=u0, c1=w0", "c0=u2, c2=t1": ""}
    neg = df[df["y"] == "no"]
    y = (neg["pred"] == "yes").to_numpy(float)

    def mask(s):
        return np.logical_and.reduce([(neg[a] == v).to_numpy() for a, v in (x.split("=") for x in s.split(", "))])

    def loglik(names):
        X = np.column_stack([np.ones(y.size)] + [mask(s).astype(float) for s in names])
        mu = 1.0 / (1.0 + np.exp(-(X @ _logistic(X, y))))
        return float((y * np.log(mu) + (1 - y) * np.log(1 - mu)).sum())

    full = loglik(list(named))
    for s, names in tied.items():
        others = [x for x in named if x != s]
        for x in names:  # each tied name: within 1.92 of the chosen model, and no better
            assert full - 1.92 - 1e-6 <= loglik(others + [x]) <= full + 1e-6
    with_ties = [s for s in tied if tied[s]]
    assert with_ties
    card = next(c for c in cards(t, "fpr")[0] if c.itemset == with_ties[0])
    assert f"the data do not tell it from “{tied[with_ties[0]][0]}”" in card.sure
    shown = display_frame(t, t.findings("fpr"), "fpr")["Finding"]
    assert any(x.endswith(f"not told from {named[with_ties[0]]}") for x in shown)
    assert all("given the other findings" in x for x in shown)
    df, kw, info = correlated_world(9, "two", n=20_000)
    f = scan(df, min_support=0.01, bootstrap=0, **kw).frame
    assert sorted(f.loc[f["fpr_finding"].astype(bool), "itemset"]) == ["c0=u0", "c0=u2, c2=t1"]


def test_the_verdict_follows_the_models_effect():
    """A hard cohort beside a defect (squared error): the defect is a finding, its effect given the
    hard cohort about the +1 planted (offset 1 on a unit-variance residual), no finding lying in the
    defect is called better, and each finding's verdict takes its effect's direction."""
    from divergence.simulate import hetero_world

    df, kw, info = hetero_world(1)
    t = scan(df, min_support=0.01, bootstrap=0, **kw)
    f = t.frame
    for m in ("abs_error", "squared_error"):
        found = f[f[f"{m}_finding"].astype(bool)]
        assert set(found["itemset"]) == {"h=v0", "k=v2"}
        k = found[found["itemset"] == "k=v2"].iloc[0]
        assert k[f"{m}_effect_ci_low"] < k[f"{m}_effect"] < k[f"{m}_effect_ci_high"]
        assert k[f"{m}_effect_ci_low"] > 0 and k[f"{m}_verdict"] != "better"
    k = f[f["itemset"] == "k=v2"].iloc[0]
    assert 0.7 < k["squared_error_effect"] < 1.3


def test_a_finding_whose_effect_and_divergence_differ_says_so():
    """The card of a finding below the whole dataset only because another finding raises it, yet worse
    than the rows like it: one sentence naming the finding that raises the whole dataset."""
    from divergence.present.cards import _model_effect

    t = scan(_look_low_world(1), outcome="o", min_support=0.01, bootstrap=0)
    stats = t.statistics("o")
    i = t.lookup("a=v0")
    text = _model_effect(stats, i, "o", False)
    assert "given the other findings" in text and "though" not in text  # the same direction: no sentence
    import dataclasses

    effect = np.array(stats.other["effect"], dtype=float).copy()
    effect[i] = -abs(effect[i])  # made to differ from its divergence (above the whole dataset)
    flipped = dataclasses.replace(stats, other=dict(stats.other, effect=effect))
    text = _model_effect(flipped, i, "o", False)
    assert "lower than the rows like it given the other findings, though above the whole dataset" in text


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
    # rows already distinct and in order (the in-memory miner's): the same answer, no copy, no sort
    ordered = np.ascontiguousarray(expected)
    again, again_inverse = _distinct_rows(ordered)
    assert again is ordered or high == 2 ** 30  # (radixes past int64 take numpy's path: a copy)
    np.testing.assert_array_equal(again, ordered)
    np.testing.assert_array_equal(again_inverse, np.arange(len(ordered)))


def test_the_findings_rows_of_a_mined_table_are_its_own_and_an_engines_merged_alike():
    """The findings' rows of a table mined in memory (its distinct rows sorted) are its codes as they
    are, with each row's tallies; handed every row twice in another order (as an engine may), the
    identical rows are merged to the same rows and tallies."""
    from divergence.stats.findings_model import Rows

    t, cand, rows, _ = _look_low_search()
    lat = t.lattice
    assert np.shares_memory(rows.codes, lat.distinct_codes)
    order = np.random.default_rng(0).permutation(2 * lat.distinct_codes.shape[0]) % lat.distinct_codes.shape[0]
    half = np.asarray(lat.distinct_tallies) / 2.0

    class Lattice:
        parent = lat.parent
        distinct_codes = np.ascontiguousarray(np.asarray(lat.distinct_codes)[order])
        distinct_tallies = np.ascontiguousarray(half[order])

    class Table:
        codes, lattice, metrics, tallies = t.codes, Lattice, t.metrics, t.tallies

    every = Rows(Table, cand, 0)
    np.testing.assert_array_equal(every.codes, rows.codes)
    np.testing.assert_allclose(every.w, rows.w, rtol=1e-12)


@pytest.mark.parametrize("x, n, p", [(5, 50, 0.02), (0, 100, 0.05), (30, 40, 0.5), (3, 1000, 0.01), (12, 300, 0.02), (980, 1000, 0.99), (400, 500, 0.97), (70, 5000, 0.006), (0, 3, 0.5), (200, 200, 0.999)])
def test_the_small_count_binomial_test_is_scipys(x, n, p):
    """The binomial test that caps a small 0/1 candidate's score test (no scipy in a scan of 0/1
    outcomes) gives scipy's two-sided p-value (twice the smaller tail)."""
    from scipy.stats import binom

    from divergence.stats.findings_model import _binomial_p

    expected = min(1.0, 2 * min(binom.sf(x - 1, n, p), binom.cdf(x, n, p)))
    assert _binomial_p(x, n, p) == pytest.approx(expected, rel=1e-9)


def test_many_binomial_tests_at_once_are_scipys(monkeypatch):
    """The small-count tests of one model's candidates, taken at once, give scipy's p-values."""
    from scipy.stats import binom

    from divergence.stats import findings_model
    from divergence.stats.findings_model import _binomial_p_many

    rng = np.random.default_rng(7)
    n = rng.integers(1, 3000, 400).astype(float)
    p = np.where(rng.random(400) < 0.5, rng.uniform(1e-4, 0.03, 400), rng.uniform(0.97, 1 - 1e-4, 400))
    x = np.clip(np.rint(n * p + rng.normal(0, 3 * np.sqrt(n * p * (1 - p) + 1))), 0, n)
    expected = np.minimum(1.0, 2 * np.minimum(binom.sf(x - 1, n, p), binom.cdf(x, n, p)))
    np.testing.assert_allclose(_binomial_p_many(x, n, p), expected, rtol=1e-8, atol=1e-300)
    # taken a few at a time (the memory bound), the same p-values to the bit
    monkeypatch.setattr(findings_model, "_TESTS_AT_ONCE", 7)
    assert np.array_equal(_binomial_p_many(x, n, p), _all_at_once(x, n, p))


def _all_at_once(x, n, p):
    from divergence.stats import findings_model

    keep = findings_model._TESTS_AT_ONCE
    findings_model._TESTS_AT_ONCE = 10**9
    try:
        return findings_model._binomial_p_many(x, n, p)
    finally:
        findings_model._TESTS_AT_ONCE = keep


def test_candidates_by_cells_sums_match_the_dense_product_without_holding_a_block():
    """Per candidate, its entries' weights times their cells' rows of the design: the same as the
    candidates-by-cells block times the design (to rounding), with duplicate (candidate, cell) entries
    summed, and computed in one pass that holds no such block (traced memory: the output alone)."""
    import tracemalloc

    from divergence.stats import findings_model

    rng = np.random.default_rng(3)
    n_cand, n_cells, n_entries = 8000, 150, 120_000
    c = rng.integers(0, n_cand, n_entries)
    h = rng.integers(0, n_cells, n_entries)
    w = rng.random(n_entries)
    w[::7] = 0.0
    M = (rng.random((n_cells, 9)) < 0.5).astype(float)
    M[:, 0] = 1.0
    M[3, 4] = 2.5  # not only 0/1
    dense = np.bincount(c * n_cells + h, weights=w, minlength=n_cand * n_cells).reshape(n_cand, n_cells) @ M
    findings_model.by_cells(c, h, w, n_cand, M)  # compiled once before tracing
    tracemalloc.start()
    try:
        got = findings_model.by_cells(c, h, w, n_cand, M)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-12)
    assert peak < n_cand * 9 * 8 + 4096  # the output; a candidates-by-cells block would be 9.6 MB
    assert findings_model.by_cells(c[:0], h[:0], w[:0], 5, M).shape == (5, 9)


def test_a_binary_models_score_sums_in_one_pass_are_numpys_to_the_bit():
    """The 0/1 score tests' per-candidate sums, made in one compiled pass over the entries, are the
    bits np.bincount gives (both add in the entries' order): rows, events, expected events, the
    score, the information, the entries holding part of their cell, the information times the
    design, and the rows in each term (those :func:`sum_rows_by` gives)."""
    from divergence.stats.findings_kernel import binary_score_sums, sum_rows_by

    rng = np.random.default_rng(5)
    n_cand, n_cells, n_entries = 700, 40, 30_000
    c = np.sort(rng.integers(0, n_cand - 3, n_entries))  # the last candidates have no entry
    h = rng.integers(0, n_cells, n_entries)
    n = rng.integers(1, 30, n_entries).astype(float)
    t = np.column_stack([n, np.floor(n * rng.random(n_entries)), rng.random(n_entries)])
    mu = rng.random(n_cells)
    v = mu * (1.0 - mu)
    X = np.column_stack([np.ones(n_cells), rng.random((n_cells, 5)) < 0.5]).astype(float)
    N = np.bincount(h, weights=n, minlength=n_cells)
    N[::3] = 0.0
    sums, a, rows_by = np.zeros((n_cand, 6)), np.zeros((n_cand, 6)), np.zeros((n_cand, 5))
    binary_score_sums(c, h, t, mu, v, X, N, sums, a, rows_by)
    by_terms = np.zeros((n_cand, 5))
    sum_rows_by(c, h, n, np.ascontiguousarray(X[:, 1:]), by_terms)
    np.testing.assert_array_equal(rows_by, by_terms)
    skipped = np.zeros((n_cand, 6)), np.zeros((n_cand, 6))
    binary_score_sums(c, h, t, mu, v, X, N, *skipped, np.zeros((0, 0)))
    np.testing.assert_array_equal(skipped[0], sums)

    def per(w):
        return np.bincount(c, weights=w, minlength=n_cand)

    wv = n * v[h]
    np.testing.assert_array_equal(sums[:, 0], per(n))
    np.testing.assert_array_equal(sums[:, 1], per(np.rint(t[:, 1])))
    np.testing.assert_array_equal(sums[:, 2], per(n * mu[h]))
    np.testing.assert_array_equal(sums[:, 3], per(np.rint(t[:, 1]) - n * mu[h]))
    np.testing.assert_array_equal(sums[:, 4], per(wv))
    np.testing.assert_array_equal(sums[:, 5], per((n < N[h] - 0.5).astype(float)))
    for col in range(X.shape[1]):
        np.testing.assert_array_equal(a[:, col], per(wv * X[h, col]))
    assert not a[-3:].any() and not sums[-3:].any()


def test_a_small_pool_grows_until_no_candidate_left_out_could_be_a_finding(monkeypatch):
    """The search's pool (the strongest candidates on their own) grows by rounds until no candidate
    left out could still be a finding given the terms: a pool of 30 ends on the findings of the whole
    candidate set, and a search whose rounds run out first says so instead of stopping silently."""
    import divergence.stats.findings as F
    from divergence.simulate import correlated_world

    df, kw, _ = correlated_world(0, "three", n=20_000)
    whole = scan(df, min_support=0.01, bootstrap=0, **kw)
    assert len(whole.frame.index[whole.frame["fpr_q"] <= 0.05]) > 300  # far more candidates than the pool
    monkeypatch.setattr(F, "POOL", 30)
    monkeypatch.setattr(F, "POOL_MORE", 5)
    small = scan(df, min_support=0.01, bootstrap=0, **kw)
    assert sorted(small.findings("fpr")["itemset"]) == sorted(whole.findings("fpr")["itemset"]) \
        == ["c0=u0", "c0=u2, c2=t1", "c6=r2"]
    assert not small.assessment.findings_cut
    monkeypatch.setattr(F, "POOL_ROUNDS", 1)
    one = scan(df, min_support=0.01, bootstrap=0, **kw)
    assert len(one.findings("fpr")) < 3
    assert "1 rounds ran out with" in one.assessment.findings_cut["fpr"]


def test_a_forward_steps_entries_split_from_the_last_steps_are_a_fresh_walks():
    """Adding a term to a 0/1 outcome's model, the candidates' entries split from the last model's (a
    walk over the new term's rows only, the rest by subtraction, one compiled pass) are a fresh
    walk's: the same (candidate, cell) tallies, each candidate's entries together, and the same score
    tests."""
    from divergence.stats.findings_search import _State

    t, cand, rows, (low, c1, c2) = _look_low_search()
    assert rows.whole_tallies
    state = _State(rows, [], True, cand.size)
    for x in (c1, low, c2):
        split = _State(rows, state.terms + [x], True, cand.size, before=state)
        fresh = _State(rows, state.terms + [x], True, cand.size)

        def cells(s):
            return {(int(c), int(h)): tuple(v) for c, h, v in zip(s.c, s.lab, s.t)}

        assert cells(split) == cells(fresh) and len(split.c) == len(fresh.c)
        runs = split.c[np.r_[True, split.c[1:] != split.c[:-1]]]
        assert runs.size == np.unique(split.c).size  # each candidate's entries consecutive
        np.testing.assert_allclose(split.full.z, fresh.full.z, rtol=1e-12, atol=1e-12)
        state = split


def test_a_binary_fit_from_no_start_reaches_its_maximum_when_a_term_has_little_information():
    """A 0/1 model's fit from no start reaches the log-likelihood's maximum (within the bounds of
    ±40, scipy's L-BFGS-B as the reference) on small designs where one term has a large effect on few
    rows: its Newton step is shortened to MAX_STEP. Unshortened, that term's coefficient swung between
    the bounds and the fit stopped far short (267 log-likelihood units on Adult's uncut search)."""
    import itertools

    from scipy.optimize import minimize

    from divergence.stats.findings_model import fit_cells

    rng = np.random.default_rng(0)
    for _ in range(12):
        k = int(rng.integers(3, 7))
        X = np.column_stack([np.ones(2 ** k), np.array(list(itertools.product([0, 1], repeat=k)))]).astype(float)
        beta = rng.normal(0.0, 1.5, k + 1)
        beta[0] = -3.0
        j = int(rng.integers(1, k + 1))
        beta[j] = rng.uniform(4.0, 7.0)
        n = rng.integers(1, 400, 2 ** k).astype(float)
        n[X[:, j] > 0] = rng.integers(1, 4, int((X[:, j] > 0).sum()))
        s = rng.binomial(n.astype(int), 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(float)

        def minus_ll(b, X=X, n=n, s=s):
            eta = X @ b
            return -float((s * eta - n * np.logaddexp(0.0, eta)).sum()), -(X.T @ (s - n / (1.0 + np.exp(-eta))))

        best = minimize(minus_ll, np.zeros(k + 1), jac=True, method="L-BFGS-B", bounds=[(-40.0, 40.0)] * (k + 1),
                        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
        assert fit_cells(X, n, s, s, True).ll >= -best.fun - 1e-6


def test_every_candidate_given_the_terms_by_blocks_is_one_walks_to_the_bit(monkeypatch):
    """The candidates left out are tested given the terms, and explained, a block of entries at a
    time (the entries held at once are a block's): the same findings, explained_by, ties and effects
    to the bit as the whole walk's entries at once, and the same work charged (the budget's cut is
    the same)."""
    import divergence.stats.findings as F
    from divergence.simulate import correlated_world

    df, kw, _ = correlated_world(3, "three", n=10_000)

    def run():
        t = scan(df, min_support=0.01, bootstrap=0, **kw)
        cols = [c for c in t.frame.columns if c.startswith("fpr_") and any(
            w in c for w in ("finding", "explained_by", "alias", "effect", "verdict"))]
        return t.frame[["itemset"] + cols], t.assessment.findings_cut

    monkeypatch.setattr(F, "GIVEN_BLOCK", 10 ** 9)
    whole, cut = run()
    monkeypatch.setattr(F, "GIVEN_BLOCK", 37)  # a block of about one candidate's entries at a time
    chunked, cut_chunked = run()
    assert int(whole["fpr_finding"].sum()) >= 2 and (whole["fpr_explained_by"].astype(str) != "").sum() > 50
    pd.testing.assert_frame_equal(whole, chunked)
    assert cut == cut_chunked


def test_an_outcome_the_cohorts_explain_exactly_has_them_as_its_only_findings():
    """A per-row rate scanned as the outcome (no noise: the planted cohorts explain it exactly) has
    residuals of rounding size only. Read over a variance of 0 they made |z| of 1e150 (an overflow)
    and 17 terms; read against the rounding floor, the findings are the two cohorts."""
    import warnings

    from divergence.simulate import two_cohorts_table

    df, kw, info = two_cohorts_table(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        t = scan(df, outcome="p", attributes=kw["attributes"], min_support=0.005, bootstrap=0)
    assert sorted(t.findings("p")["itemset"]) == sorted(info["cohorts"])


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_binary_fit_reaches_scipys_maximum_from_any_start(seed):
    """The compiled 0/1 fit (findings_kernel.fit_binary) reaches the log-likelihood's maximum within
    the bounds (scipy's L-BFGS-B as the reference) on random designs with cells of one kind only (a
    coefficient that runs off to the bound), from no start and from a start far off; a design with a
    repeated column (no information in one direction) gives finite coefficients at the same maximum."""
    import itertools

    from scipy.optimize import minimize

    from divergence.stats.findings_model import BOUND, fit_cells

    rng = np.random.default_rng(seed)
    for trial in range(8):
        k = int(rng.integers(1, 6))
        X = np.column_stack([np.ones(2 ** k), np.array(list(itertools.product([0, 1], repeat=k)))]).astype(float)
        if trial % 4 == 3:  # a repeated term
            X = np.column_stack([X, X[:, -1]])
        n = rng.integers(1, 300, X.shape[0]).astype(float)
        s = rng.binomial(n.astype(int), rng.uniform(0.05, 0.6, X.shape[0])).astype(float)
        if trial % 2:  # cells without events: a coefficient runs off to the bound
            s[X[:, 1] > 0] = 0.0

        def minus_ll(b, X=X, n=n, s=s):
            eta = X @ b
            return -float((s * eta - n * np.logaddexp(0.0, eta)).sum()), -(X.T @ (s - n / (1.0 + np.exp(-eta))))

        p = X.shape[1]
        best = minimize(minus_ll, np.zeros(p), jac=True, method="L-BFGS-B", bounds=[(-BOUND, BOUND)] * p,
                        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
        for start in (None, rng.normal(0.0, 3.0, p)):
            fit = fit_cells(X, n, s, s, True, start)
            assert np.all(np.isfinite(fit.beta)) and np.all(np.abs(fit.beta) <= BOUND)
            assert fit.ll == pytest.approx(-minus_ll(fit.beta)[0], rel=1e-12, abs=1e-9)
            assert fit.ll >= -best.fun - 1e-6, (trial, start)


@pytest.mark.parametrize("high, attrs", [(3, 6), (300, 12)], ids=["one key", "lexsort"])
def test_the_itemsets_own_order_is_numpys_lexsort_of_length_then_codes(high, attrs):
    """The order that breaks the findings' ties (fewer items first, then the codes attribute by
    attribute, an absent one first) from one mixed-radix key per itemset is numpy's lexsort's."""
    from divergence.stats.findings import _itemset_order

    codes = np.unique(np.random.default_rng(high).integers(-1, high, (4000, attrs)), axis=0).astype(np.int32)
    codes = codes[np.random.default_rng(1).permutation(codes.shape[0])]
    want = np.empty(codes.shape[0], dtype=np.int64)
    want[np.lexsort(tuple(codes.T[::-1]) + ((codes >= 0).sum(axis=1),))] = np.arange(codes.shape[0])
    assert np.array_equal(_itemset_order(codes), want)


def test_a_forward_steps_cells_split_from_the_last_steps_are_built_anew():
    """A forward step's cells, split from the last step's (no sort of the rows' patterns), are the
    cells built from every term's rows: the same patterns in the same order, labels, tallies and fit."""
    from divergence.stats.findings_model import Cells

    t, cand, rows, (low, c1, c2) = _look_low_search()
    cells = Cells(rows, [], True)
    terms: list = []
    for x in (c1, low, c2):
        terms.append(x)
        split = cells.adding(rows.member(x), rows.w)
        fresh = Cells(rows, terms, True)
        for name in ("uniq", "label", "tot", "X"):
            np.testing.assert_array_equal(getattr(split, name), getattr(fresh, name))
        assert split.fit.ll == fresh.fit.ll
        cells = split


def test_the_cells_without_a_term_from_the_cells_tallies_are_the_rows():
    """The model without a term: its cells' tallies summed from the cells' own (whole counts: exact in
    any order) are the same bits as summed from the rows again, and so is its fit."""
    from divergence.stats.findings_model import Cells

    t, cand, rows, (low, c1, c2) = _look_low_search()
    assert rows.whole_tallies
    cells = Cells(rows, [c1, low, c2], True)
    for i in range(3):
        merged, where = cells.without(i, rows.w, whole=True)
        again, where_again = cells.without(i, rows.w)
        np.testing.assert_array_equal(where, where_again)
        assert merged.label is None and again.label is None  # a model without a term reads its cells only
        for name in ("uniq", "tot", "X", "mu"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(again, name))
        assert merged.fit.ll == again.fit.ll


def test_the_strongest_candidates_are_a_stable_sorts_first():
    """The pool's strongest candidates by a partition are the first k of numpy's stable argsort,
    ties to the smaller index included."""
    from divergence.stats.findings import _strongest

    rng = np.random.default_rng(3)
    for a in (rng.random(5000), np.round(rng.random(5000), 2), np.repeat(rng.random(50), 100), np.zeros(300)):
        for k in (1, 7, 100, a.size - 1, a.size, a.size + 5):
            np.testing.assert_array_equal(_strongest(a, k), np.argsort(-a, kind="stable")[:k])

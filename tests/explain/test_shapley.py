"""Explaining a slice: Shapley contributions, global item divergence, corrective items,
redundancy pruning, bootstrap intervals and the figures.

References: hand computation on a tiny table, brute force over itemset strings (the
formulas of the issue written out with itertools), and DivExplorer's published numbers
(see the docstrings of the real-data tests for where each number comes from).
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from divergence import (
    DivergenceInputError,
    corrective_items,
    global_divergence,
    individual_divergence,
    item_contributions,
    prune_redundant,
    redundant_itemsets,
    scan,
    shapley_matrix,
)
from divergence.explain import shapley as S
from divergence.present.figures import (
    LOWERS_COLOR,
    RAISES_COLOR,
    contribution_figure,
    item_values_figure,
    lattice_figure,
)

ROLES = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])
TOP_FPR = "age=<25, #prior=>3, sex=Male"


# ----------------------------------------------------------------------------- references
def divergences(table, metric) -> dict:
    """{frozenset of items: divergence} read from the table's frame (strings only)."""
    f = table.frame
    return {frozenset(s.split(", ")) if s else frozenset(): d
            for s, d in zip(f["itemset"], f[f"{metric}_divergence"])}


def brute_shapley(div: dict, itemset: frozenset) -> dict:
    k = len(itemset)
    out = {}
    for a in itemset:
        rest = itemset - {a}
        out[a] = sum(math.factorial(r) * math.factorial(k - r - 1) / math.factorial(k)
                     * (div[frozenset(J) | {a}] - div[frozenset(J)])
                     for r in range(k) for J in itertools.combinations(rest, r))
    return out


def attr(item: str) -> str:
    return item.split("=")[0]


def brute_global(div: dict, skip_undefined: bool) -> dict:
    """DivExplorer 0.2.6's global item divergence, written out from its definition
    (divexplorer/shapley_value.py, global_itemset_divergence). With skip_undefined=False
    it behaves as DivExplorer does: an undefined divergence makes the sum NaN."""
    items = [next(iter(s)) for s in div if len(s) == 1]
    attrs = sorted({attr(i) for i in items})
    m = {a: sum(attr(i) == a for i in items) for a in attrs}
    out = {}
    for item in items:
        total = 0.0
        for J, dj in div.items():
            if any(attr(i) == attr(item) for i in J):
                continue
            JI = J | {item}
            if JI not in div:
                continue
            term = (div[JI] - dj) * math.factorial(len(J)) * math.factorial(len(attrs) - len(J) - 1) / (
                math.factorial(len(attrs)) * np.prod([m[attr(i)] for i in JI]))
            if skip_undefined and np.isnan(term):
                continue
            total += term
        out[item] = total
    return out


def random_frame(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "a": rng.choice(["a0", "a1", "a2"], n, p=[0.5, 0.3, 0.2]),
        "b": rng.choice(["b0", "b1"], n),
        "c": rng.choice(["c0", "c1", "c2", "c3"], n),
        "d": rng.choice(["d0", "d1"], n, p=[0.7, 0.3]),
    })
    df["y"] = rng.integers(0, 2, n)
    # a prediction that depends on the items, so divergences are not all noise
    p = 0.2 + 0.4 * (df["a"] == "a1") + 0.2 * (df["c"] == "c3")
    df["p"] = (rng.random(n) < p).astype(int)
    return df


# ----------------------------------------------------------------------------- local Shapley
def test_two_items_by_hand():
    # outcome o; whole dataset mean 0.5
    df = pd.DataFrame({"a": ["x"] * 4 + ["y"] * 4, "b": ["u", "u", "v", "v"] * 2,
                       "o": [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]})
    t = scan(df, outcome="o", min_support=0.1, exhaustive=True)
    # Δ(a=x) = 3/4 - 1/2, Δ(b=u) = 3/4 - 1/2, Δ(a=x, b=u) = 1 - 1/2
    # φ(a=x) = ½[Δ(a=x) - 0] + ½[Δ(a=x,b=u) - Δ(b=u)] = ½·¼ + ½·¼ = ¼, and the same for b=u
    c = item_contributions(t, "b=u, a=x")
    assert c.attrs["divergence"] == pytest.approx(0.5)
    assert dict(zip(c["item"], c["contribution"])) == pytest.approx({"a=x": 0.25, "b=u": 0.25})
    # Δ(a=y) = -1/4, Δ(b=u) = 1/4, Δ(a=y, b=u) = 0: φ(a=y) = ½(-¼) + ½(0 - ¼) = -¼, φ(b=u) = ¼
    c = item_contributions(t, "a=y, b=u")
    assert dict(zip(c["item"], c["contribution"])) == pytest.approx({"a=y": -0.25, "b=u": 0.25})
    assert list(c["item"]) == ["b=u", "a=y"]  # sorted, largest first


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shapley_matrix_equals_brute_force_and_sums_to_divergence(seed):
    df = random_frame(seed)
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr", "error"], min_support=0.01, exhaustive=True)
    for metric in ("fpr", "error"):
        phi = shapley_matrix(t, metric=metric)
        div = divergences(t, metric)
        d = np.asarray(t.columns[f"{metric}_divergence"])
        assert np.isnan(phi[0]).all()
        for i in range(1, len(t)):
            present = t.codes[i] >= 0
            assert np.isnan(phi[i, ~present]).all()
            if np.isnan(d[i]):
                assert np.isnan(phi[i]).all()
                continue
            # efficiency: the contributions sum to the divergence
            assert phi[i, present].sum() == pytest.approx(d[i], abs=1e-12)
            want = brute_shapley(div, frozenset(t.itemsets[i].split(", ")))
            for a in np.nonzero(present)[0]:
                assert phi[i, a] == pytest.approx(want[t.item_labels[a][t.codes[i, a]]], abs=1e-12)


def test_hashed_lookup_fallback_gives_the_same_values():
    t = scan(random_frame(5), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.01, exhaustive=True)
    exact = shapley_matrix(t)
    g = global_divergence(t)
    # pretend the attributes have too many values for exact integer keys
    S._LATTICES[t] = dataclasses.replace(S._lattice(t), strides=None)
    np.testing.assert_array_equal(shapley_matrix(t), exact)
    pd.testing.assert_frame_equal(global_divergence(t), g)


def test_filtered_table_is_refused():
    t = scan(random_frame(3), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05, exhaustive=True)
    keep = np.nonzero(t.lengths != 1)[0]
    cut = dataclasses.replace(t, codes=t.codes[keep], tallies=t.tallies[keep],
                              columns={k: v[keep] for k, v in t.columns.items()},
                              lattice=dataclasses.replace(t.lattice, parent=None))
    with pytest.raises(DivergenceInputError, match="subset of a mined itemset is missing"):
        shapley_matrix(cut)


# ----------------------------------------------------------------------------- global / individual
@pytest.mark.parametrize("seed", [0, 4])
def test_global_equals_divexplorer_definition(seed):
    df = random_frame(seed, n=300)
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr", "precision"], min_support=0.01, exhaustive=True)
    for metric in ("fpr", "precision"):
        g = global_divergence(t, metric=metric)
        want = brute_global(divergences(t, metric), skip_undefined=True)
        assert set(g["item"]) == set(want)
        for item, value in zip(g["item"], g["global"]):
            assert value == pytest.approx(want[item], abs=1e-12)
        assert list(g["global"]) == sorted(g["global"], reverse=True)
        ind = individual_divergence(t, metric=metric).set_index("item")["individual"]
        np.testing.assert_array_equal(g.set_index("item")["individual"], ind[g["item"]])
        assert list(ind.dropna()) == sorted(ind.dropna(), reverse=True)


def test_global_is_never_nan_with_undefined_outcomes():
    # precision is undefined where nothing is predicted positive: make such slices frequent
    df = random_frame(9, n=300)
    df.loc[df["d"] == "d1", "p"] = 0
    t = scan(df, target="y", prediction="p", positive=1, metrics=["precision"], min_support=0.01, exhaustive=True)
    div = divergences(t, "precision")
    assert any(np.isnan(v) for v in div.values())
    g = global_divergence(t)
    assert g["global"].notna().all()
    # DivExplorer's sum turns NaN for the items that reach an undefined itemset; ours
    # leaves those terms out, exactly like itemsets below the support threshold
    literal = brute_global(div, skip_undefined=False)
    assert any(np.isnan(v) for v in literal.values())
    skipped = brute_global(div, skip_undefined=True)
    for item, value in zip(g["item"], g["global"]):
        assert value == pytest.approx(skipped[item], abs=1e-12)
        if not np.isnan(literal[item]):
            assert value == pytest.approx(literal[item], abs=1e-12)
    # an item with no defined outcome at all: individual NaN, global 0
    row = g[g["item"] == "d=d1"].iloc[0]
    assert np.isnan(row["individual"]) and row["global"] == 0.0


# ----------------------------------------------------------------------------- corrective, pruning
def test_corrective_items_equal_brute_force():
    t = scan(random_frame(2), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.02, exhaustive=True)
    div = divergences(t, "fpr")
    want = set()
    for K, dk in div.items():
        for item in K:
            I = K - {item}
            if len(I) >= 1 and abs(div[I]) - abs(dk) >= 0.02:
                want.add((", ".join(sorted(I)), item))
    got = corrective_items(t, min_reduction=0.02)
    assert {(", ".join(sorted(s.split(", "))), i) for s, i in zip(got["itemset"], got["item"])} == want
    assert (got["reduction"] >= 0.02).all()
    np.testing.assert_allclose(got["reduction"], got["divergence"].abs() - got["divergence_with_item"].abs())
    assert list(got["reduction"]) == sorted(got["reduction"], reverse=True)
    for _, r in got.head(20).iterrows():
        assert set(r["itemset_with_item"].split(", ")) == set(r["itemset"].split(", ")) | {r["item"]}


def test_redundancy_equals_brute_force():
    t = scan(random_frame(1), target="y", prediction="p", positive=1, metrics=["fpr", "fnr"], min_support=0.02, exhaustive=True)
    eps = 0.03
    want = {}
    for metric in ("fpr", "fnr"):
        div = divergences(t, metric)
        want[metric] = np.array([bool(s) and any(abs(div[s] - div[s - {i}]) <= eps for i in s)
                                 for s in (frozenset(x.split(", ")) if x else frozenset()
                                           for x in t.itemsets)])
        np.testing.assert_array_equal(redundant_itemsets(t, eps, metric=metric), want[metric])
    # several metrics: redundant only when redundant for every one
    np.testing.assert_array_equal(redundant_itemsets(t, eps), want["fpr"] & want["fnr"])
    kept = prune_redundant(t, eps, metric="fpr")
    assert kept.index[0] == 0 and len(kept) == (~want["fpr"]).sum()
    strong = prune_redundant(t, min_t=2.0, metric="fpr")
    assert (strong["fpr_t"].iloc[1:] >= 2.0).all() and len(strong) == 1 + (t.frame["fpr_t"] >= 2).sum()


def test_bad_parameters():
    t = scan(random_frame(0), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05, exhaustive=True)
    with pytest.raises(DivergenceInputError, match="redundancy threshold must be >= 0; got -1"):
        redundant_itemsets(t, -1)
    with pytest.raises(DivergenceInputError, match="Metric 'fnr' is not in this result"):
        shapley_matrix(t, metric="fnr")
    with pytest.raises(DivergenceInputError, match="n_boot must be a non-negative integer; got -5"):
        item_contributions(t, "a=a0", n_boot=-5)
    with pytest.raises(DivergenceInputError, match="'a9' is not an item of 'a'"):
        item_contributions(t, "a=a9")


# ----------------------------------------------------------------------------- bootstrap
def test_bootstrap_machinery_reproduces_the_table_and_is_seeded():
    t = scan(random_frame(7, n=600), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.02, exhaustive=True)
    idx = int(np.nonzero(t.lengths == 3)[0][0])
    pos = np.nonzero(t.codes[idx] >= 0)[0]
    groups, counts = S._slice_groups(t, "fpr", pos, t.codes[idx, pos])
    # weights = the observed sample: every subset's divergence as in the mined table
    d = S._subset_divergences(groups, counts[None, :].astype(float), 3)[0]
    sub = S.subset_indices(t, np.array([idx]), pos[None, :], np.arange(8))[0]
    np.testing.assert_allclose(d, np.asarray(t.columns["fpr_divergence"])[sub], atol=1e-12)
    a = item_contributions(t, t.itemsets[idx], n_boot=100, seed=3)
    b = item_contributions(t, t.itemsets[idx], n_boot=100, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert (a["contribution_low"] <= a["contribution_high"]).all()
    assert a.attrs["n_boot_used"] == 100


def test_bootstrap_spread_matches_the_binomial_spread():
    # one slice: the divergence's bootstrap interval ≈ the normal interval of a difference of rates
    rng = np.random.default_rng(11)
    n = 4000
    df = pd.DataFrame({"g": rng.choice(["x", "y"], n), "h": rng.choice(["u", "v"], n)})
    df["o"] = (rng.random(n) < np.where(df["g"] == "x", 0.3, 0.2)).astype(float)
    t = scan(df, outcome="o", min_support=0.1, exhaustive=True)
    c = item_contributions(t, "g=x, h=u", n_boot=2000, seed=0)
    width = c.attrs["divergence_high"] - c.attrs["divergence_low"]
    m = (df["g"] == "x") & (df["h"] == "u")
    p1, n1 = df.loc[m, "o"].mean(), m.sum()
    # var(mean_slice - mean_all) with the slice inside the whole: var1·(1 - n1/n)² + var(rest)·((n-n1)/n)²
    rest = df.loc[~m, "o"]
    sd = math.sqrt(p1 * (1 - p1) / n1 * (1 - n1 / n) ** 2 + rest.var(ddof=0) / (n - n1) * ((n - n1) / n) ** 2)
    assert width == pytest.approx(2 * 1.96 * sd, rel=0.12)
    assert c["contribution"].sum() == pytest.approx(c.attrs["divergence"], abs=1e-12)


def test_bootstrap_with_undefined_replicates_gives_numbers():
    # a slice with 3 defined rows: some resamples have none of them
    df = pd.DataFrame({"a": ["x"] * 30 + ["y"] * 70, "b": ["u"] * 100})
    o = np.full(100, np.nan)
    o[:3] = [1.0, 0.0, 1.0]
    o[30:] = 0.0
    df["o"] = o
    t = scan(df, outcome="o", attributes=["a", "b"], min_support=0.05, exhaustive=True)
    c = item_contributions(t, "a=x, b=u", n_boot=300, seed=1)
    assert 250 < c.attrs["n_boot_used"] < 300
    assert c[["contribution_low", "contribution_high"]].notna().all().all()


# ----------------------------------------------------------------------------- real data
def test_compas_top_fpr_slice_contributions(compas):
    """The divergence paper's top FPR slice. DivExplorer 0.2.6 gives the same three values
    (``DivergencePatternProcessor(patterns, 'fp').shapley_value(...)`` at support 0.0175,
    run in its own venv): #prior=>3 0.30260847062400575, age=<25 0.264390876062535,
    sex=Male 0.02650482977927699."""
    t = scan(compas, min_support=0.0175, exhaustive=True, **ROLES)
    c = item_contributions(t, TOP_FPR, metric="fpr").set_index("item")["contribution"]
    assert c.sum() == pytest.approx(t.row(TOP_FPR)["fpr_divergence"], abs=1e-15)
    assert c.idxmin() == "sex=Male" and c["sex=Male"] < 0.1 * c.max()
    assert abs(c["age=<25"] - c["#prior=>3"]) < 0.2 * max(c["age=<25"], c["#prior=>3"])
    assert c.to_dict() == pytest.approx({"#prior=>3": 0.30260847062400575, "age=<25": 0.264390876062535,
                                         "sex=Male": 0.02650482977927699}, abs=1e-12)
    # the same values from the all-itemsets matrix
    phi = shapley_matrix(t, metric="fpr")[t.lookup(TOP_FPR)]
    assert np.nansum(phi) == pytest.approx(c.sum(), abs=1e-15)


def test_compas_bootstrap_on_the_top_fpr_slice(compas):
    t = scan(compas, min_support=0.0175, exhaustive=True, **ROLES)
    c = item_contributions(t, TOP_FPR, metric="fpr", n_boot=200, seed=0).set_index("item")
    assert (c["contribution_low"] < c["contribution"]).all() and (c["contribution"] < c["contribution_high"]).all()
    # the two main items are clearly above zero; sex=Male's interval is an order of magnitude lower
    assert c.loc["#prior=>3", "contribution_low"] > 0.1 and c.loc["age=<25", "contribution_low"] > 0.1
    assert c.loc["sex=Male", "contribution_high"] < c.loc["age=<25", "contribution_low"]


def test_compas_redundancy_pruning_gives_the_papers_fnr_slices(compas):
    """../shared/data/README.md: after pruning at 0.01 the top FNR slices (all FNR 1.0, ties
    broken by support). DivExplorer 0.2.6's ``redundancy_pruning(0.01)`` keeps 225 itemsets
    for FPR and 424 for FNR (the whole dataset included), as we do."""
    t = scan(compas, min_support=0.0175, exhaustive=True, **ROLES)
    kept = prune_redundant(t, 0.01, metric="fnr")
    top = kept.sort_values(["fnr_divergence", "support"], ascending=False).head(3)
    assert [set(s.split(", ")) for s in top["itemset"]] == [
        {"age=>45", "charge=M", "race=Cauc"}, {"age=>45", "charge=M", "#prior=0"},
        {"age=>45", "charge=M", "#prior=[1,3]"}]
    assert top["count"].iloc[0] == 303 and list(top["fnr_t"].round(2)) == [17.57, 10.44, 14.06]
    assert len(kept) == 424 and len(prune_redundant(t, 0.01, metric="fpr")) == 225


def test_compas_published_divexplorer_notebook_values(compas):
    """DivExplorer's own COMPAS example (elianap/divexplorer @ 96e33de,
    notebooks/Example_Divergence_analysis_COMPAS.ipynb, support 0.1, FPR): the printed
    global item divergence of every item, 155 itemsets pruned to 55 at ε = 0.01, and the
    first corrective items (its ``getCorrectiveItems()`` keeps those with t > 2)."""
    t = scan(compas, min_support=0.1, exhaustive=True, **ROLES)
    assert len(t) == 155
    published = {
        "sex=Male": 0.0010817486715193343, "stay=<week": -0.0037336591601187115,
        "charge=F": 0.0033449442244256966, "age=25-45": 2.646803546613426e-05,
        "race=Afr-Am": 0.00868689049105502, "#prior=[1,3]": -0.0019785581173622493,
        "charge=M": -0.003826369756899656, "race=Cauc": -0.006069980972847003,
        "#prior=0": -0.0041045628972812016, "#prior=>3": 0.012619810573522829,
        "age=<25": 0.007341371481152314, "age=>45": -0.004840017733268695,
        "sex=Female": -0.0019292673088879431, "stay=1w-3M": 0.006596700720581655,
    }
    g = global_divergence(t, metric="fpr").set_index("item")["global"]
    assert g.to_dict() == pytest.approx(published, abs=1e-15)
    assert len(prune_redundant(t, 0.01, metric="fpr")) == 55
    c = corrective_items(t, metric="fpr", min_t=2.0)
    # published: S, item i, v_S, v_S+i, t_value_corr, corr_factor
    want = [({"race=Afr-Am", "sex=Male"}, "#prior=0", 0.062371, 0.009430, 2.823776, 0.052941),
            ({"race=Afr-Am"}, "#prior=0", 0.051052, -0.000500, 3.376132, 0.050552),
            ({"#prior=0", "stay=<week"}, "race=Afr-Am", -0.043788, -0.003043, 3.070673, 0.040746),
            ({"#prior=0"}, "race=Afr-Am", -0.039927, -0.000500, 3.035485, 0.039427)]
    for (_, r), (s, item, v_s, v_si, t_corr, factor) in zip(c.head(4).iterrows(), want):
        assert set(r["itemset"].split(", ")) == s and r["item"] == item
        assert [round(r["divergence"], 6), round(r["divergence_with_item"], 6)] == pytest.approx([v_s, v_si], abs=1.5e-6)
        assert round(r["t"], 6) == pytest.approx(t_corr, abs=1.5e-6)
        assert round(r["reduction"], 6) == pytest.approx(factor, abs=1.5e-6)


def test_compas_global_where_divexplorer_gives_nan(compas):
    """At support 0.002 six FPR itemsets have no negative row. DivExplorer 0.2.6's
    ``global_shapley_value()`` then returns NaN for sex=Male, charge=F, race=Afr-Am,
    #prior=>3, age=<25 and stay=>3Months, and these values for the others (run in its
    own venv): race=Asian -0.0021001299835530516, age=>45 -0.015291399787793331,
    stay=1w-3M 0.013519974699938046. Ours agree where DivExplorer's are numbers and
    stay numbers where DivExplorer's are NaN."""
    t = scan(compas, min_support=0.002, exhaustive=True, **ROLES)
    assert np.isnan(t.columns["fpr_divergence"]).sum() == 6
    g = global_divergence(t, metric="fpr").set_index("item")["global"]
    assert g.notna().all() and len(g) == 18
    assert g[["race=Asian", "age=>45", "stay=1w-3M"]].to_list() == pytest.approx(
        [-0.0021001299835530516, -0.015291399787793331, 0.013519974699938046], abs=1e-15)
    # the items DivExplorer leaves NaN keep their rank: #prior=>3 and age=<25 on top
    assert list(g.index[:2]) == ["#prior=>3", "age=<25"]


def test_compas_global_at_the_papers_support(compas):
    """DivExplorer 0.2.6 at support 0.0175 (FPR): #prior=>3 0.020448037260841587 first,
    age=<25 0.015149824286406577 second, age=>45 -0.009281808189459602 last."""
    t = scan(compas, min_support=0.0175, exhaustive=True, **ROLES)
    g = global_divergence(t, metric="fpr")
    assert list(g["item"].iloc[[0, 1, -1]]) == ["#prior=>3", "age=<25", "age=>45"]
    assert list(g["global"].iloc[[0, 1, -1]]) == pytest.approx(
        [0.020448037260841587, 0.015149824286406577, -0.009281808189459602], abs=1e-15)


# ----------------------------------------------------------------------------- figures
def test_contribution_figure():
    df = random_frame(0)
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.02, exhaustive=True)
    idx = int(np.nonzero(t.lengths == 3)[0][-1])
    c = item_contributions(t, t.itemsets[idx], n_boot=50, seed=0)
    fig = contribution_figure(c)
    bars = [tr for tr in fig.data if tr.type == "bar"]
    values = {y: x for tr in bars for x, y in zip(tr.x, tr.y)}
    assert values == pytest.approx(dict(zip(c["item"], c["contribution"])))
    for tr in bars:
        assert tr.orientation == "h"
        assert tr.marker.color == (RAISES_COLOR if all(x > 0 for x in tr.x) else LOWERS_COLOR)
        assert all(x <= 0 for x in tr.x) or all(x > 0 for x in tr.x)
        assert tr.error_x.array is not None
    # sorted: the y axis lists items from the smallest (bottom) to the largest (top)
    order = list(fig.layout.yaxis.categoryarray)
    assert order == list(c.sort_values("contribution")["item"])
    assert f"{c.attrs['divergence']:+.4f}" in fig.layout.title.text and c.attrs["itemset"] in fig.layout.title.text


def test_item_values_figure_keeps_the_largest():
    t = scan(random_frame(0), target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.02, exhaustive=True)
    g = global_divergence(t)
    fig = item_values_figure(g, value="global", metric="fpr", top=4)
    shown = {y: x for tr in fig.data for x, y in zip(tr.x, tr.y)}
    want = g.loc[g["global"].abs().sort_values(ascending=False).index[:4]]
    assert shown == pytest.approx(dict(zip(want["item"], want["global"])))
    fig = item_values_figure(g, value="individual")
    assert len({y for tr in fig.data for y in tr.y}) == len(g)
    with pytest.raises(DivergenceInputError, match="Column 'shapley' is not in the item table"):
        item_values_figure(g, value="shapley")


def test_lattice_figure_marks_threshold_and_corrective_nodes(compas):
    t = scan(compas, min_support=0.1, exhaustive=True, **ROLES)
    itemset = "race=Afr-Am, sex=Male, #prior=0"  # the notebook's corrective example
    fig = lattice_figure(t, itemset, metric="fpr", threshold=0.05)
    nodes = {tr.name: tr for tr in fig.data if tr.mode == "markers+text"}
    n_nodes = sum(len(tr.x) for tr in nodes.values())
    assert n_nodes == 8
    names = {tr.name.split(" (")[0]: [cd[0] for cd in tr.customdata] for tr in nodes.values()}
    # |Δ| >= δ = 5 pp: race=Afr-Am (0.051) and race=Afr-Am, sex=Male (0.062)
    assert sorted(names["|Δ| ≥ δ = 5 pp"]) == ["race=Afr-Am", "race=Afr-Am, sex=Male"]
    # corrective: adding #prior=0 to race=Afr-Am (and more) lowers |Δ|
    assert "race=Afr-Am, sex=Male, #prior=0" in names["corrective"]
    assert "race=Afr-Am, #prior=0" in names["corrective"]
    colors = [c for tr in nodes.values() for c in tr.marker.color]
    div = divergences(t, "fpr")
    assert sorted(colors) == pytest.approx(sorted(  # a rate's divergences in percentage points
        100 * div[frozenset(s)] for r in range(4) for s in itertools.combinations(itemset.split(", "), r)))
    with pytest.raises(DivergenceInputError, match="draw itemsets of at most 8 items"):
        wide = random_frame(0, n=50).assign(e="e", f="f", g="g", h="h", i="i")
        big = scan(wide, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.02,
                   attributes=[c for c in wide.columns if c not in ("y", "p")], exhaustive=True)
        lattice_figure(big, big.itemsets[int(np.argmax(big.lengths))])

"""compare(): two models slice by slice. Values against brute force, McNemar against scipy,
the intervals against their tests, the verdict rule, bad input."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import random_shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from divergence import COMPARE_VERDICTS, DivergenceInputError, compare
from divergence.comparison.compare import compare_columns
from divergence.settings import min_count_for
from divergence.stats.paired import PooledNull, mcnemar_p, paired_proportion_interval, paired_t

# ----------------------------------------------------------------------------- brute force

def _itemset_masks(df: pd.DataFrame, attrs, min_count: int):
    """Every itemset of the (categorical) attributes with at least min_count rows: {text: mask}."""
    out = {"": np.ones(len(df), dtype=bool)}
    values = {a: sorted(df[a].unique()) for a in attrs}
    for k in range(1, len(attrs) + 1):
        for combo in itertools.combinations(attrs, k):
            for vals in itertools.product(*[values[a] for a in combo]):
                mask = np.ones(len(df), dtype=bool)
                for a, v in zip(combo, vals):
                    mask &= (df[a] == v).to_numpy()
                if mask.sum() >= min_count:
                    out[", ".join(f"{a}={v}" for a, v in zip(combo, vals))] = mask
    return out


@st.composite
def label_tables(draw):
    n, n_attr, rng = random_shape(draw, 80, 3, min_rows=5)
    df = pd.DataFrame({f"a{j}": rng.choice(list("xyz")[: draw(st.integers(1, 3))], n) for j in range(n_attr)})
    df["y"] = rng.integers(0, 2, n)
    df["p"] = rng.integers(0, 2, n)
    df["r"] = np.where(rng.random(n) < 0.5, df["p"], rng.integers(0, 2, n))
    if draw(st.booleans()):  # some missing predictions: those rows are left out of every metric
        df.loc[rng.random(n) < 0.15, "r"] = np.nan
    support = draw(st.sampled_from([0.05, 0.2, 0.5]))
    return df, support


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=label_tables())
def test_rates_and_change_equal_brute_force(case):
    df, support = case
    attrs = [c for c in df.columns if c.startswith("a")]
    metrics = ["error", "fpr", "fnr", "accuracy", "tpr", "tnr"]
    try:
        c = compare(df, target="y", prediction="p", reference="r", positive=1, metrics=metrics,
                    attributes=attrs, min_support=support, exhaustive=True)
    except DivergenceInputError as exc:
        # only when the two models agree on every compared row, or a class is absent
        assert "nothing to compare" in str(exc) or "undefined" in str(exc) or "not a value" in str(exc)
        return
    f = c.frame
    masks = _itemset_masks(df, attrs, min_count_for(support, len(df)))
    assert sorted(f["itemset"]) == sorted(masks)
    assert f["itemset"].iloc[0] == ""
    ok = df["r"].notna().to_numpy()
    y = df["y"].to_numpy() == 1
    pa = df["p"].to_numpy() == 1
    pb = df["r"].fillna(-1).to_numpy() == 1
    rules = {"error": (np.ones_like(y), pa != y, pb != y), "accuracy": (np.ones_like(y), pa == y, pb == y),
             "fpr": (~y, pa, pb), "fnr": (y, ~pa, ~pb), "tpr": (y, pa, pb), "tnr": (~y, ~pa, ~pb)}
    for i, text in enumerate(f["itemset"]):
        mask = masks[text]
        assert f["count"].iloc[i] == mask.sum()
        for m, (defined, oa, ob) in rules.items():
            rows = mask & ok & defined
            n = rows.sum()
            n10 = (rows & oa & ~ob).sum()
            n01 = (rows & ~oa & ob).sum()
            assert c.details[f"{m}_count"][i] == n
            assert c.details[f"{m}_n10"][i] == n10 and c.details[f"{m}_n01"][i] == n01
            if n == 0:
                assert np.isnan(f[m].iloc[i]) and np.isnan(f[f"{m}_change"].iloc[i])
                assert np.isnan(f[f"{m}_change_p"].iloc[i])
                continue
            assert f[m].iloc[i] == pytest.approx(oa[rows].mean(), abs=1e-12)
            assert f[f"{m}_reference"].iloc[i] == pytest.approx(ob[rows].mean(), abs=1e-12)
            assert f[f"{m}_change"].iloc[i] == pytest.approx(oa[rows].mean() - ob[rows].mean(), abs=1e-12)


@st.composite
def regression_tables(draw):
    n = draw(st.integers(5, 80))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a0": rng.choice(list("xyz"), n), "a1": rng.choice(list("uv"), n)})
    df["y"] = rng.lognormal(2, 1, n)
    df["p"] = df["y"] + rng.standard_t(3, n) * 3
    df["r"] = df["y"] + rng.normal(0, 2, n)
    return df, draw(st.sampled_from([0.05, 0.2, 0.5]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=regression_tables())
def test_regression_change_equals_brute_force(case):
    df, support = case
    c = compare(df, target="y", prediction="p", reference="r", regression=True,
                metrics=["abs_error", "squared_error"], attributes=["a0", "a1"], min_support=support,
                exhaustive=True)
    f = c.frame
    masks = _itemset_masks(df, ["a0", "a1"], min_count_for(support, len(df)))
    assert sorted(f["itemset"]) == sorted(masks)
    ea, eb = (df["p"] - df["y"]).to_numpy(), (df["r"] - df["y"]).to_numpy()
    for m, (a, b) in {"abs_error": (np.abs(ea), np.abs(eb)), "squared_error": (ea ** 2, eb ** 2)}.items():
        for i, text in enumerate(f["itemset"]):
            rows = masks[text]
            scale = max(1.0, np.abs(a).max(), np.abs(b).max())
            assert f[m].iloc[i] == pytest.approx(a[rows].mean(), abs=1e-11 * scale)
            assert f[f"{m}_reference"].iloc[i] == pytest.approx(b[rows].mean(), abs=1e-11 * scale)
            assert f[f"{m}_change"].iloc[i] == pytest.approx((a - b)[rows].mean(), abs=1e-11 * scale)
            if rows.sum() >= 2:  # the t part of the test: Student's paired t on the slice's rows
                want = stats.ttest_1samp((a - b)[rows], 0.0).pvalue if np.ptp((a - b)[rows]) > 0 else None
                if want is not None:
                    assert c.details[f"{m}_p_t"][i] == pytest.approx(want, rel=1e-6, abs=1e-300)


# ----------------------------------------------------------------------------- the tests

def test_mcnemar_equals_scipy_binomtest_on_the_discordant_rows():
    pairs = [(b, c) for b in range(0, 40) for c in range(0, 40) if b + c > 0] + [(3, 250), (400, 333), (1000, 1)]
    b = np.array([p[0] for p in pairs], dtype=float)
    c = np.array([p[1] for p in pairs], dtype=float)
    got = mcnemar_p(b, c)
    want = np.array([stats.binomtest(int(x), int(x + y), 0.5).pvalue for x, y in pairs])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)
    assert mcnemar_p(np.array([0.0]), np.array([0.0]))[0] == 1.0  # no discordant row: no evidence


def test_mcnemar_in_a_comparison_is_binomtest_of_its_slices():
    rng = np.random.default_rng(4)
    n = 3000
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("uvw"), n)})
    df["y"] = rng.integers(0, 2, n)
    df["p"] = df["y"] ^ (rng.random(n) < 0.2)
    df["r"] = df["y"] ^ (rng.random(n) < np.where(df["a"] == "x", 0.35, 0.2))
    c = compare(df, target="y", prediction="p", reference="r", positive=1, metrics=["error", "fpr"],
                attributes=["a", "b"], min_support=0.01)
    for m in ("error", "fpr"):
        n10, n01 = c.details[f"{m}_n10"], c.details[f"{m}_n01"]
        want = [stats.binomtest(int(x), int(x + y), 0.5).pvalue if x + y else 1.0 for x, y in zip(n10, n01)]
        np.testing.assert_allclose(c.frame[f"{m}_change_p"], want, rtol=1e-10)
    row = c.row("a=x")
    assert row["error_verdict"] == "better" and row["error_change"] < -0.1  # the reference errs more there


def test_paired_proportion_interval_is_the_score_tests_acceptance_set_and_covers():
    from divergence.stats.paired import _tango_z

    b = np.array([0.0, 5, 30, 12, 80, 0])
    c = np.array([0.0, 1, 10, 12, 3, 7])
    n = np.array([50.0, 40, 200, 100, 500, 9])
    lo, hi = paired_proportion_interval(b, c, n, 0.95)
    est = (b - c) / n
    assert np.all(lo <= est) and np.all(est <= hi)
    np.testing.assert_allclose(_tango_z(lo, b, c, n), 1.959964, atol=1e-6)
    np.testing.assert_allclose(_tango_z(hi, b, c, n), -1.959964, atol=1e-6)
    assert lo[0] < 0 < hi[0] and hi[0] == pytest.approx(1.959964 ** 2 / (50 + 1.959964 ** 2), rel=1e-6)
    # coverage by simulation: 95% within simulation error for small and large slices
    rng = np.random.default_rng(0)
    for size, p10, p01 in ((30, 0.05, 0.02), (200, 0.1, 0.1), (60, 0.3, 0.05)):
        cells = rng.multinomial(size, [p10, p01, 1 - p10 - p01], size=4000)
        lo, hi = paired_proportion_interval(cells[:, 0], cells[:, 1], np.full(4000, size), 0.95)
        covered = np.mean((lo <= p10 - p01) & (p10 - p01 <= hi))
        assert 0.93 <= covered <= 0.99, (size, p10, p01, covered)


def test_paired_proportion_interval_once_per_distinct_count_triple():
    from divergence.stats.paired import _tango_interval

    rng = np.random.default_rng(8)
    n = rng.integers(1, 60, 5000).astype(float)
    b = np.floor(rng.random(5000) * (n + 1) / 2)
    c = np.floor(rng.random(5000) * (n - b + 1))
    lo, hi = paired_proportion_interval(b, c, n, 0.9)  # many repeated triples: the shared path
    from divergence.stats.stats import z_value

    want_lo, want_hi = _tango_interval(b, c, n, z_value(0.9))
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)


def test_paired_t_is_scipys():
    rng = np.random.default_rng(1)
    x = rng.normal(0.3, 1, 25)
    p, lo, hi = paired_t(np.array([25.0]), np.array([x.mean()]), np.array([x.var(ddof=1)]), 0.95)
    r = stats.ttest_1samp(x, 0.0)
    ci = r.confidence_interval(0.95)
    assert p[0] == pytest.approx(r.pvalue, rel=1e-10)
    assert (lo[0], hi[0]) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_pooled_null_matches_a_bootstrap_and_its_interval_inverts_its_test():
    rng = np.random.default_rng(2)
    d = rng.lognormal(0, 1, 6000) - rng.lognormal(0, 1, 6000) * 1.1  # skewed, mean not 0
    pool = PooledNull(d)
    # the null: the pooled differences tilted to mean 0; a Monte Carlo bootstrap of it
    from divergence.stats.paired import _reduce, _tilt_to_zero

    v, w = _reduce(d)
    w = _tilt_to_zero(v, w)
    assert abs(np.sum(w * v)) < 1e-9 * w.sum()
    for n in (40, 400):
        means = (rng.choice(v, size=(20000, n), p=w / w.sum())).mean(axis=1)
        for x in np.quantile(means, [0.005, 0.05, 0.95, 0.995]):
            exact = np.mean(means <= x) if x < 0 else np.mean(means >= x)
            got = pool.p_value(np.array([n]), np.array([x]))[0] / 2
            assert got == pytest.approx(exact, rel=0.25), (n, x)
    n = rng.integers(2, 500, 300).astype(float)
    m = rng.normal(0, 3, 300) / np.sqrt(n)
    p = pool.p_value(n, m)
    lo, hi = pool.interval(n, m, 0.95)
    excluded = (lo > 0) | (hi < 0)
    near = np.abs(p - 0.05) < 1e-4
    assert np.array_equal(excluded[~near], (p <= 0.05)[~near])


# ----------------------------------------------------------------------------- the contract

@pytest.fixture(scope="module")
def two_models():
    rng = np.random.default_rng(11)
    n = 12000
    df = pd.DataFrame({"region": rng.choice(["N", "S", "E", "W"], n), "age": rng.choice(["<30", "30-50", ">50"], n),
                       "channel": rng.choice(["web", "app"], n)})
    y = rng.random(n) < 0.3
    bad = (df["region"] == "S").to_numpy()
    f_ref = np.full(n, 0.15)
    f_new = np.where(bad, 0.35, 0.15)
    df["label"] = np.where(y, "yes", "no")
    df["new"] = np.where(y ^ (rng.random(n) < f_new), "yes", "no")
    df["old"] = np.where(y ^ (rng.random(n) < f_ref), "yes", "no")
    return df


def test_columns_whole_dataset_first_and_the_planted_slice(two_models):
    c = compare(two_models, target="label", prediction="new", reference="old", positive="yes",
                metrics="error,fpr,fnr", min_support=0.02)
    assert list(c.frame.columns) == compare_columns(["error", "fpr", "fnr"])
    assert c.frame["itemset"].iloc[0] == "" and c.frame["length"].iloc[0] == 0
    row = c.row("region=S")
    for m in ("error", "fpr", "fnr"):
        assert row[f"{m}_verdict"] == "worse"
        assert row[f"{m}_change_ci_low"] > 0
    assert c.top(1, metric="error")["itemset"].iloc[0].startswith("region=S")
    # every verdict follows the rule from the columns
    alpha = 0.05
    for m in ("error", "fpr", "fnr"):
        f = c.frame
        info = c.assessment.min_size[m]
        n = c.details[f"{m}_count"]
        assert (f[f"{m}_meets_min_size"] == (n >= info.n_min)).all()
        sig = (f[f"{m}_change_q"] <= alpha) & ((f[f"{m}_change_ci_low"] > 0) | (f[f"{m}_change_ci_high"] < 0))
        expect = np.where(sig & (f[f"{m}_change"] > 0), "worse", np.where(sig & (f[f"{m}_change"] < 0), "better",
                          np.where((f[f"{m}_change_ci_low"] >= -info.delta) & (f[f"{m}_change_ci_high"] <= info.delta),
                                   "no change", "noise")))
        # a significant slice keeps its verdict at any size; too small is for the rest below n_min
        expect = np.where(f[f"{m}_meets_min_size"] | np.isin(expect, ["worse", "better", "no change"]), expect,
                          "too small")
        assert (f[f"{m}_verdict"].to_numpy() == expect).all()
        assert set(f[f"{m}_verdict"]) <= set(COMPARE_VERDICTS)
    # one family: q-values corrected over every itemset and every metric
    from divergence.stats.stats import adjust_p

    allp = np.concatenate([c.frame[f"{m}_change_p"] for m in ("error", "fpr", "fnr")])
    np.testing.assert_allclose(np.concatenate([c.frame[f"{m}_change_q"] for m in ("error", "fpr", "fnr")]),
                               adjust_p(allp, "bh"))
    assert c.n_tested == np.isfinite(allp).sum()


def test_down_is_worse_for_accuracy_and_tpr(two_models):
    c = compare(two_models, target="label", prediction="new", reference="old", positive="yes",
                metrics=["accuracy", "tpr"], min_support=0.05)
    row = c.row("region=S")
    assert row["accuracy_change"] < 0 and row["accuracy_verdict"] == "worse"
    assert row["tpr_verdict"] == "worse"
    swapped = compare(two_models, target="label", prediction="old", reference="new", positive="yes",
                      metrics=["accuracy"], min_support=0.05)
    assert swapped.row("region=S")["accuracy_verdict"] == "better"
    assert swapped.row("region=S")["accuracy_change"] == pytest.approx(-row["accuracy_change"], abs=1e-15)


def test_scores_with_thresholds_and_brier(two_models):
    rng = np.random.default_rng(3)
    df = two_models.assign(s_new=np.clip(np.where(two_models["new"] == "yes", 0.7, 0.3) + rng.normal(0, .1, len(two_models)), 0, 1),
                           s_old=np.clip(np.where(two_models["old"] == "yes", 0.7, 0.3) + rng.normal(0, .1, len(two_models)), 0, 1))
    by_score = compare(df, target="label", score="s_new", threshold=0.5, reference_score="s_old",
                       reference_threshold=0.5, positive="yes", metrics=["error", "brier"], min_support=0.05,
                       attributes=["region", "age", "channel"])
    by_label = compare(df.assign(new=np.where(df["s_new"] >= 0.5, "yes", "no"), old=np.where(df["s_old"] >= 0.5, "yes", "no")),
                       target="label", prediction="new", reference="old", positive="yes", metrics=["error"],
                       min_support=0.05, attributes=["region", "age", "channel"])
    np.testing.assert_array_equal(by_score.frame["error_change"], by_label.frame["error_change"])
    y = (df["label"] == "yes").to_numpy()
    want = ((df["s_new"] - y) ** 2 - (df["s_old"] - y) ** 2).mean()
    assert by_score.frame["brier_change"].iloc[0] == pytest.approx(want, rel=1e-12)


def test_rows_with_a_missing_prediction_are_left_out_of_both(two_models):
    df = two_models.copy()
    df.loc[::10, "old"] = None
    c = compare(df, target="label", prediction="new", reference="old", positive="yes", metrics=["error"],
                min_support=0.05)
    kept = df["old"].notna()
    assert c.frame["error"].iloc[0] == pytest.approx((df["new"] != df["label"])[kept].mean())
    assert c.details["error_count"][0] == kept.sum()
    assert any("left out" in note for note in c.notes)


def test_shapley_contributions_of_the_change_sum_to_it(two_models):
    c = compare(two_models, target="label", prediction="new", reference="old", positive="yes",
                metrics=["error"], min_support=0.02)
    contrib = c.contributions("region=S, age=<30", "error")
    change = c.row("region=S, age=<30")["error_change"]
    assert contrib["contribution"].sum() == pytest.approx(change - c.frame["error_change"].iloc[0], abs=1e-12)
    assert contrib["item"].iloc[0] == "region=S"  # the item that drives the regression


@pytest.mark.parametrize("kwargs, message", [
    (dict(reference="missing"), "Reference column 'missing' is not in the data"),
    (dict(reference="new"), "The reference is the model itself"),
    (dict(reference="copy"), "gives the same error as prediction column 'new' on every row"),
    (dict(reference="stray"), "Reference column 'stray' holds 'maybe', which is not a value of target column 'label'"),
    (dict(metrics=["precision"]), "measured on each model's own predicted positives"),
    (dict(metrics=["positive_rate"]), "no better or worse direction"),
    (dict(metrics=["abs_error"]), "add --regression"),
    (dict(confidence=1.5), "confidence must be a level from 0.5"),
    (dict(correction="fdr"), "correction must be one of"),
    (dict(delta=-0.1), "delta must be a positive number; got -0.1"),
    (dict(min_support=0), "min_support must be a share of the rows in"),
    (dict(attributes=["label"]), "cannot also be an attribute"),
])
def test_bad_input_names_the_fault(two_models, kwargs, message):
    df = two_models.assign(copy=two_models["new"],
                           stray=np.where(np.arange(len(two_models)) % 3 == 0, "maybe", two_models["new"]))
    df["stray"] = np.where(df["stray"] == "no", "yes", df["stray"])  # two values, one the target lacks
    args = dict(target="label", prediction="new", reference="old", positive="yes", metrics=["error"],
                attributes=["region", "age"], min_support=0.05)
    args.update(kwargs)
    with pytest.raises(DivergenceInputError, match=message):
        compare(df, **args)


def test_the_same_slices_as_scan_and_every_itemset_when_exhaustive(two_models):
    from divergence import scan

    kw = dict(target="label", prediction="new", positive="yes", attributes=["region", "age", "channel"],
              min_support=0.01)
    for exhaustive in (False, True):
        c = compare(two_models, reference="old", metrics=["error", "fpr"], exhaustive=exhaustive, **kw)
        s = scan(two_models, metrics=["error", "fpr"], exhaustive=exhaustive, **kw)
        assert c.frame["itemset"].tolist() == s.frame["itemset"].tolist()
        for m in ("error", "fpr"):  # the model's own value is the scan's
            assert c.frame[m].to_numpy() == pytest.approx(s.frame[m].to_numpy(), abs=1e-15)
    full = compare(two_models, reference="old", metrics=["error"], exhaustive=True, **kw).frame.set_index("itemset")
    part = compare(two_models, reference="old", metrics=["error"], **kw).frame.set_index("itemset")
    assert set(part.index) <= set(full.index)
    cols = ["error", "error_reference", "error_change", "error_change_p"]
    np.testing.assert_allclose(part[cols].to_numpy(), full.loc[part.index, cols].to_numpy(), rtol=1e-12)

"""Per-row outcomes, hand-computed on a tiny table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, build_outcomes, scan

Y = [1, 1, 1, 0, 0, 0, 0, None]
P = [1, 0, 1, 1, 0, 0, 1, 1]
NAN = np.nan


def _values(**kw):
    df = pd.DataFrame({"y": Y, "p": P})
    return {o.name: o.values for o in build_outcomes(df, target="y", prediction="p", positive=1, **kw)}


def test_classification_outcomes_by_hand():
    v = _values(metrics=["fpr", "fnr", "tpr", "tnr", "error", "accuracy", "precision", "positive_rate"])
    np.testing.assert_array_equal(v["fpr"], [NAN, NAN, NAN, 1, 0, 0, 1, NAN])
    np.testing.assert_array_equal(v["fnr"], [0, 1, 0, NAN, NAN, NAN, NAN, NAN])
    np.testing.assert_array_equal(v["tpr"], [1, 0, 1, NAN, NAN, NAN, NAN, NAN])
    np.testing.assert_array_equal(v["tnr"], [NAN, NAN, NAN, 0, 1, 1, 0, NAN])
    np.testing.assert_array_equal(v["error"], [0, 1, 0, 1, 0, 0, 1, NAN])
    np.testing.assert_array_equal(v["accuracy"], [1, 0, 1, 0, 1, 1, 0, NAN])
    np.testing.assert_array_equal(v["precision"], [1, NAN, 1, 0, NAN, NAN, 0, NAN])
    np.testing.assert_array_equal(v["positive_rate"], [1, 0, 1, 1, 0, 0, 1, NAN])


def test_positive_label_matches_text_or_number():
    df = pd.DataFrame({"y": ["1", "0", "1"], "p": [1, 0, 0]})
    a = build_outcomes(df, target="y", prediction="p", positive=1, metrics=["fnr"])[0].values
    b = build_outcomes(df, target="y", prediction="p", positive="1", metrics=["fnr"])[0].values
    np.testing.assert_array_equal(a, [0, NAN, 1])
    np.testing.assert_array_equal(a, b)
    df2 = pd.DataFrame({"y": ["yes", "no"], "p": ["no", "no"]})
    assert build_outcomes(df2, target="y", prediction="p", positive="yes", metrics=["fnr"])[0].values[0] == 1


def test_score_and_threshold():
    df = pd.DataFrame({"y": [0, 0, 1, 1], "s": [0.2, 0.7, 0.5, 0.4]})
    v = {o.name: o.values for o in build_outcomes(df, target="y", score="s", threshold=0.5, positive=1,
                                                 metrics=["fpr", "fnr", "brier"])}
    np.testing.assert_array_equal(v["fpr"], [0, 1, NAN, NAN])
    np.testing.assert_array_equal(v["fnr"], [NAN, NAN, 0, 1])
    np.testing.assert_allclose(v["brier"], [0.04, 0.49, 0.25, 0.36])


def test_regression_errors():
    df = pd.DataFrame({"y": [1.0, 2.0, np.nan], "p": [1.5, 0.0, 3.0]})
    v = {o.name: o.values for o in build_outcomes(df, target="y", prediction="p", regression=True,
                                                 metrics=["abs_error", "squared_error", "signed_error"])}
    np.testing.assert_array_equal(v["abs_error"], [0.5, 2.0, NAN])
    np.testing.assert_array_equal(v["squared_error"], [0.25, 4.0, NAN])
    np.testing.assert_array_equal(v["signed_error"], [0.5, -2.0, NAN])


def test_ranking_from_score_with_ties_and_gammas():
    df = pd.DataFrame({"s": [10.0, 30.0, 20.0, 20.0, np.nan]})
    # ranks (higher better): 4, 1, 2.5, 2.5, undefined
    (dcg,) = build_outcomes(df, rank_by="s", gamma="dcg")
    np.testing.assert_allclose(dcg.values[:4], 1 / np.log2(1 + np.array([4, 1, 2.5, 2.5])))
    assert np.isnan(dcg.values[4]) and dcg.name == "gamma"
    (top,) = build_outcomes(df, rank_by="s", gamma="topk:2")
    np.testing.assert_array_equal(top.values, [0, 1, 0, 0, NAN])
    (power,) = build_outcomes(df, rank_by="s", ascending=True, gamma="power:0.5")
    np.testing.assert_allclose(power.values[:4], np.array([1, 4, 2.5, 2.5]) ** -0.5)
    (rank,) = build_outcomes(pd.DataFrame({"r": [1, 2, 3]}), rank="r", gamma="topk:1")
    np.testing.assert_array_equal(rank.values, [1, 0, 0])


def test_numeric_and_boolean_columns_as_outcomes():
    df = pd.DataFrame({"g": [1.5, np.nan, 2.0], "b": [True, False, True]})
    g, b = build_outcomes(df, outcome=["g", "b"])
    np.testing.assert_array_equal(g.values, [1.5, NAN, 2.0])
    assert not g.binary and b.binary
    np.testing.assert_array_equal(b.values, [1, 0, 1])


@pytest.mark.parametrize("kwargs, message", [
    (dict(target="nope", prediction="p", positive=1), "Target column 'nope' is not in the data"),
    (dict(target="multi", prediction="p", positive=1), "Target column 'multi' is not binary: it has 3 distinct values"),
    (dict(target="y", prediction="p", positive=7), "Positive label 7 is not a value of target column 'y' \\(values: 1, 0\\)"),
    (dict(outcome="text"), "Outcome column 'text' must be numeric; it holds 'a'"),
    (dict(outcome="allnan"), "Outcome 'allnan' .* is undefined on every row"),
    (dict(target="y", prediction="p", positive=1, metrics=["fpr", "mae"]), "mixing it with classification"),
    (dict(target="y", prediction="p", positive=1, metrics=["bogus"]), "Unknown classification metric 'bogus'"),
    (dict(rank_by="p", gamma="topk:0"), "topk:K"),
    (dict(), "Nothing to measure"),
])
def test_bad_input_names_the_column_or_value(kwargs, message):
    df = pd.DataFrame({"y": [1, 0, 1], "p": [1, 1, 0], "multi": [1, 2, 3], "text": ["a", "b", "c"],
                       "allnan": [np.nan] * 3})
    with pytest.raises(DivergenceInputError, match=message):
        build_outcomes(df, **kwargs)


def test_only_one_class_makes_its_rate_undefined_everywhere():
    df = pd.DataFrame({"y": [1, 1], "p": [1, 0], "a": ["x", "y"]})
    with pytest.raises(DivergenceInputError, match="Outcome 'fpr' .* undefined on every row"):
        scan(df, target="y", prediction="p", positive=1, metrics=["fpr"])
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fnr"], min_support=0.5)
    assert t.overall("fnr") == 0.5


@pytest.mark.parametrize("column", [
    np.array([1, 0, 0, 1], dtype=np.int8), np.array([0, 1, 1], dtype=np.int8), np.array([3, 3], dtype=np.int64),
    np.array([2, 0, 5, 2], dtype=np.int16), np.array([7, 9, 7], dtype=np.uint8), np.array([True, False]),
    np.array([False, False]), np.array([1.0, np.nan, 0.0]), np.array(["b", None, "a", "b"], dtype=object),
    pd.array([1, None, 0], dtype="Int64")], ids=lambda c: str(getattr(c, "dtype", "")))
def test_a_label_columns_values_are_pandas_unique_ones_in_the_order_they_appear(column):
    from divergence.prepare.outcomes import label_values

    series = pd.Series(column)
    got, want = label_values(series), list(pd.unique(series.dropna()))
    assert got == want and [type(v) for v in got] == [type(v) for v in want]


@pytest.mark.parametrize("kind", ["int8", "bool", "float with missing", "text"])
def test_rates_from_label_columns_of_any_type_are_the_float_masks(kind):
    """Each rate is 1, 0 or NaN as the positive masks of the target and prediction say (missing
    either: NaN), whatever the label column's type."""
    from divergence.prepare.outcomes import positive_mask

    rng = np.random.default_rng(2)
    y, p = rng.random(500) < 0.4, rng.random(500) < 0.5
    df = pd.DataFrame({"y": y.astype(np.int8), "p": p.astype(np.int8)})
    if kind == "bool":
        df = df.astype(bool)
    elif kind == "float with missing":
        df = df.astype(float)
        df.loc[rng.random(500) < 0.1, "y"] = np.nan
        df.loc[rng.random(500) < 0.1, "p"] = np.nan
    elif kind == "text":
        df = df.astype(str)
    positive = True if kind == "bool" else "1" if kind == "text" else 1
    yf, pf = positive_mask(df["y"], positive, "y", "target"), positive_mask(df["p"], positive, "p", "prediction")
    undefined = np.isnan(yf) | np.isnan(pf)
    assert undefined.any() == (kind == "float with missing")
    out = {o.name: o for o in build_outcomes(df, target="y", prediction="p", positive=positive,
                                             metrics=["fpr", "fnr", "error"])}
    yb, pb = yf == 1, pf == 1
    np.testing.assert_array_equal(out["fpr"].values, np.where(undefined | yb, NAN, pb))
    np.testing.assert_array_equal(out["fnr"].values, np.where(undefined | ~yb, NAN, ~pb))
    np.testing.assert_array_equal(out["error"].values, np.where(undefined, NAN, yb != pb))
    np.testing.assert_array_equal(out["error"].target, np.where(undefined, NAN, yb))
    assert all(o.binary for o in out.values())

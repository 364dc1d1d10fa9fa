"""Any metric per slice, MetricFrame-style (issue 45 point 3): ``table.evaluate`` against scikit-learn on
each slice's own rows, its seeded bootstrap, the rows used and the divergence."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    f1_score,
    mean_absolute_error,
    roc_auc_score,
)

from divergence import scan
from divergence.errors import DivergenceInputError
from divergence.stats.evaluate import auc, average_precision, balanced_accuracy, f1

KNOWN = {"auc": "auc", "f1": "f1", "balanced_accuracy": "balanced_accuracy", "average_precision": "average_precision"}


def _binary(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """A score that ranks worse where a=x; missing scores and labels on a few rows; tied scores."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("uv"), n)})
    y = (rng.random(n) < 0.35).astype(int)
    noise = np.where(df["a"] == "x", 0.45, 0.2)
    s = np.clip(0.35 + 0.3 * y + noise * rng.normal(size=n), 0, 1).round(2)
    df["y"] = np.where(rng.random(n) < 0.01, None, np.where(y == 1, "yes", "no"))
    df["s"] = np.where(rng.random(n) < 0.01, np.nan, s)
    return df


def _rows(df: pd.DataFrame, itemset: str) -> pd.DataFrame:
    keep = pd.Series(True, index=df.index)
    for item in filter(None, itemset.split(", ")):
        col, value = item.split("=")
        keep &= df[col] == value
    return df[keep]


@pytest.fixture(scope="module")
def binary():
    df = _binary()
    return df, scan(df, target="y", score="s", threshold=0.5, positive="yes", metrics=["fpr", "fnr"],
                    min_support=0.05)


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
def test_known_functions_equal_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(5, 300))
        y = rng.integers(0, 2, n)
        s = rng.integers(0, 6, n) / 5.0  # many ties
        p = rng.integers(0, 2, n)
        if 0 < y.sum() < n:
            assert auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
            assert average_precision(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
        if (y | p).any():
            assert f1(y, p) == pytest.approx(f1_score(y, p), abs=1e-12)
        assert balanced_accuracy(y, p) == pytest.approx(balanced_accuracy_score(y, p), abs=1e-12)
        yc, pc = rng.choice(["a", "b", "c"], n), rng.choice(["a", "b", "c", "d"], n)
        assert f1(yc, pc) == pytest.approx(f1_score(yc, pc, average="macro"), abs=1e-12)
        assert balanced_accuracy(yc, pc) == pytest.approx(balanced_accuracy_score(yc, pc), abs=1e-12)


def test_each_slice_on_its_own_rows_against_scikit_learn(binary):
    df, t = binary
    e = t.evaluate({**KNOWN, "sk_auc": roc_auc_score, "sk_f1": f1_score}, slices=6, bootstrap=50, seed=1)
    assert e["itemset"].iloc[0] == "" and len(e) == 7
    assert list(e["itemset"].iloc[1:]) == [t.itemsets[i] for i in t.default_order(None) if i][:6]
    overall = None
    for _, row in e.iterrows():
        r = _rows(df, row["itemset"]).dropna(subset=["y", "s"])
        y, s = (r["y"] == "yes").astype(int), r["s"]
        p = (s >= 0.5).astype(int)
        assert row["rows"] == len(r)
        want = {"auc": roc_auc_score(y, s), "average_precision": average_precision_score(y, s), "f1": f1_score(y, p),
                "balanced_accuracy": balanced_accuracy_score(y, p)}
        for name, value in want.items():
            assert row[name] == pytest.approx(value, abs=1e-12), (row["itemset"], name)
            assert row[f"{name}_low"] <= row[name] + 0.02 and row[f"{name}_high"] >= row[name] - 0.02
        assert row["sk_auc"] == pytest.approx(want["auc"], abs=1e-12)  # a score function gets the score
        assert row["sk_f1"] == pytest.approx(want["f1"], abs=1e-12)  # any other callable the predictions
        overall = overall or want
        assert row["auc_divergence"] == pytest.approx(want["auc"] - overall["auc"], abs=1e-12)


def test_the_bootstrap_is_seeded_and_resamples_the_slice(binary):
    df, t = binary
    a = t.evaluate({"auc": "auc"}, slices=["a=x"], bootstrap=200, seed=7)
    b = t.evaluate({"auc": "auc"}, slices=["a=x"], bootstrap=200, seed=7)
    c = t.evaluate({"auc": "auc"}, slices=["a=x"], bootstrap=200, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert (a["auc_low"] != c["auc_low"]).any()
    # the interval's width is the slice's own sampling spread: near 2 x 1.96 x the bootstrap SD
    r = _rows(df, "a=x").dropna(subset=["y", "s"])
    y, s = (r["y"] == "yes").to_numpy(int), r["s"].to_numpy()
    rng = np.random.default_rng(0)
    reps = [roc_auc_score(y[d], s[d]) for d in (rng.integers(0, len(y), len(y)) for _ in range(300))]
    low, high = np.quantile(reps, [0.025, 0.975])
    assert a["auc_low"].iloc[1] == pytest.approx(low, abs=0.02) and a["auc_high"].iloc[1] == pytest.approx(high, abs=0.02)
    assert t.evaluate({"auc": "auc"}, slices=2, bootstrap=0).columns.tolist() == ["itemset", "rows", "auc",
                                                                                  "auc_divergence"]


def test_default_slices_are_the_findings_then_the_first_20(binary):
    _, t = binary
    e = t.evaluate({"f1": "f1"}, bootstrap=0)
    found = [t.itemsets[i] for m in t.metric_names for i in np.flatnonzero(t.frame[f"{m}_finding"].to_numpy(bool))]
    assert set(found) <= set(e["itemset"])
    assert set(e["itemset"].iloc[1:]) == set(found) | {t.itemsets[i] for i in t.default_order(None) if i}
    assert list(t.evaluate({"f1": "f1"}, slices="findings", bootstrap=0)["itemset"].iloc[1:]) == list(dict.fromkeys(
        [t.itemsets[i] for m in t.metric_names for i in t.findings(m).index]))


def test_multiclass_and_regression():
    rng = np.random.default_rng(2)
    n = 1200
    df = pd.DataFrame({"a": rng.choice(list("xy"), n), "y": rng.choice(list("pqr"), n)})
    df["p"] = np.where(rng.random(n) < 0.7, df["y"], rng.choice(list("pqr"), n))
    t = scan(df, target="y", prediction="p", metrics=["error"], min_support=0.1, attributes=["a"])
    e = t.evaluate({"f1": "f1", "balanced_accuracy": "balanced_accuracy"}, slices=["a=x"], bootstrap=0)
    r = df[df["a"] == "x"]
    assert e["f1"].iloc[1] == pytest.approx(f1_score(r["y"], r["p"], average="macro"), abs=1e-12)
    assert e["balanced_accuracy"].iloc[1] == pytest.approx(balanced_accuracy_score(r["y"], r["p"]), abs=1e-12)
    with pytest.raises(DivergenceInputError, match="needs the model's score"):
        t.evaluate({"auc": "auc"})
    df["t"], df["q"] = rng.normal(size=n), rng.normal(size=n)
    t = scan(df, target="t", prediction="q", regression=True, min_support=0.1, attributes=["a"])
    e = t.evaluate({"mae": mean_absolute_error}, slices=["a=y"], bootstrap=0)
    r = df[df["a"] == "y"]
    assert e["mae"].iloc[1] == pytest.approx(mean_absolute_error(r["t"], r["q"]), abs=1e-12)


def test_a_regressors_metrics_without_the_regression_flag_get_no_classifiers_names():
    """A scan of a regressor's error metrics without ``regression=True`` (the command line's --metric
    abs_error without --regression) has no F1 or balanced accuracy to report on its findings' own rows:
    a real-valued target read as labels gave 0 [0, 0] for every slice in the report."""
    from divergence.stats.evaluate import known_names

    rng = np.random.default_rng(4)
    n = 600
    df = pd.DataFrame({"a": rng.choice(list("xy"), n), "t": rng.normal(size=n)})
    df["q"] = df["t"] + rng.normal(size=n)
    for flag in ({}, {"regression": True}):
        for metric in ("abs_error", "MAE", "squared_error"):
            t = scan(df, target="t", prediction="q", metrics=[metric], min_support=0.1, attributes=["a"], bootstrap=0,
                     **flag)
            assert known_names(t) == []
    df["y"], df["p"] = rng.integers(0, 2, n), rng.integers(0, 2, n)
    t = scan(df, target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.1, attributes=["a"], bootstrap=0)
    assert known_names(t) == ["f1", "balanced_accuracy"]


def test_bad_metrics_are_refused_by_name(binary):
    _, t = binary
    with pytest.raises(DivergenceInputError, match="Metric 'x': unknown name 'gini'"):
        t.evaluate({"x": "gini"})
    with pytest.raises(DivergenceInputError, match="metrics is a dict"):
        t.evaluate(["auc"])
    with pytest.raises(DivergenceInputError, match="bootstrap must be 0"):
        t.evaluate({"auc": "auc"}, bootstrap=5)


def test_command_line_evaluate(binary, tmp_path, capsys):
    from divergence.cli.cli import main
    from divergence.cli.summary import WIDTH

    df, t = binary
    path = tmp_path / "b.csv"
    df.to_csv(path, index=False)
    roles = ["--target", "y", "--score", "s", "--threshold", "0.5", "--positive", "yes", "--metric", "fpr,fnr",
             "--min-support", "0.05", "--attributes", "a,b"]
    assert main(["scan", str(path), *roles, "--top", "2", "--evaluate", "auc,f1"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    e = t.evaluate({"auc": "auc", "f1": "f1"}, bootstrap=200, seed=0)
    lines = out.splitlines()
    at = lines.index("  (whole dataset)")
    r = df.dropna(subset=["y", "s"])
    assert lines[at + 1].startswith(f"      auc {roc_auc_score(r['y'] == 'yes', r['s']):.3f} "
                                    f"[{e['auc_low'].iloc[0]:.3f}, {e['auc_high'].iloc[0]:.3f}]; f1 ")
    assert lines[at + 1].endswith(f"; {len(r):,} rows")
    assert main(["scan", str(path), *roles, "--evaluate", "auc,gini"]) == 2
    assert "--evaluate 'gini': choose from auc, average_precision, f1" in capsys.readouterr().err

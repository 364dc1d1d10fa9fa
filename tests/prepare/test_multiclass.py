"""A classifier of any number of classes (issue 45 point 1): error and accuracy over the classes,
one class against the rest (recall:C, precision:C, fpr:C, fnr:C), the majority-class baseline; every
slice checked against scikit-learn and pandas on its own rows."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from sklearn.metrics import accuracy_score, confusion_matrix, precision_score, recall_score

from divergence import scan
from divergence.errors import DivergenceInputError

CLASSES = ["bird", "cat", "dog"]
METRICS = ["error", "accuracy", "recall:dog", "precision:dog", "fpr:bird", "fnr:cat"]


def _data(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Right more often where a=x; a=z holds more birds (its majority class differs)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("uv"), n)})
    y = np.where(df["a"] == "z", rng.choice(CLASSES, n, p=[0.6, 0.3, 0.1]), rng.choice(CLASSES, n, p=[0.2, 0.5, 0.3]))
    right = rng.random(n) < 0.7 + 0.2 * (df["a"] == "x")
    return df.assign(y=y, p=np.where(right, y, rng.choice(CLASSES, n)))


def _rows(df: pd.DataFrame, itemset: str) -> pd.DataFrame:
    keep = pd.Series(True, index=df.index)
    for item in filter(None, itemset.split(", ")):
        col, value = item.split("=")
        keep &= df[col] == value
    return df[keep]


@pytest.fixture(scope="module")
def mc():
    df = _data()
    return df, scan(df, target="y", prediction="p", metrics=METRICS, min_support=0.05)


def test_each_slice_equals_scikit_learn_on_its_rows(mc):
    df, t = mc
    f = t.frame
    assert t.metric_names == METRICS and len(f) == 12
    for _, row in f.iterrows():
        r = _rows(df, row["itemset"])
        y, p = r["y"], r["p"]
        assert row["accuracy"] == pytest.approx(accuracy_score(y, p), abs=1e-12)
        assert row["error"] == pytest.approx(1 - accuracy_score(y, p), abs=1e-12)
        assert row["recall:dog"] == pytest.approx(recall_score(y, p, labels=["dog"], average="macro"), abs=1e-12)
        assert row["precision:dog"] == pytest.approx(precision_score(y, p, labels=["dog"], average="macro"), abs=1e-12)
        cm = confusion_matrix(y, p, labels=CLASSES)
        b = CLASSES.index("bird")
        fp, tn = cm[:, b].sum() - cm[b, b], cm.sum() - cm[b, :].sum() - (cm[:, b].sum() - cm[b, b])
        assert row["fpr:bird"] == pytest.approx(fp / (fp + tn), abs=1e-12)
        assert row["fnr:cat"] == pytest.approx(1 - recall_score(y, p, labels=["cat"], average="macro"), abs=1e-12)
        assert row["recall:dog_count"] == (y == "dog").sum() and row["precision:dog_count"] == (p == "dog").sum()
        # the slice baseline: predicting the slice's own majority class on every row
        assert row["error_baseline"] == pytest.approx(1 - y.value_counts(normalize=True).max(), abs=1e-12)


def test_every_statistic_as_for_a_binary_rate(mc):
    df, t = mc
    f = t.frame
    for m in METRICS:
        assert t.metric(m).binary
        for suffix in ("_ci_low", "_q", "_verdict", "_finding", "_order"):
            assert f"{m}{suffix}" in f.columns
    assert t.row("a=x")["error_verdict"] == "better"  # right more often there, by construction
    assert set(f["error_verdict"].iloc[1:]) <= {"better", "defect", "hard cohort", "undetermined", "noise",
                                                "too small"}
    assert t.row("a=x")["recall:dog_verdict"] == "above"
    # a=z's majority class is bird: its baseline is its own, not the whole dataset's class
    z = _rows(df, "a=z")["y"]
    assert z.value_counts().idxmax() == "bird" and df["y"].value_counts().idxmax() == "cat"


def test_the_classes_are_refused_by_name(mc):
    df, _ = mc
    with pytest.raises(DivergenceInputError, match=r"Target column 'y' has 3 classes .*recall:CLASS.*or name the "
                                                   r"positive label for fpr, fnr"):
        scan(df, target="y", prediction="p")
    with pytest.raises(DivergenceInputError, match=r"Metric 'recall:fish': 'fish' is not a class of target column 'y'"):
        scan(df, target="y", prediction="p", metrics=["recall:fish"])
    with pytest.raises(DivergenceInputError, match="holds 'fish', which is not a class of target column 'y'"):
        scan(df.assign(p=df["p"].where(df.index > 0, "fish")), target="y", prediction="p", metrics=["error"])
    with pytest.raises(DivergenceInputError, match="need the predicted class"):
        scan(df.assign(s=0.5), target="y", score="s", metrics=["error"])


def test_command_line_metric_names_a_class(mc, tmp_path):
    df, t = mc
    path, out = tmp_path / "mc.csv", tmp_path / "out.csv"
    df.to_csv(path, index=False)
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", "y", "--prediction", "p",
                        "--metric", "error,recall:dog", "--min-support", "0.05", "--output", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    np.testing.assert_allclose(f["recall:dog"], t.frame["recall:dog"], rtol=1e-15)
    assert list(f["error_verdict"].fillna("")) == list(t.frame["error_verdict"])
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", "y", "--prediction", "p",
                        "--metric", "error", "--engine", "duckdb"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "measured in memory" in r.stderr

"""Per-row metrics of a probability (issue 45 point 2): ``log_loss`` and ``calibration`` beside ``brier``,
each slice's value checked against scikit-learn and pandas on the slice's own rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from divergence import scan
from divergence.errors import DivergenceInputError


def _data(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Scores over-confident where a=y, b=u, under-confident where a=x (labels likelier than scored)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.choice(list("uv"), n)})
    y = (rng.random(n) < 0.3 + 0.3 * (df["a"] == "x")).astype(int)
    s = np.clip(0.3 + 0.1 * rng.normal(size=n) + 0.4 * ((df["b"] == "u") & (df["a"] == "y")), 0.001, 0.999)
    return df.assign(y=y, s=s.round(6))


def _rows(df: pd.DataFrame, itemset: str) -> pd.DataFrame:
    keep = pd.Series(True, index=df.index)
    for item in filter(None, itemset.split(", ")):
        col, value = item.split("=")
        keep &= df[col] == value
    return df[keep]


@pytest.fixture(scope="module")
def scored():
    df = _data()
    t = scan(df, target="y", score="s", threshold=0.5, positive=1, metrics=["log_loss", "calibration", "brier"],
             min_support=0.05)
    return df, t


def test_each_slice_equals_scikit_learn_and_pandas_on_its_rows(scored):
    df, t = scored
    f = t.frame
    assert len(f) == 12
    for _, row in f.iterrows():
        r = _rows(df, row["itemset"])
        assert row["log_loss"] == pytest.approx(log_loss(r["y"], r["s"], labels=[0, 1]), rel=1e-12)
        assert row["brier"] == pytest.approx(brier_score_loss(r["y"], r["s"]), rel=1e-12)
        assert row["calibration"] == pytest.approx((r["s"] - r["y"]).mean(), abs=1e-12)
        assert row["log_loss_count"] == row["calibration_count"] == len(r)
        # the slice baseline: the log loss of predicting the slice's own base rate on every row
        base = r["y"].mean()
        assert row["log_loss_baseline"] == pytest.approx(log_loss(r["y"], np.full(len(r), base), labels=[0, 1]),
                                                         rel=1e-9)
        # calibration is signed: a bias with no worse direction and no baseline
        assert row["calibration_divergence"] == pytest.approx((r["s"] - r["y"]).mean() - (df["s"] - df["y"]).mean(),
                                                              abs=1e-12)
    assert "calibration_baseline" not in f.columns
    row = t.row("a=y, b=u")
    assert row["calibration"] > 0.3 and row["calibration_verdict"] == "above"  # over-confident
    row = t.row("a=x")
    assert row["calibration"] < -0.25 and row["calibration_verdict"] == "below"  # under-confident
    # verdicts of the log loss: an error metric's words, defects not claimed without a walked reference
    assert set(f["log_loss_verdict"].iloc[1:]) <= {"hard cohort", "better", "noise", "too small", "undetermined",
                                                   "below", "above"}
    assert t.row("a=y, b=u")["log_loss_verdict"] != "noise"


def test_log_loss_clips_a_certain_wrong_score_as_scikit_learn_did():
    df = pd.DataFrame({"a": ["x", "y"] * 50, "y": [1, 0] * 50, "s": [0.0, 0.2] * 50})
    t = scan(df, target="y", score="s", threshold=0.5, positive=1, metrics=["log_loss"], min_support=0.1,
             attributes=["a"])
    # -log(1e-15) on every a=x row
    assert t.row("a=x")["log_loss"] == pytest.approx(-np.log(1e-15), rel=1e-12)
    assert t.row("a=y")["log_loss"] == pytest.approx(log_loss([0] * 50, [0.2] * 50, labels=[0, 1]), rel=1e-12)


@pytest.mark.parametrize("metric", ["log_loss", "calibration"])
def test_a_score_outside_0_1_or_no_score_is_refused_by_name(metric):
    df = pd.DataFrame({"a": ["x", "y"] * 20, "y": [1, 0] * 20, "s": [1.5, 0.2] * 20, "p": [1, 1] * 20})
    with pytest.raises(DivergenceInputError, match=f"Metric '{metric}' needs scores in \\[0, 1\\]; score column 's'"):
        scan(df, target="y", score="s", threshold=0.5, positive=1, metrics=[metric])
    with pytest.raises(DivergenceInputError, match=f"Metric '{metric}' needs a score column"):
        scan(df, target="y", prediction="p", positive=1, metrics=[metric])


def test_duckdb_gives_the_same_slices(scored, tmp_path):
    from divergence.engines.duckdb_engine import scan_duckdb
    from divergence.settings import Settings

    df, t = scored
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    d = scan_duckdb(str(path), Settings.from_keywords(target="y", score="s", threshold=0.5, positive=1,
                                                      metrics=["log_loss", "calibration", "brier"], min_support=0.05))
    a = t.frame.set_index("itemset").sort_index()
    b = d.frame.set_index("itemset").sort_index()
    for col in ("log_loss", "calibration", "brier", "log_loss_baseline", "log_loss_divergence"):
        np.testing.assert_allclose(b[col], a[col], rtol=1e-9, atol=1e-12, err_msg=col)
    assert list(b["calibration_verdict"]) == list(a["calibration_verdict"])

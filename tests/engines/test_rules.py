"""Each outcome rule is written once (divergence.outcome_rules); the pandas path reads it as
numpy masks, the SQL engines as SQL text. On random small tables both give the same slices,
counts and metric values, so the two readings cannot drift apart unnoticed."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from divergence import DivergenceInputError, scan
from divergence.engines.sql import CLASSIFICATION_SQL
from divergence.outcome_rules import CLASSIFICATION, CLASSIFICATION_METRICS, REGRESSION, REGRESSION_METRICS
from divergence.prepare.outcomes import CLASSIFICATION_RULES

pytest.importorskip("duckdb")
from divergence import scan_duckdb  # noqa: E402

RULE_METRICS = list(CLASSIFICATION)
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_every_metric_has_one_rule_read_by_both_paths():
    assert list(CLASSIFICATION_RULES) == list(CLASSIFICATION_SQL) == RULE_METRICS
    assert CLASSIFICATION_METRICS == tuple(RULE_METRICS) + ("brier", "log_loss", "calibration")
    assert REGRESSION_METRICS == tuple(REGRESSION)


def test_rule_masks_on_the_four_cells():
    """The numpy reading of each rule, cell by cell (y, p) = (1,1), (1,0), (0,1), (0,0)."""
    y = np.array([True, True, False, False])
    p = np.array([True, False, True, False])
    want = {  # (defined, one) per cell: TP, FN, FP, TN
        "fpr": ([0, 0, 1, 1], [1, 0, 1, 0]), "fnr": ([1, 1, 0, 0], [0, 1, 0, 1]),
        "tpr": ([1, 1, 0, 0], [1, 0, 1, 0]), "tnr": ([0, 0, 1, 1], [0, 1, 0, 1]),
        "error": ([1, 1, 1, 1], [0, 1, 1, 0]), "accuracy": ([1, 1, 1, 1], [1, 0, 0, 1]),
        "precision": ([1, 0, 1, 0], [1, 1, 0, 0]), "fdr": ([1, 0, 1, 0], [0, 0, 1, 1]),
        "npv": ([0, 1, 0, 1], [0, 0, 1, 1]), "for": ([0, 1, 0, 1], [1, 1, 0, 0]),
        "positive_rate": ([1, 1, 1, 1], [1, 0, 1, 0]), "base_rate": ([1, 1, 1, 1], [1, 1, 0, 0]),
    }
    assert set(want) == set(CLASSIFICATION_RULES)
    for m, (defined, one) in want.items():
        _, defined_fn, one_fn = CLASSIFICATION_RULES[m]
        assert defined_fn(y, p).astype(int).tolist() == defined, m
        assert one_fn(y, p).astype(int).tolist() == one, m


LABELS = st.sampled_from([("yes", "no"), (1, 0), (1.0, 0.0)])


@st.composite
def tables(draw, regression: bool = False):
    n = draw(st.integers(8, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    cols: dict[str, object] = {}
    for k in range(draw(st.integers(1, 3))):
        values = np.array(["a", "b", "c", "d"][: draw(st.integers(1, 4))], dtype=object)
        col = values[rng.integers(0, values.size, n)]
        col[rng.random(n) < draw(st.sampled_from([0.0, 0.15]))] = None
        cols[f"attr{k}"] = col
    if draw(st.booleans()):
        num = rng.integers(0, 5, n).astype(float)
        num[rng.random(n) < 0.1] = np.nan
        cols["number"] = num
    missing = draw(st.sampled_from([0.0, 0.1, 0.3]))
    if regression:
        y = rng.normal(5, 2, n).round(draw(st.sampled_from([0, 2])))
        p = y + rng.normal(0, 1, n).round(2)
        y[rng.random(n) < missing] = np.nan
        p[rng.random(n) < missing] = np.nan
        cols.update(truth=y, guess=p)
        return pd.DataFrame(cols), {}
    pos_label, neg_label = draw(LABELS)
    positive = draw(st.sampled_from([pos_label, neg_label]))
    share = draw(st.floats(0.1, 0.9))

    def labels() -> pd.Series:
        flags = rng.random(n) < share
        gone = rng.random(n) < missing
        if isinstance(pos_label, str):
            out = np.where(flags, pos_label, neg_label).astype(object)
            out[gone] = None
            return pd.Series(out)
        out = np.where(flags, pos_label, neg_label).astype(float)
        out[gone] = np.nan
        return pd.Series(out if missing or isinstance(pos_label, float) else out.astype(int))

    cols.update(label=labels(), pred=labels())
    return pd.DataFrame(cols), {"positive": positive}


MINED = ("", "_count", "_divergence")


def _both(df: pd.DataFrame, **kw):
    """The pandas and the DuckDB scan, or the same error from both."""
    try:
        want = scan(df, **kw)
    except DivergenceInputError as exc:
        with pytest.raises(DivergenceInputError) as got:
            scan_duckdb(df, threads=1, **kw)
        assert str(got.value) == str(exc)
        return None, None
    return scan_duckdb(df, threads=1, **kw), want


def _assert_same_slices(got, want) -> None:
    a, b = got.frame, want.frame
    assert list(a["itemset"].astype(str)) == list(b["itemset"].astype(str))
    np.testing.assert_array_equal(a["count"].to_numpy(), b["count"].to_numpy())
    assert [m.name for m in got.metrics] == [m.name for m in want.metrics]
    for m in want.metric_names:
        assert got.metric(m).binary == want.metric(m).binary, m
        for suffix in MINED:
            x, y = a[m + suffix].to_numpy(float), b[m + suffix].to_numpy(float)
            scale = max(float(np.nanmax(np.abs(y), initial=0.0)), 1.0)
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9 * scale, equal_nan=True, err_msg=m + suffix)


@SETTINGS
@given(data=tables(), support=st.sampled_from([0.05, 0.2]))
def test_classification_rules_same_in_pandas_and_sql(data, support):
    df, roles = data
    attributes = [c for c in df.columns if c not in ("label", "pred")]
    got, want = _both(df, target="label", prediction="pred", metrics=RULE_METRICS, attributes=attributes,
                      min_support=support, **roles)
    if want is not None:
        _assert_same_slices(got, want)


@SETTINGS
@given(data=tables(), threshold=st.sampled_from([0.3, 0.5, 0.8]))
def test_classification_rules_from_a_score_same_in_pandas_and_sql(data, threshold):
    df, roles = data
    rng = np.random.default_rng(len(df))
    score = rng.random(len(df)).round(1)
    score[rng.random(len(df)) < 0.1] = np.nan
    df = df.drop(columns="pred").assign(score=score)
    attributes = [c for c in df.columns if c not in ("label", "score")]
    got, want = _both(df, target="label", score="score", threshold=threshold, metrics=RULE_METRICS + ["brier", "log_loss", "calibration"],
                      attributes=attributes, min_support=0.1, **roles)
    if want is not None:
        _assert_same_slices(got, want)


@SETTINGS
@given(data=tables(regression=True), support=st.sampled_from([0.05, 0.2]))
def test_regression_rules_same_in_pandas_and_sql(data, support):
    df, _ = data
    attributes = [c for c in df.columns if c not in ("truth", "guess")]
    got, want = _both(df, target="truth", prediction="guess", regression=True, metrics=list(REGRESSION),
                      attributes=attributes, min_support=support)
    if want is not None:
        _assert_same_slices(got, want)

"""Shared by the DuckDB and Spark tests: synthetic tables covering every outcome kind, and
the comparison of an engine's slice table with the pandas one."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from divergence import assess, scan


def synthetic(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Mixed attributes with missing values, and columns for every outcome kind."""
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 12, n).round(1)
    age[rng.random(n) < 0.05] = np.nan
    income = np.exp(rng.normal(10, 1, n))
    city = rng.choice(["Oslo", "Lima", "Pune", "missing", "10 km", "2 km"], n, p=[.3, .2, .2, .1, .1, .1]).astype(object)
    city[rng.random(n) < 0.04] = None
    children = rng.integers(0, 4, n).astype(float)
    children[rng.random(n) < 0.03] = np.nan
    member = rng.random(n) < 0.4
    y = rng.random(n) < 1 / (1 + np.exp(-(age - 40) / 10 + (city == "Lima")))
    score = np.clip(rng.beta(2, 2, n) * 0.6 + 0.4 * y, 0, 1).round(3)
    score[rng.random(n) < 0.02] = np.nan
    pred = np.where(score >= 0.5, "yes", "no").astype(object)
    pred[np.isnan(score)] = None
    truth = rng.normal(50, 10, n) + (city == "Pune") * 8
    guess = truth + rng.normal(0, 5, n) + (member * 3)
    truth[rng.random(n) < 0.03] = np.nan
    grade = rng.integers(0, 21, n).astype(float) + rng.random(n).round(2)
    grade[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame({
        "row_id": np.arange(n) * 3 + 7,
        "age": age, "income": income, "city": city, "children": children, "member": member,
        "label": np.where(y, "yes", "no"), "pred": pred, "score": score,
        "truth": truth, "guess": guess, "grade": grade,
        "points": rng.integers(0, 40, n) / 2.0,  # ties, for rank_by
        "position": rng.integers(1, 200, n),
    })


ATTRS = ["age", "income", "city", "children", "member"]
#: name -> scan keyword arguments, all on :func:`synthetic`
CASES = {
    "labels": dict(target="label", prediction="pred", positive="yes",
                   metrics=["fpr", "fnr", "error", "precision", "npv"], attributes=ATTRS,
                   bins={"income": [20000, 40000]}),
    "score": dict(target="label", score="score", threshold=0.55, positive="yes",
                  metrics=["brier", "error", "accuracy", "base_rate"], attributes=ATTRS, quantile_bins=4),
    "regression": dict(target="truth", prediction="guess", regression=True,
                       metrics=["abs_error", "squared_error", "signed_error"], attributes=ATTRS,
                       binning="uniform", bins={"age": 5}),
    "ranking": dict(rank_by="points", gamma="power:0.5", attributes=ATTRS),
    "ranking_ascending": dict(rank_by="points", ascending=True, gamma="topk:300", attributes=ATTRS),
    "rank_column": dict(rank="position", gamma="dcg", attributes=ATTRS),
    "outcome": dict(outcome=["grade", "member"], attributes=["age", "income", "city", "children"]),
    "default_attributes": dict(outcome="grade", min_support=0.03),
}


def pandas_reference(df, **kw):
    """The pandas scan, and the same table assessed without its rows (what an engine reports).
    Given a file, it is read by divergence.data.io.load_table and its notes come first, as the
    command line does."""
    notes: list = []
    if not isinstance(df, pd.DataFrame):
        from divergence.data.io import load_table

        loaded = load_table(df)
        df, notes = loaded.frame, list(loaded.notes)
    full = scan(df, **kw)
    if notes:
        full = dataclasses.replace(full, notes=tuple(notes) + tuple(full.notes))
    opts = {k: kw[k] for k in ("delta", "confidence", "correction", "top_k", "sort_by") if k in kw}
    mined = {"support", "count"} | {f"{m}{s}" for m in full.metric_names for s in ("", "_count", "_divergence",
                                                                                   "_t", "_p")}
    bare = dataclasses.replace(full, kept_rows=None,
                               columns={k: v for k, v in full.columns.items() if k in mined})
    bare = assess(bare, **opts)
    return full, bare


def assert_same_table(got, want, *, rtol: float = 1e-12) -> None:
    """Same itemsets, counts and every statistic: integers and text exactly, reals to rtol
    (sums of reals differ in their last bits with the order of summation)."""
    a, b = got.frame, want.frame
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)
    assert [bn.labels for bn in got.bins] == [bn.labels for bn in want.bins]
    assert [bn.edges for bn in got.bins] == [bn.edges for bn in want.bins]
    assert list(a["itemset"].astype(str)) == list(b["itemset"].astype(str))
    for m in want.metrics:
        g = got.metric(m.name)
        assert (g.binary, g.baseline, g.aux) == (m.binary, m.baseline, m.aux)
        np.testing.assert_allclose(g.shift, m.shift, rtol=rtol)
    # the tallies (count, defined count, shifted sums): sums of reals agree to 1e-12 of the
    # column's scale; the shift itself (the mean of the outcome) is summed in another order
    scale = np.maximum(np.abs(want.tallies).max(axis=0), 1.0)
    assert np.all(np.abs(got.tallies - want.tallies) <= rtol * scale), "tallies"
    names = [m.name for m in want.metrics]
    for col in b.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_bool_dtype(y) or not pd.api.types.is_numeric_dtype(y):
            assert list(x.astype(str)) == list(y.astype(str)), col
        elif pd.api.types.is_integer_dtype(y):
            np.testing.assert_array_equal(x.to_numpy(), y.to_numpy(), err_msg=col)
        else:
            metric = next((m for m in names if col == m or col.startswith(m + "_")), None)
            # a difference of two means (divergence, t, lift), and the mean of a real outcome
            # near 0, is exact to the rounding of sums of the column's size: atol, not rtol
            real = metric is not None and not want.metric(metric).binary
            diff = metric and (real or any(k in col for k in ("divergence", "shortfall", "lift", "_t", "harder", "baseline")))
            finite = np.abs(y.to_numpy(float))
            finite = finite[np.isfinite(finite)]
            atol = 1e-12 * float(finite.max() if finite.size else 1.0) if diff else 0.0
            # Welch's p of a real outcome subtracts squares of means: a 1e-16 difference in
            # the shift grows by the slice's (mean gap / spread)^2, up to ~1e-11 relative
            r = 1e-9 if real and col.endswith(("_p", "_q")) else rtol
            if col.endswith(("_harder_low", "_harder_high", "_lift_shortfall_low", "_lift_shortfall_high")):
                # without rows the lift shortfall's variance is a bound from differences of sums (a
                # slice's sum of squares less its squared sum): their rounding grows there, to ~1e-7
                r = max(r, 1e-6)
            if col.endswith("_divergence_shrunk"):
                # an iterative fit (EM stopped at a tolerance): to 1e-6 of the divergences' scale
                atol = 1e-6 * float(np.nanmax(np.abs(b[f"{metric}_divergence"].to_numpy(float))))
            np.testing.assert_allclose(x.to_numpy(float), y.to_numpy(float), rtol=r, atol=atol,
                                       equal_nan=True, err_msg=col)
    assert got.notes[:-1] == want.notes
    assert got.n_rows == want.n_rows


def every_type_parquet(path, n: int = 2000, seed: int = 3) -> str:
    """A Parquet file with a column of each Arrow type the engines hand over (issue 32 point 6): numbers
    of every width, booleans, text three ways, dates and times, decimals, durations, bytes, lists,
    structs, maps and an all-missing column, beside a random target and prediction."""
    import datetime as dt
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    pick = lambda k: rng.integers(0, k, n)  # noqa: E731
    words = np.array(["north", "south", "east", "west"])
    text = [None if i % 17 == 0 else str(w) for i, w in enumerate(words[pick(4)])]
    day = dt.date(2021, 1, 1)
    cols = {
        "int8": pa.array(pick(3), pa.int8()),
        "uint16": pa.array(pick(4), pa.uint16()),
        "int64_wide": pa.array(rng.integers(-10**12, 10**12, n), pa.int64()),
        "float32": pa.array(rng.normal(size=n), pa.float32()),
        "float64_nan": pa.array(np.where(pick(10) == 0, np.nan, rng.gamma(2.0, size=n))),
        "flag": pa.array(pick(2) == 1, pa.bool_()),
        "text": pa.array(text, pa.string()),
        "large_text": pa.array(text, pa.large_string()),
        "dict_text": pa.array(text, pa.string()).dictionary_encode(),
        "day": pa.array([day + dt.timedelta(days=int(k)) for k in pick(700)], pa.date32()),
        "stamp": pa.array([dt.datetime(2021, 1, 1) + dt.timedelta(hours=int(k)) for k in pick(9000)],
                          pa.timestamp("us", tz="UTC")),
        "price": pa.array([decimal.Decimal(int(k)) / 4 for k in pick(9)], pa.decimal128(10, 2)),
        "wait": pa.array([dt.timedelta(seconds=int(k)) for k in pick(5)], pa.duration("s")),
        "blob": pa.array([bytes([65 + int(k)]) for k in pick(3)], pa.binary()),
        "tags": pa.array([[int(k), 1] for k in pick(3)], pa.list_(pa.int32())),
        "point": pa.array([{"x": int(k)} for k in pick(3)], pa.struct([("x", pa.int32())])),
        "props": pa.array([[("k", int(k))] for k in pick(3)], pa.map_(pa.string(), pa.int32())),
        "nothing": pa.nulls(n),
        "y": pa.array(pick(2), pa.int64()),
        "p": pa.array(pick(2), pa.int64()),
    }
    pq.write_table(pa.table(cols), path)
    return str(path)

"""The attribute screen within the scan's budgets (issue 33 F9): a table of thousands of columns is
screened in proportion (near copies told apart many at once, by a bound that never drops one), and
the time limit covers the screen as well as the mining."""
from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceBudgetError, scan
from divergence.data import column_rules
from divergence.data.column_rules import near_copies


def _pairwise(df: pd.DataFrame, columns: list[str]) -> dict[str, str]:
    """Near copies decided pair by pair, every pair tested: the rule without the bound."""
    n = len(df)
    coded = {c: column_rules.groups(df[c])[:2] for c in columns}
    text = {c: df[c].astype("string").fillna("\u0001").to_numpy() for c in columns}
    values = {c: column_rules.numeric_values(df[c]) for c in columns}
    kept: list[str] = []
    out: dict[str, str] = {}
    for col in columns:
        cx, kx = coded[col]
        for other in kept:
            co, ko = coded[other]
            base = max(np.bincount(cx, minlength=kx).max(), np.bincount(co, minlength=ko).max()) / n
            x, y = values[col], values[other]
            same = (float(np.mean((x == y) | (np.isnan(x) & np.isnan(y)))) if x is not None and y is not None
                    else float(np.mean(text[col] == text[other])))
            if (same == 1.0 or (same >= column_rules.COPY_AGREEMENT
                                and 1 - same <= column_rules.COPY_ERROR_SHARE * (1 - base))
                    or (column_rules._gives(co, ko, cx, kx) and column_rules._gives(cx, kx, co, ko))):
                out[col] = other
                break
        else:
            kept.append(col)
    return out


def _world(seed: int) -> pd.DataFrame:
    """Columns of every kind near the line: copies with 0-8% of values changed, relabelled copies,
    many-valued numbers, text with a rare odd value, missing values, unrelated columns."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 3_000))
    base = rng.integers(0, int(rng.integers(2, 8)), n)
    cols = {}
    for j in range(40):
        kind = rng.integers(0, 6)
        if kind == 0:
            v = rng.integers(0, int(rng.integers(2, 6)), n)
        elif kind == 1:
            v = base.copy()
            flip = rng.random(n) < rng.choice([0.0, 0.01, 0.03, 0.05, 0.08])
            v[flip] = rng.integers(0, 7, flip.sum())
        elif kind == 2:
            v = np.where(rng.random(n) < 0.02, "x", (base * 3 + 1).astype(str))
        elif kind == 3:
            v = rng.normal(size=n).round(int(rng.integers(0, 3)))
        elif kind == 4:
            v = base.astype(float)
            v[rng.random(n) < 0.03] = np.nan
        else:
            v = np.array([f"id{i}" for i in rng.permutation(n)])  # every value once
        cols[f"c{j}"] = v
    return pd.DataFrame(cols)


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_drops_no_near_copy(seed):
    df = _world(seed)
    found = near_copies(df, list(df.columns))
    assert {c: f.of for c, f in found.items()} == _pairwise(df, list(df.columns))
    assert found, "the world holds near copies"


def test_sparse_leave_one_out_accuracy_equals_the_table():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n, k, ky = int(rng.integers(1, 300)), int(rng.integers(1, 80)), int(rng.integers(1, 80))
        codes, y = rng.integers(0, k, n), rng.integers(0, ky, n)
        if rng.random() < 0.5:
            y = (codes * int(rng.integers(1, 4))) % ky
        table = np.bincount(codes * ky + y, minlength=k * ky).reshape(k, ky).astype(float)
        overall = int(table.sum(axis=0).argmax())
        order = np.argsort(-table, axis=1, kind="stable")
        a = table[np.arange(k), order[:, 0]]
        b = table[np.arange(k), order[:, 1]] if ky > 1 else np.zeros(k)
        right = np.where(a - 1 > b, a, np.where(a - 1 == b, np.where(order[:, 0] == overall, a, 0.0), 0.0))
        assert column_rules._loo_accuracy_sparse(codes, y, ky) == float(right.sum() / n)


def _wide(columns: int, rows: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 5, (rows, columns)), columns=[f"c{i}" for i in range(columns)])
    return df.assign(y=rng.integers(0, 2, rows), pred=rng.integers(0, 2, rows))


@pytest.mark.parametrize("limit", [0.5, 2.0])
def test_the_time_limit_covers_the_screen(limit):
    """6,000 columns take the screen longer than the limit: the scan stops about at the limit with
    one line saying how far the screen got and what to do."""
    df = _wide(6_000)
    t0 = time.monotonic()
    with pytest.raises(DivergenceBudgetError) as e:
        scan(df, target="y", prediction="pred", positive=1, metrics=["fpr"], time_limit=limit)
    took = time.monotonic() - t0
    text = str(e.value)
    assert f"did not finish within the time limit ({limit:g} s" in text
    assert re.search(r"it had [a-z ]+ [\d,]+ of 6,00[02] (columns|attributes)", text), text
    assert "--attributes" in text and "--time-limit" in text
    assert "\n" not in text
    assert took < limit + 3.0  # checked every 16 columns: a few milliseconds each


def test_attributes_given_skip_the_screen_and_its_time():
    df = _wide(6_000)
    t = scan(df, target="y", prediction="pred", positive=1, metrics=["fpr"], attributes=["c0", "c1"],
             time_limit=0.5)
    assert set(t.attributes) == {"c0", "c1"}


def test_hundreds_of_attributes_give_no_raw_numeric_warning():
    """The compressed table's key width was decided by a product of 500 radices, which overflowed a
    float and printed numpy's 'overflow encountered in reduce' on the command line."""
    import warnings

    df = _wide(500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            scan(df, target="y", prediction="pred", positive=1, metrics=["fpr"], attributes=list(df.columns[:500]),
                 max_length=1)
        except DivergenceBudgetError:
            pass


def test_the_time_limit_covers_the_duckdb_engines_screen_too(tmp_path):
    """The SQL engines' screen (on their sample) is bounded by the same time limit, counted from the
    scan's start, and says so in the same line (it was not bounded before)."""
    from divergence import scan_duckdb

    path = tmp_path / "wide.parquet"
    _wide(3_000).to_parquet(path)
    with pytest.raises(DivergenceBudgetError) as e:
        scan_duckdb(str(path), target="y", prediction="pred", positive=1, metrics=["fpr"], time_limit=0.5)
    text = str(e.value)
    assert text.startswith("The attribute screen did not finish within the time limit (0.5 s")
    assert re.search(r"it had [a-z ]+ [\d,]+ of 3,002 columns", text) and "\n" not in text

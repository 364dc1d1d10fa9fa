"""``SliceTable.top`` builds the rows it returns from the columns' arrays when the table's frame is not
built (a summary's ten rows without a DataFrame of every slice): the same rows, values, dtypes and index
as ``frame`` sorted and cut, whatever the order asked for; and the headline's verdict counts are
pandas' ``value_counts`` in the same order."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import scan
from divergence.data.datasets import DEMO_ROLES, load_demo
from divergence.present.cards import _counts
from divergence.scores import sort_column


@pytest.fixture(scope="module")
def table():
    return scan(load_demo(), **DEMO_ROLES["classification"], min_support=0.05)


def _from_frame(table, k, by, metric, ascending, min_length):
    """The rows as ``top`` took them from the whole frame before."""
    if by is None and ascending is None:
        f = table.frame
        rows = f.iloc[table.default_order(metric)]
        return rows[rows["length"] >= min_length].head(k)
    sorted_table, col = sort_column(table, by, metric)
    col = col or table.default_sort_column(metric)
    asc = bool(ascending) if ascending is not None else col.endswith("_order")
    f = sorted_table.frame
    f = f[f["length"] >= min_length]
    return f.sort_values([col, "support"], ascending=[asc, False], na_position="last", kind="stable").head(k)


ORDERS = [(None, None), ("wracc", None), ("sliceline", None), ("lift", None), ("support", None), ("itemset", None),
          ("length", None), ("length", True), ("fpr_p", True), ("fpr_q", True), ("fpr_verdict", None),
          ("fpr_order", None), ("fnr_divergence", None), ("fnr_divergence_shrunk", True), ("count", False)]


@pytest.mark.parametrize("by,ascending", ORDERS)
@pytest.mark.parametrize("k,min_length", [(10, 1), (3, 2), (1, 1), (100_000, 1), (0, 1), (10, 9)])
def test_top_is_the_frames_rows(table, by, ascending, k, min_length):
    metric = "fnr" if by == "wracc" else None
    table.__dict__.pop("frame", None)  # the rows from the arrays (the frame not built yet)
    got = table.top(k, by=by, metric=metric, ascending=ascending, min_length=min_length)
    want = _from_frame(table, k, by, metric, ascending, min_length)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=True)
    assert type(got.index) is type(want.index) and list(got.dtypes) == list(want.dtypes)
    # and from the frame once it is built
    pd.testing.assert_frame_equal(table.top(k, by=by, metric=metric, ascending=ascending, min_length=min_length),
                                  want, check_exact=True, check_index_type=True)


def test_a_column_of_text_and_numbers_takes_the_frames_rows(table):
    note = np.array(["a"] * len(table), dtype=object)
    note[3] = 7  # a few rows of text alone would be read as text, every row as objects
    other = table.with_columns(columns={**table.columns, "note": note})
    got = other.top(5, by="support")
    want = _from_frame(other, 5, "support", None, None, 1)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=True)
    assert got["note"].dtype == object


@pytest.mark.parametrize("seed", range(20))
def test_counts_are_value_counts_in_its_order(seed):
    rng = np.random.default_rng(seed)
    words = np.array(["above", "below", "noise", "too small", "", "defect", "hard cohort"], dtype=object)
    values = words[rng.integers(0, int(rng.integers(1, 8)), size=int(rng.integers(0, 60)))]
    want = {str(k): int(v) for k, v in pd.Series(values).value_counts().items() if k}
    got = _counts(values)
    assert list(got.items()) == list(want.items())
    assert list(_counts(values.astype(str)).items()) == list(want.items())


def test_counts_leave_out_missing_values():
    values = np.array(["noise", None, "above", np.nan, "noise", ""], dtype=object)
    assert _counts(values) == {"noise": 2, "above": 1}

"""Binning and item labels."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, discretize, scan
from divergence.data.column_kinds import is_row_index
from divergence.prepare.discretize import bin_labels, format_number


def test_explicit_edges_closed_on_the_right():
    df = pd.DataFrame({"LSAT": [20, 33, 33.5, 41, 41.01, 48, np.nan]})
    d = discretize(df, ["LSAT"], bins={"LSAT": [33, 41]})
    b = d.bins[0]
    assert b.labels == ("<=33", "(33,41]", ">41", "missing")
    assert [b.labels[c] for c in d.codes[:, 0]] == ["<=33", "<=33", "(33,41]", "(33,41]", ">41", ">41", "missing"]


def test_numbers_print_as_short_as_they_read():
    assert [format_number(x) for x in (33.0, 0.1, 2.5, -3.0, 1e-7, 1234567.0)] == [
        "33", "0.1", "2.5", "-3", "0.0000001", "1234567"]
    assert bin_labels([0.5, 1.25]) == ["<=0.5", "(0.5,1.25]", ">1.25"]


def test_quantile_bins_default_three_with_readable_edges():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(50, 10, 3000)})
    d = discretize(df, ["x"])
    b = d.bins[0]
    assert b.kind == "quantile" and len(b.edges) == 2
    for e in b.edges:  # short labels: at most 4 significant digits here
        assert len(format_number(e).replace("-", "").replace(".", "").lstrip("0")) <= 4
    counts = np.bincount(d.codes[:, 0])
    assert counts.min() > 900  # roughly equal thirds


def test_uniform_binning_and_per_column_count():
    df = pd.DataFrame({"x": np.arange(0, 101, dtype=float), "y": np.linspace(0, 1, 101)})
    d = discretize(df, ["x", "y"], binning="uniform", bins={"y": 4})
    assert d.bins[0].edges == (33.0, 67.0)
    assert d.bins[0].labels == ("<=33", "(33,67]", ">67")
    assert d.bins[1].labels == ("<=0.25", "(0.25,0.5]", "(0.5,0.75]", ">0.75")


def test_integer_columns_with_few_values_stay_categories_in_numeric_order():
    df = pd.DataFrame({"rating": [10, 2, 1, 2, 10, 3], "flag": [True, False, True, True, False, True]})
    d = discretize(df, ["rating", "flag"])
    assert d.bins[0].kind == "categorical"
    assert d.bins[0].labels == ("1", "2", "3", "10")
    assert d.bins[1].labels == ("False", "True")


def test_missing_is_its_own_item_distinct_from_a_category_named_missing():
    df = pd.DataFrame({"c": ["a", "missing", None, "a"]})
    d = discretize(df, ["c"])
    labels = d.bins[0].labels
    assert "missing" in labels and "'missing'" in labels
    items = [labels[c] for c in d.codes[:, 0]]
    assert items == ["a", "'missing'", "missing", "a"]


def test_text_categories_sort_naturally():
    df = pd.DataFrame({"age": [">45", "25-45", "<25", "25-45"], "p": ["[1,3]", ">3", "0", "0"]})
    d = discretize(df, ["age", "p"])
    assert d.bins[0].labels == ("<25", "25-45", ">45")
    assert d.bins[1].labels == ("0", "[1,3]", ">3")


def test_row_index_columns_are_left_out_and_said_so():
    df = pd.DataFrame({"Unnamed: 0": range(30), "id": range(100, 130), "g": ["a", "b"] * 15,
                       "o": np.arange(30.0)})
    assert is_row_index("Unnamed: 0", df["Unnamed: 0"]) and is_row_index("id", df["id"])
    assert not is_row_index("g", df["g"])
    t = scan(df, outcome="o", min_support=0.1)
    assert t.attributes == ("g",)
    assert any("'Unnamed: 0'" in n for n in t.notes) and any("'id'" in n for n in t.notes)


@pytest.mark.parametrize("edges, message", [
    (["a"], "must be numbers"), ([3, 1], "strictly increasing"), ([], "finite numbers")])
def test_bad_edges_are_named(edges, message):
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    with pytest.raises(DivergenceInputError, match=message):
        discretize(df, ["x"], bins={"x": edges})


def test_edges_on_a_text_column_name_it():
    df = pd.DataFrame({"x": ["a", "b"]})
    with pytest.raises(DivergenceInputError, match="Column 'x' has bin edges but holds values that are not numbers"):
        discretize(df, ["x"], bins={"x": [1]})


def test_small_integer_columns_are_counted_not_hashed_to_the_same_items(monkeypatch):
    """Columns of numpy integers within 65,536 of each other take a counting pass
    (``_small_integers``); the codes and items are those of the hashing path, value types included."""
    import divergence.prepare.discretize as disc

    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"i8": rng.integers(0, 5, n).astype(np.int8), "neg": rng.integers(-3, 4, n).astype(np.int16),
                       "u": rng.integers(2, 9, n).astype(np.uint8), "wide": rng.integers(0, 10**6, n),
                       "far": rng.choice([0, 10**7], n), "b": rng.integers(0, 2, n).astype(bool),
                       "f": rng.integers(0, 4, n).astype(float), "many": rng.integers(0, 40, n),
                       "gaps": rng.choice([-2, 0, 5], n).astype(np.int8), "u64": rng.integers(3, 8, n).astype(np.uint64),
                       "i8_wide": rng.integers(-100, 120, n).astype(np.int8),  # its values less its least pass int8
                       "gaps_wide": rng.choice([1, 9, 30], n).astype(np.int32)})
    counted = disc.discretize(df, list(df.columns))
    monkeypatch.setattr(disc, "_small_integers", lambda series: None)
    hashed = disc.discretize(df, list(df.columns))
    np.testing.assert_array_equal(counted.codes, hashed.codes)
    assert counted.bins == hashed.bins and counted.notes == hashed.notes
    assert [type(v) for v in counted.bins[1].values] == [type(v) for v in hashed.bins[1].values] == [int] * 7


def test_a_nullable_integer_column_with_a_missing_value_has_its_items_and_missing():
    """pandas' Int64 (a missing value is pd.NA) is binned as the same numbers as floats with NaN:
    it failed in the counting pass of numpy integers."""
    values = [1, None, 3, 2, 3, 1]
    nullable = discretize(pd.DataFrame({"x": pd.array(values, dtype="Int64")}), ["x"])
    floats = discretize(pd.DataFrame({"x": np.array(values, dtype=float)}), ["x"])
    assert nullable.bins[0].labels == floats.bins[0].labels == ("1", "2", "3", "missing")
    np.testing.assert_array_equal(nullable.codes[:, 0], [0, 3, 2, 1, 2, 0])
    np.testing.assert_array_equal(nullable.codes, floats.codes)

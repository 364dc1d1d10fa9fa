"""Every column type an engine can hand over (issue 32 point 6): a Parquet file with a column of each
Arrow type scans to the same table through pandas and DuckDB (decimals and durations read as the
numbers DuckDB and Spark read them as, said in a note); bytes and nested values are left out with the
same note by both, and named in one line when asked for as an attribute or a role; header oddities
(names equal once trimmed, control characters) give the same items in both."""
from __future__ import annotations

import dataclasses

import pytest
from engine_cases import assert_same_table, every_type_parquet, pandas_reference

from divergence import DivergenceInputError, scan_duckdb
from divergence.data.io import load_table

ROLES = dict(target="y", prediction="p", positive=1, min_support=0.05, max_length=2)


@pytest.fixture(scope="module")
def every_type(tmp_path_factory) -> str:
    return every_type_parquet(tmp_path_factory.mktemp("types") / "every.parquet")


def test_every_type_scans_to_the_same_table_in_pandas_and_duckdb(every_type):
    full, bare = pandas_reference(every_type, **ROLES)
    got = scan_duckdb(every_type, **ROLES)
    sliced = {i.split("=")[0] for i in full.frame["itemset"] if i}
    assert {"int8", "uint16", "float32", "float64_nan", "flag", "text", "price", "wait"} <= sliced
    left = "\n".join(full.notes)
    for col, why in (("blob", "bytes"), ("tags", "lists"), ("point", "structs"), ("nothing", "missing on every row"),
                     ("int64_wide", "identifier")):
        assert f"'{col}'" in left and why in left.split(f"'{col}'")[1].split("\n")[0], col
    assert "'day', 'stamp'" in left  # dates and times: named, binned only when asked
    # the notes pandas adds for the conversions it makes (DuckDB reads these types as numbers itself)
    conversions = [n for n in bare.notes if n.startswith("Column 'price' holds") or n.startswith("Column 'wait' holds")]
    assert len(conversions) == 2 and "decimal numbers" in conversions[0] and "number of seconds" in conversions[1]
    want = dataclasses.replace(bare, notes=tuple(n for n in bare.notes if n not in conversions))
    assert_same_table(got, want)


def test_decimals_and_durations_are_read_as_numbers(every_type):
    loaded = load_table(every_type)
    df = loaded.frame
    assert df["price"].dtype == float and df["wait"].dtype == float
    import pyarrow.parquet as pq

    raw = pq.read_table(every_type, columns=["price", "wait"]).to_pydict()
    assert list(df["price"]) == [float(v) for v in raw["price"]]
    assert list(df["wait"]) == [v.total_seconds() for v in raw["wait"]]


@pytest.mark.parametrize("col", ["blob", "tags", "point"])
def test_bytes_and_nested_values_as_an_attribute_or_a_role_are_one_line(every_type, col):
    with pytest.raises(DivergenceInputError, match=rf"^Column '{col}' cannot be used as an attribute: it holds"):
        scan_duckdb(every_type, **ROLES, attributes=["int8", col])
    with pytest.raises(DivergenceInputError, match=rf"^Column '{col}' cannot be used as the outcome: it holds"):
        scan_duckdb(every_type, outcome=col, attributes=["int8"], min_support=0.05)


def test_header_oddities_give_the_same_items_in_both_engines(tmp_path):
    """Names that are equal once trimmed stay two columns; control characters stay in the name (the
    command line's summary escapes them, tests/cli/test_output_safety.py)."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 600
    header = ["a ", " a", "b\x07c", "\x1b[31mred", "", "y", "p"]
    rows = np.column_stack([rng.choice(["u0", "u1", "u2"], n), rng.choice(["w0", "w1"], n), rng.choice(["x0", "x1"], n),
                            rng.choice(["r0", "r1", "r2"], n), rng.choice(["e0", "e1"], n),
                            rng.integers(0, 2, n), rng.integers(0, 2, n)])
    path = tmp_path / "odd.csv"
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    full, bare = pandas_reference(str(path), **ROLES)
    got = scan_duckdb(str(path), **ROLES)
    items = {i.split("=")[0] for i in full.frame["itemset"] if i}
    assert {"a ", " a", "b\x07c", "\x1b[31mred"} <= items
    assert list(got.frame["itemset"]) == list(full.frame["itemset"])
    assert got.frame["count"].tolist() == full.frame["count"].tolist()

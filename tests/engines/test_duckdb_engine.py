"""DuckDB engine: the same slice table as the pandas path, from files, folders and globs."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import data_file, engine_cli_tables
from engine_cases import CASES, assert_same_table, pandas_reference, synthetic

from divergence import DivergenceInputError, scan_duckdb
from divergence.cli.cli import main
from divergence.data.io import read_table
from divergence.engines.engine_scan import numpy_quantile

pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("parquet") / "synthetic.parquet"
    synthetic().to_parquet(path, index=False)
    return str(path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_table_as_pandas_on_synthetic_parquet(parquet_file, case):
    kw = {"min_support": 0.02, **CASES[case]}
    df = read_table(parquet_file)
    _, want = pandas_reference(df, **kw)
    got = scan_duckdb(parquet_file, **kw)
    assert_same_table(got, want)
    assert got.assessment.intervals == "analytic" and got.kept_rows is None
    assert "bootstrap intervals and median baselines need per-row data" in got.notes[-1]


def test_mined_columns_equal_the_pandas_scan_itself(parquet_file):
    """Support, counts, outcomes, divergence, t and p do not depend on the rows being kept."""
    kw = dict(min_support=0.02, **CASES["labels"])
    full, _ = pandas_reference(read_table(parquet_file), **kw)
    got = scan_duckdb(parquet_file, **kw)
    for col in ["support", "count", "fpr", "fpr_count", "fpr_divergence", "fpr_t", "fpr_p", "error_q",
                "error_baseline", "error_ci_low", "precision_meets_min_size"]:
        np.testing.assert_allclose(got.frame[col].to_numpy(float), full.frame[col].to_numpy(float),
                                   rtol=1e-12, equal_nan=True, err_msg=col)


def test_compas_discretized_csv_to_the_last_digit():
    path = data_file("compas_discretized.csv")
    kw = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"], min_support=0.01)
    full, want = pandas_reference(read_table(path), **kw)
    got = scan_duckdb(path, **kw)
    assert_same_table(got, want, rtol=0)  # 0/1 outcomes: every sum is an integer, nothing to round
    assert len(got) == len(full) > 500
    row = got.row("age=<25, #prior=>3, sex=Male")
    assert row["count"] == full.row("age=<25, #prior=>3, sex=Male")["count"]


@pytest.mark.parametrize("bins", [None, {"age": [25, 45], "priors_count": [0, 3]}])
def test_compas_raw_csv_numeric_columns(bins):
    path = data_file("compas-scores-two-years.csv")
    kw = dict(target="two_year_recid", score="decile_score", threshold=5, positive=1,
              metrics=["fpr", "fnr", "error"], min_support=0.02, bins=bins,
              attributes=["age", "priors_count", "sex", "race", "c_charge_degree", "juv_fel_count",
                          "days_b_screening_arrest", "c_jail_in"])
    _, want = pandas_reference(path, **kw)
    got = scan_duckdb(path, **kw)
    assert_same_table(got, want)
    if bins is None:
        assert got.bins[0].kind == "quantile" and got.bins[0].edges == want.bins[0].edges


def test_folder_and_glob_equal_one_table(tmp_path):
    df = synthetic(2400, seed=3)
    folder = tmp_path / "parts"
    folder.mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[part].to_parquet(folder / f"part-{k}.parquet", index=False)
    kw = dict(min_support=0.03, **CASES["score"])
    _, want = pandas_reference(read_table(folder / "part-0.parquet").iloc[:0].pipe(
        lambda _: pd.concat([read_table(folder / f"part-{k}.parquet") for k in range(3)], ignore_index=True)), **kw)
    for source in (str(folder), str(folder / "*.parquet"), [str(folder / f"part-{k}.parquet") for k in range(3)]):
        assert_same_table(scan_duckdb(source, **kw), want)


def test_nan_in_parquet_is_missing(tmp_path):
    """NaN stored as a value (not null) in Parquet: missing, as pandas reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(4)
    x = rng.normal(size=5000).round(2)
    x[rng.random(5000) < 0.1] = np.nan
    o = rng.random(5000)
    pq.write_table(pa.table({"x": x, "o": o}), tmp_path / "nan.parquet")  # NaN kept as NaN
    assert pq.read_table(tmp_path / "nan.parquet").column("x").null_count == 0
    _, want = pandas_reference(read_table(tmp_path / "nan.parquet"), outcome="o")
    got = scan_duckdb(tmp_path / "nan.parquet", outcome="o")
    assert got.bins[0].labels[-1] == "missing"
    assert_same_table(got, want)


def test_bounded_memory_and_given_temp_directory(parquet_file, tmp_path):
    kw = dict(min_support=0.02, **CASES["regression"])
    _, want = pandas_reference(read_table(parquet_file), **kw)
    got = scan_duckdb(parquet_file, memory_limit="100MB", temp_directory=tmp_path / "spill", threads=1, **kw)
    assert_same_table(got, want)


def test_approximate_quantiles_are_said(parquet_file):
    got = scan_duckdb(parquet_file, outcome="grade", attributes=["age", "income"], quantiles="approx")
    assert any("'income': quantile edges are approximate" in n for n in got.notes)
    exact = scan_duckdb(parquet_file, outcome="grade", attributes=["age", "income"], quantiles="exact")
    assert not any("approximate" in n for n in exact.notes)


def test_numpy_quantile_from_order_statistics():
    rng = np.random.default_rng(1)
    for _ in range(500):
        n = int(rng.integers(1, 400))
        x = np.sort(rng.normal(size=n) * 10.0 ** rng.integers(-4, 6))
        for level in (1 / 3, 2 / 3, 0.25, 0.5, 0.75, 0.1, 0.9, 0.2, 0.4, 0.6, 0.8):
            lo = int(np.floor((n - 1) * level))
            got = numpy_quantile(n, level, x[lo], x[min(lo + 1, n - 1)])
            assert got == np.quantile(x, level), (n, level)


def test_a_pandas_frame_is_a_source_too():
    df = synthetic(1500, seed=5)
    kw = dict(min_support=0.03, **CASES["ranking"])
    _, want = pandas_reference(df, **kw)
    assert_same_table(scan_duckdb(df, **kw), want)


def test_preview_of_a_path_for_the_dashboard(parquet_file):
    from divergence.engines.duckdb_engine import preview_source

    head, total = preview_source(parquet_file, rows=50)
    want = read_table(parquet_file)
    assert total == len(want) == 3000 and len(head) == 50
    assert list(head.columns) == list(want.columns)
    np.testing.assert_array_equal(head["row_id"], want["row_id"][:50])


# ----------------------------------------------------------------------------- bad input
def test_a_path_that_does_not_exist(tmp_path):
    with pytest.raises(DivergenceInputError, match=r"File or folder '.*nope.parquet' does not exist\."):
        scan_duckdb(tmp_path / "nope.parquet", outcome="x")
    with pytest.raises(DivergenceInputError, match=r"No file matches '.*\*.parquet'\."):
        scan_duckdb(str(tmp_path / "*.parquet"), outcome="x")
    with pytest.raises(DivergenceInputError, match=r"Folder '.*' holds no CSV or Parquet file\."):
        scan_duckdb(tmp_path, outcome="x")


def test_a_column_missing_in_one_file_of_a_folder(tmp_path):
    df = synthetic(300)
    df.to_parquet(tmp_path / "a.parquet", index=False)
    df.drop(columns=["city"]).to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(DivergenceInputError,
                       match=r"Column 'city' is in '.*a.parquet' but missing from '.*b.parquet': every file"):
        scan_duckdb(tmp_path, outcome="grade")


def test_a_type_mismatch_between_files(tmp_path):
    df = synthetic(300)
    df.to_parquet(tmp_path / "a.parquet", index=False)
    df.assign(age=df["age"].astype(str)).to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(DivergenceInputError, match=r"Column 'age' is DOUBLE in '.*a.parquet' but VARCHAR in '.*b.parquet'\."):
        scan_duckdb(tmp_path, outcome="grade")
    # integer in one file and float in another is the same kind of column: read as numbers
    (tmp_path / "b.parquet").unlink()
    df.assign(position=df["position"].astype(float)).to_parquet(tmp_path / "c.parquet", index=False)
    table = scan_duckdb(tmp_path, outcome="position", attributes=["city"])
    assert table.n_rows == 600


def test_mixed_formats_and_bad_roles(tmp_path, parquet_file):
    synthetic(100).to_csv(tmp_path / "a.csv", index=False)
    synthetic(100).to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(DivergenceInputError, match="mixes Parquet .* and CSV .* files"):
        scan_duckdb(tmp_path, outcome="grade")
    with pytest.raises(DivergenceInputError, match="Target column 'nope' is not in the data."):
        scan_duckdb(parquet_file, target="nope", prediction="pred", positive="yes")
    with pytest.raises(DivergenceInputError, match=r"Target column 'age' is not binary: it has more than 5"):
        scan_duckdb(parquet_file, target="age", prediction="pred", positive="yes")
    with pytest.raises(DivergenceInputError, match=r"Positive label 'maybe' is not a value of target column 'label'"):
        scan_duckdb(parquet_file, target="label", prediction="pred", positive="maybe")
    with pytest.raises(DivergenceInputError, match=r"Outcome column 'city' must be numeric; it holds"):
        scan_duckdb(parquet_file, outcome="city")
    with pytest.raises(DivergenceInputError, match="holdout is not available with the duckdb engine"):
        scan_duckdb(parquet_file, outcome="grade", holdout=0.5)


def test_unreadable_rows_give_no_partial_result(tmp_path):
    good = "a,b,o\n" + "x,1,1.5\n" * 30000
    (tmp_path / "t.csv").write_text(good + "y,not-a-number,2\n")
    with pytest.raises(DivergenceInputError, match=r"DuckDB could not read '.*t.csv'"):
        scan_duckdb(tmp_path / "t.csv", outcome="o")


# ----------------------------------------------------------------------------- command line
def test_cli_engine_duckdb_writes_the_pandas_table(parquet_file, tmp_path, capsys):
    args = ["scan", parquet_file, "--target", "label", "--prediction", "pred", "--positive", "yes",
            "--metric", "fpr,fnr", "--attributes", "age,city,children,member", "--min-support", "0.03"]
    a, b = engine_cli_tables(main, args, ["--engine", "duckdb", "--memory-limit", "500MB"], tmp_path)
    np.testing.assert_allclose(a["fpr_p"], b["fpr_p"], rtol=1e-12)
    assert "fpr_boot_low" in b.columns and b["fpr_boot_low"].isna().all()


def test_cli_engine_duckdb_bad_path_exits_2(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "none.parquet"), "--outcome", "x", "--engine", "duckdb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"divergence: error: File or folder '{tmp_path / 'none.parquet'}' does not exist."]


def test_importing_divergence_does_not_import_the_engines():
    code = ("import sys, divergence, divergence.cli.cli; from divergence import scan_duckdb, scan_spark; "
            "assert 'duckdb' not in sys.modules and 'pyspark' not in sys.modules, sorted(sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ}).returncode == 0


def test_mining_and_assessing_are_two_calls(parquet_file):
    """Issue 46 point 4: ``assess(mine_duckdb(...))`` is ``scan_duckdb(...)`` (no ``mine_only`` switch); a
    second table given to the mining is kept for the assessment, as with ``mine``."""
    from divergence import assess, mine_duckdb

    kw = {"min_support": 0.05, **CASES["labels"]}
    mined = mine_duckdb(parquet_file, **kw)
    assert mined.assessment is None and mined.engine == "duckdb"
    pd.testing.assert_frame_equal(assess(mined).frame, scan_duckdb(parquet_file, **kw).frame)
    other = read_table(parquet_file).sample(frac=0.5, random_state=0)
    kept = mine_duckdb(parquet_file, **kw, replicate=other)
    assert len(kept.replication.rows) == len(other)
    pd.testing.assert_frame_equal(assess(kept).frame, scan_duckdb(parquet_file, **kw, replicate=other).frame)
    with pytest.raises(DivergenceInputError, match="exploratory is said when the mined table is assessed"):
        mine_duckdb(parquet_file, **kw, exploratory=False)
    with pytest.raises(DivergenceInputError, match="Unknown setting 'mine_only'"):
        scan_duckdb(parquet_file, **kw, mine_only=True)


def test_grouped_rows_in_many_batches_give_the_same_table_bit_for_bit(parquet_file, monkeypatch):
    """The grouped rows are coded batch by batch (a category first seen in a later batch, missing
    text, NaN) and sorted before mining: the table is the pandas one, and the same to the last bit
    however DuckDB cuts its batches (one thread: with two, DuckDB's own sums of the error baseline's
    real-valued targets differ in their last bits from run to run)."""
    import divergence.engines.duckdb_engine as duckdb_engine

    kw = {"min_support": 0.02, **CASES["labels"], "attributes": ["city", "children", "age", "member", "income"]}
    _, want = pandas_reference(read_table(parquet_file), **kw)
    whole = scan_duckdb(parquet_file, threads=1, **kw)
    monkeypatch.setattr(duckdb_engine, "BATCH_ROWS", 7)
    batched = scan_duckdb(parquet_file, threads=1, **kw)
    assert_same_table(batched, want)
    assert batched.frame.equals(whole.frame)
    assert [b.labels for b in batched.bins] == [b.labels for b in want.bins]
    assert "missing" in batched.bins[0].labels and "'missing'" in batched.bins[0].labels

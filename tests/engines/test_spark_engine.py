"""Spark engine (local[2]): the same slice table as the pandas path.

Needs pyspark (requirements-spark.txt) and Java; skipped with the reason otherwise. One
session for the whole module: it takes several seconds to start.
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import data_file, engine_cli_tables
from engine_cases import CASES, assert_same_table, every_type_parquet, pandas_reference, synthetic
from personal_table import ATTRIBUTES, PERSONAL_COLUMNS, personal_table

from divergence import DivergenceInputError
from divergence.cli.cli import main
from divergence.data.io import read_table

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -r requirements-spark.txt)")
if shutil.which("java") is None:
    pytest.skip("no java on PATH: Spark needs Java 17 or later", allow_module_level=True)

from divergence import scan_spark  # noqa: E402
from divergence.engines.spark_engine import read_spark, spark_session  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark: pandas 3 "not fully supported"
        session = spark_session("local[2]", config={"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("spark") / "synthetic.parquet"
    synthetic(2000, seed=2).to_parquet(path, index=False)
    return str(path)


@pytest.mark.parametrize("case", ["labels", "score", "regression", "ranking", "ranking_ascending",
                                  "rank_column", "outcome", "default_attributes"])
def test_same_table_as_pandas(spark, parquet_file, case):
    kw = {"min_support": 0.03, **CASES[case]}
    _, want = pandas_reference(read_table(parquet_file), **kw)
    got = scan_spark(spark.read.parquet(parquet_file), quantiles="exact", **kw)
    assert_same_table(got, want)
    assert got.assessment.intervals == "analytic" and "Spark" in got.notes[-1]


def test_compas_discretized_and_raw(spark):
    path = str(data_file("compas_discretized.csv"))
    kw = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"], min_support=0.01)
    _, want = pandas_reference(read_table(path), **kw)
    assert_same_table(scan_spark(spark.read.csv(path, header=True, inferSchema=True), **kw), want, rtol=0)
    raw_path = data_file("compas-scores-two-years.csv")
    cols = ["age", "priors_count", "sex", "race", "c_charge_degree", "decile_score", "two_year_recid"]
    raw = read_table(raw_path)[cols]
    kw = dict(target="two_year_recid", score="decile_score", threshold=5, positive=1,
              metrics=["fpr", "fnr", "error"], min_support=0.02)
    _, want = pandas_reference(raw, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark: pandas 3 "not fully supported"
        frame = spark.createDataFrame(raw)
    assert_same_table(scan_spark(frame, quantiles="exact", **kw), want)
    _, want = pandas_reference(raw, bins={"age": [25, 45], "priors_count": [0, 3]}, **kw)
    assert_same_table(scan_spark(frame, bins={"age": [25, 45], "priors_count": [0, 3]}, **kw), want)


def test_quantiles_are_approximate_by_default_and_said(spark, parquet_file, monkeypatch):
    import divergence.engines.engine_bins

    monkeypatch.setattr(divergence.engines.engine_bins, "VALUE_COUNTS_MAX", 10)  # no exact counts for 'income'
    table = scan_spark(spark.read.parquet(parquet_file), outcome="grade", attributes=["income", "city"])
    assert any("'income': quantile edges are approximate (spark" in n for n in table.notes)
    edges = table.bins[0].edges
    exact = np.quantile(read_table(parquet_file)["income"], [1 / 3, 2 / 3])
    np.testing.assert_allclose(edges, exact, rtol=0.05)  # approximate, then rounded


def test_a_table_name_and_bad_input(spark, parquet_file):
    spark.read.parquet(parquet_file).createOrReplaceTempView("synthetic_view")
    kw = {"min_support": 0.03, **CASES["labels"]}
    _, want = pandas_reference(read_table(parquet_file), **kw)
    assert_same_table(scan_spark("synthetic_view", spark=spark, quantiles="exact", **kw), want)
    with pytest.raises(DivergenceInputError, match="Spark has no table or view 'no_such_table'"):
        scan_spark("no_such_table", spark=spark, outcome="grade")
    with pytest.raises(DivergenceInputError, match="Expected a Spark DataFrame or a table name; got DataFrame"):
        scan_spark(pd.DataFrame({"a": [1]}), outcome="a")
    with pytest.raises(DivergenceInputError, match="Outcome column 'nope' is not in the data."):
        scan_spark("synthetic_view", spark=spark, outcome="nope")
    with pytest.raises(DivergenceInputError, match="File, folder or table 'missing.parquet' does not exist."):
        read_spark("missing.parquet", spark=spark)



def test_a_file_named_parquet_that_is_not_one_is_one_line(spark, tmp_path):
    """Issue 32 point 6: Spark answered a CSV named .parquet with a Java stack trace."""
    fake = tmp_path / "fake.parquet"
    fake.write_text("a,y\nx,1\n")
    with pytest.raises(DivergenceInputError, match="fake.parquet' as Parquet: it is named as Parquet but is not a Parquet"):
        read_spark(str(fake), spark=spark)
    from divergence.cli.cli import main

    assert main(["scan", str(fake), "--engine", "spark", "--outcome", "y"]) == 2


def test_every_type_spark_reads_scans_as_pandas_does(spark, tmp_path):
    """Issue 32 point 6: a column of each Arrow type Spark reads (bytes, lists, structs, maps, dates,
    decimals, durations, dictionary text among them) gives the pandas table; bytes and nested values
    are left out with the same notes (Spark refused to cast bytes or a date to a number before)."""
    import dataclasses

    path = every_type_parquet(tmp_path / "every.parquet")
    roles = dict(target="y", prediction="p", positive=1, min_support=0.05, max_length=2)
    _, bare = pandas_reference(path, **roles)
    got = scan_spark(read_spark(path, spark=spark), quantiles="exact", **roles)
    want = dataclasses.replace(bare, notes=tuple(n for n in bare.notes if not n.startswith(("Column 'price' holds",
                                                                                             "Column 'wait' holds"))))
    assert_same_table(got, want, rtol=1e-9)
    with pytest.raises(DivergenceInputError, match="^Column 'blob' cannot be used as an attribute: it holds bytes"):
        scan_spark(read_spark(path, spark=spark), **roles, attributes=["int8", "blob"])


@pytest.mark.parametrize("kind", ["float16", "time", "nanoseconds"])
def test_a_type_spark_cannot_read_is_named_in_one_line(spark, tmp_path, kind):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 50
    cols = {"y": pa.array([i % 2 for i in range(n)]), "a": pa.array([f"v{i % 3}" for i in range(n)])}
    odd = {"float16": pa.array([float(i % 5) for i in range(n)], pa.float16()),
           "time": pa.array([dt.time(i % 24, 0) for i in range(n)], pa.time64("us")),
           "nanoseconds": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.timestamp("ns"))}
    cols["odd col"] = odd[kind]
    path = tmp_path / f"{kind}.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.raises(DivergenceInputError) as err:
        read_spark(str(path), spark=spark)
    line = str(err.value)
    assert line.startswith("Spark cannot read column 'odd col' (") and "\n" not in line and "--engine duckdb" in line


def test_a_spark_scan_from_the_command_line_says_nothing_about_pandas(parquet_file, tmp_path):
    """pyspark 4 warns at every session start that it does not fully support pandas 3; the scan takes
    Spark's results as Arrow and equals the pandas table in every test above, so the command line
    does not pass that warning on (it alarmed users for nothing)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "divergence", "scan", parquet_file, "--outcome", "grade",
                           "--attributes", "city,children", "--min-support", "0.05", "--engine", "spark",
                           "--spark-master", "local[1]", "--output", str(tmp_path / "out.csv")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "fully support pandas" not in done.stderr and "Traceback" not in done.stderr


def test_cli_engine_spark(spark, parquet_file, tmp_path, capsys):
    args = ["scan", parquet_file, "--outcome", "grade", "--attributes", "city,children,member",
            "--min-support", "0.03"]
    a, b = engine_cli_tables(main, args, ["--engine", "spark", "--spark-master", "local[2]"], tmp_path)
    np.testing.assert_allclose(a["grade"], b["grade"], rtol=1e-12)


@pytest.mark.parametrize("encoding, delim", [("utf-8", ";"), ("cp1252", "|"), ("utf-16", "\t")])
def test_a_csv_reads_as_pandas_reads_it(spark, tmp_path, encoding, delim):
    """The delimiter and encoding pandas and DuckDB find, and a repeated header name as pandas names
    it (``g``, ``g.1``): Spark read a semicolon file as one column and named repeats ``g0``, ``g2``."""
    from divergence import scan
    from divergence.data.io import load_table

    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"town": rng.choice(["Zürich", "Oslo", "Málaga"], n), "g": rng.choice(["é", "u"], n),
                       "size": rng.integers(1, 9, n), "g_dup": rng.choice(["x", "w"], n),
                       "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)})
    text = df.to_csv(index=False, sep=delim).replace("g_dup", "g", 1)
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode(encoding))
    frame = read_spark(str(path), spark=spark)
    assert frame.columns == ["town", "g", "size", "g.1", "y", "p"]
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=0.05,
              attributes=["town", "g", "size", "g.1"])
    want = scan(load_table(path).frame, **kw)
    got = scan_spark(frame, **kw)
    assert list(got.frame["itemset"]) == list(want.frame["itemset"])
    np.testing.assert_array_equal(got.frame["count"], want.frame["count"])


def test_a_decimal_comma_is_refused_in_words(spark, tmp_path):
    path = tmp_path / "comma.csv"
    path.write_text("a;x;y\nu;1,5;1\nv;2,5;0\n", encoding="utf-8")
    with pytest.raises(DivergenceInputError, match="decimal comma.*--engine duckdb"):
        read_spark(str(path), spark=spark)


def test_windows_1252_that_spark_cannot_decode_is_refused_in_words(spark, tmp_path):
    path = tmp_path / "euro.csv"
    path.write_bytes("a,price,y\nMálaga,5 €,1\nOslo,7 €,0\n".encode("cp1252"))
    with pytest.raises(DivergenceInputError, match="windows-1252.*€.*UTF-8"):
        read_spark(str(path), spark=spark)


def test_a_folder_of_csvs_written_differently_is_refused_as_duckdb_refuses_it(spark, tmp_path):
    """Every file of a source is sniffed (Spark sniffed the first and read the others as if alike):
    another delimiter is refused in DuckDB's words, another encoding in words of its own."""
    from divergence import scan_duckdb

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.csv").write_text("town,y\nOslo,1\nBern,0\n", encoding="utf-8")
    (mixed / "b.csv").write_text("town;y\nOslo;0\nBern;1\n", encoding="utf-8")
    with pytest.raises(DivergenceInputError, match="written differently") as by_spark:
        read_spark(str(mixed), spark=spark)
    with pytest.raises(DivergenceInputError, match="written differently") as by_duckdb:
        scan_duckdb(str(mixed), outcome="y", min_support=0.5)
    assert str(by_spark.value) == str(by_duckdb.value)
    encodings = tmp_path / "encodings"
    encodings.mkdir()
    (encodings / "a.csv").write_text("town,y\nOslo,1\nBern,0\n", encoding="utf-8")
    (encodings / "b.csv").write_bytes("town,y\nOslo,0\nBern,1\n".encode("utf-16"))
    with pytest.raises(DivergenceInputError, match="utf-16 text.*one encoding.*--engine duckdb"):
        read_spark(str(encodings), spark=spark)


def test_personal_identifiers_left_out_as_in_pandas(spark, tmp_path):
    """Issue 48: Spark's screen (on its sample of rows) leaves out the customer export's 15 personal
    columns with the reasons the pandas screen gives."""
    df = personal_table(5_000)
    path = str(tmp_path / "customers.parquet")
    df.to_parquet(path, index=False)
    kw = dict(target="churned", prediction="predicted", positive="yes", metrics=["fpr"])
    want = pandas_reference(read_table(path), **kw)[1]
    got = scan_spark(spark.read.parquet(path), **kw)
    assert list(got.attributes) == list(want.attributes) == ATTRIBUTES
    used = {item.split("=")[0] for s in got.frame["itemset"].iloc[1:] for item in s.split(", ")}
    assert used and not used & set(PERSONAL_COLUMNS)
    personal = [n for n in got.notes if "name it in attributes to keep it" in n]
    assert personal == [n for n in want.notes if "name it in attributes to keep it" in n] and len(personal) == 15

"""The command-line contract: options, output columns, exit status 2 with one line on bad input."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from divergence.cli.cli import main
from divergence.data.datasets import load_demo


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "divergence", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "demo.csv"
    load_demo(3000).to_csv(path, index=False)
    return path


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def test_classification_columns_and_precision(demo_csv, tmp_path):
    out = tmp_path / "s.csv"
    code = main([ "scan", str(demo_csv), "--target", "defaulted", "--prediction", "predicted_default",
                  "--positive", "yes", "--metric", "fpr,fnr", "--attributes", "sex,region,education",
                  "--min-support", "0.02", "--output", str(out)])
    assert code == 0
    f = read(out)
    for col in ["itemset", "length", "support", "count"] + [f"{m}{s}" for m in ("fpr", "fnr")
                                                              for s in ("", "_divergence", "_t", "_p")]:
        assert col in f.columns
    assert (f["fpr_t"].dropna() >= 0).all()
    # full precision: the CSV round-trips to exactly the floats of the Python result
    from divergence import scan

    py = scan(pd.read_csv(demo_csv), target="defaulted", prediction="predicted_default", positive="yes",
              metrics=["fpr", "fnr"], attributes=["sex", "region", "education"], min_support=0.02).frame
    for col in ("support", "fpr", "fpr_divergence", "fpr_t", "fpr_p", "fnr_t"):
        np.testing.assert_array_equal(f[col].to_numpy(), py[col].to_numpy())


def test_min_support_as_rows_or_share(demo_csv, tmp_path, capsys):
    """--min-support 61 (rows) and 61/3000 (a share that floating point puts a hair above 61 rows)
    write the same table, slices of exactly 61 rows included; the summary says which was given."""
    outs = []
    for value in ("61", str(61 / 3000)):
        out = tmp_path / f"s{len(outs)}.csv"
        assert main(["scan", str(demo_csv), "--outcome", "spend", "--attributes", "sex,region,education,channel",
                     "--min-support", value, "--output", str(out)]) == 0
        outs.append(read(out))
    pd.testing.assert_frame_equal(outs[0], outs[1])
    assert outs[0]["count"].iloc[1:].min() >= 61
    assert main(["scan", str(demo_csv), "--outcome", "spend", "--attributes", "sex,region", "--min-support", "61"]) == 0
    assert "with support >= 61 rows (2.03% of 3,000)" in capsys.readouterr().out


def test_outcome_column(demo_csv, tmp_path):
    out = tmp_path / "g.csv"
    r = run("scan", str(demo_csv), "--outcome", "spend", "--attributes", "employment,channel",
            "--min-support", "0.005", "--output", str(out))
    assert r.returncode == 0, r.stderr
    f = read(out)
    assert {"spend", "spend_divergence", "spend_t", "spend_p"} <= set(f.columns)
    df = pd.read_csv(demo_csv)
    row = f[f["itemset"] == "employment=Retired"].iloc[0]
    assert row["spend"] == pytest.approx(df.loc[df["employment"] == "Retired", "spend"].mean(), rel=1e-12)


def test_ranking_gamma(demo_csv, tmp_path):
    out = tmp_path / "r.csv"
    assert main(["scan", str(demo_csv), "--rank-by", "predicted_spend", "--gamma", "topk:300",
                 "--attributes", "employment", "--min-support", "0.005", "--output", str(out)]) == 0
    f = read(out)
    assert f.loc[0, "gamma"] == pytest.approx(300 / 3000)
    assert main(["scan", str(demo_csv), "--rank-by", "predicted_spend", "--ascending", "--gamma", "power:0.1",
                 "--attributes", "employment", "--output", str(out)]) == 0
    assert main(["scan", str(demo_csv), "--rank-by", "predicted_spend", "--gamma", "dcg",
                 "--attributes", "employment", "--output", str(out)]) == 0
    assert "gamma_t" in read(out).columns


def test_regression_bins_and_max_length(demo_csv, tmp_path):
    out = tmp_path / "reg.csv"
    assert main(["scan", str(demo_csv), "--regression", "--target", "spend", "--prediction", "predicted_spend",
                 "--metric", "abs_error", "--attributes", "age,income,channel", "--bins", "age=30,50",
                 "--bins", "income=40", "--max-length", "2", "--min-support", "0.01", "--output", str(out)]) == 0
    f = read(out)
    assert f["length"].max() == 2
    items = {i for s in f["itemset"].dropna() for i in s.split(", ")}
    assert {"age=<=30", "age=(30,50]", "age=>50", "income=<=40", "income=>40"} <= items


def test_positive_reads_as_text_or_number(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"g": list("aabb"), "y": [1, 0, 1, 0], "p": [1, 1, 0, 0]}).to_csv(path, index=False)
    outs = []
    for pos in ("1", "1.0"):
        out = tmp_path / f"o{pos}.csv"
        assert main(["scan", str(path), "--target", "y", "--prediction", "p", "--positive", pos,
                     "--metric", "fpr", "--min-support", "0.5", "--output", str(out)]) == 0
        outs.append(read(out))
    pd.testing.assert_frame_equal(*outs)
    assert outs[0].loc[0, "fpr"] == 0.5


@pytest.mark.parametrize("args, message", [
    (["scan", "missing.csv", "--outcome", "x"], "File 'missing.csv' does not exist"),
    (["scan", "{demo}", "--target", "defaulted", "--prediction", "predicted_default", "--positive", "maybe"],
     "Positive label 'maybe' is not a value of target column 'defaulted'"),
    (["scan", "{demo}", "--target", "age", "--prediction", "predicted_default", "--positive", "1"],
     "Target column 'age' is not binary"),
    (["scan", "{demo}", "--outcome", "sex"], "Outcome column 'sex' must be numeric"),
    (["scan", "{demo}", "--outcome", "nope"], "Outcome column 'nope' is not in the data"),
    (["scan", "{demo}", "--outcome", "spend", "--min-support", "0"], r"min_support must be a share of the rows in \(0, 1\] or a row count above 1"),
    (["scan", "{demo}", "--outcome", "spend", "--min-support", "abc"], "min_support must be a number: a share of the rows"),
    (["scan", "{demo}", "--outcome", "spend", "--bins", "age"], "argument --bins: expected COL=e1,e2"),
    (["scan", "{demo}", "--outcome", "spend", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["scan", "{empty}", "--outcome", "x"], "has a header but no rows"),
    (["scan", "{binary}", "--outcome", "x"], "Could not read"),
    (["scan", "{demo}", "--outcome", "spend", "--confidence", "1.5"], r"confidence must be a level from 0.5 to 0.999999999; got 1.5"),
    (["scan", "{demo}", "--outcome", "spend", "--confidence", "0"], r"confidence must be a level from 0.5 to 0.999999999; got 0.0"),
    (["scan", "{demo}", "--outcome", "spend", "--delta", "-0.1"], "delta must be a positive number; got -0.1"),
    (["scan", "{demo}", "--outcome", "spend", "--delta", "spend=-2"], "delta for 'spend' must be a positive number"),
    (["scan", "{demo}", "--outcome", "spend", "--bootstrap", "-1"], "bootstrap must be 0 .* got -1"),
    (["scan", "{demo}", "--outcome", "spend", "--family", "slices"], "argument --family: invalid choice: 'slices'"),
])
def test_bad_input_exit_2_one_line(demo_csv, tmp_path, args, message):
    empty = tmp_path / "empty.csv"
    empty.write_text("x,y\n")
    binary = tmp_path / "junk.parquet"
    binary.write_bytes(b"\x00\x01not parquet at all")
    args = [a.format(demo=demo_csv, empty=empty, binary=binary) for a in args]
    r = run(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("divergence: error: ")
    assert pd.Series([lines[0]]).str.contains(message).iloc[0], lines[0]
    assert "Traceback" not in r.stderr


def test_summary_without_output(demo_csv):
    r = run("scan", str(demo_csv), "--target", "defaulted", "--prediction", "predicted_default",
            "--positive", "yes", "--attributes", "region,education", "--min-support", "0.02", "--top", "3")
    assert r.returncode == 0, r.stderr
    assert "fpr (false-positive rate): whole dataset" in r.stdout
    assert "region=South, education=Primary" in r.stdout
    # the planted finding (about 120 negatives of 3,000 rows) is below n_min: the summary says so in
    # the table's words
    lines = r.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.strip() == "region=South, education=Primary")
    # the slice's figures on the line under it
    assert "; above · indicative; distinct finding" in lines[at + 1] and " points; q " in lines[at + 1]


def test_output_is_not_left_half_written(demo_csv, tmp_path):
    out = tmp_path / "nofolder" / "s.csv"
    r = run("scan", str(demo_csv), "--outcome", "spend", "--output", str(out))
    assert r.returncode == 2 and "does not exist" in r.stderr and not out.exists()


def test_family_option_and_verbose_say_which_family(demo_csv, tmp_path):
    out = tmp_path / "t.csv"
    r = run("scan", str(demo_csv), "--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes",
            "--metric", "fpr,fnr", "--attributes", "region,education", "--min-support", "0.02", "--verbose",
            "--output", str(out))
    assert r.returncode == 0, r.stderr
    # n_min and n_power, each with its derivation
    assert "n_min = " in r.stderr and "narrower than δ" in r.stderr and "n_power = " in r.stderr
    # the family in the one sentence every surface uses (divergence.present.formats.family_sentence)
    # each metric its own family by default (issue 43), the joint family as an option
    assert "fpr: q-values: Benjamini–Hochberg over 19 tests: the 19 slices tested for fpr" in r.stderr
    joint = tmp_path / "m.csv"
    r = run("scan", str(demo_csv), "--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes",
            "--metric", "fpr,fnr", "--attributes", "region,education", "--min-support", "0.02", "--verbose",
            "--family", "scan", "--output", str(joint))
    assert r.returncode == 0
    assert "fpr: q-values: Benjamini–Hochberg over 38 tests: the 19 slices tested for each of fpr and fnr" in r.stderr
    a, b = pd.read_csv(joint), pd.read_csv(out)
    assert (a["fpr_q"].iloc[1:] >= b["fpr_q"].iloc[1:] - 1e-12).all() and (a["fpr_q"] != b["fpr_q"]).any()
    for col in ("fpr_divergence_shrunk", "fpr_divergence_bound", "fpr_divergence_adj_low"):
        assert col in a.columns


@pytest.mark.parametrize("kind", ["classification", "regression", "outcome"])
def test_the_csv_from_the_arrays_is_the_csv_of_the_frame(demo_csv, tmp_path, kind):
    """The command line writes the table from its arrays (SliceTable.to_arrow), without a
    DataFrame: the file must be byte for byte the one the frame gives (NaN as an empty cell,
    text quoted, booleans, integers)."""
    from divergence import scan
    from divergence.table import write_csv

    df = pd.read_csv(demo_csv)
    roles = {"classification": dict(target="defaulted", prediction="predicted_default", positive="yes",
                                    metrics=["fpr", "fnr", "error"]),
             "regression": dict(target="spend", prediction="predicted_spend", regression=True,
                                metrics=["abs_error"], bootstrap=20),
             "outcome": dict(outcome="spend")}[kind]
    table = scan(df, attributes=["sex", "region", "education"], min_support=0.01, **roles)
    table.to_csv(tmp_path / "arrays.csv")
    write_csv(table.frame, tmp_path / "frame.csv")
    assert (tmp_path / "arrays.csv").read_bytes() == (tmp_path / "frame.csv").read_bytes()
    assert table.to_arrow().column_names == list(table.frame.columns)


def test_an_output_named_parquet_is_parquet_with_the_csvs_values(demo_csv, tmp_path):
    """--output x.parquet writes Parquet (typed columns), holding exactly what the CSV holds."""
    args = ["scan", str(demo_csv), "--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes",
            "--metric", "fpr,fnr", "--attributes", "sex,region,education", "--min-support", "0.02"]
    assert main(args + ["--output", str(tmp_path / "s.csv")]) == 0
    assert main(args + ["--output", str(tmp_path / "s.PARQUET")]) == 0
    assert (tmp_path / "s.PARQUET").read_bytes()[:4] == b"PAR1"
    csv, parquet = read(tmp_path / "s.csv"), pd.read_parquet(tmp_path / "s.PARQUET")
    assert list(parquet.columns) == list(csv.columns) and len(parquet) == len(csv) > 1
    assert parquet["fpr_p"].dtype == np.float64 and parquet["count"].dtype == np.int64
    assert parquet["fpr_finding"].dtype == bool
    for col in csv.columns:
        if parquet[col].dtype.kind in "fi":
            np.testing.assert_array_equal(parquet[col].to_numpy(float), csv[col].to_numpy(float))
        else:
            shown = csv[col].astype(object).where(csv[col].notna(), "")  # an empty text column reads back as NaN
            assert parquet[col].astype(str).tolist() == shown.astype(str).tolist(), col
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.PARQUET", "s.csv"]  # no temporary file left


def test_holdout_seed_draws_the_held_out_rows(demo_csv, tmp_path):
    """--holdout-seed draws the held-out rows (the replication's own seed, issue 46 point 4); without
    it --seed draws them, as before; the bootstrap's --seed then leaves them where they are."""
    from divergence import scan

    df = pd.read_csv(demo_csv)
    kw = dict(outcome=["spend"], attributes=["sex", "region", "education"], min_support=0.05, holdout=0.5)
    base = ["scan", str(demo_csv), "--outcome", "spend", "--attributes", "sex,region,education",
            "--min-support", "0.05", "--holdout", "0.5"]
    outs = {}
    for name, extra in (("own", ["--holdout-seed", "3", "--seed", "1"]), ("seed", ["--seed", "3"])):
        out = tmp_path / f"{name}.csv"
        assert main(base + extra + ["--output", str(out)]) == 0
        outs[name] = read(out)
    want = scan(df, **kw, holdout_seed=3, seed=1).frame
    np.testing.assert_array_equal(outs["own"]["spend_replicated"].to_numpy(), want["spend_replicated"].to_numpy())
    # the same held-out rows either way: the replicated outcomes agree
    np.testing.assert_array_equal(outs["own"]["spend_replicated"].to_numpy(), outs["seed"]["spend_replicated"].to_numpy())
    other = scan(df, **kw, holdout_seed=4).frame
    assert not np.array_equal(other["spend_replicated"].to_numpy(), want["spend_replicated"].to_numpy())

"""The compare command's contract: columns, values, empty cells, exit status 2 with one line
and no output file on bad input."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from divergence import compare
from divergence.cli.cli import main
from divergence.comparison.compare import compare_columns


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "divergence", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame({"region": rng.choice(["N", "S", "E"], n), "plan": rng.choice(["basic", "gold"], n)})
    y = rng.random(n) < 0.3
    df.loc[df.index < 150, "plan"] = "vip"  # a slice with positives only: its FPR is undefined
    y[:150] = True
    df["label"] = y.astype(int)
    df["new"] = (y ^ (rng.random(n) < np.where(df["region"] == "S", 0.3, 0.15))).astype(int)
    df["old"] = (y ^ (rng.random(n) < 0.15)).astype(int)
    df["s_new"] = np.clip(0.5 + np.where(df["new"] == 1, 0.2, -0.2) + rng.normal(0, 0.1, n), 0, 1)
    df["s_old"] = np.clip(0.5 + np.where(df["old"] == 1, 0.2, -0.2) + rng.normal(0, 0.1, n), 0, 1)
    df["value"] = rng.lognormal(3, 0.5, n)
    df["v_new"] = df["value"] + rng.normal(0, np.where(df["region"] == "S", 6, 3), n)
    df["v_old"] = df["value"] + rng.normal(0, 3, n)
    df["copy"] = df["new"]
    df["stray"] = np.where(df.index % 4 == 0, 2, df["new"])  # 2 is not a label of the target
    path = tmp_path_factory.mktemp("cmp") / "models.csv"
    df.to_csv(path, index=False)
    return path, df


def test_columns_values_and_empty_cells(data, tmp_path):
    path, df = data
    out = tmp_path / "cmp.csv"
    code = main(["compare", str(path), "--target", "label", "--prediction", "new", "--reference", "old",
                 "--positive", "1", "--metric", "error,fpr,fnr", "--attributes", "region,plan",
                 "--min-support", "0.02", "--output", str(out)])
    assert code == 0
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(f.columns) == compare_columns(["error", "fpr", "fnr"])
    assert f["itemset"].iloc[0] != f["itemset"].iloc[0] or f["itemset"].iloc[0] == ""  # whole dataset first, empty
    assert f["length"].iloc[0] == 0 and f["count"].iloc[0] == len(df)
    py = compare(df, target="label", prediction="new", reference="old", positive=1, metrics=["error", "fpr", "fnr"],
                 attributes=["region", "plan"], min_support=0.02).frame
    for col in f.columns[1:]:
        if f[col].dtype.kind == "f":  # full precision: the CSV round-trips to the Python floats
            np.testing.assert_array_equal(f[col].to_numpy(), py[col].to_numpy(dtype=float))
        elif col.endswith("_explained_by"):  # text, empty when none (an empty cell)
            assert (f[col].fillna("").astype(str) == py[col].astype(str)).all(), col
        else:
            assert (f[col].astype(str) == py[col].astype(str)).all(), col
    # FPR is undefined in 'plan=vip' (positives only): empty cells, as in scan
    import csv

    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))
    cells = dict(zip(rows[0], next(r for r in rows if r[0] == "plan=vip")))
    for col in ("fpr", "fpr_reference", "fpr_change", "fpr_change_ci_low", "fpr_change_ci_high",
                "fpr_change_p", "fpr_change_q"):
        assert cells[col] == "", col
    assert cells["fpr_verdict"] == "too small"
    row = f.set_index(f["itemset"].fillna(""))
    assert row.loc["region=S", "error_verdict"] == "worse"


def test_regression_and_scores(data, tmp_path):
    path, df = data
    out = tmp_path / "reg.csv"
    assert main(["compare", str(path), "--regression", "--target", "value", "--prediction", "v_new", "--reference",
                 "v_old", "--metric", "abs_error,squared_error", "--attributes", "region,plan", "--min-support",
                 "0.05", "--output", str(out)]) == 0
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(f.columns) == compare_columns(["abs_error", "squared_error"])
    want = (np.abs(df["v_new"] - df["value"]) - np.abs(df["v_old"] - df["value"]))[df["region"] == "S"].mean()
    s = f[f["itemset"] == "region=S"].iloc[0]
    assert s["abs_error_change"] == pytest.approx(want, rel=1e-12)
    assert s["abs_error_verdict"] == "worse"
    out2 = tmp_path / "score.csv"
    assert main(["compare", str(path), "--target", "label", "--positive", "1", "--score", "s_new", "--threshold",
                 "0.5", "--reference-score", "s_old", "--reference-threshold", "0.5", "--metric", "error,brier",
                 "--attributes", "region,plan", "--min-support", "0.05", "--output", str(out2)]) == 0
    g = pd.read_csv(out2, keep_default_na=False, na_values=[""])
    assert list(g.columns) == compare_columns(["error", "brier"])
    labels_new = (df["s_new"] >= 0.5).astype(int)
    labels_old = (df["s_old"] >= 0.5).astype(int)
    assert g["error_change"].iloc[0] == pytest.approx(((labels_new != df["label"]).mean()
                                                       - (labels_old != df["label"]).mean()), abs=1e-15)


def test_summary_without_output(data, capsys):
    path, _ = data
    assert main(["compare", str(path), "--target", "label", "--prediction", "new", "--reference", "old",
                 "--positive", "1", "--metric", "error", "--attributes", "region,plan", "--min-support", "0.05",
                 "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "error (error rate; up is worse)" in out and "region=S" in out and "worse" in out


@pytest.mark.parametrize("args, message", [
    (["--reference", "missing"], "Reference column 'missing' is not in the data."),
    (["--reference", "stray"], "Reference column 'stray' holds 2, which is not a value of target column 'label'"),
    (["--reference", "copy"], "gives the same error as prediction column 'new' on every row"),
    (["--reference", "new"], "The reference is the model itself"),
    (["--reference", "old", "--metric", "precision"], "predicted positives"),
    (["--reference", "old", "--min-support", "2.5"], "min_support above 1 is a row count and must be a whole number"),
    ([], "compare needs the reference model"),
])
def test_bad_input_exit_2_one_line_no_file(data, tmp_path, capsys, args, message):
    path, _ = data
    out = tmp_path / "never.csv"
    base = ["compare", str(path), "--target", "label", "--prediction", "new", "--positive", "1",
            "--attributes", "region,plan", "--output", str(out)]
    if not any(a == "--metric" for a in args):
        base += ["--metric", "error"]
    assert main(base + args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not out.exists()


def test_bad_input_from_a_new_process(data, tmp_path):
    path, _ = data
    out = tmp_path / "never.csv"
    r = run("compare", str(path), "--target", "label", "--prediction", "new", "--reference", "missing",
            "--positive", "1", "--output", str(out))
    assert r.returncode == 2 and r.stderr.strip() == "divergence: error: Reference column 'missing' is not in the data."
    assert not out.exists()

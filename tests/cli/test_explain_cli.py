"""``python -m divergence explain`` and ``scan --prune``: printed tables, CSV columns and
values equal to the Python API, one-line errors with exit status 2."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, data_file

from divergence import global_divergence, item_contributions, prune_redundant, scan
from divergence.cli.cli import main
from divergence.data.datasets import load_demo

ROLES = ["--target", "defaulted", "--prediction", "predicted_default", "--positive", "yes",
         "--attributes", "sex,region,education,employment", "--min-support", "0.02"]
PY_ROLES = dict(target="defaulted", prediction="predicted_default", positive="yes",
                attributes=["sex", "region", "education", "employment"], min_support=0.02)


@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "demo.csv"
    load_demo(3000).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def demo_table(demo_csv):
    return scan(pd.read_csv(demo_csv), metrics=["fpr", "fnr"], **PY_ROLES)


def slice_of_length(table, k: int) -> str:
    """A slice of k items with a defined FPR (the largest FPR divergence among them)."""
    f = table.frame
    f = f[(f["length"] == k) & f["fpr_divergence"].notna()]
    return f.sort_values("fpr_divergence", ascending=False)["itemset"].iloc[0]


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def test_explain_writes_contributions(demo_csv, demo_table, tmp_path):
    itemset = slice_of_length(demo_table, 3)
    out = tmp_path / "c.csv"
    assert main(["explain", str(demo_csv), *ROLES, "--metric", "fpr", "--itemset", itemset,
                 "--output", str(out)]) == 0
    f = read(out)
    assert list(f.columns) == ["item", "contribution"]
    want = item_contributions(demo_table, itemset, metric="fpr")
    np.testing.assert_array_equal(f["item"], want["item"])
    np.testing.assert_array_equal(f["contribution"], want["contribution"])  # full precision
    assert f["contribution"].sum() == pytest.approx(demo_table.row(itemset)["fpr_divergence"], abs=1e-12)


def test_explain_with_bootstrap_intervals(demo_csv, demo_table, tmp_path):
    itemset = slice_of_length(demo_table, 2)
    out = tmp_path / "b.csv"
    assert main(["explain", str(demo_csv), *ROLES, "--metric", "fpr", "--itemset", itemset,
                 "--bootstrap", "60", "--seed", "4", "--output", str(out)]) == 0
    f = read(out)
    assert list(f.columns) == ["item", "contribution", "contribution_low", "contribution_high"]
    want = item_contributions(demo_table, itemset, metric="fpr", n_boot=60, seed=4)
    np.testing.assert_allclose(f[["contribution_low", "contribution_high"]],
                               want[["contribution_low", "contribution_high"]], rtol=1e-15)


def test_explain_global(demo_csv, demo_table, tmp_path):
    out = tmp_path / "g.csv"
    assert main(["explain", str(demo_csv), *ROLES, "--metric", "fnr", "--global", "--output", str(out)]) == 0
    f = read(out)
    assert list(f.columns) == ["item", "global", "individual"]
    want = global_divergence(demo_table, metric="fnr")
    np.testing.assert_array_equal(f["item"], want["item"])
    np.testing.assert_array_equal(f["global"], want["global"])
    np.testing.assert_array_equal(f["individual"], want["individual"])


def test_explain_prints_a_table(demo_csv, demo_table):
    itemset = slice_of_length(demo_table, 2)
    r = subprocess.run([sys.executable, "-m", "divergence", "explain", str(demo_csv), *ROLES, "--metric", "fpr",
                        "--itemset", itemset], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    head, columns, *rows = r.stdout.strip().splitlines()
    div = demo_table.row(itemset)["fpr_divergence"]
    assert head.startswith(demo_table.row(itemset)["itemset"]) and f"{div:+.4f}" in head
    assert columns.split() == ["item", "contribution"] and len(rows) == 2


@pytest.mark.parametrize("args, message", [
    (["--metric", "fpr"], 'explain needs either --itemset "attr=value, ..." or --global.'),
    (["--metric", "fpr", "--itemset", "sex=Female", "--global"], "explain needs either"),
    (["--metric", "fpr", "--global", "--bootstrap", "10"], "--bootstrap gives intervals on one slice"),
    (["--metric", "fpr", "--itemset", "planet=Mars"], "Item 'planet=Mars' does not start with a known attribute"),
    (["--metric", "fpr", "--itemset", "sex=Q"], "'Q' is not an item of 'sex'"),
    (["--metric", "fpr", "--itemset", "sex=Female", "--bootstrap", "-3"], "n_boot must be a non-negative integer"),
])
def test_explain_bad_input_is_one_line_and_status_2(demo_csv, args, message):
    r = subprocess.run([sys.executable, "-m", "divergence", "explain", str(demo_csv), *ROLES, *args],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("divergence: error: ") and message in lines[0]


def test_scan_prune_and_min_t(demo_csv, demo_table, tmp_path):
    out = tmp_path / "p.csv"
    assert main(["scan", str(demo_csv), *ROLES, "--metric", "fpr,fnr", "--prune", "0.01", "--min-t", "1.5",
                 "--output", str(out)]) == 0
    f = read(out)
    want = prune_redundant(demo_table, 0.01, min_t=1.5)
    assert 1 < len(f) < len(demo_table)
    assert list(f["itemset"].fillna("")) == list(want["itemset"])
    # without --output: per metric, the first slices of the pruned table in the default order
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(demo_csv), *ROLES, "--metric", "fpr",
                        "--prune", "0.01", "--top", "3"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fpr_table = scan(pd.read_csv(demo_csv), metrics=["fpr"], **PY_ROLES)
    top = prune_redundant(fpr_table, 0.01, metric="fpr").sort_values("fpr_order").query("length > 0").head(3)
    printed = r.stdout.splitlines()
    for itemset in top["itemset"]:
        assert any(line.strip().startswith(itemset) for line in printed)


def test_scan_prune_rejects_a_negative_threshold(demo_csv):
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(demo_csv), *ROLES, "--prune", "-0.1",
                        "--output", "/tmp/never-written.csv"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "redundancy threshold must be >= 0" in r.stderr


def test_compas_explain_from_the_command_line(tmp_path):
    path = data_file("compas_discretized.csv")
    out = tmp_path / "c.csv"
    r = subprocess.run([sys.executable, "-m", "divergence", "explain", str(path), "--target", "class",
                        "--prediction", "predicted", "--positive", "1", "--metric", "fpr",
                        "--min-support", "0.0175", "--itemset", "age=<25, #prior=>3, sex=Male",
                        "--output", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    f = read(out).set_index("item")["contribution"]
    assert list(f.index) == ["#prior=>3", "age=<25", "sex=Male"]
    assert f.sum() == pytest.approx(15 / 22 - 297 / 3363, abs=1e-15)
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", "class",
                        "--prediction", "predicted", "--positive", "1", "--metric", "fnr",
                        "--min-support", "0.0175", "--prune", "0.01", "--top", "3"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # the first three of the pruned table in the default order (distinct findings first), in that order
    table = scan(pd.read_csv(path), target="class", prediction="predicted", positive=1, metrics=["fnr"],
                 min_support=0.0175)
    want = prune_redundant(table, 0.01, metric="fnr").sort_values("fnr_order").query("length > 0").head(3)
    lines = r.stdout.splitlines()
    at = [next(i for i, line in enumerate(lines) if line.strip() == s) for s in want["itemset"]]
    assert at == sorted(at) and bool(want["fnr_finding"].iloc[0])

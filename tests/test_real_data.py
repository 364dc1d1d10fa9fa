"""Published results on COMPAS and Adult (../shared/data), reproduced to the paper's rounding."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, data_file

from divergence import scan

ROLES = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])


def test_compas_paper_figures(compas):
    t = scan(compas, min_support=0.0175, exhaustive=True, **ROLES)
    assert len(t) - 1 == 701
    assert round(t.overall("fpr"), 2) == 0.09 and round(t.overall("fnr"), 2) == 0.70
    assert t.overall("fpr") == pytest.approx(297 / 3363) and t.overall("fnr") == pytest.approx(1962 / 2809)
    top = t.top(1, metric="fpr", by="fpr_divergence").iloc[0]  # the paper's table: by divergence
    assert top["itemset"] == t.frame.iloc[t.lookup("age=<25, #prior=>3, sex=Male")]["itemset"]
    assert round(top["support"], 2) == 0.02 and top["count"] == 120 and top["fpr_count"] == 22
    assert round(top["fpr_divergence"], 3) == 0.594 and round(top["fpr_t"], 1) == 6.1
    assert top["fpr_divergence"] == pytest.approx(15 / 22 - 297 / 3363)
    row = t.row("age=>45, charge=M, race=Cauc")
    assert round(row["support"], 2) == 0.05 and row["count"] == 303
    assert round(row["fnr_divergence"], 3) == 0.302 and round(row["fnr_t"], 1) == 17.6
    # all top FNR slices have FNR 1.0; this one is the best supported among those of highest t
    best = t.top(1, metric="fnr", by="fnr_t").iloc[0]
    assert best["itemset"] == "age=>45, charge=M, race=Cauc"
    for s, want in [("age=>45, charge=M, #prior=0", 10.44), ("age=>45, charge=M, #prior=[1,3]", 14.06)]:
        assert round(t.row(s)["fnr_t"], 2) == want


def test_compas_from_the_command_line(tmp_path):
    path = data_file("compas_discretized.csv")
    out = tmp_path / "slices.csv"
    r = subprocess.run([sys.executable, "-m", "divergence", "scan", str(path), "--target", "class",
                        "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr",
                        "--min-support", "0.0175", "--exhaustive", "--output", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert len(f) == 702
    row = f[f["itemset"] == "age=<25, sex=Male, #prior=>3"].iloc[0]
    assert round(row["fpr_divergence"], 3) == 0.594 and round(row["fpr_t"], 2) == 6.12
    row = f[f["itemset"] == "age=>45, charge=M, race=Cauc"].iloc[0]
    assert round(row["fnr_divergence"], 3) == 0.302 and round(row["fnr_t"], 2) == 17.57
    # the whole dataset: an empty itemset and an empty (undefined) p cell
    assert f.loc[0, "length"] == 0 and pd.isna(f.loc[0, "itemset"]) and np.isnan(f.loc[0, "fpr_p"])
    first = out.read_text().splitlines()[1].split(",")
    assert first[0] in ("", '""') and first[list(f.columns).index("fpr_p")] == ""


@pytest.mark.parametrize("support", [0.1, 0.01])
def test_compas_engines_and_mlxtend_agree(compas, support):
    fast = scan(compas, min_support=support, exhaustive=True, **ROLES).frame.set_index("itemset").sort_index()
    ref = scan(compas, min_support=support, engine="mlxtend", exhaustive=True, **ROLES).frame.set_index("itemset").sort_index()
    pd.testing.assert_frame_equal(fast, ref, check_exact=False, rtol=1e-12)
    # and the plain mlxtend call on pandas' one-hot table, independent of our code
    from mlxtend.frequent_patterns import fpgrowth

    attrs = ["age", "charge", "race", "sex", "#prior", "stay"]
    onehot = pd.get_dummies(compas[attrs].astype(str), prefix_sep="=").astype(bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fpgrowth(onehot, min_support=support, use_colnames=True)
    want = {frozenset(s): v for s, v in zip(r["itemsets"], r["support"])}
    got = {frozenset(s.split(", ")): v for s, v in zip(fast.index[1:], fast["support"].iloc[1:])}
    assert got == want


def test_compas_tallies_equal_boolean_masks(compas):
    t = scan(compas, min_support=0.01, exhaustive=True, **ROLES)
    f = t.frame
    rng = np.random.default_rng(0)
    fp = (compas["class"] == 0)
    for i in rng.choice(np.arange(1, len(f)), 60, replace=False):
        mask = np.ones(len(compas), dtype=bool)
        for item in f.loc[i, "itemset"].split(", "):
            a, v = item.split("=", 1)
            mask &= (compas[a].astype(str) == v).to_numpy()
        assert f.loc[i, "count"] == mask.sum()
        neg = mask & fp.to_numpy()
        assert f.loc[i, "fpr_count"] == neg.sum()
        if neg.any():
            assert f.loc[i, "fpr"] == (compas["predicted"][neg] == 1).mean()


def test_adult_fast_equals_mlxtend(adult):
    fast = scan(adult, min_support=0.05, exhaustive=True, **ROLES).frame.set_index("itemset").sort_index()
    ref = scan(adult, min_support=0.05, engine="mlxtend", exhaustive=True, **ROLES).frame.set_index("itemset").sort_index()
    assert len(fast) == len(ref) > 1000
    pd.testing.assert_frame_equal(fast, ref, check_exact=False, rtol=1e-12)


def test_adult_itemset_count_at_half_a_percent(adult):
    t = scan(adult, min_support=0.005, exhaustive=True, **ROLES)
    assert len(t) == 65_410  # as DivExplorer 0.2.6 reports, the empty itemset included


def test_law_school_numeric_binning(tmp_path):
    law = pd.read_csv(data_file("law_data.csv"))
    t = scan(law, outcome="ZFYA", bins={"LSAT": [33, 41]}, min_support=0.01)
    assert "Unnamed: 0" not in t.attributes
    assert t.bins[t.attributes.index("LSAT")].labels == ("<=33", "(33,41]", ">41")
    row = t.row("LSAT=>41")
    assert row["count"] == (law["LSAT"] > 41).sum()
    assert row["ZFYA"] == pytest.approx(law.loc[law["LSAT"] > 41, "ZFYA"].mean(), rel=1e-12)

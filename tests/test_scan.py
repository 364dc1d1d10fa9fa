"""The public scan() API: the result table, lookups and bad input."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from divergence import DivergenceInputError, SliceTable, scan


@pytest.fixture
def small() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 400
    return pd.DataFrame({
        "zeta": rng.choice(["a", "b"], n),
        "alpha": rng.choice(["p", "q", "r"], n),
        "num": rng.normal(size=n),
        "y": rng.integers(0, 2, n),
        "pred": rng.integers(0, 2, n),
    })


def test_result_table_shape_and_whole_dataset_row(small):
    t = scan(small, target="y", prediction="pred", positive=1, metrics="fpr,fnr", min_support=0.05)
    assert isinstance(t, SliceTable)
    f = t.frame
    assert list(f.columns[:4]) == ["itemset", "length", "support", "count"]
    for m in ("fpr", "fnr"):
        cols = [c for c in f.columns if c.startswith(m)]
        assert cols[:5] == [m, f"{m}_count", f"{m}_divergence", f"{m}_t", f"{m}_p"]
        assert {f"{m}_ci_low", f"{m}_ci_high", f"{m}_q", f"{m}_meets_min_size", f"{m}_verdict"} <= set(cols)
    assert f.iloc[0]["itemset"] == "" and f.iloc[0]["length"] == 0 and f.iloc[0]["support"] == 1.0
    neg = small["y"] == 0
    assert t.overall("fpr") == pytest.approx((small["pred"][neg] == 1).mean())
    assert (f["support"] >= 0.05).all()
    assert (f["count"] == np.rint(f["support"] * len(small))).all()


def test_itemset_strings_follow_input_column_order(small):
    t = scan(small, outcome="num", attributes=["zeta", "alpha"], min_support=0.01)
    two = t.frame[t.frame["length"] == 2]["itemset"]
    assert all(s.startswith("zeta=") and ", alpha=" in s for s in two)


def test_lookup_any_item_order_and_values_match_a_mask(small):
    t = scan(small, outcome="num", attributes=["zeta", "alpha"], min_support=0.01)
    i = t.lookup("alpha=q, zeta=b")
    assert t.frame.iloc[i]["itemset"] == "zeta=b, alpha=q"
    mask = (small["zeta"] == "b") & (small["alpha"] == "q")
    assert t.frame.iloc[i]["count"] == mask.sum()
    assert t.frame.iloc[i]["num"] == pytest.approx(small.loc[mask, "num"].mean(), rel=1e-12)
    assert t.lookup([]) == 0
    with pytest.raises(DivergenceInputError, match="'s' is not an item of 'alpha'"):
        t.lookup("alpha=s")


def test_lookup_of_unmined_itemset_says_why(small):
    t = scan(small, outcome="num", attributes=["zeta", "alpha"], min_support=0.3)
    with pytest.raises(DivergenceInputError, match="was not mined: its support is below 0.3"):
        t.lookup("zeta=a, alpha=p")


def test_index_of_is_vectorized_and_exact(small):
    t = scan(small, outcome="num", min_support=0.01)
    idx = t.index_of(t.codes)
    np.testing.assert_array_equal(idx, np.arange(len(t)))


def test_numeric_attributes_are_binned_and_named(small):
    t = scan(small, outcome="y", attributes=["num"], bins={"num": [-1, 0, 1]}, min_support=0.01)
    assert list(t.frame["itemset"][1:]) == ["num=<=-1", "num=(-1,0]", "num=(0,1]", "num=>1"]


def test_engines_agree_on_the_result_table(small):
    a = scan(small, target="y", prediction="pred", positive=1, min_support=0.02).frame
    b = scan(small, target="y", prediction="pred", positive=1, min_support=0.02, engine="mlxtend").frame
    pd.testing.assert_frame_equal(a.set_index("itemset").sort_index(), b.set_index("itemset").sort_index(),
                                  check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(min_support=0), r"min_support must be a share of the rows in \(0, 1\] or a row count above 1; got 0"),
    (dict(min_support=1.5), r"min_support above 1 is a row count and must be a whole number; got 1.5"),
    (dict(min_support=-3), r"min_support must be a share of the rows in \(0, 1\] or a row count above 1; got -3"),
    (dict(min_support="x"), r"min_support must be a number"),
    (dict(attributes=["nope"]), "Attribute column 'nope' is not in the data"),
    (dict(attributes=["num", "num"]), "attributes names column 'num' twice"),
    (dict(attributes=["y"]), "Column 'y' is used as an outcome role"),
    (dict(attributes=[]), "no attribute column"),
    (dict(max_length=0), "max_length must be a positive integer"),
    (dict(engine="spark9"), "Unknown engine 'spark9'"),
])
def test_bad_parameters(small, kwargs, message):
    args = dict(target="y", prediction="pred", positive=1)
    args.update(kwargs)
    with pytest.raises(DivergenceInputError, match=message):
        scan(small, **args)


def test_empty_and_non_frames():
    with pytest.raises(DivergenceInputError, match="The table is empty"):
        scan(pd.DataFrame({"a": [], "o": []}), outcome="o")
    with pytest.raises(DivergenceInputError, match="Expected a pandas DataFrame; got list"):
        scan([1, 2], outcome="o")


def test_input_frame_is_not_modified(small):
    before = small.copy()
    scan(small, target="y", prediction="pred", positive=1, min_support=0.05)
    pd.testing.assert_frame_equal(small, before)


def test_importing_the_engine_never_imports_streamlit():
    code = "import sys, divergence, divergence.cli.cli; assert 'streamlit' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_mine_table_then_measure_equals_scan_on_rows():
    """The seam for engines that group rows elsewhere: distinct rows plus tallies suffice."""
    from divergence import assess, discretize
    from divergence.data.datasets import DEMO_ATTRIBUTES, load_demo
    from divergence.mining.mined import mine_table
    from divergence.mining.mining import compress
    from divergence.prepare.outcomes import build_outcomes
    from divergence.prepare.row_weights import outcome_weights
    from divergence.stats.tabulate import measure

    df = load_demo(4000)
    roles = dict(target="defaulted", prediction="predicted_default", positive="yes", metrics=["fpr", "error"])
    full = scan(df, attributes=DEMO_ATTRIBUTES, min_support=0.02, **roles)
    disc = discretize(df, DEMO_ATTRIBUTES)
    cols, infos = outcome_weights(build_outcomes(df, **roles))
    comp = compress(disc.codes, np.column_stack(cols))
    assert len(comp.codes) < len(df)
    table = assess(measure(mine_table(comp.codes, comp.weights, bins=disc.bins, metrics=infos, n_rows=len(df),
                                      min_support=0.02)))
    a, b = full.frame, table.frame
    for col in ("itemset", "count", "fpr", "fpr_p", "fpr_q", "fpr_ci_low", "error_baseline"):
        if not pd.api.types.is_numeric_dtype(a[col]):
            assert list(a[col]) == list(b[col])
        else:
            np.testing.assert_allclose(a[col], b[col], rtol=1e-12)
    # a 0/1 target's lift is over the best model-free reference, which needs the rows: without
    # them it is the constant's, on the error's own scale (what the tallies give)
    np.testing.assert_allclose(b["error_lift"], b["error_baseline"] - b["error"], rtol=1e-12)
    assert np.isnan(b["error_columns_reference"]).all() and not np.isnan(a["error_columns_reference"][1:]).all()
    assert table.kept_rows is None and table.assessment.intervals == "analytic"


def test_ready_made_outcomes_with_a_replication_table_say_what_to_do():
    """Ready-made outcomes have values for the scanned rows only: replicating them ends with a
    line saying so (it said 'Classification metrics need a target column'); with the roles, a
    replication table works."""
    from divergence.prepare.outcomes import build_outcomes

    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 2, n), "y": rng.integers(0, 2, n),
                       "p": rng.integers(0, 2, n)})
    ready = build_outcomes(df, target="y", prediction="p", positive=1, metrics=["fpr"])
    with pytest.raises(DivergenceInputError, match="metric 'fpr' was given as a ready-made outcome"):
        scan(df[["a", "b"]], outcomes=ready, replicate=df, min_support=0.1)
    table = scan(df[["a", "b", "y", "p"]], target="y", prediction="p", positive=1, metrics=["fpr"],
                 min_support=0.1, replicate=df.sample(frac=1.0, random_state=1))
    assert "fpr_replicated_divergence" in table.frame.columns

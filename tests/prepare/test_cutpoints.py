"""Tree binning: cut points where the outcome changes, chosen on rows set aside, every statistic
measured on the others (divergence/prepare/cutpoints.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sim_tree import ROLES, generate, judge

from divergence import DivergenceInputError, scan
from divergence.cli.cli import main
from divergence.prepare.cutpoints import cut_mask, tree_edges


def test_a_step_is_cut_where_it_is_and_noise_is_not():
    rng = np.random.default_rng(0)
    x = rng.random(4000)
    y = (rng.random(4000) < np.where((x > 0.3) & (x <= 0.5), 0.5, 0.1)).astype(float)
    edges = tree_edges(x, [y], min_bin=200)
    assert len(edges) == 2 and abs(edges[0] - 0.3) < 0.03 and abs(edges[1] - 0.5) < 0.03
    assert tree_edges(rng.random(4000), [(rng.random(4000) < 0.2).astype(float)], min_bin=200).size == 0
    # every bin holds the minimum, and the bins are at most max_bins
    steps = (x * 10).astype(int).astype(float)
    e = tree_edges(x, [steps + rng.normal(0, 0.1, 4000)], max_bins=4, min_bin=900)
    counts = np.diff(np.r_[0, np.searchsorted(np.sort(x), e, side="right"), 4000])
    assert len(e) <= 3 and counts.min() >= 900
    # a real outcome, undefined rows (NaN) ignored, a missing x ignored
    y2 = np.where(x > 0.7, 3.0, 1.0) + rng.normal(0, 1, 4000)
    y2[::7] = np.nan
    x2 = x.copy()
    x2[::11] = np.nan
    assert np.any(np.abs(tree_edges(x2, [y2], min_bin=200) - 0.7) < 0.03)


def test_the_table_is_measured_on_the_rows_that_did_not_choose_the_cuts():
    df = generate(1, 6000)
    t = scan(df, **ROLES, binning="tree", min_support=0.02, seed=3)
    cut = cut_mask(len(df), 3)
    rest = df[~cut.mask]
    assert t.n_rows == cut.n_rest == len(rest) and t.frame["count"].iloc[0] == len(rest)
    assert np.array_equal(t.kept_rows.positions, np.nonzero(~cut.mask)[0])
    neg = rest[rest["y"] == 0]
    assert t.overall("fpr") == pytest.approx(neg["p"].mean(), rel=1e-12)
    xb = t.bins[t.attributes.index("x")]
    assert xb.kind == "tree" and len(xb.edges) >= 2
    # a slice's numbers are the rest's rows, cut at the tree's edges
    item = f"x={xb.labels[1]}"
    lo, hi = xb.edges[0], xb.edges[1]
    inside = neg[(neg["x"] > lo) & (neg["x"] <= hi)]
    assert t.row(item)["fpr"] == pytest.approx(inside["p"].mean(), rel=1e-12)
    note = next(n for n in t.notes if n.startswith("Tree binning"))
    assert f"on {cut.n_cut:,} of the 6,000 rows" in note and f"other {cut.n_rest:,} rows" in note
    # the same seed, the same cuts and table; a column without an effect gets no cut
    again = scan(df, **ROLES, binning="tree", min_support=0.02, seed=3)
    pd.testing.assert_frame_equal(t.frame, again.frame)
    assert t.bins[t.attributes.index("z")].labels == ("all",)


def test_tree_with_holdout_replication_and_plan(tmp_path):
    from divergence import Settings, SlicePlan

    df = generate(2, 8000)
    t = scan(df, **ROLES, binning="tree", min_support=0.02, holdout=0.3)
    assert t.n_rows < 8000 * 0.7 and "fpr_replicated" in t.frame.columns
    assert len(t.kept_rows.positions) == t.n_rows and t.kept_rows.positions.max() < 8000
    s = Settings.from_keywords(**ROLES, binning="tree", min_support=0.02)
    assert SlicePlan.from_settings(s).settings.slicing.binning == "tree"
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "s.csv"
    assert main(["scan", str(path), "--target", "y", "--prediction", "p", "--positive", "1", "--metric", "fpr",
                 "--binning", "tree", "--min-support", "0.02", "--output", str(out)]) == 0
    f = pd.read_csv(out)
    assert f["count"].iloc[0] < 8000 and f["itemset"].str.startswith("x=(0.4").any()
    with pytest.raises(DivergenceInputError, match="Tree binning needs rows"):
        scan(df.head(30), **ROLES, binning="tree")


@pytest.mark.slow
def test_a_planted_band_is_found_and_noise_is_not():
    """A few seeded runs of benchmarks/validation/sim_tree.py (docs/method-record.md's table has 200)."""
    planted = [judge(scan(generate(s, 10_000), **ROLES, binning="tree", min_support=0.02)) for s in range(6)]
    assert all(r["near"] and r["band_significant"] and r["top_in_band"] for r in planted)
    assert sum(r["null_alarm"] for r in planted) <= 1
    null = [judge(scan(generate(s, 10_000, planted=False), **ROLES, binning="tree", min_support=0.02))
            for s in range(6)]
    assert sum(r["any_alarm"] for r in null) <= 1


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_where_the_data_lies_the_cuts_are_chosen_once_and_the_rest_measured(engine, tmp_path):
    """DuckDB and Spark fetch the cut rows once (a hash of each row's values picks them), cut there,
    and group the others: the table is scan() of those other rows at the same cut points."""
    df = generate(4, 6000)
    path = tmp_path / "band.parquet"
    df.to_parquet(path)
    if engine == "duckdb":
        import duckdb

        from divergence import scan_duckdb

        t = scan_duckdb(str(path), **ROLES, binning="tree", min_support=0.02)
        from divergence.engines.sql import Column, Dialect

        frac = Dialect("duckdb").row_fraction([Column(c, "DOUBLE", "float") for c in df.columns], 0)
        con = duckdb.connect()
        u = con.execute(f"SELECT {frac} FROM read_parquet('{path}')").fetchnumpy()
        u = np.asarray(list(u.values())[0], dtype=float)
    else:
        pytest.importorskip("pyspark")
        from divergence import scan_spark
        from divergence.engines.spark_engine import read_spark

        try:
            spark_df = read_spark(str(path), master="local[1]")
        except Exception as exc:  # pragma: no cover - no Java here
            pytest.skip(f"Spark cannot start: {exc}")
        t = scan_spark(spark_df, **ROLES, binning="tree", min_support=0.02)
        from divergence.engines.sql import Column, Dialect

        frac = Dialect("spark").row_fraction([Column(c, "DOUBLE", "float") for c in df.columns], 0)
        rows = spark_df.selectExpr(f"{frac} AS u").collect()
        u = np.array([r["u"] for r in rows], dtype=float)
    from divergence.prepare.cutpoints import cut_fraction

    rest = df[u >= cut_fraction(len(df))].reset_index(drop=True)
    assert t.n_rows == len(rest) and next(n for n in t.notes if n.startswith("Tree binning"))
    edges = {b.name: list(b.edges) for b in t.bins if b.kind == "tree"}
    assert len(edges["x"]) >= 2
    want = scan(rest, **ROLES, min_support=0.02, attributes=list(t.attributes),
                bins={k: v for k, v in edges.items() if v})
    got = t.frame.set_index("itemset")
    ref = want.frame.set_index("itemset").loc[got.index]
    for col in ("count", "fpr", "fpr_count", "fpr_p"):
        np.testing.assert_allclose(got[col].to_numpy(float), ref[col].to_numpy(float), rtol=1e-9)


def test_fewer_quantile_bins_than_asked_are_said(tmp_path, capsys):
    """Tied quantile edges (a fare of 7.25 on most rows) make fewer bins: the note names the value."""
    from divergence import discretize

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"fare": np.where(rng.random(900) < 0.7, 7.25, rng.lognormal(3, 1, 900)),
                       "o": rng.normal(size=900)})
    d = discretize(df, ["fare"])
    assert len(d.bins[0].labels) == 2
    assert d.notes == (f"'fare': 3 quantile bins asked, 2 made (tied values share an edge): "
                       f"{', '.join(d.bins[0].labels)}; the quantile edges fall on 7.25, held by "
                       f"{np.mean(df['fare'] == 7.25):.0%} of its rows. Give edges (bins) or fewer bins to choose.",)
    path = tmp_path / "f.csv"
    df.to_csv(path, index=False)
    assert main(["scan", str(path), "--outcome", "o", "--attributes", "fare", "--output", str(tmp_path / "o.csv")]) == 0
    assert "note: 'fare': 3 quantile bins asked, 2 made" in capsys.readouterr().err

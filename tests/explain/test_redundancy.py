"""Each distinct set of rows once (the default), against brute force; every exhaustive itemset
maps to a listed slice with identical tallies; everything downstream works on such a table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import data_file, itemset_masks, random_shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from divergence import (
    corrective_items,
    global_divergence,
    item_contributions,
    prune_redundant,
    scan,
    scan_duckdb,
    shapley_matrix,
)
from divergence.mining.mining import mine
from divergence.present.figures import lattice_figure
from divergence.settings import min_count_for


def row_sets(codes: np.ndarray, n_values, min_count: int, max_length: int | None) -> dict:
    """Brute force: every itemset above the support (up to max_length items), grouped by its rows."""
    out: dict = {}
    for key, mask in itemset_masks(codes, n_values, min_count, max_length, shortest=0):
        out.setdefault(mask.tobytes(), []).append(key)
    return out


def shortest_first(itemset: tuple) -> tuple:
    """The rule for the listed description: fewest items, then the first in attribute order."""
    return (sum(v >= 0 for v in itemset), [v if v >= 0 else 10**6 for v in itemset])


@st.composite
def redundant_tables(draw):
    """Random codes plus columns that repeat rows: a copy, a coarsening and a 'missing' marker."""
    n, n_attr, rng = random_shape(draw, 60, 4)
    n_values = [draw(st.integers(1, 4)) for _ in range(n_attr)]
    cols = [rng.integers(0, k, n) for k in n_values]
    if draw(st.booleans()):
        j = draw(st.integers(0, n_attr - 1))
        cols.append(cols[j].copy())
        n_values.append(n_values[j])
    if draw(st.booleans()):
        j = draw(st.integers(0, n_attr - 1))
        cols.append((cols[j] > 0).astype(int))
        n_values.append(2)
    codes = np.column_stack(cols).astype(np.int32)
    w = np.column_stack([np.ones(n), rng.normal(size=n), (rng.random(n) < 0.4).astype(float)])
    support = draw(st.sampled_from([0.01, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1.0]))
    max_length = draw(st.one_of(st.none(), st.integers(1, codes.shape[1])))
    return codes, w, np.array(n_values), support, max_length


@pytest.mark.parametrize("engine", ["fast", "mlxtend"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=redundant_tables())
def test_one_row_per_distinct_set_of_rows(engine, case):
    codes, w, n_values, support, max_length = case
    mined = mine(codes, w, n_values, min_support=support, max_length=max_length, engine=engine)
    classes = row_sets(codes, n_values, min_count_for(support, len(codes)), max_length)
    want = {min(members, key=shortest_first) for members in classes.values()}
    got = [tuple(int(v) for v in row) for row in mined.codes]
    assert len(got) == len(set(got)) == len(classes)  # exactly one row per distinct set of rows
    assert set(got) == want  # each by its shortest description
    for row, tallies in zip(got, mined.tallies):
        mask = np.ones(len(codes), dtype=bool)
        for j, v in enumerate(row):
            if v >= 0:
                mask &= codes[:, j] == v
        np.testing.assert_allclose(tallies, w[mask].sum(axis=0), rtol=1e-12, atol=1e-9)
    listed = set(got)
    for row in got:  # every subset of a listed slice is listed (Shapley needs no other)
        for j, v in enumerate(row):
            if v >= 0:
                assert row[:j] + (-1,) + row[j + 1:] in listed


@pytest.fixture(scope="module")
def redundant_frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 3000
    age = rng.integers(18, 80, n)
    df = pd.DataFrame({
        "age": age,
        "age_cat": np.where(age < 25, "<25", np.where(age <= 45, "25-45", ">45")),
        "sex": rng.choice(["F", "M"], n),
        "sex_code": None,
        "region": rng.choice(list("NSEW"), n),
        "jail_in": np.where(rng.random(n) < 0.2, None, "yes"),
    })
    df["sex_code"] = np.where(df["sex"] == "F", 1, 2)
    df["jail_out"] = df["jail_in"]  # missing on the same rows
    df["y"] = (rng.random(n) < 0.3 + 0.2 * (df["region"] == "S")).astype(int)
    df["p"] = (rng.random(n) < 0.25 + 0.3 * (age < 25)).astype(int)
    return df


KW = dict(target="y", prediction="p", positive=1, metrics=["fpr", "fnr"], min_support=0.01,
          attributes=["age", "age_cat", "sex", "sex_code", "region", "jail_in", "jail_out"],
          bins={"age": [24, 45]})


def test_every_exhaustive_itemset_maps_to_a_listed_slice(redundant_frame):
    full = scan(redundant_frame, exhaustive=True, **KW)
    short = scan(redundant_frame, **KW)
    assert len(short) < len(full) / 4  # copies (sex_code, jail_out, age_cat) no longer multiply
    assert not short.exhaustive and full.exhaustive
    for i, itemset in enumerate(full.itemsets):
        j = short.lookup(itemset)
        np.testing.assert_array_equal(full.tallies[i], short.tallies[j])
        assert full.frame["fpr"].iloc[i] == short.frame["fpr"].iloc[j] or np.isnan(short.frame["fpr"].iloc[j])
    # the listed description is the shortest, the first column winning ties
    assert short.frame.iloc[short.lookup("age_cat=<25")]["itemset"] == "age=<=24"
    assert short.frame.iloc[short.lookup("sex_code=2, jail_out=missing")]["itemset"] == "sex=M, jail_in=missing"
    assert set(short.implied_items("age=<=24")) == {"age_cat=<25"}
    assert set(short.implied_items("sex=M, jail_in=missing")) == {"sex_code=2", "jail_out=missing"}
    # distinct sets of rows: no two listed slices share their rows
    keys = {tuple(fp) for fp in short.lattice.slice_fp}
    assert len(keys) == len(short)


def test_explanations_on_the_listed_slices(redundant_frame):
    """Shapley values of a listed slice equal those in the exhaustive table: its subsets are
    listed as themselves. Pruning, corrective items and global values run on the table."""
    full = scan(redundant_frame, exhaustive=True, **KW)
    short = scan(redundant_frame, **KW)
    three = [s for s in short.itemsets if s.count(",") == 2][:20]
    assert three
    for s in three:
        a = item_contributions(short, s, metric="fpr").set_index("item")["contribution"]
        b = item_contributions(full, s, metric="fpr").set_index("item")["contribution"]
        pd.testing.assert_series_equal(a.sort_index(), b.sort_index(), check_exact=False, rtol=1e-12)
    # an equivalent description explains the listed slice
    c = item_contributions(short, "age_cat=<25, sex_code=2", metric="fpr")
    assert c.attrs["itemset"] == "age=<=24, sex=M"
    m = shapley_matrix(short, metric="fpr")
    np.testing.assert_allclose(np.nansum(m, axis=1)[1:], np.nan_to_num(short.frame["fpr_divergence"])[1:],
                               atol=1e-12)
    assert len(prune_redundant(short, 0.01, metric="fpr")) <= len(short)
    assert set(global_divergence(short, metric="fpr")["item"]) == set(short.itemsets[short.lengths == 1])
    corrective_items(short, metric="fpr")
    fig = lattice_figure(short, three[0], metric="fpr")
    assert len(fig.data) > 0


def test_statistics_on_the_listed_slices(redundant_frame):
    """Bootstrap, baselines and replication measure a listed slice as the exhaustive table does."""
    first, second = redundant_frame.iloc[:2000], redundant_frame.iloc[2000:]
    kw = dict(KW, metrics=["fpr", "error"], bootstrap=50, seed=4, replicate=second)
    full = scan(first, exhaustive=True, **kw)
    short = scan(first, **kw)
    for s in short.itemsets[1:40]:
        a, b = short.row(s), full.row(s)
        for col in ("error_baseline", "error_lift", "fpr_replicated_value", "fpr_ci_low", "fpr_p"):
            assert a[col] == pytest.approx(b[col], nan_ok=True, rel=1e-12), (s, col)
    assert short.frame["fpr_boot_low"].notna().sum() > 0


def test_redundant_items_do_not_multiply_the_search():
    """Eight copies of three columns: the exhaustive count grows by a factor of nine per item,
    the default one not at all."""
    rng = np.random.default_rng(2)
    base = pd.DataFrame({c: rng.choice(list("abc"), 600) for c in ("u", "v", "w")})
    wide = base.copy()
    for k in range(8):
        for c in ("u", "v", "w"):
            wide[f"{c}{k}"] = base[c]
    wide["o"] = rng.normal(size=600)
    a = scan(base.assign(o=wide["o"]), outcome="o", min_support=0.01)
    b = scan(wide, outcome="o", min_support=0.01, attributes=[c for c in wide.columns if c != "o"])
    assert len(a) == len(b) == 64  # 1 + 9 + 27 + 27 distinct sets of rows
    assert list(a.frame["itemset"]) == list(b.frame["itemset"])
    c = scan(wide, outcome="o", min_support=0.01, attributes=[c for c in wide.columns if c != "o"],
             max_slices=50_000, exhaustive=True)
    assert c.lattice.complete_length is not None and len(c) > 50 * len(b)


def test_duckdb_lists_the_same_slices(tmp_path, redundant_frame):
    path = tmp_path / "r.parquet"
    redundant_frame.to_parquet(path)
    kw = {k: v for k, v in KW.items()}
    got = scan_duckdb(path, **kw)
    want = scan(redundant_frame, **kw)
    assert list(got.frame["itemset"]) == list(want.frame["itemset"])
    np.testing.assert_array_equal(got.frame["count"], want.frame["count"])
    assert got.row("age_cat=<25")["itemset"] == "age=<=24"


def test_raw_compas_default_and_exhaustive_agree_where_they_overlap():
    df = pd.read_csv(data_file("compas-scores-two-years.csv"))
    kw = dict(target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr"],
              min_support=0.05, max_length=3)
    full = scan(df, exhaustive=True, **kw)
    short = scan(df, **kw)
    assert len(short) < len(full)
    sample = np.random.default_rng(0).choice(len(full), 300, replace=False)
    for i in sample:
        j = short.lookup(full.itemsets[i])
        np.testing.assert_array_equal(full.tallies[i], short.tallies[j])

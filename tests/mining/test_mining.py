"""The miner against brute force and against mlxtend's FP-growth: exact itemsets, supports, tallies."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import brute_force, random_shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from divergence import scan
from divergence.mining.mining import compress, mine
from divergence.settings import min_count_for


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    n_attr = draw(st.integers(1, 4))
    n_values = [draw(st.integers(1, 4)) for _ in range(n_attr)]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, k, n) for k in n_values]).astype(np.int32)
    outcome = rng.normal(size=n)
    outcome[rng.random(n) < 0.2] = np.nan
    binary = (rng.random(n) < 0.4).astype(float)
    binary[rng.random(n) < 0.3] = np.nan
    cols = [np.ones(n)]
    for o in (outcome, binary):
        d = ~np.isnan(o)
        x = np.where(d, o, 0.0)
        cols += [d.astype(float), x, x * x]
    support = draw(st.sampled_from([0.01, 0.05, 0.1, 0.2, 1 / 3, 0.5, 0.9, 1.0]))
    max_length = draw(st.one_of(st.none(), st.integers(1, n_attr)))
    return codes, np.column_stack(cols), np.array(n_values), support, max_length


def _as_dict(mined):
    return {tuple(int(v) for v in row): t for row, t in zip(mined.codes, mined.tallies)}


@pytest.mark.parametrize("engine", ["fast", "mlxtend"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tables())
def test_engines_match_brute_force(engine, case):
    codes, weights, n_values, support, max_length = case
    mined = mine(codes, weights, n_values, min_support=support, max_length=max_length, engine=engine,
                 exhaustive=True)
    got = _as_dict(mined)
    want = brute_force(codes, weights, n_values, min_count_for(support, len(codes)), max_length)
    assert set(got) == set(want)
    for key, tallies in want.items():
        # counts and 0/1 sums are exact; sums of real outcomes agree to rounding
        assert got[key][0] == tallies[0]
        np.testing.assert_allclose(got[key], tallies, rtol=1e-12, atol=1e-9)
    assert len(got) == len(mined.codes)  # no itemset twice


def test_parent_precedes_child_and_is_its_prefix():
    rng = np.random.default_rng(3)
    codes = np.column_stack([rng.integers(0, k, 500) for k in (3, 4, 2, 5)]).astype(np.int32)
    mined = mine(codes, np.ones((500, 1)), np.array([3, 4, 2, 5]), min_support=0.01)
    for i in range(1, len(mined.codes)):
        p = mined.parent[i]
        assert 0 <= p < i
        diff = np.nonzero(mined.codes[i] != mined.codes[p])[0]
        assert len(diff) == 1 and mined.codes[p, diff[0]] == -1
        assert diff[0] > max(np.nonzero(mined.codes[p] >= 0)[0], default=-1)


def test_min_count_is_mlxtends_rule():
    assert min_count_for(0.0175, 6172) == 109  # 108/6172 = 0.017498 < 0.0175
    assert min_count_for(0.1, 10) == 1
    assert min_count_for(1.0, 7) == 7
    for n in range(1, 200):
        for s in (0.01, 0.1, 0.3, 0.7, 1 / 3):
            c = min_count_for(s, n)
            assert c / n >= s and (c == 1 or (c - 1) / n < s or c - 1 < np.ceil(s * n))


def test_compress_merges_identical_rows():
    codes = np.array([[0, 1], [0, 1], [1, 0], [0, 1]], dtype=np.int32)
    w = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 5.0], [1.0, 7.0]])
    comp = compress(codes, w)
    assert comp.codes.tolist() == [[0, 1], [1, 0]]
    assert comp.weights.tolist() == [[3.0, 12.0], [1.0, 5.0]]
    assert comp.inverse.tolist() == [0, 0, 1, 0]


@st.composite
def frames(draw):
    n, n_attr, rng = random_shape(draw, 50, 4)
    data = {f"a{j}": rng.choice(list("xyzw")[: draw(st.integers(1, 4))], n) for j in range(n_attr)}
    data["o"] = rng.normal(size=n)
    support = draw(st.sampled_from([0.02, 0.1, 0.25, 0.5, 1.0]))
    max_len = draw(st.one_of(st.none(), st.integers(1, n_attr)))
    return pd.DataFrame(data), support, max_len


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=frames())
def test_itemsets_and_supports_equal_mlxtend_fpgrowth(case):
    """Independent of our code path: mlxtend's fpgrowth on pandas' one-hot table."""
    from mlxtend.frequent_patterns import fpgrowth

    df, support, max_len = case
    attrs = [c for c in df.columns if c != "o"]
    onehot = pd.get_dummies(df[attrs].astype(str), prefix_sep="=").astype(bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fpgrowth(onehot, min_support=support, use_colnames=True, max_len=max_len)
    want = {frozenset(s): sup for s, sup in zip(ref["itemsets"], ref["support"])}
    ours, mlxtends = min_count_for(support, len(df)), int(np.ceil(support * len(df)))
    for engine in ("fast", "mlxtend"):
        table = scan(df, outcome="o", attributes=attrs, min_support=support, max_length=max_len,
                     engine=engine, exhaustive=True)
        f = table.frame.iloc[1:]
        got = {frozenset(s.split(", ")): sup for s, sup in zip(f["itemset"], f["support"])}
        # the one deliberate difference: s·n a floating-point hair above a whole number k (0.1 · 30 =
        # 3.0000000000000004), where mlxtend asks for k + 1 rows and the share means k
        extra = {k: v for k, v in got.items() if k not in want}
        assert {k: v for k, v in got.items() if k in want} == want
        assert ours == mlxtends or (ours == mlxtends - 1 and abs(support * len(df) - ours) < 1e-9 * ours)
        assert all(round(v * len(df)) == ours for v in extra.values()) and (not extra or ours < mlxtends)


def test_a_share_keeps_the_rows_it_names():
    """109/6172 · 6172 is 109.00000000000001: the share keeps slices of exactly 109 rows (mlxtend's
    ceil asks for 110), and a row count gives the same table."""
    assert min_count_for(109 / 6172, 6172) == 109 and int(np.ceil(109 / 6172 * 6172)) == 110
    assert min_count_for(0.1, 30) == 3 and min_count_for(109, 6172) == 109 and min_count_for(2, 5) == 2
    assert min_count_for(0.0175, 6172) == 109 and min_count_for(0.01766, 6172) == 109  # 109.0 < 108.99..+
    assert min_count_for(1.0, 7) == 7 and min_count_for(1, 7) == 7  # 1 is the share of every row
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(list("xyz"), 6172), "b": rng.choice(list("pq"), 6172),
                       "c": rng.choice(list("uvw"), 6172), "o": rng.normal(size=6172)})
    counts = df.groupby(["a", "b"]).size()
    k = int(counts.min())
    rows, share = (scan(df, outcome="o", min_support=m, exhaustive=True) for m in (k, k / len(df)))
    pd.testing.assert_frame_equal(rows.frame, share.frame)
    assert (rows.frame["count"] == k).any() and rows.frame["count"].min() == k
    assert rows.support_kind == "rows" and share.support_kind == "share"
    assert rows.support_text.startswith(f"{k:,} rows") and share.support_text.endswith(f"({k:,} rows of 6,172)")
    above = scan(df, outcome="o", min_support=k + 1, exhaustive=True)
    assert above.frame["count"].iloc[1:].min() > k


def test_max_length_one_gives_items_only():
    df = pd.DataFrame({"a": list("xxyy"), "b": list("pqpq"), "o": [1.0, 2, 3, 4]})
    t = scan(df, outcome="o", min_support=0.25, max_length=1, exhaustive=True)
    assert sorted(t.frame["itemset"]) == ["", "a=x", "a=y", "b=p", "b=q"]


def test_wide_tables_beyond_one_int64_key():
    """30 attributes of 6 values: row keys no longer fit an int64, the generic hashing path runs."""
    rng = np.random.default_rng(8)
    df = pd.DataFrame({f"c{j}": rng.integers(0, 6, 300).astype(str) for j in range(30)})
    df["o"] = rng.normal(size=300)
    a = scan(df, outcome="o", min_support=0.03, max_length=2, exhaustive=True).frame.set_index("itemset").sort_index()
    b = scan(df, outcome="o", min_support=0.03, max_length=2, engine="mlxtend",
             exhaustive=True).frame.set_index("itemset").sort_index()
    assert (a["length"] == 2).sum() > 100
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)

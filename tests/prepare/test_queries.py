"""Ranking quality per query: NDCG@k, MRR and precision@k per slice against brute force on random
query tables (hypothesis), attributes constant within a query, a planted worse query group."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from divergence import DivergenceInputError, scan
from divergence.cli.cli import main


def _brute(df: pd.DataFrame, key: str, ascending: bool, k: int | None, kind: str) -> dict:
    """Per query, by the definitions (ties in the key broken by row order)."""
    out = {}
    for qv, g in df.groupby("q", sort=False):
        g = g[g[key].notna()]
        rows = sorted(range(len(g)), key=lambda i: ((g[key].iloc[i] if ascending else -g[key].iloc[i]), g.index[i]))
        rel = [float(g["rel"].iloc[i]) if g["rel"].iloc[i] == g["rel"].iloc[i] else 0.0 for i in rows]
        if not any(r > 0 for r in rel):
            out[qv] = math.nan
            continue
        kk = len(rel) if k is None else k
        if kind == "ndcg":
            dcg = sum((2 ** r - 1) / math.log2(1 + i) for i, r in enumerate(rel[:kk], 1))
            ideal = sorted(rel, reverse=True)
            out[qv] = dcg / sum((2 ** r - 1) / math.log2(1 + i) for i, r in enumerate(ideal[:kk], 1))
        elif kind == "mrr":
            out[qv] = 1.0 / next(i for i, r in enumerate(rel, 1) if r > 0)
        else:
            m = min(kk, len(rel))
            out[qv] = sum(r > 0 for r in rel[:m]) / m
    return out


@st.composite
def query_tables(draw):
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    nq = draw(st.integers(3, 40))
    sizes = rng.integers(1, 12, nq)
    q = np.repeat(np.arange(nq), sizes)
    n = q.size
    df = pd.DataFrame({"q": np.array([f"q{i}" for i in range(nq)])[q],
                       "device": rng.choice(["m", "d"], nq)[q], "market": rng.choice(["a", "b", "c"], nq)[q],
                       "rel": rng.choice([0, 0, 1, 2, 3], n).astype(float),
                       "score": rng.integers(0, 4, n).astype(float)})  # ties on purpose
    if draw(st.booleans()):
        df.loc[rng.random(n) < 0.1, "score"] = np.nan
    if draw(st.booleans()):
        df.loc[rng.random(n) < 0.1, "rel"] = np.nan
    return df.sample(frac=1.0, random_state=seed % 1000).reset_index(drop=True), draw(st.booleans()), \
        draw(st.sampled_from([1, 3, 5, 10]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=query_tables())
def test_metrics_per_slice_equal_brute_force(case):
    df, ascending, k = case
    metrics = [f"ndcg@{k}", "ndcg", "mrr", f"precision@{k}"]
    t = scan(df, query="q", relevance="rel", rank_by="score", ascending=ascending, metrics=metrics,
             attributes=["device", "market"], min_support=0.01, exhaustive=True)
    per = {m: _brute(df, "score", ascending, None if "@" not in m else k, m.split("@")[0]) for m in metrics}
    qattr = df.groupby("q", sort=False)[["device", "market"]].first()
    f = t.frame
    assert f["count"].iloc[0] == df["q"].nunique()
    for i, itemset in enumerate(f["itemset"]):
        mask = np.ones(len(qattr), dtype=bool)
        for item in filter(None, itemset.split(", ")):
            a, v = item.split("=")
            mask &= (qattr[a] == v).to_numpy()
        assert f["count"].iloc[i] == mask.sum()
        for m in metrics:
            vals = np.array([per[m][qv] for qv in qattr.index[mask]], dtype=float)
            defined = vals[~np.isnan(vals)]
            assert f[f"{m}_count"].iloc[i] == defined.size
            if defined.size:
                assert f[m].iloc[i] == pytest.approx(defined.mean(), rel=1e-12, abs=1e-14)


def test_a_rank_column_and_ties_by_row_order():
    df = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 3, "g": ["x"] * 3 + ["y"] * 3,
                       "rank": [2, 1, 3, 1, 1, 2], "rel": [1, 0, 0, 0, 2, 0]})
    t = scan(df, query="q", relevance="rel", rank="rank", metrics=["mrr", "precision@1", "ndcg@2"],
             attributes=["g"], min_support=0.01)
    assert t.row("g=x")["mrr"] == 0.5 and t.row("g=y")["mrr"] == 0.5  # b: the tie keeps row order
    assert t.row("g=x")["precision@1"] == 0.0
    assert t.row("g=y")["ndcg@2"] == pytest.approx((3 / math.log2(3)) / 3.0)


def test_attributes_must_be_constant_within_a_query():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"q": np.repeat(np.arange(50), 4), "device": np.repeat(rng.choice(list("mdt"), 50), 4),
                       "doc_len": rng.integers(1, 9, 200), "rel": rng.integers(0, 3, 200), "s": rng.normal(size=200)})
    with pytest.raises(DivergenceInputError, match="Attribute 'doc_len' varies within a query"):
        scan(df, query="q", relevance="rel", rank_by="s", attributes=["device", "doc_len"])
    t = scan(df, query="q", relevance="rel", rank_by="s")
    assert t.attributes == ("device",) and any("'doc_len'" in n for n in t.notes)
    assert t.n_rows == 50 and t.metric_names == ["ndcg@10", "mrr"]
    with pytest.raises(DivergenceInputError, match="Unknown query metric 'ndcg@0'"):
        scan(df, query="q", relevance="rel", rank_by="s", metrics=["ndcg@0"])
    with pytest.raises(DivergenceInputError, match="needs a relevance column"):
        scan(df, query="q", rank_by="s")


def _planted(seed: int, nq: int = 3000, per: int = 15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(nq), per)
    device = rng.choice(["mobile", "desktop", "tablet"], nq)[q]
    market = rng.choice(["us", "de", "fr", "jp"], nq)[q]
    rel = rng.integers(0, 4, q.size) * (rng.random(q.size) < 0.3)
    noise = np.where((device == "mobile") & (market == "de"), 2.5, 0.8)  # the worse group: a noisier ranker
    return pd.DataFrame({"q": q, "device": device, "market": market, "rel": rel,
                         "score": rel + rng.normal(0, 1, q.size) * noise})


def test_a_planted_worse_query_group_is_found(tmp_path):
    df = _planted(0)
    t = scan(df, query="q", relevance="rel", rank_by="score", metrics=["ndcg@10", "mrr", "precision@5"],
             min_support=0.02)
    for m in ("ndcg@10", "mrr", "precision@5"):
        worst = t.top(1, metric=m, by=f"{m}_divergence", ascending=True)
        assert worst["itemset"].iloc[0] == "device=mobile, market=de"
        assert worst[f"{m}_q"].iloc[0] < 1e-6 and worst[f"{m}_verdict"].iloc[0] == "below"
    assert t.row("device=mobile, market=de")["count"] == df.groupby("q").first().eval(
        "device == 'mobile' and market == 'de'").sum()
    path = tmp_path / "queries.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "s.csv"
    assert main(["scan", str(path), "--query", "q", "--relevance", "rel", "--rank-by", "score", "--metric",
                 "ndcg@10,mrr", "--min-support", "0.02", "--output", str(out)]) == 0
    f = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert f["count"].iloc[0] == 3000 and "ndcg@10_q" in f.columns
    # a held-out share of the queries replicates the finding
    h = scan(df, query="q", relevance="rel", rank_by="score", metrics=["ndcg@10"], min_support=0.02, holdout=0.3)
    assert bool(h.row("device=mobile, market=de")["ndcg@10_replicated"])
    # a second table (another week's queries) replicates it too
    r = scan(df, query="q", relevance="rel", rank_by="score", metrics=["mrr"], min_support=0.02,
             replicate=_planted(1, nq=2000))
    assert bool(r.row("device=mobile, market=de")["mrr_replicated"])


def test_finding_cards_of_a_query_level_scan_count_queries():
    """A query-level slice is a set of queries: its card says so (a row-level scan's card says rows)."""
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo
    from divergence.present.cards import findings

    t = scan(_planted(0), query="q", relevance="rel", rank_by="score", metrics=["ndcg@10"], min_support=0.02)
    cards, _ = findings(t, "ndcg@10")
    assert cards and all(" queries (" in c.who and " rows (" not in c.who for c in cards)
    row_level = scan(load_demo(), **DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES)
    cards, _ = findings(row_level, "fpr")
    assert cards and all(" rows (" in c.who for c in cards)

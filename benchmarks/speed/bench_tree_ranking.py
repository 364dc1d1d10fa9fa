"""What tree binning and query-level ranking cost (docs/performance.md, "Tree binning" and "Ranking quality per
query"): whole scan() calls, best of --repeat, printed as a table.

    python benchmarks/speed/bench_tree_ranking.py [--rows 1000000] [--repeat 3]

- Tree binning against 3 quantile bins on the same table (benchmarks/validation/sim_tree.py's generator: two
  continuous columns, a lognormal one, a category; FPR), in pandas and in DuckDB (a Parquet file).
- A query table of ``--rows`` rows (documents; 20 per query, two query attributes, graded relevance,
  a score; NDCG@10, MRR, precision@5) against a row-level scan of as many rows today (the same table
  scanned per row: ``rank_by`` and the DCG gain of each row's rank).
"""
from __future__ import annotations

import argparse
import os
import runpy
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from divergence import scan, scan_duckdb  # noqa: E402

_SIM_TREE = runpy.run_path(str(Path(__file__).resolve().parents[1] / "validation" / "sim_tree.py"))  # its generator
ROLES, generate = _SIM_TREE["ROLES"], _SIM_TREE["generate"]


def best(f, repeat: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def query_frame(rows: int, per: int = 20, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    nq = rows // per
    q = np.repeat(np.arange(nq), per)
    device = rng.choice(["mobile", "desktop", "tablet"], nq)[q]
    market = rng.choice(["us", "de", "fr", "jp", "br"], nq)[q]
    rel = rng.integers(0, 4, q.size) * (rng.random(q.size) < 0.3)
    score = rel + rng.normal(0, np.where((device == "mobile") & (market == "de"), 2.5, 0.8))
    return pd.DataFrame({"q": q, "device": device, "market": market, "rel": rel, "score": score})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    scan(generate(0, 5000), **ROLES, binning="tree")  # warm-up: kernels loaded
    lines = []
    df = generate(0, a.rows)
    for label, kw in (("3 quantile bins", {}), ("tree binning", {"binning": "tree"})):
        s, t = best(lambda: scan(df, **ROLES, min_support=0.01, **kw), a.repeat)
        lines.append(("pandas", label, a.rows, t.n_rows, len(t) - 1, s))
    from divergence.prepare.cutpoints import choose_cuts, cut_mask
    from divergence.prepare.outcomes import build_outcomes

    found = build_outcomes(df, **ROLES)
    cut = cut_mask(len(df), 0)
    s, _ = best(lambda: choose_cuts(df, ["x", "z", "w", "c"], {}, 3, found, cut, 1), a.repeat)
    lines.append(("pandas", "of which choosing the cut points (the trees)", a.rows, cut.n_cut, 0, s))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "band.parquet")
        df.to_parquet(path)
        for label, kw in (("3 quantile bins", {}), ("tree binning", {"binning": "tree"})):
            s, t = best(lambda: scan_duckdb(path, **ROLES, min_support=0.01, **kw), a.repeat)
            lines.append(("duckdb", label, a.rows, t.n_rows, len(t) - 1, s))
    qdf = query_frame(a.rows)
    s, t = best(lambda: scan(qdf, rank_by="score", gamma="dcg", attributes=["device", "market"], min_support=0.01),
                a.repeat)
    lines.append(("pandas", "per row today: rank_by, gamma dcg", a.rows, t.n_rows, len(t) - 1, s))
    s, t = best(lambda: scan(qdf, query="q", relevance="rel", rank_by="score", attributes=["device", "market"],
                             metrics=["ndcg@10", "mrr", "precision@5"], min_support=0.01), a.repeat)
    lines.append(("pandas", "per query: ndcg@10, mrr, precision@5", a.rows, t.n_rows, len(t) - 1, s))
    print(f"best of {a.repeat}")
    print("| path | scan | rows given | rows (or queries) measured | slices | seconds |")
    print("|---|---|---:|---:|---:|---:|")
    for path, label, rows, measured, slices, s in lines:
        print(f"| {path} | {label} | {rows:,} | {measured:,} | {slices:,} | {s:.2f} |")


if __name__ == "__main__":
    main()

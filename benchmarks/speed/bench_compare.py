"""Speed of compare() against scan() on one model: prints a table.

    python benchmarks/speed/bench_compare.py            # Adult (../shared/data or $DIVERGENCE_DATA) + a synthetic regression
    python benchmarks/speed/bench_compare.py --repeat 5 # best of 5 (default 3)

Adult (45,222 rows, 11 attributes): the model is the given random forest's predictions
(``predicted``); the reference is a seeded perturbed copy (10% of its labels flipped at
random). ``scan`` measures the model alone (error, fpr, fnr, default statistics: intervals,
q-values, n_min, slice baselines and the lift bootstrap of its error verdicts; "rates only":
fpr and fnr, which have no slice baseline, so no bootstrap); ``compare`` both
models (the eight label cells as tallies, McNemar, Tango's interval, one family of q-values,
n_min and verdicts). "mine s" is the mining pass alone (compress and mine, inside each
call). The regression case is the built-in dataset at 100,000 rows, its spend prediction
against a copy with extra noise (absolute and squared error: the real-valued test tabulates
the pooled differences' saddlepoints once per metric).

Each time is the best of ``--repeat`` calls after one warm-up call (which loads the
compiled miner), in this process. On a shared machine, run it when the load is low (the
table in docs/performance.md says when it was not).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

from divergence import compare, scan  # noqa: E402

_MINE_SECONDS = [0.0]


def _timed(fn):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _MINE_SECONDS[0] += time.perf_counter() - t
    return wrapper


# the mining pass of each: both mine through divergence.mining.mined's call of the miner;
# scan's preparation compresses its rows first (compress_outcomes)
_mined_mod = sys.modules["divergence.mining.mined"]
_mined_mod.mine = _timed(_mined_mod.mine)
_prepared_mod = sys.modules["divergence.prepare.prepared"]
_prepared_mod.compress_outcomes = _timed(_prepared_mod.compress_outcomes)


def best(fn, repeat: int) -> tuple[float, float, object]:
    fn()  # warm-up
    times, mines, out = [], [], None
    for _ in range(repeat):
        _MINE_SECONDS[0] = 0.0
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        mines.append(_MINE_SECONDS[0])
    k = int(np.argmin(times))
    return times[k], mines[k], out


def adult_cases():
    path = DATA / "adult_discretized.csv"
    if not path.exists():
        print(f"(Adult skipped: {path} not found)", file=sys.stderr)
        return
    df = pd.read_csv(path)
    rng = np.random.default_rng(0)
    flip = rng.random(len(df)) < 0.10
    df["reference"] = np.where(flip, 1 - df["predicted"], df["predicted"])
    attrs = [c for c in df.columns if c not in ("class", "predicted", "reference")]
    for s in (0.05, 0.01, 0.005):
        yield ("Adult", len(df), s,
               lambda s=s: scan(df, target="class", prediction="predicted", positive=1,
                                metrics=["error", "fpr", "fnr"], attributes=attrs, min_support=s),
               lambda s=s: scan(df, target="class", prediction="predicted", positive=1,
                                metrics=["fpr", "fnr"], attributes=attrs, min_support=s),
               lambda s=s: compare(df, target="class", prediction="predicted", reference="reference", positive=1,
                                   metrics=["error", "fpr", "fnr"], attributes=attrs, min_support=s))


def regression_cases():
    from divergence.data.datasets import DEMO_ATTRIBUTES, load_demo

    df = load_demo(100_000)
    rng = np.random.default_rng(1)
    df["reference_spend"] = df["predicted_spend"] + rng.normal(0, 10, len(df))
    for s in (0.01,):
        yield ("built-in x10 (regression)", len(df), s,
               lambda s=s: scan(df, target="spend", prediction="predicted_spend", regression=True,
                                metrics=["abs_error", "squared_error"], attributes=DEMO_ATTRIBUTES, min_support=s),
               None,
               lambda s=s: compare(df, target="spend", prediction="predicted_spend", reference="reference_spend",
                                   regression=True, metrics=["abs_error", "squared_error"],
                                   attributes=DEMO_ATTRIBUTES, min_support=s))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for name, n, s, run_scan, run_rates, run_compare in list(adult_cases()) + list(regression_cases()):
        t_scan, m_scan, table = best(run_scan, args.repeat)
        t_rates = best(run_rates, args.repeat)[0] if run_rates else float("nan")
        t_cmp, m_cmp, comparison = best(run_compare, args.repeat)
        rows.append({"data": name, "rows": f"{n:,}", "support": s, "itemsets": f"{len(comparison):,}",
                     "scan s": f"{t_scan:.2f}", "scan s (rates only)": "–" if run_rates is None else f"{t_rates:.2f}",
                     "compare s": f"{t_cmp:.2f}", "mine s (scan)": f"{m_scan:.2f}",
                     "mine s (compare)": f"{m_cmp:.2f}", "mine compare / scan": f"{m_cmp / m_scan:.2f}"})
        assert len(table) == len(comparison)  # the same slices
        print(f"{name} {s}: done", file=sys.stderr)
    frame = pd.DataFrame(rows)
    print(f"compare() against scan() on one model, best of {args.repeat}; load average at start {load:.1f} "
          f"on {os.cpu_count()} CPUs\n")
    print("| " + " | ".join(frame.columns) + " |")
    print("|" + "|".join("---" if c == "data" else "---:" for c in frame.columns) + "|")
    for _, r in frame.iterrows():
        print("| " + " | ".join(str(v) for v in r) + " |")


if __name__ == "__main__":
    main()

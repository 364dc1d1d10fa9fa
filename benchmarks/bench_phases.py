"""The two phases of a scan (issue 22): seconds of ``scan()``, of ``mine()``, of one ``assess()``, and
of the dashboard worker's ``compute`` before (a scan, assessed at the default statistics, then
assessed again at the request's: emulated) and after (mine once, assess once). Prints a table.

    python benchmarks/bench_phases.py [--repeat 3]

The statistics are the dashboard's defaults (confidence 0.95, Benjamini-Hochberg, 200 bootstrap
replicates, seed 0). Cases: the built-in data (10,000 rows, its attributes; the classification and
regression roles, support 0.02) and Adult (/work/shared/data/adult_discretized.csv or
$DIVERGENCE_DATA; target class, prediction predicted, positive 1, fpr and fnr, support 0.01).
Best of ``--repeat`` runs after a warm-up, in process, on a machine shared with other work.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

import divergence  # noqa: E402
import ui.worker as worker  # noqa: E402
from divergence.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo  # noqa: E402

STATS = dict(confidence=0.95, correction="bh", bootstrap=200, seed=0, exploratory=True)


def cases() -> dict:
    demo = load_demo()
    out = {f"built-in {task}": (demo, dict(**DEMO_ROLES[task], attributes=list(DEMO_ATTRIBUTES), min_support=0.02))
           for task in ("classification", "regression")}
    adult = DATA / "adult_discretized.csv"
    if adult.exists():
        out["Adult fpr,fnr 0.01"] = (pd.read_csv(adult), dict(target="class", prediction="predicted", positive=1,
                                                              metrics=["fpr", "fnr"], min_support=0.01))
    else:
        print(f"(Adult skipped: {adult} not found)")
    return out


def best(fn, repeat: int) -> tuple[float, object]:
    out = fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def best_assess(df, kw: dict, stats: dict, repeat: int) -> tuple[float, object]:
    """One assess of a freshly mined table (a table assessed before holds cached lookups)."""
    times, out = [], None
    for _ in range(repeat + 1):
        mined = divergence.mine(df, **kw)
        t = time.perf_counter()
        out = divergence.assess(mined, **stats)
        times.append(time.perf_counter() - t)
    return min(times[1:]), out


def worker_before(request: worker.ScanRequest):
    """The worker's compute before the phases: scan (assessed at the defaults), assessed again."""
    mined = divergence.scan(request.frame, **request.scan)
    mined.frame
    table = divergence.assess(mined, **request.statistics)
    table.frame
    return mined, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    stats = {k: v for k, v in STATS.items() if k != "exploratory"}
    rows = []
    for name, (df, kw) in cases().items():
        t_scan, _ = best(lambda: divergence.scan(df, **kw, **STATS), args.repeat)
        t_mine, _ = best(lambda: divergence.mine(df, **kw), args.repeat)
        t_assess, table = best_assess(df, kw, stats, args.repeat)
        request = worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=df)
        t_before, _ = best(lambda: worker_before(request), args.repeat)
        t_after, _ = best(lambda: worker.compute(request), args.repeat)
        rows.append((name, len(table) - 1, t_scan, t_mine, t_assess, t_scan / (t_mine + t_assess), t_before, t_after))
        print(f"  {name}: done", file=sys.stderr, flush=True)
    head = ("case", "slices", "scan s", "mine s", "assess s", "scan/(mine+assess)", "worker before s",
            "worker after s")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for name, n, *t in rows:
        ratio = t[3]
        print(f"{name} | {n:,} | {t[0]:.3f} | {t[1]:.3f} | {t[2]:.3f} | {ratio:.2f} | {t[4]:.3f} | {t[5]:.3f}")
    print(f"\nbest of {args.repeat} after a warm-up; statistics {stats}")


if __name__ == "__main__":
    main()

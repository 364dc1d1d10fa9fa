"""The two phases of a scan (issue 22): seconds of ``scan()``, of ``mine()``, of one ``assess()``, and
of the dashboard worker's ``compute`` before (a scan, assessed at the default statistics, then
assessed again at the request's: emulated) and after (mine once, assess once). Prints a table.

    python benchmarks/speed/bench_phases.py [--repeat 3]

The statistics are the ones the dashboard used by default until 2026-12-04 (confidence 0.95, BH, 200 bootstrap
replicates, seed 0). Cases: the built-in data (10,000 rows, its attributes; the classification and
regression roles, support 0.02) and Adult (/work/shared/data/adult_discretized.csv or
$DIVERGENCE_DATA; target class, prediction predicted, positive 1, fpr and fnr, support 0.01).
In process, the phases interleaved in each round (a warm-up round, then ``--repeat``), best of the
rounds, in CPU seconds of this process (what a shared machine's load disturbs least) and in wall
seconds.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

import divergence  # noqa: E402
import ui.worker as worker  # noqa: E402
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo  # noqa: E402

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


def timed(fn) -> tuple[float, float, object]:
    """(CPU seconds of this process, wall seconds, the result) of one call."""
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c, time.perf_counter() - t, out


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
    columns = ("scan", "mine", "assess", "worker before", "worker after")
    rows = []
    for name, (df, kw) in cases().items():
        request = worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=df)
        best = {c: [float("inf"), float("inf")] for c in columns}
        slices = 0
        for round_ in range(args.repeat + 1):  # round 0 warms up; the phases interleaved, so load hits each alike
            got: dict = {}
            got["scan"] = timed(lambda: divergence.scan(df, **kw, **STATS))
            got["mine"] = timed(lambda: divergence.mine(df, **kw))
            mined = got["mine"][2]  # freshly mined: a table assessed before holds cached lookups
            got["assess"] = timed(lambda: divergence.assess(mined, **stats))
            got["worker before"] = timed(lambda: worker_before(request))
            got["worker after"] = timed(lambda: worker.compute(request))
            slices = len(got["assess"][2]) - 1
            if round_:
                for c in columns:
                    best[c] = [min(best[c][0], got[c][0]), min(best[c][1], got[c][1])]
        rows.append((name, slices, best))
        print(f"  {name}: done", file=sys.stderr, flush=True)
    for k, unit in ((0, "CPU seconds (this process)"), (1, "wall seconds")):
        print(f"\n{unit}, best of {args.repeat}\n")
        head = ("case", "slices", *columns, "scan / (mine + assess)", "worker after / before")
        print(" | ".join(head))
        print(" | ".join("---" for _ in head))
        for name, n, best in rows:
            t = {c: best[c][k] for c in columns}
            print(f"{name} | {n:,} | " + " | ".join(f"{t[c]:.3f}" for c in columns)
                  + f" | {t['scan'] / (t['mine'] + t['assess']):.2f} | {t['worker after'] / t['worker before']:.2f}")
    print(f"\nstatistics {stats}; the worker's times include building the readable frame")


if __name__ == "__main__":
    main()

"""What distinct findings cost: scan() seconds with them and without them (the search replaced by
one that finds nothing; everything else the same: shrinkage, bound, default order), best of
``--repeat`` after a warm-up, kernels built ahead of time. Prints one table.

    python benchmarks/speed/bench_findings.py            # built-in data, Adult at 0.005 and 0.002, raw COMPAS
    python benchmarks/speed/bench_findings.py --quick    # built-in data and Adult at 0.005
"""
from __future__ import annotations

import argparse
import os
import runpy
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))


def _cases(quick: bool):
    import pandas as pd

    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

    demo = load_demo()
    yield "built-in, fpr and fnr", demo, dict(DEMO_ROLES["classification"], attributes=DEMO_ATTRIBUTES,
                                              min_support=0.002)
    yield "built-in, abs_error", demo, dict(DEMO_ROLES["regression"], attributes=DEMO_ATTRIBUTES, min_support=0.002)
    adult = DATA / "adult_discretized.csv"
    if adult.exists():
        df = pd.read_csv(adult)
        roles = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])
        for s in ((0.005,) if quick else (0.005, 0.002)):
            yield f"Adult, fpr and fnr, support {s:g}", df, dict(roles, min_support=s)
    raw = DATA / "compas-scores-two-years.csv"
    if raw.exists() and not quick:
        from divergence.data.io import load_table

        frame = load_table(raw).frame
        yield "raw COMPAS, roles only, fpr and fnr", frame, dict(target="two_year_recid", score="decile_score",
                                                                  threshold=8, positive=1, metrics=["fpr", "fnr"])


def _best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import importlib

    import divergence.stats.findings as findings_module
    from divergence import scan

    assess_module = importlib.import_module("divergence.stats.findings_columns")
    real = assess_module.distinct_findings

    def nothing(table, k, significant, *a, **kw):  # the search replaced by one that finds nothing
        n = len(table)
        return findings_module.Findings(np.zeros(n, dtype=bool), np.full(n, -1), np.nonzero(significant)[0],
                                        np.zeros(0, dtype=np.int64), "")

    print("| data | slices | without findings (s) | with (s) | ratio | distinct findings per metric | significant "
          "| search cut |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for label, df, kw in _cases(args.quick):
        kw = dict(kw, bootstrap=0)
        scan(df, **kw)  # warm-up
        assess_module.distinct_findings = nothing
        t_without, _ = _best(lambda: scan(df, **kw), args.repeat)
        assess_module.distinct_findings = real
        t_with, table = _best(lambda: scan(df, **kw), args.repeat)
        f = table.frame
        found = ", ".join(f"{m} {int(f[m + '_finding'].sum())}" for m in table.metric_names)
        sig = ", ".join(f"{m} {int(((f[m + '_q'] <= 0.05)).sum()):,}" for m in table.metric_names)
        cuts = table.assessment.findings_cut
        cut = ", ".join(f"{m} after {int(f[m + '_finding'].sum())}" for m in cuts) or "no"
        print(f"| {label} | {len(table) - 1:,} | {t_without:.2f} | {t_with:.2f} | {t_with / t_without:.2f} | {found} "
              f"| {sig} | {cut} |", flush=True)


if __name__ == "__main__":
    main()

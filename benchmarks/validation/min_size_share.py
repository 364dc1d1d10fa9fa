"""The share of slices meeting the minimum size n_min, and the power size n_power (n_min before
2026-12-04), on raw COMPAS and Adult: one table.

    python benchmarks/validation/min_size_share.py      # needs ../shared/data
"""
from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = ROOT.parent / "shared" / "data"
import pandas as pd  # noqa: E402

from divergence import scan  # noqa: E402
from divergence.data.io import load_table  # noqa: E402

raw = load_table(DATA / "compas-scores-two-years.csv").frame
cases = [("raw COMPAS, s = 0.02", raw, dict(target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr","fnr"], min_support=0.02)),
         ("Adult, s = 0.005 exhaustive", pd.read_csv(DATA / "adult_discretized.csv"), dict(target="class", prediction="predicted", positive=1, metrics=["fpr","fnr"], min_support=0.005, exhaustive=True))]
print("| data | metric | slices | n_min (after) | meeting it | n_power (the old n_min) | meeting it |")
print("|---|---|---:|---:|---:|---:|---:|")
for name, df, kw in cases:
    t = scan(df, bootstrap=0, **kw); f=t.frame
    for m in kw["metrics"]:
        info=t.assessment.min_size[m]; c=f[f"{m}_count"].to_numpy()[1:]
        a=(c>=info.n_min).mean(); b=(c>=info.n_power).mean()
        print(f"| {name} | {m} | {len(f)-1:,} | {info.n_min:,} | {a:.1%} | {info.n_power:,} | {b:.1%} |")

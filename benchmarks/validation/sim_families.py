"""One family per metric, measured on the built-in data: prints one table of setting, runs,
measured rate and target (and whether the rate meets it within two binomial standard errors).

    nice python benchmarks/validation/sim_families.py              # 200 seeds per family (about 15 minutes on 2 busy cores)
    python benchmarks/validation/sim_families.py --runs 20         # a quick look

The world: :func:`divergence.data.datasets.load_demo` with seeds 1000, 1001, ... (10,000 rows),
scanned for FPR and FNR as the dashboard does (the demo's attributes, the default support). FNR is
planted flat (0.25 everywhere); FPR has one planted cohort (``region=South, education=Primary``,
0.35 against 0.08) and many significant slices around it. Per family (``metric``, the default, and
``scan``, the joint family): the runs with any significant FNR slice (q ≤ 0.05 and the corrected
interval excluding 0), the runs with an FNR finding, and the runs where the planted FPR cohort is
significant.
"""
from __future__ import annotations

import argparse
import runpy
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from sim_error_rates import Row  # noqa: E402

ALPHA = 0.05


def _significant(f, m) -> np.ndarray:
    q = f[f"{m}_q"].to_numpy()
    low, high = f[f"{m}_divergence_adj_low"].to_numpy(), f[f"{m}_divergence_adj_high"].to_numpy()
    return np.isfinite(q) & (q <= ALPHA) & ((low > 0) | (high < 0))


def run(seed: int, family: str) -> dict:
    """One seed of the built-in data under one family: what the FNR and FPR columns say."""
    from divergence import scan
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo

    t = scan(load_demo(seed=seed), attributes=DEMO_ATTRIBUTES, family=family, **DEMO_ROLES["classification"])
    f = t.frame
    planted = t.row(DEMO_TRUTH["elevated_fpr"])
    return {"fnr_significant": int(_significant(f, "fnr").sum()),
            "fnr_finding": int(f["fnr_finding"].to_numpy().sum()),
            "fpr_cohort": bool(planted["fpr_verdict"] == "above"),
            "fpr_significant": int(_significant(f, "fpr").sum()),
            "tests": dict(t.assessment.family_size)}


def table(runs: int, families=("metric", "scan")) -> list[Row]:
    rows = []
    for family in families:
        got = [run(1000 + s, family) for s in range(runs)]
        size = got[0]["tests"]["fnr"]
        note = f"{size:,} tests in FNR's family" + (" (every metric)" if family == "scan" else "")
        target = ("<=", ALPHA) if family == "metric" else ()
        rows.append(Row("families", f"built-in data, family {family}: runs with any significant FNR slice", runs,
                        float(np.mean([g["fnr_significant"] > 0 for g in got])), target, note))
        rows.append(Row("families", f"built-in data, family {family}: runs with an FNR finding", runs,
                        float(np.mean([g["fnr_finding"] > 0 for g in got])), target))
        rows.append(Row("families", f"built-in data, family {family}: the planted FPR cohort called above", runs,
                        float(np.mean([g["fpr_cohort"] for g in got])), (">=", 0.95),
                        f"{np.mean([g['fpr_significant'] for g in got]):.0f} significant FPR slices a run on average"))
        for r in rows[-3:]:
            print(r, flush=True)
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=200, help="seeds per family (default 200)")
    p.add_argument("--families", default="metric,scan", help="comma-separated: metric, scan")
    args = p.parse_args(argv)
    start = time.time()
    rows = table(args.runs, tuple(x.strip() for x in args.families.split(",") if x.strip()))
    print()
    print("| setting | runs | measured rate | target | meets | note |")
    print("|---|---:|---:|---|---|---|")
    for r in rows:
        print(f"| {r.setting} | {r.runs:,} | {r.rate:.4f} | {r.target_text()} | {r.meets()} | {r.note} |")
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()

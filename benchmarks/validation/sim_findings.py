"""Distinct findings and estimates at the top of a list, measured by simulation: one table of
setting, runs, measured value, target and whether it meets it.

    python benchmarks/validation/sim_findings.py              # 200 runs per world (about 20 minutes on 2 busy cores)
    python benchmarks/validation/sim_findings.py --runs 20    # a quick look

Worlds (10,000 rows, six random attributes, a 0/1 outcome at rate 0.2, support 0.005, about
2,000 slices; every slice's truth is the divergence of the per-row rate): ``one``, one true
cohort ``a0=v0`` (half the rows, +0.053) with its refinements; ``two``, cohorts ``a1=v0`` (30%)
and ``a3=v1, a4=v2`` (about 8%), +0.12 each; ``null``, nothing planted; ``planted``, a segment on
5% of the rows whose truth is +0.10. ``tests/stats/test_findings_sim.py`` runs a few seeds of each.
"""
from __future__ import annotations

import argparse
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--kinds", default="one,two,null,planted")
    args = parser.parse_args()
    from divergence.simulate import findings_run, findings_summary

    runs = [findings_run(kind, seed) for kind in args.kinds.split(",") for seed in range(args.runs)]
    print("| setting | runs | measured | target | meets |")
    print("|---|---:|---:|---|---|")
    for setting, n, value, target, ok in findings_summary(runs):
        print(f"| {setting} | {n} | {value:.3f} | {target} | {'yes' if ok else 'no'} |")


if __name__ == "__main__":
    main()

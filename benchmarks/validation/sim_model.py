"""The distinct findings as the terms of a fitted model (issue 43), measured by simulation: one
table of setting, runs, measured value, target and whether it meets it.

    python benchmarks/validation/sim_model.py                          # 200 runs per world and size
    python benchmarks/validation/sim_model.py --runs 40 --kinds two    # a quick look
    python benchmarks/validation/sim_model.py --kinds hetero --save runs.json   # each run's findings, by seed

Worlds (``divergence.simulate``): ``two``, ``three`` and ``null`` of
``divergence.simulate.correlated_world`` at 10,000 and 20,000 rows; ``hetero``, a hard cohort beside
a defect (absolute and squared error); ``wide``, a null world of 32 attributes of 8 to 12 values.
"""
from __future__ import annotations

import argparse
import json
import runpy
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--kinds", default="two,three,hetero,null,wide")
    parser.add_argument("--rows", default="10000,20000")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--save", type=Path, help="write every run (its seed, findings and ties) to this JSON file")
    args = parser.parse_args()
    from divergence.simulate import model_run, model_summary

    t0 = time.time()
    runs = []
    for kind in args.kinds.split(","):
        sizes = args.rows.split(",") if kind in ("two", "three") else args.rows.split(",")[:1]
        runs += [model_run(kind, seed, n=int(n)) for n in sizes
                 for seed in range(args.first_seed, args.first_seed + args.runs)]
    if args.save:
        args.save.write_text(json.dumps(runs, indent=1, default=str))
    print("| setting | runs | measured | target | meets |")
    print("|---|---:|---:|---|---|")
    for setting, n, value, target, ok in model_summary(runs):
        print(f"| {setting} | {n} | {value:.3f} | {target} | {'yes' if ok else 'no'} |")
    print(f"\n{len(runs)} runs in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

"""Distinct findings on worlds with correlated attributes, and a lone interaction's shrinkage,
measured by simulation: one table of setting, runs, measured value, target and whether it meets it.

    python benchmarks/validation/sim_correlated.py                       # 100 runs per world and size
    python benchmarks/validation/sim_correlated.py --runs 20 --kinds two # a quick look
    python benchmarks/validation/sim_correlated.py --set findings.SWAP_MARGIN=0   # a rule's constant changed

Worlds (``divergence.simulate.correlated_world``): a classifier's FPR with cohorts planted on
attributes that agree with others on 80% of rows; ``two`` (two disjoint cohorts), ``three`` (a third
overlapping both), ``interaction`` (a two-item effect neither item shows alone), ``single`` (its
size and effect on one item, for comparison), ``null``.
"""
from __future__ import annotations

import argparse
import runpy
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--kinds", default="two,three,null,interaction")
    parser.add_argument("--rows", default="10000,20000")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="change a constant of divergence.stats.MODULE for these runs (how sensitive the "
                             "rates are to it), e.g. findings.SWAP_MARGIN=0")
    args = parser.parse_args()
    import importlib

    for spec in args.set:
        name, _, value = spec.partition("=")
        module, _, constant = name.rpartition(".")
        target = importlib.import_module(f"divergence.stats.{module}")
        old = getattr(target, constant)  # an unknown constant fails here, by name
        setattr(target, constant, type(old)(float(value)))
        print(f"divergence.stats.{module}.{constant} = {getattr(target, constant)!r} (was {old!r})")
    from divergence.simulate import correlated_run, correlated_summary

    t0 = time.time()
    runs = [correlated_run(kind, seed, n=int(n)) for kind in args.kinds.split(",")
            for n in args.rows.split(",") for seed in range(args.first_seed, args.first_seed + args.runs)]
    print("| setting | runs | measured | target | meets |")
    print("|---|---:|---:|---|---|")
    for setting, n, value, target, ok in correlated_summary(runs):
        print(f"| {setting} | {n} | {value:.3f} | {target} | {'yes' if ok else 'no'} |")
    print(f"\n{len(runs)} runs in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

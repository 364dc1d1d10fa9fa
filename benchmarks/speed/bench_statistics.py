"""What ``assess()`` spends beside the distinct findings, on Adult (s=0.005, exhaustive, fpr and fnr):
the CPU seconds of ``mine()``, of ``assess()`` and of each other statistic's steps (functions wrapped
with a CPU clock, those the checkout has), best of ``--repeat`` calls in one process. With ``--against``
another checkout is measured the same way, the two taking turns ``--rounds`` times (a fresh process
each time), so that both see the same load; the table gives the best of all rounds. CPU time, not
wall: the machine's other core is usually busy.

    python benchmarks/speed/bench_statistics.py
    python benchmarks/speed/bench_statistics.py --against /path/to/another/checkout --rounds 3

The data: ../shared/data/adult_discretized.csv (or ``DIVERGENCE_DATA``). A checkout measured needs its
own kernels built (``make kernels``); the first line per checkout says whether they are.
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: set in the processes that measure a checkout: they time whichever ``divergence`` PYTHONPATH gives
MEASURE = "DIVERGENCE_BENCHMARK_MEASURE"
if not os.environ.get(MEASURE):
    runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

#: the steps timed: (label, module, attribute), where the name is looked up when called (a function
#: imported by name into another module is wrapped there); a step the checkout lacks is left out
PARTS = [
    ("distinct findings", "divergence.stats.findings_columns", "distinct_findings"),
    ("shrink_lattice", "divergence.stats.findings_columns", "shrink_lattice"),
    ("  shrink (each length's prior and posteriors)", "divergence.stats.shrinkage", "shrink"),
    ("    its EM (_fit_weights)", "divergence.stats.shrinkage", "_fit_weights"),
    ("  subsets from the parents", "divergence.stats.shrinkage", "_subsets_from_parents"),
    ("  increments and nearest subset (kernel)", "divergence.stats.shrinkage", "nearest_parents"),
    ("  increments (before the kernel: _increment)", "divergence.stats.shrinkage", "_increment"),
    ("  parents' terms", "divergence.stats.shrinkage", "_parent_terms"),
    ("default_order", "divergence.stats.findings_columns", "default_order"),
    ("_metric_columns", "divergence.stats.assess", "_metric_columns"),
    ("  divergence intervals (3 levels)", "divergence.stats.slice_tests", "DivergenceTest.interval"),
    ("  min_size_derivation", "divergence.stats.assess", "min_size_derivation"),
    ("testing_family", "divergence.stats.assess", "testing_family"),
    ("  adjust_p", "divergence.stats.slice_tests", "adjust_p"),
    ("tests' set-up (DivergenceTest)", "divergence.stats.slice_tests", "DivergenceTest.__init__"),
]


def measure(repeat: int) -> dict:
    """In this process: mine Adult, assess it once to warm up, then ``repeat`` times; the best CPU
    seconds of mine(), assess() and each step of :data:`PARTS` over the calls."""
    import importlib
    import time

    import pandas as pd

    import divergence as dv

    spent: dict[str, float] = {}

    def wrapped(label, func):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start
        return timed

    for label, module, attr in PARTS:
        owner = importlib.import_module(module)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None and callable(getattr(owner, name, None)):
            setattr(owner, name, wrapped(label, getattr(owner, name)))
    df = pd.read_csv(DATA / "adult_discretized.csv")
    attributes = [c for c in df.columns if c not in ("class", "predicted")]

    def mine():
        return dv.mine(df, target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"],
                       min_support=0.005, attributes=attributes, exhaustive=True)

    table = mine()
    dv.assess(table)
    best: dict[str, float] = {}
    for _ in range(repeat):
        start = time.process_time()
        table = mine()
        best["mine()"] = min(best.get("mine()", 1e9), time.process_time() - start)
        spent.clear()
        start = time.process_time()
        dv.assess(table)
        best["assess()"] = min(best.get("assess()", 1e9), time.process_time() - start)
        for label, seconds in spent.items():
            best[label] = min(best.get(label, 1e9), seconds)
    return best


def _run(root: Path, repeat: int) -> dict:
    """One measuring process for the checkout ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root), **{MEASURE: "1"})
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", str(repeat)], cwd=root,
                         env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--against", type=Path, help="another checkout, measured taking turns with this one")
    p.add_argument("--rounds", type=int, default=3, help="turns of each checkout (default 3)")
    p.add_argument("--repeat", type=int, default=3, help="assess() calls per process, the best kept (default 3)")
    p.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    for root in roots:
        status = subprocess.run([sys.executable, "-m", "divergence.kernels._aot", "--check"], cwd=root,
                                env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
        print(f"{root}: {(status.stdout or status.stderr).strip().splitlines()[-1]}")
    runs: dict[Path, list[dict]] = {root: [] for root in roots}
    for k in range(args.rounds):
        for root in (roots if k % 2 == 0 else roots[::-1]):
            runs[root].append(_run(root, args.repeat))
    best = {root: {label: min(r[label] for r in rs if label in r) for label in {x for r in rs for x in r}}
            for root, rs in runs.items()}
    labels = ["mine()", "assess()"] + [label for label, _, _ in PARTS]
    names = [str(root) if root != ROOT else "this checkout" for root in roots]
    print(f"\nCPU seconds, best of {args.rounds} processes x {args.repeat} calls; Adult s=0.005 exhaustive, fpr+fnr\n")
    print("| step | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(roots))
    for label in labels:
        cells = [f"{best[root][label]:.3f}" if label in best[root] else "" for root in roots]
        if any(cells):
            print(f"| {label} | " + " | ".join(cells) + " |")
    ratio = [f"{best[root]['assess()'] / best[root]['mine()']:.2f}x" for root in roots]
    print("| assess() / mine() | " + " | ".join(ratio) + " |")


if __name__ == "__main__":
    main()

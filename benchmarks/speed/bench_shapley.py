"""Speed of the explanations (Shapley values, global item divergence, pruning, bootstrap),
against DivExplorer 0.2.6 where it has the same computation.

    .venv/bin/python benchmarks/speed/bench_shapley.py [--repeat 5] [--no-divexplorer]

DivExplorer runs in its own virtual environment (``DIVEXPLORER_PYTHON``, default
/work/divx-venv/bin/python) as a subprocess: it is never imported here. Both sides are
timed on the explanation step only (the mining is not counted), and the values are
compared item by item: the last column is the largest absolute difference.
Datasets come from ../shared/data (or ``DIVERGENCE_DATA``).
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from divergence import (  # noqa: E402
    global_divergence,
    item_contributions,
    redundant_itemsets,
    scan,
    shapley_matrix,
)
from divergence.explain import shapley as _shapley  # noqa: E402

DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))
DIVEXPLORER = os.environ.get("DIVEXPLORER_PYTHON", "/work/divx-venv/bin/python")
ROLES = dict(target="class", prediction="predicted", positive=1, metrics=["fpr"])

# Run inside DivExplorer's venv: mine, then time one explanation step; print JSON.
DIVEXPLORER_SCRIPT = r"""
import json, sys, time
import pandas as pd
from divexplorer import DivergenceExplorer
from divexplorer.outcomes import get_false_positive_rate_outcome
from divexplorer.pattern_processor import DivergencePatternProcessor
path, support, task = sys.argv[1], float(sys.argv[2]), sys.argv[3]
df = pd.read_csv(path)
X = df.drop(columns=["class", "predicted"]).astype(str)
X["fp"] = get_false_positive_rate_outcome(df["class"], df["predicted"])
t0 = time.perf_counter()
patterns = DivergenceExplorer(X).get_pattern_divergence(min_support=support, boolean_outcomes=["fp"])
mine = time.perf_counter() - t0
proc = DivergencePatternProcessor(patterns, "fp")
t0 = time.perf_counter()
if task == "local":
    out = {}
    for itemset in patterns["itemset"]:
        if len(itemset):
            for item, v in proc.shapley_value(pattern=itemset).items():
                out[", ".join(sorted(itemset)) + " | " + next(iter(item))] = v
elif task == "global":
    out = {next(iter(k)): v for k, v in proc.global_shapley_value().items()}
elif task == "prune":
    kept = proc.redundancy_pruning(0.01)
    out = {", ".join(sorted(s)): 1 for s in kept["itemset"]}
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "mine": mine, "n": len(patterns),
                  "values": {k: (None if v != v else float(v)) for k, v in out.items()}}))
"""


def divexplorer(path: Path, support: float, task: str) -> dict | None:
    if not Path(DIVEXPLORER).exists():
        return None
    r = subprocess.run([DIVEXPLORER, "-c", DIVEXPLORER_SCRIPT, str(path), str(support), task],
                       capture_output=True, text=True, cwd="/tmp")
    if r.returncode != 0:
        print(f"DivExplorer failed on {task}: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def best_of(fn, repeat: int, table) -> tuple[float, object]:
    """Best wall time over ``repeat`` runs, each from a cold lattice index (built inside)."""
    times, out = [], None
    for _ in range(repeat):
        _shapley._LATTICES.pop(table, None)
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def max_diff(ours: dict, theirs: dict | None) -> str:
    if theirs is None:
        return "n/a"
    keys = set(ours) | set(theirs)
    missing = [k for k in keys if k not in ours or k not in theirs]
    if missing:
        return f"{len(missing)} keys differ"
    nan_theirs = sum(theirs[k] is None for k in keys)
    diffs = [abs(ours[k] - theirs[k]) for k in keys if theirs[k] is not None]
    text = f"{max(diffs):.1e}" if diffs else "-"
    return text + (f" ({nan_theirs} NaN in DivExplorer)" if nan_theirs else "")


def local_values(table) -> dict:
    phi = shapley_matrix(table, metric="fpr")
    out = {}
    for i in range(1, len(table)):
        items = table.itemsets[i].split(", ")
        key = ", ".join(sorted(items))
        for a in np.nonzero(table.codes[i] >= 0)[0]:
            v = phi[i, a]
            if not np.isnan(v):
                out[f"{key} | {table.item_labels[a][table.codes[i, a]]}"] = float(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-divexplorer", action="store_true")
    args = ap.parse_args()
    compas, adult = DATA / "compas_discretized.csv", DATA / "adult_discretized.csv"
    if not compas.exists() or not adult.exists():
        print(f"datasets not found in {DATA}: nothing to measure")
        return
    dx = (lambda *a: None) if args.no_divexplorer else divexplorer
    rows = []

    def add(task, table, ours_s, theirs, diff):
        t = theirs["seconds"] if theirs else None
        rows.append({"task": task, "itemsets": f"{len(table):,}", "ours (s)": f"{ours_s:.4f}",
                     "DivExplorer 0.2.6 (s)": f"{t:.3f}" if t is not None else "n/a",
                     "speed-up": f"{t / ours_s:,.0f}x" if t is not None else "",
                     "max |difference|": diff})

    for path, name, support in [(compas, "COMPAS", 0.01), (adult, "Adult", 0.01)]:
        df = pd.read_csv(path)
        table = scan(df, min_support=support, exhaustive=True, **ROLES)  # DivExplorer's lattice
        s, _ = best_of(lambda: shapley_matrix(table, metric="fpr"), args.repeat, table)
        theirs = dx(path, support, "local") if name == "COMPAS" else None
        if theirs:
            diff = max_diff(local_values(table), theirs["values"])
        else:
            diff = "DivExplorer not run (slow)" if name == "Adult" else "n/a"
        add(f"{name} s={support}: local Shapley, every itemset", table, s, theirs, diff)
        s, g = best_of(lambda: global_divergence(table, metric="fpr"), args.repeat, table)
        theirs = dx(path, support, "global")
        add(f"{name} s={support}: global item divergence", table, s, theirs,
            max_diff(dict(zip(g["item"], g["global"])), theirs["values"] if theirs else None))
        s, red = best_of(lambda: redundant_itemsets(table, 0.01, metric="fpr"), args.repeat, table)
        theirs = dx(path, support, "prune")
        kept = {", ".join(sorted(x.split(", "))) if x else "": 1 for x in table.itemsets[~red]}
        add(f"{name} s={support}: redundancy pruning eps=0.01", table, s, theirs,
            ("same itemsets" if set(kept) == set(theirs["values"]) else "itemsets differ") if theirs else "n/a")
        top = table.top(1, metric="fpr", min_length=3)["itemset"].iloc[0]
        s, _ = best_of(lambda: item_contributions(table, top, metric="fpr", n_boot=200, seed=0),
                       args.repeat, table)
        add(f"{name} s={support}: bootstrap B=200, top FPR slice", table, s, None, "")
    out = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(out.to_string(index=False))
    print(f"\nours: best of {args.repeat}, lattice index rebuilt each time; DivExplorer: one run, "
          f"its explanation step only (mining not counted)")


if __name__ == "__main__":
    main()

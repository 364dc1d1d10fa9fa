"""Scale (issue 49): the fixed cost of preparing columns against a counting pass, and peak memory on
a table where nearly every row is distinct. Prints a table per part.

    python benchmarks/speed/bench_scale.py tallies --rows 1e6      # <= 2-item slices vs bincount over the codes
    python benchmarks/speed/bench_scale.py memory --rows 1e6       # peak MiB of mine() and scan(), in memory and DuckDB
    python benchmarks/speed/bench_scale.py memory --rows 1e7 --engines pandas duckdb --steps mine

``tallies``: the benchmarks' 12-attribute table (benchmarks/tools/synthetic.py, correlated
attributes, fpr and fnr); ours is ``mine(max_length=2, min_support=1/rows, exhaustive=True)`` (every
1- and 2-item slice of a row or more, with its tallies), the counting pass is numpy's ``bincount``
over the encoded codes of each attribute and each pair of attributes (12 + 66 passes, counts only),
the scan's codes given as one contiguous integer array per attribute; "tallies" is the same passes
counting each metric's defined rows and sum beside the rows (numpy's weighted ``bincount``), the
tallies the miner gives each slice. All are the best of ``--repeat`` CPU seconds in one process
after a warm-up; "prepare" is the preparation alone (discretize, outcomes, distinct rows).

``memory``: 12 integer attributes of 4 to 10 skewed values each (nearly every row distinct: 99.8% at
1e6), a label and a prediction, fpr and fnr at support 0.01 (default slices). Each step runs in a
fresh process: "mine" is ``mine()`` (or ``mine_duckdb()``), "scan" is ``scan()`` (``scan_duckdb()``);
"peak MiB" is that process's largest resident memory (``ru_maxrss``), the data frame and imports
included. DuckDB reads a Parquet copy of the table (written once under benchmarks/data/, git-ignored)
with ``memory_limit`` 1GB and 2 threads.
"""
from __future__ import annotations

import argparse
import json
import runpy
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = ROOT / "benchmarks" / "data"
SIZES = (4, 5, 6, 7, 8, 9, 10, 4, 5, 6, 7, 8)
ATTRS = [f"a{j}" for j in range(len(SIZES))]
ROLES = dict(target="y", prediction="pred", positive=1, metrics=["fpr", "fnr"])


def distinct_table(n: int, seed: int = 0):
    """12 integer attributes (4 to 10 values, geometric shares), a label and a prediction: nearly
    every row distinct (the product of the attributes' sizes is 2.3e9)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    cols = {}
    for j, k in enumerate(SIZES):
        p = 0.75 ** np.arange(k)
        cols[f"a{j}"] = rng.choice(k, n, p=p / p.sum()).astype(np.int8)
    df = pd.DataFrame(cols)
    logit = -1.0 + 0.4 * (df["a0"] == 0).to_numpy() + 0.3 * (df["a3"] == 1).to_numpy()
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    flip = rng.random(n) < np.where(y, 0.3, 0.1)
    df["y"] = y.astype(np.int8)
    df["pred"] = (y ^ flip).astype(np.int8)
    return df


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def tallies(rows: int, repeat: int) -> None:
    import runpy

    import numpy as np

    from divergence import mine
    from divergence.prepare.prepared import prepare
    from divergence.settings import Settings

    segmented = runpy.run_path(str(ROOT / "benchmarks" / "tools" / "synthetic.py"))["segmented_attributes"]
    rng = np.random.default_rng(0)
    df, _ = segmented(rng, rows)
    attrs = list(df.columns)
    logit = -1.0 + 0.4 * (df["a0"] == 0).to_numpy() + 0.3 * (df["a3"] == 1).to_numpy()
    y = rng.random(rows) < 1 / (1 + np.exp(-logit))
    df["y"] = y.astype(np.int8)
    df["pred"] = (y ^ (rng.random(rows) < np.where(y, 0.3, 0.1))).astype(np.int8)
    kw = dict(ROLES, attributes=attrs, max_length=2, min_support=1 / rows, exhaustive=True)
    table = mine(df, **kw)  # warm-up: loads the compiled kernels
    print(f"divergence from {Path(sys.modules['divergence'].__file__).parent}", file=sys.stderr)
    # each attribute's codes contiguous, as numpy's bincount takes them (intp): the fastest counting pass
    columns = [np.ascontiguousarray(c, dtype=np.intp) for c in table.kept_rows.codes.T]
    sizes = [b.n_items for b in table.bins]

    outcomes = [o.values for o in table.kept_rows.outcomes]
    tally_weights = [w for v in outcomes for w in ((~np.isnan(v)).astype(float), np.nan_to_num(v))]

    def counting_pass(weights=()) -> int:
        total = 0
        for a, ca in enumerate(columns):
            total += int(np.bincount(ca, minlength=sizes[a]).size)
            for w in weights:
                np.bincount(ca, weights=w, minlength=sizes[a])
            for b in range(a + 1, len(columns)):
                pair = ca * sizes[b] + columns[b]
                total += int(np.bincount(pair, minlength=sizes[a] * sizes[b]).size)
                for w in weights:
                    np.bincount(pair, weights=w, minlength=sizes[a] * sizes[b])
        return total

    settings = Settings.resolve(None, dict(kw))
    best = {"mine": float("inf"), "prepare": float("inf"), "count": float("inf"), "tallies": float("inf")}
    for _ in range(repeat):
        t = _cpu()
        table = mine(df, **kw)
        best["mine"] = min(best["mine"], _cpu() - t)
        t = _cpu()
        prepare(df, settings)
        best["prepare"] = min(best["prepare"], _cpu() - t)
        t = _cpu()
        counting_pass()
        best["count"] = min(best["count"], _cpu() - t)
        t = _cpu()
        counting_pass(tally_weights)
        best["tallies"] = min(best["tallies"], _cpu() - t)
    head = (f"{'rows':>11}{'slices':>8}{'mine() s':>10}{'prepare s':>11}{'count s':>9}{'ratio':>7}"
            f"{'tallies s':>11}{'ratio':>7}")
    print(head)
    print("-" * len(head))
    print(f"{rows:>11,}{len(table) - 1:>8,}{best['mine']:>10.3f}{best['prepare']:>11.3f}{best['count']:>9.3f}"
          f"{best['mine'] / best['count']:>6.1f}x{best['tallies']:>11.3f}{best['mine'] / best['tallies']:>6.1f}x")


CHILD = r'''
import importlib.util, json, resource, sys, time, warnings
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
found = importlib.util.spec_from_file_location("bench_scale", spec["bench"] + "/bench_scale.py")
bench_scale = importlib.util.module_from_spec(found)
found.loader.exec_module(bench_scale)
import pandas as pd
roles = dict(bench_scale.ROLES, attributes=bench_scale.ATTRS, min_support=0.01)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if spec["engine"] == "duckdb":
    from divergence import mine_duckdb, scan_duckdb
    call = scan_duckdb if spec["step"] == "scan" else mine_duckdb
    t = time.perf_counter()
    table = call(spec["path"], memory_limit=spec["memory_limit"], threads=2, **roles)
else:
    from divergence import mine, scan
    df = pd.read_parquet(spec["path"])
    call = scan if spec["step"] == "scan" else mine
    t = time.perf_counter()
    table = call(df, **roles)
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("RESULT " + json.dumps(dict(seconds=seconds, peak_mib=peak / 1024, slices=len(table) - 1)))
'''


def memory(rows: int, engines: list[str], steps: list[str], memory_limit: str) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"distinct12_{rows}.parquet"
    if not path.exists():
        distinct_table(rows).to_parquet(path, index=False, row_group_size=1_000_000)
    out = []
    for engine in engines:
        for step in steps:
            spec = dict(engine=engine, step=step, path=str(path), bench=str(Path(__file__).parent),
                        memory_limit=memory_limit)
            done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], cwd=ROOT, capture_output=True,
                                  text=True)
            if "RESULT " not in done.stdout:
                raise SystemExit(f"{engine} {step} failed:\n{done.stderr[-3000:]}")
            r = json.loads(done.stdout[done.stdout.rindex("RESULT ") + 7:].splitlines()[0])
            out.append((engine, step, r))
            print(f"  {engine} {step}: {r['seconds']:.1f} s, {r['peak_mib']:,.0f} MiB", file=sys.stderr)
    head = f"{'engine':<8}{'step':<6}{'rows':>12}{'slices':>8}{'seconds':>9}{'peak MiB':>10}"
    print(head)
    print("-" * len(head))
    for engine, step, r in out:
        print(f"{engine:<8}{step:<6}{rows:>12,}{r['slices']:>8,}{r['seconds']:>9.1f}{r['peak_mib']:>10,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["tallies", "memory"])
    ap.add_argument("--rows", default="1e6")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", nargs="+", default=["pandas", "duckdb"], choices=["pandas", "duckdb"])
    ap.add_argument("--steps", nargs="+", default=["mine", "scan"], choices=["mine", "scan"])
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB's memory limit (default 1GB)")
    args = ap.parse_args()
    rows = int(float(args.rows))
    started = time.perf_counter()
    if args.part == "tallies":
        tallies(rows, args.repeat)
    else:
        memory(rows, args.engines, args.steps, args.memory_limit)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()

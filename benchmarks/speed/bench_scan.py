"""Speed and memory of scan(): prints a table (dataset, support, rows, distinct rows, itemsets,
seconds, peak MiB, whole-process seconds and MiB).

    python benchmarks/speed/bench_scan.py                 # COMPAS and Adult (../shared/data) + synthetic 1e5..1e7
    python benchmarks/speed/bench_scan.py --quick         # skip the 1e7-row synthetic table
    python benchmarks/speed/bench_scan.py --divexplorer /path/to/venv/bin/python   # DivExplorer 0.2.6 beside us
    DIVERGENCE_KERNELS=jit python benchmarks/speed/bench_scan.py --quick    # numba's JIT kernels only

Each case runs in a fresh process (so peak memory is its own), after one warm-up call that
loads the compiled miner; "scan s" is the best of three calls of scan() on a loaded table
(mining and every per-itemset statistic); "process s" (and "proc MiB") is a whole
`python -m divergence scan ... --output` run on the same data. The first line says whether the
kernels built ahead of time (no numba in the process) or numba's JIT serve. DivExplorer, when given, runs `get_pattern_divergence` on the same data in
its own environment (it is not a dependency of the project).
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

CHILD = r'''
import json, resource, runpy, sys, time
import numpy as np, pandas as pd
from divergence import scan
spec = json.loads(sys.argv[1])
if spec["kind"] == "file":
    df = pd.read_csv(spec["path"])
    roles = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])
else:
    # correlated attributes from latent segments (benchmarks/tools/synthetic.py)
    segmented_attributes = runpy.run_path({bench!r} + "/synthetic.py")["segmented_attributes"]
    n = spec["rows"]
    rng = np.random.default_rng(0)
    df, seg = segmented_attributes(rng, n)
    logit = -1.0 + 0.4 * (df["a0"] == 0) + 0.3 * (df["a3"] == 1)
    y = rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy()))
    flip = rng.random(n) < np.where(y, 0.3, 0.1)
    df["class"] = y.astype(np.int8)
    df["predicted"] = (y ^ flip).astype(np.int8)
    roles = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])
s = spec["support"]
scan(df, min_support=s, exhaustive=True, **roles)  # warm-up: loads the compiled miner
best = float("inf")
for _ in range(spec.get("repeat", 3)):
    t = time.perf_counter()
    table = scan(df, min_support=s, exhaustive=True, **roles)  # every itemset, as DivExplorer
    best = min(best, time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
codes = table.kept_rows.codes.astype(np.int64)
key = np.zeros(len(codes), dtype=np.int64)
for j in range(codes.shape[1]):
    key = key * (int(codes[:, j].max()) + 2) + codes[:, j] + 1
distinct = len(pd.unique(key))
if spec.get("parquet"):
    df.to_parquet(spec["parquet"], index=False)
print(json.dumps(dict(itemsets=len(table), seconds=best, distinct=distinct, rows=len(df), peak_mib=peak)))
'''

DIVEX = r'''
import json, resource, sys, time
import pandas as pd
from divexplorer import DivergenceExplorer
from divexplorer.outcomes import get_false_positive_rate_outcome, get_false_negative_rate_outcome
path, s = sys.argv[1], float(sys.argv[2])
df = pd.read_csv(path)
df["fpr"] = get_false_positive_rate_outcome(df["class"], df["predicted"])
df["fnr"] = get_false_negative_rate_outcome(df["class"], df["predicted"])
attrs = [c for c in df.columns if c not in ("class", "predicted", "fpr", "fnr")]
t = time.perf_counter()
r = DivergenceExplorer(df[attrs + ["fpr", "fnr"]]).get_pattern_divergence(min_support=s, boolean_outcomes=["fpr", "fnr"])
print(json.dumps(dict(itemsets=len(r), seconds=time.perf_counter() - t,
                      peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
'''

DIVEX_JOB = r'''
import sys
import pandas as pd
from divexplorer import DivergenceExplorer
from divexplorer.outcomes import get_false_positive_rate_outcome, get_false_negative_rate_outcome
path, s, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
df = pd.read_csv(path)
df["fpr"] = get_false_positive_rate_outcome(df["class"], df["predicted"])
df["fnr"] = get_false_negative_rate_outcome(df["class"], df["predicted"])
attrs = [c for c in df.columns if c not in ("class", "predicted", "fpr", "fnr")]
r = DivergenceExplorer(df[attrs + ["fpr", "fnr"]]).get_pattern_divergence(min_support=s, boolean_outcomes=["fpr", "fnr"])
r.to_csv(out, index=False)
'''


def run_child(spec: dict) -> dict:
    code = CHILD.format(bench=str(ROOT / "benchmarks" / "tools"))
    # run in the checkout: `python -c` imports its divergence first
    out = subprocess.run([sys.executable, "-c", code, json.dumps(spec)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_divexplorer(python: str, path: Path, support: float) -> dict | None:
    out = subprocess.run([python, "-c", DIVEX, str(path), str(support)], capture_output=True, text=True)
    if out.returncode:
        print(f"  DivExplorer failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def cli_run(path: str, support: float) -> tuple[float, float]:
    """Seconds and peak MiB of a whole `python -m divergence scan ... --output` process."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "divergence", "scan", path,
               "--target", "class", "--prediction", "predicted", "--positive", "1", "--metric", "fpr,fnr",
               "--min-support", str(support), "--exhaustive", "--output", f"{tmp}/out.csv"]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
        seconds, kib = out.stderr.strip().splitlines()[-1].split()
        return float(seconds), float(kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the 1e7-row synthetic table")
    parser.add_argument("--divexplorer", metavar="PYTHON", help="python of a venv with divexplorer==0.2.6")
    args = parser.parse_args()

    from divergence.kernels.compiled import build_status

    print(f"kernels: {build_status()}; DIVERGENCE_KERNELS={os.environ.get('DIVERGENCE_KERNELS', 'auto')}")
    header = (f"{'dataset':<12} {'support':>8} {'rows':>11} {'distinct':>9} {'itemsets':>9} {'scan s':>8} "
              f"{'peak MiB':>9} {'process s':>10} {'proc MiB':>9}")
    if args.divexplorer:
        header += f" {'DivExp s':>9} {'speed-up':>9}"
    print(header)
    print("-" * len(header))
    cases = []
    for name, file in (("compas", "compas_discretized.csv"), ("adult", "adult_discretized.csv")):
        path = DATA / file
        if not path.exists():
            print(f"{name}: {path} not found, skipped")
            continue
        for s in (0.1, 0.05, 0.01, 0.005, 0.001):
            cases.append((name, dict(kind="file", path=str(path), support=s), path))
    for n in (100_000, 1_000_000) + (() if args.quick else (10_000_000,)):
        cases.append(("synthetic", dict(kind="synthetic", rows=n, support=0.01, repeat=1 if n >= 10**7 else 3),
                      None))
    data_dir = ROOT / "benchmarks" / "data"
    for name, spec, path in cases:
        if spec["kind"] == "synthetic":
            data_dir.mkdir(exist_ok=True)
            spec["parquet"] = str(data_dir / f"synthetic_{spec['rows']}.parquet")
        r = run_child(spec)
        line = (f"{name:<12} {spec['support']:>8g} {r['rows']:>11,} "
                f"{(str(r['distinct']) if r['distinct'] >= 0 else '-'):>9} {r['itemsets']:>9,} "
                f"{r['seconds']:>8.3f} {r['peak_mib']:>9.0f}")
        e2e, rss = cli_run(spec["parquet"] if spec["kind"] == "synthetic" else str(path), spec["support"])
        line += f" {e2e:>10.2f} {rss:>9.0f}"
        if args.divexplorer and path is not None:
            d = run_divexplorer(args.divexplorer, path, spec["support"])
            if d:
                line += f" {d['seconds']:>9.3f} {d['seconds'] / r['seconds']:>8.1f}x"
        print(line, flush=True)

    # whole processes: our CLI against a whole DivExplorer run, Adult at 0.005, both writing CSV
    adult = DATA / "adult_discretized.csv"
    if adult.exists():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "divergence", "scan", str(adult), "--target", "class", "--prediction",
                   "predicted", "--positive", "1", "--metric", "fpr,fnr", "--min-support", "0.005",
                   "--exhaustive", "--output", f"{tmp}/ours.csv"]
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)  # compile cache warm
            ours = min(timed(cmd) for _ in range(5))
            print(f"\nwhole process, Adult s=0.005 (read, scan, write CSV), best of 5: ours {ours:.2f} s", end="")
            if args.divexplorer:
                job = [args.divexplorer, "-c", DIVEX_JOB, str(adult), "0.005", f"{tmp}/theirs.csv"]
                theirs = min(timed(job) for _ in range(5))
                print(f", DivExplorer {theirs:.2f} s, speed-up {theirs / ours:.1f}x")
            else:
                print()


if __name__ == "__main__":
    main()

"""Speed of a scan whose error metric gets a verdict (defect or hard cohort): prints a table
(data, metric, support, slices, seconds of scan() here and, with --before, in an older
checkout, and the seconds of the verdict's walk alone).

    python benchmarks/speed/bench_verdict.py                      # this checkout
    python benchmarks/speed/bench_verdict.py --before /path/to/an/older/checkout
    python benchmarks/speed/bench_verdict.py --quick              # without the 200,000-row table

Each case runs in a fresh process per checkout, with the kernels that checkout's ordinary runs
use (its ahead-of-time build when fresh: build it there with ``python -m divergence.kernels._aot
--host``; the first line of each checkout says which); "scan s" is the best of three scan()
calls after a warm-up, "walk s" the time spent in the verdict's walk (stats.verdict_walk.walk_verdict)
during the best call. Adult comes from ../shared/data (DIVERGENCE_DATA), skipped when absent;
the synthetic table is 200,000 rows of 12 correlated attributes with a 0/1 and a real target.
A checkout before the verdict's walk existed has no walk column ("-"); this checkout stops with a
message when it has no walk_verdict where the script looks, or scan() never calls it there.
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
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

CHILD = r'''
import importlib, json, runpy, sys, time
import numpy as np, pandas as pd
from divergence import scan
try:  # where the kernels come from: the framework module, or (older checkouts) the build module
    from divergence.kernels.compiled import build_status as kernel_status
except ImportError:
    from divergence.kernels._aot import status as kernel_status
spec = json.loads(sys.argv[2])
if spec["data"] == "demo":
    from divergence.data.datasets import load_demo, DEMO_ATTRIBUTES, DEMO_ROLES
    df = load_demo()
    role = "regression" if spec["metric"] in ("abs_error", "squared_error") else "classification"
    kw = dict(DEMO_ROLES[role], attributes=DEMO_ATTRIBUTES)
elif spec["data"] == "synthetic":
    # correlated attributes from latent segments (benchmarks/tools/synthetic.py, this checkout's); a
    # 0/1 target with a classifier that errs more in some segments, and a real target with a regressor
    segmented_attributes = runpy.run_path(sys.argv[3] + "/synthetic.py")["segmented_attributes"]
    n = spec["rows"]
    rng = np.random.default_rng(0)
    df, seg = segmented_attributes(rng, n)
    attributes = list(df.columns)
    logit = -1.0 + 0.4 * (df["a0"] == 0) + 0.3 * (df["a3"] == 1)
    y = rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy()))
    flip = rng.random(n) < np.where(y, 0.3, 0.1) + 0.1 * (seg == 5)
    df["class"] = y.astype(np.int8)
    df["predicted"] = (y ^ flip).astype(np.int8)
    df["amount"] = np.exp(rng.normal(3 + 0.2 * seg, 0.5))
    df["forecast"] = df["amount"] * np.exp(rng.normal(0, 0.3 + 0.1 * (seg == 4), n))
    if spec["metric"] in ("abs_error", "squared_error"):
        kw = dict(target="amount", prediction="forecast", regression=True, attributes=attributes)
    else:
        kw = dict(target="class", prediction="predicted", positive=1, attributes=attributes)
else:
    df = pd.read_csv(spec["data"])
    kw = dict(target="class", prediction="predicted", positive=1)
kw.update(metrics=[spec["metric"]], min_support=spec["support"])
HOMES = ("divergence.stats.verdict_walk", "divergence.mining.lattice")  # where it lives; where it lived
CALLERS = ("divergence.stats.defect_tests",) + HOMES  # every module that may hold it by name


def module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


walk = next((w for w in (getattr(module(n), "walk_verdict", None) for n in HOMES) if w is not None), None)
if walk is None and spec["walk"]:
    raise SystemExit(f"bench_verdict: no walk_verdict in {' or '.join(HOMES)}: the walk column would be empty "
                     "(has it moved? update HOMES in benchmarks/speed/bench_verdict.py)")
spent, calls = [0.0], [0]
if walk is not None:  # the walk's own time, wherever the engine calls it from
    def timed(*args, **kwargs):
        calls[0] += 1
        t0 = time.perf_counter()
        try:
            return walk(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0
    for name in CALLERS:
        mod = module(name)
        if getattr(mod, "walk_verdict", None) is walk:
            setattr(mod, "walk_verdict", timed)
t = scan(df, **kw)  # warm-up: kernels loaded
if walk is not None and calls[0] == 0:  # its caller holds it under a module not in CALLERS
    if spec["walk"]:
        raise SystemExit(f"bench_verdict: scan() never called walk_verdict through {', '.join(CALLERS)}: "
                         "its caller holds it elsewhere (add that module to CALLERS)")
    walk = None  # an older checkout: "-" rather than a time that is not the walk's
best, best_walk = float("inf"), None
for _ in range(3):
    spent[0] = 0.0
    t0 = time.perf_counter()
    t = scan(df, **kw)
    s = time.perf_counter() - t0
    if s < best:
        best, best_walk = s, (spent[0] if walk is not None else None)
print(json.dumps({"seconds": best, "walk": best_walk, "slices": len(t) - 1, "kernels": kernel_status()}))
'''


def cases(quick: bool) -> list[tuple[str, dict]]:
    out = []
    adult = DATA / "adult_discretized.csv"
    if adult.exists():
        out += [("Adult", dict(data=str(adult), metric="error", support=s)) for s in (0.05, 0.01)]
    else:
        print(f"(Adult skipped: {adult} not found)", file=sys.stderr)
    for metric in ("error", "abs_error", "squared_error"):
        out += [("built-in", dict(data="demo", metric=metric, support=s)) for s in (0.02, 0.005)]
    if not quick:
        out += [("synthetic 200,000 rows", dict(data="synthetic", rows=200_000, metric=m, support=0.01))
                for m in ("error", "squared_error")]
    return out


def run(root: str, spec: dict) -> dict:
    """One case in a fresh process of ``root``'s checkout; this checkout must have the verdict's walk
    (an older one may not: its walk column is "-")."""
    spec = {**spec, "walk": Path(root).resolve() == ROOT}
    # run in the checkout: `python -c` imports its divergence first
    r = subprocess.run([sys.executable, "-c", CHILD, root, json.dumps(spec), str(ROOT / "benchmarks" / "tools")], capture_output=True,
                       text=True, cwd=root)
    if r.returncode != 0:
        raise SystemExit(f"{root}: {spec}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default=None, help="a checkout of the code before, to compare")
    p.add_argument("--quick", action="store_true", help="skip the 200,000-row synthetic table")
    args = p.parse_args(argv)
    roots = [("after", str(ROOT))] + ([("before", args.before)] if args.before else [])
    head = "| data | metric | support | slices |"
    rule = "|---|---|---:|---:|"
    for code, _ in roots:
        head += f" scan s ({code}) | walk s ({code}) |"
        rule += "---:|---:|"
    if args.before:
        head += " speed-up |"
        rule += "---:|"
    print(head)
    print(rule, flush=True)
    kernels = {}
    for label, spec in cases(args.quick):
        res = {code: run(root, spec) for code, root in roots}
        for code in res:
            kernels.setdefault(code, res[code]["kernels"])
        line = f"| {label} | {spec['metric']} | {spec['support']} | {res['after']['slices']:,} |"
        for code, _ in roots:
            w = res[code]["walk"]
            line += f" {res[code]['seconds']:.2f} | {'-' if w is None else f'{w:.2f}'} |"
        if args.before:
            line += f" {res['before']['seconds'] / res['after']['seconds']:.1f}× |"
        print(line, flush=True)
    for code, status in kernels.items():
        print(f"\n{code}: {status}")


if __name__ == "__main__":
    main()

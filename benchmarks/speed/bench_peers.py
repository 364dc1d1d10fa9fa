"""Whole processes against the peers, each on its own task: our command line and the peer's job,
run in turn (ours, theirs, ours, ...), each timed from outside with /usr/bin/time -v (wall, CPU
= user + system, peak memory). Prints, per task, the medians and the median of the paired ratios
peer / ours.

    python benchmarks/speed/bench_peers.py --peers /work/peers            # every task with a venv
    python benchmarks/speed/bench_peers.py --peers DIR --tasks divexplorer-0.005 --runs 7
    python benchmarks/speed/bench_peers.py --show                          # print the commands only

Each peer lives in its own venv under ``--peers`` (never in the project's requirements):
``DIR/divexplorer`` (``pip install divexplorer==0.2.6``), ``DIR/sliceline`` (``pip install
'sliceline[optimized]==0.3.0' pandas``: with numba; its job reads the CSV with pandas, which sliceline 0.3.0 does not install), ``DIR/pysubgroup`` (``pip install pysubgroup``: it pins
numpy < 2) and ``DIR/fairlearn`` (``pip install fairlearn``). A task whose venv is missing is
skipped. The jobs below are what each peer needs to do the task from the CSV file to its answer;
ours is one ``python -m divergence`` command with every statistic on.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))
ADULT = DATA / "adult_discretized.csv"
ATTRIBUTES = ["age", "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
              "capital-gain", "capital-loss", "hours-per-week"]

#: DivExplorer 0.2.6: FPR and FNR of every itemset above the support, written as CSV
DIVEXPLORER_JOB = r'''
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

#: pysubgroup: the share of class=1, every subgroup of at most 3 selectors, the top 10 by WRAcc (Apriori)
PYSUBGROUP_JOB = r'''
import sys
import pandas as pd
import pysubgroup as ps
path, out = sys.argv[1], sys.argv[2]
df = pd.read_csv(path)
data = df.drop(columns=["predicted"]).astype({c: str for c in df.columns if c not in ("class", "predicted")})
task = ps.SubgroupDiscoveryTask(data, ps.BinaryTarget("class", 1), ps.create_selectors(data, ignore=["class"]),
                                result_set_size=10, depth=3, qf=ps.WRAccQF())
ps.Apriori().execute(task).to_dataframe().to_csv(out, index=False)
'''

#: SliceLine 0.3.0 (numba): the model's 0/1 error, slices of at most 3 items with at least 226 rows
#: (0.5% of Adult), the top 10 by its score at alpha 0.95
SLICELINE_JOB = r'''
import sys
import pandas as pd
from sliceline import Slicefinder
path, out = sys.argv[1], sys.argv[2]
df = pd.read_csv(path)
X = df.drop(columns=["class", "predicted"]).astype(str)
errors = (df["class"] != df["predicted"]).to_numpy().astype(float)
sf = Slicefinder(alpha=0.95, k=10, max_l=3, min_sup=226, verbose=False).fit(X, errors)
rows = [dict(zip(X.columns, s), **st) for s, st in zip(sf.top_slices_, sf.top_slices_statistics_)]
pd.DataFrame(rows).to_csv(out, index=False)
'''

#: fairlearn: FPR and FNR by sex, by race and by sex x race (MetricFrame), with each group's size
FAIRLEARN_JOB = r'''
import sys
import pandas as pd
from fairlearn.metrics import MetricFrame, count, false_negative_rate, false_positive_rate
path, out = sys.argv[1], sys.argv[2]
df = pd.read_csv(path)
metrics = {"fpr": false_positive_rate, "fnr": false_negative_rate, "count": count}
parts = []
for groups in (["sex"], ["race"], ["sex", "race"]):
    mf = MetricFrame(metrics=metrics, y_true=df["class"], y_pred=df["predicted"], sensitive_features=df[groups])
    parts.append(mf.by_group.reset_index())
pd.concat(parts).to_csv(out, index=False)
'''

SCAN = [sys.executable, "-m", "divergence", "scan", str(ADULT)]
ROLES = ["--target", "class", "--prediction", "predicted", "--positive", "1"]


def tasks(peers: Path, tmp: str) -> dict[str, tuple[str, list[str], list[str]]]:
    """name -> (what, our command, the peer's command)."""
    out = {}
    for s in ("0.005", "0.01"):
        out[f"divexplorer-{s}"] = (
            f"Adult s={s}, fpr+fnr, every itemset, CSV in -> CSV out (DivExplorer 0.2.6)",
            SCAN + ROLES + ["--metric", "fpr,fnr", "--min-support", s, "--exhaustive", "--output", f"{tmp}/ours.csv"],
            [str(peers / "divexplorer/bin/python"), "-c", DIVEXPLORER_JOB, str(ADULT), s, f"{tmp}/theirs.csv"])
    out["pysubgroup"] = (
        "Adult, share of class=1 over <= 3 items, top 10 by WRAcc (pysubgroup Apriori)",
        SCAN + ["--outcome", "class", "--attributes", ",".join(ATTRIBUTES), "--max-length", "3", "--min-support", "1/45222",
                "--sort-by", "wracc", "--top", "10"],
        [str(peers / "pysubgroup/bin/python"), "-c", PYSUBGROUP_JOB, str(ADULT), f"{tmp}/theirs.csv"])
    out["sliceline"] = (
        "Adult, 0/1 error over <= 3 items with >= 226 rows, top 10 by SliceLine's score (sliceline 0.3.0, numba)",
        SCAN + ROLES + ["--metric", "error", "--attributes",
                ",".join(ATTRIBUTES), "--max-length", "3", "--min-support", "226", "--sort-by", "sliceline",
                "--top", "10"],
        [str(peers / "sliceline/bin/python"), "-c", SLICELINE_JOB, str(ADULT), f"{tmp}/theirs.csv"])
    out["fairlearn"] = (
        "Adult, fpr+fnr of sex, race and sex x race (fairlearn MetricFrame)",
        SCAN + ROLES + ["--metric", "fpr,fnr", "--attributes", "sex,race", "--min-support", "1/45222", "--exhaustive",
                        "--output", f"{tmp}/ours.csv"],
        [str(peers / "fairlearn/bin/python"), "-c", FAIRLEARN_JOB, str(ADULT), f"{tmp}/theirs.csv"])
    return out


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak MiB of one whole process."""
    done = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(f"{cmd[:4]} failed: {done.stderr.strip().splitlines()[-25:]}")
    fields = {}
    for line in done.stderr.splitlines():
        key, _, value = line.strip().rpartition(": ")
        fields[key] = value
    wall = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
    return seconds, cpu, float(fields["Maximum resident set size (kbytes)"]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", default="/work/peers", help="the folder of the peers' venvs")
    parser.add_argument("--tasks", help="comma-separated task names (default: every task with a venv)")
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs after one warm-up pair (default 5)")
    parser.add_argument("--show", action="store_true", help="print each task's two commands and stop")
    args = parser.parse_args()
    peers = Path(args.peers)
    with tempfile.TemporaryDirectory() as tmp:
        todo = tasks(peers, tmp)
        names = args.tasks.split(",") if args.tasks else list(todo)
        if not args.show:
            print(f"{'task':<18} {'ours wall':>9} {'CPU':>6} {'MiB':>5} {'peer wall':>9} {'CPU':>6} {'MiB':>5} "
                  f"{'ratio wall':>10} {'CPU':>6} {'MiB':>6}")
        for name in names:
            what, ours, theirs = todo[name]
            if args.show:
                print(f"{name}: {what}\n  ours:  {' '.join(ours)}\n  peer:  {theirs[0]} -c <{name} job> "
                      f"{' '.join(theirs[3:])}")
                continue
            if not Path(theirs[0]).exists():
                print(f"{name}: no venv at {theirs[0]}, skipped")
                continue
            measure(ours), measure(theirs)  # warm-up pair: caches, compiled kernels
            a, b = [], []
            for _ in range(args.runs):
                a.append(measure(ours))
                b.append(measure(theirs))
            med = lambda rows, i: statistics.median(r[i] for r in rows)  # noqa: E731
            ratio = lambda i: statistics.median(y[i] / x[i] for x, y in zip(a, b))  # noqa: E731
            print(f"{name:<18} {med(a, 0):>9.2f} {med(a, 1):>6.2f} {med(a, 2):>5.0f} {med(b, 0):>9.2f} "
                  f"{med(b, 1):>6.2f} {med(b, 2):>5.0f} {ratio(0):>9.2f}x {ratio(1):>5.2f}x {ratio(2):>5.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()

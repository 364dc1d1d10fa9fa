"""Where the time of one peer task's command goes (issue 49): the command of
``bench_peers.py --tasks NAME`` run whole, in fresh processes, with each phase timed from inside in
CPU and wall seconds: the interpreter's start, the imports (numpy, pandas with pyarrow, the
command's own modules), reading the file, preparing the columns, mining, the statistics (the
distinct findings' search apart) and the output (ranking and summary, or the written file). The
medians of ``--runs`` processes (after one warm-up).

    python benchmarks/speed/bench_task_phases.py --task pysubgroup --runs 5
    python benchmarks/speed/bench_task_phases.py --task sliceline

The phases are the command's own functions, wrapped by name (a renamed one shows up as ``rest``);
``rest`` is the command's time outside them (parsing the options, notes, exit).
"""
from __future__ import annotations

import argparse
import json
import runpy
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

from bench_peers import tasks  # noqa: E402  (its neighbour: the tasks and their commands)

#: run in the child: the command's phases, timed by wrapping its functions
HARNESS = r'''
import json, os, sys, time
t0 = (time.perf_counter(), time.process_time())
started = float(os.environ["PHASES_STARTED"])
out = {"interpreter start": [time.process_time(), time.time() - started]}
imported = [0.0, 0.0]  # CPU and wall of the imports made inside the phases (counted apart)
def lap(name, t, imp=None):
    now = (time.perf_counter(), time.process_time())
    got = out.setdefault(name, [0.0, 0.0])
    got[0] += now[1] - t[1]; got[1] += now[0] - t[0]
    if imp is not None:
        got[0] -= imported[0] - imp[0]; got[1] -= imported[1] - imp[1]
    return now
import numpy  # noqa
t = lap("import numpy", t0)
import pandas  # noqa
t = lap("import pandas (+pyarrow)", t)
from divergence.cli import cli
t = lap("import the command", t)
import builtins
_import, depth = builtins.__import__, [0]
def counted_import(*a, **k):
    if depth[0]:
        return _import(*a, **k)
    depth[0] += 1
    s = (time.perf_counter(), time.process_time())
    try:
        return _import(*a, **k)
    finally:
        depth[0] -= 1
        imported[0] += time.process_time() - s[1]; imported[1] += time.perf_counter() - s[0]
builtins.__import__ = counted_import
import functools, importlib
active = []
def wrap(module, owner, name, phase):
    try:
        holder = importlib.import_module(module)
        if owner:
            holder = getattr(holder, owner)
        f = getattr(holder, name)
    except (ImportError, AttributeError):
        return
    @functools.wraps(f)
    def timed(*a, **k):
        if active:  # nested: counted by the outer phase (less what is its own phase)
            return f(*a, **k)
        active.append(phase)
        s, imp = (time.perf_counter(), time.process_time()), list(imported)
        try:
            return f(*a, **k)
        finally:
            active.pop()
            lap(phase, s, imp)
    setattr(holder, name, timed)
PHASES = [("divergence.data.io", None, "load_table", "read"), ("divergence.data.io", None, "read_table", "read"),
          ("divergence.scan", None, "prepare", "prepare"), ("divergence.scan", None, "mine_prepared", "mine"),
          ("divergence.scan", None, "measure", "mine"),
          ("divergence.stats.findings_columns", None, "distinct_findings", "statistics: distinct findings"),
          ("divergence.cli.cli", None, "_summary", "output"), ("divergence.cli.cli", None, "_sorted_frame", "output"),
          ("divergence.cli.cli", None, "_write_csv", "output")]
import divergence.stats.assess, divergence.stats.findings_columns  # noqa (imported by the scan anyway)
for module, owner, name, phase in PHASES:
    wrap(module, owner, name, phase)
# the statistics less the findings' search: assess() timed as a whole, the search taken out after
import divergence.scan as _scan_module
_assess = divergence.stats.assess.assess
def assess(*a, **k):
    s, imp = (time.perf_counter(), time.process_time()), list(imported)
    before = list(out.get("statistics: distinct findings", [0.0, 0.0]))
    try:
        return _assess(*a, **k)
    finally:
        now = (time.perf_counter(), time.process_time())
        inner = out.get("statistics: distinct findings", [0.0, 0.0])
        got = out.setdefault("statistics: the rest", [0.0, 0.0])
        got[0] += now[1] - s[1] - (inner[0] - before[0]) - (imported[0] - imp[0])
        got[1] += now[0] - s[0] - (inner[1] - before[1]) - (imported[1] - imp[1])
divergence.stats.assess.assess = assess
sys.stdout = open(os.devnull, "w")
code = cli.main(sys.argv[1:])
t = (time.perf_counter(), time.process_time())
out["imports inside the command"] = imported
out["total"] = [t[1], time.time() - started]
sys.stderr.write("PHASES " + json.dumps(out) + "\n")
sys.exit(code)
'''


def one(argv: list[str]) -> dict:
    """One fresh process of the command: {phase: [CPU, wall]}."""
    import os
    import time

    env = dict(os.environ, PHASES_STARTED=repr(time.time()))
    done = subprocess.run([sys.executable, "-c", HARNESS, *argv], capture_output=True, text=True, cwd=ROOT, env=env)
    line = [x for x in done.stderr.splitlines() if x.startswith("PHASES ")]
    if done.returncode or not line:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(line[-1][len("PHASES "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="pysubgroup", help="a task of bench_peers.py (default pysubgroup)")
    parser.add_argument("--runs", type=int, default=5, help="processes after one warm-up (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        what, ours, _ = tasks(Path("/nonexistent"), tmp)[args.task]
        argv = ours[3:]  # after "python -m divergence"
        one(argv)
        runs = [one(argv) for _ in range(args.runs)]
    print(f"{args.task}: {what}\n  {' '.join(ours)}\n")
    names = [n for n in runs[0] if n != "total"]
    for r in runs:  # each process's time outside the phases
        r["rest"] = [r["total"][i] - sum(r.get(n, [0.0, 0.0])[i] for n in names) for i in (0, 1)]
    rows = {n: [statistics.median(r.get(n, [0.0, 0.0])[i] for r in runs) for i in (0, 1)] for n in names + ["rest"]}
    total = [statistics.median(r["total"][i] for r in runs) for i in (0, 1)]
    print(f"{'phase':<32} {'CPU s':>7} {'share':>6} {'wall s':>7}")
    for n, (c, w) in rows.items():
        print(f"{n:<32} {c:>7.3f} {c / total[0]:>6.0%} {w:>7.3f}")
    print(f"{'total':<32} {total[0]:>7.3f} {'':>6} {total[1]:>7.3f}")
    print("(each phase's median over the processes: the medians need not add up to the total's)")


if __name__ == "__main__":
    main()

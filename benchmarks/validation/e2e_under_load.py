"""The browser tests on a busy machine (issue 32 point 4): the e2e folder run several times in a row
while other processes keep every core busy, one table row per run.

    python benchmarks/validation/e2e_under_load.py                 # 3 runs, 2 busy processes (one per core here)
    python benchmarks/validation/e2e_under_load.py --runs 1 --busy 0   # the idle time, for comparison
    python benchmarks/validation/e2e_under_load.py -k compare      # a part of the folder (pytest's -k)

The load is pure Python arithmetic in separate processes (no I/O, no memory to speak of), started
before the first run and stopped after the last; the machine's one-minute load average is read at
the end of each run.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for i in range(200_000):
            x = (x * 31 + i) % 1_000_003


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy processes (default: one per core)")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    args = ap.parse_args(argv)
    stop = mp.Event()
    busy = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    rows = []
    try:
        for run in range(1, args.runs + 1):
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/e2e", "-rf"]
            if args.k:
                cmd += ["-k", args.k]
            t0 = time.monotonic()
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            took = time.monotonic() - t0
            out = proc.stdout
            counts = dict((k, int(v)) for v, k in re.findall(r"(\d+) (passed|failed|error|skipped)", out.splitlines()[-1]
                                                             if out.strip() else ""))
            failed = re.findall(r"^FAILED (\S+)", out, flags=re.M) + re.findall(r"^ERROR (\S+)", out, flags=re.M)
            rows.append((run, counts.get("passed", 0), counts.get("failed", 0) + counts.get("error", 0),
                         counts.get("skipped", 0), took, os.getloadavg()[0], failed))
            print(f"run {run}: {out.strip().splitlines()[-1] if out.strip() else proc.stderr[-300:]}", flush=True)
            log = ROOT / "tests" / "e2e" / "artifacts" / f"under_load_run{run}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(out + proc.stderr)
    finally:
        stop.set()
        for p in busy:
            p.join(5)
    print("\n| run | passed | failed | skipped | seconds | load (1 min) | failed tests |\n|---:|---:|---:|---:|---:|---:|---|")
    for run, passed, failed, skipped, took, load, names in rows:
        print(f"| {run} | {passed} | {failed} | {skipped} | {took:.0f} | {load:.1f} | {', '.join(names) or '-'} |")
    print(f"\n{args.busy} busy processes on {os.cpu_count()} cores")
    return 0 if all(r[2] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

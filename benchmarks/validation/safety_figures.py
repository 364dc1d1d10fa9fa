"""Safety on a shared network and against hostile files, the same answer on a busy machine (issue
21): the figures of docs/safety.md (tables in docs/performance.md), one table per section.

    python benchmarks/validation/safety_figures.py                       # every section
    python benchmarks/validation/safety_figures.py --only plan,bomb      # some of them

Sections:

- ``plan``: the "billion laughs" plan (nested YAML aliases, under 700 bytes) given to ``report``: a
  whole command-line process, its seconds and peak memory (VmHWM).
- ``bomb``: a 1 MB gzip bomb named ``.csv`` (about 1 GB inflated) given to ``scan``: the same.
- ``concurrency``: six heavy scans at once through the dashboard's worker pool (every itemset of
  the raw COMPAS file, exhaustive, its default attributes), as six sessions would start them: the
  most workers alive at once and their summed resident memory (sampled every 0.1 s), against the
  pool's limits and ceiling.
- ``determinism``: a 1,000,000-row scan (the benchmarks' synthetic table, 12 attributes, support
  0.0005, its default budget) idle and with busy processes on every core: slices, whether the two
  tables are identical; and, for contrast, the same request bounded by a 5-second time limit only.

The health endpoint during a gzip bomb uploaded through the browser is measured by
``tests/e2e/test_safety_browser.py`` (it prints the worst answer).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import runpy
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))
PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"


def whole_process(args: list[str]) -> tuple[int, float, float, str]:
    """(exit status, seconds, peak MiB, last line of standard error) of ``main(args)`` in a new process."""
    code = ("import sys, time\nt = time.monotonic()\nfrom divergence.cli.cli import main\n"
            f"status = main(sys.argv[1:])\nprint(status, time.monotonic() - t, {PEAK})")
    run = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    status, seconds, peak = run.stdout.split()[-3:]
    return int(status), float(seconds), int(peak) / 1024, (run.stderr.strip().splitlines() or [""])[-1]


def section_plan(tmp: Path) -> None:
    lines = ["divergence_plan: 1", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines.append("scan: {target: *i}")
    plan = tmp / "laughs.yaml"
    plan.write_text("\n".join(lines) + "\n")
    data = tmp / "data.csv"
    data.write_text("a,b\n1,2\n")
    status, seconds, peak, line = whole_process(["report", str(plan), str(data), "--output", str(tmp / "r.html")])
    print("\n| plan | bytes | exit | seconds (import, read, refuse) | peak MiB | message |\n|---|---:|---:|---:|---:|---|")
    print(f"| billion laughs (9 levels of 9 aliases) | {plan.stat().st_size} | {status} | {seconds:.2f} | {peak:.0f} | "
          f"{line[:90]}… |")


def gzip_bomb(path: Path) -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(b"0" * (64 << 20)) + c.flush()
    head = zlib.compressobj(9, zlib.DEFLATED, 31)
    path.write_bytes(head.compress(b"a,b\n") + head.flush() + member * 16)


def section_bomb(tmp: Path) -> None:
    path = tmp / "evaluation.csv"
    gzip_bomb(path)
    status, seconds, peak, line = whole_process(["scan", str(path), "--outcome", "a"])
    print("\n| file | bytes | inflates to | exit | seconds (import, read, refuse) | peak MiB | message |\n"
          "|---|---:|---:|---:|---:|---:|---|")
    print(f"| gzip bomb named .csv | {path.stat().st_size:,} | 1 GiB | {status} | {seconds:.2f} | {peak:.0f} | "
          f"{line[:80]}… |")


def _compas_request():
    import pandas as pd

    import ui.worker as worker

    df = pd.read_csv(DATA / "compas-scores-two-years.csv", low_memory=False)
    kw = dict(target="two_year_recid", score="decile_score", threshold=8, positive=1, metrics=["fpr", "fnr"],
              min_support=0.05, exhaustive=True)
    return worker.ScanRequest(scan=kw, statistics=dict(confidence=0.95, correction="bh", bootstrap=0, seed=0,
                                                       exploratory=True), frame=df)


def section_concurrency(tmp: Path) -> None:
    import ui.pool as pool
    import ui.worker as worker

    if not (DATA / "compas-scores-two-years.csv").exists():
        print(f"\n(concurrency: {DATA / 'compas-scores-two-years.csv'} not found: skipped)")
        return
    limits = worker.POOL.limits
    t0 = time.monotonic()
    jobs = [worker.start(_compas_request(), label=f"session {k}") for k in range(6)]
    most_alive, most_rss, most_waiting, server = 0, 0, 0, 0
    while any(j.running for j in jobs):
        alive = [j for j in jobs if j.process is not None and j.process.is_alive()]
        most_alive = max(most_alive, len(alive))
        most_rss = max(most_rss, sum(pool.resident_bytes(j.process.pid) for j in alive))
        most_waiting = max(most_waiting, worker.POOL.status()["waiting"])
        server = max(server, pool.resident_bytes(os.getpid()))
        time.sleep(0.1)
    seconds = time.monotonic() - t0
    states = [j.state for j in jobs]
    peaks = [j.peak_bytes / (1 << 20) for j in jobs]
    print("\n| six heavy scans at once | workers allowed | most alive at once | most waiting | workers' memory "
          "(most, summed) | ceiling (workers x memory) | largest worker | this process (the six results held) | "
          "states | seconds |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    print(f"| raw COMPAS, every itemset, support 0.05 | {limits.workers} | {most_alive} | {most_waiting} | "
          f"{most_rss / (1 << 20):,.0f} MiB | {limits.ceiling / (1 << 20):,.0f} MiB | {max(peaks):,.0f} MiB | "
          f"{server / (1 << 20):,.0f} MiB | {', '.join(sorted(set(states)))} | {seconds:.0f} |")


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _million():
    import runpy

    segmented_attributes = runpy.run_path(str(ROOT / "benchmarks" / "tools" / "synthetic.py"))["segmented_attributes"]

    rng = np.random.default_rng(0)
    df, seg = segmented_attributes(rng, 1_000_000)
    df["o"] = rng.normal(size=len(df)) + 0.1 * seg
    return df


def _timed_scan(df, **kw):
    from divergence import scan

    t0 = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = scan(df, outcome="o", min_support=0.0005, bootstrap=0, **kw)
    return table, time.monotonic() - t0


def section_determinism(tmp: Path) -> None:
    df = _million()
    rows = []
    for label, kw in (("default budget (work and slices; 600 s safety net)", {}),
                      ("for contrast: a 5 s time limit only", dict(time_limit=5.0, max_work=None))):
        quiet, q_s = _timed_scan(df, **kw)
        stop = mp.Event()
        busy = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(2 * os.cpu_count())]
        for p in busy:
            p.start()
        try:
            time.sleep(1.0)
            loaded, l_s = _timed_scan(df, **kw)
        finally:
            stop.set()
            for p in busy:
                p.join(5)
        same = (len(quiet) == len(loaded) and list(quiet.itemsets) == list(loaded.itemsets)
                and np.array_equal(quiet.tallies, loaded.tallies))
        rows.append(f"| {label} | {len(quiet) - 1:,} ({quiet.lattice.cut_by or 'complete'}, up to "
                    f"{quiet.lattice.complete_length or 'every'} item(s)), {q_s:.0f} s | {len(loaded) - 1:,} "
                    f"({loaded.lattice.cut_by or 'complete'}, up to {loaded.lattice.complete_length or 'every'} item(s)), {l_s:.0f} s | "
                    f"{'yes' if same else 'no'} |")
    print(f"\n| 1,000,000 rows, 12 attributes, support 0.0005 | idle (load {os.getloadavg()[0]:.1f} at the end) | "
          f"{2 * os.cpu_count()} busy processes | same table |\n|---|---|---|---|")
    print("\n".join(rows))


SECTIONS = {"plan": section_plan, "bomb": section_bomb, "concurrency": section_concurrency,
            "determinism": section_determinism}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections: {', '.join(SECTIONS)}")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            SECTIONS[name.strip()](Path(tmp))
    sys.stdout.flush()


if __name__ == "__main__":
    threading.current_thread().name = "main"
    main()

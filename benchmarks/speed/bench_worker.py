"""The dashboard's scan worker (ui/worker.py): start-up cost, overhead against the engine run in
process, and how fast Cancel stops a scan. Prints a table; rerun it to compare.

    python benchmarks/speed/bench_worker.py

- "start-up": from ``ui.worker.start()`` until the worker has its data and begins computing, for
  the start methods ``spawn`` (a fresh interpreter per scan) and ``forkserver`` (what the app
  uses: the first scan starts the fork server, which imports the engine once; later workers are
  forked from it). The request is the built-in dataset's default scan (10,000 rows).
- "whole job": start-up, mining and statistics in the worker, the result back in this process;
  against the same work in process ("in process").
- "cancel": a scan that would run for minutes (every itemset of one row or more over 30
  attributes), cancelled after two seconds of mining: seconds until its process is gone.

Medians of 5 runs (start-up, whole job) or 3 (cancel), on a machine shared with other work: the
spread is printed too.
"""
from __future__ import annotations

import runpy
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence

import ui.worker as worker  # noqa: E402
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo  # noqa: E402

STATS = dict(confidence=0.95, correction="bh", bootstrap=200, seed=0, exploratory=True)


def demo_request() -> worker.ScanRequest:
    return worker.ScanRequest(scan=dict(attributes=list(DEMO_ATTRIBUTES), min_support=0.02,
                                        **DEMO_ROLES["classification"]), statistics=dict(STATS), frame=load_demo())


def long_request() -> worker.ScanRequest:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"a{i}": rng.integers(0, 3, 4000) for i in range(30)})
    df["y"], df["p"] = rng.integers(0, 2, 4000), rng.integers(0, 2, 4000)
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=1 / 4000)
    if worker._accepts(__import__("divergence").scan, "exhaustive"):
        kw.update(exhaustive=True, time_limit=3600, max_slices=10**8)
    return worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=df)


def run(method: str, request: worker.ScanRequest) -> tuple[float, float]:
    job = worker.start(request, method=method)
    assert job.wait(600) == "done", job.error
    return job.worker_started - job.started, job.finished - job.started


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values):7.3f}  ({min(values):.3f}–{max(values):.3f})"


def main() -> None:
    rows = []
    request = demo_request()
    for method in ("spawn", "forkserver"):
        first = run(method, request)
        rest = [run(method, request) for _ in range(5)]
        label = "first (starts the fork server)" if method == "forkserver" else "first"
        rows.append((f"start-up, {method}", label, fmt([first[0]])))
        rows.append((f"start-up, {method}", "later", fmt([r[0] for r in rest])))
        rows.append((f"whole job, {method}", "later", fmt([r[1] for r in rest])))
    inproc = []
    for _ in range(5):
        t0 = time.monotonic()
        worker.compute(request)
        inproc.append(time.monotonic() - t0)
    rows.append(("whole job, in process", "(what the server did before)", fmt(inproc)))

    cancels = []
    for _ in range(3):
        job = worker.start(long_request())
        deadline = time.monotonic() + 120
        while (job.progress.get("stage") != "mining" or job.elapsed < 2) and time.monotonic() < deadline:
            job.wait(0.5, seen=job.updates)
        assert job.running, job.error
        cancels.append(job.cancel())
        assert not job.process.is_alive()
    rows.append(("cancel (SIGTERM, then SIGKILL after 2 s)", "mid-mining", fmt(cancels)))

    print(f"{'what':<42}  {'case':<32}  {'seconds: median (min–max)'}")
    for what, case, value in rows:
        print(f"{what:<42}  {case:<32}  {value}")


if __name__ == "__main__":
    main()

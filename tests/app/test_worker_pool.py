"""Workers bounded (issue 21): at most the configured number of scans run at once on a server, the
others wait in a queue that the progress line shows ("waiting for a free worker, 2 ahead"); a worker
past its memory is stopped with one line; a closed session's scan (queued or running) is stopped
within a few seconds."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

import ui.pool as workers
import ui.worker as worker
from ui.job import progress_text

STATS = dict(confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)


def _heavy(seed: int = 0, rows: int = 4000) -> worker.ScanRequest:
    """A scan that runs for a long time: 30 attributes of 3 values, every itemset of one row or more."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"a{i}": rng.integers(0, 3, rows) for i in range(30)})
    df["y"] = rng.integers(0, 2, rows)
    df["p"] = rng.integers(0, 2, rows)
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=1 / rows, exhaustive=True,
              max_work=None, time_limit=600, max_slices=10**8)
    return worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=df)


@pytest.fixture
def pool():
    old = worker.POOL._limits
    yield worker.POOL
    worker.POOL.configure(old)


def _wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_at_most_the_configured_workers_run_and_the_rest_wait_in_order(pool):
    pool.configure(workers.WorkerLimits(workers=2, memory=8 << 30))
    jobs = [worker.start(_heavy(seed=k)) for k in range(6)]
    try:
        _wait_for(lambda: sum(j.worker_started is not None for j in jobs) == 2)
        time.sleep(1.0)
        alive = [j for j in jobs if j.process is not None and j.process.is_alive()]
        assert len(alive) == 2 and pool.status()["running"] == 2 and pool.status()["waiting"] == 4
        waiting = [j for j in jobs if j.process is None]
        assert [j.progress["stage"] for j in waiting] == [workers.WAITING] * 4
        assert [j.progress["ahead"] for j in waiting] == [0, 1, 2, 3]  # in the order they came
        assert progress_text(waiting[2])[1].startswith("Waiting for a free worker, 2 ahead (the server runs 2 at once)")
        assert progress_text(waiting[0])[1].startswith("Waiting for a free worker, next in line")
        first = next(j for j in jobs if j.process is not None)
        first.cancel()  # a worker freed: the first in line starts, no one else
        _wait_for(lambda: waiting[0].worker_started is not None)
        time.sleep(0.5)
        assert sum(j.process is not None and j.process.is_alive() for j in jobs) == 2
        assert [j.progress["ahead"] for j in waiting[1:]] == [0, 1, 2]
        waiting[1].cancel()  # a queued job cancelled leaves the queue at once
        _wait_for(lambda: [j.progress["ahead"] for j in waiting[2:]] == [0, 1], 10)
    finally:
        for j in jobs:
            j.cancel()
    _wait_for(lambda: pool.status()["running"] == 0 and pool.status()["waiting"] == 0, 30)


def test_a_worker_past_its_memory_is_stopped_in_one_line(pool):
    pool.configure(workers.WorkerLimits(workers=1, memory=300 << 20))
    request = _heavy(rows=8000)
    request.statistics["bootstrap"] = 200  # about 450 MB at its peak, unbounded
    job = worker.start(request)
    assert job.wait(300) == "error"
    assert job.error.startswith("The scan went past the memory one scan may use on this server (0.293 GB) and was "
                                "stopped: raise the minimum support")
    assert "\n" not in job.error and not job.process.is_alive()
    assert 300 << 20 < job.peak_bytes < (300 << 20) + (150 << 20)  # noticed within a tenth of a second


@pytest.mark.parametrize("queued", [False, True])
def test_a_closed_sessions_scan_is_stopped_within_seconds(pool, queued):
    pool.configure(workers.WorkerLimits(workers=1, memory=8 << 30))
    blocker = worker.start(_heavy(seed=9)) if queued else None
    alive = {"open": True}
    job = worker.start(_heavy(rows=40_000), owner_alive=lambda: alive["open"])  # runs well past the grace
    try:
        if queued:
            _wait_for(lambda: job.progress.get("stage") == workers.WAITING)
        else:
            _wait_for(lambda: job.worker_started is not None)
        t0 = time.monotonic()
        alive["open"] = False  # the tab is closed
        assert job.wait(30) == "cancelled"
        assert time.monotonic() - t0 < workers.ORPHAN_GRACE + 3
        if job.process is not None:
            job.process.join(5)
            assert not job.process.is_alive()
    finally:
        job.cancel()
        if blocker is not None:
            blocker.cancel()


def test_the_default_limits_follow_cores_and_memory(monkeypatch):
    monkeypatch.setenv("DIVERGENCE_SCAN_MEMORY", str(6 << 30))
    monkeypatch.setenv("DIVERGENCE_WORKER_MEMORY", str(4 << 30))
    monkeypatch.delenv("DIVERGENCE_WORKERS", raising=False)
    assert worker.default_limits() == workers.WorkerLimits(workers=1, memory=4 << 30)  # 6 GB holds one 4 GB worker
    monkeypatch.setenv("DIVERGENCE_WORKERS", "3")
    limits = worker.default_limits()
    assert limits.workers == 3 and limits.ceiling == 12 << 30

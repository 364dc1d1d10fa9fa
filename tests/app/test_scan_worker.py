"""The dashboard's scan worker (ui/worker.py): the engine in another process, its progress, its
errors in one line, and Cancel. The pages' side is tested in test_pages.py and the browser tests."""
from __future__ import annotations

import os
import signal
import time
from multiprocessing import spawn

import numpy as np
import pandas as pd

import ui.pool as pool
import ui.worker as worker
from divergence import assess, scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

STATS = dict(confidence=0.95, correction="bh", bootstrap=50, seed=0, exploratory=True)


def _demo_request(**scan_kw) -> worker.ScanRequest:
    kw = dict(attributes=list(DEMO_ATTRIBUTES), min_support=0.02, **DEMO_ROLES["classification"])
    kw.update(scan_kw)
    return worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=load_demo(3000))


def _wide_request() -> worker.ScanRequest:
    """A scan that runs for minutes on any machine, so that it is still computing whatever a test does to it:
    every itemset of one row or more of 30 attributes of 3 values, no budget of time or work (tens of
    millions of slices; the tests stop it within seconds)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"a{i}": rng.integers(0, 3, 4000) for i in range(30)})
    df["y"] = rng.integers(0, 2, 4000)
    df["p"] = rng.integers(0, 2, 4000)
    kw = dict(target="y", prediction="p", positive=1, metrics=["fpr"], min_support=1 / 4000, exhaustive=True,
              time_limit=None, max_work=None, max_slices=10 ** 9)
    return worker.ScanRequest(scan=kw, statistics=dict(STATS), frame=df)


def _computing(job: worker.Job) -> worker.Job:
    """``job`` once its worker has its data and computes (not starting any more), or the test fails."""
    deadline = time.monotonic() + 120
    while job.worker_started is None and job.running and time.monotonic() < deadline:
        job.wait(1, seen=job.updates)
    assert job.running and job.worker_started is not None, job.error
    return job


def test_a_worker_computes_what_the_engine_computes_in_process():
    request = _demo_request()
    job = worker.start(request)
    assert job.wait(300) == "done", job.error
    mined, table = job.result
    expected = assess(scan(request.frame, **request.scan), **STATS)
    pd.testing.assert_frame_equal(table.frame, expected.frame)
    assert len(mined) == len(table)
    assert job.worker_started is not None and job.worker_started >= job.started
    assert job.result_bytes > table.frame.memory_usage(deep=False).sum() / 2
    assert job.progress["stage"] == "sending the result" and job.progress["slices"] == len(table) - 1
    job.process.join(10)
    assert job.process.exitcode == 0
    # a statistics change: the mined table is assessed again in a worker, nothing re-mined
    again = worker.start(worker.ScanRequest(scan=request.scan, statistics=dict(STATS, confidence=0.9),
                                            mined=mined))
    assert again.wait(300) == "done"
    pd.testing.assert_frame_equal(again.result[1].frame, assess(mined, **dict(STATS, confidence=0.9)).frame)


def test_an_input_error_comes_back_as_its_one_line_message():
    job = worker.start(_demo_request(target="no_such_column"))
    assert job.wait(300) == "error"
    assert job.error == "Target column 'no_such_column' is not in the data."  # the engine's words, as they are
    assert job.detail is None and job.result is None  # an input error has no traceback to keep


def test_an_unexpected_failure_is_one_line_with_the_traceback_kept_for_the_log():
    request = _demo_request()
    request.mined = [1, 2]  # a list where the mined table belongs: a bug's shape, not bad input
    job = worker.start(request)
    assert job.wait(300) == "error"
    assert job.error.startswith("The scan failed: AttributeError: ") and "\n" not in job.error
    assert job.detail.startswith("Traceback (most recent call last):") and "AttributeError" in job.detail
    assert job.result is None


def test_cancel_stops_the_worker_within_seconds():
    job = _computing(worker.start(_wide_request()))
    seconds = job.cancel()
    assert seconds < pool.CANCEL_GRACE + 5
    assert not job.process.is_alive() and job.state == "cancelled" and job.result is None
    assert job.wait(1) == "cancelled"


def test_a_killed_worker_is_reported_not_waited_for():
    job = _computing(worker.start(_wide_request()))
    os.kill(job.process.pid, signal.SIGKILL)  # what the kernel's out-of-memory killer does
    assert job.wait(60) == "error"
    assert "killed" in job.error and "memory" in job.error


def test_a_scan_whose_session_closed_is_stopped(monkeypatch):
    monkeypatch.setattr(pool, "ORPHAN_GRACE", 0.5)
    alive = [True]
    job = _computing(worker.start(_wide_request(), owner_alive=lambda: alive[0]))
    assert job.wait(2 * pool.ORPHAN_GRACE) == "running"  # its session is there: the scan goes on
    alive[0] = False
    assert job.wait(60) == "cancelled"  # not done: the scan runs for minutes
    assert job.result is None and job.error is None
    job.process.join(10)
    assert not job.process.is_alive()


def test_workers_never_run_the_parents_main_script():
    """Under Streamlit ``__main__`` is the app script: a worker must not import and run it."""
    data = spawn.get_preparation_data("x")
    pool.starting.worker = True
    try:
        worker_data = spawn.get_preparation_data("x")
    finally:
        pool.starting.worker = False
    assert "init_main_from_path" not in worker_data and "init_main_from_name" not in worker_data
    assert {k: v for k, v in data.items() if not k.startswith("init_main")} == worker_data


def test_the_servers_results_are_bounded_by_count_and_memory():
    from ui.cache import LRU as _LRU

    lru = _LRU(3, 100)
    for k in "abc":
        lru.put((k,), k.upper(), 30)
    assert [lru.get((k,)) for k in "abc"] == ["A", "B", "C"]
    lru.get(("a",))  # used: kept before b
    lru.put(("d",), "D", 30)  # four entries, 120 bytes: the least recently used goes
    assert lru.get(("b",)) is None and [lru.get((k,)) for k in "acd"] == ["A", "C", "D"]
    lru.put(("e",), "E", 1000)  # larger than everything: kept alone, the newest
    assert lru.get(("e",)) == "E" and all(lru.get((k,)) is None for k in "acd")


def test_progress_in_words():
    import time
    from types import SimpleNamespace

    from ui.job import progress_text

    def job(**p):
        return SimpleNamespace(label="every slice with support ≥ 0.02", elapsed=12.3, stage_started=time.monotonic(),
                               progress={"stage": "mining", "slices": None, "length": None, "fraction": None, **p})

    assert progress_text(job(slices=12345, length=3, fraction=0.4)) == (
        0.4, "Mining: 12,345 slices so far, slices of up to 3 items (12 s)")
    assert progress_text(job(slices=0)) == (None, "Mining: 0 slices so far (12 s)")
    assert progress_text(job(stage="discretizing")) == (None, "Discretizing… (12 s)")
    assert progress_text(job(stage="statistics", slices=1337))[1] == (
        "1,337 slices mined; computing their statistics… (12 s)")
    assert progress_text(job(stage="starting the worker"))[1].startswith(
        "Starting: mining every slice with support ≥ 0.02…")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_worker_dies_with_the_fork_server_and_the_next_scan_starts_a_new_one():
    """The fork server lives exactly as long as the dashboard's server: a killed server leaves no scan running."""
    from multiprocessing import forkserver

    job = _computing(worker.start(_wide_request()))
    server_pid = forkserver._forkserver._forkserver_pid
    assert server_pid and job.running
    pid = job.process.pid
    os.kill(server_pid, signal.SIGKILL)
    assert job.wait(60) == "error" and job.error.startswith("The scan stopped unexpectedly")
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:  # PR_SET_PDEATHSIG: the kernel kills it
        time.sleep(0.05)
    assert not _alive(pid)
    again = worker.start(_demo_request())
    assert again.wait(300) == "done", again.error
    assert forkserver._forkserver._forkserver_pid != server_pid

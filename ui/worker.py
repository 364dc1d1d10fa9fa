"""Scans run in a worker process, so the dashboard's server never waits on the engine.

Mining holds the GIL for long stretches: run inside the server it froze every session and the
health endpoint. Here the engine runs in another process; the server keeps answering, the scan
reports its progress through a pipe, and Cancel terminates the process. The processes, the queue
and the memory limits are ``ui.pool``'s (no Streamlit, no engine); this module says what a worker
computes (a scan, or a task such as reading an upload) and in which words a failure is told. The
fork server imports this module, and with it the engine, once.

No Streamlit import here: the worker imports only this module, ``ui.pool`` and ``divergence``.
"""
from __future__ import annotations

import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

import divergence
from divergence import DivergenceInputError, Settings, SliceTable
from divergence.budget import ProgressCallback, progress_report
from ui import pool
from ui.pool import WorkerLimits

__all__ = ["ScanRequest", "TaskRequest", "TASKS", "Job", "compute", "start", "run_task", "POOL", "default_limits",
           "read_upload"]

#: seconds between two progress messages of a worker (stage changes are always sent)
PROGRESS_INTERVAL = 0.2
MEMORY_MESSAGE = ("The scan ran out of memory: raise the minimum support, limit the items per slice, "
                  "or choose fewer attributes.")


def default_limits() -> WorkerLimits:
    """The workers' limits from the environment, else from the machine (:func:`ui.pool.limits_from`: half
    the memory available at the server's start for every worker together, by default)."""
    from divergence.data.io import available_memory

    return pool.limits_from(available_memory())


@dataclass
class ScanRequest:
    """What a worker computes: mine once (unless ``mined`` is given), then assess once.

    ``settings``: the analysis, frozen and validated where it was made (the session's Settings, sent
    as it is; its replication holds a second file's rows and the holdout's seed: nothing travels
    beside it); ``scan`` holds keyword arguments of :func:`divergence.mine` (or ``mine_duckdb`` with
    ``path``) and ``statistics`` those of :func:`divergence.assess`, each changing ``settings``' fields.
    """

    scan: dict = field(default_factory=dict)
    statistics: dict = field(default_factory=dict)
    frame: pd.DataFrame | None = None
    path: str | None = None
    #: the files of ``path``, each checked to lie in the data folder (what DuckDB reads)
    files: list[str] | None = None
    mined: SliceTable | None = None
    settings: Settings | None = None


@dataclass
class TaskRequest:
    """Work other than a scan done in a worker so the server never does it: ``task`` names one of
    :data:`TASKS`, called with ``args`` and ``kwargs`` (and ``progress``)."""

    task: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def read_upload(path: str, name: str, max_memory: int | None = None, *, progress=None) -> dict:
    """Read an upload spooled to ``path`` as the engine reads any file, and what the Data page
    needs of it at once (the roles guessed, the columns described): a decompression bomb, a
    hostile CSV or a file too large for memory costs a worker, never the server. A file whose
    frame would not fit in ``max_memory`` is not parsed: its estimate comes back (``too_large``)."""
    from divergence.data.io import ReadLimits, estimate_table, load_table
    from divergence.data.roles import guess_roles
    from divergence.present.columns import describe_columns

    def tell(stage: str) -> None:
        if progress is not None:
            progress(progress_report(stage))

    tell("reading the file")
    limits = ReadLimits.default(**({} if max_memory is None else {"max_memory": int(max_memory)}))
    estimate = estimate_table(path, name=name, limits=limits, label=name)
    if estimate is not None and limits.max_memory is not None and 2 * estimate.memory > limits.max_memory:
        return {"too_large": estimate, "max_memory": limits.max_memory}
    loaded = load_table(path, name=name, limits=limits, label=name)
    tell("guessing the column roles")
    guess = guess_roles(loaded.frame)
    tell("describing the columns")
    return {"loaded": loaded, "guess": guess, "summary": describe_columns(loaded.frame)}


def _screen(df, used, *, progress=None, **roles):
    return divergence.screen_attributes(df, used, **roles)


def _describe(df, *, progress=None):
    from divergence.present.columns import describe_columns

    return describe_columns(df)


def _guess(df, *, progress=None):
    from divergence.data.roles import guess_roles

    return guess_roles(df)


def _compare(df, settings: Settings, *, progress=None):
    """The model comparison (``divergence.compare``) of the comparison's Settings, with its readable
    frame built here, not in the server."""
    comparison = divergence.compare(df, settings, progress=progress)
    comparison.frame
    return comparison


#: the tasks a worker does besides scans
TASKS: dict[str, Callable] = {"read": read_upload, "screen": _screen, "describe": _describe, "guess": _guess,
                              "compare": _compare}


def _accepts(fn: Callable, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def compute(request: ScanRequest, progress: ProgressCallback | None = None
            ) -> tuple[SliceTable | None, SliceTable]:
    """Mine and assess as the request says: (the mined table or None, the assessed table).

    Runs in the worker; callable in-process too (tests, benchmarks).
    """
    def report(**info: Any) -> None:
        if progress is not None:
            progress(progress_report(info.pop("stage"), **info))

    settings = request.settings
    mined = request.mined
    if mined is None:
        if request.path is not None:
            fn, data = divergence.mine_duckdb, request.files if request.files else request.path
        else:
            fn, data = divergence.mine, request.frame
        kw = dict(progress=progress) if progress is not None and _accepts(fn, "progress") else {}
        mined = fn(data, settings, **request.scan, **kw)
    report(stage="statistics", slices=len(mined) - 1)
    table = divergence.assess(mined, None if settings is None else settings.statistics, progress=progress,
                              **request.statistics)
    table.frame  # the readable frame is built here, not in the server
    # the mined table keeps the rows it replicates on (a holdout's, drawn from the replication's own
    # seed, or the second file's): any statistics can assess it again
    return mined, table


# ----------------------------------------------------------------------------- the worker process


def _work(request: ScanRequest, conn, forked_by_server: bool) -> None:
    """The worker's body: compute, sending progress, then the result or a one-line error."""
    if forked_by_server:  # with spawn, the parent thread is a script run's: it ends before the scan
        pool.die_with_parent()
    divergence.set_workers(pool._cores())  # the dashboard asks for every core (the library alone uses one process)
    last = [0.0, None]

    def progress(info: dict) -> None:
        now = time.monotonic()
        key = (info.get("stage"), info.get("step"))  # a new step of the statistics is a change too
        if key != last[1] or now - last[0] >= PROGRESS_INTERVAL:
            last[0], last[1] = now, key
            conn.send(("progress", dict(info)))

    try:
        conn.send(("started", None))
        if isinstance(request, TaskRequest):  # reading an upload, screening a wide table: off the server
            result = TASKS[request.task](*request.args, progress=progress, **request.kwargs)
            progress(progress_report("sending the result"))
            pool.send_result(conn, result)
            return
        mined, table = compute(request, progress)
        progress(progress_report("sending the result", len(table) - 1))
        pool.send_result(conn, (mined, table))
    except DivergenceInputError as exc:  # the project's errors (a budget too) are meant for people
        conn.send(("error", str(exc)))
    except MemoryError:
        conn.send(("error", MEMORY_MESSAGE))
    except BaseException as exc:  # noqa: BLE001 - reported to the server's log, one line to the user
        conn.send(("crash", f"{type(exc).__name__}: {exc}".splitlines()[0], traceback.format_exc()))
    finally:
        conn.close()


# ----------------------------------------------------------------------------- jobs (in the server)


class Job(pool.Job):
    """A scan (or a task) in a worker process: :class:`ui.pool.Job` running :func:`_work`, queued in
    :data:`POOL`, its failures told in the scan's words."""

    target = staticmethod(_work)
    preload = (__name__,)
    name = "divergence-scan"

    def start_failed(self, why: str) -> str:
        return f"The scan could not start: {why}"

    def failed(self, why: str) -> str:
        return f"The scan failed: {why}"

    def memory_message(self, limit: int) -> str:
        return _memory_message(limit, isinstance(self.meta.get("task"), str))

    def exit_message(self, code: int | None) -> str:
        return _exit_message(code)


def _exit_message(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == signal.SIGKILL:
            return (f"The scan stopped unexpectedly (its worker was killed, {name}: most likely the machine ran "
                    "out of memory). Raise the minimum support, limit the items per slice, or choose fewer "
                    "attributes.")
        return f"The scan stopped unexpectedly (its worker ended on {name})."
    return f"The scan stopped unexpectedly (its worker exited with status {code})."


def _memory_message(limit: int, task: bool = False) -> str:
    if task:
        return (f"Reading the file went past the memory one worker may use on this server ({limit / (1 << 30):.3g} "
                "GB) and was stopped: scan it with the command line and --engine duckdb (the server's owner sets "
                "the limit: DIVERGENCE_WORKER_MEMORY).")
    return (f"The scan went past the memory one scan may use on this server ({limit / (1 << 30):.3g} GB) and was "
            "stopped: raise the minimum support, limit the items per slice, or choose fewer attributes (the "
            "server's owner sets the limit: DIVERGENCE_WORKER_MEMORY).")


#: the server's pool of workers (one per process: every session shares it)
POOL = pool.WorkerPool(default_limits)
Job.pool = POOL


def run_task(task: str, *args, label: str = "", owner_alive: Callable[[], bool] | None = None, **kwargs):
    """Do a task in a worker and wait for its result (this thread waits; the server keeps answering);
    its one-line error is raised as a DivergenceInputError."""
    job = start(TaskRequest(task, args, kwargs), label=label, owner_alive=owner_alive, meta={"task": task})
    state = job.wait()
    if state == "done":
        return job.result
    raise DivergenceInputError(job.error or f"The {label or task} was cancelled.")


def start(request: ScanRequest, *, label: str = "", auto: bool = False,
          owner_alive: Callable[[], bool] | None = None, method: str | None = None,
          meta: dict | None = None) -> Job:
    """Start a worker process computing ``request``; returns at once."""
    return Job(request, label=label, auto=auto, owner_alive=owner_alive, method=method, meta=dict(meta or {}))

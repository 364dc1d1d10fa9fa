"""Scans run in a worker process, so the dashboard's server never waits on the engine.

Mining holds the GIL for long stretches: run inside the server it froze every session and the
health endpoint. Here the engine runs in another process; the server keeps answering, the scan
reports its progress through a pipe, and Cancel terminates the process.

Start method: ``forkserver``. ``fork`` from Streamlit's threaded server could copy a lock held
by another thread into the child (a deadlock there); ``spawn`` starts a fresh interpreter for
every scan (about a second of imports on these machines). The fork server is one clean,
single-threaded process, started on the first scan, that has imported this module and the
engine; each worker is forked from it in milliseconds (``benchmarks/speed/bench_worker.py``).

No Streamlit import here: the worker imports only this module and ``divergence``.
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from multiprocessing import spawn
from typing import Any, Callable

import pandas as pd

import divergence
from divergence import DivergenceInputError, Settings, SliceTable
from divergence.budget import Progress, ProgressCallback, progress_report

__all__ = ["ScanRequest", "TaskRequest", "TASKS", "Job", "compute", "start", "run_task", "START_METHOD",
           "WorkerLimits", "WorkerPool", "POOL", "default_limits", "resident_bytes", "WAITING", "read_upload"]

START_METHOD = "forkserver"
#: seconds between two progress messages of a worker (stage changes are always sent)
PROGRESS_INTERVAL = 0.2
#: seconds a worker gets to stop on SIGTERM before it is killed
CANCEL_GRACE = 2.0
#: seconds a job may outlive the browser session that started it (a closed tab) before it is stopped
ORPHAN_GRACE = 3.0
#: seconds between two looks at a worker's memory (and at its session)
WATCH_EVERY = 0.1
MEMORY_MESSAGE = ("The scan ran out of memory: raise the minimum support, limit the items per slice, "
                  "or choose fewer attributes.")
#: the stage a job reports while it waits for a free worker (``ahead``: jobs before it in the queue)
WAITING = "waiting for a free worker"


@dataclass(frozen=True)
class WorkerLimits:
    """How many workers may run at once on this server and how much memory each may hold: a
    worker past its memory is stopped (one line says so), a scan past the count waits in a queue.
    The ceiling of all workers together is ``workers * memory``."""

    workers: int
    memory: int  # bytes of resident memory one worker may hold

    @property
    def ceiling(self) -> int:
        return self.workers * self.memory


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_limits() -> WorkerLimits:
    """The limits from the environment, else from the machine: ``DIVERGENCE_SCAN_MEMORY`` (bytes
    for every worker together; default half the memory available at the server's start),
    ``DIVERGENCE_WORKER_MEMORY`` (one worker; default that total shared by the cores, between
    1 and 4 GiB) and ``DIVERGENCE_WORKERS`` (default the cores, fewer when the memory does not
    hold that many workers)."""
    from divergence.data.io import available_memory

    def env(name: str) -> int | None:
        try:
            value = int(float(os.environ.get(name, "")))
        except ValueError:
            return None
        return value if value > 0 else None

    cores = _cores()
    total = env("DIVERGENCE_SCAN_MEMORY") or available_memory() // 2
    memory = env("DIVERGENCE_WORKER_MEMORY") or max(1 << 30, min(4 << 30, total // cores))
    workers = env("DIVERGENCE_WORKERS") or max(1, min(cores, total // memory))
    return WorkerLimits(workers=workers, memory=memory)


@dataclass
class ScanRequest:
    """What a worker computes: mine once (unless ``mined`` is given), then assess once.

    ``settings``: the analysis, frozen and validated where it was made (the dashboard's page);
    ``scan`` holds keyword arguments of :func:`divergence.mine` (or ``scan_duckdb`` with ``path``)
    and ``statistics`` those of :func:`divergence.assess`, each changing ``settings``' fields.
    """

    scan: dict = field(default_factory=dict)
    statistics: dict = field(default_factory=dict)
    frame: pd.DataFrame | None = None
    path: str | None = None
    #: the files of ``path``, each checked to lie in the data folder (what DuckDB reads)
    files: list[str] | None = None
    mined: SliceTable | None = None
    replicate: pd.DataFrame | None = None
    replication_label: str = ""
    holdout: float | None = None
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


def _compare(df, sections: dict, *, progress=None):
    """The model comparison (``divergence.compare``) with its readable frame built here, not in the server."""
    comparison = divergence.compare(df, Settings.from_sections(sections), progress=progress)
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
        scan = dict(request.scan)
        if request.path is not None:
            fn, data = divergence.scan_duckdb, request.files if request.files else request.path
            scan["mine_only"] = True
        else:
            fn, data = divergence.mine, request.frame
        if request.holdout is not None:  # the statistics' seed draws the held-out rows
            seed = settings.statistics.seed if settings is not None else 0
            scan.update(holdout=request.holdout, seed=request.statistics.get("seed", seed))
        kw = dict(progress=progress) if progress is not None and _accepts(fn, "progress") else {}
        mined = fn(data, settings, **scan, **kw)
    report(stage="statistics", slices=len(mined) - 1)
    kwargs = dict(request.statistics)
    if request.replicate is not None:
        kwargs.update(replicate=request.replicate, replication_label=request.replication_label)
    table = divergence.assess(mined, None if settings is None else settings.statistics, progress=progress, **kwargs)
    table.frame  # the readable frame is built here, not in the server
    # a holdout's mining is not kept (its held-out rows depend on the seed, a statistic)
    return (None if request.holdout is not None else mined), table


# ----------------------------------------------------------------------------- the worker process


def _die_with_parent() -> None:
    """Linux: the worker is killed when its parent (the fork server, which lives exactly as long
    as the dashboard's server) dies, so a killed server leaves no scan running."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    parent = mp.parent_process()
    if parent is not None and not parent.is_alive():
        os._exit(1)


def _send_result(conn, payload) -> None:
    """The result with its arrays out of band (pickle protocol 5): the server then unpickles only
    the small rest while holding the GIL, and wraps the arrays' bytes as they come."""
    buffers: list = []
    data = pickle.dumps(payload, protocol=5, buffer_callback=buffers.append)
    conn.send(("done", len(buffers), len(data) + sum(b.raw().nbytes for b in buffers)))
    conn.send_bytes(data)
    for buffer in buffers:
        conn.send_bytes(buffer.raw())


def _receive_result(conn, n_buffers: int):
    data = conn.recv_bytes()
    buffers = [conn.recv_bytes() for _ in range(n_buffers)]
    return pickle.loads(data, buffers=buffers)


def _work(request: ScanRequest, conn, forked_by_server: bool) -> None:
    """The worker's body: compute, sending progress, then the result or a one-line error."""
    if forked_by_server:  # with spawn, the parent thread is a script run's: it ends before the scan
        _die_with_parent()
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
            _send_result(conn, result)
            return
        mined, table = compute(request, progress)
        progress(progress_report("sending the result", len(table) - 1))
        _send_result(conn, (mined, table))
    except DivergenceInputError as exc:  # the project's errors (a budget too) are meant for people
        conn.send(("error", str(exc)))
    except MemoryError:
        conn.send(("error", MEMORY_MESSAGE))
    except BaseException as exc:  # noqa: BLE001 - reported to the server's log, one line to the user
        conn.send(("crash", f"{type(exc).__name__}: {exc}".splitlines()[0], traceback.format_exc()))
    finally:
        conn.close()


_contexts: dict[str, Any] = {}
_contexts_lock = threading.Lock()
_starting = threading.local()


def _preparation_data(name: str, _original=spawn.get_preparation_data) -> dict:
    """multiprocessing's data for a new worker, less the main module while a scan worker starts.

    multiprocessing re-imports the parent's ``__main__`` in every spawned or fork-server child.
    Under Streamlit ``__main__`` is the app script itself (Streamlit swaps it in for each run), so
    every worker would run the whole app. The worker needs nothing from ``__main__``: its target
    and arguments are importable by name.
    """
    data = _original(name)
    if getattr(_starting, "worker", False):
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


if not getattr(spawn.get_preparation_data, "_divergence", False):
    _preparation_data._divergence = True
    spawn.get_preparation_data = _preparation_data


def context(method: str | None = None):
    """The multiprocessing context of the workers (the fork server preloads the engine)."""
    method = method or START_METHOD
    with _contexts_lock:
        if method not in _contexts:
            ctx = mp.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload([__name__])
            _contexts[method] = ctx
        return _contexts[method]


# ----------------------------------------------------------------------------- jobs (in the server)


@dataclass(eq=False)  # a job is itself: compared by identity (its request holds frames)
class Job:
    """One scan running in a worker process, followed by a thread of the server.

    ``state`` is ``running``, ``done`` (``result`` holds (mined, assessed)), ``error`` (``error``
    holds a one-line message), or ``cancelled``. ``progress`` is the worker's last report:
    ``{"stage", "slices", "length", "fraction"}``.
    """

    request: ScanRequest
    label: str = ""
    auto: bool = False
    owner_alive: Callable[[], bool] | None = None
    method: str | None = None
    #: the caller's bookkeeping (cache keys, the settings it ran with)
    meta: dict = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    state: str = "running"
    progress: Progress = field(default_factory=lambda: progress_report("starting the worker"))
    result: tuple | None = None
    #: the result's size as sent (bytes): what keeping it costs
    result_bytes: int = 0
    error: str | None = None
    detail: str | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    start_seconds: float | None = None
    #: when the worker began computing (its data received): the start-up cost is this minus ``started``
    worker_started: float | None = None
    updates: int = 0
    #: when the worker's current stage (or step of the statistics) began: what an estimate of the
    #: time left is measured from
    stage_started: float = field(default_factory=time.monotonic)
    #: when the current step of the statistics (or the stage) began
    step_started: float = field(default_factory=time.monotonic)
    #: the most resident memory the worker was seen holding (bytes)
    peak_bytes: int = 0

    def __post_init__(self) -> None:
        self._cond = threading.Condition()
        self.process = None
        self._conn = None
        self._gone_since = None
        self._pump = threading.Thread(target=self._run, name=f"divergence-follow-{self.id}", daemon=True)
        self._pump.start()

    def _start_process(self) -> None:
        """Start the worker process (in the follower thread, once the pool gave this job a slot)."""
        method = self.method or START_METHOD
        ctx = context(method)
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_work, args=(self.request, writer, method == "forkserver"), daemon=True,
                              name=f"divergence-scan-{self.id}")
        t0 = time.monotonic()
        _starting.worker = True
        try:
            process.start()
        finally:
            _starting.worker = False
        self.start_seconds = time.monotonic() - t0
        writer.close()
        self.request = None  # the worker has its copy; the server keeps no second reference
        self._conn = reader
        with self._cond:
            self.process = process
            cancelled = self.state != "running"
        if cancelled:  # cancelled while it started
            _stop(process)

    def _run(self) -> None:
        """The follower thread: wait for a free worker (in the queue), start it, follow it."""
        pool = POOL
        try:
            if not pool.acquire(self):
                return  # cancelled, or its session closed, while it waited
            try:
                self._start_process()
                if self.process is not None and self.running:
                    self._follow()
            finally:
                pool.release(self)
        except BaseException as exc:  # noqa: BLE001 - a job never dies silently
            print(f"divergence: the scan's follower failed: {exc!r}", file=sys.stderr, flush=True)
            self._finish(state="error", error=f"The scan could not start: {type(exc).__name__}: {exc}"[:300])

    def owner_gone(self) -> bool:
        """Whether the browser session that started the job has been gone past the grace period."""
        if self.owner_alive is None:
            return False
        if self.owner_alive():
            self._gone_since = None
            return False
        if self._gone_since is None:
            self._gone_since = time.monotonic()
        return time.monotonic() - self._gone_since > ORPHAN_GRACE

    # ---- state, shared between the follower thread and the sessions' script threads
    def _set(self, **values: Any) -> None:
        with self._cond:
            new = values.get("progress")
            if new is not None and (new.get("stage"), new.get("step")) != (self.progress.get("stage"),
                                                                            self.progress.get("step")):
                self.step_started = time.monotonic()
                if new.get("stage") != self.progress.get("stage"):
                    self.stage_started = self.step_started
            for k, v in values.items():
                setattr(self, k, v)
            self.updates += 1
            self._cond.notify_all()

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def wait(self, timeout: float | None = None, *, seen: int | None = None) -> str:
        """Wait until the job ends, or (given ``seen``, the ``updates`` count last seen) until it
        reports anything new; at most ``timeout`` seconds. Returns the state."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self.state == "running" and (seen is None or self.updates == seen):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._cond.wait(left)
            return self.state

    def cancel(self) -> float:
        """Stop the worker (SIGTERM, then SIGKILL after a grace period). Seconds it took."""
        t0 = time.monotonic()
        with self._cond:
            if self.state != "running":
                return 0.0
            self.state = "cancelled"
            self.finished = time.monotonic()
            self.updates += 1
            self._cond.notify_all()
            process = self.process
        POOL.wake()
        if process is not None:
            _stop(process)
        return time.monotonic() - t0

    # ---- the follower thread: reads the worker's pipe so the worker never blocks on it
    def _follow(self) -> None:
        limit = POOL.limits.memory
        try:
            while True:
                if self._conn.poll(WATCH_EVERY):
                    try:
                        msg = self._conn.recv()
                    except (EOFError, OSError):
                        break
                    kind = msg[0]
                    if kind == "progress":
                        self._set(progress=msg[1])
                        continue
                    if kind == "started":
                        self._set(worker_started=time.monotonic())
                        continue
                    if kind == "done":
                        try:
                            result = _receive_result(self._conn, msg[1])
                        except (EOFError, OSError):
                            break
                        self._finish(state="done", result=result, result_bytes=msg[2])
                    elif kind == "error":
                        self._finish(state="error", error=msg[1])
                    else:
                        print(f"divergence: the scan worker failed:\n{msg[2]}", file=sys.stderr, flush=True)
                        self._finish(state="error", error=f"The scan failed: {msg[1]}", detail=msg[2])
                    break
                if not self.running:
                    break
                rss = resident_bytes(self.process.pid)
                self.peak_bytes = max(self.peak_bytes, rss)
                if rss > limit:  # past its share of the server's memory: stopped before it takes the machine
                    _stop(self.process, grace=0.0)
                    self._finish(state="error", error=_memory_message(limit, isinstance(self.meta.get("task"), str)))
                    break
                if self.owner_gone():
                    self.cancel()
                    break
        finally:
            self._conn.close()
            self.process.join(timeout=CANCEL_GRACE + 5)
            if self.running:
                code = self.process.exitcode
                self._finish(state="error", error=_exit_message(code))

    def _finish(self, **values: Any) -> None:
        with self._cond:
            if self.state != "running":  # cancelled meanwhile: the result is dropped
                return
        self._set(finished=time.monotonic(), **values)


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


def _stop(process, grace: float = CANCEL_GRACE) -> None:
    if process.is_alive() and grace > 0:
        process.terminate()
        process.join(grace)
    if process.is_alive():
        process.kill()
        process.join(5)


def _memory_message(limit: int, task: bool = False) -> str:
    if task:
        return (f"Reading the file went past the memory one worker may use on this server ({limit / (1 << 30):.3g} "
                "GB) and was stopped: scan it with the command line and --engine duckdb (the server's owner sets "
                "the limit: DIVERGENCE_WORKER_MEMORY).")
    return (f"The scan went past the memory one scan may use on this server ({limit / (1 << 30):.3g} GB) and was "
            "stopped: raise the minimum support, limit the items per slice, or choose fewer attributes (the "
            "server's owner sets the limit: DIVERGENCE_WORKER_MEMORY).")


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pid: int) -> int:
    """A process's resident memory in bytes (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


class WorkerPool:
    """The server's workers: at most ``limits.workers`` at once, the others waiting in a queue in
    the order they came (each told how many are ahead of it); shared by every session."""

    def __init__(self, limits: WorkerLimits | None = None) -> None:
        self._cond = threading.Condition()
        self._limits = limits
        self.running: list[Job] = []
        self.queue: list[Job] = []

    @property
    def limits(self) -> WorkerLimits:
        if self._limits is None:
            self._limits = default_limits()
        return self._limits

    def configure(self, limits: WorkerLimits | None) -> None:
        """Other limits (tests, benchmarks); None: from the environment again."""
        with self._cond:
            self._limits = limits
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def acquire(self, job: "Job") -> bool:
        """Wait until ``job`` may start (a free worker, the jobs before it started); False when it
        was cancelled or its session closed meanwhile."""
        with self._cond:
            self.queue.append(job)
            try:
                while True:
                    if not job.running:
                        return False
                    ahead = self.queue.index(job)
                    if ahead == 0 and len(self.running) < self.limits.workers:
                        self.running.append(job)
                        return True
                    if job.progress.get("stage") != WAITING or job.progress.get("ahead") != ahead:
                        job._set(progress={"stage": WAITING, "ahead": ahead, "running": len(self.running),
                                           "slices": None, "length": None, "fraction": None})
                    self._cond.wait(0.25)
                    if job.owner_gone():
                        job.cancel()
                        return False
            finally:
                self.queue.remove(job)
                self._cond.notify_all()

    def release(self, job: "Job") -> None:
        with self._cond:
            if job in self.running:
                self.running.remove(job)
            self._cond.notify_all()

    def status(self) -> dict:
        """Workers running and jobs waiting, now."""
        with self._cond:
            return {"running": len(self.running), "waiting": len(self.queue), "workers": self.limits.workers,
                    "memory": self.limits.memory}


#: the server's pool of workers (one per process: every session shares it)
POOL = WorkerPool()


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

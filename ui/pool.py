"""Worker processes for long work, with no Streamlit and no ``divergence`` import: the pool's limits
(how many at once, how much memory each), the queue, and a job that starts its process, reads its pipe,
watches its memory and its session, and cancels it. What a worker computes is ``ui.worker``'s.

Start method: ``forkserver``. ``fork`` from Streamlit's threaded server could copy a lock held by
another thread into the child (a deadlock there); ``spawn`` starts a fresh interpreter for every job
(about a second of imports). The fork server is one clean, single-threaded process, started on the
first job, that has imported the modules a job class names in ``preload``; each worker is forked from
it in milliseconds (``benchmarks/speed/bench_worker.py``).
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
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import spawn
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, ClassVar

__all__ = ["START_METHOD", "CANCEL_GRACE", "ORPHAN_GRACE", "WATCH_EVERY", "WAITING", "WorkerLimits", "WorkerPool",
           "Job", "limits_from", "resident_bytes", "die_with_parent", "send_result", "receive_result", "context",
           "stop", "starting"]

START_METHOD = "forkserver"
#: seconds a worker gets to stop on SIGTERM before it is killed
CANCEL_GRACE = 2.0
#: seconds a job may outlive the browser session that started it (a closed tab) before it is stopped
ORPHAN_GRACE = 3.0
#: seconds between two looks at a worker's memory (and at its session)
WATCH_EVERY = 0.1
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


def limits_from(available: int) -> WorkerLimits:
    """The limits from the environment, else from the machine (``available``: bytes of memory free at
    the server's start): ``DIVERGENCE_SCAN_MEMORY`` (bytes for every worker together; default half
    of ``available``), ``DIVERGENCE_WORKER_MEMORY`` (one worker; default that total shared by the
    cores, between 1 and 4 GiB) and ``DIVERGENCE_WORKERS`` (default the cores, fewer when the memory
    does not hold that many workers)."""
    def env(name: str) -> int | None:
        try:
            value = int(float(os.environ.get(name, "")))
        except ValueError:
            return None
        return value if value > 0 else None

    cores = _cores()
    total = env("DIVERGENCE_SCAN_MEMORY") or available // 2
    memory = env("DIVERGENCE_WORKER_MEMORY") or max(1 << 30, min(4 << 30, total // cores))
    workers = env("DIVERGENCE_WORKERS") or max(1, min(cores, total // memory))
    return WorkerLimits(workers=workers, memory=memory)


# ----------------------------------------------------------------------------- in the worker process


def die_with_parent() -> None:
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


def send_result(conn, payload) -> None:
    """The result with its arrays out of band (pickle protocol 5): the server then unpickles only
    the small rest while holding the GIL, and wraps the arrays' bytes as they come."""
    buffers: list = []
    data = pickle.dumps(payload, protocol=5, buffer_callback=buffers.append)
    conn.send(("done", len(buffers), len(data) + sum(b.raw().nbytes for b in buffers)))
    conn.send_bytes(data)
    for buffer in buffers:
        conn.send_bytes(buffer.raw())


def receive_result(conn, n_buffers: int):
    data = conn.recv_bytes()
    buffers = [conn.recv_bytes() for _ in range(n_buffers)]
    return pickle.loads(data, buffers=buffers)


_contexts: dict[str, Any] = {}
_contexts_lock = threading.Lock()
#: set while a worker process starts (its main module is then not re-imported)
starting = threading.local()


def _preparation_data(name: str, _original=spawn.get_preparation_data) -> dict:
    """multiprocessing's data for a new worker, less the main module while a scan worker starts.

    multiprocessing re-imports the parent's ``__main__`` in every spawned or fork-server child.
    Under Streamlit ``__main__`` is the app script itself (Streamlit swaps it in for each run), so
    every worker would run the whole app. The worker needs nothing from ``__main__``: its target
    and arguments are importable by name.
    """
    data = _original(name)
    if getattr(starting, "worker", False):
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


if not getattr(spawn.get_preparation_data, "_divergence", False):
    setattr(_preparation_data, "_divergence", True)
    spawn.get_preparation_data = _preparation_data


def context(method: str | None = None, preload: tuple[str, ...] = ()):
    """The multiprocessing context of the workers (the fork server imports ``preload`` once)."""
    method = method or START_METHOD
    with _contexts_lock:
        if method not in _contexts:
            ctx = mp.get_context(method)
            if method == "forkserver" and preload:
                ctx.set_forkserver_preload(list(preload))
            _contexts[method] = ctx
        return _contexts[method]


# ----------------------------------------------------------------------------- jobs (in the server)


@dataclass(eq=False)  # a job is itself: compared by identity (its request holds frames)
class Job:
    """One piece of work running in a worker process, followed by a thread of the server.

    ``state`` is ``running``, ``done`` (``result`` holds what the worker sent), ``error`` (``error``
    holds a one-line message), or ``cancelled``. ``progress`` is the worker's last report:
    ``{"stage", "slices", "length", "fraction"}``. A subclass names what the worker runs (``target``,
    a module-level function of (request, its end of the pipe, whether the fork server started it)),
    the modules the fork server imports first (``preload``), the pool it queues in, and its words.
    """

    #: the worker's body: ``target(request, conn, forked_by_server)``, importable by name
    target: ClassVar[Callable]
    preload: ClassVar[tuple] = ()
    pool: ClassVar[WorkerPool]

    request: Any
    label: str = ""
    auto: bool = False
    owner_alive: Callable[[], bool] | None = None
    method: str | None = None
    #: the caller's bookkeeping (cache keys, the settings it ran with)
    meta: dict = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    state: str = "running"
    progress: dict = field(default_factory=lambda: {"stage": "starting the worker", "slices": None, "length": None,
                                                    "fraction": None})
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
        self.process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._gone_since: float | None = None
        self._pump = threading.Thread(target=self._run, name=f"divergence-follow-{self.id}", daemon=True)
        self._pump.start()

    def _start_process(self) -> None:
        """Start the worker process (in the follower thread, once the pool gave this job a slot)."""
        method = self.method or START_METHOD
        ctx = context(method, self.preload)
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=type(self).target, args=(self.request, writer, method == "forkserver"),
                              daemon=True, name=f"{self.name}-{self.id}")
        t0 = time.monotonic()
        starting.worker = True
        try:
            process.start()
        finally:
            starting.worker = False
        self.start_seconds = time.monotonic() - t0
        writer.close()
        self.request = None  # the worker has its copy; the server keeps no second reference
        self._conn = reader
        with self._cond:
            self.process = process
            cancelled = self.state != "running"
        if cancelled:  # cancelled while it started
            stop(process)

    def _run(self) -> None:
        """The follower thread: wait for a free worker (in the queue), start it, follow it."""
        pool = self.pool
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
            print(f"{self.name}: the job's follower failed: {exc!r}", file=sys.stderr, flush=True)
            self._finish(state="error", error=self.start_failed(f"{type(exc).__name__}: {exc}")[:300])

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
        self.pool.wake()
        if process is not None:
            stop(process)
        return time.monotonic() - t0

    # ---- the follower thread: reads the worker's pipe so the worker never blocks on it
    def _follow(self) -> None:
        limit = self.pool.limits.memory
        conn, process = self._conn, self.process
        assert conn is not None and process is not None  # _run follows a started process
        try:
            while True:
                if conn.poll(WATCH_EVERY):
                    try:
                        msg = conn.recv()
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
                            result = receive_result(conn, msg[1])
                        except (EOFError, OSError):
                            break
                        self._finish(state="done", result=result, result_bytes=msg[2])
                    elif kind == "error":
                        self._finish(state="error", error=msg[1])
                    else:
                        print(f"{self.name}: the worker failed:\n{msg[2]}", file=sys.stderr, flush=True)
                        self._finish(state="error", error=self.failed(msg[1]), detail=msg[2])
                    break
                if not self.running:
                    break
                rss = resident_bytes(process.pid)
                self.peak_bytes = max(self.peak_bytes, rss)
                if rss > limit:  # past its share of the server's memory: stopped before it takes the machine
                    stop(process, grace=0.0)
                    self._finish(state="error", error=self.memory_message(limit))
                    break
                if self.owner_gone():
                    self.cancel()
                    break
        finally:
            conn.close()
            process.join(timeout=CANCEL_GRACE + 5)
            if self.running:
                code = process.exitcode
                self._finish(state="error", error=self.exit_message(code))

    # ---- its words (a subclass says what the work is)
    name: ClassVar[str] = "worker"

    def start_failed(self, why: str) -> str:
        return f"The work could not start: {why}"

    def failed(self, why: str) -> str:
        return f"The work failed: {why}"

    def memory_message(self, limit: int) -> str:
        return f"The work went past the memory one worker may use on this server ({limit / (1 << 30):.3g} GB) and was stopped."

    def exit_message(self, code: int | None) -> str:
        return f"The work stopped unexpectedly (its worker ended with {code})."

    def _finish(self, **values: Any) -> None:
        with self._cond:
            if self.state != "running":  # cancelled meanwhile: the result is dropped
                return
        self._set(finished=time.monotonic(), **values)


def stop(process, grace: float = CANCEL_GRACE) -> None:
    if process.is_alive() and grace > 0:
        process.terminate()
        process.join(grace)
    if process.is_alive():
        process.kill()
        process.join(5)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pid: int | None) -> int:
    """A process's resident memory in bytes (Linux /proc; 0 where it cannot be read, or before it has a pid)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


class WorkerPool:
    """The server's workers: at most ``limits.workers`` at once, the others waiting in a queue in
    the order they came (each told how many are ahead of it); shared by every session."""

    def __init__(self, default_limits: Callable[[], WorkerLimits], limits: WorkerLimits | None = None) -> None:
        self._cond = threading.Condition()
        self._default = default_limits
        self._limits = limits
        self.running: list[Job] = []
        self.queue: list[Job] = []

    @property
    def limits(self) -> WorkerLimits:
        if self._limits is None:
            self._limits = self._default()
        return self._limits

    def configure(self, limits: WorkerLimits | None) -> None:
        """Other limits (tests, benchmarks); None: from the environment again."""
        with self._cond:
            self._limits = limits
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def acquire(self, job: Job) -> bool:
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

    def release(self, job: Job) -> None:
        with self._cond:
            if job in self.running:
                self.running.remove(job)
            self._cond.notify_all()

    def status(self) -> dict:
        """Workers running and jobs waiting, now."""
        with self._cond:
            return {"running": len(self.running), "waiting": len(self.queue), "workers": self.limits.workers,
                    "memory": self.limits.memory}

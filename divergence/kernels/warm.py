"""The first run after installing, on two cores: while a job compiles the kernels it needs first
(compression, the miner), a second process compiles the statistics' kernels into numba's cache,
so that the job loads them instead of compiling them in turn.

Without an ahead-of-time build, numba's JIT compiles each kernel on its first call and caches it
on disk; a first run spends most of its time compiling, one kernel after the other. The kernels
the statistics call (:data:`WARMED`) are not needed until the mining is done, so the first cold
kernel a process meets starts ``python -m divergence.kernels._aot --warm``, which compiles them with their
declared types (the types every call is checked against: the same cache entries a call makes),
statistics first. A process about to compile one of them waits for that second process (at most
:data:`WAIT` seconds) and then loads it from the cache. Only when the call may use two processes
(:func:`divergence.kernels.processes.workers`: the dashboard and the command line ask, a library caller
with ``workers=2``) on two cores; ``DIVERGENCE_WARM=0`` turns it off.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

from .processes import free_cores, workers

__all__ = ["WARMED", "WAIT", "start", "wait", "child_env"]

#: the kernels the second process compiles, in this order: the statistics' (called last by a scan)
WARMED = ("stats.fisher", "stats.verdict_walk", "stats.shrinkage_kernel", "mining.lattice")
#: seconds a job waits for the second process before compiling a kernel itself
WAIT = 120.0

_LOCK = threading.Lock()
_PROC: list = []  # [the second process] once started in this process


def child_env(**overrides: str) -> dict:
    """The environment of a second process of this package (``python -m divergence...``): this
    one's, with this very package first on the path (wherever it was imported from here)."""
    home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join([home] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return dict(os.environ, PYTHONPATH=path, **overrides)


def start() -> None:
    """Start the second process (once per process; only when the call may use two processes on two
    cores, not when turned off)."""
    with _LOCK:
        if _PROC or os.environ.get("DIVERGENCE_WARM", "1") == "0" or workers() < 2 or free_cores() < 2:
            return
        try:
            _PROC.append(subprocess.Popen([sys.executable, "-m", "divergence.kernels._aot", "--warm"],
                                          stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          env=child_env(DIVERGENCE_WARM="0", DIVERGENCE_KERNELS="jit")))
        except OSError:
            _PROC.append(None)


def wait(key: str) -> None:
    """Before the kernel ``key`` (``module.name`` under the package) compiles: when the second
    process compiles it, wait for that process to end (its cache then serves)."""
    if not _PROC or _PROC[0] is None:
        return
    if not key.startswith(tuple(f"divergence.{m}." for m in WARMED)):
        return
    try:
        _PROC[0].wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        pass

"""How many processes a call of the library may run at once: one (the caller's own) unless asked.

With two or more, a large request mines its shorter lengths in a second process beside it
(:mod:`divergence.mining.shorter`), and a first run without the ahead-of-time kernels compiles
the statistics' kernels in a second process (:mod:`divergence.kernels.warm`). Neither changes a
result, only the time. The dashboard and the command line ask for every core
(:func:`set_workers`); a library caller asks with ``scan(..., workers=2)`` (or ``mine``), with
``divergence.set_workers(2)`` for the rest of its process, or with ``DIVERGENCE_WORKERS=2``.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

from ..errors import DivergenceInputError

__all__ = ["workers", "set_workers", "asking", "free_cores"]

#: what the current call asked for (``scan(..., workers=)``), None when it did not
_CALL: ContextVar[int | None] = ContextVar("divergence_workers", default=None)
#: what the process asked for (:func:`set_workers`), None when it did not
_PROCESS: list[int | None] = [None]


def free_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _checked(n: object, where: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DivergenceInputError(f"{where} must be a whole number of processes, 1 or more; got {n!r}.")
    return n


def workers() -> int:
    """The processes the current call may use, itself included: the call's ``workers=``, else the
    process's :func:`set_workers`, else ``DIVERGENCE_WORKERS``, else 1."""
    for asked in (_CALL.get(), _PROCESS[0]):
        if asked is not None:
            return asked
    env = os.environ.get("DIVERGENCE_WORKERS", "").strip()
    if not env:
        return 1
    try:
        return _checked(int(env), "DIVERGENCE_WORKERS")
    except ValueError:
        raise DivergenceInputError(f"DIVERGENCE_WORKERS must be a whole number of processes; got {env!r}.") from None


def set_workers(n: int | None) -> None:
    """Let every call of this process use ``n`` processes (the dashboard's workers and the command
    line set every core); None: back to ``DIVERGENCE_WORKERS`` or one."""
    _PROCESS[0] = None if n is None else _checked(n, "workers")


@contextlib.contextmanager
def asking(n: int | None) -> Iterator[None]:
    """Within the block, this call may use ``n`` processes (None: as the process says)."""
    if n is None:
        yield
        return
    token = _CALL.set(_checked(n, "workers"))
    try:
        yield
    finally:
        _CALL.reset(token)

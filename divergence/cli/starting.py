"""The command line's first handler of a signal, set before anything heavy is imported: until the
command sets its own, a signal ends it with one line and the usual exit status.

Only built-in modules here (``_signal``, ``os``, ``sys``: loaded with the interpreter), so that
``divergence/__init__.py`` can install it first thing under ``python -m divergence``, before even
``signal.py`` or ``typing`` is imported (issue 47 F26)."""
from __future__ import annotations

import _signal
import os
import sys

__all__ = ["stopped_while_starting", "catch_while_starting", "run_as_command", "one_blas_thread"]

#: the BLAS libraries' thread counts a command sets (unless the user did) before numpy is imported
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

#: the signals caught while starting, by number (``signal.Signals`` would import enum)
NAMES = {_signal.SIGINT: "SIGINT", _signal.SIGTERM: "SIGTERM"}
if hasattr(_signal, "SIGHUP"):
    NAMES[_signal.SIGHUP] = "SIGHUP"


def stopped_while_starting(signum: int, frame: object) -> None:  # noqa: ARG001 - a signal handler's signature
    """A signal before the command line has set its own handlers (its imports take a few tenths of a
    second): one line and the usual exit status, never a traceback; nothing was written yet."""
    sys.stderr.write(f"divergence: stopped ({NAMES.get(signum, signum)}) while starting; nothing was written.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def catch_while_starting() -> None:
    """SIGINT, SIGTERM and SIGHUP end the command with :func:`stopped_while_starting` (main thread
    only: elsewhere Python refuses to set a handler, and nothing is set)."""
    for sig in NAMES:
        try:
            _signal.signal(sig, stopped_while_starting)
        except ValueError:  # not the main thread
            return


def one_blas_thread() -> None:
    """One BLAS thread for the command, unless the user set a number: its products are small (the
    findings' models run with one thread already, :func:`divergence.stats.findings.distinct_findings`),
    and OpenBLAS's pool of a thread per core, started when numpy is imported, cost 0.05 CPU s of a
    1.8 s Adult scan."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")


def run_as_command(package: str = "divergence") -> bool:
    """Whether this interpreter was started as the command: ``python [options] -m divergence`` (while
    the package is imported for it, ``sys.argv[0]`` is ``-m`` and ``sys.orig_argv`` names the module), or
    the ``divergence`` console script (the script so named runs as ``__main__``)."""
    first = sys.argv[0] if sys.argv else ""
    if first != "-m":
        main = sys.modules.get("__main__")
        return os.path.basename(first) == package and getattr(main, "__file__", None) == first
    for i, arg in enumerate(getattr(sys, "orig_argv", [])[1:], 1):
        if arg == "-m":
            return sys.orig_argv[i + 1:i + 2] == [package]
        if arg.startswith("-m"):
            return arg[2:] == package
    return False

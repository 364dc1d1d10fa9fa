"""The command-line process: the cyclic garbage collector paused while the libraries load, and an end
without tearing the interpreter down. Neither changes what a command does or prints.

- **The collector.** Importing pandas, pyarrow, numpy and this package makes about 120,000 objects that
  live as long as the process; the collector's default first threshold (700 allocations) traced them
  170 times, 0.06 s of CPU (6% of a short scan), to free a few hundred objects. :func:`pause_collector`
  raises the threshold until :func:`libraries_loaded`, which moves what the imports made out of the
  collector's sight (:func:`gc.freeze`) and puts the threshold back: from there on it collects as by
  default (a scan, explain, compare and report call it once their libraries are imported). A command that
  never calls it (plan) keeps collecting, a thousand times less often.
- **The end.** A normal exit frees every object one by one and clears every module: about 0.1 s of CPU
  after an Adult scan. Nothing in it can be seen from outside, so :func:`end_process` ends the process
  at once after what a normal exit does that can be: the threads finished, the exit handlers run
  (:mod:`atexit`: coverage, logging, a pool's children), the standard streams flushed. Where one of those
  could not be done as a normal exit does it (a thread still running, a stream that cannot be flushed, a
  profiler or a debugger that reports after the command), the normal exit runs instead. Files are closed by the code that writes them
  (:func:`divergence.data.atomic_write.write_atomically`), never by the garbage collector.
"""
from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

__all__ = ["pause_collector", "libraries_loaded", "end_process", "PAUSED_THRESHOLD"]

#: the collector's first threshold while the libraries load (the default is 700)
PAUSED_THRESHOLD = 1_000_000
_default: list[tuple[int, ...]] = []  # the thresholds before the pause, while paused


def pause_collector() -> None:
    """Collect a thousand times less often until :func:`libraries_loaded`."""
    if not _default:
        _default.append(gc.get_threshold())
        gc.set_threshold(PAUSED_THRESHOLD, *_default[0][1:])


def libraries_loaded() -> None:
    """The libraries are in: what they made is kept out of every later collection, and the collector's
    thresholds are what they were before :func:`pause_collector` (nothing when it was not paused)."""
    if _default:
        gc.freeze()
        gc.set_threshold(*_default.pop())


def end_process(code: int) -> NoReturn:
    """Exit with status ``code``, skipping the interpreter's teardown when nothing depends on it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # a thread still working: the normal exit waits for it
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # a profiler or a tracer (python -m cProfile, a debugger) writes after the command
    try:
        _flush()
        atexit._run_exitfuncs()
        _flush()
    except BaseException:  # noqa: BLE001 - a stream that cannot be written: the normal exit says so
        sys.exit(code)
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()

"""Ending the command-line process once its command has returned, without tearing the interpreter down.

A normal exit frees every object one by one (pandas', pyarrow's, numpy's and the result's) and clears
every module: about 0.1 s of CPU after an Adult scan, a tenth of a short one. Nothing in it can be seen
from outside, so the process ends at once after what a normal exit does that can be: the threads
finished, the exit handlers run (:mod:`atexit`: coverage, logging, a pool's children), the standard
streams flushed. Where one of those could not be done as a normal exit does it (a thread still running,
a stream that cannot be flushed), the normal exit runs instead. Files are closed by the code that
writes them (:func:`divergence.data.atomic_write.write_atomically`), never by the garbage collector.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

__all__ = ["end_process"]


def end_process(code: int) -> NoReturn:
    """Exit with status ``code``, skipping the interpreter's teardown when nothing depends on it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # a thread still working: the normal exit waits for it
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

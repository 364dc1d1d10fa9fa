"""The command line's first handler of a signal, set before anything heavy is imported: until the
command sets its own, a signal ends it with one line and the usual exit status."""
from __future__ import annotations

import os
import signal
import sys

__all__ = ["stopped_while_starting", "catch_while_starting"]


def stopped_while_starting(signum, frame) -> None:  # noqa: ARG001 - a signal handler's signature
    """A signal before the command line has set its own handlers (its imports take a few tenths of a
    second): one line and the usual exit status, never a traceback; nothing was written yet."""
    sys.stderr.write(f"divergence: stopped ({signal.Signals(signum).name}) while starting; nothing was written.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def catch_while_starting() -> None:
    """SIGINT, SIGTERM and SIGHUP end the command with :func:`stopped_while_starting` (main thread only)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, stopped_while_starting)

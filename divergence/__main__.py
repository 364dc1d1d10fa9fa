"""``python -m divergence``: the command line (see divergence.cli.cli)."""
import os
import signal
import sys


def _stopped_while_starting(signum, frame):  # noqa: ARG001 - a signal handler's signature
    """A signal before the command line has set its own handlers (its imports take a few tenths of a
    second): one line and the usual exit status, never a traceback; nothing was written yet."""
    sys.stderr.write(f"divergence: stopped ({signal.Signals(signum).name}) while starting; nothing was written.\n")
    sys.stderr.flush()
    os._exit(128 + signum)


if __name__ == "__main__":
    for _sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if _sig is not None:
            signal.signal(_sig, _stopped_while_starting)

from .cli.cli import console  # noqa: E402 - after the handlers: the imports are the window they cover

if __name__ == "__main__":
    console()

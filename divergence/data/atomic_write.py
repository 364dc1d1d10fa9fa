"""Writing a file so that a failure never leaves half of it and a reader never sees half of it:
through a temporary file beside it, renamed into place (:func:`write_atomically`); a device or a
named pipe written as it is; the temporaries of a run killed while writing removed.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import DivergenceOutputError
from .bounded_reading import env_number, first_line

__all__ = ["write_atomically", "remove_stale_temporaries", "FIFO_WAIT"]


_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{12}\.tmp$")
#: the longest target name kept whole in a temporary file's name (the temporary adds up to 40
#: characters, and a name has at most 255 bytes): a longer one is cut and keyed by its hash
_TEMPORARY_NAME = 150


def _temporary_key(name: str) -> str:
    """The part of a temporary file's name that says which target it is for."""
    if len(name.encode("utf-8")) <= _TEMPORARY_NAME:
        return name
    head = name.encode("utf-8")[:100].decode("utf-8", errors="ignore")
    return f"{head}~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"


def write_atomically(path: str | os.PathLike, content: str | bytes | Callable[[str], None]) -> Path:
    """Write a file through a temporary file in its folder, renamed into place: a failure never
    leaves half a file, and a reader never sees one.

    ``content``: text (written as UTF-8), bytes, or a function that writes the file at the
    path it is given. The target is never harmed: a symbolic link is followed (its target is
    written, the link stays); a character device or a pipe (``/dev/null``, ``/dev/stdout``) is
    written in place, never replaced by a regular file; a folder, a block device or a socket is
    refused. A new file gets the usual permissions (0666 less the umask), a replaced one keeps
    its own. Temporary files left by an earlier run that was killed are removed. A missing
    folder, a refused target and an ``OSError`` (disk full, permission denied) are a
    :class:`DivergenceOutputError` of one line naming the path.
    """
    p = Path(path)
    target = os.path.realpath(p)  # every link followed (a dangling one: the file it names)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise DivergenceOutputError(f"Cannot write '{path}': it is a folder; give the path of a file in it.")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_in_place(path, target, content)
            return p
        if not stat.S_ISREG(st.st_mode):
            what = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) \
                else "not a regular file"
            raise DivergenceOutputError(f"Cannot write '{path}': it is {what}, not a file.")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        shown_dir = os.path.dirname(os.path.abspath(p)) if os.path.realpath(p) == os.path.abspath(p) else directory
        raise DivergenceOutputError(f"Cannot write '{path}': folder '{shown_dir}' does not exist.")
    name = os.path.basename(target)
    remove_stale_temporaries(directory, name)
    tmp = os.path.join(directory, f".{_temporary_key(name)}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    try:
        if callable(content):
            os.close(fd)
            content(tmp)
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
        if st is not None:  # a replaced file keeps its permissions
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
        raise
    return p


#: seconds a named pipe given as the output waits for its reader (DIVERGENCE_FIFO_WAIT)
FIFO_WAIT = 10.0


def _write_in_place(path, target: str, content) -> None:
    """Write into a device or a pipe as it is (no temporary file, no rename). A named pipe with no
    reader is refused after :data:`FIFO_WAIT` seconds (a blocking open would wait forever, deaf to
    SIGTERM); with one, the
    first writer's end stays open while the content is written, so the reader never sees an early end."""
    held = None
    try:
        if stat.S_ISFIFO(os.stat(target).st_mode):
            # wait a while for a reader (one started just after the command), in short sleeps a signal
            # interrupts, never in a blocking open()
            wait = env_number("DIVERGENCE_FIFO_WAIT", FIFO_WAIT)
            deadline = time.monotonic() + wait
            while held is None:
                try:
                    held = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:
                    if exc.errno != errno.ENXIO:
                        raise
                    if time.monotonic() >= deadline:
                        raise DivergenceOutputError(f"Cannot write '{path}': it is a named pipe and no reader came "
                                                    f"in {wait:g} s; start the reader first.") from None
                    time.sleep(0.05)
        if callable(content):
            content(target)
        else:
            with open(target, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    finally:
        if held is not None:
            os.close(held)


def _reason(exc: BaseException) -> str:
    """An OSError's reason in words ('no space left on device'), on one line."""
    text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else None) or first_line(exc)
    m = re.search(r"\[errno (\d+)\]\s*(.*)", text, re.I)  # pyarrow: "... Detail: [errno 28] No space left on device"
    if m:
        text = m.group(2).strip() or os.strerror(int(m.group(1)))
    text = " ".join(text.split())
    return (text[:1].lower() + text[1:])[:200].rstrip(".")


def remove_stale_temporaries(directory: str, name: str) -> list[str]:
    """Remove the temporary files of earlier writes of ``name`` whose process is gone (a run
    killed while writing): returns the names removed. A live process's file is left alone."""
    removed: list[str] = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        m = _TEMPORARY.match(entry)
        if not m or m.group("name") != _temporary_key(name):
            continue
        pid = int(m.group("pid"))
        if pid != os.getpid() and _alive(pid):
            continue
        if pid == os.getpid():
            continue  # this process's own write in progress (another thread)
        try:
            os.unlink(os.path.join(directory, entry))
            removed.append(entry)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True

"""The dashboard's processes, read from /proc: which scan workers a server runs (no pytest here: the
browser tests and ``benchmarks/speed/bench_responsiveness.py`` both use it)."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["scan_workers"]


def _children_by_parent() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            out.setdefault(ppid, []).append(int(entry))
    return out


def scan_workers(server_pid: int) -> list[int]:
    """The server's scan workers: the children of its fork server (the server's child whose
    command line says forkserver)."""
    tree = _children_by_parent()

    def is_fork_server(pid: int) -> bool:
        try:
            return b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    return [w for fs in tree.get(server_pid, []) if is_fork_server(fs) for w in tree.get(fs, [])]


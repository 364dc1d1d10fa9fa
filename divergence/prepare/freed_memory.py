"""Memory freed by a step, given back to the system before the next takes its own (issue 49, memory
at scale): what an allocator keeps of freed pages counts in a process's resident memory as much as
what it holds."""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["release_reader_memory", "trim_heap"]

_LIBC: list = []


def release_reader_memory() -> None:
    """Give back the pages pyarrow's default pool (mimalloc) keeps after a reader freed them
    (``pd.read_parquet`` of 10**7 rows leaves about 1.7 times the frame there); only when pyarrow is
    loaded (never imported here)."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except Exception:  # an old pyarrow, another pool: the memory stays where it is
            pass


def trim_heap() -> None:
    """Give back the free pages of the C heap (glibc's ``malloc_trim``): numpy's arrays below glibc's
    mmap threshold (32 MiB once larger ones were freed) come from the heap, and freed ones stay
    resident there between live ones. A no-op where the C library has no ``malloc_trim``."""
    if not _LIBC:
        found = None
        if sys.platform.startswith("linux"):
            for name in ("libc.so.6", None):  # glibc's usual name, else a search (slower: it runs ldconfig)
                try:
                    found = getattr(ctypes.CDLL(name or ctypes.util.find_library("c")), "malloc_trim", None)
                    break
                except (OSError, TypeError):
                    continue
        if found is not None:
            found.argtypes, found.restype = [ctypes.c_size_t], ctypes.c_int
        _LIBC.append(found)
    if _LIBC[0] is not None:
        _LIBC[0](0)

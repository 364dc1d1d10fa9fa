"""Ahead-of-time build of the compiled kernels, so that a short job never imports numba.

    python -m divergence.kernels._aot            # build divergence/kernels/_kernels*.so for any CPU of this kind
    python -m divergence.kernels._aot --host     # for this CPU only (what `make` builds; faster code)
    python -m divergence.kernels._aot --check    # say whether the build is there and fresh

Every kernel called from Python (``@kernel(types...)`` in :data:`divergence.kernels.compiled.KERNEL_MODULES`)
is compiled with its declared signature by numba's ``pycc`` into one extension module, and
``_kernels.json`` beside it records what it was built from (:func:`divergence.kernels.compiled.build_identity`).
Both are written into the package folder, which must be writable: for an installed package,
run this once after ``pip install`` (or let numba's JIT compile the kernels on first use).
Needs numba, setuptools and a C compiler with Python's headers (``make`` installs Debian's).
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .compiled import (
    EXTENSION,
    HERE,
    KERNEL_MODULES,
    REGISTRY,
    STAMP,
    build_identity,
    build_status,
    forget_build,
    load_build,
    load_numba,
)
from .warm import WARMED

__all__ = ["build", "exported_kernels", "warm_cache", "main"]


def exported_kernels() -> list:
    """Every kernel called from Python, in a fixed order (importing the kernel modules)."""
    for name in KERNEL_MODULES:
        importlib.import_module(f"divergence.{name}")
    prefixes = tuple(f"divergence.{name}." for name in KERNEL_MODULES)
    return sorted((k for k in REGISTRY.values() if k.signature is not None and k.key.startswith(prefixes)),
                  key=lambda k: k.key)


def warm_cache() -> int:
    """Compile the kernels of :data:`divergence.kernels.warm.WARMED` with numba's JIT, with their
    declared types, into its cache on disk."""
    numba = load_numba()
    for kernel in exported_kernels():
        if kernel.key.startswith(tuple(f"divergence.{m}." for m in WARMED)):
            dispatcher = numba.njit(cache=True, nogil=True)(kernel.py_func)
            dispatcher.compile(tuple(t.numba_type() for t in kernel.signature))
    return 0


@contextlib.contextmanager
def _build_lock(dest: Path) -> Iterator[None]:
    """An exclusive lock on ``dest``'s build (a file lock, released when the process ends however it
    ends): two builds into one folder run one after the other, each installing a whole module."""
    import fcntl

    with open(dest / ".aot-build.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(directory: str | os.PathLike | None = None, target_cpu: str = "") -> Path:
    """Compile every exported kernel into ``directory`` (default: the package folder) and write
    its stamp. Built in a temporary folder beside the target, then moved into place: the
    extension first, the stamp last, so a build cut short is never taken for a fresh one.
    ``target_cpu`` '' means any CPU of the architecture; 'host' this one's."""
    load_numba()
    from numba.pycc import CC

    dest = Path(directory) if directory is not None else HERE
    kernels = exported_kernels()
    identity = build_identity()
    identity["target"] = target_cpu or "generic"
    # pycc compiles in a folder it makes under tempfile's folder: pointed into this build's own
    # temporary folder, it is removed with it and no other build's folder is ever touched; a lock
    # on the target folder makes a second build in the same checkout wait for the first
    with _build_lock(dest), tempfile.TemporaryDirectory(prefix=".aot-build-", dir=dest) as tmp:
        saved = tempfile.tempdir
        tempfile.tempdir = tmp
        try:
            cc = CC(EXTENSION)
            cc.output_dir = tmp
            cc.target_cpu = target_cpu
            for k in kernels:
                cc.export(k.export_name, tuple(t.numba_type() for t in k.signature))(k.py_func)  # return type inferred
            cc.compile()
        finally:
            tempfile.tempdir = saved
        built = [p for p in Path(tmp).iterdir() if p.name.startswith(EXTENSION + ".")]
        if len(built) != 1:
            raise RuntimeError(f"expected one extension module in {tmp}, found {built}")
        stamp = Path(tmp) / STAMP
        stamp.write_text(json.dumps(identity, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        target = dest / built[0].name
        (dest / STAMP).unlink(missing_ok=True)
        os.replace(built[0], target)
        os.replace(stamp, dest / STAMP)
    forget_build()
    return target


def main(argv: list[str] | None = None) -> int:
    """Build (or ``--check``) the ahead-of-time kernels; exit status 1 when that fails."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m divergence.kernels._aot", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only say whether a fresh build is there")
    p.add_argument("--host", action="store_true", help="compile for this CPU only (not portable)")
    p.add_argument("--warm", action="store_true", help="compile the statistics' kernels into numba's JIT cache "
                   "(the second process of a first run without a build: divergence.kernels.warm)")
    args = p.parse_args(argv)
    if args.warm:
        return warm_cache()
    if args.check:
        print(build_status())
        return 0 if load_build()[0] is not None else 1
    # say what is about to happen: the build prints nothing for a minute or two
    print(f"divergence: building the compiled kernels ahead of time ({len(exported_kernels())} numba kernels, "
          f"with numba's pycc and the C compiler, for {'this CPU' if args.host else 'any CPU of this kind'}) "
          f"into {HERE}, so that short jobs never load numba; usually 1-2 minutes on two idle cores, "
          "longer on busy ones. If it fails, numba's JIT compiles the kernels on first use instead.", flush=True)
    print(f"  (now: {build_status()})", flush=True)
    start = time.perf_counter()
    try:
        path = build(target_cpu="host" if args.host else "")
    except Exception as exc:  # no C compiler, no setuptools, an unsupported construct, ...
        why = " ".join(str(exc).split())[:300]
        print(f"divergence: ahead-of-time kernels not built after {time.perf_counter() - start:.0f} s "
              f"({type(exc).__name__}: {why}); numba's JIT will compile them on first use", file=sys.stderr)
        return 1
    print(f"built {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

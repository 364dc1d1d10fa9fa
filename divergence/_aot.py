"""Ahead-of-time build of the compiled kernels, so a short job never imports numba.

    python -m divergence._aot            # build divergence/_kernels*.so (tens of seconds)
    python -m divergence._aot --check    # say whether the build is there and fresh

The kernels keep one source, the ``@_njit`` functions of mining, stats and lattice; this
module compiles those with an ``export`` signature (and the kernels they call) into one
extension module with ``numba.pycc``, which runs without numba. The build carries a hash of
the kernels' code: after any edit it is stale and ignored (numba's JIT runs, as without a
build) until it is built again (``make`` does it). Ahead-of-time functions hold the GIL and
are compiled for any x86-64 CPU; the miner still prefers numba's JIT, on threads, for tables
where start-up time does not matter (see ``mining.JIT_MIN_ROWS``).
"""
from __future__ import annotations

import hashlib
import importlib
import operator
import os
import re
import shutil
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

__all__ = ["build", "status", "source_hash", "main"]

#: the modules whose kernels are built, in this order
MODULES = ("divergence.mining", "divergence.stats", "divergence.lattice")
EXTENSION = "_kernels"
_DTYPES = {"b1": np.bool_, "i4": np.int32, "i8": np.int64, "f4": np.float32, "f8": np.float64}
_TYPE = re.compile(r"^(b1|i4|i8|f4|f8)(?:\[(.*)\])?$")

_loaded: list = []  # [the extension module, or None when absent or stale]


def kernels() -> list:
    """Every kernel of MODULES (exported or called by an exported one), in a fixed order."""
    from .mining import _KERNELS

    for name in MODULES:
        importlib.import_module(name)
    return sorted((k for k in _KERNELS.values() if k.py_func.__module__ in MODULES), key=lambda k: k.key)


def _digest(h, code: types.CodeType, namespace: dict) -> None:
    h.update(code.co_code)
    h.update(repr((code.co_argcount, code.co_names, code.co_varnames)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest(h, const, namespace)
        else:
            h.update(repr(const).encode())
    for name in code.co_names:  # module constants are frozen into the compiled code
        value = namespace.get(name)
        if isinstance(value, (bool, int, float, str)):
            h.update(f"{name}={value!r}".encode())


def _cpu_identity() -> str:
    """This machine's CPU model and feature flags (the build targets them: `make` passes --host)."""
    import platform

    ident = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    ident += "|" + line.split(":", 1)[-1].strip()
                if line.strip() == "":  # the first processor is enough
                    break
    except OSError:
        pass
    return ident


def source_hash() -> int:
    """63-bit hash of the kernels' code, export signatures, the Python version and the CPU (a
    build for this CPU must not run on another: it would count as stale and the JIT serves)."""
    h = hashlib.sha256(repr(sys.version_info[:2]).encode())
    h.update(_cpu_identity().encode())
    for k in kernels():
        h.update(f"{k.key}:{k.export}".encode())
        _digest(h, k.py_func.__code__, k.py_func.__globals__)
    return int.from_bytes(h.digest()[:8], "little") >> 1


def export_name(kernel) -> str:
    module, name = kernel.key.rsplit(".", 1)
    return f"{module.rsplit('.', 1)[-1]}_{name.lstrip('_')}"


def _parse(export: str) -> list[tuple[str, int, str]]:
    """Argument types as (code, ndim, layout 'C'/'F'/'A'); ndim 0 for a scalar."""
    out, depth, start = [], 0, 0
    parts = []
    for i, ch in enumerate(export + ","):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(export[start:i].replace(" ", ""))
            start = i + 1
    for part in parts:
        m = _TYPE.match(part)
        if not m:
            raise ValueError(f"unsupported kernel argument type {part!r}")
        if m.group(2) is None:
            out.append((m.group(1), 0, ""))
            continue
        dims = m.group(2).split(",")
        layout = "C" if dims[-1] == "::1" else "F" if dims[0] == "::1" else "A"
        out.append((m.group(1), len(dims), layout))
    return out


class _Mismatch(TypeError):
    """An argument the ahead-of-time function cannot take without changing its value."""


def _integer(x) -> int:
    try:
        return operator.index(x)
    except TypeError:
        raise _Mismatch(f"expected an integer, got {x!r}") from None


def _converter(code: str, ndim: int, layout: str):
    if ndim == 0:
        return {"b1": bool, "i4": _integer, "i8": _integer, "f4": float, "f8": float}[code]
    dtype = np.dtype(_DTYPES[code])
    order = None if layout == "A" else layout

    def convert(a):
        a = np.asarray(a)
        if a.ndim != ndim or not np.can_cast(a.dtype, dtype, "safe"):
            raise _Mismatch(f"expected a {ndim}-d {dtype} array, got a {a.ndim}-d {a.dtype} one")
        return np.asarray(a, dtype=dtype, order=order)

    return convert


def _load():
    """The extension module when it is present and built from the current kernels, else None."""
    if not _loaded:
        mod = None
        try:
            mod = importlib.import_module(f"divergence.{EXTENSION}")
            if mod.source_hash() != source_hash():
                mod = None
        except Exception:  # absent, built for another Python, or broken: the JIT serves
            mod = None
        _loaded.append(mod)
    return _loaded[0]


def function(kernel):
    """The ahead-of-time build of ``kernel``, converting its arguments (numba's compiled
    wrapper checks only their item size); None when there is no fresh build of it."""
    if kernel.export is None:
        return None
    mod = _load()
    fn = getattr(mod, export_name(kernel), None) if mod is not None else None
    if fn is None:
        return None
    convert = [_converter(*t) for t in _parse(kernel.export)]

    def call(*args):
        if len(args) != len(convert):
            raise TypeError(f"{kernel.__name__}() takes {len(convert)} arguments, got {len(args)}")
        try:
            args_in = [c(a) for c, a in zip(convert, args)]
        except _Mismatch:  # other types than the build's: numba's JIT compiles for them
            return kernel.jit(*args)
        return fn(*args_in)

    call.__name__ = kernel.__name__
    return call


def status() -> str:
    """One line: where the build is and whether the kernels use it."""
    where = Path(__file__).parent
    found = sorted(where.glob(f"{EXTENSION}.*"))
    if not found:
        return f"no ahead-of-time build in {where}: numba's JIT compiles the kernels"
    if _load() is None:
        return f"{found[0]} is stale or unloadable: numba's JIT compiles the kernels"
    return f"{found[0]} is fresh: ordinary jobs run without numba"


def build(directory: str | os.PathLike | None = None, target_cpu: str = "") -> Path:
    """Compile every exported kernel into ``directory`` (default: the package), atomically:
    built in a temporary folder beside it, then moved into place. ``target_cpu`` '' means
    any CPU of the architecture; 'host' this one's."""
    from numba import types as nt
    from numba.pycc import CC

    from .mining import _import_numba

    _import_numba()
    dest = Path(directory) if directory is not None else Path(__file__).parent
    all_kernels = kernels()
    stamp = source_hash()
    tmp = tempfile.mkdtemp(prefix=".aot-build-", dir=dest)
    try:
        cc = CC(EXTENSION)
        cc.output_dir = tmp
        cc.target_cpu = target_cpu
        for k in all_kernels:
            if k.export is None:
                continue
            args = tuple(_numba_type(nt, *t) for t in _parse(k.export))
            cc.export(export_name(k), args)(k.py_func)  # the return type is inferred
        cc.export("source_hash", "i8()")(eval(f"lambda: {stamp}"))
        saved, tempfile.tempdir = tempfile.tempdir, tmp  # pycc's own build folder, removed with ours
        try:
            cc.compile()
        finally:
            tempfile.tempdir = saved
        built = [p for p in Path(tmp).iterdir() if p.name.startswith(EXTENSION + ".")]
        if len(built) != 1:
            raise RuntimeError(f"expected one extension module in {tmp}, found {built}")
        target = dest / built[0].name
        os.replace(built[0], target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _loaded.clear()
    return target


def _numba_type(nt, code: str, ndim: int, layout: str):
    scalar = {"b1": nt.boolean, "i4": nt.int32, "i8": nt.int64, "f4": nt.float32, "f8": nt.float64}[code]
    return scalar if ndim == 0 else nt.Array(scalar, ndim, layout)


def main(argv: list[str] | None = None) -> int:
    """Build (or ``--check``) the ahead-of-time kernels; exit status 1 when that fails."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m divergence._aot", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only say whether a fresh build is there")
    p.add_argument("--host", action="store_true", help="compile for this CPU only (not portable)")
    args = p.parse_args(argv)
    if args.check:
        print(status())
        return 0 if _load() is not None else 1
    try:
        path = build(target_cpu="host" if args.host else "")
    except Exception as exc:  # no C compiler, an unsupported construct, ...
        why = " ".join(str(exc).split())[:300]
        print(f"divergence: ahead-of-time kernels not built ({type(exc).__name__}: {why}); "
              "numba's JIT will compile them on first use", file=sys.stderr)
        return 1
    print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

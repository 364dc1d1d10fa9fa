"""Compiled kernels: one source per kernel, the Python function under ``@kernel``.

A kernel runs as numba's ahead-of-time build (``divergence/kernels/_kernels*.so``, made by ``python -m
divergence.kernels._aot``, which ``make`` runs) when a fresh build is there, so an ordinary job never
imports numba; without one, as numba's JIT (compiled on first use, cached on disk). A build is
fresh when it was made from the current source of the kernel modules (:data:`KERNEL_MODULES`),
with the numba, numpy and Python versions installed now, for this CPU: ``_kernels.json`` beside
it records them, and a build that differs in any is ignored (the JIT serves) until it is built
again. ``DIVERGENCE_KERNELS=jit`` makes a process use the JIT, ``=aot`` insists on the build.

A kernel called from Python declares its argument types in numba's spelling, from this module's
:data:`b1`, :data:`i1`, :data:`i4`, :data:`i8`, :data:`f4`, :data:`f8`: ``@kernel(i4[:, ::1], f8[::1], i8)``
(a C-contiguous 2-d int32 array, a contiguous float64 vector, an int64). The build compiles that
signature, and every call is checked against it whichever compiled code runs: an array of another
dtype or layout is refused with a TypeError (numba's ahead-of-time wrapper would reinterpret its
bytes). Helpers called only from other kernels take no types: they are compiled into their callers.

Ahead-of-time functions hold the GIL while they run, so the drivers call the long kernels in
pieces of a few milliseconds of work (the miner by a work quota, the lattice walks by itemsets,
Fisher's test by slices): a scan never blocks the other threads of its process for long.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import json
import operator
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Literal

import numpy as np

__all__ = ["kernel", "Kernel", "ArgType", "b1", "i1", "i4", "i8", "f4", "f8", "KERNEL_MODULES", "REGISTRY",
           "build_identity", "build_status", "load_build", "load_numba", "mode", "EXTENSION", "STAMP", "HERE",
           "forget_build", "say_compiling", "COMPILING", "never_compile_here", "compiles_here"]

#: the modules holding kernels (dotted paths under the package): their source is part of a build's identity
KERNEL_MODULES = ("prepare.tallies", "prepare.compression", "mining.mining_kernel", "mining.lattice", "stats.fisher",
                  "stats.verdict_walk", "stats.findings_kernel", "stats.shrinkage_kernel")
#: the ahead-of-time build: the extension module's name and its stamp file, in this folder
EXTENSION = "_kernels"
STAMP = "_kernels.json"
HERE = Path(__file__).resolve().parent
#: the package's folder, where the kernel modules' paths start
PACKAGE = HERE.parent

_DTYPES = {"b1": np.bool_, "i1": np.int8, "i4": np.int32, "i8": np.int64, "f4": np.float32, "f8": np.float64}


class ArgType:
    """An argument type of an exported kernel: a scalar (``i8``) or an array (``i8[::1]``,
    ``f8[:, ::1]``, ``i4[::1, :]``), written and read as numba writes them."""

    __slots__ = ("code", "dims", "_array")

    def __init__(self, code: str, dims: tuple[slice, ...] = ()) -> None:
        self.code, self.dims = code, dims
        #: an array type's dtype, dimensions and whether it must be C- or Fortran-contiguous (read
        #: on every call: a kernel is called thousands of times in a scan)
        self._array = (np.dtype(_DTYPES[code]), len(dims), self.layout) if dims else None

    def __getitem__(self, dims) -> ArgType:
        dims = dims if isinstance(dims, tuple) else (dims,)
        if self.dims or not all(isinstance(d, slice) and d.start is None and d.stop is None and d.step in (None, 1)
                                for d in dims):
            raise TypeError(f"not an array type: {self.code}[{dims!r}]")
        return ArgType(self.code, dims)

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def layout(self) -> Literal["", "C", "F", "A"]:
        """'C' or 'F' (contiguous in that order) or 'A' (any strides); '' for a scalar."""
        if not self.dims:
            return ""
        if self.dims[-1].step == 1:
            return "C"
        return "F" if self.dims[0].step == 1 else "A"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_DTYPES[self.code])

    def __repr__(self) -> str:
        if not self.dims:
            return self.code
        return f"{self.code}[{', '.join('::1' if d.step == 1 else ':' for d in self.dims)}]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArgType) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def check(self, value):
        """``value`` as the compiled code takes it: a scalar converted without loss, an array
        as it is; a TypeError when it is another type."""
        want = self._array
        if want is not None and type(value) is np.ndarray and value.dtype == want[0] and value.ndim == want[1] \
                and (want[2] == "A" or (value.flags.c_contiguous if want[2] == "C" else value.flags.f_contiguous)):
            return value
        if not self.dims:
            if self.code == "b1":
                if isinstance(value, (bool, np.bool_)):
                    return bool(value)
            elif self.code in ("i1", "i4", "i8"):
                if not isinstance(value, (bool, np.bool_)):
                    return operator.index(value)
            elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
                return float(value)
            raise TypeError(f"expected {self!r}, got {type(value).__name__} {value!r}")
        if not isinstance(value, np.ndarray) or value.dtype != self.dtype or value.ndim != self.ndim:
            got = (f"a {value.ndim}-d {value.dtype} array" if isinstance(value, np.ndarray)
                   else type(value).__name__)
            raise TypeError(f"expected {self!r} (a {self.ndim}-d {self.dtype} array), got {got}")
        layout = self.layout
        if (layout == "C" and not value.flags.c_contiguous) or (layout == "F" and not value.flags.f_contiguous):
            raise TypeError(f"expected {self!r}: a {'C' if layout == 'C' else 'Fortran'}-contiguous array")
        return value

    def numba_type(self):
        """numba's type (numba imported by the caller: the build)."""
        from numba import types

        scalar = getattr(types, self.code)
        # numba reads a lone ``[::1]`` as Fortran order: a 1-d vector declared so and a C vector made
        # inside the kernel (a ravel) would unify to "any layout", indexed through strides
        layout = self.layout
        return types.Array(scalar, self.ndim, layout) if layout != "" else scalar


b1, i1, i4, i8, f4, f8 = (ArgType(c) for c in ("b1", "i1", "i4", "i8", "f4", "f8"))

#: every kernel by its key ``module.name``
REGISTRY: dict[str, Kernel] = {}
_LOCK = threading.RLock()
_NUMBA: list = []  # numba, once imported and told about kernels
_BUILD: list = []  # [(the extension module or None, the sentence saying why)]


def mode() -> str:
    """``DIVERGENCE_KERNELS``: ``auto`` (the build when fresh, else the JIT), ``aot`` or ``jit``."""
    value = os.environ.get("DIVERGENCE_KERNELS", "auto")
    return value if value in ("aot", "jit") else "auto"


class Kernel:
    """A compiled kernel (see the module's docstring): call it as the function it decorates."""

    def __init__(self, func: Callable, signature: tuple[ArgType, ...] | None) -> None:
        functools.update_wrapper(self, func)
        self.py_func = func
        self.signature = signature
        self.key = f"{func.__module__}.{func.__qualname__}"
        #: its name in the ahead-of-time extension module
        self.export_name = f"{func.__module__.rsplit('.', 1)[-1]}_{func.__name__.lstrip('_')}"
        self._jit = None
        #: the ahead-of-time function; False: there is none, None: not looked up yet
        self._aot: Callable | Literal[False] | None = None
        REGISTRY[self.key] = self

    def __repr__(self) -> str:
        return f"<kernel {self.key}>"

    def retyped(self, name: str, *signature: ArgType) -> Kernel:
        """The same kernel compiled a second time, as ``name`` (in this kernel's module), for the
        argument types ``signature``: its own entry in the ahead-of-time build (8-bit codes beside
        32-bit ones, say)."""
        f = self.py_func
        copy = FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
        copy.__qualname__, copy.__module__, copy.__doc__ = name, f.__module__, f.__doc__
        return kernel(*signature)(copy)

    def __call__(self, *args):
        if self.signature is not None:
            if len(args) != len(self.signature):
                raise TypeError(f"{self.py_func.__name__}() takes {len(self.signature)} arguments, got {len(args)}")
            checked = []
            for j, (t, a) in enumerate(zip(self.signature, args)):
                try:
                    checked.append(t.check(a))
                except TypeError as exc:
                    raise TypeError(f"{self.key}, argument {j + 1}: {exc}") from None
            args = tuple(checked)
        return self.function()(*args)

    def function(self) -> Callable:
        """The compiled code this process runs: the ahead-of-time function or numba's JIT."""
        m = mode()
        if m != "jit" and self.signature is not None:
            if self._aot is None:
                build, why = load_build()
                found = getattr(build, self.export_name, False) if build is not None else False
                self._aot = found if callable(found) else False
                if self._aot is False and m == "aot":
                    raise RuntimeError(f"DIVERGENCE_KERNELS=aot, but {why}")
            if self._aot is not False:
                return self._aot
        if _INTERPRET:  # a process that never compiles: the function as Python (see never_compile_here)
            return self.py_func
        return self.jit

    @property
    def jit(self):
        """numba's JIT dispatcher of the kernel (``cache=True, nogil=True``)."""
        if self._jit is None:
            cold = False
            with _LOCK:
                if self._jit is None:
                    dispatcher = load_numba().njit(cache=True, nogil=True)(self.py_func)
                    cold = _is_cold(dispatcher)
                    say_compiling(dispatcher)
                    self._jit = dispatcher
            if cold:  # a first run: the statistics' kernels compile beside it (kernels.warm)
                from . import warm

                warm.start()
                warm.wait(self.key)
        return self._jit


#: set (True) in a process that must never compile (:func:`never_compile_here`)
_INTERPRET: list = []


def never_compile_here() -> None:
    """Kernels in this process run from the ahead-of-time build or, without one, as the Python
    functions they decorate: numba is never imported nor called here. For the dashboard's server
    (issue 47 N9): numba's compiler holds the GIL for seconds per kernel (and its import for a
    second or more), so a kernel compiled there froze every session and the health check; the
    server's kernel calls are small (a typed slice's Fisher test), its scans run in workers."""
    if not _INTERPRET:
        _INTERPRET.append(True)


def compiles_here() -> bool:
    """Whether this process may compile a kernel with numba's JIT (False after :func:`never_compile_here`)."""
    return not _INTERPRET


#: what a process says, once, when numba is about to compile a kernel it has no cache of
COMPILING = ("divergence: compiling the kernels for this machine with numba's JIT (the first run after "
             "installing: a minute or two, once; cached for the next runs; `make kernels` builds them ahead of "
             "time)")
_SAID: list = []


def _is_cold(dispatcher) -> bool:
    """Whether ``dispatcher`` (numba's, with ``cache=True``) has nothing cached on disk (False when
    another numba's cache layout does not say)."""
    try:
        return not os.path.exists(dispatcher._cache._cache_file._index_path)
    except (AttributeError, TypeError):
        return False


def say_compiling(dispatcher, stream=None) -> bool:
    """Say :data:`COMPILING` on stderr, once per process, when ``dispatcher`` (numba's, with
    ``cache=True``) has nothing cached on disk: its first call compiles, which takes seconds per
    kernel, and a first run after installing would otherwise sit silent. True when it spoke."""
    if _SAID:
        return False
    try:
        cold = not os.path.exists(dispatcher._cache._cache_file._index_path)
    except (AttributeError, TypeError):  # another numba's cache layout: say nothing rather than guess
        return False
    if cold:
        _SAID.append(True)
        print(COMPILING, file=stream or sys.stderr, flush=True)
    return cold


def kernel(*signature):
    """Decorator of a kernel: ``@kernel`` (a helper called from kernels) or ``@kernel(types...)``
    (called from Python, compiled into the ahead-of-time build)."""
    if len(signature) == 1 and callable(signature[0]) and not isinstance(signature[0], ArgType):
        return Kernel(signature[0], None)
    for t in signature:
        if not isinstance(t, ArgType):
            raise TypeError(f"kernel argument types are b1, i1, i4, i8, f4, f8 or arrays of them; got {t!r}")
    return lambda func: Kernel(func, tuple(signature))


def load_numba():
    """numba, imported on the first JIT compile (or by the build), told how a kernel calling
    another one sees it: as numba's dispatcher, compiled into the caller."""
    if not _NUMBA:
        with _LOCK:
            if not _NUMBA:
                import numba
                from numba.core import types
                from numba.extending import typeof_impl

                typeof_impl.register(Kernel)(lambda val, c: types.Dispatcher(val.jit))
                _NUMBA.append(numba)
    return _NUMBA[0]


# ----------------------------------------------------------------------------- the build's identity
def _cpu_identity() -> str:
    """This machine's CPU model and feature flags (a build for this CPU must not run on another)."""
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
        ident += "|" + platform.processor()
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def _numba_version() -> str | None:
    """The installed numba's version, without importing numba (its dist-info folder's name)."""
    import importlib.util

    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.origin:
        return None
    found = list(Path(spec.origin).parent.parent.glob("numba-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len("numba-"):-len(".dist-info")]
    from importlib.metadata import version  # an unusual install: ask the slower way

    return version("numba")


def _sources_hash() -> str:
    h = hashlib.sha256()
    for name in KERNEL_MODULES:
        h.update(name.encode())
        h.update((PACKAGE / f"{name.replace('.', '/')}.py").read_bytes())
    return h.hexdigest()[:32]


#: how the declared argument types become numba's (:meth:`ArgType.numba_type`): a build made under
#: another is stale (2: a 1-d ``[::1]`` is C order, no longer numba's reading of it as Fortran order)
TYPES = 2


def build_identity() -> dict:
    """What a build is made from: the kernels' source and how their types are declared, numba's,
    numpy's and Python's versions, the CPU. A build whose stamp differs from this is stale."""
    return {"sources": _sources_hash(), "types": TYPES, "numba": _numba_version(), "numpy": np.__version__,
            "python": sys.implementation.cache_tag, "cpu": _cpu_identity()}


def load_build() -> tuple[object | None, str]:
    """(the ahead-of-time extension module, or None when absent or stale; a sentence saying so)."""
    if not _BUILD:
        with _LOCK:
            if not _BUILD:
                _BUILD.append(_find_build())
    return _BUILD[0]


def _find_build() -> tuple[object | None, str]:
    found = sorted(str(p) for p in HERE.glob(f"{EXTENSION}.*") if p.suffix in (".so", ".pyd"))
    if not found:
        return None, f"no ahead-of-time build in {HERE}: numba's JIT compiles the kernels"
    try:
        recorded = json.loads((HERE / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, f"{found[0]} has no readable {STAMP}: numba's JIT compiles the kernels"
    now = build_identity()
    if recorded.get("target") == "generic":  # built for any CPU of the architecture
        now.pop("cpu")
    differ = [k for k in now if recorded.get(k) != now[k]]
    if differ:
        what = ", ".join(f"{k} {recorded.get(k)!r} then, {now[k]!r} now" if k in ("numba", "numpy", "python")
                         else f"{k} changed" for k in differ)
        return None, f"{found[0]} is stale ({what}): numba's JIT compiles the kernels"
    try:
        module = importlib.import_module(f"{__package__}.{EXTENSION}")
    except ImportError as exc:
        return None, f"{found[0]} cannot be loaded ({exc}): numba's JIT compiles the kernels"
    return module, f"{found[0]} is fresh: ordinary jobs run without numba"


def build_status() -> str:
    """One line: where the build is and whether the kernels use it."""
    return load_build()[1]


def forget_build() -> None:
    """Look for the build again on the next call (after building it)."""
    with _LOCK:
        _BUILD.clear()
        for k in REGISTRY.values():
            k._aot = None

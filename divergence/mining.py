"""Mining: every itemset with support >= s, with its outcome tallies.

Rows carry their tallies as weights (count, then per outcome: defined count, sum,
sum of squares). Identical discretized rows are merged first, so the work depends on
the number of distinct rows, not on the number of rows.

The default engine ("fast") is a depth-first projection miner compiled with numba.
Each row holds exactly one item per attribute, so one pass over a node's rows tallies
every child on every later attribute (no candidate generation, no intersections);
each child's rows are then copied contiguously and re-compressed on the attributes
still to come. The "mlxtend" engine runs mlxtend's FP-growth on the one-hot table
and tallies each itemset with a boolean mask: slow, and the reference in tests.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

from .errors import DivergenceInputError

#: numba is a pinned dependency, imported only when a kernel is first compiled just in time:
#: with a fresh ahead-of-time build (``python -m divergence._aot``) ordinary jobs never import it
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: distinct rows from which the miner prefers numba's JIT kernel, spread over threads (it releases
#: the GIL), to the ahead-of-time one (which holds it): about where, on two cores, the threads
#: win back numba's start-up (half a second to a second)
JIT_MIN_ROWS = 250_000

__all__ = ["Compressed", "Mined", "compress", "mine", "min_count_for", "ENGINES"]

ENGINES = ("fast", "mlxtend")


class _Kernel:
    """A compiled kernel with one source, the decorated function: numba's ahead-of-time build
    (``divergence/_kernels*.so``) when it is present and built from this very source, else
    numba's JIT (``cache=True, nogil=True``), else the plain Python function without numba.

    ``export`` lists the argument types of a kernel called from Python (numba type names,
    ``i4 i8 f4 f8 b1`` and arrays such as ``f8[:, ::1]``): those go into the build. Helpers
    called only from other kernels need none; they are compiled into their callers.
    """

    def __init__(self, func, export: str | None = None) -> None:
        functools.update_wrapper(self, func)
        self.py_func = func
        self.export = export
        self.key = f"{func.__module__}.{func.__qualname__}"
        self._jit = None
        self._aot = None  # None: not looked up yet; False: not in the build
        _KERNELS[self.key] = self

    def __call__(self, *args):
        return self.pick()[0](*args)

    def __repr__(self) -> str:
        return f"<kernel {self.key}>"

    @property
    def jit(self):
        """numba's JIT dispatcher (the Python function itself without numba)."""
        if self._jit is None:
            with _LOCK:
                if self._jit is None:
                    numba = _import_numba()
                    self._jit = self.py_func if numba is None else numba.njit(cache=True, nogil=True)(self.py_func)
        return self._jit

    @property
    def aot(self):
        """The ahead-of-time function, with arguments converted to its types; None without one."""
        if self._aot is None:
            from . import _aot

            self._aot = _aot.function(self) or False
        return self._aot or None

    def pick(self, large: bool = False):
        """(function, whether it releases the GIL): the ahead-of-time function when a fresh
        build has it, unless ``DIVERGENCE_KERNELS=jit``, or the job is ``large`` (numba's JIT
        kernel, spread over threads by the caller, then repays its start-up; ``=aot`` keeps
        the build); else numba's JIT."""
        mode = os.environ.get("DIVERGENCE_KERNELS", "auto")
        if mode != "jit":
            aot = self.aot
            if aot is not None and not (large and mode != "aot" and HAVE_NUMBA):
                return aot, False
        return self.jit, True


def _njit(func=None, *, export: str | None = None):
    """Decorator of a compiled kernel: ``@_njit`` or ``@_njit(export="argument types")``."""
    if func is None:
        return lambda f: _Kernel(f, export)
    return _Kernel(func, export)


_KERNELS: dict[str, _Kernel] = {}
_LOCK = threading.RLock()
_NUMBA = []  # the numba module once imported and told about kernels


def _import_numba():
    """numba, imported on the first JIT compile; None when it is not installed."""
    if _NUMBA:
        return _NUMBA[0]
    if not HAVE_NUMBA:  # pragma: no cover - exercised only without numba
        return None
    if _QUICK_START[0] and "numba.np.arraymath" not in sys.modules and "scipy.linalg" not in sys.modules:
        # command line only (see divergence.cli._quick_numba_start): numba's first compiled call
        # imports scipy.linalg, a quarter of a second, to learn whether BLAS exists for np.dot,
        # which no kernel calls; a failing import answers at once
        sys.modules["scipy.linalg"] = None  # type: ignore[assignment]
        try:
            import numba.np.arraymath  # noqa: F401
        except ImportError:
            pass
        finally:
            del sys.modules["scipy.linalg"]
    import numba
    from numba.core import types
    from numba.extending import typeof_impl

    # a kernel calling another one sees numba's dispatcher, compiled into the caller
    typeof_impl.register(_Kernel)(lambda val, c: types.Dispatcher(val.jit))
    _NUMBA.append(numba)
    return numba


_QUICK_START = [False]


@dataclass(frozen=True)
class Compressed:
    """Distinct discretized rows with their summed tallies."""

    codes: np.ndarray  # (D, A) int32
    weights: np.ndarray  # (D, T) float64, column 0 = row count
    inverse: np.ndarray  # (n_rows,) group of each original row


@dataclass(frozen=True)
class Mined:
    """Mined itemsets in pre-order: a parent always precedes its children.

    ``codes[i, a]`` is itemset i's item code on attribute a, or -1 where it has none;
    row 0 is the empty itemset (the whole dataset).
    """

    codes: np.ndarray  # (N, A) int32
    parent: np.ndarray  # (N,) int64, -1 for the empty itemset
    tallies: np.ndarray  # (N, T) float64


def min_count_for(min_support: float, n_rows: int) -> int:
    """Smallest row count whose support reaches ``min_support``, exactly as mlxtend decides.

    mlxtend keeps an itemset when ``count >= ceil(s * n)`` and ``count / n >= s``.
    """
    c = max(1, math.ceil(min_support * n_rows))
    while c / n_rows < min_support:
        c += 1
    return c


def compress(codes: np.ndarray, weights: np.ndarray) -> Compressed:
    """Merge identical code rows, summing their weights (a GROUP BY on all attributes)."""
    n, a = codes.shape
    if n == 0:
        return Compressed(codes.reshape(0, a), weights.reshape(0, weights.shape[1]), np.empty(0, np.int64))
    radix = codes.max(axis=0).astype(np.int64) + 2  # codes may be -1
    if a and float(np.prod(radix.astype(float))) < 2.0 ** 62:
        key = np.zeros(n, dtype=np.int64)
        for j in range(a):
            key = key * radix[j] + (codes[:, j].astype(np.int64) + 1)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    elif a:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    else:
        first, inverse = np.zeros(1, np.int64), np.zeros(n, np.int64)
    inverse = inverse.reshape(-1).astype(np.int64)
    out_w = np.empty((first.size, weights.shape[1]), dtype=np.float64)
    for t in range(weights.shape[1]):
        out_w[:, t] = np.bincount(inverse, weights=weights[:, t], minlength=first.size)
    return Compressed(np.ascontiguousarray(codes[first]), out_w, inverse)


@_njit(export="i4[:, ::1], b1[::1], i8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1], i8[::1]")
def _compress_outcomes(codes, keep, offsets, values, vshift, target, tshift, aux_of):
    """One pass over the rows: prune infrequent items to -1, merge identical rows (hashing),
    and sum each row's tallies, computed on the fly from its outcome values (NaN: undefined).

    Tallies per row: 1, then per metric k (defined, v - shift, (v - shift)^2), then per aux
    column a (y - tshift, (y - tshift)^2) where y = target[:, a] is defined.
    """
    n, n_attr = codes.shape
    n_met = values.shape[1]
    n_aux = target.shape[1]
    t = 1 + 3 * n_met + 2 * n_aux
    cap = 1 << 12
    out_c = np.empty((cap, n_attr), dtype=np.int32)
    out_w = np.zeros((cap, t), dtype=np.float64)
    size = 1 << 13
    table = np.full(size, -1, dtype=np.int64)
    hashes = np.empty(cap, dtype=np.uint64)
    tmp = np.empty(max(n_attr, 1), dtype=np.int32)
    k = 0
    for r in range(n):
        h = np.uint64(1469598103934665603)
        for c in range(n_attr):
            v = codes[r, c]
            if v >= 0 and not keep[offsets[c] + v]:
                v = -1
            tmp[c] = v
            h = (h ^ np.uint64(v + 2)) * np.uint64(1099511628211)
        mask = np.uint64(size - 1)
        slot = np.int64(h & mask)
        g = -1
        while True:
            e = table[slot]
            if e < 0:
                break
            if hashes[e] == h:
                same = True
                for c in range(n_attr):
                    if out_c[e, c] != tmp[c]:
                        same = False
                        break
                if same:
                    g = e
                    break
            slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
        if g < 0:
            if k >= out_c.shape[0]:
                out_c = _ensure2(out_c, k + 1)
                new_w = np.zeros((out_c.shape[0], t), dtype=np.float64)
                new_w[:k] = out_w[:k]
                out_w = new_w
                hashes = _ensure(hashes, out_c.shape[0])
            g = k
            for c in range(n_attr):
                out_c[g, c] = tmp[c]
            hashes[g] = h
            table[slot] = g
            k += 1
            if 2 * k > size:
                # grow the table and re-insert every group
                size *= 4
                table = np.full(size, -1, dtype=np.int64)
                mask = np.uint64(size - 1)
                for e in range(k):
                    sl = np.int64(hashes[e] & mask)
                    while table[sl] >= 0:
                        sl = np.int64((np.uint64(sl) + np.uint64(1)) & mask)
                    table[sl] = e
        out_w[g, 0] += 1.0
        for m in range(n_met):
            v = values[r, m]
            if not np.isnan(v):
                x = v - vshift[m]
                out_w[g, 1 + 3 * m] += 1.0
                out_w[g, 2 + 3 * m] += x
                out_w[g, 3 + 3 * m] += x * x
        for a in range(n_aux):
            y = target[r, a]
            if not np.isnan(y):
                x = y - tshift[a]
                out_w[g, 1 + 3 * n_met + 2 * a] += x
                out_w[g, 2 + 3 * n_met + 2 * a] += x * x
    return out_c[:k].copy(), out_w[:k].copy()


@_njit
def _add_tallies(out_w, g, r, values, vshift, target, tshift):
    n_met = values.shape[1]
    out_w[g, 0] += 1.0
    for m in range(n_met):
        v = values[r, m]
        if not np.isnan(v):
            x = v - vshift[m]
            out_w[g, 1 + 3 * m] += 1.0
            out_w[g, 2 + 3 * m] += x
            out_w[g, 3 + 3 * m] += x * x
    for a in range(target.shape[1]):
        y = target[r, a]
        if not np.isnan(y):
            x = y - tshift[a]
            out_w[g, 1 + 3 * n_met + 2 * a] += x
            out_w[g, 2 + 3 * n_met + 2 * a] += x * x


@_njit(export="i4[:, ::1], b1[::1], i8[::1], i8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1]")
def _compress_keyed(codes, keep, offsets, mult, values, vshift, target, tshift):
    """As _compress_outcomes, when a row's pruned codes fit one int64 (mixed radix): the
    hash table compares one key instead of every column."""
    n, n_attr = codes.shape
    t = 1 + 3 * values.shape[1] + 2 * target.shape[1]
    cap = 1 << 12
    keys = np.empty(cap, dtype=np.int64)
    out_w = np.zeros((cap, t), dtype=np.float64)
    size = 1 << 13
    table = np.full(size, -1, dtype=np.int64)
    k = 0
    for r in range(n):
        key = np.int64(0)
        for c in range(n_attr):
            v = codes[r, c]
            if v >= 0 and not keep[offsets[c] + v]:
                v = -1
            key += (v + 1) * mult[c]
        mask = np.uint64(size - 1)
        slot = np.int64((np.uint64(key) * np.uint64(11400714819323198485)) >> np.uint64(20) & mask)
        while True:
            e = table[slot]
            if e < 0 or keys[e] == key:
                break
            slot = np.int64((np.uint64(slot) + np.uint64(1)) & mask)
        if e < 0:
            if k >= keys.shape[0]:
                keys = _ensure(keys, k + 1)
                new_w = np.zeros((keys.shape[0], t), dtype=np.float64)
                new_w[:k] = out_w[:k]
                out_w = new_w
            e = k
            keys[e] = key
            table[slot] = e
            k += 1
            if 2 * k > size:
                size *= 4
                table = np.full(size, -1, dtype=np.int64)
                mask = np.uint64(size - 1)
                for g in range(k):
                    sl = np.int64((np.uint64(keys[g]) * np.uint64(11400714819323198485)) >> np.uint64(20) & mask)
                    while table[sl] >= 0:
                        sl = np.int64((np.uint64(sl) + np.uint64(1)) & mask)
                    table[sl] = g
        _add_tallies(out_w, e, r, values, vshift, target, tshift)
    # decode the keys back into codes
    out_c = np.empty((k, n_attr), dtype=np.int32)
    for g in range(k):
        rest = keys[g]
        for c in range(n_attr):
            out_c[g, c] = np.int32(rest // mult[c]) - 1
            rest = rest % mult[c]
    return out_c, out_w[:k].copy()


def compress_outcomes(codes: np.ndarray, n_values: np.ndarray, min_count: float, values: np.ndarray,
                      vshift: np.ndarray, target: np.ndarray, tshift: np.ndarray) -> Compressed:
    """Distinct rows (items below ``min_count`` rows dropped) with their summed tallies,
    straight from the per-row outcome values: no rows x tallies matrix is ever built."""
    n_attr = codes.shape[1]
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    keep = np.zeros(max(int(offsets[-1]), 1), dtype=np.bool_)
    for a in range(n_attr):
        counts = np.bincount(codes[:, a], minlength=int(n_values[a]))
        keep[offsets[a]:offsets[a + 1]] = counts >= min_count
    radix = np.asarray(n_values, dtype=np.float64) + 1.0
    if n_attr and float(np.prod(radix)) < 2.0 ** 62:
        mult = np.ones(n_attr, dtype=np.int64)
        for a in range(n_attr - 2, -1, -1):
            mult[a] = mult[a + 1] * (int(n_values[a + 1]) + 1)
        c, w = _compress_keyed(np.ascontiguousarray(codes, dtype=np.int32), keep, offsets, mult,
                               np.ascontiguousarray(values, dtype=np.float64),
                               np.asarray(vshift, dtype=np.float64),
                               np.ascontiguousarray(target, dtype=np.float64),
                               np.asarray(tshift, dtype=np.float64))
        return Compressed(c, w, np.empty(0, np.int64))
    c, w = _compress_outcomes(np.ascontiguousarray(codes, dtype=np.int32), keep, offsets,
                              np.ascontiguousarray(values, dtype=np.float64),
                              np.asarray(vshift, dtype=np.float64),
                              np.ascontiguousarray(target, dtype=np.float64),
                              np.asarray(tshift, dtype=np.float64), np.zeros(0, np.int64))
    return Compressed(c, w, np.empty(0, np.int64))


@_njit
def _ensure(arr, need):
    """``arr`` itself when it holds ``need`` elements, else a copy at least twice as large."""
    if need <= arr.shape[0]:
        return arr
    new = np.empty(max(2 * arr.shape[0], need), dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new


@_njit
def _ensure2(arr, need):
    if need <= arr.shape[0]:
        return arr
    new = np.empty((max(2 * arr.shape[0], need), arr.shape[1]), dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new


@_njit
def _emit(n_out, out_parent, out_attr, out_val, out_w, parent, a, v, acc, i, t):
    if n_out >= out_parent.shape[0]:
        out_parent = _ensure(out_parent, n_out + 1)
        out_attr = _ensure(out_attr, n_out + 1)
        out_val = _ensure(out_val, n_out + 1)
        out_w = _ensure2(out_w, n_out + 1)
    out_parent[n_out] = parent
    out_attr[n_out] = a
    out_val[n_out] = v
    for j in range(t):
        out_w[n_out, j] = acc[i, j]
    return out_parent, out_attr, out_val, out_w


@_njit(export="i4[:, ::1], f8[:, ::1], i8, i8[::1]")
def _root_tallies(codes, w, n_items, offsets):
    """Tallies of every item over the whole (compressed) table."""
    t = w.shape[1]
    acc = np.zeros((max(n_items, 1), t), dtype=np.float64)
    for r in range(codes.shape[0]):
        for c in range(codes.shape[1]):
            v = codes[r, c]
            if v >= 0:
                i = offsets[c] + v
                for j in range(t):
                    acc[i, j] += w[r, j]
    return acc


#: parent ids at or above this refer to the calling kernel's own outputs (see _mine_fast)
LOCAL = 1 << 40


@_njit(export="i4[:, ::1], f8[:, ::1], i8[::1], f8, i8, i8[::1], i8[::1], i8[::1], i8")
def _mine_kernel(codes, w, n_values, min_count, max_length, kid_attr, kid_val, kid_id, ht_rows):
    """Depth-first projection mining below the given 1-itemsets (kids of the root).

    A node's children are tallied when the node is expanded from its parent's rows: first
    a count-only pass (which items are frequent in the child's own context), then either
    one pass of full tallies over the frequent items (a child none of whose children will
    be expanded: no table is built), or a compressed table of the child's rows, with the
    items infrequent in its context set to -1, on which the tallies are taken. The nodes on
    the current path live in stack-like arenas, freed by moving a pointer. The root's table
    is read in place. Outputs are numbered from 0; a parent id >= LOCAL is LOCAL + the
    index of an output of this call, any other parent id is one of ``kid_id``.
    """
    n_attr = codes.shape[1]
    t = w.shape[1]
    d_rows = codes.shape[0]
    root_c = codes.ravel()
    root_w = w.ravel()
    offsets = np.zeros(n_attr + 1, dtype=np.int64)
    max_nv = 1
    for a in range(n_attr):
        offsets[a + 1] = offsets[a] + n_values[a]
        max_nv = max(max_nv, n_values[a])
    n_items = offsets[n_attr]
    item_attr = np.empty(max(n_items, 1), dtype=np.int64)
    for a in range(n_attr):
        for v in range(n_values[a]):
            item_attr[offsets[a] + v] = a

    cap = 1024
    out_parent = np.empty(cap, dtype=np.int64)
    out_attr = np.empty(cap, dtype=np.int32)
    out_val = np.empty(cap, dtype=np.int32)
    out_w = np.empty((cap, t), dtype=np.float64)
    n_out = 0

    # arenas: codes (int32), weights (float64), bookkeeping (int64)
    a_codes = np.empty(max(ht_rows * n_attr + 16, 16), dtype=np.int32)
    a_w = np.empty(max(ht_rows * t + 16, 16), dtype=np.float64)
    a_int = np.empty(max(2 * d_rows + 8 * n_items + 64, 64), dtype=np.int64)
    top_c = 0
    top_w = 0
    top_i = 0

    depth_cap = n_attr + 2
    f_c = np.zeros(depth_cap, dtype=np.int64)
    f_w = np.zeros(depth_cap, dtype=np.int64)
    f_m = np.zeros(depth_cap, dtype=np.int64)
    f_a0 = np.zeros(depth_cap, dtype=np.int64)
    f_kids = np.zeros(depth_cap, dtype=np.int64)  # offset of kids (col, val, id) in a_int
    f_nk = np.zeros(depth_cap, dtype=np.int64)
    f_next = np.zeros(depth_cap, dtype=np.int64)
    f_perm = np.zeros(depth_cap, dtype=np.int64)  # offset of perm (m) then start (max_nv + 2)
    f_pcol = np.zeros(depth_cap, dtype=np.int64)
    f_top_c = np.zeros(depth_cap, dtype=np.int64)
    f_top_w = np.zeros(depth_cap, dtype=np.int64)
    f_top_i = np.zeros(depth_cap, dtype=np.int64)

    acc = np.zeros((max(n_items, 1), t), dtype=np.float64)
    cnt = np.zeros(max(n_items, 1), dtype=np.float64)
    freq = np.zeros(max(n_items, 1), dtype=np.uint8)
    size = 16
    while size < 2 * ht_rows:
        size *= 2
    ht = np.empty(size, dtype=np.int64)
    ht_gen = np.zeros(size, dtype=np.int64)
    gen = 0
    tmp = np.empty(max(n_attr, 1), dtype=np.int32)
    loff = np.empty(max(n_attr, 1), dtype=np.int64)

    # ---- the root frame: the whole compressed table (read in place), the given kids
    nk = kid_attr.shape[0]
    if nk == 0:
        return out_parent[:0].copy(), out_attr[:0].copy(), out_val[:0].copy(), out_w[:0].copy()
    a_int = _ensure(a_int, 3 * nk + d_rows + max_nv + 2)
    for k in range(nk):
        a_int[3 * k] = kid_attr[k]
        a_int[3 * k + 1] = kid_val[k]
        a_int[3 * k + 2] = kid_id[k]
    depth = 0
    f_c[0] = 0
    f_w[0] = 0
    f_m[0] = d_rows
    f_a0[0] = 0
    f_kids[0] = 0
    f_nk[0] = nk
    f_next[0] = 0
    top_i = 3 * nk
    f_perm[0] = top_i
    f_pcol[0] = -1
    top_i += d_rows + max_nv + 2

    while depth >= 0:
        if f_next[depth] >= f_nk[depth]:
            top_c = f_top_c[depth]
            top_w = f_top_w[depth]
            top_i = f_top_i[depth]
            depth -= 1
            continue
        k3 = f_kids[depth] + 3 * f_next[depth]
        f_next[depth] += 1
        col = a_int[k3]
        val = a_int[k3 + 1]
        kid_id = a_int[k3 + 2]
        m = f_m[depth]
        a0 = f_a0[depth]
        width = n_attr - a0
        c_off = f_c[depth]
        w_off = f_w[depth]
        p_off = f_perm[depth]
        s_off = p_off + m
        if depth == 0:  # the root's table is read in place
            tc = root_c
            tw = root_w
        else:
            tc = a_codes
            tw = a_w
        if f_pcol[depth] != col:
            # counting sort of the frame's rows by this column, once per column
            nv = n_values[a0 + col]
            for v in range(nv + 2):
                a_int[s_off + v] = 0
            for r in range(m):
                a_int[s_off + tc[c_off + r * width + col] + 2] += 1
            for v in range(1, nv + 2):
                a_int[s_off + v] += a_int[s_off + v - 1]
            for r in range(m):
                b = tc[c_off + r * width + col] + 1
                a_int[p_off + a_int[s_off + b]] = r
                a_int[s_off + b] += 1
            for v in range(nv + 1, 0, -1):
                a_int[s_off + v] = a_int[s_off + v - 1]
            a_int[s_off] = 0
            f_pcol[depth] = col
        lo = a_int[s_off + val + 1]
        hi = a_int[s_off + val + 2]
        cw = width - col - 1
        c0 = col + 1  # the child's first column in the frame's table
        ca0 = a0 + c0  # the child's first attribute
        base = offsets[ca0]
        n_local = n_items - base
        child_len = depth + 2  # length of the child's children
        for c in range(cw):
            loff[c] = offsets[ca0 + c] - base
        # ---- pass A: counts of the child's items, in the child's own context
        for i in range(n_local):
            cnt[i] = 0.0
        for ii in range(lo, hi):
            r = a_int[p_off + ii]
            src = c_off + r * width + c0
            wr = tw[w_off + r * t]
            for c in range(cw):
                v = tc[src + c]
                if v >= 0:
                    cnt[loff[c] + v] += wr
        any_freq = False
        expand = False
        for i in range(n_local):
            if cnt[i] >= min_count:
                freq[i] = 1
                any_freq = True
                if child_len < max_length and item_attr[base + i] < n_attr - 1:
                    expand = True
            else:
                freq[i] = 0
        if not any_freq:
            continue
        if not expand:
            # ---- a child none of whose children is expanded: tally the frequent items, emit
            for i in range(n_local):
                if freq[i]:
                    for j in range(t):
                        acc[i, j] = 0.0
            for ii in range(lo, hi):
                r = a_int[p_off + ii]
                src = c_off + r * width + c0
                sw = w_off + r * t
                for c in range(cw):
                    v = tc[src + c]
                    if v >= 0:
                        i = loff[c] + v
                        if freq[i]:
                            for j in range(t):
                                acc[i, j] += tw[sw + j]
            for i in range(n_local):
                if freq[i]:
                    out_parent, out_attr, out_val, out_w = _emit(
                        n_out, out_parent, out_attr, out_val, out_w, kid_id, item_attr[base + i],
                        base + i - offsets[item_attr[base + i]], acc, i, t)
                    n_out += 1
            continue
        # ---- pass B: the child's table, later columns, infrequent items -1, merged
        a_codes = _ensure(a_codes, top_c + (hi - lo) * cw)
        a_w = _ensure(a_w, top_w + (hi - lo) * t)
        if depth > 0:
            tc = a_codes
            tw = a_w
        nc = top_c
        nw = top_w
        size = 16
        while size < 2 * (hi - lo):
            size *= 2
        mask = size - 1
        gen += 1
        kk = 0
        for ii in range(lo, hi):
            r = a_int[p_off + ii]
            src = c_off + r * width + c0
            h = np.uint64(1469598103934665603)
            for c in range(cw):
                v = tc[src + c]
                if v >= 0 and freq[loff[c] + v] == 0:
                    v = -1
                tmp[c] = v
                h = (h ^ np.uint64(v + 2)) * np.uint64(1099511628211)
            slot = np.int64(h & np.uint64(mask))
            while True:
                if ht_gen[slot] != gen:
                    ht_gen[slot] = gen
                    ht[slot] = kk
                    dst = nc + kk * cw
                    for c in range(cw):
                        a_codes[dst + c] = tmp[c]
                    dw = nw + kk * t
                    sw = w_off + r * t
                    for j in range(t):
                        a_w[dw + j] = tw[sw + j]
                    kk += 1
                    break
                g = ht[slot]
                same = True
                dst = nc + g * cw
                for c in range(cw):
                    if a_codes[dst + c] != tmp[c]:
                        same = False
                        break
                if same:
                    dw = nw + g * t
                    sw = w_off + r * t
                    for j in range(t):
                        a_w[dw + j] += tw[sw + j]
                    break
                slot = (slot + 1) & mask
        # ---- pass C: full tallies on the merged table, emit, list the children to expand
        for i in range(n_local):
            if freq[i]:
                for j in range(t):
                    acc[i, j] = 0.0
        for r in range(kk):
            src = nc + r * cw
            sw = nw + r * t
            for c in range(cw):
                v = a_codes[src + c]
                if v >= 0:
                    i = loff[c] + v
                    for j in range(t):
                        acc[i, j] += a_w[sw + j]
        a_int = _ensure(a_int, top_i + 3 * n_local + kk + max_nv + 2)
        kids_off = top_i
        nk = 0
        for i in range(n_local):
            if freq[i]:
                a = item_attr[base + i]
                v = base + i - offsets[a]
                out_parent, out_attr, out_val, out_w = _emit(n_out, out_parent, out_attr, out_val, out_w,
                                                             kid_id, a, v, acc, i, t)
                if child_len < max_length and a < n_attr - 1:
                    a_int[kids_off + 3 * nk] = a - ca0
                    a_int[kids_off + 3 * nk + 1] = v
                    a_int[kids_off + 3 * nk + 2] = LOCAL + n_out
                    nk += 1
                n_out += 1
        # push the child's frame
        depth += 1
        f_top_c[depth] = top_c
        f_top_w[depth] = top_w
        f_top_i[depth] = top_i
        f_c[depth] = nc
        f_w[depth] = nw
        f_m[depth] = kk
        f_a0[depth] = ca0
        f_kids[depth] = kids_off
        f_nk[depth] = nk
        f_next[depth] = 0
        f_perm[depth] = kids_off + 3 * nk
        f_pcol[depth] = -1
        top_c = nc + kk * cw
        top_w = nw + kk * t
        top_i = kids_off + 3 * nk + kk + max_nv + 2
    return out_parent[:n_out].copy(), out_attr[:n_out].copy(), out_val[:n_out].copy(), out_w[:n_out].copy()


@_njit(export="i8[::1], i4[::1], i4[::1], i8")
def _expand_codes(parent, attr, val, n_attr):
    n = parent.shape[0]
    out = np.full((n, n_attr), -1, dtype=np.int32)
    for i in range(1, n):
        p = parent[i]
        for a in range(n_attr):
            out[i, a] = out[p, a]
        out[i, attr[i]] = val[i]
    return out


def _threads() -> int:
    """Worker threads for the miner: the CPUs this process may use (DIVERGENCE_THREADS caps it)."""
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    cap = os.environ.get("DIVERGENCE_THREADS")
    return max(1, min(n, int(cap))) if cap and cap.isdigit() else max(1, n)


def _mine_fast(comp: Compressed, n_values: np.ndarray, min_count: int, max_length: int,
               total: np.ndarray) -> Mined:
    """The root's items here; each frequent item's subtree mined by the compiled kernel and
    merged in item order. On a large table numba's JIT kernel runs, the subtrees spread over
    threads (it releases the GIL); else the ahead-of-time one when built, on this thread."""
    kernel, threaded = _mine_kernel.pick(large=comp.codes.shape[0] >= JIT_MIN_ROWS)
    if kernel is _mine_kernel.py_func:  # pragma: no cover - exercised only without numba
        raise DivergenceInputError("The 'fast' engine needs numba; install the pinned requirements.")
    codes = np.ascontiguousarray(comp.codes, dtype=np.int32)
    weights = np.ascontiguousarray(comp.weights, dtype=np.float64)
    n_values = n_values.astype(np.int64)
    n_attr = codes.shape[1]
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    acc = _root_tallies(codes, weights, int(offsets[-1]), offsets)
    frequent = np.nonzero(acc[:, 0] >= min_count)[0] if len(acc) else np.empty(0, np.int64)
    item_attr = np.repeat(np.arange(n_attr), n_values)
    f_attr = item_attr[frequent].astype(np.int64)
    f_val = (frequent - offsets[f_attr]).astype(np.int64)
    f_id = np.arange(1, len(frequent) + 1, dtype=np.int64)
    parts = [(np.full(len(frequent), 0, np.int64), f_attr.astype(np.int32), f_val.astype(np.int32),
              acc[frequent])]
    expand = np.nonzero(f_attr < n_attr - 1)[0] if max_length > 1 else np.empty(0, np.int64)
    # rows of the root table holding each item: sizes the kernel's hash table
    rows_with = {a: np.bincount(codes[:, a] + 1, minlength=int(n_values[a]) + 1)[1:] for a in range(n_attr)}

    def task(k: int):
        a, v = int(f_attr[k]), int(f_val[k])
        return kernel(codes, weights, n_values, float(min_count), int(max_length),
                      f_attr[k:k + 1], f_val[k:k + 1], f_id[k:k + 1], int(rows_with[a][v]))

    workers = min(_threads(), len(expand)) if threaded else 1
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        # largest subtrees first: items on earlier attributes have more attributes after them
        order = sorted(expand, key=lambda k: (f_attr[k], -rows_with[int(f_attr[k])][int(f_val[k])]))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {k: pool.submit(task, k) for k in order}
            results = [futures[k].result() for k in expand]
    else:
        results = [task(k) for k in expand]
    next_id = 1 + len(frequent)
    for parent, attr, val, tallies in results:
        local = parent >= LOCAL
        parent = np.where(local, parent - LOCAL + next_id, parent)
        parts.append((parent, attr, val, tallies))
        next_id += len(parent)
    parent = np.concatenate([[-1]] + [p[0] for p in parts]).astype(np.int64)
    attr = np.concatenate([[-1]] + [p[1] for p in parts]).astype(np.int32)
    val = np.concatenate([[-1]] + [p[2] for p in parts]).astype(np.int32)
    tallies = np.vstack([total[None, :].astype(np.float64)] + [p[3] for p in parts])
    full = _expand_codes(parent, attr, val, n_attr)
    return Mined(codes=full, parent=parent, tallies=tallies)


def _mine_mlxtend(codes: np.ndarray, comp: Compressed, n_values: np.ndarray, min_support: float,
                  max_length: int, total: np.ndarray) -> Mined:
    """mlxtend's FP-growth on the one-hot rows, then a boolean mask per itemset for the tallies."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        from mlxtend.frequent_patterns import fpgrowth

    n_attr = codes.shape[1]
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    item_attr = np.repeat(np.arange(n_attr), n_values)
    item_val = np.concatenate([np.arange(k) for k in n_values]) if n_attr else np.empty(0, int)
    onehot = np.zeros((codes.shape[0], int(offsets[-1])), dtype=bool)
    for a in range(n_attr):
        ok = codes[:, a] >= 0
        onehot[np.nonzero(ok)[0], offsets[a] + codes[ok, a]] = True
    rows = [np.zeros(n_attr, np.int32) - 1]
    if onehot.shape[1] and codes.shape[0]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = fpgrowth(pd.DataFrame(onehot), min_support=min_support,
                             max_len=None if max_length >= n_attr else max_length)
        for itemset in found["itemsets"]:
            r = np.full(n_attr, -1, np.int32)
            for item in itemset:
                r[item_attr[item]] = item_val[item]
            rows.append(r)
    full = np.vstack(rows).astype(np.int32)
    # tallies from masks over the compressed rows (exact: a group's rows share their codes)
    tallies = np.empty((full.shape[0], comp.weights.shape[1]))
    tallies[0] = total
    for i in range(1, full.shape[0]):
        mask = np.ones(comp.codes.shape[0], dtype=bool)
        for a in np.nonzero(full[i] >= 0)[0]:
            mask &= comp.codes[:, a] == full[i, a]
        tallies[i] = comp.weights[mask].sum(axis=0)
    # order as the fast engine does: by length, then by codes, so results compare row by row
    parent = np.full(full.shape[0], -1, dtype=np.int64)
    return Mined(codes=full, parent=parent, tallies=tallies)


def mine(codes: np.ndarray, weights: np.ndarray, n_values: np.ndarray, *, min_support: float,
         max_length: int | None = None, engine: str = "fast") -> Mined:
    """Every itemset with support >= ``min_support`` (at most ``max_length`` items), with tallies.

    ``codes`` (rows x attributes) holds each row's item code per attribute, ``weights``
    (rows x tallies) the per-row tallies, column 0 the row count (1 per row).
    """
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    n_rows = int(round(weights[:, 0].sum())) if weights.size else 0
    n_attr = codes.shape[1]
    max_length = n_attr if max_length is None else min(int(max_length), n_attr)
    total = weights.sum(axis=0)
    min_count = min_count_for(min_support, n_rows)
    # an item below the threshold can be in no frequent itemset: drop it before compressing
    # (codes may already be -1 where an item was dropped upstream)
    pruned = codes.copy()
    for a in range(n_attr):
        counts = np.bincount(codes[:, a] + 1, weights=weights[:, 0], minlength=int(n_values[a]) + 1)[1:]
        frequent = np.append(counts >= min_count, False)  # index -1 -> False
        pruned[:, a] = np.where(frequent[codes[:, a]], codes[:, a], -1)
    comp = compress(pruned, weights)
    if engine == "mlxtend":
        return _mine_mlxtend(pruned, comp, n_values, min_support, max_length, total)
    if max_length == 0:
        return Mined(np.full((1, n_attr), -1, np.int32), np.array([-1]), total[None, :].copy())
    return _mine_fast(comp, n_values, min_count, max_length, total)

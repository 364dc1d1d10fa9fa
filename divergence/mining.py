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
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .errors import DivergenceBudgetError, DivergenceInputError

#: numba is a pinned dependency, imported only when a kernel is first compiled just in time:
#: with a fresh ahead-of-time build (``python -m divergence._aot``) ordinary jobs never import it
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: distinct rows from which the miner prefers numba's JIT kernel, spread over threads (it releases
#: the GIL), to the ahead-of-time one (which holds it): about where, on two cores, the threads
#: win back numba's start-up (half a second to a second)
JIT_MIN_ROWS = 250_000

__all__ = ["Compressed", "Mined", "Budget", "compress", "mine", "min_count_for", "ENGINES", "MAX_SLICES",
           "TIME_LIMIT", "MEMORY_LIMIT", "slice_bytes", "check_budget"]

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
    """Mined itemsets with their tallies; row 0 is the empty itemset (the whole dataset).

    ``codes[i, a]`` is itemset i's item code on attribute a, or -1 where it has none;
    ``parent[i]`` the itemset without its last attribute's item (-1 where unknown).
    """

    codes: np.ndarray  # (N, A) int32
    parent: np.ndarray  # (N,) int64, -1 for the empty itemset
    tallies: np.ndarray  # (N, T) float64
    #: unless exhaustive: each itemset's fingerprint (the sums of its distinct rows' random numbers)
    fingerprints: np.ndarray | None = None
    #: the distinct rows that were mined (unless exhaustive), and their random numbers
    groups: Compressed | None = None
    group_fp: np.ndarray | None = None
    #: when the budget cut the request: every itemset up to this many items is there
    complete_length: int | None = None
    #: the sentence saying so
    note: str | None = None


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


# ----------------------------------------------------------------------------- the miner's kernel
#: status of a call of _mine_step
DONE, YIELD, ROOM, FULL = 0, 1, 2, 3
#: slots of the scalar state ``st``
S_DEPTH, S_TOP_C, S_TOP_W, S_TOP_F, S_TOP_I, S_NOUT, S_GEN, S_WORK, S_STARTED = range(9)
S_NEED_C, S_NEED_W, S_NEED_F, S_NEED_I, S_NEED_HT, S_NEED_OUT, S_NEED_TAB = range(9, 16)
N_STATE = 16
#: rows of the frame table ``frames`` (one column per depth)
F_C, F_W, F_F, F_M, F_A0, F_KIDS, F_NK, F_NEXT, F_PERM, F_PCOL, F_TOP_C, F_TOP_W, F_TOP_F, F_TOP_I = range(14)
N_FRAME = 14


@_njit
def _slot(h, mask):
    """Hash-table slot of a 64-bit key (Fibonacci hashing)."""
    return np.int64((np.uint64(h) * np.uint64(11400714819323198485)) >> np.uint64(17)) & mask


@_njit
def _items_of(e, out_parent, out_attr, out_val, buf_a, buf_v):
    """The items of output e, in attribute order, into buf_a/buf_v; returns their number."""
    k = 0
    node = e
    while node > 0:
        buf_a[k] = out_attr[node]
        buf_v[k] = out_val[node]
        k += 1
        node = out_parent[node]
    for j in range(k // 2):
        ta = buf_a[j]
        tv = buf_v[j]
        buf_a[j] = buf_a[k - 1 - j]
        buf_v[j] = buf_v[k - 1 - j]
        buf_a[k - 1 - j] = ta
        buf_v[k - 1 - j] = tv
    return k


@_njit
def _is_subset_entry(e, pa, pv, n_path, skip, a, v, out_parent, out_attr, out_val, out_dead):
    """Whether output e is the itemset path∖{path[skip]}∪{(a, v)} (a after every path item),
    and no node on its chain is dead (a superseded description and its extensions)."""
    if e <= 0 or out_attr[e] != a or out_val[e] != v or out_dead[e]:
        return False
    node = out_parent[e]
    k = n_path - 1
    while node > 0:
        if k == skip:
            k -= 1
        if k < 0 or out_attr[node] != pa[k] or out_val[node] != pv[k] or out_dead[node]:
            return False
        k -= 1
        node = out_parent[node]
    if k == skip:
        k -= 1
    return k < 0


@_njit
def _smaller(e, pa, pv, n_path, a, v, out_parent, out_attr, out_val, buf_a, buf_v):
    """Whether output e's description sorts before path∪{(a, v)}: fewer items, or at the first
    attribute where they differ e has an item the other lacks, or a smaller value there."""
    ne = _items_of(e, out_parent, out_attr, out_val, buf_a, buf_v)
    if ne != n_path + 1:
        return ne < n_path + 1
    for k in range(ne):
        ga = pa[k] if k < n_path else a
        gv = pv[k] if k < n_path else v
        if buf_a[k] != ga:
            return buf_a[k] < ga
        if buf_v[k] != gv:
            return buf_v[k] < gv
    return False


@_njit(export="i4[:, ::1], f8[:, ::1], i8[:, ::1], i8[::1], f8, i8, i8, i8, i8, i8[::1], i8[::1], "
              "i8[::1], i8[:, ::1], i4[::1], f8[::1], i8[::1], i8[::1], i8[::1], i8[::1], "
              "i8[::1], i4[::1], i4[::1], f8[:, ::1], i8[:, ::1], i8[::1], b1[::1], i8[::1], i8[::1]")
def _mine_step(codes, w, fp, n_values, min_count, max_length, exhaustive, cap, quota, item_hash,
               expand_ids, st, frames, a_codes, a_w, a_fp, a_int, ht, ht_gen,
               out_parent, out_attr, out_val, out_w, out_fp, out_ih, out_dead, gtab, ctab):
    """Depth-first projection mining, resumable: runs until done, until ``quota`` units of work
    (rows times columns visited), until more than ``cap`` itemsets are out, or until an array is
    too small (the caller grows it and calls again); returns DONE, YIELD, FULL or ROOM.

    Outputs 0 (the whole dataset) and the root's items are written by the caller; each node in
    ``expand_ids`` is expanded, deepest first: a node's children are tallied from its rows (a
    count-only pass, then either one pass of full tallies over the frequent items, or a
    compressed table of the child's rows with infrequent items set to -1, on which the tallies
    are taken). Nodes are expanded in reverse pre-order (a node's children from the last
    attribute to the first), so every immediate subset of an itemset is out before it.

    Unless ``exhaustive``, each distinct set of rows is described once, by its shortest
    description (ties: the first in attribute order): an extension is skipped when it is not a
    generator (an immediate subset has as many rows, or was itself skipped), and when an
    itemset already out has the same rows (the same 128-bit fingerprint, a sum of random
    numbers per distinct row, and the same count) and sorts before it; an itemset out before
    one with the same rows that sorts first is marked dead (removed by the caller). ``gtab``
    (itemsets by ``out_ih``, the sum of their items' random numbers) and ``ctab`` (itemsets by
    fingerprint) are open-addressing tables at most half full.
    """
    n_attr = codes.shape[1]
    t = w.shape[1]
    nf = fp.shape[1]
    d_rows = codes.shape[0]
    root_c = codes.ravel()
    root_w = w.ravel()
    root_f = fp.ravel()
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
    acc = np.zeros((max(n_items, 1), t), dtype=np.float64)
    acc_f = np.zeros((max(n_items, 1), max(nf, 1)), dtype=np.int64)
    cnt = np.zeros(max(n_items, 1), dtype=np.float64)
    freq = np.zeros(max(n_items, 1), dtype=np.uint8)
    tmp = np.empty(max(n_attr, 1), dtype=np.int32)
    loff = np.empty(max(n_attr, 1), dtype=np.int64)
    pa = np.empty(n_attr + 1, dtype=np.int64)
    pv = np.empty(n_attr + 1, dtype=np.int64)
    buf_a = np.empty(n_attr + 1, dtype=np.int64)
    buf_v = np.empty(n_attr + 1, dtype=np.int64)
    gmask = gtab.shape[0] - 1
    cmask = ctab.shape[0] - 1

    if st[S_STARTED] == 0:
        nk = expand_ids.shape[0]
        for k in range(nk):
            e = expand_ids[k]
            a_int[3 * k] = out_attr[e]
            a_int[3 * k + 1] = out_val[e]
            a_int[3 * k + 2] = e
        frames[:, 0] = 0
        frames[F_M, 0] = d_rows
        frames[F_NK, 0] = nk
        frames[F_PERM, 0] = 3 * nk
        frames[F_PCOL, 0] = -1
        st[S_DEPTH] = 0
        st[S_TOP_C] = 0
        st[S_TOP_W] = 0
        st[S_TOP_F] = 0
        st[S_TOP_I] = 3 * nk + d_rows + max_nv + 2
        st[S_STARTED] = 1
    depth = st[S_DEPTH]
    top_c = st[S_TOP_C]
    top_w = st[S_TOP_W]
    top_f = st[S_TOP_F]
    top_i = st[S_TOP_I]
    n_out = st[S_NOUT]
    gen = st[S_GEN]
    work = st[S_WORK]
    status = DONE
    while depth >= 0:
        if n_out > cap:
            status = FULL
            break
        if work >= quota:
            status = YIELD
            break
        if frames[F_NEXT, depth] >= frames[F_NK, depth]:
            top_c = frames[F_TOP_C, depth]
            top_w = frames[F_TOP_W, depth]
            top_f = frames[F_TOP_F, depth]
            top_i = frames[F_TOP_I, depth]
            depth -= 1
            continue
        # the frame's kids are taken last first: reverse pre-order
        k3 = frames[F_KIDS, depth] + 3 * (frames[F_NK, depth] - 1 - frames[F_NEXT, depth])
        col = a_int[k3]
        val = a_int[k3 + 1]
        kid_id = a_int[k3 + 2]
        if exhaustive == 0 and out_dead[kid_id]:
            frames[F_NEXT, depth] += 1
            continue
        m = frames[F_M, depth]
        a0 = frames[F_A0, depth]
        width = n_attr - a0
        c_off = frames[F_C, depth]
        w_off = frames[F_W, depth]
        f_off = frames[F_F, depth]
        p_off = frames[F_PERM, depth]
        s_off = p_off + m
        if depth == 0:  # the root's table is read in place
            tc = root_c
            tw = root_w
            tf = root_f
        else:
            tc = a_codes
            tw = a_w
            tf = a_fp
        if frames[F_PCOL, depth] != col:
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
            frames[F_PCOL, depth] = col
            work += m
        lo = a_int[s_off + val + 1]
        hi = a_int[s_off + val + 2]
        cw = width - col - 1
        c0 = col + 1  # the child's first column in the frame's table
        ca0 = a0 + c0  # the child's first attribute
        base = offsets[ca0]
        n_local = n_items - base
        rows = hi - lo
        size = 16
        while size < 2 * rows:
            size *= 2
        # ---- room for everything this kid may need, or the caller grows the arrays first
        room = True
        if n_out + n_local > out_parent.shape[0]:
            st[S_NEED_OUT] = n_out + n_local
            room = False
        if exhaustive == 0 and 2 * (n_out + n_local) + 2 > min(gtab.shape[0], ctab.shape[0]):
            st[S_NEED_TAB] = 2 * (n_out + n_local) + 2
            room = False
        if top_c + rows * cw > a_codes.shape[0]:
            st[S_NEED_C] = top_c + rows * cw
            room = False
        if top_w + rows * t > a_w.shape[0]:
            st[S_NEED_W] = top_w + rows * t
            room = False
        if top_f + rows * nf > a_fp.shape[0]:
            st[S_NEED_F] = top_f + rows * nf
            room = False
        if top_i + 3 * n_local + rows + max_nv + 2 > a_int.shape[0]:
            st[S_NEED_I] = top_i + 3 * n_local + rows + max_nv + 2
            room = False
        if size > ht.shape[0]:
            st[S_NEED_HT] = size
            room = False
        if not room:
            status = ROOM
            break
        frames[F_NEXT, depth] += 1
        child_len = depth + 2  # length of the kid's children
        for c in range(cw):
            loff[c] = offsets[ca0 + c] - base
        n_path = 0
        kid_count = out_w[kid_id, 0]
        if exhaustive == 0:
            n_path = _items_of(kid_id, out_parent, out_attr, out_val, pa, pv)
        # ---- pass A: counts of the kid's children, in the kid's own context
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
        work += rows * cw + n_local * (n_path + 1)
        any_freq = False
        expand = False
        for i in range(n_local):
            freq[i] = 0
            if cnt[i] < min_count:
                continue
            a = item_attr[base + i]
            if exhaustive == 0:
                # not a generator: the item holds on every row of the kid, or an immediate
                # subset of the child has as many rows (or was skipped: it is no shortest
                # description, so neither is the child)
                if cnt[i] >= kid_count:
                    continue
                v = base + i - offsets[a]
                h = out_ih[kid_id] + item_hash[base + i]
                ok = True
                for j in range(n_path):
                    hs = h - item_hash[offsets[pa[j]] + pv[j]]
                    slot = _slot(hs, gmask)
                    found = -1
                    while gtab[slot] >= 0:
                        e = gtab[slot]
                        if out_ih[e] == hs and _is_subset_entry(e, pa, pv, n_path, j, a, v, out_parent,
                                                                out_attr, out_val, out_dead):
                            found = e
                            break
                        slot = (slot + 1) & gmask
                    if found < 0 or out_w[found, 0] <= cnt[i]:
                        ok = False
                        break
                if not ok:
                    continue
            freq[i] = 1
            any_freq = True
            if child_len < max_length and a < n_attr - 1:
                expand = True
        if not any_freq:
            continue
        if not expand:
            # ---- a kid none of whose children is expanded: tally the frequent items, emit
            for i in range(n_local):
                if freq[i]:
                    for j in range(t):
                        acc[i, j] = 0.0
                    for j in range(nf):
                        acc_f[i, j] = 0
            for ii in range(lo, hi):
                r = a_int[p_off + ii]
                src = c_off + r * width + c0
                sw = w_off + r * t
                sf = f_off + r * nf
                for c in range(cw):
                    v = tc[src + c]
                    if v >= 0:
                        i = loff[c] + v
                        if freq[i]:
                            for j in range(t):
                                acc[i, j] += tw[sw + j]
                            for j in range(nf):
                                acc_f[i, j] += tf[sf + j]
            work += rows * cw
            for i in range(n_local):
                if freq[i]:
                    a = item_attr[base + i]
                    v = base + i - offsets[a]
                    if exhaustive == 0 and not _admit(n_out, kid_id, a, v, base + i, acc, acc_f, i, pa, pv,
                                                      n_path, item_hash, out_parent, out_attr, out_val,
                                                      out_w, out_fp, out_ih, out_dead, gtab, ctab, buf_a, buf_v):
                        continue
                    _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, kid_id, a, v, acc, acc_f, i, t, nf)
                    n_out += 1
            continue
        # ---- pass B: the kid's table, later columns, infrequent items -1, merged
        if depth > 0:
            tc = a_codes
            tw = a_w
            tf = a_fp
        nc = top_c
        nw = top_w
        nfo = top_f
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
                    df = nfo + kk * nf
                    sf = f_off + r * nf
                    for j in range(nf):
                        a_fp[df + j] = tf[sf + j]
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
                    df = nfo + g * nf
                    sf = f_off + r * nf
                    for j in range(nf):
                        a_fp[df + j] += tf[sf + j]
                    break
                slot = (slot + 1) & mask
        work += rows * cw
        # ---- pass C: full tallies on the merged table, emit, list the children to expand
        for i in range(n_local):
            if freq[i]:
                for j in range(t):
                    acc[i, j] = 0.0
                for j in range(nf):
                    acc_f[i, j] = 0
        for r in range(kk):
            src = nc + r * cw
            sw = nw + r * t
            sf = nfo + r * nf
            for c in range(cw):
                v = a_codes[src + c]
                if v >= 0:
                    i = loff[c] + v
                    for j in range(t):
                        acc[i, j] += a_w[sw + j]
                    for j in range(nf):
                        acc_f[i, j] += a_fp[sf + j]
        work += kk * cw
        kids_off = top_i
        nk = 0
        for i in range(n_local):
            if freq[i]:
                a = item_attr[base + i]
                v = base + i - offsets[a]
                if exhaustive == 0 and not _admit(n_out, kid_id, a, v, base + i, acc, acc_f, i, pa, pv, n_path,
                                                  item_hash, out_parent, out_attr, out_val, out_w, out_fp, out_ih,
                                                  out_dead, gtab, ctab, buf_a, buf_v):
                    continue
                _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, kid_id, a, v, acc, acc_f, i, t, nf)
                if child_len < max_length and a < n_attr - 1:
                    a_int[kids_off + 3 * nk] = a - ca0
                    a_int[kids_off + 3 * nk + 1] = v
                    a_int[kids_off + 3 * nk + 2] = n_out
                    nk += 1
                n_out += 1
        # push the kid's frame
        depth += 1
        frames[F_TOP_C, depth] = top_c
        frames[F_TOP_W, depth] = top_w
        frames[F_TOP_F, depth] = top_f
        frames[F_TOP_I, depth] = top_i
        frames[F_C, depth] = nc
        frames[F_W, depth] = nw
        frames[F_F, depth] = nfo
        frames[F_M, depth] = kk
        frames[F_A0, depth] = ca0
        frames[F_KIDS, depth] = kids_off
        frames[F_NK, depth] = nk
        frames[F_NEXT, depth] = 0
        frames[F_PERM, depth] = kids_off + 3 * nk
        frames[F_PCOL, depth] = -1
        top_c = nc + kk * cw
        top_w = nw + kk * t
        top_f = nfo + kk * nf
        top_i = kids_off + 3 * nk + kk + max_nv + 2
    st[S_DEPTH] = depth
    st[S_TOP_C] = top_c
    st[S_TOP_W] = top_w
    st[S_TOP_F] = top_f
    st[S_TOP_I] = top_i
    st[S_NOUT] = n_out
    st[S_GEN] = gen
    st[S_WORK] = work
    return status


@_njit
def _admit(n_out, kid_id, a, v, item, acc, acc_f, i, pa, pv, n_path, item_hash, out_parent, out_attr, out_val,
           out_w, out_fp, out_ih, out_dead, gtab, ctab, buf_a, buf_v):
    """Whether the child kid∪{(a, v)} is the first description of its rows seen so far (an
    itemset with the same rows that sorts first was not out before it); registers it in the
    tables as output n_out, and marks an earlier description of the same rows dead."""
    gmask = gtab.shape[0] - 1
    cmask = ctab.shape[0] - 1
    slot = _slot(acc_f[i, 0], cmask)
    while ctab[slot] >= 0:
        e = ctab[slot]
        if out_fp[e, 0] == acc_f[i, 0] and out_fp[e, 1] == acc_f[i, 1] and out_w[e, 0] == acc[i, 0]:
            if _smaller(e, pa, pv, n_path, a, v, out_parent, out_attr, out_val, buf_a, buf_v):
                return False
            out_dead[e] = True
            break
        slot = (slot + 1) & cmask
    ctab[slot] = n_out
    h = out_ih[kid_id] + item_hash[item]
    out_ih[n_out] = h
    out_dead[n_out] = False
    g = _slot(h, gmask)
    while gtab[g] >= 0:
        g = (g + 1) & gmask
    gtab[g] = n_out
    return True


@_njit
def _emit(n_out, out_parent, out_attr, out_val, out_w, out_fp, parent, a, v, acc, acc_f, i, t, nf):
    out_parent[n_out] = parent
    out_attr[n_out] = a
    out_val[n_out] = v
    for j in range(t):
        out_w[n_out, j] = acc[i, j]
    for j in range(nf):
        out_fp[n_out, j] = acc_f[i, j]


@_njit(export="i8[::1], i8[::1], i8[:, ::1], i4[::1], i4[::1], b1[::1], i8[::1], i8[::1], i8")
def _fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n_out):
    """(Re)build the itemset and fingerprint tables of outputs 1..n_out-1 (the newest of a
    fingerprint owns its slot, as when they were admitted one by one)."""
    gtab[:] = -1
    ctab[:] = -1
    gmask = gtab.shape[0] - 1
    cmask = ctab.shape[0] - 1
    for e in range(1, n_out):
        g = _slot(out_ih[e], gmask)
        while gtab[g] >= 0:
            g = (g + 1) & gmask
        gtab[g] = e
        if out_dead[e]:
            continue
        c = _slot(out_fp[e, 0], cmask)
        while ctab[c] >= 0:
            f = ctab[c]
            if out_fp[f, 0] == out_fp[e, 0] and out_fp[f, 1] == out_fp[e, 1]:
                break
            c = (c + 1) & cmask
        ctab[c] = e
    return 0


@_njit(export="i4[:, ::1], i8[:, ::1], i8, i8[::1]")
def _root_fingerprints(codes, fp, n_items, offsets):
    """Per item, the wrapping sum of the fingerprints of the rows holding it."""
    nf = fp.shape[1]
    acc = np.zeros((max(n_items, 1), max(nf, 1)), dtype=np.int64)
    for r in range(codes.shape[0]):
        for c in range(codes.shape[1]):
            v = codes[r, c]
            if v >= 0:
                for j in range(nf):
                    acc[offsets[c] + v, j] += fp[r, j]
    return acc


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
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    cap = os.environ.get("DIVERGENCE_THREADS")
    return max(1, min(n, int(cap))) if cap and cap.isdigit() else max(1, n)


# ----------------------------------------------------------------------------- budget and progress
#: default bounds of one scan (2 cores, a few GiB): most slices, seconds of mining, bytes of result
MAX_SLICES = 500_000
TIME_LIMIT = 60.0
MEMORY_LIMIT = 2 << 30
#: work units (rows x columns visited) per kernel call: a few milliseconds, so progress, the
#: time limit and a waiting thread are served often
QUOTA = 1_000_000
#: seconds between progress reports while mining
REPORT_EVERY = 0.25
#: the share of the time limit the whole request may use before the miner falls back to
#: complete shorter lengths in the rest
FIRST_SHARE = 0.5


@dataclass
class Budget:
    """The bounds of one mining request and whom to tell about its progress."""

    max_slices: int = MAX_SLICES
    time_limit: float | None = TIME_LIMIT
    progress: Callable[[dict], None] | None = None
    start: float = field(default_factory=time.monotonic)
    #: the share of the time limit the current attempt may use
    share: float = 1.0
    _last: float = 0.0

    @property
    def deadline(self) -> float | None:
        return None if self.time_limit is None else self.start + self.share * float(self.time_limit)

    def report(self, slices: int, length: int | None, fraction: float | None, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if force or now - self._last >= REPORT_EVERY:
            self._last = now
            self.progress({"stage": "mining", "slices": int(slices), "length": length,
                           "fraction": None if fraction is None else float(min(max(fraction, 0.0), 1.0))})


def check_budget(max_slices: object, time_limit: object) -> tuple[int, float | None]:
    """The slice and time bounds as numbers, or a clear error."""
    try:
        ms = int(max_slices)  # type: ignore[arg-type]
        ok = ms == max_slices and ms >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DivergenceInputError(f"max_slices must be a positive integer; got {max_slices!r}.")
    if time_limit is not None:
        try:
            tl = float(time_limit)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            tl = float("nan")
        if not tl > 0:
            raise DivergenceInputError(f"time_limit must be a positive number of seconds (or None); got {time_limit!r}.")
        return ms, tl
    return ms, None


def slice_bytes(n_attr: int, n_tallies: int, n_metrics: int) -> int:
    """About how many bytes one slice takes at the peak of a scan written to CSV (codes, tallies,
    every statistic column in the table and its frame, the itemset text built per attribute,
    the CSV writer's copy), to bound the slice count by memory. Fitted on peak memory of raw
    COMPAS scans: about 1.9 KiB a slice with 20 attributes, 2.7 KiB with 44 (two metrics)."""
    return 400 + 35 * n_attr + 8 * n_tallies + 416 * max(n_metrics, 1)


# ----------------------------------------------------------------------------- driving the kernel
class _Overflow(Exception):
    """A run went past the budget: ``why`` is 'slices' or 'time'."""

    def __init__(self, why: str, slices: int, length: int | None, by_length: np.ndarray | None = None):
        super().__init__(why)
        self.why, self.slices, self.length = why, slices, length
        #: itemsets out by length when the run stopped (a run limited to k items puts out at
        #: least as many of each length up to k: the same nodes, in the same order)
        self.by_length = by_length


def _lengths_out(parent: np.ndarray, n: int) -> np.ndarray:
    """Count of outputs 1..n-1 by length (parents precede their children)."""
    depth = np.zeros(n, np.int64)
    for i in range(1, n):
        depth[i] = depth[parent[i]] + 1
    return np.bincount(depth[1:], minlength=2)


def _grown(arr: np.ndarray, need: int, fill=None) -> np.ndarray:
    if need <= arr.shape[0]:
        return arr
    size = max(int(need), 2 * arr.shape[0])
    new = np.empty((size,) + arr.shape[1:], dtype=arr.dtype) if fill is None else \
        np.full((size,) + arr.shape[1:], fill, dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new


def _pow2(n: int) -> int:
    size = 16
    while size < n:
        size *= 2
    return size


@dataclass
class _Root:
    """The root's items on the table to mine: outputs 1..m, in attribute order."""

    attr: np.ndarray  # int32
    val: np.ndarray  # int32
    tallies: np.ndarray  # m x T
    fp: np.ndarray  # m x F int64
    ih: np.ndarray  # m int64 (the item's random number)


def _run(codes: np.ndarray, weights: np.ndarray, fps: np.ndarray, n_values: np.ndarray, min_count: float,
         max_length: int, exhaustive: bool, root: _Root, item_hash: np.ndarray, total: np.ndarray,
         expand: np.ndarray, cap: int, budget: Budget, kernel, shared: dict | None = None) -> tuple:
    """Mine below the root's items listed in ``expand`` (all itemsets up to ``max_length``);
    returns (parent, attr, val, tallies, fp, dead) with row 0 the whole dataset and rows 1..m the
    root's items, or raises _Overflow past ``cap`` outputs or the budget's deadline."""
    n_attr = codes.shape[1]
    t = weights.shape[1]
    nf = fps.shape[1]
    d = codes.shape[0]
    m = len(root.attr)
    n0 = 1 + m
    size = max(1024, 2 * n0)
    out_parent = np.empty(size, np.int64)
    out_attr = np.empty(size, np.int32)
    out_val = np.empty(size, np.int32)
    out_w = np.empty((size, t), np.float64)
    out_fp = np.zeros((size, nf), np.int64)
    out_ih = np.zeros(size, np.int64)
    out_dead = np.zeros(size, np.bool_)
    out_parent[0], out_attr[0], out_val[0] = -1, -1, -1
    out_w[0] = total
    out_fp[0] = fps.sum(axis=0) if nf else 0
    out_parent[1:n0] = 0
    out_attr[1:n0], out_val[1:n0] = root.attr, root.val
    out_w[1:n0] = root.tallies
    out_fp[1:n0] = root.fp
    out_ih[1:n0] = root.ih
    tab = _pow2(4 * n0) if not exhaustive else 2
    gtab = np.full(tab, -1, np.int64)
    ctab = np.full(tab, -1, np.int64)
    if not exhaustive:
        _fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n0)
    max_nv = int(n_values.max(initial=1))
    st = np.zeros(N_STATE, np.int64)
    st[S_NOUT] = n0
    frames = np.zeros((N_FRAME, n_attr + 2), np.int64)
    a_codes = np.empty(max(16, d * n_attr // 2), np.int32)
    a_w = np.empty(max(16, d * t // 2), np.float64)
    a_fp = np.empty(max(16, d * nf // 2), np.int64)
    a_int = np.empty(3 * len(expand) + 3 * d + 8 * int(n_values.sum()) + 4 * max_nv + 64, np.int64)
    ht = np.empty(_pow2(2 * d), np.int64)
    ht_gen = np.zeros(ht.shape[0], np.int64)
    deadline = budget.deadline
    n_expand = max(len(expand), 1)
    while True:
        st[S_WORK] = 0
        status = kernel(codes, weights, fps, n_values, float(min_count), int(max_length), 1 if exhaustive else 0,
                        int(cap), QUOTA, item_hash, expand, st, frames, a_codes, a_w, a_fp, a_int, ht, ht_gen,
                        out_parent, out_attr, out_val, out_w, out_fp, out_ih, out_dead, gtab, ctab)
        n_out = int(st[S_NOUT])
        if status == DONE:
            break
        if status == FULL:
            raise _Overflow("slices", n_out - 1, max_length, _lengths_out(out_parent, n_out))
        if status == ROOM:
            out_parent = _grown(out_parent, st[S_NEED_OUT])
            out_attr = _grown(out_attr, st[S_NEED_OUT])
            out_val = _grown(out_val, st[S_NEED_OUT])
            out_w = _grown(out_w, st[S_NEED_OUT])
            out_fp = _grown(out_fp, st[S_NEED_OUT], 0)
            out_ih = _grown(out_ih, st[S_NEED_OUT], 0)
            out_dead = _grown(out_dead, st[S_NEED_OUT], False)
            a_codes = _grown(a_codes, st[S_NEED_C])
            a_w = _grown(a_w, st[S_NEED_W])
            a_fp = _grown(a_fp, st[S_NEED_F])
            a_int = _grown(a_int, st[S_NEED_I])
            if st[S_NEED_HT] > ht.shape[0]:
                ht = _grown(ht, _pow2(st[S_NEED_HT]))
                ht_gen = _grown(ht_gen, ht.shape[0], 0)
            if st[S_NEED_TAB] > gtab.shape[0]:
                gtab = np.full(_pow2(2 * st[S_NEED_TAB]), -1, np.int64)
                ctab = np.full(gtab.shape[0], -1, np.int64)
                _fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n_out)
            st[S_NEED_C:S_NEED_TAB + 1] = 0
            continue
        # YIELD: a few milliseconds of work done
        if shared is not None:
            with shared["lock"]:
                shared["slices"][id(st)] = n_out - n0
                done = sum(shared["slices"].values())
                if shared.get("abort"):
                    raise _Overflow(shared["abort"], done, max_length)
            if done > cap:
                shared["abort"] = "slices"
                raise _Overflow("slices", done, max_length)
        if deadline is not None and time.monotonic() > deadline:
            if shared is not None:
                shared["abort"] = "time"
            raise _Overflow("time", n_out - 1, max_length)
        depth = int(st[S_DEPTH])
        f0 = (frames[F_NEXT, 0] - 1 + (frames[F_NEXT, 1] / max(frames[F_NK, 1], 1) if depth >= 1 else 1.0)) / n_expand
        budget.report((shared or {}).get("base", 0) + n_out - 1, None if max_length >= n_attr else max_length,
                      f0 if shared is None else None)
    n = int(st[S_NOUT])
    return (out_parent[:n].copy(), out_attr[:n].copy(), out_val[:n].copy(), out_w[:n].copy(),
            out_fp[:n].copy(), out_dead[:n].copy())


def _fingerprints(n: int, seed: int = 0x5EED) -> np.ndarray:
    """Two random 64-bit numbers per distinct row: a set of rows is identified by their sums
    (two different sets share both with probability 2**-128)."""
    rng = np.random.default_rng(seed)
    return rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(n, 2), dtype=np.int64,
                        endpoint=True)


def _reduce_root(comp: Compressed, n_values: np.ndarray, min_count: float, n_rows: float,
                 exhaustive: bool) -> tuple[Compressed, np.ndarray, np.ndarray]:
    """The table to mine, its rows' fingerprints, and the fingerprints of ``comp``'s rows (a
    row merged into another adds its numbers: every set of rows keeps one fingerprint). Unless
    ``exhaustive``, the root's items that add nothing are removed from the table first: an item
    on every row (the whole dataset's rows) and an item with the same rows as an earlier one
    (``age`` bins beside ``age_cat``)."""
    codes = comp.codes
    n_attr = codes.shape[1]
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    if exhaustive:
        empty = np.zeros((codes.shape[0], 0), np.int64)
        return comp, empty, empty
    fp = _fingerprints(codes.shape[0])
    acc = _root_tallies(codes, comp.weights, int(offsets[-1]), offsets)
    item_fp = _root_fingerprints(codes, fp, int(offsets[-1]), offsets)
    drop = np.zeros(int(offsets[-1]), dtype=bool)
    seen: set = set()
    for item in range(int(offsets[-1])):
        count = acc[item, 0]
        if count < min_count:
            continue
        if count >= n_rows:
            drop[item] = True
            continue
        key = (int(item_fp[item, 0]), int(item_fp[item, 1]), float(count))
        if key in seen:
            drop[item] = True
        else:
            seen.add(key)
    if not drop.any():
        return comp, fp, fp
    pruned = codes.copy()
    for a in range(n_attr):
        dropped = np.append(drop[offsets[a]:offsets[a + 1]], False)
        col = codes[:, a]
        pruned[:, a] = np.where(dropped[col], -1, col)
    merged = compress(pruned, comp.weights)
    merged_fp = np.zeros((merged.codes.shape[0], 2), np.int64)
    np.add.at(merged_fp, merged.inverse, fp)  # wrapping sums
    return merged, merged_fp, fp


def _keep_first_of_each_rows(codes: np.ndarray, tallies: np.ndarray, fp: np.ndarray, n_values: np.ndarray):
    """Rows of the canonical order to keep: the first itemset of each set of rows (fingerprint
    and count), i.e. its shortest description, the first in attribute order among equals."""
    order = _canonical_permutation(codes, n_values)
    key = np.column_stack([fp[order], tallies[order, :1].view(np.int64)])
    _, first = np.unique(key, axis=0, return_index=True)
    return order[np.sort(first)]


def _canonical_permutation(codes: np.ndarray, n_values: np.ndarray) -> np.ndarray:
    """Itemsets by length, then by their items in attribute order (a missing item sorts last)."""
    n, a = codes.shape
    length = (codes >= 0).sum(axis=1)
    digits = np.where(codes >= 0, codes, n_values[None, :]).astype(np.int64)
    radix = np.asarray(n_values, dtype=np.int64) + 1
    if a and float(np.prod(radix.astype(float))) * (a + 1) < 2.0 ** 62:
        key = length.astype(np.int64)
        for j in range(a):
            key = key * radix[j] + digits[:, j]
        return np.argsort(key, kind="stable")
    return np.lexsort(tuple(digits[:, j] for j in range(a - 1, -1, -1)) + (length,))


def _mine_fast(comp: Compressed, n_values: np.ndarray, min_count: int, max_length: int, total: np.ndarray,
               n_rows: float, exhaustive: bool, budget: Budget, names: Sequence[str] | None = None) -> Mined:
    """Every itemset up to ``max_length`` items (unless ``exhaustive``: each distinct set of rows
    once), within the budget: complete up to the longest length that fits, said in ``note``."""
    n_attr = comp.codes.shape[1]
    n_values = n_values.astype(np.int64)
    groups = comp
    comp, fps, group_fp = _reduce_root(comp, n_values, min_count, n_rows, exhaustive)
    codes = np.ascontiguousarray(comp.codes, dtype=np.int32)
    weights = np.ascontiguousarray(comp.weights, dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    acc = _root_tallies(codes, weights, int(offsets[-1]), offsets)
    frequent = np.nonzero(acc[:, 0] >= min_count)[0] if len(acc) else np.empty(0, np.int64)
    item_attr = np.repeat(np.arange(n_attr), n_values)
    f_attr = item_attr[frequent].astype(np.int32)
    f_val = (frequent - offsets[f_attr]).astype(np.int32)
    item_hash = _fingerprints(max(int(offsets[-1]), 1), seed=0x17E5)[:, 0].copy()
    item_fp = _root_fingerprints(codes, fps, int(offsets[-1]), offsets)[frequent, :fps.shape[1]] if fps.shape[1] \
        else np.zeros((len(frequent), 0), np.int64)
    root = _Root(f_attr, f_val, acc[frequent], np.ascontiguousarray(item_fp), item_hash[frequent].copy())
    kernel, threaded = _mine_step.pick(large=exhaustive and codes.shape[0] >= JIT_MIN_ROWS)
    if kernel is _mine_step.py_func:  # pragma: no cover - exercised only without numba
        raise DivergenceInputError("The 'fast' engine needs numba; install the pinned requirements.")
    cap = budget.max_slices + 1

    def attempt(k: int):
        expand = np.nonzero(f_attr < n_attr - 1)[0].astype(np.int64) + 1 if k > 1 else np.empty(0, np.int64)
        if len(frequent) > budget.max_slices:
            raise _Overflow("slices", len(frequent), 1)
        args = (codes, weights, fps, n_values, float(min_count), k, exhaustive, root, item_hash, total)
        # the tables of the non-exhaustive miner are shared by the whole run: one thread
        workers = min(_threads(), len(expand)) if threaded and exhaustive else 1
        if workers <= 1:
            return _run(*args, expand, cap, budget, kernel)
        return _threaded(args, expand, cap, budget, kernel, workers, 1 + len(frequent))

    try:  # the whole request, in a share of the time
        budget.share = FIRST_SHARE
        parts = attempt(max_length)
        note = None
        complete = None
    except _Overflow as exc:
        first = exc  # kept past the except block for the note
        parts, complete = None, 0
        budget.share = 1.0  # the shorter lengths get the rest of the time
        # every output of the whole request up to k items is an output of a run limited to k:
        # a length whose count alone passes the budget is not tried
        known = np.cumsum(first.by_length) if first.by_length is not None else None
        for k in range(1, max_length):
            if known is not None and k < len(known) and known[k] > cap:
                break
            try:
                parts = attempt(k)
                complete = k
            except _Overflow:
                break
        if parts is None:
            raise DivergenceBudgetError(_budget_message(first, None, budget, n_values, acc, names)) from None
    parent, attr, val, tallies, fp, dead = parts
    full = _expand_codes(parent, attr, val, n_attr)
    if complete is not None:
        note = _budget_message(first, complete, budget, n_values, acc, names, full)
    mined_fp = None
    if exhaustive:
        keep = _canonical_permutation(full, n_values)
    else:
        keep = _keep_first_of_each_rows(full, tallies, fp, n_values)
        mined_fp = fp[keep]
    # the canonical order (by length, then items): the same whatever the threads did
    remap = np.full(len(parent), -1, np.int64)
    remap[keep] = np.arange(len(keep))
    parent = np.where(parent[keep] >= 0, remap[np.maximum(parent[keep], 0)], -1)
    full, tallies = full[keep], tallies[keep]
    return Mined(codes=full, parent=parent, tallies=tallies, fingerprints=mined_fp,
                 groups=None if exhaustive else groups, group_fp=None if exhaustive else group_fp,
                 complete_length=complete, note=note)


def _threaded(args, expand, cap, budget, kernel, workers, n0):
    """Exhaustive mining of a large table: the root's items spread over threads (numba's JIT
    kernel releases the GIL), largest subtrees first; outputs merged."""
    from concurrent.futures import ThreadPoolExecutor

    codes = args[0]
    rows_with = {}
    root = args[7]
    for k in expand:
        a, v = int(root.attr[k - 1]), int(root.val[k - 1])
        rows_with[k] = int((codes[:, a] == v).sum())
    order = sorted(expand, key=lambda k: (root.attr[k - 1], -rows_with[k]))
    groups = [np.array(sorted(order[i::workers]), dtype=np.int64) for i in range(workers)]
    shared = {"lock": threading.Lock(), "slices": {}, "abort": None, "base": n0 - 1}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_run, *args, g, cap, budget, kernel, shared) for g in groups if len(g)]
        results = [f.result() for f in futures]
    parent0, attr0, val0, w0, fp0, dead0 = results[0]
    parts_p, parts_a, parts_v, parts_w = [parent0[:n0]], [attr0[:n0]], [val0[:n0]], [w0[:n0]]
    nxt = n0
    for parent, attr, val, w, _, _ in results:
        own = parent[n0:]
        parts_p.append(np.where(own >= n0, own - n0 + nxt, own))
        parts_a.append(attr[n0:])
        parts_v.append(val[n0:])
        parts_w.append(w[n0:])
        nxt += len(own)
    if nxt > cap:
        raise _Overflow("slices", nxt - 1, None)
    return (np.concatenate(parts_p), np.concatenate(parts_a), np.concatenate(parts_v), np.vstack(parts_w),
            np.zeros((nxt, 0), np.int64), np.zeros(nxt, bool))


def _budget_message(over: _Overflow, complete: int | None, budget: Budget, n_values: np.ndarray,
                    acc: np.ndarray, names: Sequence[str] | None, codes: np.ndarray | None = None) -> str:
    """One line: what would exceed the budget, and the remedy, naming the attributes that drive
    the count (those in the most slices of the complete lengths, else those with most items)."""
    what = (f"more than {budget.max_slices:,} slices" if over.why == "slices"
            else f"more than {budget.time_limit:g} seconds of mining")
    n_attr = len(n_values)
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    if codes is not None and len(codes) > 1:
        weight = (codes >= 0).sum(axis=0)
        unit = "slices"
    else:
        weight = np.array([int((acc[offsets[a]:offsets[a + 1], 0] > 0).sum()) for a in range(n_attr)])
        unit = "items"
    top = [a for a in np.argsort(-weight, kind="stable")[:3] if weight[a] > 0]
    drivers = ", ".join(f"'{names[a] if names is not None else a}' ({int(weight[a]):,} {unit})" for a in top)
    remedy = ("raise the support, limit items per slice (max_length), or drop attributes"
              + (f" (the most {unit}: {drivers})" if drivers else ""))
    if complete is None or complete == 0:
        return f"The scan would need {what} even for single items: {remedy}."
    return (f"Complete up to {complete} item{'s' if complete != 1 else ''}; {complete + 1}-item slices would "
            f"exceed the budget ({what}): to see them, {remedy}.")


def _mine_mlxtend(codes: np.ndarray, comp: Compressed, n_values: np.ndarray, min_support: float,
                  max_length: int, total: np.ndarray, exhaustive: bool = True) -> Mined:
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
    parent = np.full(full.shape[0], -1, dtype=np.int64)
    if exhaustive:
        return Mined(codes=full, parent=parent, tallies=tallies)
    # each distinct set of rows once, by the same rule as the fast engine: fingerprints by masks
    fp = _fingerprints(comp.codes.shape[0])
    fps = np.zeros((full.shape[0], 2), np.int64)
    fps[0] = fp.sum(axis=0)
    for i in range(1, full.shape[0]):
        mask = np.ones(comp.codes.shape[0], dtype=bool)
        for a in np.nonzero(full[i] >= 0)[0]:
            mask &= comp.codes[:, a] == full[i, a]
        fps[i] = fp[mask].sum(axis=0)
    keep = _keep_first_of_each_rows(full, tallies, fps, np.asarray(n_values, dtype=np.int64))
    return Mined(codes=full[keep], parent=parent[keep], tallies=tallies[keep], fingerprints=fps[keep],
                 groups=comp, group_fp=fp)


def mine(codes: np.ndarray, weights: np.ndarray, n_values: np.ndarray, *, min_support: float,
         max_length: int | None = None, engine: str = "fast", exhaustive: bool = False,
         max_slices: int = MAX_SLICES, time_limit: float | None = TIME_LIMIT,
         progress: Callable[[dict], None] | None = None,
         attribute_names: Sequence[str] | None = None) -> Mined:
    """Every itemset with support >= ``min_support`` (at most ``max_length`` items), with tallies.

    ``codes`` (rows x attributes) holds each row's item code per attribute, ``weights``
    (rows x tallies) the per-row tallies, column 0 the row count (1 per row).

    Unless ``exhaustive``, each distinct set of rows is mined once and described by its
    shortest itemset (the first in attribute order among equally short ones); every subset
    of a described itemset is described too (so Shapley values and pruning need nothing else).
    ``exhaustive=True`` lists every itemset, as DivExplorer and mlxtend do.

    The budget: more than ``max_slices`` itemsets or ``time_limit`` seconds, and the result is
    complete up to the longest length that fits (``Mined.note`` says so), or, when not even
    single items fit, :class:`DivergenceBudgetError`. ``progress`` is called with a dict
    (``stage``, ``slices``, ``length``, ``fraction``) every quarter second of mining.
    """
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    max_slices, time_limit = check_budget(max_slices, time_limit)
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
    budget = Budget(max_slices=max_slices, time_limit=time_limit, progress=progress)
    budget.report(0, None, 0.0, force=True)
    if engine == "mlxtend":
        mined = _mine_mlxtend(pruned, comp, n_values, min_support, max_length, total, exhaustive)
        if len(mined.codes) - 1 > max_slices:
            raise DivergenceBudgetError(
                f"The scan gives {len(mined.codes) - 1:,} slices, more than the budget of {max_slices:,}: raise "
                "the support, limit items per slice (max_length) or drop attributes."
            )
        return mined
    if max_length == 0:
        return Mined(np.full((1, n_attr), -1, np.int32), np.array([-1]), total[None, :].copy())
    mined = _mine_fast(comp, np.asarray(n_values), min_count, max_length, total, n_rows, exhaustive, budget,
                       attribute_names)
    budget.report(len(mined.codes) - 1, mined.complete_length, 1.0, force=True)
    return mined

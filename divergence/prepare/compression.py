"""Compression: identical discretized rows merged, their tallies summed (a GROUP BY on every
attribute), so that mining costs what the distinct rows cost, not the rows.

:func:`compress` merges rows whose tallies are already columns (numpy); :func:`compress_outcomes`
goes straight from the per-row outcome values to the distinct rows' tallies in one compiled
pass (no rows x tallies matrix is built), pruning infrequent items on the way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.compiled import b1, f8, i4, i8, kernel
from .tallies import COUNT, DEFINED, METRIC0, PER_AUX, PER_METRIC, SQUARES, SUM

__all__ = ["Compressed", "compress", "compress_outcomes"]


@dataclass(frozen=True)
class Compressed:
    """Distinct discretized rows with their summed tallies."""

    codes: np.ndarray  # (D, A) int32
    weights: np.ndarray  # (D, T) float64, column 0 = row count
    inverse: np.ndarray  # (n_rows,) group of each original row


def compress(codes: np.ndarray, weights: np.ndarray) -> Compressed:
    """Merge identical code rows, summing their weights (a GROUP BY on all attributes)."""
    n, a = codes.shape
    if n == 0:
        return Compressed(codes.reshape(0, a), weights.reshape(0, weights.shape[1]), np.empty(0, np.int64))
    radix = codes.max(axis=0).astype(np.int64) + 2  # codes may be -1
    if a and float(np.log2(radix.astype(float)).sum()) < 62.0:
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
    if n_attr and float(np.log2(radix).sum()) < 62.0:  # the keys fit in 62 bits (a product could overflow a float)
        mult = np.ones(n_attr, dtype=np.int64)
        for a in range(n_attr - 2, -1, -1):
            mult[a] = mult[a + 1] * (int(n_values[a + 1]) + 1)
        c, w = _compress_keyed(np.ascontiguousarray(codes, dtype=np.int32), keep, offsets, mult,
                               np.ascontiguousarray(values, dtype=np.float64),
                               np.asarray(vshift, dtype=np.float64),
                               np.ascontiguousarray(target, dtype=np.float64),
                               np.asarray(tshift, dtype=np.float64))
        return Compressed(c, w, np.empty(0, np.int64))
    c, w = _compress_hashed(np.ascontiguousarray(codes, dtype=np.int32), keep, offsets,
                            np.ascontiguousarray(values, dtype=np.float64),
                            np.asarray(vshift, dtype=np.float64),
                            np.ascontiguousarray(target, dtype=np.float64),
                            np.asarray(tshift, dtype=np.float64))
    return Compressed(c, w, np.empty(0, np.int64))


@kernel(i4[:, ::1], b1[::1], i8[::1], i8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1])
def _compress_keyed(codes, keep, offsets, mult, values, vshift, target, tshift):
    """As :func:`_compress_hashed`, when a row's pruned codes fit one int64 (mixed radix): the
    hash table compares one key instead of every column."""
    n, n_attr = codes.shape
    t = METRIC0 + PER_METRIC * values.shape[1] + PER_AUX * target.shape[1]  # tallies.width
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
                out_w = _grown_tallies(out_w, k, keys.shape[0])
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


@kernel(i4[:, ::1], b1[::1], i8[::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1])
def _compress_hashed(codes, keep, offsets, values, vshift, target, tshift):
    """One pass over the rows: prune infrequent items to -1, merge identical rows (hashing every
    column), and sum each row's tallies (see :func:`_add_tallies`)."""
    n, n_attr = codes.shape
    n_met = values.shape[1]
    n_aux = target.shape[1]
    t = METRIC0 + PER_METRIC * n_met + PER_AUX * n_aux  # tallies.width
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
                out_w = _grown_tallies(out_w, k, out_c.shape[0])
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
        _add_tallies(out_w, g, r, values, vshift, target, tshift)
    return out_c[:k].copy(), out_w[:k].copy()


@kernel
def _add_tallies(out_w, g, r, values, vshift, target, tshift):
    """Row r's tallies added to group g's (the layout of :mod:`divergence.prepare.tallies`): 1, then per
    metric m (defined, v - shift, (v - shift)^2) where v = values[r, m] is defined (not NaN),
    then per auxiliary column a (y - tshift, (y - tshift)^2) where y = target[r, a] is."""
    n_met = values.shape[1]
    out_w[g, COUNT] += 1.0
    for m in range(n_met):
        v = values[r, m]
        if not np.isnan(v):
            x = v - vshift[m]
            c = METRIC0 + PER_METRIC * m
            out_w[g, c + DEFINED] += 1.0
            out_w[g, c + SUM] += x
            out_w[g, c + SQUARES] += x * x
    for a in range(target.shape[1]):
        y = target[r, a]
        if not np.isnan(y):
            x = y - tshift[a]
            c = METRIC0 + PER_METRIC * n_met + PER_AUX * a
            out_w[g, c] += x
            out_w[g, c + 1] += x * x


@kernel
def _ensure(arr, need):
    """``arr`` itself when it holds ``need`` elements, else a copy at least twice as large."""
    if need <= arr.shape[0]:
        return arr
    new = np.empty(max(2 * arr.shape[0], need), dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new


@kernel
def _grown_tallies(out_w, k, rows):
    """A tally table of ``rows`` rows (zeros) holding the first ``k`` rows of ``out_w``."""
    new_w = np.zeros((rows, out_w.shape[1]), dtype=np.float64)
    new_w[:k] = out_w[:k]
    return new_w


@kernel
def _ensure2(arr, need):
    if need <= arr.shape[0]:
        return arr
    new = np.empty((max(2 * arr.shape[0], need), arr.shape[1]), dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new

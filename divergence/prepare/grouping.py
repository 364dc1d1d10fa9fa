"""The distinct rows of a table and their tallies from one key per row (the mixed radix of the
codes) and numpy's counting passes, sorted by their codes: the order the miner's own merge
(:func:`divergence.mining.mining.mine`) gives them, so it has nothing left to merge or reorder and
holds no second copy of them.

The keys are counted directly (an array over every possible key, no hashing and no sort) when there
are few possible keys beside the rows, else sorted once with each row's position in their low bits,
else (keys too wide for that) hashed (pandas' factorize) and only the distinct keys sorted; the
distinct rows' codes are decoded from their keys.

The same numbers as the compiled :func:`divergence.prepare.compression.compress_outcomes` followed by
the miner's merge, bit for bit: each group's sums in row order, and the root's tallies (``totals``)
summed over the groups in the order they first appear, as the miner summed them (in any order when
every tally is a whole number: the sums are then exact); without growing tables (every array is
allocated once at its size). Used when a row's codes fit one int64 key.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .compression import Compressed
from .tallies import COUNT, DEFINED, METRIC0, PER_AUX, PER_METRIC, SQUARES, SUM

__all__ = ["fits_one_key", "group_outcomes", "narrowed", "sorted_distinct", "sequential_sum"]


def fits_one_key(n_values: np.ndarray) -> bool:
    """Whether a row's codes (each from -1 to its attribute's count of items) fit one int64 key."""
    radix = np.asarray(n_values, dtype=np.float64) + 1.0
    return bool(len(radix)) and float(np.log2(radix).sum()) < 62.0


def code_type(n_values: np.ndarray) -> type:
    """The type that holds every code (-1 to its attribute's count of items - 1): 8 bits when each
    attribute has at most 127 items (a quarter of 32 bits' memory: 10**7 rows of 12 attributes hold
    115 MiB instead of 458), else 32."""
    return np.int8 if int(np.max(n_values, initial=0)) <= 127 else np.int32


def narrowed(codes: np.ndarray, n_values: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """``codes`` in :func:`code_type` (the same array when already so), a block of rows at a time."""
    kind = code_type(n_values)
    if codes.dtype == kind:
        return codes
    out: np.ndarray = np.empty(codes.shape, dtype=kind)
    for start in range(0, len(codes), block):
        out[start:start + block] = codes[start:start + block]
    return out


#: the keys are counted directly (an array over every possible key) while there are at most this many
#: possible keys per row, or this many in all; else hashed
DIRECT_PER_ROW = 4
DIRECT_MIN = 1 << 22
#: else the keys are sorted with each row's position in their low bits while both fit this many bits;
#: else hashed
SORT_BITS = 63


def group_outcomes(codes: np.ndarray, n_values: np.ndarray, min_count: float, values: Sequence[np.ndarray],
                   vshift: np.ndarray, aux: Sequence[np.ndarray], tshift: np.ndarray,
                   binary: Sequence[bool] = ()) -> tuple[Compressed, np.ndarray]:
    """Distinct rows (items below ``min_count`` rows dropped to -1) with their summed tallies in the
    layout of :mod:`divergence.prepare.tallies`, sorted by their codes, and the root's tallies (their
    sum in the order the rows first appear); ``values`` one array per metric (NaN where undefined),
    ``aux`` one per auxiliary column; ``binary[m]``: metric m's values are 0 or 1 and its shift 0,
    so its sum of squares is its sum. Needs :func:`fits_one_key`."""
    n, n_attr = codes.shape
    group, out_codes = _sorted_groups(codes, n_values)
    k = len(out_codes)
    sizes = np.bincount(group, minlength=k)
    # items of fewer than min_count rows (counted over the groups) become -1, and the groups they
    # told apart merge: the groups' own rows are grouped again (no item has fewer than one row)
    pruned = False
    if min_count > 1:
        counts = _item_counts(out_codes, sizes, n_values)
        for a in range(n_attr):
            dropped = counts[a] < min_count
            dropped[0] = False  # -1 stays -1
            if dropped.any():
                col = out_codes[:, a]
                out_codes[:, a] = np.where(dropped[col + 1], -1, col)
                pruned = True
    if pruned:
        merged, out_codes = _sorted_groups(out_codes, n_values)
        group = merged[group]
        del merged
        k = len(out_codes)
        sizes = np.bincount(group, minlength=k)
    n_met, n_aux = len(values), len(aux)
    weights = np.empty((k, METRIC0 + PER_METRIC * n_met + PER_AUX * n_aux), dtype=np.float64)
    weights[:, COUNT] = sizes
    del sizes
    # while every tally counts rows, the root's are their counts over the rows (sums exact in any order)
    counted = np.zeros(weights.shape[1])
    counted[COUNT] = n
    whole = n < 2 ** 52
    for m, v in enumerate(values):
        c = METRIC0 + PER_METRIC * m
        defined = ~np.isnan(v)
        weights[:, c + DEFINED] = np.bincount(group, weights=defined, minlength=k)
        if m < len(binary) and binary[m]:  # 0 or 1: its sum counts its ones, its square is itself
            ones = group[v == 1.0]
            weights[:, c + SUM] = np.bincount(ones, minlength=k)
            weights[:, c + SQUARES] = weights[:, c + SUM]
            counted[c + DEFINED] = np.count_nonzero(defined)
            counted[c + SUM] = counted[c + SQUARES] = len(ones)
            continue
        whole = False
        # an undefined row adds 0.0: the sums of the rows defined
        x = np.where(defined, v if vshift[m] == 0.0 else v - vshift[m], 0.0)
        weights[:, c + SUM] = np.bincount(group, weights=x, minlength=k)
        np.multiply(x, x, out=x)
        weights[:, c + SQUARES] = np.bincount(group, weights=x, minlength=k)
    for j, y in enumerate(aux):
        whole = False
        c = METRIC0 + PER_METRIC * n_met + PER_AUX * j
        x = np.where(np.isnan(y), 0.0, y - tshift[j])
        weights[:, c] = np.bincount(group, weights=x, minlength=k)
        np.multiply(x, x, out=x)
        weights[:, c + 1] = np.bincount(group, weights=x, minlength=k)
    return Compressed(out_codes, weights, np.empty(0, np.int64)), counted if whole else _root_tallies(weights, group)


def _root_tallies(weights: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The groups' tallies summed in the order the groups first appear among the rows (the miner's
    sum over the compiled merge's rows), bit for bit; in any order when every tally is a whole
    number, their sums then exact."""
    if np.abs(weights).sum() < 2.0 ** 52 and np.array_equal(weights, np.trunc(weights)):
        return weights.sum(axis=0)
    k = len(weights)
    first = np.full(k, len(group), dtype=np.intp)
    np.minimum.at(first, group, np.arange(len(group), dtype=np.intp))
    at_first = np.zeros(len(group), dtype=bool)
    at_first[first] = True
    return sequential_sum(weights, group[at_first])  # the groups in the order they first appear


def _sorted_groups(codes: np.ndarray, n_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group (the rank of its codes among the distinct rows') and the distinct rows, sorted
    by their codes (C-ordered, in :func:`code_type`). The key of a row is the mixed radix of its codes: counted
    directly when the keys are few beside the rows, else sorted with each row's position beside its
    key, else (keys too wide for that) hashed (pandas' factorize) and only the distinct keys sorted."""
    import pandas as pd

    n, n_attr = codes.shape
    lo = -1 if n and int(codes.min()) < 0 else 0  # codes from lo to each attribute's count of items - 1
    radix = np.asarray(n_values, dtype=np.int64) - lo
    mult = np.ones(n_attr, dtype=np.int64)
    for a in range(n_attr - 2, -1, -1):
        mult[a] = mult[a + 1] * radix[a + 1]
    span = int(mult[0]) * int(radix[0]) if n_attr else 1
    key = _keys(codes, mult, lo)
    if span <= max(DIRECT_PER_ROW * n, DIRECT_MIN):
        present = np.zeros(span, dtype=bool)
        present[key] = True
        distinct = np.flatnonzero(present)
        del present
        rank = np.empty(span, dtype=np.intp)
        rank[distinct] = np.arange(len(distinct), dtype=np.intp)
        group = rank[key]
        del rank, key
    elif max(n - 1, 1).bit_length() + max(span - 1, 1).bit_length() <= SORT_BITS:
        group, distinct = _grouped_by_sorting(key)
        del key
    else:
        seen, uniques = pd.factorize(key)  # groups numbered as first seen
        del key
        order = np.argsort(uniques)
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order), dtype=np.intp)
        group = rank[seen]
        distinct = uniques[order]
        del seen, rank, order
    return group, _decoded(distinct, radix, lo, code_type(n_values))


def _grouped_by_sorting(key: np.ndarray, block: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group (the rank of its key among the distinct keys) and the distinct keys, sorted,
    from one sort of the keys with each row's position in their low bits (no hashing; ``key`` is
    overwritten). The caller checks that a key and a position fit 63 bits."""
    n = len(key)
    bits = max(n - 1, 1).bit_length()
    np.left_shift(key, bits, out=key)
    for start in range(0, n, block):
        key[start:start + block] |= np.arange(start, min(n, start + block), dtype=np.int64)
    key.sort()
    rows = key & ((1 << bits) - 1)
    np.right_shift(key, bits, out=key)
    first = np.empty(n, dtype=bool)  # each group's first row in key order
    first[:1] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    ranks = np.cumsum(first)
    ranks -= 1
    group = np.empty(n, dtype=np.intp)
    group[rows] = ranks
    return group, key[first]


def _keys(codes: np.ndarray, mult: np.ndarray, lo: int, block: int = 1 << 15) -> np.ndarray:
    """Each row's key, sum((codes - lo) * mult), a block of rows at a time (no int64 copy of the codes)."""
    n = len(codes)
    key = np.empty(n, dtype=np.int64)
    shift = lo * int(mult.sum())
    for start in range(0, n, block):
        np.matmul(codes[start:start + block], mult, out=key[start:start + block])
    if shift:
        key -= shift
    return key


def _decoded(keys: np.ndarray, radix: np.ndarray, lo: int, kind: type = np.int32,
             block: int = 1 << 14) -> np.ndarray:
    """The codes whose keys (:func:`_keys`) are ``keys``: one C-ordered row of type ``kind`` per key.
    A block of keys at a time (the rows written stay in cache), in 32 bits: the key is cut into parts
    of the attributes whose radix product fits 31 bits."""
    n_attr = len(radix)
    out: np.ndarray = np.empty((len(keys), n_attr), dtype=kind)
    parts: list[tuple[int, int, int]] = []  # (first attribute, past the last, their radix product)
    end = n_attr
    while end > 0:
        start, product = end - 1, int(radix[end - 1])
        while start > 0 and product * int(radix[start - 1]) < 2 ** 31:
            start -= 1
            product *= int(radix[start])
        parts.append((start, end, product))
        end = start
    radix32 = [np.int32(r) for r in radix]
    for first in range(0, len(keys), block):
        rest = keys[first:first + block]
        rows = out[first:first + block]
        for start, end, product in parts:
            if start:
                high = rest // product
                part = (rest - high * product).astype(np.int32)
                rest = high
            else:
                part = rest.astype(np.int32)
            for a in range(end - 1, start - 1, -1):
                q = part // radix32[a]
                rows[:, a] = part - q * radix32[a]
                part = q
    if lo:
        out += kind(lo)
    return out


def _item_counts(codes: np.ndarray, sizes: np.ndarray, n_values: np.ndarray,
                 block: int = 1 << 14) -> list[np.ndarray]:
    """Per attribute, the rows of each item (index 0: code -1, then each code), ``codes``' rows
    weighted by ``sizes``: one count over every attribute's items, a block of rows at a time."""
    width = np.asarray(n_values, dtype=np.int64) + 1
    starts = np.concatenate([[0], np.cumsum(width)])
    shift = (starts[:-1] + 1).astype(np.intp)
    counts = np.zeros(int(starts[-1]))
    for first in range(0, len(codes), block):
        index = (codes[first:first + block] + shift).ravel()  # in intp: 8-bit codes plus a shift overflow
        counts += np.bincount(index, weights=np.repeat(sizes[first:first + block].astype(np.float64), len(width)),
                              minlength=len(counts))
    return [counts[starts[a]:starts[a + 1]] for a in range(len(width))]


def sequential_sum(weights: np.ndarray, index: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """``weights[index].sum(axis=0)`` with its bits (numpy sums a C-ordered table's rows one after
    the other), a block of rows at a time instead of a copy of the whole table."""
    if weights.shape[1] < 2 or not len(index):  # one column: numpy's sum pairs; a count is exact in any order
        return weights[index].sum(axis=0)
    total = None
    for start in range(0, len(index), block):
        rows = weights[index[start:start + block]]
        if total is not None:
            rows = np.vstack([total[None, :], rows])
        total = rows.sum(axis=0)
    assert total is not None
    return total


def sorted_distinct(codes: np.ndarray) -> bool:
    """Whether the rows of ``codes`` are distinct and sorted by their codes (each row's first differing
    code larger than the row before's): a table the miner's merge would leave as it is."""
    n, n_attr = codes.shape
    if n < 2:
        return True
    if not n_attr:
        return False
    radix = codes.max(axis=0).astype(np.int64) + 2
    if float(np.log2(radix.astype(float)).sum()) >= 62.0:
        return False
    mult = np.ones(n_attr, dtype=np.int64)
    for a in range(n_attr - 2, -1, -1):
        mult[a] = mult[a + 1] * radix[a + 1]
    key = _keys(codes, mult, -1)
    return bool(np.all(key[1:] > key[:-1]))

"""The canonical order of itemsets, and each distinct set of rows once.

An itemset's rows are identified by a fingerprint: the sums of two random 64-bit numbers drawn
per distinct row (two different sets of rows share both with probability 2**-128). The canonical
order sorts itemsets by length, then by their items in attribute order, whatever the engine or
the order of mining; the first itemset of each set of rows in that order is its shortest
description.
"""
from __future__ import annotations

import numpy as np

__all__ = ["fingerprints", "canonical_permutation", "keep_first_of_each_rows"]


def fingerprints(n: int, seed: int = 0x5EED) -> np.ndarray:
    """Two random 64-bit numbers per distinct row: a set of rows is identified by their sums
    (two different sets share both with probability 2**-128)."""
    rng = np.random.default_rng(seed)
    return rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(n, 2), dtype=np.int64,
                        endpoint=True)


def keep_first_of_each_rows(codes: np.ndarray, tallies: np.ndarray, fp: np.ndarray,
                            n_values: np.ndarray) -> np.ndarray:
    """Rows of the canonical order to keep: the first itemset of each set of rows (fingerprint
    and count), i.e. its shortest description, the first in attribute order among equals."""
    order = canonical_permutation(codes, n_values)
    count = np.ascontiguousarray(tallies[order, 0]).view(np.int64)
    fp = fp[order]
    # the first position of each (fingerprint, count) in the canonical order: a stable sort by the
    # key keeps equal keys in their order, so each run of equals starts at its first
    by_key = np.lexsort((count, fp[:, 1], fp[:, 0]))
    k0, k1, c = fp[by_key, 0], fp[by_key, 1], count[by_key]
    starts = np.ones(by_key.size, dtype=bool)
    starts[1:] = (k0[1:] != k0[:-1]) | (k1[1:] != k1[:-1]) | (c[1:] != c[:-1])
    return order[np.sort(by_key[starts])]


def canonical_permutation(codes: np.ndarray, n_values: np.ndarray) -> np.ndarray:
    """Itemsets by length, then by their items in attribute order (a missing item sorts last)."""
    n, a = codes.shape
    length = (codes >= 0).sum(axis=1)
    short = _by_item_sequence(codes, n_values, length)
    if short is not None:
        return short
    digits = np.where(codes >= 0, codes, n_values[None, :]).astype(np.int64)
    radix = np.asarray(n_values, dtype=np.int64) + 1
    if a and float(np.log2(radix.astype(float)).sum() + np.log2(a + 1)) < 62.0:
        key = length.astype(np.int64)
        for j in range(a):
            key = key * radix[j] + digits[:, j]
        return np.argsort(key, kind="stable")
    return np.lexsort(tuple(digits[:, j] for j in range(a - 1, -1, -1)) + (length,))


def _by_item_sequence(codes: np.ndarray, n_values: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """:func:`canonical_permutation` for many attributes and short itemsets: the same order from
    one integer per itemset, its length then its items' numbers (attribute offset plus value, in
    attribute order), when they fit in 62 bits; None when they do not. Between two itemsets of
    one length, the first attribute where they differ either holds an item in only one of them
    (that one's item has the smaller number) or two values (the smaller first): the order of
    the digits of every attribute, missing last. ``length``: each itemset's number of items."""
    n, a = codes.shape
    if n == 0 or a == 0:
        return None
    length = np.asarray(length, dtype=np.int64)
    longest = int(length.max(initial=0))
    offsets = np.concatenate([[0], np.cumsum(np.asarray(n_values, dtype=np.int64))])
    bits = int(offsets[-1] + 1).bit_length()
    if bits * longest + (longest + 1).bit_length() > 62:  # decided before reading the items
        return None
    rows, attrs = np.nonzero(codes >= 0)  # row by row, attributes in order
    items = offsets[attrs] + codes[rows, attrs].astype(np.int64) + 1
    start = np.cumsum(length) - length
    position = np.arange(rows.size, dtype=np.int64) - start[rows]
    key = np.zeros(n, dtype=np.int64)
    np.add.at(key, rows, items << (bits * (longest - 1 - position)))
    key |= length << (bits * longest)
    return np.argsort(key, kind="stable")

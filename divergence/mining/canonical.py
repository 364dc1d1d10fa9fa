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


def keep_first_of_each_rows(codes: np.ndarray, tallies: np.ndarray, fp: np.ndarray, n_values: np.ndarray):
    """Rows of the canonical order to keep: the first itemset of each set of rows (fingerprint
    and count), i.e. its shortest description, the first in attribute order among equals."""
    order = canonical_permutation(codes, n_values)
    key = np.column_stack([fp[order], tallies[order, :1].view(np.int64)])
    _, first = np.unique(key, axis=0, return_index=True)
    return order[np.sort(first)]


def canonical_permutation(codes: np.ndarray, n_values: np.ndarray) -> np.ndarray:
    """Itemsets by length, then by their items in attribute order (a missing item sorts last)."""
    n, a = codes.shape
    length = (codes >= 0).sum(axis=1)
    digits = np.where(codes >= 0, codes, n_values[None, :]).astype(np.int64)
    radix = np.asarray(n_values, dtype=np.int64) + 1
    if a and float(np.log2(radix.astype(float)).sum() + np.log2(a + 1)) < 62.0:
        key = length.astype(np.int64)
        for j in range(a):
            key = key * radix[j] + digits[:, j]
        return np.argsort(key, kind="stable")
    return np.lexsort(tuple(digits[:, j] for j in range(a - 1, -1, -1)) + (length,))

"""Shared by the walk tests (tests/mining, tests/stats): every itemset of a small table above a row
count, enumerated the slow way, and the rows an itemset holds."""
from __future__ import annotations

import numpy as np


def rows_of(itemset, row_codes: np.ndarray) -> np.ndarray:
    """The mask of the rows holding ``itemset`` (a code per attribute, -1: no item on it)."""
    keep = np.ones(row_codes.shape[0], dtype=bool)
    for a, v in enumerate(itemset):
        if v >= 0:
            keep &= row_codes[:, a] == v
    return keep


def lattice_of(row_codes: np.ndarray, n_values, min_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every itemset with at least ``min_count`` rows (items on increasing attributes), the whole
    dataset first, each one's parent the itemset without its last item: (item codes, parent)."""
    n_attr = row_codes.shape[1]
    sets, parent, frontier = [tuple([-1] * n_attr)], [-1], [(0, tuple([-1] * n_attr))]
    while frontier:
        nxt = []
        for at, s in frontier:
            last = max([a for a in range(n_attr) if s[a] >= 0], default=-1)
            for a in range(last + 1, n_attr):
                for v in range(n_values[a]):
                    t = list(s)
                    t[a] = v
                    if rows_of(t, row_codes).sum() >= min_count:
                        sets.append(tuple(t))
                        parent.append(at)
                        nxt.append((len(sets) - 1, tuple(t)))
        frontier = nxt
    return np.array(sets, dtype=np.int64).reshape(len(sets), n_attr), np.array(parent, dtype=np.int64)

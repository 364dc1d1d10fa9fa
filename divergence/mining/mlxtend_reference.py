"""The reference miner: mlxtend's FP-growth on the one-hot rows, then a boolean mask per itemset
for the tallies. Slow (70-90 times the compiled miner on Adult), and what the tests compare
the compiled miner against (``mine(..., engine="mlxtend")``, ``scan(..., engine="mlxtend")``).
"""
from __future__ import annotations

import numpy as np

from ..prepare.compression import Compressed
from .canonical import fingerprints, keep_first_of_each_rows

__all__ = ["mine_mlxtend"]


def mine_mlxtend(codes: np.ndarray, comp: Compressed, n_values: np.ndarray, min_support: float,
                 max_length: int, total: np.ndarray, exhaustive: bool = True) -> dict:
    """Every itemset with support >= ``min_support`` (at most ``max_length`` items) by mlxtend's
    FP-growth on the one-hot rows, tallied with a boolean mask per itemset over ``comp``'s
    distinct rows; unless ``exhaustive``, each distinct set of rows once (the compiled miner's
    rule). The fields of :class:`divergence.mining.mining.Mined`, as a dict."""
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
    # tallies from masks over the compressed rows (exact: a group's rows share their codes); unless
    # exhaustive, each distinct set of rows once, by the compiled miner's rule: fingerprints by masks
    tallies = np.empty((full.shape[0], comp.weights.shape[1]))
    tallies[0] = total
    fp = None if exhaustive else fingerprints(comp.codes.shape[0])
    fps = np.zeros((full.shape[0], 2), np.int64)
    if fp is not None:
        fps[0] = fp.sum(axis=0)
    for i in range(1, full.shape[0]):
        mask = np.ones(comp.codes.shape[0], dtype=bool)
        for j in np.nonzero(full[i] >= 0)[0]:
            mask &= comp.codes[:, j] == full[i, j]
        tallies[i] = comp.weights[mask].sum(axis=0)
        if fp is not None:
            fps[i] = fp[mask].sum(axis=0)
    parent = np.full(full.shape[0], -1, dtype=np.int64)
    if exhaustive:
        return dict(codes=full, parent=parent, tallies=tallies)
    keep = keep_first_of_each_rows(full, tallies, fps, np.asarray(n_values, dtype=np.int64))
    return dict(codes=full[keep], parent=parent[keep], tallies=tallies[keep], fingerprints=fps[keep],
                groups=comp, group_fp=fp)

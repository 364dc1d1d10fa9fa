"""The compiled steps of the lattice's shrinkage (:func:`divergence.stats.shrinkage.shrink_lattice`):
each slice's increment over each of its one-item-shorter subsets and the subset it is nearest (in
standard errors), in one pass over the (slice, subset) pairs, without a temporary per pair; and the
subsets themselves, found from the lattice's parents through a hash table of each parent's children."""
from __future__ import annotations

import numpy as np

from ..kernels.compiled import f8, i8, kernel

__all__ = ["nearest_parents", "hash_children", "children_of_subsets"]


@kernel(i8[::1], i8[:, ::1], f8[::1], f8[::1], f8[::1], f8[:, ::1], i8, f8[::1], f8[::1], i8[::1])
def nearest_parents(rows, parents, n, mean, var, terms, binary, best_d, best_se, best_parent):
    """For each slice ``rows[r]`` and its subsets ``parents[r]`` (-1: not listed): the increment
    ``d = mean_S − f·mean_J − (1−f)·mean_0`` and its standard error ``√(σ²·max(1/n_S − f(2−f)/n_J −
    (1−f)²/N, 0))`` over each subset J (0 and 0 when S has J's rows; ``terms``: each parent's rows of
    :func:`divergence.stats.shrinkage._parent_terms`; σ² J's for a 0/1 outcome, else the larger of
    S's and J's variances), and the subset with the smallest |d|/se (0 when both are 0, infinite when
    only se is; the first of equals; a subset not listed or an increment not finite never): its d,
    se and row into ``best_d``, ``best_se``, ``best_parent`` (NaN, NaN, -1 when there is none). The
    same operations in the same order, on the same numbers, as numpy's on every pair at once."""
    width = parents.shape[1]
    for r in range(rows.shape[0]):
        row = rows[r]
        n_s = n[row]
        mean_s = mean[row]
        var_s = var[row]
        inv_s = 1.0 / n_s if n_s > 0 else np.nan
        best_z = np.inf
        bd = np.nan
        bse = np.nan
        pick = 0
        for j in range(width):
            listed = parents[r, j]
            p = listed if listed > 0 else 0
            d = (mean_s - terms[0, p]) - terms[1, p]
            share = (inv_s - terms[2, p]) - terms[3, p]
            if share <= 0.0:  # np.maximum(share, 0.0): NaN stays NaN, a zero of either sign is 0.0
                share = 0.0
            if binary:
                sigma2 = terms[4, p]
            else:
                var_j = var[p]
                own = var_s if np.isfinite(var_s) else var_j
                sigma2 = np.fmax(own, var_j)
            se = np.sqrt(sigma2 * share)
            if n_s >= terms[5, p]:  # the same rows as the subset: no increment
                d = 0.0
                se = 0.0
            if not (listed >= 0 and np.isfinite(d)):
                z = np.inf
            elif se > 0:
                z = abs(d) / se
            elif d == 0:
                z = 0.0
            else:
                z = np.inf
            if j == 0 or z < best_z:
                best_z = z
                bd = d
                bse = se
                pick = j
        if np.isfinite(best_z):
            best_d[r] = bd
            best_se[r] = bse
            best_parent[r] = parents[r, pick]
        else:
            best_d[r] = np.nan
            best_se[r] = np.nan
            best_parent[r] = -1


@kernel
def _slot(key, bits):
    """The first slot of ``key`` in a table of 2^bits slots (Fibonacci hashing: the top bits of
    key times 2^64/φ)."""
    return np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits))


@kernel(i8[::1], i8[::1], i8, i8[:, ::1])
def hash_children(keys, members, bits, table):
    """A table of ``keys`` (distinct) to ``members`` (at least 0): 2^bits slots of (key, member),
    open addressing with linear probing; a member of -1 where a slot is empty."""
    mask = (1 << bits) - 1
    for e in range(keys.shape[0]):
        h = _slot(keys[e], bits)
        while table[h, 1] >= 0:
            h = (h + 1) & mask
        table[h, 0] = keys[e]
        table[h, 1] = members[e]


@kernel(i8[::1], i8[:, ::1], i8[::1], i8[::1], i8, i8, i8, i8[:, ::1], i8[:, ::1])
def children_of_subsets(pos, prev_subs, last_attr, last_val, columns, width, bits, table, found):
    """For each itemset r (its parent P at row ``pos[r]`` of the shorter itemsets' subsets
    ``prev_subs``, -1 when not there) and each j but the last of ``found``'s columns: the child, by
    r's last item (attribute ``last_attr[r]``, code ``last_val[r]``), of P's subset without its j-th
    item, from the table of :func:`hash_children` (keys ``(parent·columns + attribute)·width +
    code``); -1 where that subset or its child is not listed. The other entries are left as they are."""
    mask = (1 << bits) - 1
    for r in range(pos.shape[0]):
        at = pos[r]
        for j in range(found.shape[1] - 1):
            member = -1
            sub = prev_subs[at, j] if at >= 0 else -1
            if sub >= 0:
                want = (sub * columns + last_attr[r]) * width + last_val[r]
                h = _slot(want, bits)
                while table[h, 1] >= 0:
                    if table[h, 0] == want:
                        member = table[h, 1]
                        break
                    h = (h + 1) & mask
            found[r, j] = member

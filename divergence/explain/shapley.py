"""Explaining a slice: Shapley contributions of its items, global item divergence,
corrective items, redundancy pruning, and bootstrap intervals on contributions.

The definitions are those of the divergence paper (Pastor, de Alfaro, Baralis,
SIGMOD 2021) as implemented by DivExplorer 0.2.6, computed from a mined
:class:`~divergence.table.SliceTable`: every subset of a mined itemset is mined, so
every term is read from the table and nothing is re-mined (the bootstrap re-tallies
only the slice's own subsets on resampled rows).

Speed: every itemset gets an exact integer key (mixed radix over the attributes), a
subset's key is its itemset's key minus the dropped items' parts, and all subset
keys of all itemsets of one length are found with one sorted lookup; the Shapley
values of all itemsets of one length are then one matrix product.
"""
from __future__ import annotations

import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..prepare.tallies import metric_tallies
from ..stats.stats import beta_t
from ..table import SliceTable

__all__ = ["shapley_matrix", "item_contributions", "individual_divergence", "global_divergence",
           "corrective_items", "redundant_itemsets", "prune_redundant", "subset_indices"]


# ----------------------------------------------------------------------------- lattice index
@dataclass(frozen=True)
class _Lattice:
    """Exact integer keys of every itemset of a table, sorted for lookups."""

    strides: np.ndarray | None  # int64 per attribute; None when keys would overflow
    sorted_keys: np.ndarray
    order: np.ndarray
    #: per length k: (rows of that length, their attribute positions n_k x k)
    groups: dict


_LATTICES: weakref.WeakKeyDictionary[SliceTable, _Lattice] = weakref.WeakKeyDictionary()


def _lattice(table: SliceTable) -> _Lattice:
    cached = _LATTICES.get(table)
    if cached is not None:
        return cached
    codes = table.codes
    n_attr = codes.shape[1]
    radix = np.array([b.n_items + 1 for b in table.bins], dtype=np.int64)
    strides = None
    keys = np.zeros(0, dtype=np.int64)
    order = np.zeros(0, dtype=np.int64)
    if n_attr == 0 or float(np.log2(radix.astype(float)).sum()) < 62.0:
        strides = np.ones(n_attr, dtype=np.int64)
        for a in range(n_attr - 2, -1, -1):
            strides[a] = strides[a + 1] * radix[a + 1]
        key = (codes.astype(np.int64) + 1) @ strides if n_attr else np.zeros(len(table), np.int64)
        order = np.argsort(key, kind="stable")
        keys = key[order]
    lengths = table.lengths
    groups = {}
    for k in range(1, int(lengths.max(initial=0)) + 1):
        rows = np.nonzero(lengths == k)[0]
        if rows.size == 0:
            continue
        present = codes[rows] >= 0
        # attribute positions of each row's items, in attribute order
        pos = np.nonzero(present)[1].reshape(rows.size, k)
        groups[k] = (rows, pos)
    lat = _Lattice(strides=strides, sorted_keys=keys, order=order, groups=groups)
    _LATTICES[table] = lat
    return lat


def _lookup_keys(lat: _Lattice, keys: np.ndarray) -> np.ndarray:
    """Row index of each key (-1 if not mined)."""
    pos = np.searchsorted(lat.sorted_keys, keys)
    pos = np.minimum(pos, lat.sorted_keys.size - 1)
    found = lat.sorted_keys[pos] == keys
    return np.where(found, lat.order[pos], -1)


def subset_indices(table: SliceTable, rows: np.ndarray, pos: np.ndarray,
                    masks: np.ndarray) -> np.ndarray:
    """Row index of the subsets of ``rows`` that keep the positions set in each bit mask.

    ``pos`` (n x k) are the rows' attribute positions; ``masks`` (m,) are k-bit masks
    (bit j keeps the item at position j). Returns an n x m matrix of row indices.
    """
    lat = _lattice(table)
    k = pos.shape[1]
    bits = ((masks[None, :] >> np.arange(k)[:, None]) & 1).astype(np.int64)  # k x m
    codes = table.codes[rows[:, None], pos]
    if lat.strides is not None:
        parts = (codes.astype(np.int64) + 1) * lat.strides[pos]  # n x k
        idx = _lookup_keys(lat, parts @ bits)
    else:  # too many attribute values for exact integer keys: the table's hashed lookup
        idx = np.empty((rows.size, masks.size), dtype=np.int64)
        for c, m in enumerate(masks):
            sub = np.full((rows.size, table.codes.shape[1]), -1, dtype=np.int32)
            keep = bits[:, c].astype(bool)
            sub[np.arange(rows.size)[:, None], pos[:, keep]] = codes[:, keep]
            idx[:, c] = table.index_of(sub)
    if idx.size and idx.min() < 0:
        raise DivergenceInputError(
            "A subset of a mined itemset is missing from the table: explanations need the "
            "complete mined table (every subset of every itemset), not a filtered one."
        )
    return idx


def _shapley_weights(k: int) -> np.ndarray:
    """W (2^k x k) such that (divergence of every subset, by bit mask) @ W = Shapley values."""
    m = np.arange(2 ** k)
    size = np.array([bin(x).count("1") for x in m])
    w = np.array([math.factorial(s) * math.factorial(k - s - 1) / math.factorial(k)
                  for s in range(k)] + [0.0])
    has = ((m[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    # J∪{α} = m (α in m) weighs w(|m|-1); J = m (α not in m) enters with minus w(|m|)
    return np.where(has, w[np.maximum(size - 1, 0)][:, None], -w[np.minimum(size, k)][:, None])


def _divergence(table: SliceTable, metric: str | None) -> np.ndarray:
    return np.asarray(table.statistics(metric).divergence, dtype=np.float64)


def _item_index(table: SliceTable) -> tuple[np.ndarray, list[str]]:
    """Offset of each attribute's items in a flat item numbering, and the item labels."""
    sizes = [b.n_items for b in table.bins]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    labels = [lab for a in range(len(sizes)) for lab in table.item_labels[a]]
    return offsets, labels


# ----------------------------------------------------------------------------- local Shapley
def shapley_matrix(table: SliceTable, *, metric: str | None = None) -> np.ndarray:
    """Shapley contribution of every item of every mined itemset, all at once.

    Returns an array shaped like ``table.codes``: entry ``[i, a]`` is the contribution
    ``Δ(α|I)`` of itemset i's item on attribute a (NaN where it has none), with
    ``Δ(α|I) = Σ_{J ⊆ I∖{α}} |J|!(|I|−|J|−1)!/|I|! · [Δ(J∪{α}) − Δ(J)]``. Each row's
    contributions sum to its divergence. An itemset whose outcome is undefined (no
    defined rows for the metric) has no divergence to share: its row is all NaN.
    """
    div = _divergence(table, metric)
    out = np.full(table.codes.shape, np.nan)
    for k, (rows, pos) in _lattice(table).groups.items():
        masks = np.arange(2 ** k, dtype=np.int64)
        d = div[subset_indices(table, rows, pos, masks)]
        d[:, 0] = 0.0  # Δ(∅) = 0 by definition
        out[rows[:, None], pos] = d @ _shapley_weights(k)
    return out


def item_contributions(
    table: SliceTable,
    itemset: str | Iterable[str],
    *,
    metric: str | None = None,
    n_boot: int = 0,
    seed: int | None = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The Shapley contribution of each item of one slice to its divergence.

    Returns a DataFrame with columns ``item`` and ``contribution``, sorted by
    contribution (largest first); the contributions sum to the slice's divergence.
    ``attrs`` holds ``itemset``, ``metric``, ``divergence``, ``support`` and ``count``.

    With ``n_boot > 0`` it adds ``contribution_low`` and ``contribution_high``: a
    percentile bootstrap interval at ``level``. Each of the ``n_boot`` replicates
    resamples all rows with replacement (seeded by ``seed``), re-tallies the slice's
    subsets (and only those) on the resampled rows and recomputes the contributions;
    an interval that excludes 0 says the item's share is distinguishable from none.
    ``attrs`` then also holds ``divergence_low``, ``divergence_high`` and ``n_boot_used``
    (replicates where the slice had a defined outcome). Needs a table that kept its rows.
    """
    idx = table.lookup(itemset)
    m = table.metric(metric)
    row = table.codes[idx]
    pos = np.nonzero(row >= 0)[0]
    k = pos.size
    labels = [table.item_labels[a][row[a]] for a in pos]
    div = _divergence(table, m.name)
    if k:
        d = div[subset_indices(table, np.array([idx]), pos[None, :], np.arange(2 ** k))][0]
        d[0] = 0.0
        phi = d @ _shapley_weights(k)
    else:
        phi = np.zeros(0)
    frame = pd.DataFrame({"item": labels, "contribution": phi})
    attrs = dict(itemset=table.itemsets[idx], metric=m.name, divergence=float(div[idx]),
                 support=float(table.columns["support"][idx]), count=int(table.columns["count"][idx]))
    if n_boot:
        if int(n_boot) != n_boot or n_boot < 0:
            raise DivergenceInputError(f"n_boot must be a non-negative integer; got {n_boot!r}.")
        if not 0.0 < level < 1.0:
            raise DivergenceInputError(f"level must be in (0, 1); got {level!r}.")
        lo, hi, dlo, dhi, used = _bootstrap(table, m.name, pos, row[pos], int(n_boot), seed, level)
        frame["contribution_low"] = lo
        frame["contribution_high"] = hi
        attrs.update(divergence_low=dlo, divergence_high=dhi, n_boot=int(n_boot), n_boot_used=used,
                     level=level)
    frame = frame.sort_values("contribution", ascending=False, kind="stable").reset_index(drop=True)
    frame.attrs.update(attrs)
    return frame


def _bootstrap(table: SliceTable, metric: str, pos: np.ndarray, codes: np.ndarray, n_boot: int,
               seed: int | None, level: float):
    """Percentile intervals of the contributions (and the divergence) over row resamples."""
    groups, counts = _slice_groups(table, metric, pos, codes)
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    # resampling n rows with replacement = multinomial counts over groups of identical rows
    weights = rng.multinomial(n, counts / n, size=n_boot).astype(np.float64)  # B x G
    d = _subset_divergences(groups, weights, pos.size)
    phi = d @ _shapley_weights(pos.size)  # B x k
    ok = ~np.isnan(d[:, -1])
    q = [50 * (1 - level), 50 * (1 + level)]
    if ok.any():
        lo, hi = np.percentile(phi[ok], q, axis=0)
        dlo, dhi = np.percentile(d[ok, -1], q)
    else:
        lo = hi = np.full(pos.size, np.nan)
        dlo = dhi = np.nan
    return lo, hi, float(dlo), float(dhi), int(ok.sum())


def _slice_groups(table: SliceTable, metric: str, pos: np.ndarray, codes: np.ndarray):
    """The rows grouped by (items of the slice they match as a bit pattern, defined, value).

    Returns (G x 3 array of pattern, defined flag, value; row count of each group).
    """
    values = np.asarray(table.outcome(metric).values, dtype=np.float64)
    kept = table.kept_rows
    assert kept is not None  # table.outcome() above refused a table that kept no rows
    row_codes = kept.codes
    pattern = np.zeros(values.size, dtype=np.int64)
    for j, (a, c) in enumerate(zip(pos, codes)):
        pattern |= (row_codes[:, a] == c).astype(np.int64) << j
    defined = ~np.isnan(values)
    key = np.column_stack([pattern.astype(np.float64), defined.astype(np.float64),
                           np.where(defined, values, 0.0)])
    groups, counts = np.unique(key, axis=0, return_counts=True)
    return groups, counts


def _subset_divergences(groups: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Divergence of every subset (by bit mask) of the slice, per row of group weights (B x 2^k)."""
    onehot = np.zeros((groups.shape[0], 2 ** k))
    onehot[np.arange(groups.shape[0]), groups[:, 0].astype(np.int64)] = 1.0
    n_def = _superset_sum(weights @ (onehot * groups[:, 1:2]), k)
    s_def = _superset_sum(weights @ (onehot * (groups[:, 1:2] * groups[:, 2:3])), k)
    # (a row with pattern p belongs to every subset J ⊆ p: hence the superset sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_def > 0, s_def / np.where(n_def > 0, n_def, 1.0), np.nan)
    return mean - mean[:, :1]


def _superset_sum(t: np.ndarray, k: int) -> np.ndarray:
    """For each bit mask m (last axis): the sum of t over the masks that contain m."""
    b = t.shape[0]
    t = t.reshape((b,) + (2,) * k).copy()
    for axis in range(1, k + 1):
        idx0: list[slice | int] = [slice(None)] * (k + 1)
        idx1: list[slice | int] = [slice(None)] * (k + 1)
        idx0[axis], idx1[axis] = 0, 1
        t[tuple(idx0)] += t[tuple(idx1)]
    return t.reshape(b, 2 ** k)


# ----------------------------------------------------------------------------- item values
def individual_divergence(table: SliceTable, *, metric: str | None = None) -> pd.DataFrame:
    """Each frequent item's divergence on its own (its 1-item slice), largest first.

    Columns ``item``, ``individual``, ``support``; an item without a defined outcome has
    an undefined (NaN) value and sorts last.
    """
    div = _divergence(table, metric)
    rows = np.nonzero(table.lengths == 1)[0]
    f = pd.DataFrame({"item": table.itemsets[rows].astype(str), "individual": div[rows],
                      "support": np.asarray(table.columns["support"])[rows]})
    return f.sort_values(["individual", "support"], ascending=False, na_position="last",
                         kind="stable").reset_index(drop=True)


def global_divergence(table: SliceTable, *, metric: str | None = None) -> pd.DataFrame:
    """Each frequent item's global Shapley value over the whole mined lattice.

    DivExplorer's global item divergence: for item α on attribute a, with A the
    attributes that have frequent items and m_b the number of frequent items of b,
    ``Δg(α) = Σ_J |B|!(|A|−|B|−1)! / (|A|! · Π_{b ∈ B∪{a}} m_b) · [Δ(J∪{α}) − Δ(J)]``
    over the mined itemsets J (the empty one included) whose attributes B exclude a and
    for which J∪{α} is mined too.

    Undefined outcomes: an itemset with no defined row for the metric has no divergence.
    A term whose divergence is undefined (J∪{α} undefined; J undefined implies it) is
    left out, exactly as a J∪{α} below the support threshold is: the marginal effect
    of α there is unknown, and counting it as 0 keeps every value a number. The weights
    are not renormalized (nor are they in DivExplorer for unmined itemsets), and m_b
    still counts every frequent item. An item with no defined outcome at all gets 0.

    Returns a DataFrame with columns ``item``, ``global`` and ``individual`` (the
    item's own divergence), sorted by ``global`` (largest first).
    """
    div = _divergence(table, metric)
    lat = _lattice(table)
    offsets, labels = _item_index(table)
    singles = np.nonzero(table.lengths == 1)[0]
    single_attr = np.argmax(table.codes[singles] >= 0, axis=1) if singles.size else np.zeros(0, int)
    m_b = np.bincount(single_attr, minlength=table.codes.shape[1]).astype(np.float64)
    n_a = int((m_b > 0).sum())
    total = np.zeros(len(labels))
    for k, (rows, pos) in lat.groups.items():
        codes = table.codes[rows[:, None], pos]
        # weight of K = J∪{α}: |B|!(|A|-|B|-1)!/|A|! with |B| = k-1, over Π_{b∈K} m_b
        w = math.factorial(k - 1) * math.factorial(n_a - k) / math.factorial(n_a)
        w = w / np.prod(m_b[pos], axis=1)
        for j in range(k):
            mask = np.array([(2 ** k - 1) & ~(1 << j)], dtype=np.int64)
            sub = subset_indices(table, rows, pos, mask)[:, 0]
            term = w * (div[rows] - div[sub])
            term = np.where(np.isnan(term), 0.0, term)
            total += np.bincount(offsets[pos[:, j]] + codes[:, j], weights=term, minlength=len(labels))
    item_ids = offsets[single_attr] + table.codes[singles, single_attr] if singles.size else singles
    f = pd.DataFrame({"item": [labels[i] for i in item_ids], "global": total[item_ids],
                      "individual": div[singles]})
    return f.sort_values(["global", "individual"], ascending=False, na_position="last",
                         kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------- corrective items
def corrective_items(
    table: SliceTable,
    *,
    metric: str | None = None,
    min_reduction: float = 0.0,
    min_t: float | None = None,
) -> pd.DataFrame:
    """Pairs (itemset I, item α) where adding α to I brings the divergence closer to 0.

    Listed where ``reduction = |Δ(I)| − |Δ(I∪{α})|`` is positive and at least
    ``min_reduction``; with ``min_t``, only pairs whose ``t`` (the paper's statistic
    between the two slices: Beta posteriors for a 0/1 outcome, Welch otherwise) is at
    least ``min_t`` (DivExplorer's notebooks use 2). Both slices must be mined and have a
    defined outcome. Columns: ``itemset``, ``item``, ``itemset_with_item``,
    ``divergence``, ``divergence_with_item``, ``reduction``, ``t``,
    ``count_with_item``; sorted by reduction, largest first.
    """
    m = table.metric(metric)
    k_metric = table.metric_names.index(m.name)
    div = _divergence(table, m.name)
    lat = _lattice(table)
    found_k, found_i, found_j = [], [], []
    for k, (rows, pos) in lat.groups.items():
        if k < 2:
            continue
        for j in range(k):
            mask = np.array([(2 ** k - 1) & ~(1 << j)], dtype=np.int64)
            sub = subset_indices(table, rows, pos, mask)[:, 0]
            with np.errstate(invalid="ignore"):
                red = np.abs(div[sub]) - np.abs(div[rows])
                keep = (red > 0) & (red >= min_reduction)
            found_k.append(rows[keep])
            found_i.append(sub[keep])
            found_j.append(pos[keep, j])
    kk = np.concatenate(found_k) if found_k else np.zeros(0, np.int64)
    ii = np.concatenate(found_i) if found_i else np.zeros(0, np.int64)
    aa = np.concatenate(found_j) if found_j else np.zeros(0, np.int64)
    tal = table.tallies
    n, s, q = metric_tallies(tal, k_metric)
    if m.binary:
        ones = np.rint(s)
        t = beta_t(ones[kk], n[kk] - ones[kk], ones[ii], n[ii] - ones[ii])
    else:
        t = _welch_pair(n[kk], s[kk], q[kk], n[ii], s[ii], q[ii])
    f = pd.DataFrame({
        "itemset": table.itemsets[ii].astype(str),
        "item": [table.item_labels[a][table.codes[r, a]] for r, a in zip(kk, aa)],
        "itemset_with_item": table.itemsets[kk].astype(str),
        "divergence": div[ii],
        "divergence_with_item": div[kk],
        "reduction": np.abs(div[ii]) - np.abs(div[kk]),
        "t": t,
        "count_with_item": np.asarray(table.columns["count"])[kk],
    })
    if min_t is not None:
        f = f[f["t"] >= min_t]
    return f.sort_values(["reduction", "count_with_item"], ascending=False,
                         kind="stable").reset_index(drop=True)


def _welch_pair(n1, s1, q1, n2, s2, q2) -> np.ndarray:
    """Welch's statistic (population variances) between two slices, from shifted tallies."""
    with np.errstate(invalid="ignore", divide="ignore"):
        m1, m2 = s1 / n1, s2 / n2
        v1, v2 = np.maximum(q1 / n1 - m1 ** 2, 0.0), np.maximum(q2 / n2 - m2 ** 2, 0.0)
        diff = np.abs(m1 - m2)
        den = np.sqrt(v1 / n1 + v2 / n2)
        t = np.where(den > 0, diff / np.where(den > 0, den, 1.0), np.where(diff > 0, np.inf, 0.0))
    return np.where((n1 > 0) & (n2 > 0), t, np.nan)


# ----------------------------------------------------------------------------- redundancy
def redundant_itemsets(table: SliceTable, eps: float, *,
                       metric: str | Iterable[str] | None = None) -> np.ndarray:
    """Boolean mask: itemset I is redundant when, for some item α of I,
    ``|Δ(I) − Δ(I∖{α})| <= eps`` (the paper's and DivExplorer's rule; I∖{α} may be the
    whole dataset, Δ = 0). The shorter itemset already describes the effect.

    With several metrics (``metric`` None means all of the table's), an itemset is
    redundant only when it is redundant for every one of them. An itemset whose
    divergence is undefined is never redundant (there is nothing to compare).
    """
    eps = _check_eps(eps)
    names = _metric_list(table, metric)
    out = np.ones(len(table), dtype=bool)
    out[0] = False
    lat = _lattice(table)
    for name in names:
        div = _divergence(table, name)
        red = np.zeros(len(table), dtype=bool)
        for k, (rows, pos) in lat.groups.items():
            masks = np.array([(2 ** k - 1) & ~(1 << j) for j in range(k)], dtype=np.int64)
            sub = subset_indices(table, rows, pos, masks)  # n_k x k
            with np.errstate(invalid="ignore"):
                red[rows] = np.any(np.abs(div[rows][:, None] - div[sub]) <= eps, axis=1)
        out &= red
    return out


def prune_redundant(table: SliceTable, eps: float | None = None, *,
                    metric: str | Iterable[str] | None = None,
                    min_t: float | None = None) -> pd.DataFrame:
    """The table's rows less the redundant itemsets (see :func:`redundant_itemsets`),
    so each effect shows in its shortest description; optionally only slices with
    ``t >= min_t`` (for at least one of the metrics). The whole dataset (row 0) is
    always kept. Row order and index are the table's (the index is the row index).
    """
    keep = np.ones(len(table), dtype=bool)
    if eps is not None:
        keep &= ~redundant_itemsets(table, eps, metric=metric)
    if min_t is not None:
        try:
            min_t = float(min_t)
        except (TypeError, ValueError):
            raise DivergenceInputError(f"min_t must be a number; got {min_t!r}.") from None
        strong = np.zeros(len(table), dtype=bool)
        for name in _metric_list(table, metric):
            with np.errstate(invalid="ignore"):
                strong |= np.asarray(table.statistics(name).t, dtype=np.float64) >= min_t
        keep &= strong
    keep[0] = True
    return table.frame[keep]


def _check_eps(eps: object) -> float:
    try:
        value = float(eps)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DivergenceInputError(f"The redundancy threshold must be a number; got {eps!r}.") from None
    if not value >= 0.0:
        raise DivergenceInputError(f"The redundancy threshold must be >= 0; got {eps!r}.")
    return value


def _metric_list(table: SliceTable, metric: str | Iterable[str] | None) -> list[str]:
    if metric is None:
        return table.metric_names
    if isinstance(metric, str):
        return [table.metric(metric).name]
    return [table.metric(m).name for m in metric]

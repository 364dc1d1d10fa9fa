"""Mining: every itemset with support >= s, with its outcome tallies.

Rows carry their tallies as weights (:mod:`divergence.prepare.tallies`). Identical discretized rows are
merged first (:mod:`divergence.prepare.compression`), so the work depends on the number of distinct
rows, not on the number of rows.

The default engine ("fast") is the compiled depth-first projection miner
(:mod:`divergence.mining.mining_kernel`, driven by :mod:`divergence.mining.mining_driver` within the budget of
:mod:`divergence.budget`). The "mlxtend" engine runs mlxtend's FP-growth on the one-hot table
and tallies each itemset with a boolean mask (:mod:`divergence.mining.mlxtend_reference`): slow, and
the reference in tests.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..budget import (
    MAX_SLICES,
    MAX_WORK,
    MEMORY_LIMIT,
    TIME_LIMIT,
    Budget,
    Overflow,
    ProgressCallback,
    budget_message,
    slice_bytes,
)
from ..errors import DivergenceBudgetError, DivergenceInputError
from ..prepare.compression import Compressed, compress, compress_outcomes
from ..prepare.freed_memory import trim_heap
from ..prepare.grouping import sorted_distinct
from ..settings import check, min_count_for
from ..vocabulary import ENGINES
from .canonical import canonical_permutation, fingerprints, keep_first_of_each_rows
from .mining_driver import Root, run
from .mining_kernel import expand_codes, root_fingerprints, root_fingerprints8, root_tallies, root_tallies8
from .shorter import SPECULATE_AFTER, ShorterLengths, can_speculate

__all__ = ["Compressed", "Mined", "Budget", "compress", "compress_outcomes", "mine", "code_type", "ENGINES",
           "share_for_mlxtend", "MAX_SLICES", "MAX_WORK", "TIME_LIMIT", "MEMORY_LIMIT", "slice_bytes"]

#: the share of the time limit the whole request may use before the miner falls back to
#: complete shorter lengths in the rest
FIRST_SHARE = 0.5


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
    #: what cut it: "slices" or "work" (the same table everywhere), "time" (the safety net: it
    #: depends on the machine and its load), None when nothing did
    cut: str | None = None
    #: units of mining work the request took
    work: int = 0


def share_for_mlxtend(min_count: int, n_rows: int) -> float:
    """A share that makes mlxtend's FP-growth keep exactly the itemsets of at least ``min_count``
    rows (its ``ceil(s·n)`` and ``count / n >= s`` both land on ``min_count``)."""
    return min(1.0, (min_count - 0.5) / n_rows) if min_count <= n_rows else 1.0


def mine(codes: np.ndarray, weights: np.ndarray, n_values: np.ndarray, *, min_support: float,
         max_length: int | None = None, engine: str = "fast", exhaustive: bool = False,
         max_slices: int = MAX_SLICES, time_limit: float | None = TIME_LIMIT,
         progress: ProgressCallback | None = None,
         attribute_names: Sequence[str] | None = None, max_work: int | None = MAX_WORK,
         started: float | None = None, total: np.ndarray | None = None) -> Mined:
    """Every itemset with support >= ``min_support`` (at most ``max_length`` items), with tallies.

    ``codes`` (rows x attributes) holds each row's item code per attribute, ``weights``
    (rows x tallies) the per-row tallies, column 0 the row count (1 per row).

    Unless ``exhaustive``, each distinct set of rows is mined once and described by its
    shortest itemset (the first in attribute order among equally short ones); every subset
    of a described itemset is described too (so Shapley values and pruning need nothing else).
    ``exhaustive=True`` lists every itemset, as DivExplorer and mlxtend do.

    The budget: more than ``max_slices`` itemsets or ``max_work`` units of mining work (both
    counted: the same data gives the same result on any machine, at any load), or, as a safety
    net, ``time_limit`` seconds, and the result is complete up to the longest length that fits
    (``Mined.note`` says so, and says when the time limit cut it), or, when not even single items
    fit, :class:`DivergenceBudgetError`. ``total``: the root's tallies, when the rows were reordered
    after they came (:mod:`divergence.prepare.grouping`); default their sum. ``progress`` is called with a dict
    (``stage``, ``slices``, ``length``, ``fraction``) every quarter second of mining.
    """
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    max_slices, time_limit, max_work = (check(k, v) for k, v in (("max_slices", max_slices), ("time_limit", time_limit),
                                                                 ("max_work", max_work)))
    n_rows = int(round(weights[:, 0].sum())) if weights.size else 0
    n_attr = codes.shape[1]
    max_length = n_attr if max_length is None else min(int(max_length), n_attr)
    total = weights.sum(axis=0) if total is None else np.asarray(total, dtype=np.float64)
    min_count = min_count_for(min_support, n_rows)
    if n_rows and min_count > n_rows:
        asked = f"{min_count:,}" if min_count < 10 ** 15 else f"{float(min_count):.3g}"
        raise DivergenceInputError(f"min_support {min_support:g} asks for {asked} rows, more than the data's "
                                   f"{n_rows:,}: no slice can reach it.")
    # an item below the threshold can be in no frequent itemset: drop it before compressing
    # (codes may already be -1 where an item was dropped upstream); copied only when one is
    pruned = codes
    for a in range(n_attr):
        counts = np.bincount(codes[:, a] + 1, weights=weights[:, 0], minlength=int(n_values[a]) + 1)[1:]
        frequent = np.append(counts >= min_count, False)  # index -1 -> False
        column = np.where(frequent[codes[:, a]], codes[:, a], -1)
        if not np.array_equal(column, codes[:, a]):
            if pruned is codes:
                pruned = codes.copy()
            pruned[:, a] = column
    if pruned is codes and sorted_distinct(codes):  # merged and sorted already (divergence.prepare.grouping)
        comp = Compressed(codes, weights, np.empty(0, np.int64))  # each row its own group (no index of 8 B a row)
    else:
        comp = compress(pruned, weights)
    rows_for_mlxtend = pruned if engine == "mlxtend" else None
    del pruned  # a pruned copy is not kept beside the merged rows while mining
    budget = Budget(max_slices=max_slices, time_limit=time_limit, progress=progress, max_work=max_work)
    if started is not None:  # the time limit counts from the scan's start: the attribute screen spent some
        budget.start, budget.timed = started, "screening and mining"
    budget.report(0, None, 0.0, force=True)
    if engine == "mlxtend":
        from .mlxtend_reference import mine_mlxtend

        mined = Mined(**mine_mlxtend(_held(rows_for_mlxtend), comp, n_values, share_for_mlxtend(min_count, n_rows), max_length, total, exhaustive))
        if len(mined.codes) - 1 > max_slices:
            raise DivergenceBudgetError(
                f"The scan gives {len(mined.codes) - 1:,} slices, more than the budget of {max_slices:,}: raise "
                "the support, limit items per slice (max_length) or drop attributes."
            )
        return mined
    if max_length == 0:
        return Mined(np.full((1, n_attr), -1, np.int32), np.array([-1]), total[None, :].copy())
    trim_heap()  # the preparation's and the pruning's freed columns given back before the miner's tables
    mined = _mine_fast(comp, np.asarray(n_values), min_count, max_length, total, n_rows, exhaustive, budget,
                       attribute_names)
    budget.report(len(mined.codes) - 1, mined.complete_length, 1.0, force=True)
    return dataclasses.replace(mined, work=budget.work)


def _mine_fast(comp: Compressed, n_values: np.ndarray, min_count: int, max_length: int, total: np.ndarray,
               n_rows: float, exhaustive: bool, budget: Budget, names: Sequence[str] | None = None) -> Mined:
    """Every itemset up to ``max_length`` items (unless ``exhaustive``: each distinct set of rows
    once), within the budget: complete up to the longest length that fits, said in ``note``."""
    n_attr = comp.codes.shape[1]
    n_values = n_values.astype(np.int64)
    groups = comp
    comp, fps, group_fp = _reduce_root(comp, n_values, min_count, n_rows, exhaustive)
    codes: np.ndarray = np.ascontiguousarray(comp.codes, dtype=code_type(comp.codes))
    weights = np.ascontiguousarray(comp.weights, dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    acc = _root_tallies(codes, weights, int(offsets[-1]), offsets)
    frequent = np.nonzero(acc[:, 0] >= min_count)[0] if len(acc) else np.empty(0, np.int64)
    item_attr = np.repeat(np.arange(n_attr), n_values)
    f_attr = item_attr[frequent].astype(np.int32)
    f_val = (frequent - offsets[f_attr]).astype(np.int32)
    item_hash = fingerprints(max(int(offsets[-1]), 1), seed=0x17E5)[:, 0].copy()
    item_fp = _root_fingerprints(codes, fps, int(offsets[-1]), offsets)[frequent, :fps.shape[1]] if fps.shape[1] \
        else np.zeros((len(frequent), 0), np.int64)
    root = Root(f_attr, f_val, acc[frequent], np.ascontiguousarray(item_fp), item_hash[frequent].copy())
    cap = budget.max_slices + 1

    all_expand = np.nonzero(f_attr < n_attr - 1)[0].astype(np.int64) + 1

    def attempt(k: int, on_check=None):
        expand = all_expand if k > 1 else np.empty(0, np.int64)
        if len(frequent) > budget.max_slices:
            raise Overflow("slices", len(frequent), 1)
        return run(codes, weights, fps, n_values, float(min_count), k, exhaustive, root, item_hash, total, expand,
                   cap, budget, on_check)

    # a large request's shorter lengths are mined on another core while it runs (divergence.mining.shorter)
    shorter = None
    if can_speculate(budget.max_work, max_length):
        shorter = ShorterLengths(dict(codes=codes, weights=weights, fps=fps, n_values=n_values, item_hash=item_hash,
                                      total=total, expand=all_expand, root_attr=root.attr, root_val=root.val,
                                      root_tallies=root.tallies, root_fp=root.fp, root_ih=root.ih),
                                 min_count=float(min_count), exhaustive=exhaustive, cap=cap, max_length=max_length,
                                 budget=budget)

    def start_shorter() -> None:
        if (shorter is not None and not shorter.started and budget.max_work is not None  # (can_speculate: it is)
                and budget.work >= SPECULATE_AFTER * budget.max_work):
            shorter.start()

    try:  # the whole request, in a share of the time
        budget.share = FIRST_SHARE
        parts = attempt(max_length, start_shorter)
        note = None
        complete = None
    except Overflow as exc:
        first = exc  # kept past the except block for the note
        parts, complete = None, 0
        budget.share = 1.0  # the shorter lengths get the rest of the time
        # every output of the whole request up to k items is an output of a run limited to k:
        # a length whose count alone passes the budget is not tried
        known = np.cumsum(first.by_length) if first.by_length is not None else None
        decided = shorter.decide(first, known) if shorter is not None and shorter.started else None
        if decided is not None:
            parts, complete, first = decided
        else:
            for k in range(1, max_length):
                if known is not None and k < len(known) and known[k] > cap:
                    break
                try:
                    parts = attempt(k)
                    complete = k
                except Overflow as later:
                    if later.why == "time":  # the result then depends on the clock: say so
                        first = Overflow("time", first.slices, first.length, first.by_length)
                    break
        if parts is None:
            raise DivergenceBudgetError(budget_message(first, None, budget, n_values, acc, names)) from None
    finally:
        if shorter is not None:
            shorter.close()
    parent, attr, val, tallies, fp, dead = parts
    full = expand_codes(parent, attr, val, n_attr)
    if complete is not None:
        note = budget_message(first, complete, budget, n_values, acc, names, full)
    mined_fp = None
    if exhaustive:
        keep = canonical_permutation(full, n_values)
    else:
        keep = keep_first_of_each_rows(full, tallies, fp, n_values)
        mined_fp = fp[keep]
    # the canonical order (by length, then items)
    remap = np.full(len(parent), -1, np.int64)
    remap[keep] = np.arange(len(keep))
    parent = np.where(parent[keep] >= 0, remap[np.maximum(parent[keep], 0)], -1)
    full, tallies = full[keep], tallies[keep]
    return Mined(codes=full, parent=parent, tallies=tallies, fingerprints=mined_fp,
                 groups=None if exhaustive else groups, group_fp=None if exhaustive else group_fp,
                 complete_length=complete, note=note, cut=None if complete is None else first.why)


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
    codes = np.ascontiguousarray(codes, dtype=code_type(codes))
    fp = fingerprints(codes.shape[0])
    acc = _root_tallies(codes, np.ascontiguousarray(comp.weights, dtype=np.float64), int(offsets[-1]), offsets)
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


def code_type(codes: np.ndarray) -> type:
    """The miner's type for ``codes``: 8 bits when they come so (every attribute of at most 127 items,
    :func:`divergence.prepare.grouping.narrowed`), else 32."""
    return np.int8 if codes.dtype == np.int8 else np.int32


def _root_tallies(codes: np.ndarray, weights: np.ndarray, n_items: int, offsets: np.ndarray) -> np.ndarray:
    return (root_tallies8 if codes.dtype == np.int8 else root_tallies)(codes, weights, n_items, offsets)


def _root_fingerprints(codes: np.ndarray, fp: np.ndarray, n_items: int, offsets: np.ndarray) -> np.ndarray:
    return (root_fingerprints8 if codes.dtype == np.int8 else root_fingerprints)(codes, fp, n_items, offsets)


def _held(rows: np.ndarray | None) -> np.ndarray:
    """The rows kept for the mlxtend engine (kept whenever that engine runs)."""
    assert rows is not None
    return rows

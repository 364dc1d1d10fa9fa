"""The slice table from (possibly compressed) item codes and tallies: mine them, order the itemsets
the same way on every engine, and measure each slice (support, each metric's outcome, divergence,
t and p). The step that needs no per-row data: the in-memory scan, DuckDB, Spark, the model
comparison and a typed slice all end here."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from ..budget import MAX_SLICES, MAX_WORK, MEMORY_LIMIT, TIME_LIMIT, ProgressCallback, progress_report, slice_bytes
from ..mining.canonical import canonical_permutation
from ..mining.mining import mine as mine_itemsets
from ..prepare.discretize import AttributeBins
from ..prepare.tallies import COUNT, metric_tallies
from ..settings import Settings, check, check_min_support
from ..table import MetricInfo, SliceTable
from ..vocabulary import DEFAULT_MIN_SUPPORT
from .stats import beta_t, fisher_exact_p, mean_difference_test, rest_skew, slice_means, welch_t

__all__ = ["scan_compressed", "measure_columns", "table_params", "tell", "effective_max_slices"]


def measure_columns(tallies: np.ndarray, metrics: Sequence[MetricInfo], n_rows: int) -> dict:
    """Support, count and each metric's outcome, divergence, t and p from the tallies."""
    count = tallies[:, COUNT]
    cols: dict = {"support": count / float(n_rows), "count": np.rint(count).astype(np.int64)}
    for k, m in enumerate(metrics):
        n, s, q = metric_tallies(tallies, k)
        n_all, s_all, q_all = n[0], s[0], q[0]
        mean = slice_means(n, s, m.shift)
        overall = mean[0]
        div = mean - overall
        if m.binary:
            ones = np.rint(s)
            t = beta_t(ones, n - ones, ones[0], n_all - ones[0])
            p = fisher_exact_p(ones, n, ones[0], n_all)
        else:
            t = welch_t(n, s, q, n_all, s_all, q_all)
            # the slice against the rest of the rows, valid on skewed outcomes (stats.mean_difference_test)
            p = mean_difference_test(n, s, q, n_all - n, s_all - s, q_all - q, rest_skew(tallies, k, m)).p_value()
        div[0], t[0], p[0] = 0.0, 0.0, np.nan
        cols[m.name] = mean
        cols[f"{m.name}_count"] = np.rint(n).astype(np.int64)
        cols[f"{m.name}_divergence"] = div
        cols[f"{m.name}_t"] = t
        cols[f"{m.name}_p"] = p
    return cols


def table_params(settings: Settings, *, metrics: Sequence[str], attributes: Sequence[str], engine: str,
                 **extra: Any) -> dict:
    """What a slice table records of the settings that made it (``SliceTable.params``)."""
    roles, slicing, mining = settings.roles, settings.slicing, settings.mining
    outcome = roles.outcome
    return dict(target=roles.target, prediction=roles.prediction, score=roles.score, threshold=roles.threshold,
                positive=roles.positive, metrics=list(metrics),
                outcome=(outcome[0] if outcome is not None and len(outcome) == 1 else
                         (list(outcome) if outcome is not None else None)),
                rank=roles.rank, rank_by=roles.rank_by, ascending=roles.ascending, gamma=roles.gamma,
                regression=roles.regression, attributes=list(attributes),
                bins={k: (v if isinstance(v, (int, str)) else list(v)) for k, v in slicing.bins.items()},
                quantile_bins=slicing.quantile_bins, binning=slicing.binning, min_support=mining.min_support,
                max_length=mining.max_length, engine=engine, **extra, exhaustive=mining.exhaustive)


def tell(progress: ProgressCallback | None, stage: str, slices: int = 0) -> None:
    """A stage change, told to the caller's progress callback."""
    if progress is not None:
        progress(progress_report(stage, int(slices), fraction=1.0 if stage == "done" else None))


def effective_max_slices(max_slices: int, n_attr: int, n_tallies: int, n_metrics: int,
                         memory_limit: int = MEMORY_LIMIT) -> int:
    """The slice budget, lowered so the slices' statistics fit in ``memory_limit`` bytes."""
    return max(1, min(int(max_slices), memory_limit // slice_bytes(n_attr, n_tallies, n_metrics)))


def scan_compressed(
    codes: np.ndarray,
    weights: np.ndarray,
    *,
    bins: Sequence[AttributeBins],
    metrics: Sequence[MetricInfo],
    n_rows: int | None = None,
    min_support: float = DEFAULT_MIN_SUPPORT,
    max_length: int | None = None,
    engine: str = "fast",
    notes: Sequence[str] = (),
    params: dict | None = None,
    exhaustive: bool = False,
    max_slices: int = MAX_SLICES,
    time_limit: float | None = TIME_LIMIT,
    progress: ProgressCallback | None = None,
    max_work: int | None = MAX_WORK,
) -> SliceTable:
    """Mine and measure from (possibly compressed) item codes and tallies: the step that needs
    no per-row data, so an engine holding the rows elsewhere (DuckDB, Spark) can hand over
    its GROUP BY. ``weights`` follows :func:`~divergence.stats.row_weights.outcome_weights`' layout; rows with identical
    codes are merged. The result keeps no rows: bootstrap intervals and median baselines need
    :func:`divergence.scan` on a DataFrame. ``exhaustive``, ``max_slices``, ``max_work``, ``time_limit``
    and ``progress`` as in :func:`divergence.scan`; a scan cut by the time limit also warns
    (:class:`~divergence.errors.DivergenceTimeLimitWarning`).
    """
    s = check_min_support(min_support)
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if n_rows is None:
        n_rows = int(round(weights[:, 0].sum()))
    n_values = np.array([b.n_items for b in bins], dtype=np.int64)
    max_slices, time_limit, max_work = (check(k, v) for k, v in (("max_slices", max_slices), ("time_limit", time_limit),
                                                                 ("max_work", max_work)))
    cap = effective_max_slices(max_slices, len(bins), weights.shape[1], len(metrics))
    mined = mine_itemsets(codes, weights, n_values, min_support=s, max_length=max_length, engine=engine,
                 exhaustive=exhaustive, max_slices=cap, time_limit=time_limit, progress=progress,
                 attribute_names=[b.name for b in bins], max_work=max_work)
    if mined.cut == "time":  # the safety net cut it: this table depends on the machine, say so aloud
        import warnings

        from ..errors import DivergenceTimeLimitWarning

        warnings.warn(DivergenceTimeLimitWarning(mined.note), stacklevel=3)
    codes_m, tallies, parent, order = _canonical_order(mined.codes, mined.tallies, mined.parent, n_values)
    columns = measure_columns(tallies, metrics, n_rows)
    notes = list(notes)
    if mined.note:
        notes.append(mined.note + (f" (The slice budget is {cap:,}, lowered from {max_slices:,} so their "
                                   "statistics fit in memory.)" if cap < max_slices else ""))
    groups = mined.groups
    table = SliceTable(
        codes=codes_m, tallies=tallies, columns=columns, attributes=tuple(b.name for b in bins),
        bins=tuple(bins), metrics=tuple(metrics), n_rows=int(n_rows), min_support=s,
        max_length=max_length, engine=engine, notes=tuple(notes), parent=parent,
        params=dict(params or {}), exhaustive=bool(exhaustive),
        groups=None if groups is None else groups.codes,
        group_counts=None if groups is None else groups.weights[:, 0].copy(),
        group_fp=mined.group_fp,
        slice_fp=None if mined.fingerprints is None else mined.fingerprints[order],
        complete_length=mined.complete_length, cut_by=mined.cut, mining_work=mined.work,
        distinct_codes=codes, distinct_tallies=weights,
    )
    if parent is None:
        table = dataclasses.replace(table, parent=_parents(table))
    return table


def _canonical_order(codes: np.ndarray, tallies: np.ndarray, parent: np.ndarray,
                     n_values: np.ndarray):
    """Sort itemsets by length, then by their items in attribute order (engine-independent)."""
    n = codes.shape[0]
    order = canonical_permutation(codes, n_values)
    codes, tallies = codes[order], tallies[order]
    if parent is not None and np.all(parent[1:] >= 0):
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.arange(n)
        p = parent[order]
        new_parent = np.where(p >= 0, inv[np.maximum(p, 0)], -1)
        return codes, tallies, new_parent, order
    return codes, tallies, None, order


def _parents(table: SliceTable) -> np.ndarray:
    """Each itemset's parent (without its last attribute's item), found by lookup."""
    codes = table.codes.copy()
    last = table._last_attribute()
    rows = np.nonzero(last >= 0)[0]
    codes[rows, last[rows]] = -1
    parent = np.full(len(table), -1, dtype=np.int64)
    if rows.size:
        parent[rows] = table.index_of(codes[rows])
    return parent

"""The mined slice table from (possibly compressed) item codes and tallies: mine them, order the
itemsets the same way on every engine, and keep each itemset's tallies, support and count. The
step that needs no per-row data: the in-memory scan, DuckDB, Spark, the model comparison and a
typed slice all go through it, then through :func:`divergence.stats.tabulate.measure`."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..budget import MAX_SLICES, MAX_WORK, MEMORY_LIMIT, TIME_LIMIT, ProgressCallback, slice_bytes
from ..prepare.discretize import AttributeBins
from ..prepare.prepared import Prepared
from ..prepare.tallies import COUNT
from ..settings import Mining, check, check_min_support
from ..table import Lattice, MetricInfo, SliceTable
from ..vocabulary import DEFAULT_MIN_SUPPORT
from .canonical import canonical_permutation
from .mining import code_type, mine

__all__ = ["mine_table", "mine_prepared", "effective_max_slices"]


def effective_max_slices(max_slices: int, n_attr: int, n_tallies: int, n_metrics: int,
                         memory_limit: int = MEMORY_LIMIT) -> int:
    """The slice budget, lowered so the slices' statistics fit in ``memory_limit`` bytes."""
    return max(1, min(int(max_slices), memory_limit // slice_bytes(n_attr, n_tallies, n_metrics)))


def mine_table(
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
    started: float | None = None,
    totals: np.ndarray | None = None,
) -> SliceTable:
    """Mine from (possibly compressed) item codes and tallies: every itemset above the support in the
    canonical order, with its tallies, support and count; the metrics' statistics are
    :func:`divergence.stats.tabulate.measure`'s. The step that needs no per-row data, so an engine
    holding the rows elsewhere (DuckDB, Spark) can hand over its GROUP BY. ``weights`` follows :func:`~divergence.prepare.row_weights.outcome_weights`' layout; rows with identical
    codes are merged. The result keeps no rows: bootstrap intervals and median baselines need
    :func:`divergence.scan` on a DataFrame. ``exhaustive``, ``max_slices``, ``max_work``, ``time_limit``
    and ``progress`` as in :func:`divergence.scan`; a scan cut by the time limit also warns
    (:class:`~divergence.errors.DivergenceTimeLimitWarning`).
    """
    s = check_min_support(min_support)
    codes = np.ascontiguousarray(codes, dtype=code_type(np.asarray(codes)))  # 8 bits when they come so
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if n_rows is None:
        n_rows = int(round(weights[:, 0].sum()))
    n_values = np.array([b.n_items for b in bins], dtype=np.int64)
    max_slices, time_limit, max_work = (check(k, v) for k, v in (("max_slices", max_slices), ("time_limit", time_limit),
                                                                 ("max_work", max_work)))
    cap = effective_max_slices(max_slices, len(bins), weights.shape[1], len(metrics))
    mined = mine(codes, weights, n_values, min_support=s, max_length=max_length, engine=engine,
                 exhaustive=exhaustive, max_slices=cap, time_limit=time_limit, progress=progress,
                 attribute_names=[b.name for b in bins], max_work=max_work, started=started, total=totals)
    if mined.cut == "time":  # the safety net cut it: this table depends on the machine, say so aloud
        import warnings

        from ..errors import DivergenceTimeLimitWarning

        warnings.warn(DivergenceTimeLimitWarning(mined.note), stacklevel=3)
    codes_m, tallies, parent, order = _canonical_order(mined.codes, mined.tallies, mined.parent, n_values)
    columns = {"support": tallies[:, COUNT] / float(n_rows), "count": np.rint(tallies[:, COUNT]).astype(np.int64)}
    notes = list(notes)
    if mined.note:
        notes.append(mined.note + (f" (The slice budget is {cap:,}, lowered from {max_slices:,} so their "
                                   "statistics fit in memory.)" if cap < max_slices else ""))
    groups = mined.groups
    table = SliceTable(
        codes=codes_m, tallies=tallies, columns=columns, attributes=tuple(b.name for b in bins),
        bins=tuple(bins), metrics=tuple(metrics), n_rows=int(n_rows), min_support=s,
        max_length=max_length, engine=engine, notes=tuple(notes), params=dict(params or {}),
        exhaustive=bool(exhaustive),
        lattice=Lattice(parent=parent, groups=None if groups is None else groups.codes,
                        group_counts=None if groups is None else groups.weights[:, 0].copy(),
                        group_fp=mined.group_fp,
                        slice_fp=None if mined.fingerprints is None else mined.fingerprints[order],
                        distinct_codes=codes, distinct_tallies=weights,
                        complete_length=mined.complete_length, cut_by=mined.cut, work=mined.work),
    )
    if parent is None:
        table = dataclasses.replace(table, lattice=dataclasses.replace(table.lattice, parent=_parents(table)))
    return table


def mine_prepared(prepared: Prepared, mining: Mining, *, engine: str = "fast",
                  progress: ProgressCallback | None = None) -> SliceTable:
    """Mine a prepared table (:func:`divergence.prepare.prepared.prepare`, or an SQL engine's) as
    ``mining`` says: the table of :func:`mine_table`, with the rows' codes, outcomes and the rows
    to confirm on that the preparation kept."""
    p = prepared
    table = mine_table(p.codes, p.weights, bins=p.bins, metrics=p.metrics, n_rows=p.n_rows,
                       min_support=mining.min_support, max_length=mining.max_length, engine=engine, notes=p.notes,
                       params=p.params, exhaustive=mining.exhaustive, max_slices=mining.max_slices,
                       time_limit=mining.time_limit, progress=progress, max_work=mining.max_work, started=p.started,
                       totals=p.totals)
    return dataclasses.replace(table, kept_rows=p.kept_rows, replication=p.replication)


def _canonical_order(codes: np.ndarray, tallies: np.ndarray, parent: np.ndarray,
                     n_values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
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

"""The heavy step where the data lives: bin, compute outcomes and compress in SQL
(:func:`prepare_sql`, the SQL implementation of :func:`divergence.prepare.prepared.prepare`), then
hand the small compressed table (distinct discretized rows and their tallies) to the in-memory
miner (:func:`divergence.mining.mined.mine_prepared`), then measured (:func:`divergence.stats.tabulate.measure`).

Engine-independent: a :class:`Backend` (DuckDB, Spark) runs the SQL text of
:mod:`divergence.engines.sql` and returns Arrow data. The bins are built in Python by the functions
:mod:`divergence.prepare.discretize` uses, from the distinct values, minimum, maximum and quantiles
the engine returns, so every path bins alike and the slice table is the pandas one.

Passes over the data: (1) the distinct labels of a classifier's target and prediction,
(2) one profile (row count; per attribute its non-missing count, approximate distinct
count, minimum and maximum; per outcome its defined count, mean and whether it is 0/1),
(3) per numeric attribute with few values its exact value counts, and the quantiles of the
others, (4) the GROUP BY, streamed in batches.

The steps before the GROUP BY live beside it: :mod:`divergence.engines.engine_plan` (the backend,
the outcomes as SQL, the profile) and :mod:`divergence.engines.engine_bins` (the attribute screen
and the bins).
"""
from __future__ import annotations

import collections
import dataclasses
import math
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

import numpy as np

from ..budget import ProgressCallback, progress_report
from ..data.column_rules import ScreenTimeout, screen_timeout_message
from ..data.columns import check_attributes
from ..errors import DivergenceBudgetError, DivergenceInputError
from ..mining.mined import mine_prepared
from ..prepare.discretize import AttributeBins, Binning, categorical_bins
from ..prepare.prepared import Prepared, table_params
from ..prepare.replication_rows import ReplicationRows, needs_its_table
from ..prepare.row_weights import ADDITIVE_BASELINES, place_aux
from ..prepare.score_threshold import threshold_from_range
from ..settings import Settings
from ..stats.tabulate import measure
from ..table import MetricInfo, SliceTable
from ..vocabulary import ENGINES, QUANTILE_MODES
from .engine_bins import QuantileMode, TreeCut, attribute_bins, numpy_quantile, screen_attributes_sql
from .engine_plan import PREFIX as _P
from .engine_plan import Backend, ScanPlan, check_profile, plan_outcomes, population_skewness, profile_sql, refuse_other

if TYPE_CHECKING:  # pyarrow is imported when a scan runs, not with the package
    import pyarrow as pa

__all__ = ["engine_settings", "RUN_KEYWORDS", "Backend", "scan_engine", "mine_engine", "prepare_sql", "numpy_quantile", "QuantileMode", "ENGINE_NOTE"]

ENGINE_NOTE = ("Binned, measured and compressed in {engine}; bootstrap intervals and median "
               "baselines need per-row data and are not computed (intervals are analytic).")


def _collect(batches: Iterator[pa.RecordBatch], attr_bins: list,
             release: Callable[[], None] | None = None) -> tuple[np.ndarray, np.ndarray, list[AttributeBins]]:
    """The grouped rows as the miner takes them: their codes (a categorical attribute's keys in the
    order :func:`~divergence.prepare.discretize.categorical_bins` gives its items), their tallies, and
    the attributes' bins. Each batch becomes numpy blocks as it comes (no column of keys is kept; the
    codes in the narrowest integer type that holds them), copied once into one table and let go: the
    rows are held once, not once per step. ``release`` is called once the stream is read, so that the
    engine's memory is given back before the table is assembled."""
    import pyarrow.compute as pc

    n_attr = len(attr_bins)
    seen: list[dict | None] = [{} if ab is None else None for ab, _, _ in attr_bins]  # category -> its number
    code_blocks: collections.deque = collections.deque()
    weight_blocks: collections.deque = collections.deque()
    for batch in batches:
        if batch.num_rows == 0:
            continue
        block = np.empty((batch.num_rows, n_attr), dtype=np.int32)
        for a in range(n_attr):
            numbers = seen[a]
            if numbers is None:
                block[:, a] = np.asarray(batch.column(a).to_numpy(zero_copy_only=False), dtype=np.int32)
                continue
            encoded = pc.dictionary_encode(batch.column(a))
            ids = [numbers.setdefault(_category_key(v), len(numbers)) for v in encoded.dictionary.to_pylist()]
            if encoded.null_count:
                ids.append(numbers.setdefault(_MISSING, len(numbers)))
            idx = pc.fill_null(encoded.indices, len(ids) - 1 if encoded.null_count else 0)
            block[:, a] = np.asarray(ids, dtype=np.int32)[idx.to_numpy(zero_copy_only=False)]
        code_blocks.append(_narrowed(block))
        weight_blocks.append(_whole(np.column_stack([np.asarray(batch.column(i).to_numpy(zero_copy_only=False),
                                                               dtype=np.float64) for i in range(n_attr, batch.num_columns)])))
    if release is not None:
        release()
    n = sum(len(b) for b in code_blocks)
    width = weight_blocks[0].shape[1] if weight_blocks else 1
    wide = np.dtype(np.int8)
    for block in code_blocks:  # (np.result_type takes a bounded number of arguments)
        wide = np.promote_types(wide, block.dtype)
    codes = np.empty((n, n_attr), dtype=wide)
    weights = np.empty((n, width), dtype=np.float64)
    start = 0
    while code_blocks:  # each block copied, then let go
        block, tallies = code_blocks.popleft(), weight_blocks.popleft()
        codes[start:start + len(block)] = block
        weights[start:start + len(block)] = tallies
        start += len(block)
    final: list[AttributeBins] = []
    lookups: list[np.ndarray | None] = []
    for a, (ab, _, col) in enumerate(attr_bins):
        numbers = seen[a]
        lookup = None
        if numbers is not None:
            values = [(math.nan if v is _NAN else v) for v in numbers if v is not _MISSING]
            value_codes, ab = categorical_bins(col.name, values, _MISSING in numbers)
            lookup = np.empty(len(numbers), dtype=np.int32)
            lookup[[i for v, i in numbers.items() if v is not _MISSING]] = np.asarray(value_codes, dtype=np.int32)
            if _MISSING in numbers:
                lookup[numbers[_MISSING]] = ab.missing_code
        final.append(ab)
        lookups.append(lookup)
    return _widened(codes, lookups), weights, final


def _narrowed(block: np.ndarray) -> np.ndarray:
    """A block of codes in the narrowest signed integer type that holds them."""
    if not block.size:
        return block
    lo, hi = int(block.min()), int(block.max())
    for kind in (np.int8, np.int16):
        info = np.iinfo(kind)
        if info.min <= lo and hi <= info.max:
            return block.astype(kind)
    return block


def _whole(tallies: np.ndarray) -> np.ndarray:
    """A block of tallies as int32 when each is a whole number that int32 holds (counts, and the sums of
    a 0/1 outcome): the same float64 numbers once copied into the table, in half the memory till then."""
    if not tallies.size:
        return tallies
    small = np.abs(tallies) < 2.0 ** 31  # False for NaN
    if small.all() and np.array_equal(tallies, np.trunc(tallies)) and not np.signbit(tallies).any():
        return tallies.astype(np.int32)
    return tallies


def _widened(codes: np.ndarray, lookups: list[np.ndarray | None]) -> np.ndarray:
    """The codes as int32, each categorical attribute's numbers (as first seen) replaced by its items'
    codes (``lookups``): a column at a time, so no second copy of the table is held."""
    out = np.empty(codes.shape, dtype=np.int32)
    for a, lookup in enumerate(lookups):
        out[:, a] = codes[:, a] if lookup is None else lookup[codes[:, a]]
    return out


#: a missing category, and NaN (never equal to itself), as keys of the categories seen
_MISSING, _NAN = object(), object()


def _category_key(value: object) -> object:
    return _NAN if isinstance(value, float) and math.isnan(value) else value


def _sorted_rows(codes: np.ndarray, weights: np.ndarray, bins: list[AttributeBins]) -> tuple[np.ndarray, np.ndarray]:
    """The grouped rows sorted by their codes, as the miner's merge sorts them (it then has nothing to
    do): each column permuted in place (one column's copy at a time, never a second table)."""
    from ..prepare.grouping import fits_one_key

    n_values = np.array([b.n_items for b in bins], dtype=np.int64)
    if len(codes) < 2 or not fits_one_key(n_values):
        return codes, weights
    mult = np.ones(len(n_values), dtype=np.int64)
    for a in range(len(n_values) - 2, -1, -1):
        mult[a] = mult[a + 1] * (int(n_values[a + 1]) + 1)
    order = np.argsort(np.einsum("ij,j->i", codes, mult), kind="stable")
    for table in (codes, weights):
        for j in range(table.shape[1]):
            table[:, j] = table[order, j]
    np.add(weights, 0.0, out=weights)  # a sum of -0.0 reads 0.0, as the miner's merge gives it
    return codes, weights


#: keywords of scan_duckdb and scan_spark that are not settings: how this run reads and reports
RUN_KEYWORDS = ("replicate", "engine", "exploratory", "quantiles", "progress")


def engine_settings(settings: Settings | None, keywords: dict) -> tuple[Settings, dict]:
    """(the settings, the run's other keywords) of a ``scan_duckdb`` or ``scan_spark`` call,
    validated before any data is read."""
    run = {k: keywords.pop(k) for k in RUN_KEYWORDS if k in keywords}
    return Settings.resolve(settings, keywords), run


def scan_engine(
    backend: Backend,
    settings: Settings,
    *,
    replicate=None,
    engine: str = "fast",
    exploratory: bool = True,
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> SliceTable:
    """The slice table of :func:`divergence.scan`, with binning, outcomes and compression run
    by ``backend``; see :func:`divergence.scan_duckdb` and :func:`divergence.scan_spark`:
    :func:`mine_engine`, then :func:`divergence.assess`."""
    from ..stats.assess import assess

    needs_its_table(settings.replication, replicate)
    table = mine_engine(backend, settings, replicate=replicate, engine=engine, quantiles=quantiles, progress=progress)
    out = assess(table, settings.statistics, exploratory=exploratory, progress=progress)  # its replication kept
    if progress is not None:
        progress(progress_report("done", len(out) - 1, fraction=1.0))
    return out


def mine_engine(
    backend: Backend,
    settings: Settings,
    *,
    replicate=None,
    engine: str = "fast",
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> SliceTable:
    """The table of :func:`divergence.mine` (not assessed; ``replicate``, when given, kept in it for
    :func:`divergence.assess`, named as the settings name a second file), with binning, outcomes and
    compression run by ``backend``."""
    prepared = prepare_sql(backend, settings, engine=engine, quantiles=quantiles, progress=progress)
    release = getattr(backend, "release", None)  # the engine's memory given back before the miner takes its own
    if release is not None:
        release()
    table = measure(mine_prepared(prepared, settings.mining, engine=engine, progress=progress))
    if progress is not None:
        progress(progress_report("statistics", len(table) - 1))
    return dataclasses.replace(table, engine=backend.name,
                               replication=ReplicationRows(replicate, label=settings.replication.label)
                               if replicate is not None else table.replication)


def _settle_threshold(plan: ScanPlan, settings: Settings) -> tuple[Settings, str | None]:
    """The settings with a score's missing threshold set from its range, as scan() sets it
    (:func:`divergence.prepare.score_threshold.score_threshold`), and the note."""
    r = settings.roles
    if r.score is None or r.prediction is not None or r.threshold is not None:
        return settings, None
    num = plan.number(r.score, "score")
    row = plan.b.fetch(f"SELECT MIN({num}) AS lo, MAX({num}) AS hi FROM {plan.b.source}").to_pylist()[0]
    span = None if row["lo"] is None else (float(row["lo"]), float(row["hi"]))
    threshold, note = threshold_from_range(r.score, span)
    return dataclasses.replace(settings, roles=dataclasses.replace(r, threshold=threshold)), note


def prepare_sql(
    backend: Backend,
    settings: Settings,
    *,
    engine: str = "fast",
    quantiles: QuantileMode = "auto",
    progress: ProgressCallback | None = None,
) -> Prepared:
    """The SQL implementation of :func:`divergence.prepare.prepared.prepare`: the outcomes, the
    attribute screen, the bins and the GROUP BY of items and tallies run by ``backend`` (a few
    passes over the data), to the same :class:`~divergence.prepare.prepared.Prepared`."""
    started = time.monotonic()  # the attribute screen's time limit counts from here, as scan()'s does
    roles, slicing, mining = settings.roles, settings.slicing, settings.mining
    if progress is not None:
        progress(progress_report("reading", 0))
    if roles.query is not None:
        raise DivergenceInputError(
            f"Query-level ranking metrics are computed in memory (rows ranked within each query): scan the table "
            f"with scan() or the dashboard, not the {backend.name} engine.")
    if settings.replication.kind in ("holdout", "split"):
        what = "holdout" if settings.replication.kind == "holdout" else "A split column to confirm on"
        raise DivergenceInputError(
            f"{what} is not available with the {backend.name} engine (it splits rows in memory); "
            "give a second table to replicate on instead."
        )
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown miner {engine!r}; choose from {', '.join(ENGINES)}.")
    if quantiles not in QUANTILE_MODES:
        raise DivergenceInputError(f"quantiles must be 'auto', 'exact' or 'approx'; got {quantiles!r}.")
    if not backend.columns:
        raise DivergenceInputError("The table has no columns.")
    plan = ScanPlan(backend)
    d = plan.d
    settings, threshold_note = _settle_threshold(plan, settings)
    roles = settings.roles
    outcomes = plan_outcomes(plan, roles)
    taken = roles.columns()
    bins = dict(slicing.bins)
    if slicing.attributes is None:
        candidates = [c for c in backend.columns if c.name not in taken]
    else:
        attrs = check_attributes(slicing.attributes, plan.by_name, taken)
        candidates = [plan.by_name[a] for a in attrs]
        for c in candidates:
            refuse_other(c, "an attribute")
    source = f"{backend.source} {_P}src " + " ".join(plan.joins) if plan.joins else backend.source
    # each outcome computed once per row in a projection: the aggregates then refer to short
    # column names (Spark's code generation gives up on very long expressions)
    derived = []
    for k, o in enumerate(outcomes):
        derived.append(f"{o.value} AS {_P}v{k}")
        o.value = f"{_P}v{k}"
        if o.target is not None:
            derived.append(f"{o.target} AS {_P}y{k}")
            o.target = f"{_P}y{k}"
        if o.score_range is not None:
            derived.append(f"{o.score_range} AS {_P}s{k}")
            o.score_range = f"{_P}s{k}"
    tree = slicing.binning == "tree"
    if tree:  # which rows choose the tree's cut points (divergence.prepare.cutpoints), from a hash of their values
        derived.append(f"{d.row_fraction(backend.columns, settings.statistics.seed)} AS {_P}cut")
    source = f"(SELECT *, {', '.join(derived)} FROM {source}) {_P}rows"
    # ---- pass 2: the profile
    row = backend.fetch(profile_sql(plan, candidates, outcomes, source)).to_pylist()[0]
    n_rows = int(row["n_rows"])
    if n_rows == 0:
        raise DivergenceInputError("The table is empty: it has no rows.")
    check_profile(plan, row)
    stats = {}
    for j, c in enumerate(candidates):
        stats[c.name] = {"nn": int(row[f"nn{j}"]), "ad": int(row[f"ad{j}"] or 0), "lo": row.get(f"lo{j}"),
                         "hi": row.get(f"hi{j}"), "int": bool(row.get(f"int{j}", 1)),
                         "nn_num": row.get(f"nnum{j}")}
    for k, o in enumerate(outcomes):
        if not row[f"od{k}"]:
            raise DivergenceInputError(
                f"Outcome '{o.name}' ({o.description}) is undefined on every row: no row qualifies "
                "(for a rate, check the positive label and that both classes occur)."
            )
        if o.score_range is not None and row[f"slo{k}"] is not None and (row[f"slo{k}"] < 0 or row[f"shi{k}"] > 1):
            raise DivergenceInputError(
                f"Metric '{o.name}' needs scores in [0, 1]; score column '{roles.score}' ranges "
                f"{row[f'slo{k}']:g} to {row[f'shi{k}']:g}."
            )
        o.bound = 2 * float(row[f"oa{k}"] or 0.0)  # |value - shift| <= 2 max |value|
        o.target_bound = 2 * float(row.get(f"oya{k}") or 0.0)
        o.binary = bool(row[f"ob{k}"])
        o.shift = 0.0 if o.binary else float(row[f"om{k}"])
        o.skew = 0.0 if o.binary else population_skewness(row[f"osk{k}"], int(row[f"od{k}"]), d.name)
        if f"oy{k}" in row:
            o.target_shift = float(row[f"oy{k}"]) if row[f"oy{k}"] is not None else 0.0
    notes: list[str] = []
    if slicing.attributes is None:
        # the time limit (a safety net) covers the screen too, counted from the scan's start, as in scan()
        limit = mining.time_limit
        try:
            attrs, notes = screen_attributes_sql(plan, taken, n_rows, stats, **roles.screen_keywords(),
                                                 deadline=None if not limit else started + float(limit))
        except ScreenTimeout as out:
            raise DivergenceBudgetError(screen_timeout_message(out.where, float(limit or 0.0))) from None
    else:
        attrs = [c.name for c in candidates]
    notes = list(getattr(backend, "notes", [])) + ([threshold_note] if threshold_note else []) + notes
    if not attrs:
        raise DivergenceInputError("There is no attribute column to slice by.")
    unknown = [c for c in bins if c not in attrs]
    if unknown:
        raise DivergenceInputError(
            f"Bins were given for {', '.join(map(repr, unknown))}, which "
            f"{'is not an attribute' if len(unknown) == 1 else 'are not attributes'} of this scan."
        )
    # ---- pass 3: value counts and quantiles
    cut = None
    if tree:
        from ..prepare.cutpoints import cut_fraction

        cut = TreeCut(source=source, outcomes=[o.value for o in outcomes], share=cut_fraction(n_rows),
                      min_support=mining.min_support, n_rows=n_rows)
    attr_bins = attribute_bins(plan, attrs, stats, n_rows, bins, slicing.quantile_bins,
                               cast(Binning, slicing.binning), quantiles, notes, cut)
    if cut is not None:  # every number of the table from the rows that did not choose the cuts
        source = f"(SELECT * FROM {source} WHERE {_P}cut >= {d.double(cut.share)}) {_P}rest"
        n_rows -= cut.n_cut
    # ---- pass 4: the GROUP BY, streamed
    keys = [f"{sql} AS {_P}a{j}" for j, (_, sql, _) in enumerate(attr_bins)]
    tallies = ["COUNT(*)"]
    aux = []
    for k, o in enumerate(outcomes):
        x = f"({o.value} - {d.double(o.shift)})"
        b = None if o.binary else o.bound  # sums of 0/1 are exact in any order
        tallies += [f"COUNT({o.value})", f"COALESCE({d.fsum(x, b, n_rows)}, 0)",
                    f"COALESCE({d.fsum(f'{x} * {x}', None if b is None else b * b, n_rows)}, 0)"]
        if o.baseline in ADDITIVE_BASELINES and o.target is not None:
            y = f"(CASE WHEN {o.value} IS NOT NULL THEN {o.target} - {d.double(o.target_shift)} END)"
            b = o.target_bound
            aux += [f"COALESCE({d.fsum(y, b, n_rows)}, 0)", f"COALESCE({d.fsum(f'{y} * {y}', b * b, n_rows)}, 0)"]
    for o in outcomes:  # real outcomes: the cubed shifted value, for the skew guard (MetricInfo.cube)
        if not o.binary:
            x = f"({o.value} - {d.double(o.shift)})"
            b3 = o.bound ** 3
            aux += [f"COALESCE({d.fsum(f'{x} * {x} * {x}', b3, n_rows)}, 0)",
                    f"COALESCE({d.fsum(f'{x} * {x} * {x} * {x} * {x} * {x}', b3 * b3, n_rows)}, 0)"]
    select = keys + [f"{t} AS {_P}t{i}" for i, t in enumerate(tallies + aux)]
    group = ", ".join(str(j + 1) for j in range(len(keys)))
    sql = f"SELECT {', '.join(select)} FROM {source} GROUP BY {group}"
    # the engine's memory is given back as soon as the grouped rows are read (release)
    codes, weights, final_bins = _collect(backend.stream(sql), attr_bins, getattr(backend, "release", None))
    if weights.shape[0] == 0 or int(round(weights[:, 0].sum())) != n_rows:
        raise DivergenceInputError(
            f"The data changed while it was read: {n_rows:,} rows counted, "
            f"{int(round(weights[:, 0].sum())) if weights.size else 0:,} grouped. Nothing was mined; run the scan again."
        )
    for j, (ab, _, col) in enumerate(attr_bins):
        if ab is None and col.name in plan.periods:
            final_bins[j] = dataclasses.replace(final_bins[j], kind="date", period=plan.periods[col.name])
    totals = weights.sum(axis=0)  # the root's tallies, in the order the rows came, as the miner sums them
    codes, weights = _sorted_rows(codes, weights, final_bins)
    infos = place_aux([MetricInfo(name=o.name, description=o.description, binary=o.binary, shift=o.shift,
                                  baseline=o.baseline, skew=o.skew) for o in outcomes],
                      [o.target_shift if o.target is not None else None for o in outcomes])
    notes.append(ENGINE_NOTE.format(engine={"duckdb": "DuckDB", "spark": "Spark"}.get(backend.name, backend.name)))
    params = table_params(settings, metrics=[o.name for o in outcomes], attributes=attrs, engine=backend.name,
                          quantiles=quantiles)
    return Prepared(codes=codes, weights=weights, bins=tuple(final_bins), metrics=tuple(infos), n_rows=n_rows,
                    notes=tuple(notes), params=params, started=started if slicing.attributes is None else None,
                    totals=totals)

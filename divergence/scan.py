"""scan(): validate -> outcomes -> discretize -> compress and mine -> statistics -> SliceTable."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .budget import MAX_SLICES, MAX_WORK, MEMORY_LIMIT, TIME_LIMIT, slice_bytes
from .mining.canonical import canonical_permutation
from .data.columns import NEAR_UNIQUE_SHARE, check_attributes, screen_attributes
from .prepare.compression import compress_outcomes
from .prepare.discretize import AttributeBins, BinSpec, Binning, discretize
from .errors import DivergenceInputError
from .mining.mining import min_count_for, mine
from .data.nested import check_supported
from .prepare.outcomes import Outcome, build_outcomes
from .settings import Roles, Settings, check, check_min_support
from .stats.row_weights import aux_columns, metric_infos, outcome_weights
from .stats.stats import beta_t, fisher_exact_p, mean_difference_test, rest_skew, slice_means, welch_t
from .table import MetricInfo, SliceTable
from .prepare.tallies import COUNT, metric_tallies
from .vocabulary import DEFAULT_MIN_SUPPORT, ENGINES

mine_itemsets = mine  # the miner (divergence.mining); ``mine`` below is the public phase

__all__ = ["scan", "mine", "MinedTable", "table_params", "default_attributes", "role_columns", "NEAR_UNIQUE_SHARE", "check_frame", "check_min_support",
           "metric_columns", "scan_compressed"]


def role_columns(**roles: object) -> list[str]:
    """The columns used as target, prediction, score, rank or outcome (not attributes)."""
    out: list[str] = []
    for value in roles.values():
        if value is None:
            continue
        for col in ([value] if isinstance(value, str) else list(value)):  # type: ignore[arg-type]
            if col not in out:
                out.append(col)
    return out


def default_attributes(df: pd.DataFrame, exclude: Sequence[str], *, target: str | None = None,
                       prediction: str | None = None, score: str | None = None,
                       threshold: float | None = None) -> tuple[list[str], list[str]]:
    """Every column not in ``exclude``, less those a careful analyst would not slice by (see
    :func:`divergence.data.columns.screen_attributes`); with the notes saying which and why."""
    screen = screen_attributes(df, exclude, target=target, prediction=prediction, score=score,
                               threshold=threshold)
    return screen.attributes, screen.notes


def check_frame(df: object) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise DivergenceInputError(f"Expected a pandas DataFrame; got {type(df).__name__}.")
    if len(df) == 0:
        raise DivergenceInputError("The table is empty: it has no rows.")
    if len(df.columns) == 0:
        raise DivergenceInputError("The table has no columns.")
    dups = df.columns[df.columns.duplicated()]
    if len(dups):
        raise DivergenceInputError(f"Column name '{dups[0]}' appears more than once.")
    return df


def metric_columns(tallies: np.ndarray, metrics: Sequence[MetricInfo], n_rows: int) -> dict:
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


def scan(
    data: pd.DataFrame,
    settings: Settings | None = None,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    exploratory: bool = True,
    progress: Callable[[dict], None] | None = None,
    **keywords: Any,
) -> SliceTable:
    """Every slice with support >= ``min_support``, with its outcome, divergence, t and p.

    The analysis is described by a :class:`~divergence.settings.Settings` (``settings``), by
    its fields as keywords, or both (the keywords then change those fields); it is validated
    once, there, and an unknown keyword is refused by name.

    Keywords (the fields of ``Settings``' roles, slicing, mining and statistics)
    ----------------------------------------------------------------------------
    target, prediction, score, threshold, positive : a binary classifier (``positive``
        names the positive label; predictions as labels, or a score and a threshold) or,
        with ``regression=True`` or regression metrics, a regressor.
    metrics : metric names, e.g. ``["fpr", "fnr"]`` or ``["abs_error"]``.
    outcome : a numeric column (or several) used as the outcome as it is.
    rank, rank_by, ascending, gamma : a ranking, from a rank column (1 = best) or from
        a score (higher is better unless ``ascending``), valued by ``gamma``
        (``topk:K``, ``power:A`` or ``dcg``); the metric is called ``gamma``.
    attributes : the columns to slice by; default every column not used above, less row
        numbers, identifiers, person names, dates, free text, constant and all-missing columns
        and columns that leak the target, prediction or score (see
        :func:`divergence.data.columns.screen_attributes`; the result's notes say which and why).
    bins, quantile_bins, binning : how numeric attributes are binned (see
        :func:`divergence.prepare.discretize.discretize`).
    min_support : the smallest share of rows a slice may hold, in (0, 1] (default 0.02,
        ``divergence.settings.DEFAULT_MIN_SUPPORT``).
    max_length : the most items in an itemset (default: no limit).
    exhaustive : False (default): each distinct set of rows is one slice, described by its
        shortest itemset (ties: the first in column order); an item with the same rows as
        another, or on every row of its parent, adds nothing. True: every itemset above the
        support, as DivExplorer lists them (an item duplicating another doubles the table).
    max_slices, max_work, time_limit : the budget: 500,000 slices (fewer when their
        statistics would pass 2 GiB) and 1e10 units of mining work by default, both counted,
        so the same data and settings give the same table on any machine and at any load;
        ``time_limit`` (600 seconds of mining) is a safety net whose cut depends on the
        machine: the notes say so, ``cut_by`` is "time" and a
        :class:`~divergence.errors.DivergenceTimeLimitWarning` is raised. Past the budget the
        table is complete up to the longest length that fits and its notes say so
        (``complete_length``); when not even single items fit,
        :class:`~divergence.errors.DivergenceBudgetError`.
    delta, confidence, correction, family, bootstrap, seed, top_k, sort_by :
        the worst-slice statistics, see :func:`divergence.assess`.
    holdout : a share of the rows (seeded by ``seed``) held out of mining and used to
        replicate every slice: estimates free of the winner's curse.

    Other parameters
    ----------------
    data : the table, one row per example.
    outcomes : ready-made :class:`Outcome` objects (added to those of the roles).
    replicate : a second table with the same columns, on which every slice is measured again.
    engine : ``"fast"`` (the default miner) or ``"mlxtend"`` (FP-growth, slow, reference).
    exploratory : False for a scan from a pre-registered slice plan.
    progress : called with a dict ``{"stage", "slices", "length", "fraction"}`` at each
        stage ("discretizing", "mining", "statistics", "done") and every quarter second of
        mining (``slices`` mined so far, ``length`` the longest being completed or None,
        ``fraction`` an estimate of the mining done or None).
    """
    st = Settings.resolve(settings, keywords)
    table = mine(data, st, outcomes=outcomes, replicate=replicate, engine=engine, progress=progress)
    from .stats.assess import assess

    _tell(progress, "statistics", len(table) - 1)
    out = assess(table, st.statistics, exploratory=exploratory)
    _tell(progress, "done", len(out) - 1)
    return out


#: a slice table as :func:`mine` returns it: every slice with its support, count and each metric's
#: outcome, divergence, t and p, not yet assessed (``assessment`` None); :func:`divergence.assess`
#: adds the worst-slice statistics
MinedTable = SliceTable


def mine(
    data: pd.DataFrame,
    settings: Settings | None = None,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    progress: Callable[[dict], None] | None = None,
    **keywords: Any,
) -> MinedTable:
    """The mining phase of :func:`scan`: every slice with support >= ``min_support`` with its
    outcome, divergence, t and p, without the worst-slice statistics; ``assess(mine(...))`` is
    ``scan(...)``, so a table mined once can be assessed at any statistics.

    Settings and keywords as in :func:`scan`. Of the statistics only ``seed`` is read here: it
    draws the rows a ``holdout`` sets aside and those ``binning="tree"`` chooses cut points on.
    The held-out rows, or ``replicate`` (one row per query for a query-level scan), are kept in
    the table (``replicate``) for :func:`divergence.assess` to measure every slice again on.
    ``progress`` is told "discretizing" and "mining" (see :func:`scan`).
    """
    st = Settings.resolve(settings, keywords)
    df = check_frame(data)
    query_notes: list[str] = []
    query_params: dict = {}
    if st.roles.query is not None:  # ranking quality per query: one row per query (divergence.prepare.queries)
        df, replicate, st, query_notes, query_params = _by_query(df, replicate, st)
    roles, slicing, mining, stats = st.roles, st.slicing, st.mining, st.statistics
    _tell(progress, "discretizing")
    holdout = st.replication.share if st.replication.kind == "holdout" else None
    if holdout is not None and replicate is not None:
        raise DivergenceInputError("Give either a replication table or a holdout share, not both.")
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    held_out = None
    held_mask = None
    if holdout is not None:
        rng = np.random.default_rng(stats.seed)
        mask = rng.random(len(df)) < holdout
        held_mask = mask
        if mask.all() or not mask.any():
            raise DivergenceInputError(f"A holdout of {holdout:g} leaves no rows on one side of {len(df)}.")
        held_out = df[mask].reset_index(drop=True)
        df = df[~mask].reset_index(drop=True)
    found: list[Outcome] = []
    check_supported(df, [c for c in roles.columns() if c in df.columns], "a target, prediction, score or outcome")
    if outcomes is None or roles.given():
        found = build_outcomes(df, **roles.keywords())
    found += list(outcomes or [])
    for o in found:
        if len(o.values) != len(df):
            raise DivergenceInputError(
                f"Outcome '{o.name}' has {len(o.values)} values for {len(df)} rows."
            )
    if query_params:
        from .prepare.queries import describe

        found = [dataclasses.replace(o, description=describe(o.name)) if o.name in query_params["metrics"] else o
                 for o in found]
    taken = roles.columns()
    notes: list[str] = list(query_notes)
    if slicing.attributes is None:
        attrs, screened = default_attributes(df, taken, **roles.screen_keywords())
        notes += screened
    else:
        attrs = check_attributes(slicing.attributes, df.columns, taken)
        check_supported(df, attrs)
    if not attrs:
        raise DivergenceInputError("There is no attribute column to slice by.")
    data_rows = None
    if slicing.binning == "tree":  # cut points chosen on some rows, every statistic on the others
        df, found, data_rows, cut_notes, tree_bins = _tree_split(df, found, attrs, slicing, mining, stats.seed)
        notes += cut_notes
        disc = discretize(df, attrs, bins=slicing.bins, quantile_bins=slicing.quantile_bins, binning="quantile",
                          cuts=tree_bins)
    else:
        disc = discretize(df, attrs, bins=slicing.bins, quantile_bins=slicing.quantile_bins, binning=slicing.binning)
    notes += list(disc.notes)
    infos = metric_infos(found)
    params = table_params(st, metrics=[o.name for o in found], attributes=attrs, engine=engine)
    if query_params:
        params["query"] = query_params
    n_values = np.array([b.n_items for b in disc.bins], dtype=np.int64)
    s = mining.min_support
    if engine == "mlxtend":  # FP-growth counts rows itself: it needs every row, one by one
        codes_in, weights_in = disc.codes, np.column_stack(outcome_weights(found)[0])
    else:
        aux, aux_shift = aux_columns(found, infos)
        comp = compress_outcomes(
            disc.codes, n_values, min_count_for(s, len(df)),
            np.column_stack([o.values for o in found]), np.array([m.shift for m in infos]),
            np.column_stack(aux) if aux else np.empty((len(df), 0)), np.array(aux_shift, dtype=float))
        codes_in, weights_in = comp.codes, comp.weights
    table = scan_compressed(codes_in, weights_in, bins=disc.bins, metrics=infos,
                            n_rows=len(df), min_support=s, max_length=mining.max_length, engine=engine,
                            notes=notes, params=params, exhaustive=mining.exhaustive,
                            max_slices=mining.max_slices, time_limit=mining.time_limit, progress=progress,
                            max_work=mining.max_work)
    table = dataclasses.replace(table, row_codes=disc.codes, outcomes=tuple(found),
                                data_rows=_positions(held_mask, data_rows))
    label = None
    if held_out is not None:
        replicate = held_out
        label = f"held-out {holdout:.0%} of the rows ({len(held_out):,})"
    return dataclasses.replace(table, replicate=replicate, replication_label=label, holdout=holdout)


def _by_query(df: pd.DataFrame, replicate: pd.DataFrame | None, st: Settings):
    """A query-level ranking scan as a scan of one row per query: that table (its attributes and
    each metric as a column), the replication table likewise, the settings that scan it (the
    metrics as outcome columns, the attributes those constant within a query), notes, and what the
    table records of the query roles."""
    from .prepare.queries import canonical, query_table

    roles, slicing = st.roles, st.slicing
    metrics = [canonical(m) for m in (roles.metrics or ())] or None
    candidates: list[str] = []
    notes: list[str] = []
    if slicing.attributes is None:
        taken = roles.columns()
        candidates, notes = default_attributes(df, taken, **roles.screen_keywords())
    kw = dict(query=roles.query, relevance=roles.relevance, rank=roles.rank, rank_by=roles.rank_by,
              ascending=roles.ascending, metrics=metrics or ())
    qt = query_table(df, **kw, attributes=slicing.attributes, candidates=candidates)
    clash = [m for m in qt.values if m in qt.frame.columns]
    if clash:
        raise DivergenceInputError(f"Column '{clash[0]}' has a query metric's name: rename it to scan that metric.")
    attrs = [c for c in qt.frame.columns if c != roles.query]
    frame = qt.frame.assign(**qt.values)
    if replicate is not None:
        rq = query_table(check_frame(replicate), **kw, attributes=attrs, candidates=())
        replicate = rq.frame.assign(**rq.values)
    inner = dataclasses.replace(
        st, roles=Roles(outcome=tuple(qt.values)),
        slicing=dataclasses.replace(slicing, attributes=tuple(attrs)))
    params = dict(query=roles.query, relevance=roles.relevance, rank=roles.rank, rank_by=roles.rank_by,
                  ascending=roles.ascending, metrics=list(qt.values), rows=qt.n_rows)
    return frame, replicate, inner, list(qt.notes) + list(notes), params


def _tree_split(df: pd.DataFrame, found: list, attrs: list, slicing, mining, seed: int):
    """``binning="tree"``: the cut rows choose every continuous column's cut points
    (:mod:`divergence.prepare.cutpoints`) and are set aside; the rest, their outcomes, their positions in
    ``df``, the notes and the cut points (explicit edges for :func:`discretize`)."""
    from .prepare.cutpoints import choose_cuts, cut_mask, cut_note

    cut = cut_mask(len(df), seed)
    if cut.n_cut < 20 or cut.n_rest < 1:
        raise DivergenceInputError(
            f"Tree binning needs rows to choose cut points on and rows to measure: {len(df):,} rows give "
            f"{cut.n_cut:,} and {cut.n_rest:,}. Use quantile bins on so small a table.")
    edges = choose_cuts(df, attrs, slicing.bins, slicing.quantile_bins, found, cut,
                        min_count_for(mining.min_support, cut.n_rest))
    rest = ~cut.mask
    kept = [dataclasses.replace(o, values=o.values[rest],
                                target=None if o.target is None else o.target[rest],
                                prediction=None if o.prediction is None else o.prediction[rest]) for o in found]
    notes = [cut_note(list(edges), cut.n_cut, cut.n_rest, edges)] if edges else [
        "Tree binning: no continuous attribute to cut (every numeric attribute is kept as categories or has "
        f"explicit edges); the {cut.n_cut:,} rows set aside to choose cuts are not measured."]
    return (df[rest].reset_index(drop=True), kept, np.nonzero(rest)[0], notes,
            {c: [float(e) for e in v] for c, v in edges.items()})


def _positions(held_mask: np.ndarray | None, data_rows: np.ndarray | None) -> np.ndarray | None:
    """Positions, in the table given to scan(), of the rows a result measures (None: all of them)."""
    if held_mask is None and data_rows is None:
        return None
    base = np.arange(len(held_mask)) if held_mask is not None else None
    if base is not None:
        base = base[~held_mask]
    if data_rows is None:
        return base
    return data_rows if base is None else base[data_rows]


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


def _tell(progress: Callable[[dict], None] | None, stage: str, slices: int = 0) -> None:
    """A stage change, told to the caller's progress callback."""
    if progress is not None:
        progress({"stage": stage, "slices": int(slices), "length": None,
                  "fraction": 1.0 if stage == "done" else None})


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
    progress: Callable[[dict], None] | None = None,
    max_work: int | None = MAX_WORK,
) -> SliceTable:
    """Mine and measure from (possibly compressed) item codes and tallies: the step that needs
    no per-row data, so an engine holding the rows elsewhere (DuckDB, Spark) can hand over
    its GROUP BY. ``weights`` follows :func:`outcome_weights`' layout; rows with identical
    codes are merged. The result keeps no rows: bootstrap intervals and median baselines need
    :func:`scan` on a DataFrame. ``exhaustive``, ``max_slices``, ``max_work``, ``time_limit``
    and ``progress`` as in :func:`scan`; a scan cut by the time limit also warns
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

        from .errors import DivergenceTimeLimitWarning

        warnings.warn(DivergenceTimeLimitWarning(mined.note), stacklevel=3)
    codes_m, tallies, parent, order = _canonical_order(mined.codes, mined.tallies, mined.parent, n_values)
    columns = metric_columns(tallies, metrics, n_rows)
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

"""scan(): validate -> outcomes -> discretize -> compress and mine -> statistics -> SliceTable."""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .budget import ProgressCallback
from .data.column_rules import ScreenTimeout, screen_timeout_message
from .data.columns import check_attributes, check_frame, default_attributes
from .prepare.compression import compress_outcomes
from .prepare.discretize import discretize
from .errors import DivergenceBudgetError, DivergenceInputError
from .data.nested import check_supported
from .prepare.model_outputs import apply_models
from .prepare.outcomes import Outcome, build_outcomes
from .settings import Roles, Settings, min_count_for
from .stats.replication import needs_its_table, split_label, split_mask
from .stats.row_weights import aux_columns, metric_infos, outcome_weights
from .mining.mined import mine_table
from .stats.tabulate import measure, table_params, tell
from .table import SliceTable
from .vocabulary import ENGINES

__all__ = ["scan", "mine", "MinedTable"]


def scan(
    data: pd.DataFrame,
    settings: Settings | None = None,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    exploratory: bool = True,
    progress: ProgressCallback | None = None,
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
        ``time_limit`` (600 seconds of the attribute screen and the mining) is a safety net whose cut depends on the
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
    models = apply_models(data, keywords, progress=progress)  # model=estimator: its outputs as columns
    if models.records and replicate is not None:  # the replication rows get the same model's outputs
        replicate = apply_models(replicate, keywords).data
    data, keywords = models.data, models.keywords
    st = Settings.resolve(settings, keywords)
    needs_its_table(st.replication, replicate)  # mine() alone may be given the second table later (assess)
    table = mine(data, st, outcomes=outcomes, replicate=replicate, engine=engine, progress=progress)
    from .stats.assess import assess

    tell(progress, "statistics", len(table) - 1)
    out = assess(table, st.statistics, exploratory=exploratory, progress=progress)
    tell(progress, "done", len(out) - 1)
    return models.stamp(out)


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
    progress: ProgressCallback | None = None,
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
    models = apply_models(data, keywords, progress=progress)
    if models.records:  # mine(model=...) itself: the outputs computed here, recorded on the table
        return models.stamp(mine(models.data, settings, outcomes=outcomes, replicate=replicate, engine=engine,
                                 progress=progress, **models.keywords))
    st = Settings.resolve(settings, keywords)
    started = time.monotonic()  # the time limit covers the attribute screen as well as the mining
    df = check_frame(data)
    df, replicate, split_held, label = _replication_rows(df, replicate, st)
    query_notes: list[str] = []
    query_params: dict = {}
    if st.roles.query is not None:  # ranking quality per query: one row per query (divergence.prepare.queries)
        df, replicate, st, query_notes, query_params = _by_query(df, replicate, st, started)
    roles, slicing, mining, stats = st.roles, st.slicing, st.mining, st.statistics
    tell(progress, "discretizing")
    holdout = st.replication.share if st.replication.kind == "holdout" else None
    if holdout is not None and replicate is not None:
        raise DivergenceInputError("Give either a replication table or a holdout share, not both.")
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    held_out = None
    held_mask = split_held if st.roles.query is None else None  # a query scan's rows are its queries
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
        attrs, screened = _screened(df, taken, roles, mining.time_limit, started)
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
    table = measure(mine_table(codes_in, weights_in, bins=disc.bins, metrics=infos,
                               n_rows=len(df), min_support=s, max_length=mining.max_length, engine=engine,
                               notes=notes, params=params, exhaustive=mining.exhaustive,
                               max_slices=mining.max_slices, time_limit=mining.time_limit, progress=progress,
                               max_work=mining.max_work, started=started if slicing.attributes is None else None))
    table = dataclasses.replace(table, row_codes=disc.codes, outcomes=tuple(found),
                                data_rows=_positions(held_mask, data_rows))
    if held_out is not None:
        replicate = held_out
        label = f"held-out {holdout:.0%} of the rows ({len(held_out):,})"
    return dataclasses.replace(table, replicate=replicate, replication_label=label, holdout=holdout)


def _screened(df: pd.DataFrame, taken: Sequence[str], roles: Roles, time_limit: float | None,
              started: float) -> tuple[list[str], list[str]]:
    """The default attributes and their notes, the screen inside the scan's time limit (counted
    from ``started``): past it, one line that says how far it got and what to do."""
    try:
        return default_attributes(df, taken, **roles.screen_keywords(),
                                  deadline=None if not time_limit else started + float(time_limit))
    except ScreenTimeout as out:
        raise DivergenceBudgetError(screen_timeout_message(out.where, float(time_limit))) from None


def _by_query(df: pd.DataFrame, replicate: pd.DataFrame | None, st: Settings, started: float):
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
        candidates, notes = _screened(df, taken, roles, st.mining.time_limit, started)
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


def _replication_rows(df: pd.DataFrame, replicate: pd.DataFrame | None, st: Settings):
    """The rows to mine and the table to replicate on, as the settings' replication says: a split
    column splits ``df`` here (with the mask of the rows it confirms on, so the table's row
    positions stay those of the data given, and the replication's name); a second file's rows come
    as ``replicate`` (here or to assess); a holdout is drawn later, from the seed."""
    rep = st.replication
    if rep.kind == "split":
        if replicate is not None:
            raise DivergenceInputError("Give either a replication table or a split column to confirm on, not both.")
        values = rep.confirm_values or ()
        mask = split_mask(df, rep.column, values)
        confirm = df.loc[mask].reset_index(drop=True)
        return df.loc[~mask].reset_index(drop=True), confirm, mask, split_label(rep.column, values, len(confirm))
    return df, replicate, None, None


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



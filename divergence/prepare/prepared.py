"""The one preparation of a table for mining (in memory; the SQL engines' is
:func:`divergence.engines.engine_scan.prepare_sql`, with the same result): roles → rows to mine
and to confirm on → outcomes → attributes → cut points → bins → outcome tallies → compressed codes
and weights, with the notes and the params record. :func:`divergence.mining.mined.mine_prepared`
mines any :class:`Prepared` alike, so scan(), DuckDB, Spark and the model comparison share every
step after it.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from ..budget import ProgressCallback, progress_report
from ..data.column_rules import ScreenTimeout, screen_timeout_message
from ..data.columns import check_attributes, check_frame, default_attributes
from ..data.nested import check_supported
from ..errors import DivergenceBudgetError, DivergenceInputError
from ..settings import Roles, Settings, min_count_for
from ..vocabulary import ENGINES
from .compression import compress_outcomes
from .discretize import AttributeBins, Binning, discretize
from .freed_memory import release_reader_memory
from .grouping import fits_one_key, group_outcomes, narrowed
from .kept_rows import KeptRows
from .outcomes import Outcome, build_outcomes
from .replication_rows import ReplicationRows, given_rows, holdout_mask, split_label, split_mask
from .row_weights import aux_columns, metric_infos, outcome_weights
from .tallies import MetricInfo

__all__ = ["Prepared", "prepare", "table_params", "screened_attributes"]


@dataclass(frozen=True, eq=False)
class Prepared:
    """What the miner needs, from any source: items per (distinct) row and their tallies, with what
    the table records beside them. In-memory preparations also keep the rows' own codes and
    outcomes (bootstrap intervals, median baselines, slices measured by hand) and the rows to
    confirm on."""

    #: items per distinct row (or per row), one column per attribute: int8 when every attribute has at
    #: most 127 items (in-memory preparations), else int32
    codes: np.ndarray
    #: each row's tallies in the layout of :mod:`divergence.prepare.tallies`
    weights: np.ndarray
    bins: tuple[AttributeBins, ...]
    metrics: tuple[MetricInfo, ...]
    #: rows measured (those the tallies count)
    n_rows: int
    notes: tuple[str, ...]
    params: dict | None
    #: when the attribute screen started (the time limit counts it), or None when attributes were given
    started: float | None = None
    #: the measured rows' codes and outcomes (in-memory sources only)
    kept_rows: KeptRows | None = None
    #: the rows to confirm on (a holdout's, a split column's), or None
    replication: ReplicationRows | None = None
    #: the root's tallies when the rows come sorted (:mod:`divergence.prepare.grouping`): ``weights``
    #: summed in the order the rows first came, as the miner sums them; None: the miner sums them
    totals: np.ndarray | None = None


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


def prepare(
    data: pd.DataFrame,
    settings: Settings,
    *,
    outcomes: Sequence[Outcome] | None = None,
    replicate: pd.DataFrame | None = None,
    engine: str = "fast",
    progress: ProgressCallback | None = None,
    tallies: np.ndarray | None = None,
    reserved: Sequence[str] = (),
    role: str = "an outcome role",
    started: float | None = None,
) -> Prepared:
    """A table prepared for mining in memory, as ``settings`` say (see :func:`divergence.scan`).

    ``tallies``: each row's tallies given ready-made (the model comparison's paired tallies, in
    its own layout): no outcome is built, no replication or query reshape applies, and the rows are
    mined as they are. ``reserved``: columns that are roles of the caller (never attributes),
    ``role`` how an attribute naming a role is refused. ``started``: when the scan started (its time
    limit covers the attribute screen); default now."""
    started = time.monotonic() if started is None else started
    st = settings
    release_reader_memory()
    df = check_frame(data)
    if tallies is not None:
        return _prepare_given(df, st, np.asarray(tallies), reserved, role, started)
    df, replicate, split_held, label = _replication_rows(df, replicate, st)
    query_notes: list[str] = []
    query_params: dict = {}
    if st.roles.query is not None:  # ranking quality per query: one row per query (divergence.prepare.queries)
        df, replicate, st, query_notes, query_params = _by_query(df, replicate, st, started)
    roles, slicing, mining, stats = st.roles, st.slicing, st.mining, st.statistics
    if progress is not None:
        progress(progress_report("discretizing", 0))
    holdout = st.replication.share if st.replication.kind == "holdout" else None
    if holdout is not None and replicate is not None:
        raise DivergenceInputError("Give either a replication table or a holdout share, not both.")
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    held_out = None
    held_mask = split_held if st.roles.query is None else None  # a query scan's rows are its queries
    if holdout is not None:
        mask = holdout_mask(len(df), holdout, int(st.replication.seed or 0))  # the replication's own seed
        held_mask = mask
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
        from .queries import describe

        found = [dataclasses.replace(o, description=describe(o.name)) if o.name in query_params["metrics"] else o
                 for o in found]
    notes: list[str] = list(query_notes)
    attrs, screened = _attributes(df, st, list(roles.columns()) + list(reserved), role, started)
    notes += screened
    data_rows = None
    if slicing.binning == "tree":  # cut points chosen on some rows, every statistic on the others
        df, found, data_rows, cut_notes, tree_bins = _tree_split(df, found, attrs, slicing, mining, stats.seed)
        notes += cut_notes
        disc = discretize(df, attrs, bins=slicing.bins, quantile_bins=slicing.quantile_bins, binning="quantile",
                          cuts=tree_bins)
    else:
        disc = discretize(df, attrs, bins=slicing.bins, quantile_bins=slicing.quantile_bins, binning=cast(Binning, slicing.binning))
    notes += list(disc.notes)
    infos = metric_infos(found)
    params = table_params(st, metrics=[o.name for o in found], attributes=attrs, engine=engine)
    if query_params:
        params["query"] = query_params
    n_values = np.array([b.n_items for b in disc.bins], dtype=np.int64)
    # the rows' codes kept in 8 bits when every attribute has at most 127 items (the 32-bit ones let go)
    disc = dataclasses.replace(disc, codes=narrowed(disc.codes, n_values))
    totals = None
    if engine == "mlxtend":  # FP-growth counts rows itself: it needs every row, one by one
        codes_in, weights_in = disc.codes, np.column_stack(outcome_weights(found)[0])
    else:
        aux, aux_shift = aux_columns(found, infos)
        min_count = min_count_for(mining.min_support, len(df))
        if fits_one_key(n_values):  # sorted by one key per row: no growing tables, rows in the miner's order
            comp, totals = group_outcomes(disc.codes, n_values, min_count,
                                          [np.asarray(o.values, dtype=np.float64) for o in found],
                                          np.array([m.shift for m in infos]), aux, np.array(aux_shift, dtype=float),
                                          binary=[m.binary and m.shift == 0.0 for m in infos])
        else:
            comp = compress_outcomes(
                disc.codes, n_values, min_count,
                np.column_stack([o.values for o in found]), np.array([m.shift for m in infos]),
                np.column_stack(aux) if aux else np.empty((len(df), 0)), np.array(aux_shift, dtype=float))
        del aux
        codes_in, weights_in = comp.codes, comp.weights
    if held_out is not None:
        replicate = held_out
        label = f"held-out {holdout:.0%} of the rows ({len(held_out):,})"
    return Prepared(codes=codes_in, weights=weights_in, bins=tuple(disc.bins), metrics=tuple(infos), n_rows=len(df),
                    notes=tuple(notes), params=params, started=started if slicing.attributes is None else None,
                    totals=totals,
                    kept_rows=KeptRows(disc.codes, tuple(found), _positions(held_mask, data_rows),
                                       model=_model_columns(df, roles)),
                    replication=ReplicationRows(replicate, label, holdout) if replicate is not None else None)


def _model_columns(df: pd.DataFrame, roles) -> dict:
    """The target, prediction and score columns of the rows measured (those the roles name)."""
    return {role: df[col].to_numpy() for role, col in (("target", roles.target), ("prediction", roles.prediction),
                                                        ("score", roles.score)) if col is not None and col in df.columns}


def _prepare_given(df: pd.DataFrame, st: Settings, tallies: np.ndarray, reserved: Sequence[str], role: str,
                   started: float) -> Prepared:
    """A table whose rows' tallies are given: its attributes and bins, the rows mined as they are."""
    if len(tallies) != len(df):
        raise DivergenceInputError(f"The tallies have {len(tallies)} rows for {len(df)} rows of data.")
    slicing = st.slicing
    attrs, notes = _attributes(df, st, list(st.roles.columns()) + list(reserved), role, started)
    if slicing.binning == "tree":
        raise DivergenceInputError(
            "Tree binning chooses cut points from one model's outcome on rows it then sets aside: compare two models "
            "on quantile, uniform or explicit bins (a tree scan's cut points can be given as bins).")
    disc = discretize(df, attrs, bins=slicing.bins, quantile_bins=slicing.quantile_bins, binning=cast(Binning, slicing.binning))
    notes += list(disc.notes)
    return Prepared(codes=disc.codes, weights=tallies, bins=tuple(disc.bins), metrics=(), n_rows=len(df),
                    notes=tuple(notes), params=None, started=started if slicing.attributes is None else None,
                    kept_rows=KeptRows(disc.codes, None))


def _attributes(df: pd.DataFrame, st: Settings, taken: Sequence[str], role: str,
                started: float) -> tuple[list[str], list[str]]:
    """The attributes to slice by and the screen's notes: those given, checked, or the screen's."""
    if st.slicing.attributes is None:
        attrs, notes = screened_attributes(df, taken, st.roles, st.mining.time_limit, started)
    else:
        attrs, notes = check_attributes(st.slicing.attributes, df.columns, taken, role=role), []
        check_supported(df, attrs)
    if not attrs:
        raise DivergenceInputError("There is no attribute column to slice by.")
    return attrs, notes


def screened_attributes(df: pd.DataFrame, taken: Sequence[str], roles: Roles, time_limit: float | None,
                        started: float) -> tuple[list[str], list[str]]:
    """The default attributes and their notes, the screen inside the scan's time limit (counted
    from ``started``): past it, one line that says how far it got and what to do."""
    try:
        return default_attributes(df, taken, **roles.screen_keywords(),
                                  deadline=None if not time_limit else started + float(time_limit))
    except ScreenTimeout as out:
        raise DivergenceBudgetError(screen_timeout_message(out.where, float(time_limit or 0.0))) from None


def _by_query(df: pd.DataFrame, replicate: pd.DataFrame | None, st: Settings, started: float):
    """A query-level ranking scan as a scan of one row per query: that table (its attributes and
    each metric as a column), the replication table likewise, the settings that scan it (the
    metrics as outcome columns, the attributes those constant within a query), notes, and what the
    table records of the query roles."""
    from .queries import canonical, query_table

    roles, slicing = st.roles, st.slicing
    metrics = [canonical(m) for m in (roles.metrics or ())] or None
    candidates: list[str] = []
    notes: list[str] = []
    if slicing.attributes is None:
        taken = roles.columns()
        candidates, notes = screened_attributes(df, taken, roles, st.mining.time_limit, started)
    kw: dict[str, Any] = dict(query=roles.query, relevance=roles.relevance, rank=roles.rank, rank_by=roles.rank_by,
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
    from .cutpoints import choose_cuts, cut_mask, cut_note

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
    as ``replicate`` (here or to assess) or in the replication itself (``rows``, with its name); a
    holdout is drawn later, from the replication's seed."""
    rep = st.replication
    if rep.kind == "file" and rep.rows is not None:
        return df, given_rows(rep, replicate), None, rep.label
    if rep.kind == "split":
        if replicate is not None:
            raise DivergenceInputError("Give either a replication table or a split column to confirm on, not both.")
        values = rep.confirm_values or ()
        column = str(rep.column)
        mask = split_mask(df, column, values)
        confirm = df.loc[mask].reset_index(drop=True)
        return df.loc[~mask].reset_index(drop=True), confirm, mask, split_label(column, values, len(confirm))
    return df, replicate, None, None


def _positions(held_mask: np.ndarray | None, data_rows: np.ndarray | None) -> np.ndarray | None:
    """Positions, in the table given to scan(), of the rows a result measures (None: all of them)."""
    if held_mask is None and data_rows is None:
        return None
    base = None if held_mask is None else np.arange(len(held_mask))[~held_mask]
    if data_rows is None:
        return base
    return data_rows if base is None else base[data_rows]

"""scan(): validate -> outcomes -> discretize -> compress and mine -> statistics -> SliceTable."""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .columns import NEAR_UNIQUE_SHARE, screen_attributes
from .discretize import AttributeBins, BinSpec, Binning, discretize
from .errors import DivergenceInputError
from .mining import (
    ENGINES,
    MAX_SLICES,
    MEMORY_LIMIT,
    TIME_LIMIT,
    check_budget,
    compress_outcomes,
    min_count_for,
    mine,
    slice_bytes,
)
from .outcomes import (
    CLASSIFICATION_METRICS,
    REGRESSION_METRICS,
    Outcome,
    classification_outcomes,
    column_outcome,
    ranking_outcome,
    regression_outcomes,
    _canonical,
)
from .stats import beta_t, fisher_exact_p, mean_difference_test, outcome_skewness, rest_skew, slice_means, welch_t
from .table import MetricInfo, SliceTable

__all__ = ["scan", "build_outcomes", "default_attributes", "role_columns", "NEAR_UNIQUE_SHARE"]

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
    :func:`divergence.columns.screen_attributes`); with the notes saying which and why."""
    screen = screen_attributes(df, exclude, target=target, prediction=prediction, score=score,
                               threshold=threshold)
    return screen.attributes, screen.notes


def build_outcomes(
    df: pd.DataFrame,
    *,
    target: str | None = None,
    prediction: str | None = None,
    score: str | None = None,
    threshold: float = 0.5,
    positive: object = None,
    metrics: Sequence[str] | str | None = None,
    outcome: str | Sequence[str] | None = None,
    rank: str | None = None,
    rank_by: str | None = None,
    ascending: bool = False,
    gamma: str | None = None,
    regression: bool = False,
) -> list[Outcome]:
    """The outcomes a scan measures, from the column roles (see :func:`scan`)."""
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    metrics = [_canonical(m) for m in (metrics or [])]
    out: list[Outcome] = []
    if outcome is not None:
        for col in ([outcome] if isinstance(outcome, str) else list(outcome)):
            out.append(column_outcome(df, col))
    if rank is not None or rank_by is not None:
        out.append(ranking_outcome(df, rank=rank, rank_by=rank_by, ascending=ascending,
                                   gamma=gamma or "dcg"))
    if target is not None or prediction is not None or metrics:
        reg = [m for m in metrics if m in REGRESSION_METRICS]
        cls = [m for m in metrics if m not in REGRESSION_METRICS]
        if regression or (reg and not cls):
            if cls:
                raise DivergenceInputError(
                    f"Metric {cls[0]!r} is not a regression metric; choose from {', '.join(REGRESSION_METRICS)}."
                )
            if target is None or prediction is None:
                raise DivergenceInputError("Regression metrics need a target and a prediction column.")
            out += regression_outcomes(df, target=target, prediction=prediction,
                                       metrics=reg or ["abs_error"])
        else:
            if reg:
                raise DivergenceInputError(
                    f"Metric {reg[0]!r} is a regression metric; mixing it with classification "
                    f"metrics ({', '.join(cls)}) needs two scans."
                )
            if target is None:
                raise DivergenceInputError("Classification metrics need a target column.")
            out += classification_outcomes(df, target=target, positive=positive, prediction=prediction,
                                           score=score, threshold=threshold, metrics=cls or ["fpr", "fnr"])
    if not out:
        raise DivergenceInputError(
            "Nothing to measure: give a target and a prediction (classification or regression), "
            "an outcome column, or a rank or score to rank by."
        )
    names = [o.name for o in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise DivergenceInputError(f"Metric {sorted(dup)[0]!r} is asked for twice.")
    return out


def _check_frame(df: object) -> pd.DataFrame:
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


def check_min_support(min_support: object) -> float:
    """min_support as a float in (0, 1], or a clear error."""
    try:
        s = float(min_support)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DivergenceInputError(f"min_support must be a number in (0, 1]; got {min_support!r}.") from None
    if not (0.0 < s <= 1.0):
        raise DivergenceInputError(f"min_support must be in (0, 1]; got {min_support!r}.")
    return s


def metric_infos(outcomes: Sequence[Outcome]) -> list[MetricInfo]:
    """What each tally column will hold (see :func:`outcome_weights`), shifts included."""
    infos: list[MetricInfo] = []
    for o in outcomes:
        v = o.values
        defined = ~np.isnan(v)
        shift = 0.0 if o.binary else float(np.mean(v[defined]))
        infos.append(MetricInfo(name=o.name, description=o.description, binary=o.binary, shift=shift,
                                baseline=o.baseline, skew=0.0 if o.binary else outcome_skewness(v)))
    aux = 1 + 3 * len(outcomes)
    for k, o in enumerate(outcomes):
        if o.baseline in ("mean", "majority", "base_rate") and o.target is not None:
            y = _aux_target(o)
            d = ~np.isnan(y)
            ys = float(np.mean(y[d])) if d.any() else 0.0
            infos[k] = dataclasses.replace(infos[k], aux=aux, target_shift=ys)
            aux += 2
    for k, o in enumerate(outcomes):
        if not infos[k].binary:
            infos[k] = dataclasses.replace(infos[k], cube=aux)
            aux += 2
    return infos


def aux_columns(outcomes: Sequence[Outcome], infos: Sequence[MetricInfo]) -> tuple[list[np.ndarray], list[float]]:
    """The per-row columns tallied after the metrics' own, each as a sum and a sum of squares,
    with their shifts, in tally order: the targets of additive baselines (``MetricInfo.aux``),
    then each real outcome's cubed shifted value (``MetricInfo.cube``; NaN where undefined)."""
    cols, shifts = [], []
    for o, m in zip(outcomes, infos):
        if m.aux >= 0:
            cols.append(_aux_target(o))
            shifts.append(m.target_shift)
    for o, m in zip(outcomes, infos):
        if m.cube >= 0:
            cols.append((np.asarray(o.values, dtype=float) - m.shift) ** 3)
            shifts.append(0.0)
    return cols, shifts


def _aux_target(o: Outcome) -> np.ndarray:
    """The target where the metric is defined (NaN elsewhere)."""
    return np.where(np.isnan(o.values), np.nan, o.target)


def outcome_weights(outcomes: Sequence[Outcome]) -> tuple[list[np.ndarray], list[MetricInfo]]:
    """Per-row tally columns and what they hold.

    Column 0 is the row count; then per outcome its defined count, shifted sum and shifted
    sum of squares (columns 1+3k, 2+3k, 3+3k); then, for each error metric whose slice
    baseline is additive (mean target, majority class, base rate), the shifted sum and sum
    of squares of its target over the rows where the metric is defined (``MetricInfo.aux``).
    """
    infos = metric_infos(outcomes)
    n = len(outcomes[0].values) if outcomes else 0
    cols: list[np.ndarray] = [np.ones(n)]
    for o, m in zip(outcomes, infos):
        d = ~np.isnan(o.values)
        x = np.where(d, o.values - m.shift, 0.0)
        cols += [d.astype(np.float64), x, x * x]
    for y, shift in zip(*aux_columns(outcomes, infos)):
        yc = np.where(np.isnan(y), 0.0, y - shift)
        cols += [yc, yc * yc]
    return cols, infos


def metric_columns(tallies: np.ndarray, metrics: Sequence[MetricInfo], n_rows: int) -> dict:
    """Support, count and each metric's outcome, divergence, t and p from the tallies."""
    count = tallies[:, 0]
    cols: dict = {"support": count / float(n_rows), "count": np.rint(count).astype(np.int64)}
    for k, m in enumerate(metrics):
        n, s, q = tallies[:, 1 + 3 * k], tallies[:, 2 + 3 * k], tallies[:, 3 + 3 * k]
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
    *,
    target: str | None = None,
    prediction: str | None = None,
    score: str | None = None,
    threshold: float = 0.5,
    positive: object = None,
    metrics: Sequence[str] | str | None = None,
    outcome: str | Sequence[str] | None = None,
    rank: str | None = None,
    rank_by: str | None = None,
    ascending: bool = False,
    gamma: str | None = None,
    regression: bool = False,
    outcomes: Sequence[Outcome] | None = None,
    attributes: Sequence[str] | None = None,
    bins: Mapping[str, BinSpec] | None = None,
    quantile_bins: int = 3,
    binning: Binning = "quantile",
    min_support: float = 0.05,
    max_length: int | None = None,
    engine: str = "fast",
    delta: float | Mapping[str, float] | None = None,
    confidence: float = 0.95,
    correction: str = "bh",
    family: str = "scan",
    bootstrap: int = 0,
    seed: int = 0,
    top_k: int | None = None,
    sort_by: str | None = None,
    replicate: pd.DataFrame | None = None,
    holdout: float | None = None,
    exploratory: bool = True,
    exhaustive: bool = False,
    max_slices: int = MAX_SLICES,
    time_limit: float | None = TIME_LIMIT,
    progress: Callable[[dict], None] | None = None,
) -> SliceTable:
    """Every slice with support >= ``min_support``, with its outcome, divergence, t and p.

    Parameters
    ----------
    data : the table, one row per example.
    target, prediction, score, threshold, positive : a binary classifier (``positive``
        names the positive label; predictions as labels, or a score and a threshold) or,
        with ``regression=True`` or regression metrics, a regressor.
    metrics : metric names, e.g. ``["fpr", "fnr"]`` or ``["abs_error"]``.
    outcome : a numeric column (or several) used as the outcome as it is.
    rank, rank_by, ascending, gamma : a ranking, from a rank column (1 = best) or from
        a score (higher is better unless ``ascending``), valued by ``gamma``
        (``topk:K``, ``power:A`` or ``dcg``); the metric is called ``gamma``.
    outcomes : ready-made :class:`Outcome` objects (added to the above).
    attributes : the columns to slice by; default every column not used above, less row
        numbers, identifiers, person names, dates, free text, constant and all-missing columns
        and columns that leak the target, prediction or score (see
        :func:`divergence.columns.screen_attributes`; the result's notes say which and why).
    bins, quantile_bins, binning : how numeric attributes are binned (see
        :func:`divergence.discretize.discretize`).
    min_support : the smallest share of rows a slice may hold, in (0, 1].
    max_length : the most items in an itemset (default: no limit).
    engine : ``"fast"`` (the default miner) or ``"mlxtend"`` (FP-growth, slow, reference).
    delta, confidence, correction, family, bootstrap, seed, top_k, sort_by, replicate, exploratory :
        the worst-slice statistics, see :func:`divergence.assess`.
    holdout : a share of the rows (seeded by ``seed``) held out of mining and used to
        replicate every slice: estimates free of the winner's curse.
    exhaustive : False (default): each distinct set of rows is one slice, described by its
        shortest itemset (ties: the first in column order); an item with the same rows as
        another, or on every row of its parent, adds nothing. True: every itemset above the
        support, as DivExplorer lists them (an item duplicating another doubles the table).
    max_slices, time_limit : the budget (default 500,000 slices, fewer when their
        statistics would pass 2 GiB, and 60 seconds of mining). Past it the table is complete
        up to the longest length that fits and its notes say so (``complete_length``); when
        not even single items fit, :class:`~divergence.errors.DivergenceBudgetError`.
    progress : called with a dict ``{"stage", "slices", "length", "fraction"}`` at each
        stage ("discretizing", "mining", "statistics", "done") and every quarter second of
        mining (``slices`` mined so far, ``length`` the longest being completed or None,
        ``fraction`` an estimate of the mining done or None).
    """
    df = _check_frame(data)
    from .assess import _check as _check_assess

    max_slices, time_limit = check_budget(max_slices, time_limit)
    _tell(progress, "discretizing")
    _check_assess(confidence, correction, bootstrap, holdout, top_k, family, delta)
    if holdout is not None and replicate is not None:
        raise DivergenceInputError("Give either a replication table or a holdout share, not both.")
    held_out = None
    if holdout is not None:
        rng = np.random.default_rng(seed)
        mask = rng.random(len(df)) < float(holdout)
        if mask.all() or not mask.any():
            raise DivergenceInputError(f"A holdout of {holdout:g} leaves no rows on one side of {len(df)}.")
        held_out = df[mask].reset_index(drop=True)
        df = df[~mask].reset_index(drop=True)
    s = check_min_support(min_support)
    if engine not in ENGINES:
        raise DivergenceInputError(f"Unknown engine {engine!r}; choose from {', '.join(ENGINES)}.")
    if max_length is not None and (int(max_length) != max_length or max_length < 1):
        raise DivergenceInputError(f"max_length must be a positive integer; got {max_length!r}.")
    roles_given = any(x is not None for x in (target, prediction, outcome, rank, rank_by)) or bool(metrics)
    found: list[Outcome] = []
    if outcomes is None or roles_given:
        found = build_outcomes(df, target=target, prediction=prediction, score=score, threshold=threshold,
                               positive=positive, metrics=metrics, outcome=outcome, rank=rank,
                               rank_by=rank_by, ascending=ascending, gamma=gamma, regression=regression)
    found += list(outcomes or [])
    for o in found:
        if len(o.values) != len(df):
            raise DivergenceInputError(
                f"Outcome '{o.name}' has {len(o.values)} values for {len(df)} rows."
            )
    roles = role_columns(target=target, prediction=prediction, score=score, outcome=outcome,
                         rank=rank, rank_by=rank_by)
    notes: list[str] = []
    if attributes is None:
        # an outcome column is checked for leakage as a target is, a score to rank by as a score
        single = outcome if isinstance(outcome, str) else (outcome[0] if outcome is not None and len(outcome) == 1
                                                            else None)
        attrs, notes = default_attributes(df, roles, target=target if target is not None else single,
                                          prediction=prediction,
                                          score=score if score is not None else (rank_by or rank),
                                          threshold=threshold if prediction is None and score is not None else None)
    else:
        attrs = [attributes] if isinstance(attributes, str) else list(attributes)
        missing = [a for a in attrs if a not in df.columns]
        if missing:
            raise DivergenceInputError(f"Attribute column '{missing[0]}' is not in the data.")
        if len(set(attrs)) != len(attrs):
            raise DivergenceInputError("An attribute column is named twice.")
        clash = [a for a in attrs if a in roles]
        if clash:
            raise DivergenceInputError(
                f"Column '{clash[0]}' is used as an outcome role and cannot also be an attribute."
            )
    if not attrs:
        raise DivergenceInputError("There is no attribute column to slice by.")
    disc = discretize(df, attrs, bins=bins, quantile_bins=quantile_bins, binning=binning)
    notes += list(disc.notes)
    infos = metric_infos(found)
    params = dict(target=target, prediction=prediction, score=score, threshold=threshold,
                  positive=positive, metrics=[o.name for o in found], outcome=outcome, rank=rank,
                  rank_by=rank_by, ascending=ascending, gamma=gamma, regression=regression,
                  attributes=list(attrs), bins={k: (v if isinstance(v, (int, str)) else list(v))
                                                for k, v in (bins or {}).items()},
                  quantile_bins=quantile_bins, binning=binning, min_support=s,
                  max_length=max_length, engine=engine, exhaustive=bool(exhaustive))
    n_values = np.array([b.n_items for b in disc.bins], dtype=np.int64)
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
                            n_rows=len(df), min_support=s, max_length=max_length, engine=engine,
                            notes=notes, params=params, exhaustive=exhaustive, max_slices=max_slices,
                            time_limit=time_limit, progress=progress)
    table = dataclasses.replace(table, row_codes=disc.codes, outcomes=tuple(found))
    from .assess import assess

    _tell(progress, "statistics", len(table) - 1)
    label = None
    if held_out is not None:
        replicate = held_out
        label = f"held-out {holdout:.0%} of the rows ({len(held_out):,})"
    out = assess(table, delta=delta, confidence=confidence, correction=correction, family=family,
                 bootstrap=bootstrap, seed=seed, top_k=top_k, sort_by=sort_by, replicate=replicate,
                 replication_label=label, holdout=holdout, exploratory=exploratory)
    _tell(progress, "done", len(out) - 1)
    return out


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
    min_support: float = 0.05,
    max_length: int | None = None,
    engine: str = "fast",
    notes: Sequence[str] = (),
    params: dict | None = None,
    exhaustive: bool = False,
    max_slices: int = MAX_SLICES,
    time_limit: float | None = TIME_LIMIT,
    progress: Callable[[dict], None] | None = None,
) -> SliceTable:
    """Mine and measure from (possibly compressed) item codes and tallies: the step that needs
    no per-row data, so an engine holding the rows elsewhere (DuckDB, Spark) can hand over
    its GROUP BY. ``weights`` follows :func:`outcome_weights`' layout; rows with identical
    codes are merged. The result keeps no rows: bootstrap intervals and median baselines need
    :func:`scan` on a DataFrame. ``exhaustive``, ``max_slices``, ``time_limit`` and
    ``progress`` as in :func:`scan`.
    """
    s = check_min_support(min_support)
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if n_rows is None:
        n_rows = int(round(weights[:, 0].sum()))
    n_values = np.array([b.n_items for b in bins], dtype=np.int64)
    max_slices, time_limit = check_budget(max_slices, time_limit)
    cap = effective_max_slices(max_slices, len(bins), weights.shape[1], len(metrics))
    mined = mine(codes, weights, n_values, min_support=s, max_length=max_length, engine=engine,
                 exhaustive=exhaustive, max_slices=cap, time_limit=time_limit, progress=progress,
                 attribute_names=[b.name for b in bins])
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
        complete_length=mined.complete_length,
    )
    if parent is None:
        table = dataclasses.replace(table, parent=_parents(table))
    return table


def _canonical_order(codes: np.ndarray, tallies: np.ndarray, parent: np.ndarray,
                     n_values: np.ndarray):
    """Sort itemsets by length, then by their items in attribute order (engine-independent)."""
    n, a = codes.shape
    length = (codes >= 0).sum(axis=1)
    digits = np.where(codes >= 0, codes, n_values[None, :]).astype(np.int64)
    radix = n_values + 1
    if a and float(np.prod(radix.astype(float))) * (a + 1) < 2.0 ** 62:
        key = length.astype(np.int64)  # length first, then the items: one argsort of one key
        for j in range(a):
            key = key * radix[j] + digits[:, j]
        order = np.argsort(key, kind="stable")
    else:
        order = np.lexsort(tuple(digits[:, j] for j in range(a - 1, -1, -1)) + (length,))
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

"""The per-row tally columns of a scan's outcomes, and what each column holds (:class:`MetricInfo`).

Each row carries its tallies as weights in the layout of :mod:`divergence.prepare.tallies`: a count,
then per metric its defined count, shifted sum and shifted sum of squares, then the auxiliary
columns (the targets of error metrics with an additive baseline, then the cubes of real-valued
outcomes). Adding rows' weights gives a slice's tallies, so the same columns serve the compiled
compression, the reference miner, a slice measured by hand and the replication walk.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .outcomes import Outcome
from .tallies import PER_AUX, MetricInfo, aux_start

__all__ = ["ADDITIVE_BASELINES", "metric_infos", "place_aux", "aux_target", "aux_columns", "row_weights",
           "outcome_weights", "outcome_skewness"]

#: slice baselines whose error follows from additive tallies of the target
ADDITIVE_BASELINES = ("mean", "majority", "base_rate", "entropy")


def outcome_skewness(values: np.ndarray) -> float:
    """Skewness (third standardized central moment) of the defined values; 0 for a constant."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size < 3:
        return 0.0
    c = v - v.mean()
    m2 = float(np.mean(c * c))
    if m2 <= 0:
        return 0.0
    return float(np.mean(c * c * c) / m2 ** 1.5)


def place_aux(infos: Sequence[MetricInfo], target_shifts: Sequence[float | None]) -> list[MetricInfo]:
    """``infos`` with their auxiliary tally columns placed: each metric with an additive baseline
    and a target (``target_shifts[k]`` not None: the shift of its target) gets ``aux``, then
    each real-valued metric ``cube``."""
    out = list(infos)
    at = aux_start(len(out))
    for k, ts in enumerate(target_shifts):
        if ts is not None and out[k].baseline in ADDITIVE_BASELINES:
            out[k] = dataclasses.replace(out[k], aux=at, target_shift=float(ts))
            at += PER_AUX
    for k, m in enumerate(out):
        if not m.binary:
            out[k] = dataclasses.replace(m, cube=at)
            at += PER_AUX
    return out


def metric_infos(outcomes: Sequence[Outcome]) -> list[MetricInfo]:
    """What each tally column will hold (see :func:`outcome_weights`), shifts included."""
    infos: list[MetricInfo] = []
    shifts: list[float | None] = []
    for o in outcomes:
        v = o.values
        defined = ~np.isnan(v)
        shift = 0.0 if o.binary else float(np.mean(v[defined]))
        infos.append(MetricInfo(name=o.name, description=o.description, binary=o.binary, shift=shift,
                                baseline=o.baseline, skew=0.0 if o.binary else outcome_skewness(v)))
        ts = None
        if o.baseline in ADDITIVE_BASELINES and o.target is not None:
            y = aux_target(o)
            d = ~np.isnan(y)
            ts = float(np.mean(y[d])) if d.any() else 0.0
        shifts.append(ts)
    return place_aux(infos, shifts)


def aux_target(o: Outcome) -> np.ndarray:
    """The target where the metric is defined (NaN elsewhere)."""
    assert o.target is not None  # only a metric with a target has an auxiliary column (place_aux)
    return np.where(np.isnan(o.values), np.nan, o.target)


def aux_columns(outcomes: Sequence[Outcome], infos: Sequence[MetricInfo]) -> tuple[list[np.ndarray], list[float]]:
    """The per-row columns tallied after the metrics' own, each as a sum and a sum of squares,
    with their shifts, in tally order: the targets of additive baselines (``MetricInfo.aux``),
    then each real outcome's cubed shifted value (``MetricInfo.cube``; NaN where undefined)."""
    cols, shifts = [], []
    for o, m in zip(outcomes, infos):
        if m.aux >= 0:
            cols.append(aux_target(o))
            shifts.append(m.target_shift)
    for o, m in zip(outcomes, infos):
        if m.cube >= 0:
            cols.append((np.asarray(o.values, dtype=float) - m.shift) ** 3)
            shifts.append(0.0)
    return cols, shifts


def row_weights(outcomes: Sequence[Outcome], infos: Sequence[MetricInfo], with_aux: bool = True) -> list[np.ndarray]:
    """Per-row tally columns of ``outcomes`` laid out as ``infos`` say (without the auxiliary
    columns when ``with_aux`` is False: count and the metrics' own columns only)."""
    n = len(outcomes[0].values) if outcomes else 0
    cols: list[np.ndarray] = [np.ones(n)]
    for o, m in zip(outcomes, infos):
        d = ~np.isnan(o.values)
        x = np.where(d, o.values - m.shift, 0.0)
        cols += [d.astype(np.float64), x, x * x]
    if with_aux:
        for y, shift in zip(*aux_columns(outcomes, infos)):
            yc = np.where(np.isnan(y), 0.0, y - shift)
            cols += [yc, yc * yc]
    return cols


def outcome_weights(outcomes: Sequence[Outcome]) -> tuple[list[np.ndarray], list[MetricInfo]]:
    """Per-row tally columns and what they hold (:func:`metric_infos`, :func:`row_weights`)."""
    infos = metric_infos(outcomes)
    return row_weights(outcomes, infos), infos

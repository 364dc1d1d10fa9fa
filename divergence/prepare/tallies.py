"""The tally layout: what each column of a tally matrix holds (one row per distinct row of data
or per itemset; adding two rows' tallies gives the tallies of their union).

Column 0 counts the rows. Then, per metric k, three columns: the rows where the metric is
defined, the sum of its shifted outcome and the sum of squares (:func:`metric_columns`). Then
the auxiliary columns, two each (a shifted sum and a sum of squares, from :func:`aux_start`):
first the targets of error metrics with an additive baseline (``MetricInfo.aux``), then the
cubed shifted outcome of each real-valued metric (``MetricInfo.cube``, for the skew guard).

The kernels use the constants (numba freezes them into the compiled code); Python code uses
the functions. Bootstrap weights have a layout of their own (:func:`boot_columns`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MetricInfo", "COUNT", "METRIC0", "PER_METRIC", "DEFINED", "SUM", "SQUARES", "PER_AUX", "BOOT_BLOCKS", "metric_columns",
           "metric_tallies", "aux_start", "width", "boot_columns"]

#: the row count
COUNT = 0
#: the first metric's first column, and how many columns each metric has
METRIC0 = 1
PER_METRIC = 3
#: a metric's columns, from its first: defined count, shifted sum, shifted sum of squares
DEFINED, SUM, SQUARES = 0, 1, 2
#: columns per auxiliary column: shifted sum, shifted sum of squares
PER_AUX = 2
#: bootstrap weights per distinct row: per metric, a block of replicate weight sums, then a block
#: of replicate weighted outcome sums
BOOT_BLOCKS = 2


def metric_columns(k: int) -> tuple[int, int, int]:
    """Metric k's columns: its defined count, shifted sum and shifted sum of squares."""
    first = METRIC0 + PER_METRIC * k
    return first + DEFINED, first + SUM, first + SQUARES


def metric_tallies(tallies: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Metric k's defined count, shifted sum and shifted sum of squares, one value per row."""
    n, s, q = metric_columns(k)
    return tallies[:, n], tallies[:, s], tallies[:, q]


def aux_start(n_metrics: int) -> int:
    """The first auxiliary column after ``n_metrics`` metrics."""
    return METRIC0 + PER_METRIC * n_metrics


def width(n_metrics: int, n_aux: int) -> int:
    """Columns of a tally matrix with ``n_metrics`` metrics and ``n_aux`` auxiliary columns."""
    return aux_start(n_metrics) + PER_AUX * n_aux


def boot_columns(k: int, replicates: int) -> tuple[slice, slice]:
    """Metric k's columns in the bootstrap weights (per distinct row): ``replicates`` sums of
    Poisson weights, then ``replicates`` sums of weighted outcomes."""
    start = BOOT_BLOCKS * k * replicates
    return slice(start, start + replicates), slice(start + replicates, start + 2 * replicates)


@dataclass(frozen=True)
class MetricInfo:
    """What a metric column means, and what is needed to recompute its statistics."""

    name: str
    description: str
    binary: bool
    #: the outcome is stored shifted by this value in the tallies (numerical care)
    shift: float = 0.0
    #: slice baseline kind for error metrics ('mean', 'median', 'majority', 'base_rate')
    baseline: str | None = None
    #: tally column of the target's shifted sum (then its sum of squares), or -1
    aux: int = -1
    #: the target is stored shifted by this value in those columns
    target_shift: float = 0.0
    #: the outcome's skewness over the whole dataset (NaN: unknown); real outcomes only, it
    #: decides the side of the skew guard in :func:`divergence.stats.stats.mean_difference_test`
    skew: float = float("nan")
    #: tally column of the sum of the cubed shifted outcome over defined rows (then the sum of
    #: its square), or -1: real outcomes, for the skewness of the rows outside each slice
    cube: int = -1

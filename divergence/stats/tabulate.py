"""Each mined slice measured (support, each metric's outcome, divergence, t and p: :func:`measure`)
and the progress stages told on the way. The mined table itself is the mining room's
(:func:`divergence.mining.mined.mine_prepared`); the in-memory scan, DuckDB, Spark and a typed
slice all pass through both, the model comparison through the first."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..budget import ProgressCallback, progress_report
from ..prepare.tallies import COUNT, metric_tallies
from ..table import MetricInfo, SliceTable
from .stats import beta_t, fisher_exact_p, mean_difference_test, rest_skew, slice_means, welch_t

__all__ = ["measure", "measure_columns", "tell"]


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


def tell(progress: ProgressCallback | None, stage: str, slices: int = 0) -> None:
    """A stage change, told to the caller's progress callback."""
    if progress is not None:
        progress(progress_report(stage, int(slices), fraction=1.0 if stage == "done" else None))


def measure(table: SliceTable) -> SliceTable:
    """The mined table (:func:`divergence.mining.mined.mine_table`) with each metric's outcome,
    divergence, t and p beside its support and count."""
    return dataclasses.replace(table, columns=measure_columns(table.tallies, table.metrics, table.n_rows))

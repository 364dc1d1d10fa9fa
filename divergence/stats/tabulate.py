"""Each mined slice measured (support, each metric's outcome, divergence, t and p: :func:`measure`),
what the table records of its settings (:func:`table_params`) and the progress stages told on
the way. The mined table itself is the mining room's (:func:`divergence.mining.mined.mine_table`);
the in-memory scan, DuckDB, Spark, the model comparison and a typed slice all pass through both."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from ..budget import ProgressCallback, progress_report
from ..prepare.tallies import COUNT, metric_tallies
from ..settings import Settings
from ..table import MetricInfo, SliceTable
from .stats import beta_t, fisher_exact_p, mean_difference_test, rest_skew, slice_means, welch_t

__all__ = ["measure", "measure_columns", "table_params", "tell"]


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


def measure(table: SliceTable) -> SliceTable:
    """The mined table (:func:`divergence.mining.mined.mine_table`) with each metric's outcome,
    divergence, t and p beside its support and count."""
    return dataclasses.replace(table, columns=measure_columns(table.tallies, table.metrics, table.n_rows))

"""The replication step of the assessment: the rows every slice is re-measured on (given, or kept
by :func:`divergence.mine`; one row per query for a table of queries), and each slice's re-measured
value, divergence and interval there, and whether it replicated (:func:`replication_columns`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..prepare.queries import query_table
from ..settings import Replication
from .slice_tests import DivergenceTest
from .stats import t_interval, wilson_interval

__all__ = ["replication_input", "replication_columns"]


def replication_input(table, replicate: pd.DataFrame | None, label: str | None,
                       holdout: float | None) -> tuple[pd.DataFrame | None, str | None, float | None]:
    """The rows to re-measure every slice on, their name and the holdout's share: those given, else
    those :func:`divergence.mine` kept in the table (one row per query for a table of queries)."""
    if replicate is None and table.replication is not None:  # kept by mine()
        replicate, label, holdout = table.replication.rows, table.replication.label, table.replication.holdout
    elif replicate is not None and (table.params or {}).get("query"):  # rows, for a table of queries
        replicate = _per_query(table, replicate)
    if holdout is not None:
        holdout = Replication(kind="holdout", share=holdout).share
    return replicate, label, holdout


def _per_query(table, replicate: pd.DataFrame) -> pd.DataFrame:
    """A query-level table's replication rows as one row per query, as mine() turns its own (unless
    they are that already: every metric a column)."""
    q = table.params["query"]
    if set(q["metrics"]) <= set(getattr(replicate, "columns", ())):
        return replicate
    rq = query_table(replicate, query=q["query"], relevance=q["relevance"], rank=q["rank"], rank_by=q["rank_by"],
                     ascending=q["ascending"], metrics=q["metrics"], attributes=list(table.attributes), candidates=())
    return rq.frame.assign(**rq.values)


def replication_columns(cols, name, m, rem, significant, confidence, others_significant=0) -> np.ndarray:
    """Re-measured value, divergence and interval of every slice on the replication data, and
    whether it replicated: same direction, and the slice-against-rest test there significant
    at the Bonferroni level over the slices being confirmed (those significant here)."""
    n, s, q = rem.n[name], rem.s[name], rem.q[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n > 0, m.shift + s / np.where(n > 0, n, 1), np.nan)
    overall = value[0]
    n_confirm = max(int(significant[1:].sum()) + int(others_significant), 1)
    level = 1.0 - (1.0 - confidence) / n_confirm
    if m.binary:
        low, high = wilson_interval(np.rint(s), n, level)
    else:
        low, high = t_interval(n, s, q, m.shift, level)
    test = DivergenceTest.from_tallies(n, s, q, m, m.skew)
    d_low, d_high = test.interval(level)
    div = cols[f"{name}_divergence"]
    same_direction = np.sign(value - overall) == np.sign(div)
    excludes = (d_low > 0) | (d_high < 0)
    replicated = same_direction & excludes & (n > 0)
    replicated[0] = True
    cols[f"{name}_replicated_value"] = value
    cols[f"{name}_replicated_divergence"] = value - overall
    cols[f"{name}_replicated_ci_low"] = low
    cols[f"{name}_replicated_ci_high"] = high
    cols[f"{name}_replicated"] = replicated
    return replicated


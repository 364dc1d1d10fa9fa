"""Re-measuring mined slices on another table: same columns, same bins, same outcomes.

A second period, another split or the next evaluation file: each slice's rows there are
the rows whose items match (bins and categories as in the original scan), and the slice's
outcome is re-measured on them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.column_kinds import date_values, is_numeric
from ..errors import DivergenceInputError
from ..mining.lattice import walk_order, walk_tallies
from ..prepare.discretize import AttributeBins, category_label, numeric_values, period_labels
from ..prepare.outcomes import build_outcomes
from ..prepare.row_weights import row_weights
from ..prepare.tallies import COUNT, metric_tallies
from ..settings import Roles

if TYPE_CHECKING:
    from ..table import SliceTable

__all__ = ["apply_bins", "remeasure", "Remeasured"]


def apply_bins(df: pd.DataFrame, bins: tuple[AttributeBins, ...]) -> np.ndarray:
    """Item codes of the rows of ``df`` under existing bins; -1 where a value has no item.

    A category the original data did not have, or a numeric value where the original column
    was categorical, matches no item of that attribute (the row still counts elsewhere).
    """
    codes = np.full((len(df), len(bins)), -1, dtype=np.int32)
    for a, b in enumerate(bins):
        if b.name not in df.columns:
            raise DivergenceInputError(f"Column '{b.name}' of the original scan is not in the replication data.")
        series = df[b.name]
        missing = series.isna().to_numpy()
        if b.kind == "date":  # the same periods, looked up by label
            labels = period_labels(date_values(series), b.period or "year")
            lookup = {lab: k for k, lab in enumerate(b.labels) if k != b.missing_code}
            col = np.array([lookup.get(v, -1) if isinstance(v, str) else -1 for v in labels.tolist()],
                           dtype=np.int32)
        elif b.kind == "categorical":
            lookup = {lab: k for k, lab in enumerate(b.labels) if k != b.missing_code}
            col = np.array([lookup.get(category_label(v), -1) for v in series.where(~series.isna(), None)],
                           dtype=np.int32) if len(series) else np.empty(0, np.int32)
        else:
            if not (is_numeric(series) or series.dropna().empty):
                values = numeric_values(b.name, series)
            else:
                values = series.to_numpy(dtype=float, na_value=np.nan)
            col = np.searchsorted(np.asarray(b.edges, dtype=float), values, side="left").astype(np.int32)
        col[missing] = b.missing_code
        codes[:, a] = col
    return codes


@dataclass(frozen=True)
class Remeasured:
    """Per itemset and metric: defined rows, mean outcome, and the ingredients of an interval."""

    count: np.ndarray  # rows in the slice
    n: dict  # metric -> defined rows
    s: dict  # metric -> shifted sums
    q: dict  # metric -> shifted sums of squares
    n_rows: int


def remeasure(table: SliceTable, df: pd.DataFrame) -> Remeasured:
    """Tallies of every itemset of ``table`` on the rows of ``df`` (the scan's roles and bins)."""
    if table.lattice.parent is None:
        raise DivergenceInputError("This result has no lattice to re-measure.")
    params = table.params
    roles: dict[str, Any] = {k: params.get(k) for k in ("target", "prediction", "score", "threshold", "positive",
                                                        "outcome", "rank", "rank_by", "ascending", "gamma",
                                                        "regression")}
    roles["metrics"] = [m for m in params.get("metrics", []) if m != "gamma" and m not in _outcome_names(params)]
    outcomes = []
    if Roles(**dict(roles, metrics=())).given():  # no column role: every metric was a ready-made outcome
        try:
            outcomes = build_outcomes(df, **roles)
        except DivergenceInputError as exc:
            raise DivergenceInputError(f"Replication data: {exc}") from None
    by_name = {o.name: o for o in outcomes}
    missing = [m for m in table.metric_names if m not in by_name]
    if missing:
        raise DivergenceInputError(
            f"Replication data: metric '{missing[0]}' was given as a ready-made outcome, whose values exist only "
            "for the scanned rows: scan with the column roles (target, prediction, outcome, ...) to re-measure it "
            "on another table.")
    codes = apply_bins(df, table.bins)
    cols = row_weights([by_name[m.name] for m in table.metrics], table.metrics, with_aux=False)
    tallies = walk_tallies(walk_order(table.lattice.parent, table.codes), codes, np.column_stack(cols))
    n, s, q = {}, {}, {}
    for k, m in enumerate(table.metrics):
        n[m.name], s[m.name], q[m.name] = metric_tallies(tallies, k)
    return Remeasured(count=tallies[:, COUNT], n=n, s=s, q=q, n_rows=len(df))


def _outcome_names(params: dict) -> list[str]:
    out = params.get("outcome")
    if out is None:
        return []
    return [out] if isinstance(out, str) else list(out)


"""Running a slice plan: check that it fits the data (:func:`check_plan_fits`), scan the data with
the plan's settings (:func:`run_plan`) and compare the model with the plan's reference model
(:func:`run_comparison`). The page that shows the result is :mod:`divergence.report.page`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..table import SliceTable
from .plan import SlicePlan

__all__ = ["check_plan_fits", "run_plan", "run_comparison"]


def check_plan_fits(plan: SlicePlan, df: pd.DataFrame) -> None:
    """Fail, naming the column, when the plan does not fit the data: a column it names is
    missing, or its explicit bin edges no longer cut the column (every value in one bin)."""
    roles, slicing = plan.settings.roles, plan.settings.slicing
    for role in ("target", "prediction", "score", "rank", "rank_by"):
        col = getattr(roles, role)
        if col is not None and col not in df.columns:
            raise DivergenceInputError(f"The plan's {role} column '{col}' is not in the data.")
    for col in roles.outcome or ():
        if col not in df.columns:
            raise DivergenceInputError(f"The plan's outcome column '{col}' is not in the data.")
    for col in slicing.attributes or ():
        if col not in df.columns:
            raise DivergenceInputError(f"The plan's attribute column '{col}' is not in the data.")
    for col, spec in slicing.bins.items():
        if col not in df.columns:
            raise DivergenceInputError(f"The plan bins column '{col}', which is not in the data.")
        if isinstance(spec, (int, np.integer, str)):  # a bin count or a date period
            continue
        values = pd.to_numeric(df[col], errors="coerce")
        if values.notna().sum() == 0:
            raise DivergenceInputError(f"The plan's bins for '{col}' no longer fit: the column holds no numbers.")
        edges = np.asarray(spec, dtype=float)
        lo, hi = float(values.min()), float(values.max())
        codes = np.searchsorted(edges, values.dropna().to_numpy(), side="left")
        if len(np.unique(codes)) < 2 and len(edges):
            raise DivergenceInputError(
                f"The plan's bins for '{col}' no longer fit: every value ({lo:g} to {hi:g}) falls in one "
                f"bin of the edges {', '.join(f'{e:g}' for e in edges)}."
            )


def run_plan(plan: SlicePlan, data: pd.DataFrame, *, previous: pd.DataFrame | None = None) -> SliceTable:
    """Run a slice plan on a table (replicating on ``previous`` when given)."""
    import dataclasses

    from ..scan import scan
    from ..settings import Replication

    check_plan_fits(plan, data)
    settings = plan.settings
    replicate = None
    notes: tuple[str, ...] = ()
    if previous is not None:  # the second file given replaces the plan's replication
        check_plan_fits(plan, previous)
        settings, replicate = dataclasses.replace(settings, replication=Replication()), previous
    elif settings.replication.kind == "split" and settings.replication.column not in data.columns:
        raise DivergenceInputError(f"The plan's replication column '{settings.replication.column}' is not in the data.")
    elif settings.replication.kind == "file":  # said in the table's notes, not run
        settings = dataclasses.replace(settings, replication=Replication())
        notes = ("The plan replicates on a second file, and none was given here: no replication.",)
    # scan() honours the plan's replication: a split column or a holdout share (stats.replication)
    table = scan(data, settings, replicate=replicate, exploratory=plan.kind != "pre-registered")
    if notes:
        table = dataclasses.replace(table, notes=tuple(table.notes) + notes)
    for itemset in plan.slices or []:
        try:
            table.lookup(itemset)
        except DivergenceInputError as exc:
            raise DivergenceInputError(f"The plan's pre-listed slice {itemset!r}: {exc}") from None
    return table


def run_comparison(plan: SlicePlan, data: pd.DataFrame):
    """The plan's comparison with its reference model (its ``compare`` section), on the same
    slices, statistics settings and rows as the scan; None when the plan has no comparison.

    The metrics are the section's own, else the scan's metrics that a comparison can measure
    (error rates, accuracy, TPR, TNR, Brier; regression errors), else the comparison's defaults.
    """
    from ..comparison.compare import COMPARE_CLASSIFICATION_METRICS, COMPARE_REGRESSION_METRICS, compare

    settings = plan.settings
    ref = settings.compare
    if not ref.enabled:
        return None
    check_plan_fits(plan, data)
    for role in ("reference", "reference_score"):
        col = getattr(ref, role)
        if col is not None and col not in data.columns:
            raise DivergenceInputError(f"The plan's {role.replace('_', ' ')} column '{col}' is not in the data.")
    roles = settings.roles
    metrics = list(ref.metrics) or None
    if metrics is None:
        allowed = COMPARE_REGRESSION_METRICS if roles.regression else COMPARE_CLASSIFICATION_METRICS
        metrics = [m for m in roles.metrics if m in allowed] or None
    kwargs = {k: v for k, v in settings.keywords("roles", "slicing", "mining").items()
              if k in ("target", "prediction", "score", "threshold", "positive", "regression", "attributes",
                       "bins", "quantile_bins", "binning", "min_support", "max_length", "exhaustive",
                       "max_slices", "max_work", "time_limit")}
    stats = settings.statistics
    return compare(data, metrics=metrics, reference=ref.reference, reference_score=ref.reference_score,
                   reference_threshold=ref.reference_threshold, delta=stats.delta,
                   confidence=stats.confidence, correction=stats.correction, **kwargs)

"""A comparison's inputs: both models' per-row outcomes from the data's columns, every input
checked (the metrics, the target, the predictions or scores and their thresholds), and the tally
columns one mining pass carries for both models (:func:`model_outcomes`). For a classifier, the
count of rows in each of the eight cells (true class, model's label, reference's label); for a
real-valued outcome, per metric the rows where both are defined, the sums of both models' outcomes
and of the per-row difference and its square."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..prepare.outcomes import (
    CLASSIFICATION_RULES,
    canonical_metric,
    match_label,
    numeric_column,
    positive_mask,
    regression_error,
    show_value,
)
from ..prepare.score_threshold import DEFAULT_THRESHOLD, score_threshold
from ..settings import Settings

__all__ = ["COMPARE_CLASSIFICATION_METRICS", "COMPARE_REGRESSION_METRICS", "ModelOutcomes", "model_outcomes"]


COMPARE_CLASSIFICATION_METRICS = ("error", "fpr", "fnr", "accuracy", "tpr", "tnr", "brier")
COMPARE_REGRESSION_METRICS = ("abs_error", "squared_error")
_NOT_PAIRED = {
    "precision": "is measured on each model's own predicted positives",
    "fdr": "is measured on each model's own predicted positives",
    "npv": "is measured on each model's own predicted negatives",
    "for": "is measured on each model's own predicted negatives",
}
_NO_DIRECTION = {
    "positive_rate": "has no better or worse direction",
    "base_rate": "does not depend on the model",
    "signed_error": "has no better or worse direction (a bias either way is an error)",
}

def _check_metrics(metrics, regression: bool, has_scores: bool) -> list[str]:
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    names = [canonical_metric(m) for m in (metrics or [])]
    if not names:
        names = ["abs_error"] if regression else ["error", "fpr", "fnr"]
    seen = set()
    for m in names:
        if m in seen:
            raise DivergenceInputError(f"Metric {m!r} is asked for twice.")
        seen.add(m)
        if m in _NOT_PAIRED:
            raise DivergenceInputError(
                f"Metric {m!r} {_NOT_PAIRED[m]}, which differ between the two models: its change is "
                f"not a paired comparison. Compare {', '.join(COMPARE_CLASSIFICATION_METRICS[:6])} instead."
            )
        if m in _NO_DIRECTION:
            raise DivergenceInputError(f"Metric {m!r} {_NO_DIRECTION[m]}: a comparison cannot call it worse or better.")
        allowed = COMPARE_REGRESSION_METRICS if regression else COMPARE_CLASSIFICATION_METRICS
        if m not in allowed:
            kind = "regression" if regression else "classification"
            hint = ("" if regression or m not in COMPARE_REGRESSION_METRICS
                    else " (a regression metric: add --regression / regression=True)")
            raise DivergenceInputError(
                f"Unknown {kind} metric {m!r} for a comparison{hint}; choose from {', '.join(allowed)}."
            )
        if m == "brier" and not has_scores:
            raise DivergenceInputError("Metric 'brier' needs a score for both models (score and reference_score).")
    return names


def _column(df: pd.DataFrame, col: str | None, role: str) -> pd.Series:
    if col not in df.columns:
        raise DivergenceInputError(f"{role.capitalize()} column '{col}' is not in the data.")
    return df[col]


def _labels(df: pd.DataFrame, col: str, role: str, target: str, positive) -> np.ndarray:
    """A label column as 1.0 (positive), 0.0, NaN (missing); an error naming the column when it
    is not binary or holds a value the target does not have."""
    series = _column(df, col, role)
    y_values = list(pd.unique(df[target].dropna()))
    stray = [v for v in pd.unique(series.dropna()) if not any(match_label(v, t) for t in y_values)]
    if stray and len(y_values) == 2:
        shown = ", ".join(sorted(str(v) for v in y_values))
        raise DivergenceInputError(
            f"{role.capitalize()} column '{col}' holds {show_value(stray[0])}, which is not a value of "
            f"target column '{target}' ({shown})."
        )
    return positive_mask(series, positive, col, role)


def _scores(df: pd.DataFrame, col: str, role: str, metrics: Sequence[str]) -> np.ndarray:
    s = numeric_column(_column(df, col, role), col, role)
    if "brier" in metrics:
        finite = s[~np.isnan(s)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise DivergenceInputError(
                f"Metric 'brier' needs scores in [0, 1]; {role} column '{col}' ranges "
                f"{finite.min():g} to {finite.max():g}."
            )
    return s


def _check_threshold(value, name: str) -> float:
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise DivergenceInputError(f"{name} must be a number; got {value!r}.") from None
    if not math.isfinite(t):
        raise DivergenceInputError(f"{name} must be a finite number; got {value!r}.")
    return t


@dataclass(frozen=True)
class ModelOutcomes:
    """Both models' outcomes as one mining pass tallies them: the metrics, the per-row tally
    columns (``weights``), per metric the function turning a slice's tallies into both models'
    values and their change (``per_metric``) and the per-row difference model − reference on the
    rows where it is defined (``diffs``), the rows compared and what was said about them."""

    names: list
    weights: np.ndarray
    per_metric: dict
    diffs: dict
    usable: np.ndarray
    left_out: int
    notes: tuple
    model_col: str
    ref_col: str
    threshold: float


def model_outcomes(df: pd.DataFrame, st: Settings) -> ModelOutcomes:
    """Both models' outcomes (per row, with their tally columns) as the settings' roles (the model)
    and compare section (the reference, the metrics) describe them."""
    r, cp = st.roles, st.compare
    return _models(df, target=r.target, prediction=r.prediction, reference=cp.reference, score=r.score,
                   threshold=r.threshold, reference_score=cp.reference_score,
                   reference_threshold=cp.reference_threshold, positive=r.positive,
                   metrics=list(cp.metrics or r.metrics) or None, regression=r.regression)


def _models(df: pd.DataFrame, *, target, prediction, reference, score, threshold, reference_score,
            reference_threshold, positive, metrics, regression) -> ModelOutcomes:
    """Both models' per-row outcomes and the tally columns, every input checked."""
    if target is None:
        raise DivergenceInputError("A comparison needs a target column (the true label or value).")
    _column(df, target, "target")
    if (prediction is None) == (score is None):
        raise DivergenceInputError("Give the model as a prediction column or as a score column (one of them).")
    if (reference is None) == (reference_score is None):
        raise DivergenceInputError(
            "Give the reference model as a reference column or as a reference score column (one of them)."
        )
    if regression and (score is not None or reference_score is not None):
        raise DivergenceInputError(
            "A regression comparison takes predicted values (prediction and reference), not scores.")
    names = _check_metrics(metrics, regression, score is not None and reference_score is not None)
    model_col = prediction if prediction is not None else score
    ref_col = reference if reference is not None else reference_score
    notes: list[str] = []
    given = threshold is not None
    if score is not None and not regression:  # without a threshold: 0.5 within [0, 1], else refused (issue 44)
        given_threshold = None if threshold is None else _check_threshold(threshold, "threshold")
        threshold, note = score_threshold(df, score, given_threshold)
        notes += [note] if note else []
    threshold = _check_threshold(DEFAULT_THRESHOLD if threshold is None else threshold, "threshold")
    if reference_threshold is not None:
        ref_threshold = _check_threshold(reference_threshold, "reference_threshold")
    elif reference_score is not None and not regression and not (given and score is not None):
        ref_threshold, note = score_threshold(df, reference_score, None, role="reference score")
        notes += [note] if note else []
    else:
        ref_threshold = threshold  # the model's own threshold, given for a score
    if model_col == ref_col and (prediction is not None or threshold == ref_threshold):
        raise DivergenceInputError(
            f"The reference is the model itself (column '{ref_col}'{'' if prediction else ' at the same threshold'}): "
            "there is nothing to compare."
        )
    # ---- per-row values of both models
    if regression:
        y = numeric_column(df[target], target, "target")
        pa = numeric_column(_column(df, prediction, "prediction"), prediction, "prediction")
        pb = numeric_column(_column(df, reference, "reference"), reference, "reference")
        usable = ~(np.isnan(y) | np.isnan(pa) | np.isnan(pb))
    else:
        if positive is None:
            raise DivergenceInputError(f"Name the positive label of target column '{target}'.")
        y = positive_mask(df[target], positive, target, "target")
        sa = sb = None
        if prediction is not None:
            pa = _labels(df, prediction, "prediction", target, positive)
        else:
            sa = _scores(df, score, "score", names)
            pa = np.where(np.isnan(sa), np.nan, (sa >= threshold).astype(float))
        if reference is not None:
            pb = _labels(df, reference, "reference", target, positive)
        else:
            sb = _scores(df, reference_score, "reference score", names)
            pb = np.where(np.isnan(sb), np.nan, (sb >= ref_threshold).astype(float))
        usable = ~(np.isnan(y) | np.isnan(pa) | np.isnan(pb))
    if not usable.any():
        raise DivergenceInputError(
            f"No row has the target '{target}' and both models' predictions ('{model_col}', '{ref_col}')."
        )
    left_out = int((~usable).sum())
    if left_out:
        notes.append(f"{left_out:,} of {len(df):,} rows left out of every comparison: the target or a "
                     "model's prediction is missing there (both models are compared on the same rows).")
    # ---- per-row tally columns
    if regression:
        weights, per_metric, diffs = _regression_weights(names, y, pa, pb, usable)
    else:
        weights, per_metric, diffs = _classification_weights(names, y, pa, pb, sa, sb, usable)
    if all(np.all(d == 0) for d in diffs.values()):
        raise DivergenceInputError(
            f"Reference column '{ref_col}' gives the same {', '.join(names)} as "
            f"{'prediction' if prediction else 'score'} column '{model_col}' on every row: there is nothing to compare."
        )
    return ModelOutcomes(names=names, weights=weights, per_metric=per_metric, diffs=diffs, usable=usable,
                     left_out=left_out, notes=tuple(notes), model_col=model_col, ref_col=ref_col,
                     threshold=threshold)


def _classification_weights(names, y, pa, pb, sa, sb, usable):
    """Tally columns: the row count, the eight cells (true class, model, reference) on the
    compared rows, and for Brier the defined count and sums of both scores' squared errors
    and of their difference (shifted by its mean) and its square."""
    n = y.size
    yb = np.nan_to_num(y).astype(bool)
    ab = np.nan_to_num(pa).astype(bool)
    bb = np.nan_to_num(pb).astype(bool)
    cell = np.where(usable, 4 * yb + 2 * ab + bb, -1)
    cols = [np.ones(n)] + [(cell == k).astype(np.float64) for k in range(8)]
    cy = np.array([k >> 2 & 1 for k in range(8)], dtype=bool)
    ca = np.array([k >> 1 & 1 for k in range(8)], dtype=bool)
    cb = np.array([k & 1 for k in range(8)], dtype=bool)
    per_metric, diffs = {}, {}
    for m in names:
        if m == "brier":
            a = np.where(usable, (np.nan_to_num(sa) - yb) ** 2, np.nan)
            b = np.where(usable, (np.nan_to_num(sb) - yb) ** 2, np.nan)
            start = len(cols)
            more, per_metric[m], diffs[m] = _real_columns(a, b, usable, start)
            cols += more
            continue
        _, defined_fn, one_fn = CLASSIFICATION_RULES[m]
        defined = defined_fn(cy, ca)  # depends on the true class only: the same rows for both models
        out_a = one_fn(cy, ca).astype(bool) & defined
        out_b = one_fn(cy, cb).astype(bool) & defined
        d10 = out_a & ~out_b
        d01 = ~out_a & out_b

        def stats(t, defined=defined, out_a=out_a, out_b=out_b, d10=d10, d01=d01):
            c = t[:, 1:9]
            nn = c[:, defined].sum(axis=1)
            ones_a, ones_b = c[:, out_a].sum(axis=1), c[:, out_b].sum(axis=1)
            n10, n01 = c[:, d10].sum(axis=1), c[:, d01].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                safe = np.where(nn > 0, nn, 1.0)
                value = np.where(nn > 0, ones_a / safe, np.nan)
                ref = np.where(nn > 0, ones_b / safe, np.nan)
                change = np.where(nn > 0, (n10 - n01) / safe, np.nan)
            p0 = ref[0]
            return {"n": nn, "value": value, "reference": ref, "change": change, "n10": n10, "n01": n01,
                    "reference_sd": math.sqrt(max(p0 * (1 - p0), 0.0)) if np.isfinite(p0) else 0.0}

        per_metric[m] = stats
        row_defined = usable & defined_fn(yb, ab)
        oa = one_fn(yb, ab).astype(float)
        ob = one_fn(yb, bb).astype(float)
        diffs[m] = (oa - ob)[row_defined]
    return np.column_stack(cols), per_metric, diffs


def _regression_weights(names, y, pa, pb, usable):
    cols = [np.ones(y.size)]
    per_metric, diffs = {}, {}
    for m in names:
        a, b = regression_error(m, pa - y), regression_error(m, pb - y)
        more, per_metric[m], diffs[m] = _real_columns(np.where(usable, a, np.nan), np.where(usable, b, np.nan),
                                                      usable, len(cols))
        cols += more
    return np.column_stack(cols), per_metric, diffs


def _real_columns(a, b, usable, start):
    """Tally columns of a real outcome of both models: defined count, shifted sums of each
    model's outcome, shifted sum of the difference and of its square (shifts: whole-dataset
    means, for numerical care)."""
    d = a - b
    sa, sb, sd = (float(np.mean(x[usable])) for x in (a, b, d))
    ac = np.where(usable, a - sa, 0.0)
    bc = np.where(usable, b - sb, 0.0)
    dc = np.where(usable, d - sd, 0.0)
    cols = [usable.astype(np.float64), ac, bc, dc, dc * dc]
    ref_sd = float(np.std(b[usable]))

    def stats(t):
        nn = t[:, start]
        with np.errstate(invalid="ignore", divide="ignore"):
            safe = np.where(nn > 0, nn, 1.0)
            value = np.where(nn > 0, sa + t[:, start + 1] / safe, np.nan)
            ref = np.where(nn > 0, sb + t[:, start + 2] / safe, np.nan)
            md = t[:, start + 3] / safe
            change = np.where(nn > 0, sd + md, np.nan)
            ss = np.maximum(t[:, start + 4] - t[:, start + 3] * md, 0.0)
            var = np.where(nn > 1, ss / np.where(nn > 1, nn - 1.0, 1.0), np.nan)
        return {"n": nn, "value": value, "reference": ref, "change": change, "var": var, "reference_sd": ref_sd}

    return cols, stats, d[usable]

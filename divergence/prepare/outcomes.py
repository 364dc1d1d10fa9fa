"""Outcomes: one float per row for each metric, NaN where the metric is undefined (a binary
classifier's, one of any number of classes, a regressor's, a ranking's, a column as it is).

A slice's outcome is the mean of the defined outcomes of its rows, so a rate like
the false-positive rate is the mean of an outcome that is 1 for a false positive,
0 for a true negative and undefined elsewhere.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..outcome_rules import (
    CLASSIFICATION,
    CLASSIFICATION_METRICS,
    DEFAULT_METRICS,
    LOG_LOSS_EPS,
    REGRESSION,
    REGRESSION_METRICS,
    SCORE_METRICS,
    canonical_metric,
    parse_gamma,
)
from ..settings import Roles, section
from ..vocabulary import METRIC_LABELS
from .score_threshold import score_threshold

__all__ = ["Outcome", "classification_outcomes",
           "regression_outcomes", "ranking_outcome", "column_outcome", "parse_gamma", "match_label",
           "BASELINE_KIND", "CLASSIFICATION_RULES", "build_outcomes", "measures", "Measure", "check_names", "canonical_metric",
           "numeric_column", "positive_labels", "positive_mask", "regression_error", "show_value", "score_metric_values",
           "CLASS_KINDS", "MULTICLASS_METRICS", "class_metric", "is_multiclass", "multiclass_outcomes",
           "class_metric_names"]


def _mask(condition: str, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Rows meeting a condition of :mod:`divergence.outcome_rules` (y, p: boolean arrays)."""
    if condition == "all":
        return np.ones_like(y)
    if condition == "y == p":
        return y == p
    if condition == "y != p":
        return y != p
    negated = condition.startswith("not ")
    value = y if condition.removeprefix("not ") == "y" else p
    return ~value if negated else value


def _rule(defined: str, one: str):
    return (lambda y, p: _mask(defined, y, p)), (lambda y, p: _mask(one, y, p))


#: name -> (rows where defined, in words; those rows as a function of (y = true class is
#: positive, p = predicted positive); the rows where the outcome is 1): built from
#: :data:`divergence.outcome_rules.CLASSIFICATION`, the rules the SQL engines also read.
CLASSIFICATION_RULES = {name: (r.rows, *_rule(r.defined, r.one)) for name, r in CLASSIFICATION.items()}


def regression_error(metric: str, diff: np.ndarray) -> np.ndarray:
    """A regression error of :data:`divergence.outcome_rules.REGRESSION` from the residuals."""
    kind = REGRESSION[metric]
    if kind == "abs":
        return np.abs(diff)
    if kind == "square":
        with np.errstate(over="ignore"):  # refused by name (an infinite error) where the outcome is finished
            return diff ** 2
    return diff


#: Error metrics whose slice baseline is the best constant prediction inside the slice.
BASELINE_KIND = {"error": "majority", "brier": "base_rate", "log_loss": "entropy", "abs_error": "median",
                 "squared_error": "mean"}


def score_metric_values(metric: str, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A score metric of :data:`divergence.outcome_rules.SCORE_METRICS` per row, from the score ``s`` in
    [0, 1] and the 0/1 label ``y`` (NaN where either is)."""
    if metric == "brier":
        return (s - y) ** 2
    if metric == "calibration":
        return s - y
    c = np.clip(s, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    return -(y * np.log(c) + (1.0 - y) * np.log1p(-c))


@dataclass(frozen=True)
class Outcome:
    """One metric: its name (the column prefix in results) and its per-row values."""

    name: str
    values: np.ndarray
    description: str = ""
    #: True when every defined value is 0 or 1 (a rate: exact tests, Wilson intervals)
    binary: bool = False
    #: an error metric with a slice baseline: 'mean', 'median', 'majority', 'base_rate'
    baseline: str | None = None
    #: for error metrics, the per-row target the baseline predicts (numeric or 0/1)
    target: np.ndarray | None = None
    #: the model's per-row prediction behind an error metric (score for Brier)
    prediction: np.ndarray | None = None

    @property
    def defined(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.values)))


def _check_column(df: pd.DataFrame, col: str | None, role: str) -> pd.Series:
    if col is None:
        raise DivergenceInputError(f"A {role} column is needed for this metric; none was given.")
    if col not in df.columns:
        raise DivergenceInputError(f"{role.capitalize()} column '{col}' is not in the data.")
    return df[col]


def _as_number(value: object) -> float | None:
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    try:
        x = float(str(value).strip()) if not isinstance(value, (int, float, np.number)) else float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def show_value(value: object) -> str:
    """A value as a person reads it: 1, 'yes' (not np.int64(1))."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    return repr(value)


def match_label(value: object, wanted: object) -> bool:
    """Whether a column value is the wanted label, read as text or as a number (1 == "1")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if value == wanted:
        return True
    a, b = _as_number(value), _as_number(wanted)
    if a is not None and b is not None:
        return a == b
    ta, tb = str(value).strip(), str(wanted).strip()
    if isinstance(value, (bool, np.bool_)) or isinstance(wanted, (bool, np.bool_)):
        return ta.lower() == tb.lower()
    return ta == tb


def positive_labels(values: list, positive: object, col: str, role: str, complete: bool = True) -> list:
    """The values of a binary label column that are the positive label; an error naming the
    column when it has more than two values (``values``: its distinct values, or the first
    six of them when not ``complete``) or, for the target, when none is the positive label."""
    if len(values) > 2:
        shown = ", ".join(show_value(v) for v in values[:5])
        more = ", …" if len(values) > 5 else ""
        count = f"{len(values)}" if complete or len(values) <= 5 else "more than 5"
        raise DivergenceInputError(
            f"{role.capitalize()} column '{col}' is not binary: it has {count} distinct values ({shown}{more})."
        )
    hits = [v for v in values if match_label(v, positive)]
    if role == "target" and not hits:
        shown = ", ".join(show_value(v) for v in values)
        raise DivergenceInputError(
            f"Positive label {positive!r} is not a value of target column '{col}' (values: {shown})."
        )
    return hits


def positive_mask(series: pd.Series, positive: object, col: str, role: str) -> np.ndarray:
    """Rows whose value is the positive label; NaN where the value is missing."""
    hit, missing = _positive(series, label_values(series), positive, col, role)
    out = np.where(hit, 1.0, 0.0)
    if missing is not None:
        out[missing] = np.nan
    return out


def label_values(series: pd.Series) -> list:
    """``list(pd.unique(series.dropna()))``: the distinct values present, in the order they first
    appear; a column of numpy integers or booleans with at most two is read from its minimum and
    maximum (no hashing: a label column of millions of rows)."""
    values = series.to_numpy() if _numpy_labels(series) else None
    if values is not None and len(values):
        lo, hi = values.min(), values.max()
        if lo == hi:
            return [values[0]]
        if series.dtype.kind == "b" or int(hi) - int(lo) == 1:  # two values: the first row's comes first
            first = values[0]
            return [first, hi if first == lo else lo]
    return list(pd.unique(series.dropna()))


def _numpy_labels(series: pd.Series) -> bool:
    """Whether a column holds numpy integers or booleans (never missing)."""
    return isinstance(series.dtype, np.dtype) and series.dtype.kind in "biu"


def _positive(series: pd.Series, distinct: list, positive: object, col: str,
              role: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows whose value is the positive label and those whose value is missing (None: none can
    be, a column of numpy integers or booleans); ``distinct``: :func:`label_values`."""
    hits = positive_labels(distinct, positive, col, role)
    if _numpy_labels(series):
        values = series.to_numpy()
        if not hits:
            return np.zeros(len(values), dtype=bool), None
        return (values == hits[0] if len(hits) == 1 else np.isin(values, hits)), None
    missing = series.isna().to_numpy()
    return series.isin(hits).to_numpy() & ~missing, missing


def numeric_column(series: pd.Series, col: str, role: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(series):
        return series.astype(float).to_numpy()
    if not pd.api.types.is_numeric_dtype(series):
        converted = pd.to_numeric(series, errors="coerce")
        bad = series.notna() & converted.isna()
        if bad.any():
            raise DivergenceInputError(
                f"{role.capitalize()} column '{col}' must be numeric; it holds "
                f"{series[bad].iloc[0]!r} (row {series.index[bad.to_numpy()][0]})."
            )
        series = converted
    values = series.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        raise DivergenceInputError(f"{role.capitalize()} column '{col}' holds an infinite value.")
    return values


def _finish(name: str, values: np.ndarray, description: str, **kw) -> Outcome:
    overflow = np.isinf(values)
    if overflow.any():  # finite columns whose error is not: |y - ŷ| or its square past 1.8e308
        row = int(np.flatnonzero(overflow)[0])
        raise DivergenceInputError(
            f"Outcome '{name}' ({description}) overflows on {int(overflow.sum()):,} rows (first: row {row}): the values "
            "are too large to compute with; scale them down (for example to thousands) and scan again."
        )
    defined = values[~np.isnan(values)]  # finite: no value is infinite
    # the sums of squares a scan keeps overflow too when a value's square passes 1.8e308
    low, high = (float(defined.min()), float(defined.max())) if defined.size else (0.0, 0.0)
    largest = max(abs(low), abs(high))
    if largest > 1e150:
        raise DivergenceInputError(
            f"Outcome '{name}' ({description}) holds values as large as {largest:.3g}: too large to "
            "compute with (their squares overflow); scale them down (for example to thousands) and scan again."
        )
    if defined.size == 0:
        raise _undefined_everywhere(name, description)
    binary = low >= 0.0 and high <= 1.0 and bool(np.all((defined == 0) | (defined == 1)))
    return Outcome(name=name, values=values, description=description, binary=binary, **kw)


def _undefined_everywhere(name: str, description: str) -> DivergenceInputError:
    return DivergenceInputError(
        f"Outcome '{name}' ({description}) is undefined on every row: no row qualifies "
        "(for a rate, check the positive label and that both classes occur)."
    )


def classification_outcomes(
    df: pd.DataFrame,
    *,
    target: str,
    positive: object,
    prediction: str | None = None,
    score: str | None = None,
    threshold: float | None = None,
    metrics: Sequence[str] = ("fpr", "fnr"),
) -> list[Outcome]:
    """Outcomes of a binary classifier, predictions given as labels or as a score and threshold (none:
    0.5 for a score within [0, 1], any other refused; :mod:`divergence.prepare.score_threshold`).

    A row whose target or prediction is missing has every classification outcome undefined.
    """
    y_series = _check_column(df, target, "target")
    if positive is None:
        classes = pd.unique(y_series.dropna())
        if len(classes) > 2:
            listed = ", ".join(show_value(c) for c in classes[:5]) + (", …" if len(classes) > 5 else "")
            raise DivergenceInputError(
                f"Target column '{target}' has {len(classes)} classes ({listed}): measure error, accuracy, or one "
                f"class against the rest, recall:CLASS, precision:CLASS, fpr:CLASS, fnr:CLASS (e.g. "
                f"recall:{classes[0]}); or name the positive label for {', '.join(metrics)}.")
        raise DivergenceInputError(f"Name the positive label of target column '{target}'.")
    y_values = label_values(y_series)
    yb, y_missing = _positive(y_series, y_values, positive, target, "target")  # positive and not missing
    if prediction is not None:
        p_series = _check_column(df, prediction, "prediction")
        p_values = label_values(p_series)
        pb, p_missing = _positive(p_series, p_values, positive, prediction, "prediction")
        target_values = {str(v) for v in y_values}
        stray = [v for v in p_values if not any(match_label(v, t) for t in y_values)]
        if stray and len(target_values) == 2:
            raise DivergenceInputError(
                f"Prediction column '{prediction}' holds {show_value(stray[0])}, which is not a value of "
                f"target column '{target}' ({', '.join(sorted(target_values))})."
            )
        s = None
    elif score is not None:
        s = numeric_column(_check_column(df, score, "score"), score, "score")
        threshold = score_threshold(df, score, threshold)[0]
        p_missing = np.isnan(s)
        pb = s >= float(threshold)  # False where the score is missing
    else:
        raise DivergenceInputError("Give a prediction column (labels) or a score column and a threshold.")
    undefined = y_missing if p_missing is None else p_missing if y_missing is None else y_missing | p_missing
    if undefined is None:
        undefined = np.zeros(len(yb), dtype=bool)
    out = []
    for metric in metrics:
        m = canonical_metric(metric)
        if m in SCORE_METRICS:
            if s is None:
                raise DivergenceInputError(f"Metric '{m}' needs a score column (a probability in [0, 1]).")
            finite = s[~np.isnan(s)]
            if finite.size and (finite.min() < 0 or finite.max() > 1):
                raise DivergenceInputError(
                    f"Metric '{m}' needs scores in [0, 1]; score column '{score}' ranges "
                    f"{finite.min():g} to {finite.max():g}."
                )
            values = np.where(undefined | np.isnan(s), np.nan, score_metric_values(m, np.nan_to_num(s), yb.astype(float)))
            if m == "calibration":  # a bias, not an error: no baseline
                out.append(_finish(m, values, METRIC_LABELS[m]))
            else:
                y_target = yb.astype(float)
                if y_missing is not None:
                    y_target[y_missing] = np.nan
                out.append(_finish(m, values, METRIC_LABELS[m], baseline=BASELINE_KIND[m], target=y_target,
                                   prediction=s))
            continue
        if m not in CLASSIFICATION_RULES:
            raise DivergenceInputError(
                f"Unknown classification metric {metric!r}; choose from {', '.join(CLASSIFICATION_METRICS)}."
            )
        _, defined_fn, one_fn = CLASSIFICATION_RULES[m]
        defined = defined_fn(yb, pb) & ~undefined
        values = np.where(defined, one_fn(yb, pb), np.nan)  # 1.0, 0.0 or NaN
        if not defined.any():
            raise _undefined_everywhere(m, METRIC_LABELS[m])
        if m == "error":
            out.append(Outcome(name=m, values=values, description=METRIC_LABELS[m], binary=True, baseline="majority",
                               target=np.where(undefined, np.nan, yb.astype(float)),
                               prediction=np.where(undefined, np.nan, pb.astype(float))))
        else:
            out.append(Outcome(name=m, values=values, description=METRIC_LABELS[m], binary=True))
    return out


# ----------------------------------------------------------------------------- any number of classes
# error and accuracy over every class, and one class against the rest (recall:CLASS, precision:CLASS,
# fpr:CLASS, fnr:CLASS): asked for when no positive label is named (or a metric names its class). Each
# is a 0/1 outcome, so every statistic is a binary rate's; error's slice baseline is the slice's
# majority class, its class counts walked over the kept rows (divergence.stats.defect_tests).

#: one class against the rest: what the metric's rows are (defined) and where it is 1, as for a binary
#: classifier whose positive label is the class (y: the true class is it, p: the prediction is)
CLASS_KINDS = {"recall": ("y", "p"), "precision": ("p", "y"), "fpr": ("not y", "p"), "fnr": ("y", "not p")}
#: the metrics over every class
MULTICLASS_METRICS = ("error", "accuracy")



def class_metric(metric: str) -> tuple[str, str] | None:
    """``recall:dog`` -> ("recall", "dog"); None for a metric that names no class."""
    kind, sep, cls = str(metric).strip().partition(":")
    kind = canonical_metric(kind)
    if not sep or kind not in CLASS_KINDS:
        return None
    if not cls.strip():
        raise DivergenceInputError(f"Metric {metric!r} names no class: write {kind}:CLASS, e.g. {kind}:dog.")
    return kind, cls.strip()


def is_multiclass(metrics: Sequence[str], positive: object) -> bool:
    """Whether the metrics are measured over the classes: no positive label named and every metric is
    ``error``, ``accuracy`` or names its class; or any metric names its class."""
    named = [class_metric(m) for m in metrics]
    if any(n is not None for n in named):
        return True
    return positive is None and bool(metrics) and all(canonical_metric(m) in MULTICLASS_METRICS for m in metrics)


def class_metric_names(classes: Sequence[object]) -> list[str]:
    """Every metric a dashboard offers for these classes: error, accuracy, then per class its four."""
    return list(MULTICLASS_METRICS) + [f"{kind}:{c}" for c in classes for kind in CLASS_KINDS]


def _codes(series: pd.Series, classes: list) -> np.ndarray:
    """Each value's class index (-1: not a class, NaN: missing)."""
    out = np.full(len(series), np.nan)
    values = series.to_numpy(dtype=object)
    missing = series.isna().to_numpy()
    lookup = {}
    for v in pd.unique(series.dropna()):
        lookup[v] = next((i for i, c in enumerate(classes) if match_label(v, c)), -1)
    for i, (v, gone) in enumerate(zip(values, missing)):
        if not gone:
            out[i] = lookup[v]
    return out


def multiclass_outcomes(df: pd.DataFrame, *, target: str, prediction: str | None, metrics: Sequence[str],
                        score: str | None = None) -> list[Outcome]:
    """The outcomes of a classifier over its classes (the target's distinct values): a row whose target
    or prediction is missing has every outcome undefined; a prediction that is not one of the target's
    classes is refused by name."""
    y_series = _check_column(df, target, "target")
    if prediction is None:
        raise DivergenceInputError(
            f"Metrics over the classes of target column '{target}' ({', '.join(map(str, metrics))}) need the "
            "predicted class: a prediction column (a score and a threshold give two classes only; name the "
            "positive label for those).")
    p_series = _check_column(df, prediction, "prediction")
    classes = sorted(pd.unique(y_series.dropna()), key=lambda v: (str(type(v)), v))
    if len(classes) < 2:
        raise DivergenceInputError(f"Target column '{target}' has {len(classes)} class: a classifier needs two or more.")
    y = _codes(y_series, classes)
    p = _codes(p_series, classes)
    stray = p_series[np.nan_to_num(p, nan=0) < 0]
    if len(stray):
        raise DivergenceInputError(
            f"Prediction column '{prediction}' holds {show_value(stray.iloc[0])}, which is not a class of target "
            f"column '{target}' ({', '.join(show_value(c) for c in classes[:8])}{', …' if len(classes) > 8 else ''}).")
    undefined = np.isnan(y) | np.isnan(p)
    yi = np.nan_to_num(y, nan=-1).astype(np.int64)
    pi = np.nan_to_num(p, nan=-1).astype(np.int64)
    out = []
    for metric in metrics:
        m = canonical_metric(metric)
        named = class_metric(metric)
        if named is None:
            if m not in MULTICLASS_METRICS:
                raise DivergenceInputError(
                    f"Metric {metric!r} needs a positive label; over the {len(classes)} classes of target column "
                    f"'{target}' choose error, accuracy, or one class's recall:CLASS, precision:CLASS, fpr:CLASS, "
                    f"fnr:CLASS (e.g. recall:{classes[0]}); or name the positive label.")
            wrong = (yi != pi).astype(float)
            values = np.where(undefined, np.nan, wrong if m == "error" else 1.0 - wrong)
            extra = {}
            if m == "error":
                extra = dict(baseline="majority_class", target=np.where(undefined, np.nan, y),
                             prediction=np.where(undefined, np.nan, p))
            out.append(_finish(m, values, "error rate" if m == "error" else "accuracy", **extra))
            continue
        kind, wanted = named
        hits = [i for i, c in enumerate(classes) if match_label(c, wanted)]
        if not hits:
            raise DivergenceInputError(
                f"Metric {metric!r}: {wanted!r} is not a class of target column '{target}' (classes: "
                f"{', '.join(show_value(c) for c in classes[:8])}{', …' if len(classes) > 8 else ''}).")
        k = hits[0]
        yb, pb = yi == k, pi == k
        defined_on, one_on = CLASS_KINDS[kind]
        flags = {"y": yb, "not y": ~yb, "p": pb, "not p": ~pb}
        values = np.where(flags[defined_on] & ~undefined, flags[one_on].astype(float), np.nan)
        name = f"{kind}:{classes[k]}"
        out.append(_finish(name, values, f"{METRIC_LABELS.get(kind, kind)} of class {classes[k]}"))
    return out


def regression_outcomes(
    df: pd.DataFrame,
    *,
    target: str,
    prediction: str,
    metrics: Sequence[str] = ("abs_error",),
) -> list[Outcome]:
    """Errors of a regressor: absolute, squared, or signed (prediction minus target)."""
    y = numeric_column(_check_column(df, target, "target"), target, "target")
    p = numeric_column(_check_column(df, prediction, "prediction"), prediction, "prediction")
    with np.errstate(over="ignore"):  # an overflow is refused by name once the errors are known
        diff = p - y
    out = []
    for metric in metrics:
        m = canonical_metric(metric)
        if m not in REGRESSION:
            raise DivergenceInputError(
                f"Unknown regression metric {metric!r}; choose from {', '.join(REGRESSION_METRICS)}."
            )
        values = regression_error(m, diff)
        out.append(_finish(m, values, METRIC_LABELS[m], baseline=BASELINE_KIND.get(m),
                           target=y, prediction=p))
    return out


def ranking_outcome(
    df: pd.DataFrame,
    *,
    rank: str | None = None,
    rank_by: str | None = None,
    ascending: bool = False,
    gamma: str = "dcg",
) -> Outcome:
    """The rank-value ``gamma(rank)`` of each row, rank 1 the best.

    From a rank column, or from a score (``rank_by``; higher is better unless
    ``ascending``), tied scores sharing their average rank. Rows without a score are
    left out of the ranking and their outcome is undefined.
    """
    kind, a = parse_gamma(gamma)
    if (rank is None) == (rank_by is None):
        raise DivergenceInputError("Give exactly one of a rank column or a score to rank by.")
    if rank is not None:
        ranks = numeric_column(_check_column(df, rank, "rank"), rank, "rank")
        if np.nanmin(ranks) < 1 if np.any(~np.isnan(ranks)) else False:
            raise DivergenceInputError(f"Rank column '{rank}' must hold ranks of 1 or more (1 = best).")
    else:
        assert rank_by is not None  # exactly one of the two (checked above)
        s = numeric_column(_check_column(df, rank_by, "rank-by"), rank_by, "rank-by")
        ranks = np.full(len(s), np.nan)
        ok = ~np.isnan(s)
        ranks[ok] = pd.Series(s[ok] if ascending else -s[ok]).rank(method="average").to_numpy()
    if kind == "topk":
        values = np.where(np.isnan(ranks), np.nan, (ranks <= a).astype(float))
        desc = f"in the top {int(a)}"
    elif kind == "power":
        values = ranks ** (-a)
        desc = f"rank^-{a:g}"
    else:
        values = 1.0 / np.log2(1.0 + ranks)
        desc = "DCG gain 1/log2(1+rank)"
    return _finish("gamma", values, desc)


def column_outcome(df: pd.DataFrame, column: str) -> Outcome:
    """A numeric column used as it is (booleans as 0/1); missing values are undefined."""
    values = numeric_column(_check_column(df, column, "outcome"), column, "outcome")
    return _finish(column, values, f"mean of {column}")


@dataclass(frozen=True)
class Measure:
    """One thing the roles ask a scan to measure: ``kind`` "outcome" (``column`` as it is),
    "ranking", "regression" or "classification" (``metrics``)."""

    kind: str
    column: str | None = None
    metrics: tuple[str, ...] = ()

    def keywords(self, roles: Roles) -> dict:
        """The roles this measure is built from, as the keywords of its builder (the pandas
        ``*_outcome(s)`` functions and the SQL engines' alike)."""
        if self.kind == "ranking":
            return dict(rank=roles.rank, rank_by=roles.rank_by, ascending=roles.ascending, gamma=roles.gamma or "dcg")
        if self.kind == "regression":
            return dict(target=roles.target, prediction=roles.prediction, metrics=list(self.metrics))
        if self.kind == "classification":
            return dict(target=roles.target, positive=roles.positive, prediction=roles.prediction, score=roles.score,
                        threshold=roles.threshold, metrics=list(self.metrics))
        return {}


def measures(roles: Roles) -> list[Measure]:
    """What the roles ask to measure, checked: the one rule the pandas scan
    (:func:`build_outcomes`) and the SQL engines (``engine_scan.plan_outcomes``) both follow."""
    metrics = [canonical_metric(m) for m in roles.metrics]
    if roles.query is not None:  # ranking quality per query (divergence.prepare.queries)
        from .queries import DEFAULT_QUERY_METRICS, canonical

        if roles.relevance is None:
            raise DivergenceInputError("A query-level ranking needs a relevance column (graded, 0 = not relevant).")
        if roles.rank is None and roles.rank_by is None:
            raise DivergenceInputError("A query-level ranking needs a rank column or a score to rank by.")
        return [Measure("query", metrics=tuple(canonical(m) for m in (metrics or DEFAULT_QUERY_METRICS)))]
    out = [Measure("outcome", column=col) for col in (roles.outcome or ())]
    if roles.rank is not None or roles.rank_by is not None:
        out.append(Measure("ranking"))
    if roles.target is not None or roles.prediction is not None or metrics:
        reg = [m for m in metrics if m in REGRESSION_METRICS]
        cls = [m for m in metrics if m not in REGRESSION_METRICS]
        if roles.regression or (reg and not cls):
            if cls:
                raise DivergenceInputError(
                    f"Metric {cls[0]!r} is not a regression metric; choose from {', '.join(REGRESSION_METRICS)}."
                )
            if roles.target is None or roles.prediction is None:
                raise DivergenceInputError("Regression metrics need a target and a prediction column.")
            out.append(Measure("regression", metrics=tuple(reg) or DEFAULT_METRICS["regression"]))
        else:
            if reg:
                raise DivergenceInputError(
                    f"Metric {reg[0]!r} is a regression metric; mixing it with classification "
                    f"metrics ({', '.join(cls)}) needs two scans."
                )
            if roles.target is None:
                raise DivergenceInputError("Classification metrics need a target column.")
            out.append(Measure("classification", metrics=tuple(cls) or DEFAULT_METRICS["classification"]))
    if not out:
        raise DivergenceInputError(
            "Nothing to measure: give a target and a prediction (classification or regression), "
            "an outcome column, or a rank or score to rank by."
        )
    return out


def check_names(names: Sequence[str]) -> None:
    """Each metric once."""
    dup = {n for n in names if list(names).count(n) > 1}
    if dup:
        raise DivergenceInputError(f"Metric {sorted(dup)[0]!r} is asked for twice.")


def build_outcomes(df: pd.DataFrame, roles: Roles | None = None, **keywords: Any) -> list[Outcome]:
    """The outcomes a scan measures, from the column roles (a :class:`~divergence.settings.Roles`,
    its fields as keywords, or both; see :func:`divergence.scan`)."""
    r = section(Roles, roles, keywords)
    out: list[Outcome] = []
    for m in measures(r):
        if m.kind == "query":  # one value per query, not per row
            from .queries import describe, query_table

            qt = query_table(df, query=r.query, relevance=r.relevance, rank=r.rank, rank_by=r.rank_by,
                             ascending=r.ascending, metrics=m.metrics, attributes=[], candidates=[])
            out += [_finish(name, v, describe(name)) for name, v in qt.values.items()]
        elif m.kind == "outcome":
            assert m.column is not None  # an outcome measure names its column (measures)
            out.append(column_outcome(df, m.column))
        elif m.kind == "ranking":
            out.append(ranking_outcome(df, **m.keywords(r)))
        else:
            kw = m.keywords(r)
            if m.kind == "regression":
                out += regression_outcomes(df, **kw)
            elif is_multiclass(kw["metrics"], kw["positive"]):
                out += multiclass_outcomes(df, target=kw["target"], prediction=kw["prediction"],
                                           metrics=kw["metrics"], score=kw["score"])
            else:
                out += classification_outcomes(df, **kw)
    check_names([o.name for o in out])
    return out

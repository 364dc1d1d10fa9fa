"""The rule of each classification and regression outcome, written once.

The pandas path (:mod:`divergence.prepare.outcomes`) turns these rules into numpy masks and the SQL
engines (:mod:`divergence.engines.sql`) into SQL text; ``tests/engines/test_rules.py`` checks on random
tables that both give the same slice table. Pure rules: no numpy, no pandas.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import DivergenceInputError, shown

__all__ = ["Condition", "ClassificationRule", "CLASSIFICATION", "RegressionError", "REGRESSION", "GammaKind",
           "parse_gamma", "ALIASES", "canonical_metric", "CLASSIFICATION_METRICS", "REGRESSION_METRICS",
           "WORSE_WHEN", "DEFAULT_METRICS", "SCORE_METRICS", "LOG_LOSS_EPS"]

#: A condition on a row with a known true class and prediction: ``y`` the true class is the
#: positive label, ``p`` the prediction is; ``all`` every such row.
Condition = Literal["y", "not y", "p", "not p", "y == p", "y != p", "all"]
CONDITIONS: tuple[str, ...] = ("y", "not y", "p", "not p", "y == p", "y != p", "all")


@dataclass(frozen=True)
class ClassificationRule:
    """A 0/1 outcome: defined on the rows meeting ``defined`` (and with both the true class
    and the prediction known), 1 on those meeting ``one``, 0 on the others."""

    rows: str  # the defined rows in words
    defined: Condition
    one: Condition


CLASSIFICATION: dict[str, ClassificationRule] = {
    "fpr": ClassificationRule("negatives", "not y", "p"),
    "fnr": ClassificationRule("positives", "y", "not p"),
    "tpr": ClassificationRule("positives", "y", "p"),
    "tnr": ClassificationRule("negatives", "not y", "not p"),
    "error": ClassificationRule("all rows", "all", "y != p"),
    "accuracy": ClassificationRule("all rows", "all", "y == p"),
    "precision": ClassificationRule("predicted positives", "p", "y"),
    "fdr": ClassificationRule("predicted positives", "p", "not y"),
    "npv": ClassificationRule("predicted negatives", "not p", "not y"),
    "for": ClassificationRule("predicted negatives", "not p", "y"),
    "positive_rate": ClassificationRule("all rows", "all", "p"),
    "base_rate": ClassificationRule("all rows", "all", "y"),
}

#: A regression error as a function of the residual ``prediction - target``.
RegressionError = Literal["abs", "square", "identity"]

REGRESSION: dict[str, RegressionError] = {
    "abs_error": "abs",
    "squared_error": "square",
    "signed_error": "identity",
}


#: Per-row metrics of a probability (a score in [0, 1]): the Brier score (score − label)², the log loss
#: −(label·log score + (1 − label)·log(1 − score)), and the calibration score − label (signed: a slice
#: whose mean is above 0 is over-confident in the positive class, below 0 under-confident).
SCORE_METRICS: tuple[str, ...] = ("brier", "log_loss", "calibration")
#: the log loss's scores are clipped to [eps, 1 − eps] (scikit-learn's former default): a score of
#: 0 or 1 on the wrong label costs −log(1e-15) = 34.5, not infinity
LOG_LOSS_EPS = 1e-15
#: Metric names for a binary classifier (the :data:`SCORE_METRICS` need a score in [0, 1]).
CLASSIFICATION_METRICS: tuple[str, ...] = tuple(CLASSIFICATION) + SCORE_METRICS
#: Metric names for a regressor.
REGRESSION_METRICS: tuple[str, ...] = tuple(REGRESSION)
#: The metrics a task measures when none is asked for (a scan, the dashboard's first choice).
DEFAULT_METRICS: dict[str, tuple[str, ...]] = {"classification": ("fpr", "fnr"), "regression": ("abs_error",)}

#: the direction in which a metric is worse (up: error rates and errors; down: rates of success
#: and a ranking's gain); metrics not listed have no worse direction (an outcome column, a bias)
WORSE_WHEN = {"fpr": "up", "fnr": "up", "error": "up", "fdr": "up", "for": "up", "brier": "up", "log_loss": "up",
              "abs_error": "up", "squared_error": "up", "tpr": "down", "tnr": "down", "accuracy": "down",
              "precision": "down", "npv": "down", "gamma": "down"}

#: other spellings of metric names
ALIASES = {"ppr": "positive_rate", "acc": "accuracy", "err": "error", "mae": "abs_error",
           "mse": "squared_error", "ae": "abs_error", "se": "squared_error", "logloss": "log_loss",
           "cross_entropy": "log_loss"}


def canonical_metric(metric: str) -> str:
    """A metric's name as the results spell it (``MAE`` -> ``abs_error``; ``Recall:Dog`` -> ``recall:Dog``,
    a class named as it is)."""
    kind, sep, cls = metric.strip().partition(":")
    if sep:
        k = kind.strip().lower()
        return f"{ALIASES.get(k, k)}:{cls.strip()}"
    m = metric.strip().lower()
    return ALIASES.get(m, m)


#: A ranking's value of a rank: in the top K, a power decay, or the DCG gain.
GammaKind = Literal["topk", "power", "dcg"]


def parse_gamma(spec: str) -> tuple[GammaKind, float]:
    """Parse ``topk:K``, ``power:A`` or ``dcg`` into (kind, parameter)."""
    text = spec.strip().lower() if isinstance(spec, str) else ""  # a number, a list: not a rank-value function
    kind, _, arg = text.partition(":")
    if kind == "dcg" and not arg:
        return "dcg", 0.0
    if kind in ("topk", "power") and arg:
        try:
            value = float(arg)
        except ValueError:
            value = float("nan")
        if kind == "topk" and value >= 1 and value == int(value):
            return "topk", value
        if kind == "power" and value > 0:
            return "power", value
    raise DivergenceInputError(
        f"Rank-value function (gamma) {shown(spec)} is not one of topk:K (K a positive integer), "
        "power:A (A > 0), dcg."
    )

"""The rule of each classification and regression outcome, written once.

The pandas path (:mod:`divergence.outcomes`) turns these rules into numpy masks and the SQL
engines (:mod:`divergence.sql`) into SQL text; ``tests/test_rules.py`` checks on random
tables that both give the same slice table. Pure data: no numpy, no pandas.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Condition", "ClassificationRule", "CLASSIFICATION", "RegressionError", "REGRESSION"]

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

"""The peers' scores, read off a slice table's tallies: what an analyst coming from SliceLine or
pysubgroup sorts by.

- ``sliceline:α`` (SliceLine, Sagadeeva and Boehm 2021; the ``sliceline`` package's
  ``Slicefinder._score``): ``α·(ē_S/ē − 1) − (1 − α)·(N/|S| − 1)``, with ē_S the slice's mean
  outcome, ē the whole dataset's, |S| the slice's rows where the metric is defined and N the
  whole dataset's; α in (0, 1], default 0.95. Undefined where ē is 0 (SliceLine needs errors).
- ``wracc`` (pysubgroup's ``WRAccQF``, ``StandardQF(1)``; ``StandardQFNumeric(1)`` for a real
  outcome): ``|S|/N · (ē_S − ē)``, support times divergence.
- ``lift``: ``ē_S / ē``, the slice's outcome as a multiple of the whole dataset's (association
  rules' lift). pysubgroup's ``LiftQF`` is ``StandardQF(0)`` = ``ē_S − ē``, the divergence:
  the same order. Its column is ``M_ratio``, because ``M_lift`` is the lift over the slice
  baseline (error metrics).

Each is one vector operation on the columns ``M`` and ``M_count``: cheap enough to add on request
(:func:`add_scores`, ``scores=`` in the statistics settings) or when a sort asks for one.
Sizes are the metric's defined rows, so for a rate such as FPR |S| counts the slice's negatives;
for an outcome defined on every row (error, a regression error) it is the slice's row count.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numpy as np

from .errors import DivergenceInputError, shown

__all__ = ["SCORE_KINDS", "SLICELINE_ALPHA", "Score", "parse_score", "is_score", "score_values", "add_scores",
           "score_column", "sort_column", "SCORE_LABELS"]

SCORE_KINDS = ("sliceline", "wracc", "lift")
#: SliceLine's α when none is given (the weight of the error term against the size term)
SLICELINE_ALPHA = 0.95
#: column suffix of each score (``M_<suffix>``)
_SUFFIX = {"sliceline": "sliceline", "wracc": "wracc", "lift": "ratio"}
#: people's names of the score columns, by suffix
SCORE_LABELS = {"sliceline": "SliceLine score", "wracc": "WRAcc", "ratio": "Lift (ratio to overall)"}
MSG_SCORE = ("Unknown score {value}; choose from sliceline (or sliceline:ALPHA, ALPHA in (0, 1], default 0.95), "
             "wracc, lift.")


@dataclasses.dataclass(frozen=True)
class Score:
    """One peer score: its kind and, for SliceLine, α."""

    kind: str
    alpha: float = SLICELINE_ALPHA

    @property
    def suffix(self) -> str:
        return _SUFFIX[self.kind]

    @property
    def spec(self) -> str:
        """The score as written in settings: ``sliceline:0.95``, ``wracc``, ``lift``."""
        return f"sliceline:{self.alpha!r}" if self.kind == "sliceline" else self.kind

    def column(self, metric: str) -> str:
        return f"{metric}_{self.suffix}"


def parse_score(spec: object) -> Score:
    """``sliceline``, ``sliceline:0.9``, ``wracc`` or ``lift`` (any case), else an error naming it."""
    if isinstance(spec, Score):
        return spec
    text = spec.strip().lower() if isinstance(spec, str) else ""  # a number, a list: not a score's name
    kind, sep, arg = text.partition(":")
    if kind not in SCORE_KINDS or (sep and kind != "sliceline"):
        raise DivergenceInputError(MSG_SCORE.format(value=shown(spec)))
    if kind != "sliceline":
        return Score(kind)
    if not sep:
        return Score(kind)
    try:
        alpha = float(arg)
    except ValueError:
        raise DivergenceInputError(MSG_SCORE.format(value=shown(spec))) from None
    if not (0.0 < alpha <= 1.0) or not math.isfinite(alpha):
        raise DivergenceInputError(f"SliceLine's alpha must be in (0, 1]; got {arg!r} in {spec!r}.")
    return Score(kind, alpha)


def is_score(spec: object) -> bool:
    """Whether ``spec`` names a peer score (rather than a column)."""
    try:
        parse_score(spec)
    except DivergenceInputError:
        return False
    return True


def score_values(table, metric: str | None, spec: object) -> np.ndarray:
    """One score of every slice of ``table`` for ``metric`` (the whole dataset's row first)."""
    score = parse_score(spec)
    stats = table.statistics(metric)
    mean = np.asarray(stats.value, dtype=float)
    n = np.asarray(stats.count, dtype=float)
    overall, total = float(mean[0]), float(n[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        if score.kind == "wracc":
            out = (n / total) * (mean - overall)
        elif score.kind == "lift":
            out = mean / overall if overall != 0 else np.full(mean.shape, np.nan)
        else:
            a = score.alpha
            out = (a * (mean / overall - 1.0) - (1.0 - a) * (total / n - 1.0) if overall != 0
                   else np.full(mean.shape, np.nan))
    out = np.where(n > 0, out, np.nan)
    return out.astype(float)


def score_column(metric: str, spec: object) -> str:
    """The column a score of ``metric`` is kept in: ``fpr_sliceline``, ``fpr_wracc``, ``fpr_ratio``."""
    return parse_score(spec).column(metric)


def add_scores(table, specs: Iterable[object], metrics: Sequence[str] | None = None):
    """``table`` with the score columns of ``specs`` for every metric (or those named); the scores
    and SliceLine's α are recorded in ``table.params["scores"]``. One SliceLine α per table."""
    scores = [parse_score(s) for s in specs]
    if not scores:
        return table
    kinds = [s.kind for s in scores]
    if kinds.count("sliceline") > 1:
        raise DivergenceInputError("Give SliceLine's score once (one alpha per scan).")
    columns = dict(table.columns)
    for m in (metrics or table.metric_names):
        for s in scores:
            columns[s.column(m)] = score_values(table, m, s)
    params = dict(table.params)
    params["scores"] = list(dict.fromkeys(list(params.get("scores") or []) + [s.spec for s in scores]))
    return dataclasses.replace(table, columns=columns, params=params)


def sort_column(table, by: str | None, metric: str | None = None):
    """(table, column) for a sort key that is a column or a score: a score not yet in the table is
    added (for that metric), so ``top(by="sliceline")`` works on any table."""
    if by is None or by in table.columns or by in ("itemset", "length"):
        return table, by
    if not is_score(by):
        return table, by
    score = parse_score(by)
    m = table.metric(metric).name
    col = score.column(m)
    recorded = [parse_score(s) for s in (table.params.get("scores") or [])]
    same = any(r == score for r in recorded)
    if col not in table.columns or not same:
        if score.kind == "sliceline" and col in table.columns and not same:
            # another α than the table's: computed for this sort only
            columns = dict(table.columns)
            columns[col] = score_values(table, m, score)
            return dataclasses.replace(table, columns=columns), col
        return add_scores(table, [score], [m]), col
    return table, col

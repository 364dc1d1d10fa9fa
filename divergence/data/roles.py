"""A first guess of the column roles of a new table (the user confirms them).

Names first (``label``, ``target``, ``y``, ``class``, ``*_recid``; ``pred*``, ``prediction``;
``score``, ``proba``), then the values: a target is binary, a prediction shares the target's
two values, a score is numeric with more than two values (a probability in [0, 1]). A
prediction named after its target (``predicted_default`` beside ``defaulted``) settles which
columns go together. Where more than one column fits a role equally well, or none does, the
role is left empty, with the candidates and the reason, for the user to choose: a wrong guess
that opens on an error helps nobody.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .nested import unsupported_columns

__all__ = ["RoleGuess", "guess_roles", "guess_positive", "distinct_values", "label_key"]

TARGET_NAMES = ("label", "target", "y", "class", "outcome", "truth", "actual", "ground_truth", "y_true",
                "gold", "true_label")
PREDICTION_WORDS = ("pred", "preds", "predicted", "prediction", "predictions", "yhat", "y_hat", "y_pred")
SCORE_WORDS = ("score", "scores", "proba", "probability", "prob", "probs", "logit", "confidence")
PROBABILITY_WORDS = ("proba", "probability", "prob", "probs")
POSITIVE_SPELLINGS = ("1", "1.0", "yes", "true", "y", "t", "positive", "pos", "+1", ">50k")
#: rows read to rule a column out before counting all its values (a column with more than two
#: values among them is not binary)
SAMPLE_ROWS = 10_000


@dataclass(frozen=True)
class RoleGuess:
    """The guessed roles, each with why; ``candidates`` lists the columns that fit a role left
    empty because more than one did equally well."""

    task: str                           # "classification" (also when nothing is recognised), "regression", "outcome"
    target: str | None = None
    prediction: str | None = None
    score: str | None = None
    threshold: float | None = None      # None with a score: the user sets it
    positive: object = None
    outcome: str | None = None
    reasons: dict = field(default_factory=dict)      # role -> sentence
    candidates: dict = field(default_factory=dict)   # role -> tuple of columns

    def notes(self) -> list[str]:
        """The reasons as sentences, in the order of the roles."""
        order = ("task", "target", "prediction", "score", "threshold", "positive", "outcome")
        return [self.reasons[k] for k in order if k in self.reasons]


def _norm(name: object) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_")


def _tokens(name: object) -> list[str]:
    return [t for t in _norm(name).split("_") if t]


def _target_rank(name: object) -> int | None:
    """0: a target's own name; 1: a target's pattern (``*_recid``, ``*_label``, ``is_*``…); None."""
    n = _norm(name)
    if n in TARGET_NAMES:
        return 0
    toks = _tokens(name)
    if n.endswith("recid") or (toks and toks[-1] in ("label", "target", "class", "outcome", "truth")) \
            or (toks and toks[0] in ("label", "target", "true")):
        return 1
    return None


def _is_prediction_name(name: object) -> bool:
    n, toks = _norm(name), _tokens(name)
    return n in PREDICTION_WORDS or any(t in PREDICTION_WORDS for t in toks) or n.startswith("pred")


def _is_score_name(name: object) -> bool:
    return any(t in SCORE_WORDS for t in _tokens(name))


def _stem(name: object) -> str:
    """The name less its prediction or score words: ``predicted_default`` -> ``default``."""
    toks = [t for t in _tokens(name) if t not in PREDICTION_WORDS and t not in SCORE_WORDS
            and not t.startswith("pred")]
    return "_".join(toks)


def _paired(stem: str, column: object) -> bool:
    """Whether ``column`` is the one a prediction or score with this stem was named after: each
    word of the stem begins a word of the column's name (``default`` -> ``defaulted``,
    ``fraud`` -> ``is_fraud``)."""
    words = _tokens(column)
    return len(stem) >= 3 and all(any(w.startswith(t) for w in words) for t in stem.split("_"))


def distinct_values(series: pd.Series, limit: int = 50) -> list | None:
    """The distinct non-missing values of a column as plain Python values, sorted; None
    when there are more than ``limit``."""
    values = pd.unique(series.dropna())
    if len(values) > limit:
        return None
    out = [v.item() if isinstance(v, np.generic) else v for v in values]
    try:
        return sorted(out)
    except TypeError:
        return sorted(out, key=str)


def _values(series: pd.Series) -> list | None:
    """The distinct non-missing values (sorted) when there are at most two, else None."""
    if len(series) > SAMPLE_ROWS and series.iloc[:SAMPLE_ROWS].nunique(dropna=True) > 2:
        return None
    return distinct_values(series, limit=2)


def _same_values(a: list | None, b: list | None) -> bool:
    """Two label columns that share their values (``1`` matches ``1.0`` and ``"1"``)."""
    if not a or not b:
        return False
    return {label_key(v) for v in a} == {label_key(v) for v in b}


def label_key(v: object) -> str:
    """A value's key when labels are matched across columns: a number by its float value (1, 1.0
    and "1" alike), text stripped and lower-cased."""
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(v).strip().lower()
    return repr(f) if math.isfinite(f) else str(v)


def _numeric_range(series: pd.Series) -> tuple[float, float] | None:
    """(min, max) of a numeric (not boolean) column with more than two distinct values, else None."""
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return None
    values = series.dropna()
    if not len(values) or values.nunique() <= 2:
        return None
    lo, hi = float(values.min()), float(values.max())
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


def _names(cols) -> str:
    return ", ".join(f"'{c}'" for c in cols)


def guess_positive(series: pd.Series) -> object:
    """The likely positive label of a binary column: 1, 'yes', 'true'… else the last value."""
    values = _values(series) or []
    hits = [v for v in values if str(v).strip().lower() in POSITIVE_SPELLINGS]
    return hits[0] if hits else (values[-1] if values else None)


def guess_roles(df: pd.DataFrame) -> RoleGuess:
    """Guess the task and the columns of a new table; unsure roles stay empty (see the module)."""
    nested = unsupported_columns(df)  # lists, structs, bytes: no role can use them
    columns = [c for c in df.columns if c not in nested]
    reasons: dict[str, str] = {}
    candidates: dict[str, tuple] = {}
    values: dict[str, list | None] = {}

    def binary(c) -> list | None:
        if c not in values:
            values[c] = _values(df[c])
        return values[c]

    def two_values(c) -> bool:
        v = binary(c)
        return v is not None and len(v) == 2

    # ---- the model's output: predicted labels (binary) and scores (numeric, more than two values)
    pred_named = [c for c in columns if _is_prediction_name(c)]
    predictions = [c for c in pred_named if two_values(c)]
    scores: list[str] = []
    seen: list[str] = []
    for c in columns:
        if not _is_score_name(c) or c in predictions:
            continue
        rng = _numeric_range(df[c])
        if rng is None:
            continue
        if any(t in PROBABILITY_WORDS for t in _tokens(c)) and not (0 <= rng[0] and rng[1] <= 1):
            continue  # named a probability, but not one
        if any(df[c].equals(df[s]) for s in seen):
            continue  # a copy of a score already listed (``decile_score.1``)
        seen.append(c)
        scores.append(c)

    # ---- the target: binary, named like one or after a prediction or score
    stems = {c: _stem(c) for c in predictions + scores}
    paired = [c for c in columns if c not in predictions and c not in scores
              and two_values(c)
              and any(_paired(s, c) for s in stems.values())]
    ranked = [(r, c) for c in columns if c not in predictions and c not in scores
              and (r := _target_rank(c)) is not None and two_values(c)]
    target = None
    if len(paired) == 1:
        target = paired[0]
        named = [p for p in predictions + scores if _paired(stems[p], target)]
        reasons["target"] = (f"Target '{target}': two values, and {_names(named)} "
                             f"{'is' if len(named) == 1 else 'are'} named after it.")
    elif ranked:
        best = min(r for r, _ in ranked)
        top = [c for r, c in ranked if r == best]
        if len(top) == 1:
            target = top[0]
            reasons["target"] = f"Target '{target}': named like a target, with two values."
        else:
            candidates["target"] = tuple(top)
    if target is None and len(paired) > 1:
        candidates["target"] = tuple(dict.fromkeys(paired + list(candidates.get("target", ()))))
    if target is None and candidates.get("target"):
        reasons["target"] = (f"Target: {_names(candidates['target'])} could each be the target; choose the one "
                             "the model predicts.")

    if target is not None:  # beside a binary target, a numeric 'prediction' is a score
        scores += [c for c in pred_named if c not in predictions and c not in scores
                   and _numeric_range(df[c]) is not None and _paired(_stem(c), target)]
        stems.update({c: _stem(c) for c in scores})

    # ---- the prediction: shares the target's values
    prediction = None
    fits = [p for p in predictions if target is None or _same_values(binary(p), binary(target))]
    if target is not None:
        unfit = [p for p in predictions if p not in fits]
        if unfit and not fits:
            reasons["prediction"] = (f"Prediction: {_names(unfit)} is named like a prediction but does not share "
                                     f"the values of '{target}'; choose the prediction or a score.")
        by_name = [p for p in fits if _paired(stems[p], target)]
        fits = by_name or fits
    if len(fits) == 1:
        prediction = fits[0]
        reasons["prediction"] = (f"Prediction '{prediction}': named like a prediction"
                                 + (f", with the values of '{target}'." if target is not None else ", with two values."))
    elif len(fits) > 1:
        candidates["prediction"] = tuple(fits)
        reasons["prediction"] = f"Prediction: {_names(fits)} could each be the prediction; choose one."

    # ---- the score (used when there is no predicted label)
    score, threshold = None, None
    if target is not None:
        by_name = [s for s in scores if _paired(stems[s], target)]
        score_fits = by_name or scores
    else:
        score_fits = scores
    if len(score_fits) == 1:
        score = score_fits[0]
        lo, hi = _numeric_range(df[score])  # type: ignore[misc]
        if 0 <= lo and hi <= 1:
            threshold = 0.5
            reasons["score"] = f"Score '{score}': named like a score, values in [0, 1]; threshold 0.5."
        else:
            reasons["score"] = (f"Score '{score}': named like a score, values from {lo:g} to {hi:g}; "
                                "set the threshold (a score at or above it predicts positive).")
    elif len(score_fits) > 1:
        candidates["score"] = tuple(score_fits)
        if prediction is None:
            reasons["score"] = f"Score: {_names(score_fits)} could each be the model's score; choose one."

    positive = None
    if target is not None:
        positive = guess_positive(df[target])
        usual = str(positive).strip().lower() in POSITIVE_SPELLINGS
        reasons["positive"] = (f"Positive label {positive!r}: the usual spelling of the positive class." if usual else
                               f"Positive label {positive!r}: the last of the two values; check it.")

    if target is not None or prediction is not None or score is not None or candidates:
        reasons["task"] = "Task: classification (a binary target and a model's labels or score)."
        return RoleGuess("classification", target, prediction, score, threshold,
                         positive, None, reasons, candidates)

    # ---- no binary target: a regression (a prediction named after a numeric column), or an outcome
    for p in pred_named:
        if _numeric_range(df[p]) is None:
            continue
        pairs = [c for c in columns if c != p and _paired(_stem(p), c) and _numeric_range(df[c]) is not None]
        if len(pairs) == 1:
            reasons.update(task="Task: regression (a numeric prediction named after a numeric column).",
                           target=f"Target '{pairs[0]}': '{p}' is named after it.",
                           prediction=f"Prediction '{p}': named like a prediction, numeric.")
            return RoleGuess("regression", pairs[0], p, reasons=reasons)
    named = [c for c in columns if _target_rank(c) is not None and _numeric_range(df[c]) is not None]
    if len(named) == 1:
        reasons.update(task="Task: a numeric outcome. No column looks like a model's prediction or score, so the "
                            "column named like a target is measured as it is.",
                       outcome=f"Outcome '{named[0]}': named like a target, numeric.")
        return RoleGuess("outcome", outcome=named[0], reasons=reasons)
    # nothing recognised: the page's default task, every role for the user to choose
    reasons["task"] = ("Task: not recognised. No column looks like a target, a model's prediction or a score: "
                       "choose them below, or measure a numeric column as it is (task 'A numeric outcome').")
    if named:
        candidates["outcome"] = tuple(named)
    return RoleGuess("classification", reasons=reasons, candidates=candidates)

"""A score given without its threshold: 0.5 where every value lies in [0, 1] (a probability), with a
note; otherwise refused, naming the score's range (issue 44).

A score cut at a threshold outside its range predicts one class on every row: the whole dataset's
FPR is 1 or 0, every slice is noise, and a scan says "no finding" about any model. So the threshold
is never guessed for a score that is not a probability; the one line says what to give.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError, shown

__all__ = ["DEFAULT_THRESHOLD", "score_threshold", "threshold_from_range", "threshold_note", "settle_threshold", "with_note"]

#: the threshold of a score whose every value lies in [0, 1]
DEFAULT_THRESHOLD = 0.5


def _range(values: pd.Series) -> tuple[float, float] | None:
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return None
    x = values.to_numpy(dtype=float, na_value=np.nan)
    x = x[np.isfinite(x)]
    return (float(x.min()), float(x.max())) if x.size else None


def threshold_note(column: str, lo: float, hi: float, role: str = "score") -> str:
    """The note of a threshold set to 0.5 for a score in [0, 1] (the words every surface shows)."""
    option = "reference_threshold=, --reference-threshold" if role == "reference score" else "threshold=, --threshold"
    return (f"No threshold given for the {role} '{column}': its values lie in [0, 1] (from {lo:g} to {hi:g}), so "
            f"rows are predicted positive where it is at least {DEFAULT_THRESHOLD:g} (set {option} to choose).")


def score_threshold(data: pd.DataFrame, column: str, threshold: float | None, *,
                    role: str = "score") -> tuple[float, str | None]:
    """The threshold to cut ``column`` at, and the note when it was not given: ``threshold`` itself when
    given; 0.5 when every value of the score lies in [0, 1]; else :class:`DivergenceInputError` naming the
    score's range. ``role``: "score" or "reference score" (which option the message names)."""
    if threshold is not None:
        return float(threshold), None
    if column not in data.columns:
        raise DivergenceInputError(f"{role.capitalize()} column {shown(column)} is not in the data.")
    return threshold_from_range(column, _range(data[column]), role)


def threshold_from_range(column: str, span: tuple[float, float] | None, role: str = "score") -> tuple[float, str]:
    """:func:`score_threshold` from the score's (lowest, highest) value (None: no numeric value)."""
    option = "--reference-threshold (reference_threshold=)" if role == "reference score" else "--threshold (threshold=)"
    if span is None:
        raise DivergenceInputError(f"The {role} {shown(column)} has no numeric value: a score needs numbers and "
                                   f"a threshold ({option}).")
    lo, hi = span
    if 0.0 <= lo and hi <= 1.0:
        return DEFAULT_THRESHOLD, threshold_note(column, lo, hi, role)
    raise DivergenceInputError(f"The {role} {shown(column)} runs from {lo:g} to {hi:g}, not within [0, 1]: give its "
                               f"threshold with {option}; a score at or above it predicts positive.")


def settle_threshold(data: pd.DataFrame, st):
    """``st`` (a :class:`~divergence.settings.Settings`) with the score's threshold set from ``data`` when
    it was not given (:func:`score_threshold`), and the note saying so (or None)."""
    import dataclasses

    r = st.roles
    if r.score is None or r.prediction is not None or r.threshold is not None or not isinstance(data, pd.DataFrame):
        return st, None
    threshold, note = score_threshold(data, r.score, None)
    return dataclasses.replace(st, roles=dataclasses.replace(r, threshold=threshold)), note


def with_note(table, note: str | None):
    """``table`` (a SliceTable or a Comparison) with ``note`` first among its notes."""
    import dataclasses

    return table if note is None else dataclasses.replace(table, notes=(note,) + tuple(table.notes))

"""What kind of values a column holds: numbers, whole numbers, text, dates or times, a row index.

Shared by the binning (:mod:`divergence.prepare.discretize`: dates are binned by period) and the choice
of default attributes (:mod:`divergence.data.columns`: a row index or a date column is left out).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["is_numeric", "integer_valued", "is_text", "is_datetime", "text_sample", "date_values", "is_date_column",
           "is_row_index", "SAMPLE", "DATE", "TIME", "MONTH_DATE"]

#: distinct values sampled for the shape checks (dates, names, free text)
SAMPLE = 2_000

DATE = re.compile(
    r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})"  # 2013-08-14, 14/08/2013
    r"([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([AaPp][Mm])?(Z|[+-]\d{2}:?\d{2})?)?\s*$"
)
TIME = re.compile(r"^\s*\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*([AaPp][Mm])?\s*$")
MONTH_DATE = re.compile(
    r"^\s*(\d{1,2}\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}?,?\s*\d{4}\s*$",
    re.IGNORECASE,
)


def is_text(series: pd.Series) -> bool:
    """Strings, objects or categories."""
    return (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
            or isinstance(series.dtype, pd.CategoricalDtype))


def is_datetime(series: pd.Series) -> bool:
    """Timestamps or periods."""
    return pd.api.types.is_datetime64_any_dtype(series) or isinstance(series.dtype, pd.PeriodDtype)


def text_sample(present: pd.Series, k: int = SAMPLE) -> list[str]:
    """Up to k distinct values as text, the same whatever the row order."""
    values = pd.Series(pd.unique(present))
    if len(values) > k:
        values = values.astype("string").sort_values(ignore_index=True)
        values = values.iloc[np.sort(np.random.default_rng(0).choice(len(values), k, replace=False))]
    return [str(v) for v in values.tolist()]


def is_numeric(series: pd.Series) -> bool:
    """Numbers (not booleans)."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def integer_valued(values: np.ndarray) -> bool:
    """Every value a whole number."""
    return bool(np.all(np.mod(values, 1) == 0))


def is_row_index(name: object, series: pd.Series) -> bool:
    """True for a column that only numbers the rows: unnamed and numeric, or unique integers (an
    unnamed column of text, from a header with an empty name, is classified as any other)."""
    text = str(name)
    if len(series) < 2 or not is_numeric(series):
        return False
    if text.strip() == "" or text.startswith("Unnamed:"):
        return True
    head = series.iloc[:1000]
    if not head.is_unique or head.isna().any():  # cheap rejection of most columns
        return False
    if series.isna().any():
        return False
    if not pd.api.types.is_integer_dtype(series) and not integer_valued(series.to_numpy(dtype=float)):
        return False
    return bool(series.is_unique)


def date_values(series: pd.Series) -> pd.Series:
    """A column's values as timestamps (NaT where missing or not a date)."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return series
    if isinstance(series.dtype, pd.PeriodDtype):
        return series.dt.to_timestamp()
    text = series.astype("string")
    first = text.dropna()
    fmt = "ISO8601" if len(first) and re.match(r"^\s*\d{4}-\d{2}-\d{2}", str(first.iloc[0])) else "mixed"
    try:
        out = pd.to_datetime(text, errors="coerce", format=fmt)
    except (ValueError, TypeError):  # a mix that ISO8601 refuses
        out = pd.to_datetime(text, errors="coerce", format="mixed")
    if getattr(out.dt, "tz", None) is not None:
        out = out.dt.tz_convert(None)
    return out


def is_date_column(series: pd.Series, present: pd.Series | None = None) -> bool:
    """True for a datetime column, or text whose values read as dates, timestamps or times (``present``:
    its values present, ``series.dropna()``, when read)."""
    if is_datetime(series):
        return True
    if not is_text(series):
        return False
    present = series.dropna() if present is None else present
    if len(present) == 0:
        return False
    head = [str(v) for v in present.iloc[:50].tolist()]
    if sum(1 for s in head if DATE.match(s) or TIME.match(s) or MONTH_DATE.match(s)) < 0.8 * len(head):
        return False  # most columns end here, cheaply
    sample = text_sample(present, 500)
    shaped = [s for s in sample if DATE.match(s) or TIME.match(s) or MONTH_DATE.match(s)]
    if len(shaped) < 0.95 * len(sample):
        return False
    dated = [s for s in shaped if not TIME.match(s)]
    if not dated:
        return True  # times of day only
    parsed = date_values(pd.Series(dated))
    return bool(parsed.notna().mean() >= 0.95)

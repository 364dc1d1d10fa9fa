"""A new file's columns for people, before any scan: the preview the Data page shows, one line per
column, and the typed bin edges of a column read back (roles are guessed by divergence.data.roles).
"""
from __future__ import annotations

import math

import pandas as pd

from ..errors import DivergenceInputError
from .formats import DASH, format_count

__all__ = ["preview_frame", "describe_columns", "parse_bin_spec"]

def preview_frame(df: pd.DataFrame, rows: int = 200) -> pd.DataFrame:
    """The first ``rows`` rows to show, a nested or binary column as text (a table widget cannot
    draw lists, structs or bytes)."""
    from ..data.nested import unsupported_columns

    head = df.head(rows)
    nested = unsupported_columns(head)
    if not nested:
        return head
    return head.assign(**{c: head[c].map(lambda v: v if v is None else str(v)[:200]) for c in nested})


def describe_columns(df: pd.DataFrame) -> pd.DataFrame:
    """One line per column: its type, distinct and missing values, and an example value."""
    from ..data.nested import unsupported_kind

    rows = []
    for col in df.columns:
        s = df[col]
        first = s.dropna()
        nested = unsupported_kind(s) is not None  # lists, structs, bytes: their values cannot be counted
        rows.append({"column": str(col), "type": "nested (not sliced by)" if nested else str(s.dtype),
                     "distinct": DASH if nested else format_count(s.nunique(dropna=True)),
                     "missing": format_count(int(s.isna().sum())),
                     "example": str(first.iloc[0])[:200] if len(first) else DASH})
    return pd.DataFrame(rows)


def parse_bin_spec(text: str | None, column: str) -> int | list[float] | None:
    """A column's binning typed by a person: '' (the default), '4' (bins), '30, 50' (edges)."""
    text = (text or "").strip()
    if not text:
        return None
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise DivergenceInputError(
            f"Bins of '{column}': write a number of bins (4) or increasing edges (30, 50); got {text!r}."
        ) from None
    if len(numbers) == 1 and "." not in parts[0] and "," not in text:
        n = int(numbers[0])
        if n < 1:
            raise DivergenceInputError(f"Bins of '{column}': the number of bins must be at least 1; got {n}.")
        return n
    if any(b <= a for a, b in zip(numbers, numbers[1:])) or not all(map(math.isfinite, numbers)):
        raise DivergenceInputError(f"Bins of '{column}': edges must be finite and increasing; got {text!r}.")
    return numbers

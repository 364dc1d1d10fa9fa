"""Cuts typed by hand on a numeric column: ``income<=20``, ``income>35``, ``income=(20,35]``,
``age=[30,40)``, the slice editor's way to try a bin the scan did not make.

A typed cut is one item: the rows whose value lies in the interval. Its attribute holds two items,
the cut and ``other`` (every other row, missing values included), so the slice and all its subsets
can be tallied and tested with the scan's settings (:func:`divergence.explain.adhoc.measure_slice`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import DivergenceInputError
from .discretize import AttributeBins, format_number

__all__ = ["TypedCut", "parse_cut", "OTHER", "looks_like_cut", "split_typed"]

#: the label of the rows outside a typed cut
OTHER = "other"

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf"
_OP = re.compile(rf"^(?P<col>.+?)\s*=?\s*(?P<op><=|>=|<|>|≤|≥)\s*(?P<x>{_NUM})$")
_RANGE = re.compile(rf"^(?P<col>.+?)\s*=\s*(?P<lo>[(\[])\s*(?P<a>{_NUM})\s*,\s*(?P<b>{_NUM})\s*(?P<hi>[)\]])$")


@dataclass(frozen=True)
class TypedCut:
    """The interval of one numeric column a typed item names."""

    column: str
    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = False
    high_closed: bool = True

    @property
    def label(self) -> str:
        """As the scan's bins read: ``<=20``, ``>35``, ``(20,35]``; ``>=30``, ``<40``, ``[30,40)`` otherwise."""
        lo, hi = format_number(self.low), format_number(self.high)
        if math.isinf(self.low):
            return f"{'<=' if self.high_closed else '<'}{hi}"
        if math.isinf(self.high):
            return f"{'>=' if self.low_closed else '>'}{lo}"
        return f"{'[' if self.low_closed else '('}{lo},{hi}{']' if self.high_closed else ')'}"

    @property
    def item(self) -> str:
        return f"{self.column}={self.label}"

    def mask(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        with np.errstate(invalid="ignore"):
            above = v >= self.low if self.low_closed else v > self.low
            below = v <= self.high if self.high_closed else v < self.high
        return above & below & ~np.isnan(v)

    def bins(self, values: np.ndarray) -> tuple[np.ndarray, AttributeBins]:
        """Codes (0: in the cut, 1: other) and the attribute's two items."""
        codes = np.where(self.mask(values), 0, 1).astype(np.int32)
        return codes, AttributeBins(name=self.column, kind="edges", labels=(self.label, OTHER))


def _column_of(text: str, columns: Iterable[str]) -> str | None:
    text = text.strip()
    names = [str(c) for c in columns]
    return text if text in names else None


def parse_cut(item: str, columns: Iterable[str], labels: dict | None = None) -> TypedCut | None:
    """The cut an item types (None when it is not one: an item of the scan's own bins, say).

    ``columns``: the numeric columns a cut may be on; ``labels``: per attribute, its items' labels
    (an item that is one of them is the scan's own, not a cut)."""
    item = str(item).strip()
    columns = list(columns)
    for name, known in (labels or {}).items():
        if item.startswith(f"{name}=") and item[len(name) + 1:].strip() in known:
            return None
    m = _RANGE.match(item)
    if m:
        col = _column_of(m["col"], columns)
        if col is None:
            return None
        a, b = float(m["a"]), float(m["b"])
        if not a < b:
            raise DivergenceInputError(f"The cut {item!r} is empty: its low end {m['a']} is not below its high end "
                                       f"{m['b']}.")
        return TypedCut(col, a, b, m["lo"] == "[", m["hi"] == "]")
    m = _OP.match(item)
    if m:
        col = _column_of(m["col"], columns)
        if col is None:
            return None
        x, op = float(m["x"]), m["op"].replace("≤", "<=").replace("≥", ">=")
        if op in ("<=", "<"):
            return TypedCut(col, high=x, high_closed=op == "<=")
        return TypedCut(col, low=x, low_closed=op == ">=", high_closed=True)
    return None


def looks_like_cut(item: str) -> bool:
    """Whether an item is written as a cut (``col<=x``, ``col=(a,b]``), whatever its column."""
    item = str(item).strip()
    return bool(_RANGE.match(item) or _OP.match(item))


def split_typed(text: str, names: Iterable[str]) -> list[str]:
    """Split ``a=x, income<=20, b=y`` into items: a comma starts a new item before ``name=`` or a
    cut ``name<=…`` on a known name (values may hold commas: ``income=(20,35]``)."""
    names = sorted((str(n) for n in names), key=len, reverse=True)
    starts = [re.compile(rf"^{re.escape(n)}\s*(=|<|>|≤|≥)") for n in names]
    items: list[str] = []
    for part in str(text).split(","):
        stripped = part.strip()
        if items and not any(p.match(stripped) for p in starts):
            items[-1] = items[-1] + "," + part
        else:
            items.append(stripped)
    return [i.strip() for i in items if i.strip()]

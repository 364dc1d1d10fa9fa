"""The columns the attribute screen's rules read, each read once (:class:`Sample`), and how they read them.

The rules of :mod:`divergence.data.columns`, :mod:`divergence.data.column_rules` and the later ones
(:mod:`divergence.data.rival_rules`, :mod:`divergence.data.outcome_alone`) measure a table's columns on
the same rows (every row up to :data:`SAMPLE_ROWS`, else a seeded sample) and the same way: as codes of
their values, as groups (numbers with many values in equal-count bins), as numbers, as text. A
:class:`Sample` reads each of these once for a screen and shares it, read-only, with every rule; each
value is the one the rule computed from the column itself (tests/data/test_screen_sample.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Sample", "SAMPLE_ROWS", "MANY_VALUES", "BINS", "sample_index", "numeric_values", "groups", "binned",
           "coded_values", "factorized"]

#: rows measured (a seeded sample of larger tables)
SAMPLE_ROWS = 20_000
#: a numeric column with more distinct values than this is measured in BINS equal-count bins
MANY_VALUES = 20
BINS = 10


def numeric_values(s: pd.Series) -> np.ndarray | None:
    if not _numbers(s):
        return None
    return s.to_numpy(dtype=float, na_value=np.nan)


def _numbers(s: pd.Series) -> bool:
    """The column holds numbers (not booleans): what :func:`numeric_values` reads."""
    return not (pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s))


def groups(s: pd.Series) -> tuple[np.ndarray, int, np.ndarray]:
    """The column as group codes (values; a numeric column with many values in BINS equal-count
    bins), missing as its own code; and which codes are missing."""
    return binned(numeric_values(s)) or coded_values(s)


def binned(x: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray] | None:
    """Numbers with more than MANY_VALUES distinct values in BINS equal-count bins (missing as code BINS),
    as :func:`groups` has them; None for other columns (``x`` None: not numeric)."""
    if x is None or len(pd.unique(x[~np.isnan(x)])) <= MANY_VALUES:
        return None
    ranks = pd.Series(x).rank(method="average", pct=True).to_numpy()
    missing = np.isnan(ranks)
    codes = np.where(missing, BINS, np.minimum((np.nan_to_num(ranks) * BINS).astype(np.int64), BINS - 1))
    return codes.astype(np.int64), BINS + 1, missing


def coded_values(s: pd.Series) -> tuple[np.ndarray, int, np.ndarray]:
    """The column's values as codes in order of first appearance, missing as a code of its own (the
    last); their number; and which rows are missing."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    return _coded(codes, len(uniques))


def _coded(codes: np.ndarray, k: int) -> tuple[np.ndarray, int, np.ndarray]:
    """:func:`coded_values` from ``pd.factorize``'s codes (missing -1) and its number of values."""
    codes = codes.astype(np.int64)
    missing = codes < 0
    if missing.any():
        codes[missing] = k
        k += 1
    return codes, k, missing


def sample_index(n: int, size: int = SAMPLE_ROWS) -> np.ndarray | None:
    """The rows measured: None (every row) up to ``size`` rows, else a seeded sample of ``size`` rows in order."""
    if n <= size:
        return None
    return np.sort(np.random.default_rng(0).choice(n, size, replace=False))


def factorized(s: pd.Series) -> tuple[np.ndarray, int]:
    """:func:`coded_values` less the missing rows."""
    return coded_values(s)[:2]


def _frozen(a: Any) -> Any:
    """``a`` (an array, a tuple of them, or None), read-only: shared between the rules, never changed."""
    if isinstance(a, np.ndarray):
        a.flags.writeable = False
    elif isinstance(a, tuple):
        for x in a:
            _frozen(x)
    return a


class Sample:
    """A table's columns on the rows the screen's rules measure (every row up to ``size`` rows, else a
    seeded sample: :func:`sample_index`), each read and converted once per screen and shared between
    the rules: the column, its codes (:func:`factorized`), groups (:func:`groups`), numbers
    (:func:`numeric_values`), which rows are present and its distinct values. Every value is the one
    the rules computed from the sampled column themselves (the same bits), read-only. ``full``: the
    same on every row (itself for a table of at most ``size`` rows)."""

    def __init__(self, df: pd.DataFrame, size: int | None = SAMPLE_ROWS, full: Sample | None = None):
        self.df = df
        self.idx = None if size is None else sample_index(len(df), size)
        self.n = len(df) if self.idx is None else len(self.idx)
        self.size = size
        # not ``self.full = self``: a reference cycle would hold the table and every column read until
        # the cyclic collector ran (13 MiB on Adult, at the scan's peak)
        self._full: Sample | None = None if self.idx is None else (full if full is not None else Sample(df, None))
        self._memo: dict[tuple[str, object], object] = {}

    @property
    def full(self) -> Sample:
        """The same table on every row (itself when it holds every row)."""
        return self if self._full is None else self._full

    def sized(self, size: int) -> Sample:
        """The same table on a sample of ``size`` rows (this one when it is that sample)."""
        if size == self.size or (self.idx is None and len(self.df) <= size):
            return self
        return Sample(self.df, size, self.full)

    def _get(self, what: str, col: object, make: Callable[[], Any]) -> Any:
        key = (what, col)
        if key not in self._memo:
            self._memo[key] = _frozen(make())
        return self._memo[key]

    def roles(self, *roles) -> pd.DataFrame:
        """The role columns of the table (those of ``roles`` in it, not None) on the rows measured: what
        :func:`model_of` reads."""
        cols = list(dict.fromkeys(c for c in roles if c is not None and c in self.df.columns))
        return self.df[cols] if self.idx is None else self.df[cols].iloc[self.idx]

    def series(self, col) -> pd.Series:
        """The column on the rows measured."""
        return self._get("series", col, lambda: self.df[col] if self.idx is None else self.df[col].iloc[self.idx])

    def coded(self, col) -> tuple[np.ndarray, int, np.ndarray]:
        """:func:`coded_values` of the column."""
        return self._get("coded", col, lambda: _coded(self.factorized(col)[0], len(self.factorized(col)[1])))

    def factorized(self, col) -> tuple[np.ndarray, Any]:
        """``pd.factorize`` of the column (missing -1): its codes and its distinct values present."""
        return self._get("factorized", col, lambda: self._factorize(col))

    def _factorize(self, col) -> tuple[np.ndarray, Any]:
        if self.idx is not None and self.text(col) and ("factorized", col) in self.full._memo:
            # text factorized on every row already: its codes on the rows measured, numbered again in order of
            # first appearance there (equal texts are the same string: what factorizing those rows gives)
            codes, uniques = self.full.factorized(col)
            sub = codes[self.idx]
            present = sub >= 0
            first, order = pd.factorize(sub[present])
            out = np.full(len(sub), -1, dtype=codes.dtype)
            out[present] = first
            return out, uniques.take(order)
        return pd.factorize(self.series(col), use_na_sentinel=True)

    def texts(self, col) -> tuple[np.ndarray, list[str]] | None:
        """The column's values as text (``astype("string")``, missing as "\u0001"), each distinct value
        converted once: each row's position in a list of texts (-1: the last), and the list (a text may be
        in it twice: rows compare by text); None for columns of other values than text or plain numbers."""
        return self._get("texts", col, lambda: self._texts(col))

    def _texts(self, col) -> tuple[np.ndarray, list[str]] | None:
        dtype = self.df[col].dtype
        if self.text(col):
            codes, uniques = self.factorized(col)
            return codes, list(uniques) + ["\u0001"]
        if isinstance(dtype, np.dtype) and (dtype.kind in "iu" or dtype == np.float64):
            values = self.series(col).to_numpy()
            # every bit pattern a value of its own (-0.0 reads "-0.0"), each converted as the column converts it
            codes, first = pd.factorize(values.view(np.int64) if dtype.kind == "f" else values)
            distinct = pd.Series(first.view(np.float64) if dtype.kind == "f" else first, dtype=dtype)
            return codes, distinct.astype("string").fillna("\u0001").tolist()
        return None

    def text(self, col) -> bool:
        """The column holds text (``pd.StringDtype``)."""
        return self._get("text", col, lambda: isinstance(self.df[col].dtype, pd.StringDtype))

    def codes(self, col) -> tuple[np.ndarray, int]:
        """:func:`factorized` of the column."""
        return self.coded(col)[:2]

    def numeric(self, col) -> np.ndarray | None:
        """:func:`numeric_values` of the column."""
        return self._get("numeric", col, lambda: numeric_values(self.series(col)) if _numbers(self.df[col]) else None)

    def groups(self, col) -> tuple[np.ndarray, int, np.ndarray]:
        """:func:`groups` of the column (its codes when it is not binned)."""
        return self._get("groups", col, lambda: self.binned(col) or self.coded(col))

    def binned(self, col) -> tuple[np.ndarray, int, np.ndarray] | None:
        """:func:`binned` of the column's numbers (None: not binned)."""
        return self._get("binned", col, lambda: binned(self.numeric(col)))

    def present(self, col) -> np.ndarray:
        """Where the column is not missing (``notna``; for text, where factorize codes a value)."""
        return self._get("present", col, lambda: self.factorized(col)[0] >= 0 if self.text(col)
                         else self.series(col).notna().to_numpy())

    def distinct(self, col) -> np.ndarray | pd.api.extensions.ExtensionArray:
        """The distinct values present (``pd.unique`` of them, in order of appearance)."""
        return self._get("distinct", col, lambda: pd.unique(self.series(col)[self.present(col)]))

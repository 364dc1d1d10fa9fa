"""Discretization: every attribute column becomes a small set of named items.

Categorical columns keep their values; numeric columns are binned (quantiles by
default, equal width, or explicit edges), bins closed on the right. A missing
value is an item of its own, ``col=missing``. Item labels read naturally and
sort in numeric order, so tables and charts list ``<=33``, ``(33,41]``, ``>41``.
"""
from __future__ import annotations

import dataclasses
import datetime
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ..data.column_kinds import date_values, integer_valued, is_date_column, is_numeric
from ..errors import DivergenceInputError
from ..settings import check
from ..vocabulary import PERIODS

__all__ = ["AttributeBins", "Discretized", "discretize", "format_number", "MAX_CATEGORIES", "MISSING",
           "category_label", "numeric_values", "PERIODS", "default_period", "period_labels", "BinSpec",
           "Binning", "MAX_DATE_ITEMS", "binned_bins", "categorical_bins", "explicit_edges",
           "keeps_as_categories", "quantile_levels", "summary_edges", "fewer_bins_note", "times_of_day_error"]

#: Label of the item that holds a column's missing values.
MISSING = "missing"
#: Integer-valued numeric columns with at most this many distinct values are kept
#: as categories instead of being binned (a 1-5 rating, a 0/1 flag, a count of children).
MAX_CATEGORIES = 10

BinSpec = int | str | Sequence[float]
Binning = Literal["quantile", "uniform", "tree"]
#: how a column became items (AttributeBins.kind)
BinKind = Literal["categorical", "quantile", "uniform", "edges", "date", "tree"]
#: a date column named without bins gets the finest period with at most this many items
MAX_DATE_ITEMS = 12


@dataclass(frozen=True)
class AttributeBins:
    """How one column became items: its kind, its item labels in code order, its edges."""

    name: str
    kind: BinKind
    labels: tuple[str, ...]
    edges: tuple[float, ...] = ()
    #: code of the ``missing`` item, or -1 when the column has no missing value
    missing_code: int = -1
    #: the original value behind each categorical label (None for bins and missing)
    values: tuple[object, ...] = ()
    #: for a date column: the period of its items ("month", "quarter" or "year")
    period: str | None = None

    @property
    def n_items(self) -> int:
        return len(self.labels)

    def item(self, code: int) -> str:
        """The readable item ``name=label`` for one code."""
        return f"{self.name}={self.labels[code]}"

    def to_spec(self) -> dict:
        """A JSON-friendly description, enough to bin new data the same way."""
        spec: dict = {"column": self.name, "kind": self.kind}
        if self.kind == "date":
            spec["period"] = self.period
        elif self.kind != "categorical":
            spec["edges"] = [float(e) for e in self.edges]
        return spec


@dataclass(frozen=True)
class Discretized:
    """The item codes of every row: ``codes[r, a]`` is row r's item on attribute a."""

    attributes: tuple[str, ...]
    codes: np.ndarray
    bins: tuple[AttributeBins, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    def item_labels(self) -> list[str]:
        """Every item as ``attr=value``, attribute by attribute, in code order."""
        return [b.item(c) for b in self.bins for c in range(b.n_items)]


def format_number(x: float) -> str:
    """A number as short as it reads: 33.0 -> '33', 0.1 -> '0.1', 1e-7 -> '0.0000001'."""
    x = float(x)
    if x == 0:
        return "0"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return np.format_float_positional(x, trim="-")


def _round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _readable_edges(edges: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Round computed edges to the fewest significant digits that keep them apart and close."""
    edges = np.unique(edges[np.isfinite(edges)])
    if edges.size == 0:
        return edges
    spread = hi - lo
    tol = 0.01 * spread if spread > 0 else 0.0
    for digits in range(2, 17):
        rounded = np.array([_round_sig(e, digits) for e in edges])
        if np.unique(rounded).size == edges.size and np.all(np.abs(rounded - edges) <= tol):
            edges = rounded
            break
    # an edge at or above the maximum, or below the minimum, would make an empty bin
    return edges[(edges < hi) & (edges >= lo)]


def bin_labels(edges: Sequence[float] | np.ndarray) -> list[str]:
    """Labels of right-closed bins: ``<=e1``, ``(e1,e2]``, …, ``>ek``."""
    f = [format_number(e) for e in edges]
    if not f:
        return ["all"]
    labels = [f"<={f[0]}"]
    labels += [f"({a},{b}]" for a, b in zip(f[:-1], f[1:])]
    labels.append(f">{f[-1]}")
    return labels


_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _natural_key(label: str) -> tuple:
    """Sort key for text categories: by the first number inside, ``<`` before, ``>`` after."""
    s = label.strip()
    m = _NUM.search(s)
    if m is None:
        return (1, 0.0, 0, s.lower(), s)
    num = float(m.group())
    prefix = s[: m.start()]
    if prefix.endswith(("<", "<=", "≤", "under", "below")) or prefix.startswith("<"):
        rank = -1
    elif prefix.startswith(">") or prefix.endswith((">", ">=", "≥", "over", "above")):
        rank = 1
    else:
        rank = 0
    return (0, num, rank, s.lower(), s)


def category_label(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return format_number(float(value))
    text = str(value)
    if text == "":
        return "''"
    if text == MISSING:
        # a genuine category spelled like the missing item must read differently
        return f"'{MISSING}'"
    return text


def _categorical(name: str, series: pd.Series) -> tuple[np.ndarray, AttributeBins]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        cats = list(series.cat.categories)
        codes = series.cat.codes.to_numpy().astype(np.int32)
    else:
        raw, uniques = pd.factorize(series, use_na_sentinel=True)
        present = list(uniques)
        if all(isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)) for v in present):
            order = sorted(range(len(present)), key=lambda i: float(present[i]))
        else:
            order = sorted(range(len(present)), key=lambda i: _natural_key(str(present[i])))
        cats = [present[i] for i in order]
        remap = np.empty(len(present) + 1, dtype=np.int32)
        remap[-1] = -1
        remap[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int32)
        codes = remap[raw]
    labels = [category_label(v) for v in cats]
    if len(set(labels)) != len(labels):
        # distinct values that print alike (1 and "1"): keep them apart by their type
        labels = [lab if labels.count(lab) == 1 else f"{lab}<{type(v).__name__}>"
                  for lab, v in zip(labels, cats)]
    missing = codes < 0
    missing_code = -1
    if missing.any():
        missing_code = len(labels)
        labels.append(MISSING)
        codes[missing] = missing_code
    return codes, AttributeBins(name=name, kind="categorical", labels=tuple(labels),
                                missing_code=missing_code, values=tuple(cats))


#: a column of small integers spanning at most this many values finds them by comparing (each a
#: pass over its values in their own width); a wider one by counting
FEW_VALUES = 16


def _small_integers(series: pd.Series) -> tuple[np.ndarray, np.ndarray, int] | None:
    """A column of numpy integers within a span of 65,536: its values present (sorted), the
    column's values and ``lo``, its smallest, from one counting pass (no hashing); else None."""
    if not isinstance(series.dtype, np.dtype) or series.dtype.kind not in "iu" or not len(series):
        return None  # pandas' nullable integers (Int64) may hold a missing value: hashed
    values = series.to_numpy()
    lo, hi = int(values.min()), int(values.max())
    if hi - lo >= 1 << 16:
        return None
    if hi - lo < FEW_VALUES:
        present = np.array([v for v in range(lo, hi + 1) if v in (lo, hi) or bool((values == v).any())],
                           dtype=np.int64)
    else:
        present = np.flatnonzero(np.bincount(_offsets(values, lo), minlength=1)) + lo
    return present, values, lo


def _offsets(values: np.ndarray, lo: int) -> np.ndarray:
    """``values - lo`` as intp (computed in 64 bits: a narrow type would wrap)."""
    return np.subtract(values, lo, dtype=np.intp, casting="unsafe") if lo else values.astype(np.intp, copy=False)


@dataclass(frozen=True)
class _Shifted:
    """A column whose codes are its values less ``lo`` (every integer from ``lo`` to its largest is
    present): written into the codes with the other such columns a block of rows at a time."""

    values: np.ndarray
    lo: int


def _integer_categories(name: str, present: np.ndarray, values: np.ndarray,
                        lo: int) -> tuple[np.ndarray | _Shifted, AttributeBins]:
    """:func:`_categorical` of a column of small integers (no missing value): items in numeric order."""
    cats = present.tolist()
    ab = AttributeBins(name=name, kind="categorical", labels=tuple(category_label(v) for v in cats),
                       missing_code=-1, values=tuple(cats))
    if len(present) == int(present[-1]) - lo + 1:
        return _Shifted(values, lo), ab
    lut = np.zeros(int(present[-1]) - lo + 1, dtype=np.int32)
    lut[present - lo] = np.arange(len(present), dtype=np.int32)
    return lut[_offsets(values, lo)], ab


def _write_shifted(codes: np.ndarray, columns: Sequence[tuple[int, _Shifted]], block: int = 1 << 15) -> None:
    """Write each :class:`_Shifted` column into ``codes`` (C order), a block of rows at a time: a
    column written whole would write every row's 48 bytes once per attribute."""
    for start in range(0, len(codes) if columns else 0, block):
        rows = codes[start:start + block]
        for j, col in columns:
            part = col.values[start:start + block]
            if col.lo:
                np.subtract(part, col.lo, out=rows[:, j], dtype=np.int64, casting="unsafe")
            else:
                rows[:, j] = part


def _binned(name: str, values: np.ndarray, edges: np.ndarray,
            kind: BinKind) -> tuple[np.ndarray, AttributeBins]:
    missing = np.isnan(values)
    codes = np.searchsorted(edges, values, side="left").astype(np.int32)
    labels = bin_labels(edges)
    missing_code = -1
    if missing.any():
        missing_code = len(labels)
        labels.append(MISSING)
        codes[missing] = missing_code
    return codes, AttributeBins(name=name, kind=kind, labels=tuple(labels),
                                edges=tuple(float(e) for e in edges), missing_code=missing_code)


def numeric_values(name: str, series: pd.Series) -> np.ndarray:
    try:
        return pd.to_numeric(series, errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DivergenceInputError(
            f"Column '{name}' has bin edges but holds values that are not numbers "
            f"(for example {series.dropna().iloc[0]!r})."
        ) from exc


def _explicit_edges(name: str, spec: Sequence[float]) -> np.ndarray:
    try:
        edges = np.asarray([float(e) for e in spec], dtype=float)
    except (TypeError, ValueError) as exc:
        raise DivergenceInputError(f"Bin edges for '{name}' must be numbers; got {list(spec)!r}.") from exc
    if edges.size == 0 or not np.all(np.isfinite(edges)):
        raise DivergenceInputError(f"Bin edges for '{name}' must be finite numbers; got {list(spec)!r}.")
    if np.any(np.diff(edges) <= 0):
        raise DivergenceInputError(f"Bin edges for '{name}' must be strictly increasing; got {list(spec)!r}.")
    return edges


def _computed_edges(values: np.ndarray, n_bins: int, binning: Binning) -> np.ndarray:
    finite = values[~np.isnan(values)]
    if finite.size == 0 or n_bins < 2:
        return np.empty(0)
    lo, hi = float(finite.min()), float(finite.max())
    if binning == "uniform":
        raw = lo + (hi - lo) * np.arange(1, n_bins) / n_bins
    else:
        raw = np.quantile(finite, np.arange(1, n_bins) / n_bins)
    return _readable_edges(np.asarray(raw, dtype=float), lo, hi)


def fewer_bins_note(name: str, n_bins: int, binning: str, labels: Sequence[str],
                    values: np.ndarray | None = None, *, tied: Sequence[float] | None = None,
                    share: float | None = None) -> str:
    """The note of a column that got fewer bins than asked: quantile edges that fall on the same
    value (a value on many rows: ``fare`` at 0 or 7.25) are one edge, so a bin disappears. The tied
    values and their share of the rows come from ``values``, or are given (the SQL engines)."""
    bins = [b for b in labels if b != MISSING]
    why = "tied values share an edge" if binning != "uniform" else "an empty bin at the end"
    text = f"'{name}': {n_bins} {binning} bins asked, {len(bins)} made ({why}): {', '.join(bins)}."
    if values is not None and binning == "quantile":
        finite = values[~np.isnan(values)]
        if finite.size:
            raw = np.quantile(finite, np.arange(1, n_bins) / n_bins)
            tied = sorted({float(v) for v in raw if np.count_nonzero(raw == v) > 1})
            share = np.count_nonzero(np.isin(finite, tied)) / finite.size if tied else None
    if tied and share is not None:
        text = text[:-1] + (f"; the quantile edges fall on {', '.join(format_number(v) for v in tied)}, held "
                            f"by {share:.0%} of its rows. Give edges (bins) or fewer bins to choose.")
    return text


def period_labels(values: pd.Series, period: str) -> pd.Series:
    """Each timestamp's period as text: ``2013-08`` (month), ``2013-Q3`` (quarter), ``2013`` (year)."""
    if period == "month":
        out = values.dt.strftime("%Y-%m")
    elif period == "quarter":
        out = values.dt.year.astype("Int64").astype("string") + "-Q" + values.dt.quarter.astype("Int64").astype("string")
    else:
        out = values.dt.year.astype("Int64").astype("string")
    return out.astype("string").where(values.notna(), None)


def default_period(values: pd.Series) -> str:
    """The finest of month, quarter and year giving at most MAX_DATE_ITEMS items (year otherwise)."""
    present = values.dropna()
    if present.empty:
        return "year"
    for period in PERIODS[:-1]:
        if period_labels(present, period).nunique() <= MAX_DATE_ITEMS:
            return period
    return "year"


def times_of_day_error(name: str) -> DivergenceInputError:
    """The one line for a column of times of day (no date) binned as dates, from any engine."""
    return DivergenceInputError(f"Column '{name}' holds times of day without a date: it has no month, quarter or "
                                "year to bin by. To slice by time, add a column of the hour (or any text label).")


def _times_of_day(series: pd.Series) -> bool:
    present = series.dropna()
    if present.empty:
        return False
    if isinstance(present.iloc[0], datetime.time) and all(isinstance(v, datetime.time) for v in present):
        return True
    if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
        return False
    from ..data.column_kinds import TIME

    head = [str(v) for v in present.iloc[:200]]
    return all(TIME.match(s) for s in head) and bool(present.astype(str).str.match(TIME.pattern).all())


def _dates(name: str, series: pd.Series, spec: object) -> tuple[np.ndarray, AttributeBins]:
    if _times_of_day(series):
        raise times_of_day_error(name)
    values = date_values(series)
    bad = series.notna() & values.isna()
    if bad.any():
        raise DivergenceInputError(
            f"Column '{name}' is binned by {spec if isinstance(spec, str) else 'period'} but holds values "
            f"that are not dates (for example {series[bad].iloc[0]!r})."
        )
    period = spec if isinstance(spec, str) else default_period(values)
    codes, ab = _categorical(name, period_labels(values, period))
    return codes, dataclasses.replace(ab, kind="date", period=period)


def _check_period(name: str, spec: object) -> None:
    if isinstance(spec, str) and spec not in PERIODS:
        raise DivergenceInputError(
            f"Bins for '{name}' must be edges, a bin count or a period ({', '.join(PERIODS)}); got {spec!r}."
        )


def discretize(
    df: pd.DataFrame,
    attributes: Sequence[str],
    *,
    bins: Mapping[str, BinSpec] | None = None,
    quantile_bins: int = 3,
    binning: Binning = "quantile",
    max_categories: int = MAX_CATEGORIES,
    cuts: Mapping[str, Sequence[float]] | None = None,
) -> Discretized:
    """Turn the attribute columns of ``df`` into item codes.

    Parameters
    ----------
    df : DataFrame holding the attribute columns.
    attributes : the columns to slice by, in the order itemsets will name them.
    bins : per column, explicit edges (a list of numbers, bins closed on the right),
        a number of bins (an int, cut by ``binning``), or for a date column a period
        (``"month"``, ``"quarter"``, ``"year"``). A date column (datetime values, or text
        that reads as dates) without bins gets the finest period with at most 12 items.
    quantile_bins : number of bins for numeric columns without an entry in ``bins``.
    binning : ``"quantile"`` (equal-frequency, the default) or ``"uniform"`` (equal width);
        ``"tree"`` (cut points that follow the outcome) is chosen by :func:`divergence.scan`, which
        passes the cut points here as edges; a column left to this function is cut by quantiles.
    max_categories : integer-valued columns with at most this many distinct values are
        kept as categories (default 10).
    cuts : per column, the cut points a tree chose (:mod:`divergence.prepare.cutpoints`; possibly none):
        the column is cut there, its bins of kind ``"tree"``.
    """
    cuts = dict(cuts or {})
    bins = dict(bins or {})
    binning, quantile_bins = check("binning", binning), check("quantile_bins", quantile_bins)
    if binning == "tree":
        binning = "quantile"
    unknown = [c for c in bins if c not in attributes]
    if unknown:
        raise DivergenceInputError(
            f"Bins were given for {', '.join(map(repr, unknown))}, which "
            f"{'is not an attribute' if len(unknown) == 1 else 'are not attributes'} of this scan."
        )
    # filled column by column in the row order the miner reads: no second copy of the table
    codes = np.empty((len(df), len(attributes)), dtype=np.int32)
    out_bins: list[AttributeBins] = []
    notes: list[str] = []
    shifted: list[tuple[int, _Shifted]] = []
    col: np.ndarray | _Shifted
    for j, name in enumerate(attributes):
        if name not in df.columns:
            raise DivergenceInputError(f"Attribute column '{name}' is not in the data.")
        series = df[name]
        spec = bins.get(name)
        _check_period(name, spec)
        if name in cuts:
            col, ab = _binned(name, numeric_values(name, series), np.asarray(cuts[name], dtype=float), "tree")
        elif isinstance(spec, str) or (spec is None and is_date_column(series)):
            col, ab = _dates(name, series, spec)
        elif spec is not None and not isinstance(spec, (int, np.integer)):
            edges = _explicit_edges(name, spec)
            col, ab = _binned(name, numeric_values(name, series), edges, "edges")
        elif is_numeric(series):
            n_bins = int(spec) if spec is not None else int(quantile_bins)
            small = _small_integers(series)
            # distinct values by hashing (not sorting): cheap on tens of millions of rows
            distinct = np.asarray(series.dropna().unique(), dtype=float) if small is None else small[0].astype(float)
            if spec is None and (
                (integer_valued(distinct) and distinct.size <= max_categories)
                or distinct.size <= n_bins
            ):
                col, ab = _categorical(name, series) if small is None else _integer_categories(name, *small)
            else:
                values = series.to_numpy(dtype=float, na_value=np.nan)
                edges = _computed_edges(values, n_bins, binning)
                col, ab = _binned(name, values, edges, binning)
                if edges.size + 1 < n_bins:
                    notes.append(fewer_bins_note(name, n_bins, binning, ab.labels, values))
        else:
            col, ab = _categorical(name, series)
        if isinstance(col, _Shifted):
            shifted.append((j, col))
        else:
            codes[:, j] = col
        out_bins.append(ab)
    _write_shifted(codes, shifted)
    return Discretized(attributes=tuple(attributes), codes=codes, bins=tuple(out_bins),
                       notes=tuple(notes))


# ----- building blocks for engines that bin where the data lives (DuckDB, Spark): they
# fetch a column's distinct values or summary numbers and build the same AttributeBins.

def keeps_as_categories(distinct: np.ndarray, n_bins: int, *, spec_given: bool = False,
                        max_categories: int = MAX_CATEGORIES) -> bool:
    """Whether a numeric column with these distinct non-missing values stays categorical."""
    distinct = np.asarray(distinct, dtype=float)
    return not spec_given and (
        (integer_valued(distinct) and distinct.size <= max_categories) or distinct.size <= n_bins
    )


def categorical_bins(name: str, values: Sequence[object], has_missing: bool) -> tuple[np.ndarray, AttributeBins]:
    """Items of a categorical column from its distinct values, as :func:`discretize` names
    and orders them; returns each given value's code and the bins."""
    series = pd.Series(list(values) + ([None] if has_missing else []))
    codes, ab = _categorical(name, series)
    return codes[: len(values)], ab


def binned_bins(name: str, edges: Sequence[float] | np.ndarray, kind: BinKind, has_missing: bool) -> AttributeBins:
    """The bins of a numeric column cut at ``edges`` (right-closed), as :func:`discretize` makes them."""
    _, ab = _binned(name, np.array([np.nan]) if has_missing else np.empty(0),
                    np.asarray(edges, dtype=float), kind)
    return ab


def explicit_edges(name: str, spec: Sequence[float]) -> np.ndarray:
    """Validated explicit edges (finite, strictly increasing), or a DivergenceInputError."""
    return _explicit_edges(name, spec)


def quantile_levels(n_bins: int) -> np.ndarray:
    """The quantile levels that cut ``n_bins`` equal-frequency bins."""
    return np.arange(1, n_bins) / n_bins


def summary_edges(lo: float, hi: float, n_bins: int, binning: Binning,
                  quantiles: Sequence[float] | None = None) -> np.ndarray:
    """Readable edges from a column's minimum, maximum and (for quantile bins) its quantiles
    at :func:`quantile_levels`: what :func:`discretize` computes from the values themselves."""
    if n_bins < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return np.empty(0)
    if binning == "uniform":
        raw = lo + (hi - lo) * np.arange(1, n_bins) / n_bins
    else:
        raw = np.asarray(quantiles, dtype=float)
    return _readable_edges(np.asarray(raw, dtype=float), lo, hi)

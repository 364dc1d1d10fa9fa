"""The attributes of a SQL scan (:mod:`divergence.engines.engine_scan`): the attribute screen where
the data lives (:func:`screen_attributes_sql`), and each attribute's bins from the distinct values,
value counts, minimum, maximum and quantiles the engine returns (:func:`attribute_bins`), built by the
functions :mod:`divergence.prepare.discretize` uses, so every path bins alike."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from ..data.columns import NEAR_UNIQUE_SHARE
from ..errors import DivergenceInputError
from ..prepare.discretize import (
    MAX_CATEGORIES,
    AttributeBins,
    Binning,
    BinSpec,
    binned_bins,
    explicit_edges,
    keeps_as_categories,
    quantile_levels,
    summary_edges,
)
from ..vocabulary import PERIODS
from .engine_plan import PREFIX as _P
from .engine_plan import ScanPlan
from .sql import Column, threshold_flag

__all__ = ["VALUE_COUNTS_MAX", "QuantileMode", "SCREEN_ROWS", "numpy_quantile", "screen_attributes_sql", "attribute_bins", "TreeCut"]

#: numeric attributes with at most this many (approximately counted) distinct values have
#: their exact value counts fetched: enough to tell a category from a binned column
VALUE_COUNTS_MAX = 2_000
QuantileMode = Literal["auto", "exact", "approx"]


def numpy_quantile(n: int, level: float, lower: float, upper: float) -> float:
    """``numpy.quantile(x, level)`` (linear interpolation) from the two order statistics it
    interpolates: x sorted, ``lower = x[floor((n-1)*level)]`` and ``upper`` the next one."""
    virtual = (n - 1) * np.float64(level)
    t = virtual - np.floor(virtual)
    a, b = np.float64(lower), np.float64(upper)
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def _order_positions(n: int, levels: Sequence[float] | np.ndarray) -> list[tuple[int, int]]:
    out = []
    for level in levels:
        lo = int(np.floor((n - 1) * np.float64(level)))
        out.append((lo, min(lo + 1, n - 1)))
    return out


#: rows sampled (DuckDB: a reservoir sample; Spark: the first rows) to screen the columns
SCREEN_ROWS = 50_000


def screen_attributes_sql(plan: ScanPlan, exclude: Sequence[str], n_rows: int, stats: dict, *, target=None,
                          prediction=None, score=None, threshold=None,
                          deadline: float | None = None) -> tuple[list[str], list[str]]:
    """:func:`divergence.data.columns.screen_attributes` where the data lives: row numbers, constant and
    all-missing columns and identifiers from exact counts; dates, names and free text from a
    sample of the rows; leakage found on the sample and confirmed on every row in SQL."""
    from ..data.column_kinds import is_date_column
    from ..data.columns import DATE_REASON, MIN_ROWS, UNIQUE_INT_SHARE, row_index_kind, screen, shape_kind

    d = plan.d
    names = [c.name for c in plan.b.columns if c.name not in exclude]
    names += [r for r in (target, prediction, score) if r is not None and r in plan.by_name and r not in names]
    select = ", ".join(d.ident(n) for n in names)
    if n_rows <= SCREEN_ROWS:
        sql = f"SELECT {select} FROM {plan.b.source}"
    elif plan.b.name == "duckdb":
        sql = f"SELECT {select} FROM {plan.b.source} USING SAMPLE reservoir({SCREEN_ROWS} ROWS) REPEATABLE (0)"
    else:
        sql = f"SELECT {select} FROM {plan.b.source} LIMIT {SCREEN_ROWS}"
    sample = plan.b.fetch(sql).to_pandas()

    def classify(name: str, series):
        col, st = plan.by_name[name], stats[name]
        nn = st["nn"]
        if nn == 0:
            return "all missing", "missing on every row"
        if _is_row_index(plan, col, st, n_rows):
            return row_index_kind(name, st["lo"] if st["lo"] is not None else -1.0,
                                   st["hi"] if st["hi"] is not None else -1.0, n_rows)
        if col.type.upper().startswith(("DATE", "TIMESTAMP", "TIME")) or is_date_column(series):
            return "date", DATE_REASON
        if nn == n_rows and st["ad"] <= 3 and _exact_distinct_if_close(plan, col, 1, 1) == 1:
            return "constant", f"one value ({series.dropna().iloc[0]!r}) on every row"
        if nn < MIN_ROWS:
            return None
        present = series.dropna()
        found = shape_kind(name, series, present, present.value_counts())
        if found is None or found[0] != "identifier":
            return found
        bar = NEAR_UNIQUE_SHARE * nn if col.kind == "text" else UNIQUE_INT_SHARE * nn
        distinct = _exact_distinct_if_close(plan, col, st["ad"], bar)
        if distinct > bar or (col.kind != "text" and distinct >= bar):
            return "identifier", f"{distinct:,} distinct values in {nn:,} rows (an identifier)"
        return None

    screened, leaks = screen(sample, exclude, target=target, prediction=prediction, score=score,
                            threshold=threshold if prediction is None else None, classify=classify, deadline=deadline)
    attributes = list(screened.attributes)
    for col, (_, source, checks) in leaks.items():
        if not all(_dependency_holds(plan, col, source, check) for check in checks):
            attributes.append(col)  # the sample's coincidence: not so on every row
    if len(attributes) == len(screened.attributes):
        return attributes, screened.notes
    from ..data.columns import AttributeScreen, screen_notes

    order = {c.name: i for i, c in enumerate(plan.b.columns)}
    attributes.sort(key=order.__getitem__)
    left = {c: r for c, r in screened.left_out.items() if c not in attributes}
    kinds = {c: k for c, k in screened.kinds.items() if c in left}
    screened = AttributeScreen(attributes, left, kinds, screen_notes(left, kinds),
                               {c: o for c, o in screened.models.items() if c in left},
                               {c: o for c, o in screened.copies.items() if c in left})
    return screened.attributes, screened.notes


def _dependency_holds(plan: ScanPlan, col: str, source: tuple, check: str) -> bool:
    """A functional dependency (or a copy) between a column and a role, on every row."""
    d = plan.d
    c = plan.by_name[col]
    if source[0] == "column":
        r = plan.by_name[source[1]]
        y_num, y_key = (d.number(r) if r.numeric else None), f"CAST({d.category(r)} AS STRING)"
    else:
        y_num = threshold_flag(d.number(plan.by_name[source[1]]), source[2], d)
        y_key = f"CAST({y_num} AS STRING)"
    x_key = f"CAST({d.category(c)} AS STRING)"
    src = plan.b.source
    if check == "copy":
        if c.numeric and y_num is not None:
            x, y = d.number(c), y_num
        else:
            x, y = x_key, y_key
        sql = f"SELECT COUNT(*) FROM {src} WHERE NOT (({x} IS NULL AND {y} IS NULL) OR {x} = {y})"
    else:
        a, b = (x_key, y_key) if check.startswith("x->y") else (y_key, x_key)
        where = f"WHERE {x_key} IS NOT NULL" if check.endswith("present") else ""
        sentinel = d.string("\u0001missing")
        sql = (f"SELECT COUNT(*) FROM (SELECT {a} AS k FROM {src} {where} GROUP BY {a} "
               f"HAVING COUNT(DISTINCT COALESCE({b}, {sentinel})) > 1) {_P}dep")
    return int(plan.b.fetch(sql).column(0)[0].as_py()) == 0


def _exact_distinct_if_close(plan: ScanPlan, col: Column, approx: int, bar: float) -> int:
    """The approximate distinct count, made exact when it is near ``bar`` (the only case
    where the approximation could decide wrongly)."""
    if abs(approx - bar) <= 0.1 * bar + 10:
        val = plan.d.number(col) if col.numeric else plan.d.category(col)
        return int(plan.b.fetch(f"SELECT COUNT(DISTINCT {val}) FROM {plan.b.source}").column(0)[0].as_py())
    return int(approx)


def _is_row_index(plan: ScanPlan, col: Column, st: dict, n_rows: int) -> bool:
    text = str(col.name)
    if n_rows >= 2 and col.numeric and (text.strip() == "" or text.startswith("Unnamed:")):
        return True  # unnamed and numeric, as divergence.data.column_kinds.is_row_index: unnamed text is screened as any
    if n_rows < 2 or not col.numeric or st["nn"] < n_rows or not st.get("int", True):
        return False
    return _exact_distinct_if_close(plan, col, st["ad"], n_rows) == n_rows


def _value_counts(plan: ScanPlan, col: Column) -> tuple[np.ndarray, np.ndarray]:
    num = plan.d.number(col)
    t = plan.b.fetch(f"SELECT {num} AS v, COUNT(*) AS c FROM {plan.b.source} WHERE {num} IS NOT NULL GROUP BY {num}")
    values = np.asarray(t.column(0).to_numpy(zero_copy_only=False), dtype=float)
    counts = np.asarray(t.column(1).to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(values, kind="stable")
    return values[order], counts[order]


def _exact_quantiles_from_counts(values, counts, n, levels) -> list[float]:
    cum = np.cumsum(counts)
    out = []
    for level, (i, j) in zip(levels, _order_positions(n, levels)):
        lo = values[np.searchsorted(cum, i, side="right")]
        hi = values[np.searchsorted(cum, j, side="right")]
        out.append(numpy_quantile(n, level, lo, hi))
    return out


def _exact_quantiles(plan: ScanPlan, number_sql: str, n: int, levels: Sequence[float] | np.ndarray) -> list[float]:
    """Exact numpy quantiles: the engine's discrete percentile gives each order statistic
    numpy interpolates between, the interpolation is numpy's own formula."""
    wanted = []
    for i, k in _order_positions(n, levels):
        wanted += [(i + 0.5) / n, (k + 0.5) / n]  # percentile_disc picks x[ceil(n*level) - 1]
    stats = plan.b.order_statistics(number_sql, wanted)
    return [numpy_quantile(n, level, stats[2 * m], stats[2 * m + 1]) for m, level in enumerate(levels)]


def attribute_bins(plan: ScanPlan, attrs: list[str], stats: dict, n_rows: int, bins: Mapping[str, BinSpec],
                    quantile_bins: int, binning: Binning, quantiles: QuantileMode,
                    notes: list[str], cut: TreeCut | None = None) -> list[tuple[AttributeBins | None, str, Column]]:
    """Per attribute: its bins (None for a text category, built after the GROUP BY), and its SQL."""
    d = plan.d
    out: list = [None] * len(attrs)
    pending: list[tuple[int, str, Column, bool, int]] = []  # tree columns, cut once all are known
    for j, name in enumerate(attrs):
        col = plan.by_name[name]
        st = stats[name]
        has_missing = st["nn"] < n_rows
        spec = bins.get(name)
        if isinstance(spec, str) or (spec is None and not col.numeric and _is_date(plan, col)):
            out[j] = (None, _period_sql(plan, col, spec), col)
            continue
        if spec is not None and not isinstance(spec, (int, np.integer)):
            edges = explicit_edges(name, spec)
            if col.kind == "text":
                bad = plan.b.fetch(f"SELECT MIN(CASE WHEN {d.not_a_number(col)} THEN {d.ident(name)} END) "
                                   f"FROM {plan.b.source}").column(0)[0].as_py()
                if bad is not None:
                    raise DivergenceInputError(f"Column '{name}' has bin edges but holds values that are not "
                                               f"numbers (for example {bad!r}).")
            if col.kind == "text" and st["nn_num"] is not None:
                has_missing = st["nn_num"] < n_rows
            ab = binned_bins(name, edges, "edges", has_missing)
            out[j] = (ab, d.bin_code(d.number(col), ab.edges, ab.missing_code), col)
            continue
        if not col.numeric:
            out[j] = (None, d.category(col), col)
            continue
        n_bins = int(spec) if spec is not None else int(quantile_bins)
        n = int(st["nn"])
        counts = None
        if st["ad"] <= max(VALUE_COUNTS_MAX, 2 * max(n_bins, MAX_CATEGORIES)):
            counts = _value_counts(plan, col)
            if keeps_as_categories(counts[0], n_bins, spec_given=spec is not None):
                out[j] = (None, d.category(col), col)
                continue
        if binning == "tree" and cut is not None and n > 0:
            pending.append((j, name, col, has_missing, int(spec) if spec is not None else 0))
            continue
        raw = None
        if n == 0 or n_bins < 2:
            edges = np.empty(0)
        elif binning == "uniform":
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning)
        elif counts is not None:
            levels = quantile_levels(n_bins)
            raw = _exact_quantiles_from_counts(counts[0], counts[1], n, levels)
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        elif quantiles == "exact" or (quantiles == "auto" and plan.b.exact_quantiles_affordable(n)):
            raw = _exact_quantiles(plan, d.number(col), n, quantile_levels(n_bins))
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        else:
            raw = plan.b.approx_quantiles(d.number(col), list(quantile_levels(n_bins)))
            notes.append(f"'{name}': quantile edges are approximate ({plan.b.name} approximate "
                         "quantiles, then rounded as usual).")
            edges = summary_edges(st["lo"], st["hi"], n_bins, binning, raw)
        out[j] = _binned(plan, name, col, edges, n_bins, binning, has_missing, notes, raw, n)
    if pending:
        assert cut is not None  # columns wait for a tree's cuts only in a tree scan
        _tree_bins(plan, pending, cut, notes, out)
    return out


@dataclasses.dataclass
class TreeCut:
    """Tree binning where the data lives: the rows whose hash fraction is below ``share`` choose the
    cut points (fetched once), the others are grouped and measured."""

    source: str
    outcomes: list
    share: float
    min_support: float
    n_rows: int
    n_cut: int = 0


def _tree_bins(plan: ScanPlan, pending: list, cut: TreeCut, notes: list[str], out: list) -> None:
    """Cut points of every tree column, from one fetch of the cut rows' values and outcomes."""
    from ..prepare.cutpoints import MAX_TREE_BINS, MIN_BIN_SHARE, cut_note, tree_edges
    from ..settings import min_count_for

    d = plan.d
    xs = [f"{d.number(col)} AS {_P}x{i}" for i, (_, _, col, _, _) in enumerate(pending)]
    ys = [f"{v} AS {_P}o{k}" for k, v in enumerate(cut.outcomes)]
    t = plan.b.fetch(f"SELECT {', '.join(xs + ys)} FROM {cut.source} WHERE {_P}cut < {d.double(cut.share)}")
    cut.n_cut = t.num_rows
    n_rest = cut.n_rows - cut.n_cut
    if cut.n_cut < 20 or n_rest < 1:
        raise DivergenceInputError(
            f"Tree binning needs rows to choose cut points on and rows to measure: {cut.n_rows:,} rows give "
            f"{cut.n_cut:,} and {n_rest:,}. Use quantile bins on so small a table.")
    y = [np.asarray(t.column(f"{_P}o{k}").to_numpy(zero_copy_only=False), dtype=float) for k in range(len(ys))]
    min_bin = max(MIN_BIN_SHARE * cut.n_cut, min_count_for(cut.min_support, n_rest) * cut.n_cut / max(n_rest, 1), 2.0)
    found = {}
    for i, (j, name, col, has_missing, most) in enumerate(pending):
        x = np.asarray(t.column(f"{_P}x{i}").to_numpy(zero_copy_only=False), dtype=float)
        edges = tree_edges(x, y, max_bins=most or MAX_TREE_BINS, min_bin=min_bin)
        found[name] = edges
        ab = binned_bins(name, edges, "tree", has_missing)
        out[j] = (ab, d.bin_code(d.number(col), ab.edges, ab.missing_code), col)
    notes.insert(0, cut_note(list(found), cut.n_cut, n_rest, found).replace(", seeded)", ", by a hash of each row)"))


def _is_date(plan: ScanPlan, col: Column) -> bool:
    """A DATE/TIMESTAMP column, or text whose values read as dates (as the pandas path decides)."""
    from ..data.column_kinds import is_date_column

    if col.type.upper().startswith(("DATE", "TIMESTAMP")):
        return True
    if col.kind != "text":
        return False
    c = plan.d.ident(col.name)
    values = plan.b.fetch(f"SELECT DISTINCT {c} AS v FROM {plan.b.source} WHERE {c} IS NOT NULL LIMIT 2000")
    import pandas as pd

    return is_date_column(pd.Series(values.column(0).to_pylist(), dtype=object))


#: text layouts of dates read month first (as pandas reads a date that is not ISO 8601)
_DATE_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y", "%m/%d/%y", "%m-%d-%Y", "%d.%m.%Y")


def _period_sql(plan: ScanPlan, col: Column, spec) -> str:
    """SQL of a date column's period label (``2013-08``, ``2013-Q3``, ``2013``), NULL where
    missing: the period named, or the finest with at most 12 periods (as discretize does)."""
    from ..prepare.discretize import MAX_DATE_ITEMS

    d = plan.d
    c = d.ident(col.name)
    if col.type.upper().startswith("TIME") and not col.type.upper().startswith("TIMESTAMP"):
        from ..prepare.discretize import times_of_day_error

        raise times_of_day_error(col.name)
    if col.type.upper().startswith(("DATE", "TIMESTAMP")):
        ts = f"CAST({c} AS TIMESTAMP)"
    elif plan.b.name == "duckdb":
        fmts = "[" + ", ".join(d.string(f) for f in _DATE_FORMATS) + "]"
        ts = f"COALESCE(TRY_CAST({c} AS TIMESTAMP), try_strptime({c}, {fmts}))"
    else:
        ts = f"to_timestamp({c})"
    bad = plan.b.fetch(f"SELECT MIN({c}) FROM {plan.b.source} WHERE {c} IS NOT NULL AND {ts} IS NULL").column(0)[0]
    if bad.as_py() is not None:
        raise DivergenceInputError(f"Column '{col.name}' is binned by {spec or 'period'} but holds values that are "
                                   f"not dates (for example {bad.as_py()!r}).")
    if plan.b.name == "duckdb":
        labels = {"month": f"strftime({ts}, '%Y-%m')",
                  "quarter": f"(CAST(year({ts}) AS VARCHAR) || '-Q' || CAST(quarter({ts}) AS VARCHAR))",
                  "year": f"CAST(year({ts}) AS VARCHAR)"}
    else:
        labels = {"month": f"date_format({ts}, 'yyyy-MM')",
                  "quarter": f"concat(CAST(year({ts}) AS STRING), '-Q', CAST(quarter({ts}) AS STRING))",
                  "year": f"CAST(year({ts}) AS STRING)"}
    period = spec
    if period is None:
        counts = plan.b.fetch(f"SELECT COUNT(DISTINCT {labels['month']}), COUNT(DISTINCT {labels['quarter']}) "
                              f"FROM {plan.b.source}").to_pylist()[0]
        month, quarter = list(counts.values())
        period = "month" if month <= MAX_DATE_ITEMS else "quarter" if quarter <= MAX_DATE_ITEMS else "year"
    assert period in PERIODS
    plan.periods[col.name] = period
    return labels[period]


def _binned(plan, name, col, edges, n_bins, binning, has_missing, notes, raw=None, n=0):
    ab = binned_bins(name, edges, binning, has_missing)
    if edges.size + 1 < n_bins:
        from ..prepare.discretize import fewer_bins_note

        tied = sorted({float(v) for v in (raw or []) if list(raw).count(v) > 1})
        share = None
        if tied and n:
            num = plan.d.number(col)
            inside = " OR ".join(f"{num} = {plan.d.double(v)}" for v in tied)
            share = int(plan.b.fetch(f"SELECT COUNT(*) FROM {plan.b.source} WHERE {inside}").column(0)[0].as_py()) / n
        notes.append(fewer_bins_note(name, n_bins, binning, ab.labels, tied=tied, share=share))
    return ab, plan.d.bin_code(plan.d.number(col), ab.edges, ab.missing_code), col

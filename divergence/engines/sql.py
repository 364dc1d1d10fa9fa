"""SQL text for the heavy step where the data lives: binning, outcomes and the GROUP BY
that compresses identical discretized rows with their tallies.

One text serves DuckDB and Spark SQL; :class:`Dialect` holds the few differences (how a
column name is quoted). Every expression follows the pandas path exactly: a missing
value (NULL, or NaN in a floating-point column) is missing; bins are closed on the right
(code = number of edges below the value, as ``numpy.searchsorted(side="left")``); an
outcome is NULL where it is undefined.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..data.nested import SQL_BYTES, SQL_LISTS, SQL_MAPPINGS
from ..outcome_rules import CLASSIFICATION, REGRESSION

__all__ = ["Dialect", "DUCKDB", "SPARK", "Column", "kind_of", "CLASSIFICATION_SQL", "average_ranks",
           "classification_value", "gamma_value", "label_flag", "regression_value", "threshold_flag"]

ColumnKind = Literal["int", "float", "decimal", "bool", "text", "other"]


@dataclass(frozen=True)
class Column:
    """A column of the engine's table: its name, a coarse kind and the engine's type name."""

    name: str
    kind: ColumnKind
    type: str

    @property
    def numeric(self) -> bool:
        """Numeric as pandas sees it (booleans are not)."""
        return self.kind in ("int", "float", "decimal")


#: engine types no slice can be cut from (bytes, lists, structs, maps): kind "other", never cast or binned
OTHER_TYPES = SQL_BYTES + SQL_LISTS + SQL_MAPPINGS


def kind_of(type_name: str) -> ColumnKind:
    """The coarse kind of an engine type name (DuckDB or Spark spelling): "other" for bytes and nested
    values (DuckDB's ``INTEGER[]``, ``STRUCT(...)``; Spark's ``binary``, ``array<int>``, ``map<...>``)."""
    t = type_name.strip().upper()
    if t.endswith("]") or t.startswith(OTHER_TYPES):
        return "other"
    if t in ("BOOLEAN", "BOOL"):
        return "bool"
    if t in ("DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8", "DOUBLE PRECISION"):
        return "float"
    if t.startswith("DECIMAL") or t.startswith("NUMERIC"):
        return "decimal"
    if t in ("TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT", "UHUGEINT", "BYTE", "SHORT", "LONG", "INT1", "INT2", "INT4", "INT8"):
        return "int"
    return "text"


@dataclass(frozen=True)
class Dialect:
    """Quoting and literals of one SQL engine."""

    name: Literal["duckdb", "spark"]

    def ident(self, name: str) -> str:
        """A quoted column name."""
        if self.name == "spark":
            return "`" + name.replace("`", "``") + "`"
        return '"' + name.replace('"', '""') + '"'

    def string(self, text: str) -> str:
        """A string literal (Spark also reads backslashes as escapes: double them)."""
        if self.name == "spark":
            text = text.replace("\\", "\\\\")
        return "'" + text.replace("'", "''") + "'"

    def double(self, x: float) -> str:
        """A DOUBLE literal that parses to exactly ``x`` (never a DECIMAL literal)."""
        x = float(x)
        if math.isnan(x):
            text = "NaN"
        elif math.isinf(x):
            text = "Infinity" if x > 0 else "-Infinity"
        else:
            text = repr(x)
        return f"CAST('{text}' AS DOUBLE)"

    def literal(self, value: object) -> str:
        """A literal for a value fetched from the engine (to compare a column with it)."""
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int):
            return str(int(value))
        if isinstance(value, float):
            return self.double(value)
        if isinstance(value, _dt.datetime):
            return f"CAST({self.string(value.isoformat(sep=' '))} AS TIMESTAMP)"
        if isinstance(value, _dt.date):
            return f"CAST({self.string(value.isoformat())} AS DATE)"
        return self.string(str(value))

    # ----- values of one column
    def missing(self, col: Column) -> str:
        """True where the column's value is missing (NULL, or NaN for floating point)."""
        c = self.ident(col.name)
        if col.kind == "float":
            return f"({c} IS NULL OR isnan({c}))"
        return f"({c} IS NULL)"

    def number(self, col: Column) -> str:
        """The value as a DOUBLE, NULL where missing (text through TRY_CAST: NULL if not a number)."""
        c = self.ident(col.name)
        if col.kind == "float":
            return f"(CASE WHEN isnan({c}) THEN NULL ELSE CAST({c} AS DOUBLE) END)"
        if col.kind == "text":
            return f"TRY_CAST({self._as_text(col)} AS DOUBLE)"
        return f"CAST({c} AS DOUBLE)"

    def _as_text(self, col: Column) -> str:
        """A text-kind column as a string for TRY_CAST: Spark refuses to cast a date, a timestamp or an
        interval to a number at all (an analysis error, not a NULL), so those go through their text."""
        c = self.ident(col.name)
        if self.name == "spark" and not col.type.strip().lower().startswith(("string", "varchar", "char")):
            return f"CAST({c} AS STRING)"
        return c

    def category(self, col: Column) -> str:
        """The value as a category key: NULL where missing; non-numeric types as text."""
        c = self.ident(col.name)
        if col.kind == "float":
            return f"(CASE WHEN isnan({c}) THEN NULL ELSE {c} END)"
        if col.kind == "text":
            return f"CAST({c} AS STRING)"
        return c

    def not_a_number(self, col: Column) -> str:
        """True where a text column holds something that is not a number."""
        c = self.ident(col.name)
        return f"({c} IS NOT NULL AND TRY_CAST({self._as_text(col)} AS DOUBLE) IS NULL)"

    def bin_code(self, number_sql: str, edges: Sequence[float], missing_code: int) -> str:
        """Item code of a binned column: right-closed bins, the missing item for NULL."""
        parts = [f"CASE WHEN {number_sql} IS NULL THEN {int(missing_code)}"]
        for k, e in enumerate(edges):
            parts.append(f"WHEN {number_sql} <= {self.double(e)} THEN {k}")
        parts.append(f"ELSE {len(edges)} END")
        return " ".join(parts)

    def row_fraction(self, columns: Sequence[Column], seed: int) -> str:
        """A number in [0, 1) per row from a hash of its values (seeded): which rows choose tree
        cut points (identical rows fall on the same side), with no row order or row number needed."""
        cols = ", ".join([str(int(seed) + 23)] + [self.ident(c.name) for c in columns])
        h = f"hash({cols})" if self.name == "duckdb" else f"xxhash64({cols})"
        p = 1_000_000_007
        return f"(CAST(({h} % {p} + {p}) % {p} AS DOUBLE) / {p})"

    def is_infinite(self, number_sql: str) -> str:
        return f"(abs({number_sql}) = {self.double(math.inf)})"

    def fsum(self, expr: str, bound: float | None = None, n_rows: int = 0) -> str:
        """An accurate sum of doubles: DuckDB's compensated ``fsum``; in Spark, whose SUM of
        doubles is naive, an exact DECIMAL sum of the values when ``bound`` (at least
        ``max |expr|``) leaves 12 or more decimals in 38 digits, else SUM."""
        if self.name == "duckdb":
            return f"fsum({expr})"
        if bound is not None and math.isfinite(bound) and n_rows > 0:
            whole = len(str(int(max(bound, 1.0) * n_rows))) + 1
            scale = 38 - whole
            if scale >= 12:
                return f"CAST(SUM(CAST({expr} AS DECIMAL(38, {scale}))) AS DOUBLE)"
        return f"SUM({expr})"


DUCKDB = Dialect("duckdb")
SPARK = Dialect("spark")

_CONDITION_SQL = {"y": "{y} = 1", "not y": "{y} = 0", "p": "{p} = 1", "not p": "{p} = 0",
                  "y == p": "{y} = {p}", "y != p": "{y} <> {p}", "all": "TRUE"}

#: metric -> (rows where defined, rows where the outcome is 1), with y the true class and
#: p the prediction as 0/1 (NULL rows are undefined for every metric): generated from
#: :data:`divergence.outcome_rules.CLASSIFICATION`, the rules the pandas path also reads.
CLASSIFICATION_SQL = {name: (_CONDITION_SQL[r.defined], _CONDITION_SQL[r.one])
                      for name, r in CLASSIFICATION.items()}


def classification_value(metric: str, y: str, p: str, d: Dialect) -> str:
    """A 0/1 classification outcome, NULL where undefined."""
    defined, one = CLASSIFICATION_SQL[metric]
    defined, one = defined.format(y=y, p=p), one.format(y=y, p=p)
    return (f"(CASE WHEN {y} IS NULL OR {p} IS NULL THEN NULL WHEN {defined} THEN "
            f"(CASE WHEN {one} THEN {d.double(1.0)} ELSE {d.double(0.0)} END) ELSE NULL END)")


def regression_value(metric: str, diff: str) -> str:
    """A regression error of :data:`divergence.outcome_rules.REGRESSION` from the residual
    ``diff`` (a parenthesised SQL expression, NULL where either value is missing)."""
    kind = REGRESSION[metric]
    if kind == "abs":
        return f"abs{diff}"
    if kind == "square":
        return f"({diff} * {diff})"
    return diff


def label_flag(col: Column, hits: Sequence[object], d: Dialect) -> str:
    """1 where the column holds one of ``hits`` (the positive label), 0 elsewhere, NULL where missing."""
    c = d.ident(col.name)
    test = f"{c} IN ({', '.join(d.literal(v) for v in hits)})" if hits else "FALSE"
    return f"(CASE WHEN {d.missing(col)} THEN NULL WHEN {test} THEN 1 ELSE 0 END)"


def threshold_flag(score_sql: str, threshold: float, d: Dialect) -> str:
    """1 where the score is at least the threshold, NULL where it is missing."""
    return f"(CASE WHEN {score_sql} IS NULL THEN NULL WHEN {score_sql} >= {d.double(threshold)} THEN 1 ELSE 0 END)"


def gamma_value(rank_sql: str, kind: str, a: float, d: Dialect) -> str:
    """The rank value ``gamma(rank)``: top-k indicator, power decay or DCG gain."""
    if kind == "topk":
        return (f"(CASE WHEN {rank_sql} IS NULL THEN NULL WHEN {rank_sql} <= {d.double(a)} "
                f"THEN {d.double(1.0)} ELSE {d.double(0.0)} END)")
    if kind == "power":
        return f"pow({rank_sql}, {d.double(-a)})"
    return f"({d.double(1.0)} / log2({d.double(1.0)} + {rank_sql}))"


def average_ranks(source: str, score_sql: str, ascending: bool) -> str:
    """A query of (score, average rank): rank 1 the best score, tied scores sharing the
    average of their positions (pandas' ``rank(method="average")``)."""
    order = "ASC" if ascending else "DESC"
    return (
        "SELECT k AS rank_key, CAST(COALESCE(before, 0) AS DOUBLE) + (CAST(c AS DOUBLE) + 1) / 2 AS rank_value "
        "FROM (SELECT k, c, SUM(c) OVER (ORDER BY k " + order + " ROWS BETWEEN UNBOUNDED PRECEDING "
        "AND 1 PRECEDING) AS before FROM (SELECT " + score_sql + " AS k, COUNT(*) AS c FROM "
        + source + " WHERE " + score_sql + " IS NOT NULL GROUP BY " + score_sql + ") counted) ranked"
    )

"""Columns no slice can be cut from: lists, arrays, sets, mappings (Parquet's list, map and struct
types) and bytes. They are left out of the default attributes with a note, and named in one line
when asked for as an attribute or a role; never a traceback (their values cannot be hashed, binned
or compared)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError

__all__ = ["unsupported_kind", "unsupported_columns", "check_supported", "nested_notes", "NESTED", "other_reason", "SQL_BYTES", "SQL_MAPPINGS", "SQL_LISTS"]

#: the kind given to such a column in an attribute screen
NESTED = "nested"

_WHAT = {"list": "lists", "mapping": "structs or mappings", "set": "sets", "bytes": "bytes (binary values)",
         "array": "lists (arrays)"}


def _arrow_kind(dtype: object) -> str | None:
    import pyarrow as pa

    t = getattr(dtype, "pyarrow_dtype", None)
    if t is None:
        return None
    if pa.types.is_struct(t) or pa.types.is_map(t):  # a map is also a list of pairs to pyarrow: asked first
        return "mapping"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return "list"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_nested(t):
        return "list"
    return None


def _object_kind(values: np.ndarray) -> str | None:
    for v in values:
        if isinstance(v, (list, tuple)):
            return "list"
        if isinstance(v, dict):
            return "mapping"
        if isinstance(v, (set, frozenset)):
            return "set"
        if isinstance(v, (bytes, bytearray, memoryview)):
            return "bytes"
        if isinstance(v, np.ndarray):
            return "array"
    return None


def unsupported_kind(series: pd.Series) -> tuple[str, str] | None:
    """(NESTED, the reason) when the column holds values no slice can be cut from, else None."""
    kind = _arrow_kind(series.dtype)
    if kind is None and series.dtype == object:
        values = series.to_numpy()
        # one pass over the types (C speed), the values' own check only where a type is unusual
        types = set(map(type, values))
        if types - {str, int, float, bool, type(None), np.str_, np.int64, np.float64, np.bool_, pd.Timestamp,
                    type(pd.NaT), type(pd.NA)}:
            kind = _object_kind(values)
    if kind is None:
        return None
    return NESTED, f"it holds {_WHAT[kind]}, which no slice can be cut from"


def unsupported_columns(df: pd.DataFrame, columns: Sequence[str] | None = None) -> dict[str, str]:
    """Column -> reason, for the columns (all by default) that hold nested or binary values."""
    out = {}
    for col in (df.columns if columns is None else columns):
        if col in df.columns:
            found = unsupported_kind(df[col])
            if found is not None:
                out[col] = found[1]
    return out


def check_supported(df: pd.DataFrame, columns: Sequence[str], what: str = "an attribute") -> None:
    """One line naming the first of ``columns`` that holds nested or binary values."""
    bad = unsupported_columns(df, [c for c in columns if c is not None])
    if bad:
        col, why = next(iter(bad.items()))
        raise DivergenceInputError(f"Column '{col}' cannot be used as {what}: {why}.")


def nested_notes(left_out: dict[str, str], kinds: dict[str, str]) -> list[str]:
    """The notes of an attribute screen for the columns it left out as nested or binary."""
    return [f"Left out column '{c}' from the attributes: {why}." for c, why in left_out.items()
            if kinds.get(c) == NESTED]


#: SQL type names (DuckDB's and Spark's, by how they start) of bytes, of mappings and of lists: no slice is
#: cut from them (``INTEGER[]`` is a list too)
SQL_BYTES = ("BLOB", "BYTEA", "BINARY", "VARBINARY", "BIT")
SQL_MAPPINGS = ("STRUCT", "MAP", "UNION", "VARIANT")
SQL_LISTS = ("ARRAY", "LIST")


def other_reason(type_name: str) -> str:
    """Why a SQL engine's column of bytes or nested values (its type name) gives no slice, in the words
    :func:`unsupported_kind` uses for the same column read by pandas."""
    t = type_name.strip().upper()
    if t.startswith(SQL_BYTES):
        kind = "bytes"
    elif t.startswith(SQL_MAPPINGS):
        kind = "mapping"
    else:
        kind = "list"
    return f"it holds {_WHAT[kind]}, which no slice can be cut from"

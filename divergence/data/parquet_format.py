"""Parquet files: what one would take in memory, told from its footer before anything is
decoded (:func:`estimate_parquet`), and its decimals and durations as the numbers the DuckDB and
Spark engines read them as (:func:`parquet_numbers`).
"""
from __future__ import annotations

import decimal

import numpy as np
import pandas as pd

from .bounded_reading import DataInput, TableEstimate

__all__ = ["PARQUET_SUFFIXES", "is_parquet", "estimate_parquet", "parquet_numbers"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def is_parquet(name: str | None, head: bytes) -> bool:
    if name and name.lower().endswith(PARQUET_SUFFIXES):
        return True
    return head[:4] == b"PAR1"


def estimate_parquet(inp: DataInput) -> TableEstimate | None:
    """Rows x columns and memory of a Parquet file's frame, from its footer (nothing decoded):
    8 bytes a cell at least (16 plus the longest value a text cell), more where its uncompressed
    pages say so. Dictionary and run-length encodings make a small file hold any number of rows."""
    import pyarrow.parquet as pq

    try:
        with inp.raw() as fh:
            meta = pq.ParquetFile(fh).metadata
            rows, cols = meta.num_rows, meta.num_columns
            unc = [0.0] * cols
            width = [8.0] * cols
            dictionary_columns: set = set()
            for g in range(meta.num_row_groups):
                rg = meta.row_group(g)
                for c in range(min(cols, rg.num_columns)):
                    col = rg.column(c)
                    unc[c] += col.total_uncompressed_size
                    if col.physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
                        longest = 8
                        st = col.statistics
                        if st is not None and st.has_min_max:
                            longest = max(len(st.min) if isinstance(st.min, (str, bytes)) else 8,
                                          len(st.max) if isinstance(st.max, (str, bytes)) else 8)
                        elif col.has_dictionary_page and \
                                col.total_uncompressed_size < min(64 * 1024 * max(rg.num_rows, 1), 256 << 20):
                            # long values carry no statistics, and a dictionary's pages count each value
                            # once: read the dictionary and its indices (what reading decodes is at most
                            # these pages, 256 MB; larger pages already size the column)
                            dictionary_columns.add(c)
                        width[c] = max(width[c], 16.0 + longest)
            decoded = _dictionary_bytes(fh, meta, sorted(dictionary_columns)) if dictionary_columns else {}
    except Exception:  # noqa: BLE001 - pyarrow raises many kinds; the full read says why
        return None
    memory = sum(max(w * rows, u, 16.0 * rows + decoded.get(c, 0)) for c, (w, u) in enumerate(zip(width, unc)))
    return TableEstimate(int(rows), int(cols), int(memory))


def _dictionary_bytes(fh, meta, columns: list[int]) -> dict[int, float]:
    """The bytes the values of dictionary-encoded text columns take once decoded: each row group's
    dictionary and indices read (not the values: a 1 MB value repeated on 2,000 rows is 1 MB of
    dictionary and 2,000 indices here, 2 GB in a frame), the lengths summed through the indices."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    names = [meta.schema.column(c).path for c in columns]
    fh.seek(0)
    pf = pq.ParquetFile(fh, read_dictionary=names)
    out = {c: 0.0 for c in columns}
    for g in range(meta.num_row_groups):
        part = pf.read_row_group(g, columns=names)
        for c, name in zip(columns, names):
            for chunk in part.column(name).chunks:
                if hasattr(chunk, "dictionary"):
                    lengths = pc.binary_length(chunk.dictionary).take(chunk.indices)
                    out[c] += float(pc.sum(lengths).as_py() or 0)
                else:
                    out[c] += float(chunk.nbytes)
    return out


def parquet_numbers(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Parquet's decimals and durations as the numbers the DuckDB and Spark engines read them as
    (pandas gives Decimal objects, sliced value by value, and timedeltas): decimals as floats,
    durations as whole counts of their stored unit; a note names each column converted."""
    notes, out = [], None
    for col in df.columns:
        s = df[col]
        if s.dtype.kind == "m":
            unit = np.datetime_data(s.dtype)[0]
            values = s.to_numpy()
            number = pd.Series(np.where(pd.isna(values), np.nan, values.astype("int64").astype(float)),
                               index=s.index, name=col)
            words = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}.get(unit, unit)
            why = f"durations, read as a number of {words}"
        elif s.dtype == object and isinstance(next(iter(s.dropna().head(1)), None), decimal.Decimal):
            number = pd.to_numeric(s, errors="coerce").astype(float)
            why = "decimal numbers, read as floating-point numbers"
        else:
            continue
        out = df.copy() if out is None else out
        out[col] = number
        notes.append(f"Column '{col}' holds {why} (as the DuckDB and Spark engines read it).")
    return (df if out is None else out), notes


"""Reading tables as they come: one reader for the upload, the command line and DuckDB.

CSV files are read with their delimiter sniffed (comma, semicolon, tab or pipe), a
byte-order mark handled (UTF-8, UTF-16), and their encoding found: UTF-8, else Windows-1252
(cp1252), else Latin-1, which the result's notes say. A semicolon file whose numbers use a
decimal comma is read as numbers. A column name that appears twice in the header is read
with pandas' suffix (``score``, ``score.1``) and a note says so: never silently. Errors name
the file and what is wrong with it.

Each format in its module: bytes within limits and decompressed (``bounded_reading``), CSV's dialect
and notes (``csv_format``), Parquet's size and numbers (``parquet_format``); writing a file whole
(``atomic_write``). Every name they offer the callers is here too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pandas as pd

from ..errors import DivergenceInputError
from .atomic_write import remove_stale_temporaries, write_atomically
from .bounded_reading import (
    MAGIC,
    DataInput,
    ReadLimits,
    TableEstimate,
    available_memory,
    check_estimate,
    drain,
    first_line,
    open_data,
    size_text,
)
from .csv_format import (
    SNIFF_BYTES,
    CsvDialect,
    check_columns,
    dialect_notes,
    duplicate_note,
    estimate_csv,
    pandas_names,
    read_csv_stream,
    sniff_csv,
    sniff_file,
    sniff_files,
    unique_columns,
)
from .parquet_format import PARQUET_SUFFIXES, estimate_parquet, is_parquet, parquet_numbers

__all__ = ["parquet_numbers", "read_table", "load_table", "LoadedTable", "sniff_csv", "sniff_file", "CsvDialect",
           "ReadLimits", "TableEstimate", "open_data", "available_memory", "estimate_table", "size_text", "MAGIC",
           "sniff_files", "PARQUET_SUFFIXES", "pandas_names", "dialect_notes", "duplicate_note", "write_atomically",
           "remove_stale_temporaries"]

Source = str | os.PathLike | bytes | bytearray | IO[bytes]


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file or an upload, with what the reader decided.

    ``notes`` say anything a person should know (an encoding other than UTF-8, a delimiter
    other than the comma, renamed duplicate columns); ``delimiter`` and ``encoding`` are
    None for Parquet.
    """

    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    delimiter: str | None = None
    encoding: str | None = None


def estimate_table(source: Source, *, name: str | None = None, limits: ReadLimits | None = None,
                   label: str | None = None) -> TableEstimate | None:
    """Rows x columns and memory of the frame :func:`load_table` would read, estimated before
    parsing: a Parquet file from its footer, a CSV file from a sample of its first megabyte
    (decompressed within ``limits``); None when it cannot be told."""
    limits = limits or ReadLimits.default()
    inp = DataInput.of(source, name, label)
    with inp.text(limits) as fh:
        head = fh.read(SNIFF_BYTES)
    if is_parquet(inp.name, head):
        return estimate_parquet(inp) if inp.compression is None else None
    return estimate_csv(inp, sniff_csv(head, name=inp.name), limits)


def load_table(source: Source, *, name: str | None = None, limits: ReadLimits | None = None,
               label: str | None = None) -> LoadedTable:
    """Read a CSV or Parquet table from a path, bytes, a buffer or a binary file-like (an upload).

    ``name`` is the file name (its extension says .csv, .tsv, .txt or .parquet; the content
    decides otherwise). A compressed file (gzip, bzip2, xz, a zip of one file, found by its
    content) is decompressed as a stream within ``limits`` (:class:`ReadLimits`), and the table's
    size is estimated from a sample before it is parsed: a decompression bomb or a table too
    large for memory is refused in one line naming the remedy. Raises
    :class:`DivergenceInputError` naming the file and the problem.
    """
    limits = limits or ReadLimits.default()
    if isinstance(source, (bytes, bytearray, memoryview)) or hasattr(source, "read"):
        inp = DataInput.of(source, name, label)
        label = inp.label
        if inp.size == 0 or (inp.size < SNIFF_BYTES and not bytes(inp.raw().read()).strip()):
            raise DivergenceInputError(f"File '{label}' is empty.")
    else:
        p = Path(source)  # type: ignore[arg-type]
        label = label or str(source)
        if not p.exists():
            raise DivergenceInputError(f"File '{label}' does not exist.")
        if p.is_dir():
            raise DivergenceInputError(f"'{label}' is a folder, not a CSV or Parquet file.")
        if not p.is_file():
            raise DivergenceInputError(f"'{label}' is not a regular file (a device or a pipe): give a CSV or "
                                       "Parquet file.")
        if p.stat().st_size == 0:
            raise DivergenceInputError(f"File '{label}' is empty.")
        inp = DataInput.of(os.fspath(p), name or p.name, label)
    name = inp.name
    with inp.text(limits) as fh:
        head = fh.read(SNIFF_BYTES)
    notes: list[str] = []
    if is_parquet(name, head):
        if inp.compression is not None:
            raise DivergenceInputError(f"'{label}' is a {inp.compression}-compressed Parquet file: Parquet compresses "
                                       "itself; give the .parquet file as it is.")
        check_estimate(estimate_parquet(inp), limits, label)
        try:
            with inp.raw() as fh:
                df = pd.read_parquet(fh)
        except Exception as exc:  # pyarrow raises many kinds
            raise DivergenceInputError(f"Could not read '{label}' as Parquet: {first_line(exc)}") from None
        df, note = unique_columns(df)
        if note:
            notes.append(note)
        if len(df) == 0:
            raise DivergenceInputError(f"File '{label}' has a header but no rows.")
        df, converted = parquet_numbers(df)
        notes += converted
        return LoadedTable(df, notes, None, None)
    if not head.strip():
        raise DivergenceInputError(f"File '{label}' is empty.")
    d = sniff_csv(head, name=name)
    check_columns(inp, d, limits, label)
    est = estimate_csv(inp, d, limits)
    inflated = est is None or est.text > max(limits.ratio_floor, limits.max_ratio / 4 * inp.size)
    if inp.compression is not None and inflated:
        # a sample inflating four times more than data files do (or telling nothing): decompress and
        # count first, so a bomb is refused before anything is parsed
        drain(inp, limits)
    check_estimate(est, limits, label)
    try:
        df, encoding = read_csv_stream(inp, d, label, limits)
    except pd.errors.EmptyDataError:
        raise DivergenceInputError(f"File '{label}' is empty.") from None
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        if isinstance(exc, DivergenceInputError):
            raise
        raise DivergenceInputError(f"Could not read '{label}' as CSV: {first_line(exc)}") from None
    d = CsvDialect(d.delimiter, encoding, d.decimal, d.header)
    notes += dialect_notes(d, label)
    if len(df.columns) and isinstance(df.columns[0], str) and df.columns[0].startswith("\ufeff"):
        df = df.rename(columns={df.columns[0]: df.columns[0].lstrip("\ufeff")})
    header = tuple(h.lstrip("\ufeff") for h in d.header)
    if len(header) == len(df.columns):
        note = duplicate_note(header, [str(c) for c in df.columns])
        if note:
            notes.append(note)
    if len(df) == 0:
        raise DivergenceInputError(f"File '{label}' has a header but no rows.")
    return LoadedTable(df, notes, d.delimiter, encoding)


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file (see :func:`load_table`); the frame only."""
    return load_table(path).frame


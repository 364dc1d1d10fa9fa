"""CSV files as they come: their dialect sniffed from the first bytes (delimiter, encoding,
decimal mark, header: :func:`sniff_csv`), their frame's size estimated from a sample, their header's
repeated names read as pandas names them, with the notes a person should read, and the frame read
from the decompressed stream (UTF-8, else Windows-1252, else Latin-1).
"""
from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..errors import DivergenceInputError
from .bounded_reading import DataInput, ReadLimits, TableEstimate, size_text

__all__ = ["CsvDialect", "DELIMITERS", "SNIFF_BYTES", "LISTED", "sniff_csv", "sniff_file", "sniff_files",
           "estimate_csv", "check_columns", "pandas_names", "duplicate_note", "dialect_notes", "read_csv_stream",
           "unique_columns"]

#: delimiters tried, in order of preference when several fit equally
DELIMITERS = (",", ";", "\t", "|")
#: bytes read to sniff a file's dialect and encoding
SNIFF_BYTES = 1 << 16
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_ENCODING_NAMES = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "cp1252": "Windows-1252 (cp1252)",
                   "latin-1": "Latin-1 (ISO-8859-1)", "utf-16": "UTF-16"}
_DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")
_DECIMAL_POINT = re.compile(r"^-?\d+\.\d+$")



@dataclass(frozen=True)
class CsvDialect:
    """How a CSV file is written: what :func:`sniff_csv` finds in its first bytes."""

    delimiter: str
    encoding: str  # a Python codec name: utf-8, utf-8-sig, utf-16, cp1252 or latin-1
    decimal: str = "."
    header: tuple[str, ...] = ()  # the header's names as written (duplicates included)
    #: the encoding was decided on the first bytes only (a path): confirm on the whole file
    tentative: bool = False
    #: the header line ended within the sniffed bytes (``header`` holds every name)
    header_complete: bool = True


def _decode_head(head: bytes) -> tuple[str, str, bool]:
    """(text, encoding, tentative) of a file's first bytes."""
    if head.startswith(b"\xef\xbb\xbf"):
        return head[3:].decode("utf-8", errors="ignore"), "utf-8-sig", False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head.decode("utf-16", errors="ignore"), "utf-16", False
    try:
        return head.decode("utf-8"), "utf-8", True
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a character cut at the end of the sniffed bytes
            return head[: exc.start].decode("utf-8"), "utf-8", True
    try:
        return head.decode("cp1252"), "cp1252", False
    except UnicodeDecodeError:
        return head.decode("latin-1"), "latin-1", False


def _lines(text: str, limit: int = 50) -> list[str]:
    lines = text.splitlines()
    if len(lines) > 1 and not text.endswith(("\n", "\r")):
        lines = lines[:-1]  # the last line may be cut by the sniffed byte count
    return [ln for ln in lines[:limit] if ln.strip()]


def _fields(lines: list[str], delimiter: str) -> list[list[str]]:
    try:
        return list(csv.reader(lines, delimiter=delimiter, quotechar='"'))
    except csv.Error:
        return []


def _best_delimiter(lines: list[str], preferred: str | None) -> str:
    """The delimiter giving the most rows with the header's field count (more than one field)."""
    best, best_score = preferred or ",", (-1, -1, 0)
    for d in DELIMITERS:
        rows = _fields(lines, d)
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        consistent = sum(1 for r in rows if len(r) == width)
        score = (consistent, width, 1 if d == preferred else 0)
        if consistent >= 0.9 * len(rows) and score > best_score:
            best, best_score = d, score
    return best


def sniff_csv(head: bytes, *, name: str | None = None) -> CsvDialect:
    """The dialect of a CSV file from its first bytes: delimiter, encoding, decimal mark, header."""
    text, encoding, tentative = _decode_head(head)
    text = text.lstrip("\ufeff")
    lines = _lines(text)
    preferred = "\t" if name and name.lower().endswith((".tsv", ".tsv.gz", ".tab")) else None
    delimiter = _best_delimiter(lines, preferred)
    rows = _fields(lines, delimiter)
    header = tuple(rows[0]) if rows else ()
    decimal = "."
    if delimiter != ",":
        cells = [c.strip() for r in rows[1:] for c in r]
        comma = sum(1 for c in cells if _DECIMAL_COMMA.match(c))
        point = sum(1 for c in cells if _DECIMAL_POINT.match(c))
        if comma and not point:
            decimal = ","
    return CsvDialect(delimiter=delimiter, encoding=encoding, decimal=decimal, header=header,
                      tentative=tentative, header_complete="\n" in text or "\r" in text)


def sniff_file(path: str | os.PathLike) -> CsvDialect:
    """The dialect of a CSV file on disk (see :func:`sniff_csv`)."""
    return sniff_csv(_head_of(os.fspath(path), os.fspath(path)), name=os.fspath(path))


def sniff_files(files: Sequence[str]) -> list[CsvDialect]:
    """The dialect of each CSV file of one source (a folder, a glob), the rule every engine reads
    them by: files written differently (delimiter or decimal mark) are refused, naming the first
    that differs."""
    dialects = [sniff_file(f) for f in files]
    first = dialects[0]
    for f, d in zip(files, dialects):
        if (d.delimiter, d.decimal) != (first.delimiter, first.decimal):
            raise DivergenceInputError(f"'{f}' is written differently from '{files[0]}' (delimiter or decimal "
                                       "mark): give files of one kind.")
    return dialects


def _head_of(source, name: str | None) -> bytes:
    """The first (decompressed) bytes of a file or buffer, to sniff its dialect."""
    with DataInput.of(source, name).text(ReadLimits.default()) as fh:
        return fh.read(SNIFF_BYTES)


def estimate_csv(inp: DataInput, d: CsvDialect, limits: ReadLimits,
                 sample_bytes: int = 1 << 20) -> TableEstimate | None:
    """Rows x columns and memory of a CSV file's frame, from its first ``sample_bytes`` (decompressed);
    None when the sample cannot be parsed (the full read then says why)."""
    with inp.text(limits) as fh:
        sample = fh.read(sample_bytes + 1)
        consumed = inp.size if inp.compression is None else None
        raw_pos = None
        if inp.compression is not None:
            try:
                raw_pos = fh.raw._raw.tell()  # compressed bytes read so far
            except (AttributeError, OSError, ValueError):
                raw_pos = None
    whole = len(sample) <= sample_bytes
    if not whole:
        cut = sample.rfind(b"\n", 0, sample_bytes)
        sample = sample[: cut + 1] if cut > 0 else sample[:sample_bytes]
    encodings = {"utf-8": ["utf-8", "cp1252", "latin-1"], "cp1252": ["cp1252", "latin-1"]}.get(d.encoding, [d.encoding])
    df = None
    for enc in encodings:
        try:
            df = pd.read_csv(io.BytesIO(sample), sep=d.delimiter, encoding=enc, decimal=d.decimal, low_memory=False,
                             **_names(d))
            break
        except UnicodeDecodeError:
            continue
        except Exception:  # noqa: BLE001 - the full read reports what is wrong
            return None
    if df is None:
        return None
    n = max(len(df), 1)
    per_row = float(df.memory_usage(deep=True, index=False).sum()) / n + 16.0 * max(df.shape[1], 1) / 8
    if whole:
        return TableEstimate(len(df), df.shape[1], int(per_row * len(df)), exact=True, text=len(sample))
    if consumed is not None:
        total = consumed
    elif raw_pos:
        total = inp.size * len(sample) / raw_pos  # the sample's ratio over the whole compressed file
    else:
        total = len(sample)
    rows = int(total / (len(sample) / n))
    return TableEstimate(rows, df.shape[1], int(per_row * rows), text=int(total))


def check_columns(inp: DataInput, d: CsvDialect, limits: ReadLimits, label: str) -> None:
    """Refuse a header of more than ``limits.max_columns`` names, counted on the first line's bytes
    (read in blocks, no further than the count needs): pandas builds a frame of a million columns
    in minutes, and takes quadratic time over repeated names."""
    sep = d.delimiter.encode(d.encoding if d.encoding not in ("utf-16",) else "utf-8")
    if d.encoding == "utf-16" or len(sep) != 1:
        return
    fields, read = 1, 0
    with inp.text(limits) as fh:
        while fields <= limits.max_columns:
            block = fh.read(1 << 20)
            if not block:
                break
            end = block.find(b"\n")
            fields += block.count(sep, 0, end if end >= 0 else len(block))
            read += len(block) if end < 0 else end
            if end >= 0:
                break
    if fields > limits.max_columns:
        raise DivergenceInputError(
            f"'{label}' has more than {limits.max_columns:,} columns ({fields:,} names in the first "
            f"{size_text(read)} of its header): far more than a scan can slice by. Keep the attributes and roles "
            "you need in the file, or raise DIVERGENCE_MAX_COLUMNS.")


def pandas_names(header: Sequence[str]) -> list[str]:
    """The column names pandas gives a header: an empty name is ``Unnamed: i`` (its position), a
    repeated name gets ``.1``, ``.2``, ..."""
    out: list[str] = []
    header = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(header)]
    used = set(header)
    counts: dict[str, int] = {}
    for h in header:
        k = counts.get(h, 0)
        name = h
        if k:
            name = f"{h}.{k}"
            while name in used:
                k += 1
                name = f"{h}.{k}"
            used.add(name)
        counts[h] = k + 1
        out.append(name)
    return out


def duplicate_note(header: Sequence[str], columns: Sequence[str] | None = None) -> str | None:
    """The note saying which header names repeat and what they were read as (None if none)."""
    header = tuple(header)
    columns = list(columns) if columns is not None else pandas_names(header)
    seen: dict[str, int] = {}
    dups = []
    for h in header:
        seen[h] = seen.get(h, 0) + 1
        if seen[h] == 2:
            dups.append(h)
    if not dups:
        return None
    renamed = [c for c, h in zip(columns, header) if c != h]
    return (f"Column name{'s' if len(dups) > 1 else ''} {_listed([repr(d) for d in dups])} appear"
            f"{'' if len(dups) > 1 else 's'} more than once in the header; the later ones are read as "
            f"{_listed([repr(c) for c in renamed])}.")


#: names a note lists before it says how many more
LISTED = 5


def _listed(names: Sequence[str]) -> str:
    """Names joined for a note: the first :data:`LISTED` and how many more (a header of 20,000
    repeats made a note of 20,000 names)."""
    if len(names) <= LISTED + 1:
        return ", ".join(names)
    return f"{', '.join(names[:LISTED])} and {len(names) - LISTED:,} more"


def dialect_notes(d: CsvDialect, label: str) -> list[str]:
    """What a person should know about how a CSV file was read (nothing for a plain UTF-8 CSV)."""
    notes = []
    if d.delimiter != ",":
        notes.append(f"Read '{label}' as {_NAMES[d.delimiter]}-separated values.")
    if d.decimal == ",":
        notes.append(f"Read numbers in '{label}' with a decimal comma (1,5 = 1.5).")
    if d.encoding in ("cp1252", "latin-1"):
        notes.append(f"Read '{label}' as {_ENCODING_NAMES[d.encoding]}: it is not valid UTF-8.")
    elif d.encoding == "utf-16":
        notes.append(f"Read '{label}' as UTF-16 (it starts with a byte-order mark).")
    return notes


def _names(d: CsvDialect) -> dict:
    """``read_csv``'s names for a header whose names repeat: pandas' own renaming (``v``, ``v.1``, ...)
    computed here in one pass (pandas' is quadratic: 20,000 repeats took 7 s)."""
    if d.header_complete and d.header and len(set(d.header)) < len(d.header):
        return {"names": pandas_names(d.header), "header": None, "skiprows": 1}
    return {}


def _read_csv(data, d: CsvDialect, encoding: str) -> pd.DataFrame:
    return pd.read_csv(data, sep=d.delimiter, encoding=encoding, decimal=d.decimal, low_memory=False,
                       compression=None, **_names(d))


def read_csv_stream(inp: DataInput, d: CsvDialect, label: str, limits: ReadLimits) -> tuple[pd.DataFrame, str]:
    """The frame and the encoding it was read with (UTF-8 first, then cp1252, then Latin-1),
    read from the (decompressed) stream: no copy of the file's bytes."""
    encodings = {"utf-8": ["utf-8", "cp1252", "latin-1"], "cp1252": ["cp1252", "latin-1"]}.get(
        d.encoding, [d.encoding])
    last: Exception | None = None
    for enc in encodings:
        try:
            with inp.text(limits) as fh:
                return _read_csv(fh, d, enc), enc
        except UnicodeDecodeError as exc:
            last = exc
    raise DivergenceInputError(f"Could not read '{label}' as text: {last}")


def unique_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Columns renamed as pandas' CSV reader does (``x``, ``x.1``) where a name repeats, with a note."""
    cols = [str(c) for c in df.columns]
    if len(set(cols)) == len(cols):
        return df, None
    seen: dict[str, int] = {}
    out = []
    taken = set(cols)
    for c in cols:
        k = seen.get(c, 0)
        new = c if k == 0 else f"{c}.{k}"
        while new in taken and k > 0:
            k += 1
            new = f"{c}.{k}"
        seen[c] = k + 1
        out.append(new)
    df = df.copy()
    df.columns = out
    return df, duplicate_note(tuple(cols), out)


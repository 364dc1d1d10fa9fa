"""Reading tables as they come: one reader for the upload, the command line and DuckDB.

CSV files are read with their delimiter sniffed (comma, semicolon, tab or pipe), a
byte-order mark handled (UTF-8, UTF-16), and their encoding found: UTF-8, else Windows-1252
(cp1252), else Latin-1, which the result's notes say. A semicolon file whose numbers use a
decimal comma is read as numbers. A column name that appears twice in the header is read
with pandas' suffix (``score``, ``score.1``) and a note says so: never silently. Errors name
the file and what is wrong with it.
"""
from __future__ import annotations

import csv
import dataclasses
import errno
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Sequence, Union

import pandas as pd

from ..errors import DivergenceInputError, DivergenceOutputError

__all__ = ["parquet_numbers", "read_table", "load_table", "LoadedTable", "sniff_csv", "sniff_file", "CsvDialect", "ReadLimits",
           "TableEstimate", "open_data", "available_memory", "estimate_table", "size_text", "MAGIC", "sniff_files",
           "PARQUET_SUFFIXES", "pandas_names", "dialect_notes", "duplicate_note", "write_atomically",
           "remove_stale_temporaries"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
#: delimiters tried, in order of preference when several fit equally
DELIMITERS = (",", ";", "\t", "|")
#: bytes read to sniff a file's dialect and encoding
SNIFF_BYTES = 1 << 16
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_ENCODING_NAMES = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "cp1252": "Windows-1252 (cp1252)",
                   "latin-1": "Latin-1 (ISO-8859-1)", "utf-16": "UTF-16"}
_DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")
_DECIMAL_POINT = re.compile(r"^-?\d+\.\d+$")

Source = Union[str, os.PathLike, bytes, bytearray, IO[bytes]]


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


def _is_parquet(name: str | None, head: bytes) -> bool:
    if name and name.lower().endswith(PARQUET_SUFFIXES):
        return True
    return head[:4] == b"PAR1"


def _head_of(source, name: str | None) -> bytes:
    """The first (decompressed) bytes of a file or buffer, to sniff its dialect."""
    with _Input.of(source, name).text(ReadLimits.default()) as fh:
        return fh.read(SNIFF_BYTES)


# ----------------------------------------------------------------------------- bounded reading


#: magic numbers of the compressed containers a data file may come in
MAGIC = {"gzip": b"\x1f\x8b", "bz2": b"BZh", "xz": b"\xfd7zXZ\x00", "zstd": b"\x28\xb5\x2f\xfd",
         "zip": b"PK\x03\x04"}
_SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def available_memory() -> int:
    """Bytes of memory available to this process now (Linux: MemAvailable, within a cgroup's
    limit), or 4 GiB where it cannot be told."""
    best = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    best = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = open(path).read().strip()
            if text.isdigit():
                used_path = path.replace("memory.max", "memory.current").replace("limit_in_bytes", "usage_in_bytes")
                used = int(open(used_path).read().strip())
                left = max(int(text) - used, 0)
                best = left if best is None else min(best, left)
                break
        except (OSError, ValueError):
            continue
    return best if best is not None else 4 << 30


@dataclass(frozen=True)
class ReadLimits:
    """How much a file may cost to read: a compressed file is decompressed as a stream and
    refused past ``max_text`` bytes out, or past ``max_ratio`` times its compressed size once
    more than ``ratio_floor`` bytes came out (a decompression bomb); a table whose frame would
    take more than ``max_memory`` bytes (estimated from a sample before it is parsed) is refused
    with the remedy (DuckDB reads it where it lies). Defaults from the environment:
    ``DIVERGENCE_MAX_INFLATE_RATIO`` (100), ``DIVERGENCE_MAX_TEXT_BYTES`` (16 GiB) and
    ``DIVERGENCE_MAX_TABLE_BYTES`` (half the memory available). A CSV header of more than
    ``max_columns`` names (``DIVERGENCE_MAX_COLUMNS``, 100,000) is refused before anything is parsed:
    parsing and screening that many columns would take minutes for no slice anyone reads."""

    max_ratio: float = 100.0
    ratio_floor: int = 64 << 20
    max_text: int = 16 << 30
    max_memory: int | None = None
    max_columns: int = 100_000

    @classmethod
    def default(cls, **changes) -> "ReadLimits":
        base = cls(max_ratio=_env_number("DIVERGENCE_MAX_INFLATE_RATIO", 100.0),
                   max_text=int(_env_number("DIVERGENCE_MAX_TEXT_BYTES", 16 << 30)),
                   max_memory=int(_env_number("DIVERGENCE_MAX_TABLE_BYTES", available_memory() / 2)),
                   max_columns=int(_env_number("DIVERGENCE_MAX_COLUMNS", 100_000)))
        return dataclasses.replace(base, **changes) if changes else base


class _MemoryReader(io.RawIOBase):
    """A read-only file over a buffer (an upload's memoryview) without copying it."""

    def __init__(self, view) -> None:
        self._view = memoryview(view).cast("B")
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), len(self._view) - self._pos)
        if n <= 0:
            return 0
        b[:n] = self._view[self._pos:self._pos + n]
        self._pos += n
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


class _Bounded(io.RawIOBase):
    """A decompressing stream that refuses to give more than the limits allow."""

    def __init__(self, stream, raw, compressed: int, limits: ReadLimits, label: str, kind: str) -> None:
        self._stream, self._raw, self._compressed = stream, raw, max(int(compressed), 1)
        self._limits, self._label, self._kind = limits, label, kind
        self.out = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self._stream.read(len(b))
        except (OSError, EOFError, ValueError) as exc:  # a truncated or corrupt stream
            import lzma
            import zlib

            if isinstance(exc, (zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)):
                raise DivergenceInputError(f"Could not read '{self._label}': its {self._kind} data is damaged "
                                           f"({_first_line(exc)}).") from None
            raise
        n = len(data)
        b[:n] = data
        self.out += n
        _check_inflation(self.out, self._compressed, self._limits, self._label, how="refused after")
        return n

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._raw.close()
            super().close()


def _check_inflation(out: int, compressed: int, limits: "ReadLimits", label: str, how: str = "declared") -> None:
    """Refuse a decompressed size past :class:`ReadLimits`: ``out`` bytes come (or would come, as a zip
    member declares) out of ``compressed``; ``how`` says which, in the message."""
    if out > limits.max_text:
        raise DivergenceInputError(
            f"'{label}' decompresses to more than {size_text(limits.max_text)} of text: refused. Decompress it "
            "yourself if it is genuine and scan it with DuckDB (command line: --engine duckdb).")
    if out > limits.ratio_floor and out > limits.max_ratio * compressed:
        amount = f"{size_text(out)} declared" if how == "declared" else f"{how} {size_text(out)}"
        raise DivergenceInputError(
            f"'{label}' decompresses to more than {limits.max_ratio:g} times its {size_text(compressed)} "
            f"({amount}): a decompression bomb, or data so repetitive that it should be "
            "decompressed and scanned with DuckDB (command line: --engine duckdb).")


def size_text(n: float) -> str:
    """A byte count in words: 1.5 GB, 983 KB."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            x = n / scale
            return f"{x:.0f} {unit}" if x >= 99.5 else f"{x:.1f} {unit}" if x >= 9.95 else f"{x:.2f} {unit}"
    return f"{int(n)} bytes"


@dataclass
class _Input:
    """A data source (a path, bytes, a buffer or a binary file) that can be opened again and
    again, and read as a stream of (decompressed) bytes within limits."""

    source: object
    name: str | None
    label: str
    size: int
    compression: str | None

    @classmethod
    def of(cls, source, name: str | None = None, label: str | None = None) -> "_Input":
        if isinstance(source, _Input):
            return source
        if isinstance(source, io.BytesIO):  # Streamlit's UploadedFile too: getvalue() gives the bytes it
            name = name or getattr(source, "name", None)  # shares, getbuffer() would copy them
            source = source.getvalue()
        elif hasattr(source, "read"):
            name = name or getattr(source, "name", None)
            source = source.read()
        if isinstance(source, (bytes, bytearray, memoryview)):
            size = memoryview(source).nbytes
            label = label or name or "the upload"
        else:
            path = os.fspath(source)
            label = label or str(source)
            name = name or os.path.basename(path)
            size = os.path.getsize(path)
            source = path
        inp = cls(source, name, label, size, None)
        with inp.raw() as fh:
            magic = fh.read(8)
        inp.compression = next((k for k, m in MAGIC.items() if magic.startswith(m)), None)
        return inp

    def raw(self):
        """The bytes as they are (compressed or not), from the start."""
        if isinstance(self.source, str):
            return open(self.source, "rb")
        if isinstance(self.source, bytes):
            return io.BytesIO(self.source)  # shares the bytes until written
        return io.BufferedReader(_MemoryReader(self.source), buffer_size=1 << 20)

    def text(self, limits: ReadLimits):
        """The decompressed bytes from the start, refused past ``limits``."""
        raw = self.raw()
        kind = self.compression
        if kind is None:
            return raw
        try:
            if kind == "gzip":
                import gzip

                stream = gzip.GzipFile(fileobj=raw, mode="rb")
            elif kind == "bz2":
                import bz2

                stream = bz2.BZ2File(raw, mode="rb")
            elif kind == "xz":
                import lzma

                stream = lzma.LZMAFile(raw, mode="rb")
            elif kind == "zip":
                import zipfile

                try:
                    archive = zipfile.ZipFile(raw)
                except zipfile.BadZipFile as exc:
                    raise DivergenceInputError(f"Could not read '{self.label}' as a zip archive: {exc}.") from None
                members = [m for m in archive.infolist() if not m.is_dir()]
                if len(members) != 1:
                    raise DivergenceInputError(f"'{self.label}' is a zip archive of {len(members)} files: give one "
                                               "CSV or Parquet file (or an archive of exactly one).")
                # a member's declared size bounds what zipfile gives out of it: a bomb is refused from
                # it before any byte is decompressed (the stream's own count comes too late for a zip,
                # whose compressed bytes are read ahead in large chunks)
                _check_inflation(members[0].file_size, self.size, limits, self.label)
                stream = archive.open(members[0])
            else:
                raise DivergenceInputError(
                    f"'{self.label}' is {kind}-compressed, which this reader does not decompress: decompress it "
                    "first, or scan it with DuckDB (command line: --engine duckdb).")
        except BaseException:
            raw.close()
            raise
        return io.BufferedReader(_Bounded(stream, raw, self.size, limits, self.label, kind), buffer_size=1 << 20)


def open_data(source, *, name: str | None = None, limits: ReadLimits | None = None):
    """A binary file of a data file's content, decompressed (gzip, bzip2, xz, a zip of one file:
    found by their magic numbers) as a stream within ``limits`` (a decompression bomb is refused
    with a :class:`DivergenceInputError`). Close it when done."""
    return _Input.of(source, name).text(limits or ReadLimits.default())


@dataclass(frozen=True)
class TableEstimate:
    """What a file would take as a DataFrame, estimated from a sample before it is parsed."""

    rows: int
    columns: int
    memory: int  # bytes of the frame (its peak while parsing is about twice that)
    exact: bool = False  # the sample held the whole file
    text: int = 0  # bytes of (decompressed) text


def estimate_csv(inp: "_Input", d: CsvDialect, limits: ReadLimits, sample_bytes: int = 1 << 20) -> TableEstimate | None:
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


def estimate_parquet(inp: "_Input") -> TableEstimate | None:
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


def estimate_table(source: Source, *, name: str | None = None, limits: ReadLimits | None = None,
                   label: str | None = None) -> TableEstimate | None:
    """Rows x columns and memory of the frame :func:`load_table` would read, estimated before
    parsing: a Parquet file from its footer, a CSV file from a sample of its first megabyte
    (decompressed within ``limits``); None when it cannot be told."""
    limits = limits or ReadLimits.default()
    inp = _Input.of(source, name, label)
    with inp.text(limits) as fh:
        head = fh.read(SNIFF_BYTES)
    if _is_parquet(inp.name, head):
        return estimate_parquet(inp) if inp.compression is None else None
    return estimate_csv(inp, sniff_csv(head, name=inp.name), limits)


def _check_estimate(est: TableEstimate | None, limits: ReadLimits, label: str) -> None:
    if est is None or limits.max_memory is None or 2 * est.memory <= limits.max_memory:
        return
    raise DivergenceInputError(
        f"'{label}' would take about {size_text(est.memory)} in memory ({'' if est.exact else 'about '}{est.rows:,} rows "
        f"x {est.columns:,} columns) and twice that to read, more than the {size_text(limits.max_memory)} allowed: scan it "
        "with DuckDB where it lies (command line: --engine duckdb; dashboard: a local path), or read fewer columns.")


def _check_columns(inp: "_Input", d: CsvDialect, limits: ReadLimits, label: str) -> None:
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


def _drain(inp: "_Input", limits: ReadLimits) -> int:
    """Decompress the whole stream without keeping it (the limits apply): its size in bytes."""
    total = 0
    with inp.text(limits) as fh:
        while True:
            chunk = fh.read(1 << 22)
            if not chunk:
                return total
            total += len(chunk)


def parquet_numbers(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Parquet's decimals and durations as the numbers the DuckDB and Spark engines read them as
    (pandas gives Decimal objects, sliced value by value, and timedeltas): decimals as floats,
    durations as whole counts of their stored unit; a note names each column converted."""
    import decimal

    import numpy as np

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
        inp = _Input.of(source, name, label)
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
        inp = _Input.of(os.fspath(p), name or p.name, label)
    name = inp.name
    with inp.text(limits) as fh:
        head = fh.read(SNIFF_BYTES)
    notes: list[str] = []
    if _is_parquet(name, head):
        if inp.compression is not None:
            raise DivergenceInputError(f"'{label}' is a {inp.compression}-compressed Parquet file: Parquet compresses "
                                       "itself; give the .parquet file as it is.")
        _check_estimate(estimate_parquet(inp), limits, label)
        try:
            with inp.raw() as fh:
                df = pd.read_parquet(fh)
        except Exception as exc:  # pyarrow raises many kinds
            raise DivergenceInputError(f"Could not read '{label}' as Parquet: {_first_line(exc)}") from None
        df, note = _unique_columns(df)
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
    _check_columns(inp, d, limits, label)
    est = estimate_csv(inp, d, limits)
    if inp.compression is not None and (est is None or est.text > max(limits.ratio_floor, limits.max_ratio / 4 * inp.size)):
        # a sample inflating four times more than data files do (or telling nothing): decompress and
        # count first, so a bomb is refused before anything is parsed
        _drain(inp, limits)
    _check_estimate(est, limits, label)
    try:
        df, encoding = _csv(inp, d, label, limits)
    except pd.errors.EmptyDataError:
        raise DivergenceInputError(f"File '{label}' is empty.") from None
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        if isinstance(exc, DivergenceInputError):
            raise
        raise DivergenceInputError(f"Could not read '{label}' as CSV: {_first_line(exc)}") from None
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


def _csv(inp: "_Input", d: CsvDialect, label: str, limits: ReadLimits) -> tuple[pd.DataFrame, str]:
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


def _unique_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file (see :func:`load_table`); the frame only."""
    return load_table(path).frame


#: the temporary file of a write in progress: ``.NAME.PID.TOKEN.tmp`` beside the target
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{12}\.tmp$")
#: the longest target name kept whole in a temporary file's name (the temporary adds up to 40
#: characters, and a name has at most 255 bytes): a longer one is cut and keyed by its hash
_TEMPORARY_NAME = 150


def _temporary_key(name: str) -> str:
    """The part of a temporary file's name that says which target it is for."""
    if len(name.encode("utf-8")) <= _TEMPORARY_NAME:
        return name
    import hashlib

    head = name.encode("utf-8")[:100].decode("utf-8", errors="ignore")
    return f"{head}~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"


def write_atomically(path: str | os.PathLike, content: str | bytes | Callable[[str], None]) -> Path:
    """Write a file through a temporary file in its folder, renamed into place: a failure never
    leaves half a file, and a reader never sees one.

    ``content``: text (written as UTF-8), bytes, or a function that writes the file at the
    path it is given. The target is never harmed: a symbolic link is followed (its target is
    written, the link stays); a character device or a pipe (``/dev/null``, ``/dev/stdout``) is
    written in place, never replaced by a regular file; a folder, a block device or a socket is
    refused. A new file gets the usual permissions (0666 less the umask), a replaced one keeps
    its own. Temporary files left by an earlier run that was killed are removed. A missing
    folder, a refused target and an ``OSError`` (disk full, permission denied) are a
    :class:`DivergenceOutputError` of one line naming the path.
    """
    import secrets
    import stat

    p = Path(path)
    target = os.path.realpath(p)  # every link followed (a dangling one: the file it names)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise DivergenceOutputError(f"Cannot write '{path}': it is a folder; give the path of a file in it.")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_in_place(path, target, content)
            return p
        if not stat.S_ISREG(st.st_mode):
            what = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) \
                else "not a regular file"
            raise DivergenceOutputError(f"Cannot write '{path}': it is {what}, not a file.")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        shown_dir = os.path.dirname(os.path.abspath(p)) if os.path.realpath(p) == os.path.abspath(p) else directory
        raise DivergenceOutputError(f"Cannot write '{path}': folder '{shown_dir}' does not exist.")
    name = os.path.basename(target)
    remove_stale_temporaries(directory, name)
    tmp = os.path.join(directory, f".{_temporary_key(name)}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    try:
        if callable(content):
            os.close(fd)
            content(tmp)
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
        if st is not None:  # a replaced file keeps its permissions
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
        raise
    return p


#: seconds a named pipe given as the output waits for its reader (DIVERGENCE_FIFO_WAIT)
FIFO_WAIT = 10.0


def _write_in_place(path, target: str, content) -> None:
    """Write into a device or a pipe as it is (no temporary file, no rename). A named pipe with no
    reader is refused after :data:`FIFO_WAIT` seconds (a blocking open would wait forever, deaf to
    SIGTERM); with one, the
    first writer's end stays open while the content is written, so the reader never sees an early end."""
    import stat

    held = None
    try:
        if stat.S_ISFIFO(os.stat(target).st_mode):
            # wait a while for a reader (one started just after the command), in short sleeps a signal
            # interrupts, never in a blocking open()
            import time

            wait = _env_number("DIVERGENCE_FIFO_WAIT", FIFO_WAIT)
            deadline = time.monotonic() + wait
            while held is None:
                try:
                    held = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
                except OSError as exc:
                    if exc.errno != errno.ENXIO:
                        raise
                    if time.monotonic() >= deadline:
                        raise DivergenceOutputError(f"Cannot write '{path}': it is a named pipe and no reader came "
                                                    f"in {wait:g} s; start the reader first.") from None
                    time.sleep(0.05)
        if callable(content):
            content(target)
        else:
            with open(target, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None
    finally:
        if held is not None:
            os.close(held)


def _reason(exc: BaseException) -> str:
    """An OSError's reason in words ('no space left on device'), on one line."""
    text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else None) or _first_line(exc)
    m = re.search(r"\[errno (\d+)\]\s*(.*)", text, re.I)  # pyarrow: "... Detail: [errno 28] No space left on device"
    if m:
        text = m.group(2).strip() or os.strerror(int(m.group(1)))
    text = " ".join(text.split())
    return (text[:1].lower() + text[1:])[:200].rstrip(".")


def remove_stale_temporaries(directory: str, name: str) -> list[str]:
    """Remove the temporary files of earlier writes of ``name`` whose process is gone (a run
    killed while writing): returns the names removed. A live process's file is left alone."""
    removed = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        m = _TEMPORARY.match(entry)
        if not m or m.group("name") != _temporary_key(name):
            continue
        pid = int(m.group("pid"))
        if pid != os.getpid() and _alive(pid):
            continue
        if pid == os.getpid():
            continue  # this process's own write in progress (another thread)
        try:
            os.unlink(os.path.join(directory, entry))
            removed.append(entry)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True

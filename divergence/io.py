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
import gzip
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Sequence, Union

import pandas as pd

from .errors import DivergenceInputError, DivergenceOutputError

__all__ = ["read_table", "load_table", "LoadedTable", "sniff_csv", "sniff_file", "CsvDialect",
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
                      tentative=tentative)


def sniff_file(path: str | os.PathLike) -> CsvDialect:
    """The dialect of a CSV file on disk (see :func:`sniff_csv`)."""
    return sniff_csv(_head_of(os.fspath(path), os.fspath(path)), name=os.fspath(path))


def _is_parquet(name: str | None, head: bytes) -> bool:
    if name and name.lower().endswith(PARQUET_SUFFIXES):
        return True
    return head[:4] == b"PAR1"


def _head_of(source, name: str | None) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source[:SNIFF_BYTES * 4])
    else:
        with open(source, "rb") as fh:
            raw = fh.read(SNIFF_BYTES * 4)
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                out = b""
                while len(out) < SNIFF_BYTES:
                    chunk = gz.read(SNIFF_BYTES)
                    if not chunk:
                        break
                    out += chunk
                return out
        except (OSError, EOFError):
            pass
    return raw[:SNIFF_BYTES]


def pandas_names(header: Sequence[str]) -> list[str]:
    """The column names pandas gives a header: a repeated name gets ``.1``, ``.2``, ..."""
    out: list[str] = []
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
    listed = ", ".join(f"'{d}'" for d in dups)
    return (f"Column name{'s' if len(dups) > 1 else ''} {listed} appear{'' if len(dups) > 1 else 's'} more "
            f"than once in the header; the later ones are read as {', '.join(repr(c) for c in renamed)}.")


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


def _read_csv(data, d: CsvDialect, encoding: str) -> pd.DataFrame:
    return pd.read_csv(data, sep=d.delimiter, encoding=encoding, decimal=d.decimal, low_memory=False,
                       compression="infer" if not isinstance(data, io.BytesIO) else None)


def _csv(source, d: CsvDialect, label: str) -> tuple[pd.DataFrame, str]:
    """The frame and the encoding it was read with (UTF-8 first, then cp1252, then Latin-1)."""
    def data():
        return io.BytesIO(source) if isinstance(source, bytes) else source

    if isinstance(source, bytes) and source[:2] == b"\x1f\x8b":
        source = gzip.decompress(source)
    encodings = {"utf-8": ["utf-8", "cp1252", "latin-1"], "cp1252": ["cp1252", "latin-1"]}.get(
        d.encoding, [d.encoding])
    last: Exception | None = None
    for enc in encodings:
        try:
            return _read_csv(data(), d, enc), enc
        except UnicodeDecodeError as exc:
            last = exc
    raise DivergenceInputError(f"Could not read '{label}' as text: {last}")


def load_table(source: Source, *, name: str | None = None) -> LoadedTable:
    """Read a CSV or Parquet table from a path, bytes or a binary file-like (an upload).

    ``name`` is the file name (its extension says .csv, .tsv, .txt or .parquet; the content
    decides otherwise). Raises :class:`DivergenceInputError` naming the file and the problem.
    """
    if hasattr(source, "read"):
        name = name or getattr(source, "name", None)
        source = source.read()  # type: ignore[union-attr]
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source)
        label = name or "the upload"
        if not source.strip():
            raise DivergenceInputError(f"File '{label}' is empty.")
    else:
        p = Path(source)  # type: ignore[arg-type]
        label = str(source)
        name = name or p.name
        if not p.exists():
            raise DivergenceInputError(f"File '{source}' does not exist.")
        if p.is_dir():
            raise DivergenceInputError(f"'{source}' is a folder, not a CSV or Parquet file.")
        if p.stat().st_size == 0:
            raise DivergenceInputError(f"File '{source}' is empty.")
    head = _head_of(source, name)
    notes: list[str] = []
    if _is_parquet(name, head):
        try:
            df = pd.read_parquet(io.BytesIO(source) if isinstance(source, bytes) else source)
        except Exception as exc:  # pyarrow raises many kinds
            raise DivergenceInputError(f"Could not read '{label}' as Parquet: {_first_line(exc)}") from None
        df, note = _unique_columns(df)
        if note:
            notes.append(note)
        if len(df) == 0:
            raise DivergenceInputError(f"File '{label}' has a header but no rows.")
        return LoadedTable(df, notes, None, None)
    d = sniff_csv(head, name=name)
    try:
        df, encoding = _csv(source, d, label)
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


def _unique_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Columns renamed as pandas' CSV reader does (``x``, ``x.1``) where a name repeats, with a note."""
    cols = [str(c) for c in df.columns]
    if len(set(cols)) == len(cols):
        return df, None
    seen: dict[str, int] = {}
    out = []
    for c in cols:
        k = seen.get(c, 0)
        new = c if k == 0 else f"{c}.{k}"
        while new in cols and k > 0:
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
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
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


def _write_in_place(path, target: str, content) -> None:
    """Write into a device or a pipe as it is (no temporary file, no rename)."""
    try:
        if callable(content):
            content(target)
        else:
            with open(target, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
    except OSError as exc:
        raise DivergenceOutputError(f"Cannot write '{path}': {_reason(exc)}.") from None


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
        if not m or m.group("name") != name:
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

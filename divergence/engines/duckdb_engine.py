"""scan_duckdb(): the heavy step in DuckDB, for CSV or Parquet files larger than memory.

DuckDB (embedded, no server) reads one file, a folder or a glob, bins the attributes,
computes the outcomes and groups identical discretized rows with their tallies, within a
memory limit (spilling to a temporary folder), and streams the grouped rows to the
in-memory miner. The slice table is the one :func:`divergence.scan` gives on the same rows.
"""
from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..data.io import PARQUET_SUFFIXES, CsvDialect, dialect_notes, duplicate_note, open_data, pandas_names, sniff_files
from ..errors import DivergenceInputError
from ..prepare.replication_rows import with_given_rows
from ..settings import Settings
from ..table import SliceTable
from .engine_scan import Backend, engine_settings, mine_engine, scan_engine
from .sql import DUCKDB, Column, kind_of

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["scan_duckdb", "mine_duckdb", "preview_source", "resolve_files", "files_under", "duckdb_backend", "DEFAULT_MEMORY_LIMIT"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")
#: DuckDB's memory limit unless one is given: half the machine's memory, at most 4 GiB
DEFAULT_MEMORY_LIMIT = None
#: rows per batch when the grouped table is streamed to the miner
BATCH_ROWS = 131_072


def _default_memory_limit() -> str:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return f"{max(256, min(4096, total // 2 >> 20))}MB"


def _pandas_na_values() -> list[str]:
    """The texts pandas' read_csv reads as missing, so both paths read a CSV alike."""
    try:
        from pandas._libs.parsers import STR_NA_VALUES

        return sorted(STR_NA_VALUES)
    except ImportError:  # pragma: no cover - pandas moved it
        return ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def _format_of(path: str) -> str:
    low = path.lower()
    if low.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return "csv"


#: most entries (files and folders) a folder or a glob may walk through before it is refused: a
#: walk is bounded whatever the folder holds
MAX_WALK = 200_000


def _walk(top: str, text: str) -> list[str]:
    """Every file under the folder ``top`` (relative paths, sorted), links to folders not followed
    (a link loop, ``sub/self -> .``, cannot make the walk endless) and at most :data:`MAX_WALK`
    entries seen; only regular files (a link to one counts; a pipe, a socket or a device never)."""
    out, seen = [], 0
    for folder, dirs, names in os.walk(top, followlinks=False):
        seen += len(dirs) + len(names)
        if seen > MAX_WALK:
            raise DivergenceInputError(f"'{text}' reaches more than {MAX_WALK:,} files and folders: name a smaller "
                                       "folder or a narrower glob.")
        dirs.sort()
        for name in names:
            full = os.path.join(folder, name)
            if os.path.isfile(full):
                out.append(os.path.relpath(full, top))
    return sorted(out)


def _glob_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """A relative path (its parts) against a glob's parts: ``**`` any number of folders, ``*``,
    ``?`` and ``[...]`` within a name; a hidden name (``.x``) only by a part that starts with a dot."""
    if not pattern:
        return not parts
    head = pattern[0]
    if head == "**":
        return any(_glob_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1)
                   if not any(x.startswith(".") for x in parts[:i]))
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _glob_match(pattern[1:], parts[1:])


def _glob_files(text: str) -> list[str]:
    """The regular files a glob matches, walked from its folder part with :func:`_walk`."""
    prefix = _static_prefix(text)
    rest = Path(os.path.relpath(text, prefix)).parts if prefix != text else ()
    if not os.path.isdir(prefix):
        return []
    return [f if prefix == "." else os.path.join(prefix, f) for f in _walk(prefix, text)
            if _glob_match(rest, Path(f).parts)]


def _once(files: Sequence[str]) -> list[str]:
    """Each real file once (a file reached through two links, or a folder linked twice, is read once)."""
    out, seen = [], set()
    for f in files:
        real = os.path.realpath(f)
        if real not in seen:
            seen.add(real)
            out.append(f)
    return out


def _regular(path: str, text: str) -> None:
    if not os.path.isfile(path):
        raise DivergenceInputError(f"'{text}' is not a regular file (a pipe, a socket or a device is not read).")


def resolve_files(source: str | os.PathLike | Sequence[str | os.PathLike]) -> tuple[list[str], str]:
    """The files a source names (a file, a folder, a glob, or a list of files) and their
    format ('csv' or 'parquet'); a clear error when there are none or they are mixed. Folders and
    globs are walked without following links to folders, each real file is read once, and only
    regular files are read."""
    if isinstance(source, (list, tuple)):
        files = []
        for item in source:
            p = Path(item)
            if not p.exists():
                raise DivergenceInputError(f"File '{item}' does not exist.")
            if p.is_dir():
                raise DivergenceInputError(f"'{item}' is a folder; list files, or give the folder alone.")
            _regular(str(p), str(item))
            files.append(str(p))
        if not files:
            raise DivergenceInputError("No file was given.")
    else:
        if not isinstance(source, (str, os.PathLike)):  # a TypeError, as os.fspath and Path raised here before
            raise TypeError(f"A source is a path (str or os.PathLike) or a list or tuple of them, not "
                            f"{type(source).__name__}.")
        text = os.fspath(source)
        p = Path(text)
        if any(ch in text for ch in "*?["):
            files = _glob_files(text)
            if not files:
                raise DivergenceInputError(f"No file matches '{text}'.")
        elif p.is_dir():
            files = [os.path.join(text, f) for f in _walk(text, text)
                     if not Path(f).name.startswith((".", "_")) and f.lower().endswith(PARQUET_SUFFIXES + CSV_SUFFIXES)]
            if not files:
                raise DivergenceInputError(f"Folder '{text}' holds no CSV or Parquet file.")
        elif p.exists():
            _regular(text, text)
            files = [text]
        else:
            raise DivergenceInputError(f"File or folder '{text}' does not exist.")
    files = _once(files)
    formats = {_format_of(f) for f in files}
    if len(formats) > 1:
        parquet = next(f for f in files if _format_of(f) == "parquet")
        csv = next(f for f in files if _format_of(f) == "csv")
        raise DivergenceInputError(f"'{source}' mixes Parquet ('{parquet}') and CSV ('{csv}') files: give one kind.")
    fmt = formats.pop()
    if fmt == "parquet":
        for f in files:
            _check_parquet(f)
    return files, fmt


def _check_parquet(path: str) -> None:
    """A file named .parquet that is not one (Parquet starts and ends with ``PAR1``) is refused in
    one line before an engine reads it (Spark answered with a Java stack trace)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(size - 4, 0))
            tail = fh.read(4)
    except OSError as exc:
        raise DivergenceInputError(f"Could not read '{path}': {exc.strerror or exc}.") from None
    if size < 12 or head != b"PAR1" or tail != b"PAR1":
        raise DivergenceInputError(f"Could not read '{path}' as Parquet: it is named as Parquet but is not a Parquet "
                                   "file (it does not start and end with PAR1); give it with the name its kind has "
                                   "(.csv for CSV).")


def _static_prefix(path: str) -> str:
    """The part of a glob before its first wildcard, up to a folder: what it can match under."""
    parts = []
    for part in Path(path).parts:
        if any(ch in part for ch in "*?["):
            break
        parts.append(part)
    return os.path.join(*parts) if parts else "."


def _inside(path: str, root: str) -> bool:
    return path == root or os.path.commonpath([path, root]) == root


def files_under(root: str | os.PathLike, text: str) -> tuple[list[str], str]:
    """The files a path typed by a person names (a file, a folder or a glob; relative to ``root``
    or absolute), each resolved after following every link and checked to lie inside ``root``
    (the data folder a server's owner allows): a path, a ``..`` or a link leading out of it is
    refused in one line that names no file outside it. Returns (files, format)."""
    root_real = os.path.realpath(root)
    text = str(text).strip()
    if not text:
        raise DivergenceInputError("Type the path of a CSV or Parquet file, a folder of them, or a glob.")
    if "\x00" in text:
        raise DivergenceInputError("A path cannot hold a NUL character.")
    if len(text.encode("utf-8", errors="replace")) > 4096 or any(len(part.encode("utf-8", errors="replace")) > 255
                                                                  for part in text.split(os.sep)):
        raise DivergenceInputError("The path is longer than a path can be (4,096 bytes, 255 a name).")
    path = text if os.path.isabs(text) else os.path.join(root_real, text)
    refused = DivergenceInputError(f"'{text}' is outside the data folder: local paths are read only under "
                                   f"{root_real} (set by the server's owner).")
    if not _inside(os.path.realpath(_static_prefix(os.path.normpath(path))), root_real):
        raise refused
    files, fmt = resolve_files(path)
    real = [os.path.realpath(f) for f in files]
    if not all(_inside(f, root_real) for f in real):  # a link inside pointing out, or a glob's ../
        raise refused
    return real, fmt


#: the words pandas reads as a boolean (``read_csv``'s defaults): a column of them only is BOOLEAN, as in
#: pandas; ``yes``/``no``, ``t``/``f``, ``1``/``0`` stay what pandas makes of them (text, numbers)
_PANDAS_BOOLEANS = ("True", "TRUE", "true", "False", "FALSE", "false")
#: the rows a text column is read on to decide it is boolean (DuckDB's own sniffer reads as many)
_BOOLEAN_SAMPLE = 20_480


#: the stand-in name of a CSV column whose header is blank (spaces), while DuckDB reads it
_BLANK = "__divergence_blank_column_"


def _reader(files: Sequence[str], fmt: str, union: bool = False, dialect: CsvDialect | None = None,
            booleans: Sequence[str] = ()) -> str:
    listed = "[" + ", ".join(DUCKDB.string(f) for f in files) + "]"
    extra = ", union_by_name=true" if union else ""
    names = pandas_names(dialect.header) if fmt != "parquet" and dialect is not None and dialect.header else []
    # DuckDB refuses a blank name in `names` (pandas reads a header of spaces as it is): such a column
    # is read under a stand-in name and renamed in a projection over the reader
    blank = {n: f"{_BLANK}{i}" for i, n in enumerate(names) if not n.strip()}
    if booleans:
        extra += ", types={" + ", ".join(f"{DUCKDB.string(blank.get(c, c))}: 'BOOLEAN'" for c in booleans) + "}"
    if fmt == "parquet":
        return f"read_parquet({listed}{extra})"
    na = "[" + ", ".join(DUCKDB.string(v) for v in _pandas_na_values()) + "]"
    if dialect is not None:  # what divergence.data.io found, so the file reads as it does in pandas
        extra += f", delim={DUCKDB.string(dialect.delimiter)}, quote='\"'"
        if dialect.decimal != ".":
            extra += f", decimal_separator={DUCKDB.string(dialect.decimal)}"
        if names:
            extra += ", names=[" + ", ".join(DUCKDB.string(blank.get(n, n)) for n in names) + "]"
    reader = (f"read_csv({listed}, header=true, nullstr={na}, "
              f"auto_type_candidates=['BIGINT', 'DOUBLE', 'VARCHAR']{extra})")
    if not blank:
        return reader
    columns = ", ".join(f"{DUCKDB.ident(blank[n])} AS {DUCKDB.ident(n)}" if n in blank else DUCKDB.ident(n)
                        for n in names)
    return f"(SELECT {columns} FROM {reader})"


def _transcode(path: str, encoding: str, workdir: str) -> str:
    """A UTF-8 copy of a text file in another encoding (DuckDB reads UTF-8), streamed."""
    import codecs

    fd, out = tempfile.mkstemp(prefix="divergence-utf8-", suffix=".csv", dir=workdir)
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    with open_data(path) as src, os.fdopen(fd, "wb") as dst:  # decompressed within the reader's limits
        while True:
            chunk = src.read(1 << 22)
            text = decoder.decode(chunk, final=not chunk)
            dst.write(text.lstrip("\ufeff").encode("utf-8") if dst.tell() == 0 else text.encode("utf-8"))
            if not chunk:
                break
    return out


def _is_utf8(path: str) -> bool:
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open_data(path) as fh:  # decompressed within the reader's limits
            while True:
                chunk = fh.read(1 << 22)
                decoder.decode(chunk, final=not chunk)
                if not chunk:
                    return True
    except UnicodeDecodeError:
        return False


def prepare_csv(files: Sequence[str], workdir: str | None) -> tuple[list[str], CsvDialect, list[str]]:
    """The files as DuckDB should read them, their dialect (as :func:`divergence.data.io.load_table`
    finds it: delimiter, decimal mark, header) and notes. A file not in UTF-8 is read through a
    UTF-8 copy in ``workdir``; files of one source must share the delimiter and the header."""
    dialects = sniff_files(files)
    first = dialects[0]
    out, encodings = [], set()
    for f, d in zip(files, dialects):
        enc = d.encoding
        if enc == "utf-8" and not _is_utf8(f):
            enc = "cp1252"
        if enc in ("utf-8", "utf-8-sig"):
            out.append(f)
            encodings.add("utf-8" if enc == "utf-8" else enc)
            continue
        if workdir is None:
            raise DivergenceInputError(f"'{f}' is not UTF-8 ({enc}); it needs a working folder to be read.")
        try:
            out.append(_transcode(f, enc, workdir))
        except UnicodeDecodeError:
            enc = "latin-1"
            out.append(_transcode(f, enc, workdir))
        encodings.add(enc)
    label = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"
    enc = next((e for e in ("utf-16", "latin-1", "cp1252") if e in encodings), "utf-8")
    dialect = CsvDialect(first.delimiter, enc, first.decimal, first.header)
    notes = dialect_notes(dialect, label)
    dup = duplicate_note(first.header)
    if dup:
        notes.append(dup)
    return out, dialect, notes


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _schema(con, files: Sequence[str], fmt: str, dialect: CsvDialect | None = None,
            shown: Sequence[str] | None = None) -> tuple[str, list[Column]]:
    """The FROM clause and the columns; every file must have the same columns, of compatible types."""
    import duckdb

    described = []
    names = dict(zip(files, shown or files))
    for f in files if len(files) > 1 else files[:1]:
        try:
            rows = con.execute(f"DESCRIBE SELECT * FROM {_reader([f], fmt, dialect=dialect)}").fetchall()
        except duckdb.Error as exc:
            raise DivergenceInputError(f"Could not read '{names[f]}' as {fmt.upper() if fmt == 'csv' else 'Parquet'}: "
                                       f"{_first_line(exc)}") from None
        described.append((names[f], [(r[0], r[1]) for r in rows]))
    first, ref = described[0]
    ref_types = dict(ref)
    union = False
    for f, cols in described[1:]:
        types = dict(cols)
        for name, _ in ref:
            if name not in types:
                raise DivergenceInputError(f"Column '{name}' is in '{first}' but missing from '{f}': every file "
                                           "must have the same columns.")
        for name, _ in cols:
            if name not in ref_types:
                raise DivergenceInputError(f"Column '{name}' is in '{f}' but not in '{first}': every file "
                                           "must have the same columns.")
        for name, t in cols:
            a, b = kind_of(ref_types[name]), kind_of(t)
            numeric = {"int", "float", "decimal"}
            if a != b and not (a in numeric and b in numeric):
                raise DivergenceInputError(f"Column '{name}' is {ref_types[name]} in '{first}' but {t} in '{f}'.")
            union = union or t != ref_types[name] or [c for c, _ in cols] != [c for c, _ in ref]
    source = _reader(files, fmt, union, dialect)
    booleans = _boolean_columns(con, source, ref) if fmt == "csv" else []
    if booleans:
        source = _reader(files, fmt, union, dialect, booleans)
    if union or booleans:
        rows = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        ref = [(r[0], r[1]) for r in rows]
    return source, [Column(name, kind_of(t), t) for name, t in ref]


def _boolean_columns(con, source: str, columns: Sequence[tuple[str, str]]) -> list[str]:
    """The text columns whose values (on the first rows) are all pandas' boolean words: read as
    BOOLEAN, so an item reads ``flag=True`` with either engine (``yes``/``no`` stay text)."""
    text = [name for name, t in columns if str(t).upper() == "VARCHAR"]
    if not text:
        return []
    words = "[" + ", ".join(DUCKDB.string(w) for w in _PANDAS_BOOLEANS) + "]"
    checks = ", ".join(f"bool_and({DUCKDB.ident(c)} IS NULL OR list_contains({words}, {DUCKDB.ident(c)})) AND "
                       f"count({DUCKDB.ident(c)}) > 0" for c in text)
    import duckdb

    try:
        row = con.execute(f"SELECT {checks} FROM (SELECT * FROM {source} LIMIT {_BOOLEAN_SAMPLE})").fetchall()[0]
    except duckdb.Error:  # a file DuckDB cannot read: the scan's own read says why
        return []
    return [c for c, ok in zip(text, row) if ok]


class DuckDBBackend:
    """Runs the scan's SQL on one DuckDB connection."""

    name = "duckdb"
    dialect = DUCKDB

    def __init__(self, con, source: str, columns: list[Column], label: str, memory_bytes: int,
                 notes: Sequence[str] = ()):
        self.con = con
        self.source = source
        self.columns = columns
        self.label = label
        self.memory_bytes = memory_bytes
        #: what the reader decided (delimiter, encoding, renamed columns), for the result's notes
        self.notes = list(notes)

    def _errors(self, exc: BaseException) -> DivergenceInputError | None:
        import duckdb

        if isinstance(exc, duckdb.OutOfMemoryException):
            return DivergenceInputError(f"DuckDB ran out of memory on '{self.label}' ({_first_line(exc)}); "
                                        "raise memory_limit (--memory-limit).")
        if isinstance(exc, (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException)):
            return DivergenceInputError(f"DuckDB could not read '{self.label}': {_first_line(exc)}")
        if isinstance(exc, duckdb.DataError):  # out of range: a sum, a square or a moment past ±1.8e308
            return DivergenceInputError(f"DuckDB could not compute on '{self.label}' ({_first_line(exc)}): a value "
                                        "is too large to compute with (near ±1e308, its square overflows); scale "
                                        "such columns down (for example to thousands) and scan again.")
        return None

    def release(self) -> None:
        """Close the connection once the grouped rows are read: DuckDB's memory (its buffers, up to
        ``memory_limit``) is given back before the miner needs its own."""
        self.con.close()

    def fetch(self, sql: str) -> pa.Table:
        import duckdb

        try:
            return self.con.sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            err = self._errors(exc)
            if err is None:
                raise
            raise err from None

    def stream(self, sql: str) -> Iterator[pa.RecordBatch]:
        import duckdb

        try:
            yield from self.con.sql(sql).to_arrow_reader(BATCH_ROWS)
        except duckdb.Error as exc:
            err = self._errors(exc)
            if err is None:
                raise
            raise err from None

    def order_statistics(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        listed = "[" + ", ".join(DUCKDB.double(x) for x in levels) + "]"
        return self.fetch(f"SELECT quantile_disc({number_sql}, {listed}) FROM {self.source}").column(0)[0].as_py()

    def approx_quantiles(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        listed = "[" + ", ".join(f"CAST({DUCKDB.double(x)} AS FLOAT)" for x in levels) + "]"
        return self.fetch(f"SELECT approx_quantile({number_sql}, {listed}) FROM {self.source}").column(0)[0].as_py()

    def exact_quantiles_affordable(self, n_values: int) -> bool:
        # DuckDB's exact quantile keeps every value in memory (about 16 bytes each)
        return 16 * n_values <= self.memory_bytes // 4


def _bytes(limit: str) -> int:
    text = limit.strip().upper().replace("IB", "B")
    for unit, mult in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)):
        if text.endswith(unit):
            try:
                return int(float(text[: -len(unit)]) * mult)
            except ValueError:
                break
    raise DivergenceInputError(f"memory_limit must read like '4GB' or '512MB'; got {limit!r}.")


def duckdb_backend(source, con, *, label: str | None = None, workdir: str | None = None) -> DuckDBBackend:
    """A backend over a file, folder, glob, list of files, or pandas DataFrame. CSV files are
    read as :func:`divergence.data.io.load_table` reads them (a copy in ``workdir`` for a file not
    in UTF-8)."""
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    try:
        memory = _bytes(str(limit))
    except DivergenceInputError:
        memory = 1 << 30
    if isinstance(source, pd.DataFrame):
        con.register("__divergence_frame", source)
        cols = con.execute("DESCRIBE SELECT * FROM __divergence_frame").fetchall()
        return DuckDBBackend(con, "__divergence_frame", [Column(r[0], kind_of(r[1]), r[1]) for r in cols],
                             label or "the DataFrame", memory)
    files, fmt = resolve_files(source)
    notes: list[str] = []
    dialect = None
    read = list(files)
    if fmt == "csv":
        read, dialect, notes = prepare_csv(files, workdir)
    sql, columns = _schema(con, read, fmt, dialect, files)
    if label is None and isinstance(source, (list, tuple)):
        label = str(source[0]) if len(source) == 1 else f"{source[0]} and {len(source) - 1} more"
    return DuckDBBackend(con, sql, columns, label or str(source), memory, notes)


#: the characters of a text value a preview keeps
PREVIEW_CHARS = 200
#: the most bytes a row of a Parquet file may take once decoded for a preview to read it (DuckDB
#: decodes 2,048 rows at a time: 64 KB a row is 128 MB)
PREVIEW_ROW_BYTES = 64 << 10


def _check_preview_rows(source) -> None:
    """Refuse, from the Parquet footer and dictionaries, a file whose rows are megabytes once decoded
    (a few KB on disk can hold that: one value repeated through a dictionary), before DuckDB decodes
    a batch of them in the server's process."""
    if isinstance(source, pd.DataFrame):
        return
    from ..data.io import estimate_table, size_text

    files, fmt = resolve_files(source)
    if fmt != "parquet":
        return
    for f in files[:8]:
        est = estimate_table(f)
        if est is not None and est.rows and est.memory / est.rows > PREVIEW_ROW_BYTES:
            raise DivergenceInputError(
                f"The rows of '{f}' take about {size_text(est.memory / est.rows)} each once decoded (megabyte values, "
                f"or one value repeated through a dictionary): too large to read here. Drop or shorten that column.")


def preview_source(source, *, rows: int = 200, memory_limit: str | None = None) -> tuple[pd.DataFrame, int]:
    """The first ``rows`` rows of a file, folder or glob and its total row count, without
    reading it into memory: what a page shows (columns, types, role guesses) before
    :func:`scan_duckdb` runs on the same path. Bad paths raise DivergenceInputError."""
    import duckdb

    _check_preview_rows(source)
    con = duckdb.connect(config={"memory_limit": memory_limit or _default_memory_limit()})
    tmp = tempfile.mkdtemp(prefix="divergence-duckdb-")
    try:
        con.execute("SET disabled_optimizers = 'statistics_propagation,filter_pushdown'")
        con.execute("SET enable_progress_bar = false")
        backend = duckdb_backend(source, con, workdir=tmp)
        # text cut to what a preview shows: a file of a few KB can hold megabyte values (a dictionary
        # repeats one on every row) that would otherwise come whole into this process
        d = DUCKDB
        cells = ", ".join(f"left({d.ident(c.name)}, {PREVIEW_CHARS}) AS {d.ident(c.name)}" if c.kind == "text"
                          else d.ident(c.name) for c in backend.columns)
        head = backend.fetch(f"SELECT {cells} FROM {backend.source} LIMIT {int(rows)}").to_pandas()
        total = int(backend.fetch(f"SELECT COUNT(*) FROM {backend.source}").column(0)[0].as_py())
        return head, total
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


def scan_duckdb(
    source,
    settings: Settings | None = None,
    *,
    memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | os.PathLike | None = None,
    threads: int | None = None,
    **kwargs,
) -> SliceTable:
    """Every slice with support >= ``min_support``, binned, measured and compressed by DuckDB.

    Parameters
    ----------
    source : a CSV or Parquet file, a folder of them (searched recursively), a glob such as
        ``"data/*.parquet"``, a list of files, or a pandas DataFrame. Every file must have the
        same columns; a number column may be integer in one file and float in another.
    memory_limit : DuckDB's memory limit, e.g. ``"4GB"`` (default: half the machine's
        memory, at most 4 GB); beyond it DuckDB spills to ``temp_directory``.
    temp_directory : where DuckDB spills (default: a new temporary folder, removed after).
    threads : DuckDB's worker threads (default: one per core).
    settings, **kwargs : the settings and keyword arguments of :func:`divergence.scan` (roles,
        ``attributes``, ``bins``, ``quantile_bins``, ``binning``, ``min_support``, ``max_length``,
        the statistics' options; not ``holdout``), plus ``quantiles``: ``"exact"`` (numpy's
        linear interpolation, from DuckDB's exact order statistics; keeps the column's values
        in memory), ``"approx"`` (DuckDB's approximate quantiles, said in the notes) or
        ``"auto"`` (exact when a column's values fit in a quarter of the memory limit).

    The result holds no rows: bootstrap intervals and median baselines (``abs_error``) are
    not computed, ``table.assessment.intervals`` is ``"analytic"`` and the notes say so.
    """
    settings, run = engine_settings(settings, dict(kwargs))
    run = with_given_rows(run, settings.replication)
    return _on_duckdb(source, memory_limit, temp_directory, threads, lambda backend: scan_engine(backend, settings, **run))


def mine_duckdb(
    source,
    settings: Settings | None = None,
    *,
    memory_limit: str | None = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | os.PathLike | None = None,
    threads: int | None = None,
    **kwargs,
) -> SliceTable:
    """The mining phase of :func:`scan_duckdb`, as :func:`divergence.mine` is :func:`divergence.scan`'s:
    ``divergence.assess(mine_duckdb(...))`` is ``scan_duckdb(...)``; ``replicate``, when given, is kept in
    the table for :func:`divergence.assess`. Arguments as in :func:`scan_duckdb` (the statistics' only at
    :func:`divergence.assess`)."""
    settings, run = engine_settings(settings, dict(kwargs))
    if "exploratory" in run:
        raise DivergenceInputError("exploratory is said when the mined table is assessed: divergence.assess(table, "
                                   "exploratory=...).")
    run = with_given_rows(run, settings.replication)
    return _on_duckdb(source, memory_limit, temp_directory, threads, lambda backend: mine_engine(backend, settings, **run))


def _on_duckdb(source, memory_limit: str | None, temp_directory, threads: int | None,
               call: Callable[[Backend], SliceTable]) -> SliceTable:
    """``call`` on the DuckDB backend of ``source``, in a connection of its own (closed after, its
    spill folder removed when it made one)."""
    try:
        import duckdb
    except ImportError as exc:  # pragma: no cover - duckdb is pinned in requirements.txt
        raise DivergenceInputError("The DuckDB engine needs the duckdb package (pip install duckdb).") from exc
    own_tmp = temp_directory is None
    tmp = tempfile.mkdtemp(prefix="divergence-duckdb-") if own_tmp else os.fspath(temp_directory)
    limit = memory_limit or _default_memory_limit()
    _bytes(limit)
    con = duckdb.connect(config={"memory_limit": limit, "temp_directory": tmp,
                                 "preserve_insertion_order": False,
                                 **({"threads": int(threads)} if threads else {})})
    try:
        # DuckDB 2.0 trusts Parquet min/max statistics, which leave NaN out: with these two
        # optimizers on, isnan() on a column holding NaN folds to false and NaN is binned
        # as the largest number (checked in tests/engines/test_duckdb_engine.py)
        con.execute("SET disabled_optimizers = 'statistics_propagation,filter_pushdown'")
        con.execute("SET enable_progress_bar = false")  # a library prints nothing
        return call(duckdb_backend(source, con, workdir=tmp))
    finally:
        con.close()
        if own_tmp:
            shutil.rmtree(tmp, ignore_errors=True)

"""scan_spark(): the heavy step in Spark, for data on a cluster.

Spark bins the attributes, computes the outcomes and groups identical discretized rows with
their tallies (the SQL of :mod:`divergence.engines.sql`); only the grouped rows reach the driver,
where the in-memory miner takes over. pyspark is optional: ``pip install -r
requirements-spark.txt`` (it needs Java 17 or later).

Quantile bins: Spark's ``percentile_approx`` by default (approximate, said in the result's
notes), or ``quantiles="exact"`` (exact order statistics by ``percentile_disc``, then numpy's
interpolation: the pandas edges, at the cost of a count per distinct value).
"""
from __future__ import annotations

import contextlib
import itertools
import os
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import DivergenceInputError
from ..prepare.replication_rows import with_given_rows
from ..settings import Settings
from ..table import SliceTable
from .engine_scan import engine_settings, scan_engine
from .sql import SPARK, Column, kind_of

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["scan_spark", "read_spark", "spark_session", "SPARK_ACCURACY"]

#: accuracy of percentile_approx (relative rank error 1 / accuracy)
SPARK_ACCURACY = 10_000
_views = itertools.count()


def _pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import DataFrame, SparkSession
    except ImportError:
        raise DivergenceInputError(
            "The Spark engine needs pyspark: pip install -r requirements-spark.txt (and Java 17 or later)."
        ) from None
    return DataFrame, SparkSession


@contextlib.contextmanager
def _pandas_notice_off():
    """pyspark 4 warns that it "does not yet fully support pandas >= 3.0.0" (when a session starts). The
    scan takes Spark's results as Arrow (``toArrow``), never through pyspark's pandas conversion, and gives
    the pandas scan's table in every test (tests/engines/test_spark_engine.py): the warning would only alarm."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        yield


def spark_session(master: str = "local[*]", *, app_name: str = "divergence", config: dict | None = None):
    """A Spark session for a scan: the running one if any, else a new one on ``master``
    (``local[*]``: this machine's cores), UI off and bound to 127.0.0.1 when local."""
    _, SparkSession = _pyspark()
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": str(max(2, 2 * (os.cpu_count() or 1)))}
    if master.startswith("local"):
        settings.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    settings.update(config or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with _pandas_notice_off():  # said while the session starts (pyspark imports its testing helpers)
            session = builder.getOrCreate()
    except Exception as exc:  # Java missing or unusable: say so in one line
        raise DivergenceInputError(f"Could not start Spark on {master!r}: {str(exc).strip().splitlines()[0]}") from None
    # the scan says every failure in one line (a file it cannot read, a type it cannot cast); Spark's own
    # log would print a Java stack trace for each before it (a session given to scan_spark keeps its level)
    session.sparkContext.setLogLevel("OFF")
    return session


class SparkBackend:
    """Runs the scan's SQL as Spark SQL on a temporary view."""

    name = "spark"
    dialect = SPARK

    def __init__(self, spark, view: str, columns: list[Column], label: str):
        self.spark = spark
        self.source = SPARK.ident(view)
        self.columns = columns
        self.label = label

    def _df(self, sql: str):
        return self.spark.sql(sql)

    def fetch(self, sql: str) -> pa.Table:
        with _pandas_notice_off():
            return _guard(lambda: self._df(sql).toArrow(), self.label)

    def stream(self, sql: str) -> Iterator[pa.RecordBatch]:
        # the grouped rows are few (that is the point): collect them as Arrow batches
        table = self.fetch(sql)
        yield from table.to_batches()

    def order_statistics(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        parts = ", ".join(f"percentile_disc({SPARK.double(x)}) WITHIN GROUP (ORDER BY {number_sql})" for x in levels)
        row = self.fetch(f"SELECT {parts} FROM {self.source}").to_pylist()[0]
        return [float(v) for v in row.values()]

    def approx_quantiles(self, number_sql: str, levels: Sequence[float]) -> list[float]:
        listed = ", ".join(SPARK.double(x) for x in levels)
        row = self.fetch(f"SELECT percentile_approx({number_sql}, array({listed}), {SPARK_ACCURACY}) AS q "
                         f"FROM {self.source}").column(0)[0].as_py()
        return [float(v) for v in row]

    def exact_quantiles_affordable(self, n_values: int) -> bool:
        return False  # Spark: approximate unless asked (quantiles="exact")


def _guard(run, label: str):
    try:
        return run()
    except Exception as exc:
        name = type(exc).__name__
        if name in ("AnalysisException", "IllegalArgumentException", "SparkRuntimeException",
                    "NumberFormatException", "ArithmeticException") or "FileNotFound" in str(exc)[:500]:
            raise DivergenceInputError(f"Spark could not read {label}: {str(exc).strip().splitlines()[0]}") from None
        raise


def read_spark(source: str, *, master: str = "local[*]", spark=None):
    """A Spark DataFrame of a CSV or Parquet file, folder or glob (the files DuckDB would
    read), or of a table or view in the session's catalog when no such file exists."""
    from .duckdb_engine import resolve_files

    session = spark or spark_session(master)
    text = os.fspath(source)
    if not (os.path.exists(text) or any(ch in text for ch in "*?[")):
        try:
            return session.table(text)
        except Exception:
            raise DivergenceInputError(f"File, folder or table '{text}' does not exist.") from None
    files, fmt = resolve_files(text)
    if fmt == "parquet":
        try:
            return _guard(lambda: session.read.parquet(*files), f"'{text}'")
        except DivergenceInputError as exc:
            raise DivergenceInputError(_unreadable_columns(files, str(exc), text) or str(exc)) from None
    return _read_csv(session, files, text)


#: Spark's names of the encodings divergence.data.io recognises
_SPARK_ENCODINGS = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "cp1252": "ISO-8859-1",
                    "latin-1": "ISO-8859-1"}


def _has_windows_only_bytes(path: str) -> bool:
    """The file holds a byte in 0x80-0x9F, where windows-1252 (€, Š, curly quotes) and ISO-8859-1
    differ: Spark reads only the second."""
    import re

    pattern = re.compile(rb"[\x80-\x9f]")
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if pattern.search(chunk):
                return True
    return False


def _read_csv(session, files: Sequence[str], label: str):
    """CSV files as pandas and DuckDB read them: the delimiter and encoding sniffed as
    :func:`divergence.data.io.load_table` sniffs them, and the header's names as pandas gives them
    (a repeated name ``g``, ``g.1``; Spark's own would be ``g0``, ``g2``). Windows-1252 text is read as
    ISO-8859-1 (Spark's only single-byte charset), the same where the file has none of the characters
    they differ on; a file that has them, and a decimal comma (Spark would read those numbers as text),
    are refused in words."""
    from ..data.io import pandas_names, sniff_files

    dialects = sniff_files(files)
    dialect = dialects[0]
    for f, d in zip(files, dialects):  # Spark reads every file of a source in one charset
        if _SPARK_ENCODINGS.get(d.encoding, "UTF-8") != _SPARK_ENCODINGS.get(dialect.encoding, "UTF-8"):
            raise DivergenceInputError(
                f"'{f}' is {d.encoding} text and '{files[0]}' {dialect.encoding}: Spark reads the files of one "
                "source in one encoding; save them alike, or scan them with --engine duckdb.")
    if dialect.decimal != ".":
        raise DivergenceInputError(
            f"'{label}' writes numbers with a decimal comma (1,5), which Spark reads as text: scan it with the "
            "default engine or --engine duckdb.")
    if any(d.encoding == "cp1252" and _has_windows_only_bytes(f) for f, d in zip(files, dialects)):
        raise DivergenceInputError(
            f"'{label}' is windows-1252 text with characters Spark cannot decode (such as €): save it as UTF-8, or "
            "scan it with the default engine or --engine duckdb.")
    options = dict(header=True, inferSchema=True, sep=dialect.delimiter,
                   encoding=_SPARK_ENCODINGS.get(dialect.encoding, "UTF-8"))
    if dialect.encoding == "utf-16":
        options["multiLine"] = True  # Spark splits lines of a non-ASCII-compatible encoding only so
    frame = _guard(lambda: session.read.csv(list(files), **options), f"'{label}'")
    if dialect.header and dialect.header_complete and len(dialect.header) == len(frame.columns):
        names = pandas_names(dialect.header)
        if list(frame.columns) != names:
            frame = frame.toDF(*names)
    return frame


def _unreadable_columns(files: Sequence[str], message: str, label: str) -> str | None:
    """The one line for a Parquet type Spark refuses (16-bit floats, nanosecond timestamps, times of
    day), naming the columns that have it, or None when the message is about something else."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tests = []
    if "FLOAT16" in message:
        tests.append(pa.types.is_float16)
    if "NANOS" in message:
        tests.append(lambda t: pa.types.is_timestamp(t) and t.unit == "ns")
    if "TIME_TYPE" in message or "(TIME(" in message:
        tests.append(pa.types.is_time)
    if not tests:
        return None
    found: dict[str, str] = {}
    for f in files[:100]:
        try:
            schema = pq.read_schema(f)
        except Exception:
            continue
        found.update({field.name: str(field.type) for field in schema if any(t(field.type) for t in tests)})
    if not found:
        return None
    named = ", ".join(f"'{c}' ({t})" for c, t in list(found.items())[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return (f"Spark cannot read column{'s' if len(found) > 1 else ''} {named} of '{label}': Spark has no such type "
            "(16-bit floats, nanosecond timestamps and times of day are not read). Scan it with the default engine "
            "or --engine duckdb, or write the column as another type.")




def scan_spark(data, settings: Settings | None = None, *, spark=None, master: str = "local[*]",
               **kwargs) -> SliceTable:
    """Every slice with support >= ``min_support``, binned, measured and compressed by Spark.

    Parameters
    ----------
    data : a Spark DataFrame, or the name of a table or view in the session's catalog.
    spark : the Spark session (default: the active one, else a new one on ``master``).
    master : where a new session runs (``local[*]``: this machine; a cluster URL otherwise).
    settings, **kwargs : the settings and keyword arguments of :func:`divergence.scan` (roles, ``attributes``,
        ``bins``, ``quantile_bins``, ``binning``, ``min_support``, ``max_length``, the
        statistics' options; not ``holdout``), plus ``quantiles``: ``"auto"`` or
        ``"approx"`` (Spark's ``percentile_approx``, relative rank error 1e-4, said in the
        notes) or ``"exact"`` (the pandas edges exactly).

    The result holds no rows: bootstrap intervals and median baselines (``abs_error``) are
    not computed, ``table.assessment.intervals`` is ``"analytic"`` and the notes say so.
    """
    settings, run = engine_settings(settings, dict(kwargs))
    run = with_given_rows(run, settings.replication)
    DataFrame, _ = _pyspark()
    if isinstance(data, str):
        session = spark or spark_session(master)
        try:
            frame = session.table(data)
        except Exception as exc:
            raise DivergenceInputError(f"Spark has no table or view '{data}': {str(exc).strip().splitlines()[0]}") from None
        label = f"table '{data}'"
    elif isinstance(data, DataFrame):
        frame = data
        session = spark or frame.sparkSession
        label = "the Spark DataFrame"
    else:
        raise DivergenceInputError(f"Expected a Spark DataFrame or a table name; got {type(data).__name__}.")
    columns = [Column(f.name, kind_of(f.dataType.simpleString()), f.dataType.simpleString())
               for f in frame.schema.fields]
    names = [c.name for c in columns]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise DivergenceInputError(f"Column name '{dups[0]}' appears more than once.")
    view = f"divergence_scan_{os.getpid()}_{next(_views)}"
    frame.createOrReplaceTempView(view)
    try:
        return scan_engine(SparkBackend(session, view, columns, label), settings, **run)
    finally:
        session.catalog.dropTempView(view)

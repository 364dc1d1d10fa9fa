"""Writing a table as CSV (:func:`write_csv`): Arrow's writer in row blocks on every core, through a
temporary file renamed into place, with text a spreadsheet would run as a formula neutralised
(:func:`formula_safe`). A slice table, a comparison and the dashboard's export write through it."""
from __future__ import annotations

import io
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .atomic_write import write_atomically

__all__ = ["write_csv", "formula_safe", "may_start_a_formula", "FORMULA_START"]


#: the first characters that make a spreadsheet read a text cell as a formula (OWASP's list, with
#: line feed, NUL and the full-width forms some spreadsheets fold to them)
FORMULA_START = "=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20"
_FORMULA = "^[" + "".join(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\x{{{ord(c):x}}}" for c in FORMULA_START) + "]"
#: text that is a plain number ("-5", "+1.5e3") is no formula: it stays as it is
_PLAIN_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
#: the first UTF-8 bytes of :data:`FORMULA_START`'s characters (the full-width forms share 0xEF)
_FIRST_BYTES = np.zeros(256, dtype=bool)
_FIRST_BYTES[[c.encode()[0] for c in FORMULA_START]] = True


def may_start_a_formula(arr) -> bool:
    """Whether any value of a ``pyarrow`` string array starts with a byte some character of
    :data:`FORMULA_START` starts with: read from the array's buffers, a quick screen before the
    regular expressions (a slice table's text never does). False means no value can match."""
    import pyarrow as pa

    data = arr.buffers()[2]
    if len(arr) == 0 or data is None:
        return False
    wide = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets: np.ndarray = np.frombuffer(arr.buffers()[1], dtype=wide)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    starts = offsets[:-1][offsets[1:] > offsets[:-1]]  # the first byte of every non-empty value
    return bool(_FIRST_BYTES[np.frombuffer(data, dtype=np.uint8)[starts]].any())


def formula_safe(table):
    """The ``pyarrow.Table`` with every text cell and column name that a spreadsheet would run as
    a formula (starting with ``= + - @``, a tab, a carriage return, ...; OWASP's CSV injection
    advice) prefixed with an apostrophe, which spreadsheets read as "this is text". Numbers are
    not text and stay numbers (a negative divergence stays -0.08); text that is a plain number
    ("-5") stays too. Only cells that need it change."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def fix(arr):
        if pa.types.is_dictionary(arr.type):
            return pa.DictionaryArray.from_arrays(arr.indices, fix(arr.dictionary))
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or not may_start_a_formula(arr):
            return arr
        bad = pc.and_(pc.match_substring_regex(arr, _FORMULA), pc.invert(pc.match_substring_regex(arr, _PLAIN_NUMBER)))
        if not pc.any(bad).as_py():
            return arr
        return pc.if_else(bad, pc.binary_join_element_wise(pa.scalar("'", arr.type), arr, pa.scalar("", arr.type)), arr)

    plain = re.compile(_PLAIN_NUMBER)
    names = [f"'{n}" if n[:1] and n[:1] in FORMULA_START and not plain.match(n) else n for n in table.column_names]
    columns = []
    for col in table.columns:
        chunks = [fix(c) for c in col.chunks]
        columns.append(pa.chunked_array(chunks, type=chunks[0].type if chunks else col.type))
    return pa.Table.from_arrays(columns, names=names)


def write_csv(frame, path, *, neutralise_formulas: bool = True) -> None:
    """Fast CSV writing (Arrow's writer) of a DataFrame or a ``pyarrow.Table``: shortest
    round-trip floats, NaN as an empty cell. A file path is written through a temporary file
    renamed into place (:func:`divergence.data.atomic_write.write_atomically`): never half a file.
    ``neutralise_formulas`` (default): text cells and column names a spreadsheet would run as a
    formula get a leading apostrophe (:func:`neutralise_formulas`); False writes them as they are."""
    import pyarrow as pa

    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    if neutralise_formulas:
        table = formula_safe(table)
    if isinstance(path, (str, os.PathLike)):
        write_atomically(path, lambda tmp: _write_arrow_csv(table, tmp))
    else:
        _write_arrow_csv(table, path)


#: rows per block a thread formats, and per batch Arrow's writer casts at once: the blocks in flight
#: (one more than the threads) and their casts are what writing adds to memory (Adult's 65,410 x 64
#: table: +7 MiB; +14.5 MiB with blocks of 2,048 rows, +47 MiB with 8,192 rows two in flight per
#: thread), at the same CPU time (blocks of 512 rows cost more)
BLOCK_ROWS = 1_024


def _write_arrow_csv(table, path) -> None:
    import pyarrow.csv as pacsv

    workers = min(_cpus(), max(1, table.num_rows // 20_000))
    if workers == 1:
        pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(batch_size=BLOCK_ROWS))
        return
    # float formatting dominates: format row blocks on every core (Arrow releases the GIL), each
    # block written as soon as it and those before it are done (a few blocks in memory, not the file)

    blocks = max(workers, -(-table.num_rows // BLOCK_ROWS))  # blocks of at most BLOCK_ROWS rows
    ahead = workers + 1  # blocks formatted or waiting to be written: one more than the threads
    bounds = np.linspace(0, table.num_rows, blocks + 1).astype(int)

    def block(i: int) -> io.BytesIO:
        buf = io.BytesIO()
        pacsv.write_csv(table.slice(bounds[i], bounds[i + 1] - bounds[i]), buf,
                        write_options=pacsv.WriteOptions(include_header=i == 0, batch_size=BLOCK_ROWS))
        return buf

    fh = path if hasattr(path, "write") else open(path, "wb")
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: list[Future[io.BytesIO] | None] = [pool.submit(block, i)
                                                         for i in range(min(blocks, ahead))]
            for i in range(blocks):
                done = pending[i]
                assert done is not None
                buf = done.result()
                pending[i] = None  # written: its block is let go
                if i + ahead < blocks:
                    pending.append(pool.submit(block, i + ahead))
                fh.write(buf.getbuffer())
    finally:
        if fh is not path:
            fh.close()


def _cpus() -> int:
    """The CPUs this process may use (``DIVERGENCE_THREADS`` caps them)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    cap = os.environ.get("DIVERGENCE_THREADS")
    return max(1, min(n, int(cap))) if cap and cap.isdigit() else max(1, n)

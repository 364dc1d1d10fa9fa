"""Writing a result table to a file: CSV, or Parquet when the file's name ends in ``.parquet``.

May import: data (io), table.
"""
from __future__ import annotations

import os

__all__ = ["write_table", "is_parquet"]


def is_parquet(path) -> bool:
    """Whether the output's name asks for Parquet (``.parquet``, any case)."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path).lower().endswith(".parquet")


def write_table(frame, path, *, neutralise_formulas: bool = True) -> None:
    """A DataFrame or a ``pyarrow.Table`` to ``path``: Parquet (typed columns, the values as they
    are: no spreadsheet runs a Parquet cell as a formula) when the name ends in ``.parquet``, else
    CSV (:func:`divergence.table.write_csv`). Either way through a temporary file renamed into
    place (:func:`divergence.data.io.write_atomically`): never half a file."""
    if not is_parquet(path):
        from ..table import write_csv

        write_csv(frame, path, neutralise_formulas=neutralise_formulas)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..data.io import write_atomically

    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    write_atomically(path, lambda tmp: pq.write_table(table, tmp))

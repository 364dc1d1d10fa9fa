"""Reading tables from files, with errors that name the file and what is wrong with it."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .errors import DivergenceInputError

__all__ = ["read_table", "PARQUET_SUFFIXES"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV or Parquet file (by its suffix; anything else is read as CSV)."""
    p = Path(path)
    if not p.exists():
        raise DivergenceInputError(f"File '{path}' does not exist.")
    if p.is_dir():
        raise DivergenceInputError(f"'{path}' is a folder, not a CSV or Parquet file.")
    try:
        if p.suffix.lower() in PARQUET_SUFFIXES:
            df = pd.read_parquet(p)
        else:
            df = pd.read_csv(p, low_memory=False)
    except pd.errors.EmptyDataError:
        raise DivergenceInputError(f"File '{path}' is empty.") from None
    except (UnicodeDecodeError, pd.errors.ParserError, ValueError, OSError) as exc:
        kind = "Parquet" if p.suffix.lower() in PARQUET_SUFFIXES else "CSV"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DivergenceInputError(f"Could not read '{path}' as {kind}: {first}") from None
    if len(df) == 0:
        raise DivergenceInputError(f"File '{path}' has a header but no rows.")
    return df

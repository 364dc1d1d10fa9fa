"""Which rows a scan mines and which it confirms on: a split column's rows, a holdout drawn from
the seed, or a second table that must be given (the one rule for scan(), the SQL engines, plans
and the dashboard). Re-measuring the slices there is :mod:`divergence.stats.replication`'s.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from .outcomes import match_label

__all__ = ["ReplicationRows", "split_rows", "split_mask", "split_label", "needs_its_table", "holdout_mask",
           "given_rows", "with_given_rows"]


@dataclass(frozen=True, eq=False)
class ReplicationRows:
    """The rows every slice is measured again on, kept by the preparation for the assessment: a
    holdout's held-out rows, a split column's confirming rows or a second table (one row per query
    for a table of queries), with the words naming them."""

    rows: pd.DataFrame
    #: what the surfaces call them ("held-out 30% of the rows (3,000)", "rows with region in South (812)")
    label: str | None = None
    #: the held-out share, when the rows are a holdout (None: a split's rows or a second table)
    holdout: float | None = None


def split_rows(df: pd.DataFrame, column: str, confirm_values: Sequence[object]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split a table on a split or period column: rows to mine, rows to confirm on (the one rule
    for scan(), plans and the dashboard)."""
    confirm = split_mask(df, column, confirm_values)
    return df.loc[~confirm].reset_index(drop=True), df.loc[confirm].reset_index(drop=True)


def split_mask(df: pd.DataFrame, column: str, confirm_values: Sequence[object]) -> np.ndarray:
    """The rows of ``df`` a split replication confirms on (:func:`split_rows`' rule); a split that
    leaves no rows on one side is refused, naming the column."""
    if column not in df.columns:
        raise DivergenceInputError(f"Split column '{column}' is not in the data.")
    if not len(confirm_values):
        raise DivergenceInputError(f"Choose the values of split column '{column}' to confirm on.")
    # a value matches as text or as a number (2024 matches 2024, 2024.0 and "2024"), as a
    # positive label does: a plan's values read from YAML may be typed otherwise than the column
    wanted = list(confirm_values)
    hits = [v for v in pd.unique(df[column].dropna()) if any(match_label(v, w) for w in wanted)]
    confirm = df[column].isin(hits).to_numpy()
    if confirm.all() or not confirm.any():
        raise DivergenceInputError(
            f"Split column '{column}' leaves no rows to {'mine' if confirm.all() else 'confirm'} on."
        )
    return confirm


def split_label(column: str, confirm_values: Sequence[object], n_confirm: int) -> str:
    """How a split replication is named in the table and on screen."""
    return f"rows with {column} in {', '.join(map(str, confirm_values))} ({n_confirm:,})"


def needs_its_table(replication, replicate) -> None:
    """Refuse a replication on a second file when no second table was given (one message for scan()
    and the SQL engines; the mining phase alone may be given the table later, by assess)."""
    if replication.kind == "file" and replicate is None and replication.rows is None:
        named = f" ({replication.name})" if replication.name else ""
        raise DivergenceInputError(
            f"The replication is on a second file{named}, and no second table was given: pass its rows as "
            "replicate= (on the command line, --replicate FILE), or set the replication to none.")


def given_rows(replication, replicate: pd.DataFrame | None) -> pd.DataFrame | None:
    """The second table a call replicates on: the replication's own rows (a second file's, kept in
    the settings) or ``replicate`` given beside them; both is refused."""
    if replication.kind == "file" and replication.rows is not None:
        if replicate is not None:
            raise DivergenceInputError("Give the second file's rows either in the replication settings or as "
                                       "replicate, not both.")
        return replication.rows
    return replicate


def with_given_rows(run: dict, replication) -> dict:
    """A SQL engine's run keywords with the replication's own rows as ``replicate`` (the engines take
    the second table as a keyword)."""
    replicate = given_rows(replication, run.get("replicate"))
    return dict(run, replicate=replicate) if replicate is not None else run


def holdout_mask(n_rows: int, share: float, seed: int) -> np.ndarray:
    """The rows a ``holdout`` of ``share`` sets aside, drawn from ``seed`` (the replication's own); a share that leaves no
    rows on one side is refused."""
    mask = np.random.default_rng(seed).random(n_rows) < share
    if mask.all() or not mask.any():
        raise DivergenceInputError(f"A holdout of {share:g} leaves no rows on one side of {n_rows}.")
    return mask

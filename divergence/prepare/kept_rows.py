"""The measured data rows a scan keeps beside its tallies (:class:`KeptRows`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .outcomes import Outcome

__all__ = ["KeptRows"]


@dataclass(frozen=True, eq=False)
class KeptRows:
    """The measured rows an in-memory scan keeps, for what the tallies cannot give: bootstrap
    intervals, median baselines, the verdicts' reference models, the rows of a slice typed by hand.
    A scan whose rows stay in a database (DuckDB, Spark) keeps none."""

    #: per row, its item code on each attribute (-1: none): int8 when every attribute has at most 127
    #: items, else int32
    codes: np.ndarray
    #: per metric, in the table's metric order, the outcome's per-row values (None: not kept, as in
    #: a comparison's table of changes)
    outcomes: tuple[Outcome, ...] | None
    #: positions, in the table given to the scan, of the rows measured (None: every row, in order); a
    #: held-out share and the rows that chose tree cut points are not measured
    positions: np.ndarray | None = None
    #: the model's columns on the rows measured, by role (``target``, ``prediction``, ``score``: the values
    #: as the table holds them), for metrics computed on a slice's own rows (``SliceTable.evaluate``)
    model: dict | None = None

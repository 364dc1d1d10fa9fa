"""The budget of a mining request: at most so many slices, so many seconds, so many bytes of
result; progress reports while it runs, and the sentence that says what a cut request holds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

from .errors import DivergenceInputError

if TYPE_CHECKING:  # numpy is not needed to read the limits (the command line's defaults)
    import numpy as np

__all__ = ["MAX_SLICES", "TIME_LIMIT", "MEMORY_LIMIT", "REPORT_EVERY", "Budget", "Overflow", "check_budget",
           "slice_bytes", "budget_message"]

#: default bounds of one scan (2 cores, a few GiB): most slices, seconds of mining, bytes of result
MAX_SLICES = 500_000
TIME_LIMIT = 60.0
MEMORY_LIMIT = 2 << 30
#: seconds between progress reports while mining
REPORT_EVERY = 0.25


@dataclass
class Budget:
    """The bounds of one mining request and whom to tell about its progress."""

    max_slices: int = MAX_SLICES
    time_limit: float | None = TIME_LIMIT
    progress: Callable[[dict], None] | None = None
    start: float = field(default_factory=time.monotonic)
    #: the share of the time limit the current attempt may use
    share: float = 1.0
    _last: float = 0.0

    @property
    def deadline(self) -> float | None:
        return None if self.time_limit is None else self.start + self.share * float(self.time_limit)

    def report(self, slices: int, length: int | None, fraction: float | None, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if force or now - self._last >= REPORT_EVERY:
            self._last = now
            self.progress({"stage": "mining", "slices": int(slices), "length": length,
                           "fraction": None if fraction is None else float(min(max(fraction, 0.0), 1.0))})


def check_budget(max_slices: object, time_limit: object) -> tuple[int, float | None]:
    """The slice and time bounds as numbers, or a clear error."""
    try:
        ms = int(max_slices)  # type: ignore[arg-type]
        ok = ms == max_slices and ms >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DivergenceInputError(f"max_slices must be a positive integer; got {max_slices!r}.")
    if time_limit is not None:
        try:
            tl = float(time_limit)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            tl = float("nan")
        if not tl > 0:
            raise DivergenceInputError(f"time_limit must be a positive number of seconds (or None); got {time_limit!r}.")
        return ms, tl
    return ms, None


def slice_bytes(n_attr: int, n_tallies: int, n_metrics: int) -> int:
    """About how many bytes one slice takes at the peak of a scan written to CSV (codes, tallies,
    every statistic column in the table and its frame, the itemset text built per attribute,
    the CSV writer's copy), to bound the slice count by memory. Fitted on peak memory of raw
    COMPAS scans: about 1.9 KiB a slice with 20 attributes, 2.7 KiB with 44 (two metrics)."""
    return 400 + 35 * n_attr + 8 * n_tallies + 416 * max(n_metrics, 1)


class Overflow(Exception):
    """A run went past the budget: ``why`` is 'slices' or 'time'."""

    def __init__(self, why: str, slices: int, length: int | None, by_length: np.ndarray | None = None):
        super().__init__(why)
        self.why, self.slices, self.length = why, slices, length
        #: itemsets out by length when the run stopped (a run limited to k items puts out at
        #: least as many of each length up to k: the same nodes, in the same order)
        self.by_length = by_length


def budget_message(over: Overflow, complete: int | None, budget: Budget, n_values: np.ndarray,
                   acc: np.ndarray, names: Sequence[str] | None, codes: np.ndarray | None = None) -> str:
    """One line: what would exceed the budget, and the remedy, naming the attributes that drive
    the count (those in the most slices of the complete lengths, else those with most items)."""
    import numpy as np

    what = (f"more than {budget.max_slices:,} slices" if over.why == "slices"
            else f"more than {budget.time_limit:g} seconds of mining")
    n_attr = len(n_values)
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    if codes is not None and len(codes) > 1:
        weight = (codes >= 0).sum(axis=0)
        unit = "slices"
    else:
        weight = np.array([int((acc[offsets[a]:offsets[a + 1], 0] > 0).sum()) for a in range(n_attr)])
        unit = "items"
    top = [a for a in np.argsort(-weight, kind="stable")[:3] if weight[a] > 0]
    drivers = ", ".join(f"'{names[a] if names is not None else a}' ({int(weight[a]):,} {unit})" for a in top)
    remedy = ("raise the support, limit items per slice (max_length), or drop attributes"
              + (f" (the most {unit}: {drivers})" if drivers else ""))
    if complete is None or complete == 0:
        return f"The scan would need {what} even for single items: {remedy}."
    return (f"Complete up to {complete} item{'s' if complete != 1 else ''}; {complete + 1}-item slices would "
            f"exceed the budget ({what}): to see them, {remedy}.")

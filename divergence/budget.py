"""The budget of a mining request: at most so many slices and so much work (both counted, so the
same data and settings give the same table on any machine and under any load), so many bytes of
result, and a time limit as a safety net (a cut by time depends on the machine, and says so);
progress reports while it runs, and the sentence that says what a cut request holds.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # numpy is not needed to read the limits (the command line's defaults)
    import numpy as np

__all__ = ["MAX_SLICES", "MAX_WORK", "TIME_LIMIT", "MEMORY_LIMIT", "REPORT_EVERY", "Budget", "Overflow",
           "slice_bytes", "budget_message", "TIME_CUT", "Progress", "ProgressCallback", "progress_report"]

#: default bounds of one scan (2 cores, a few GiB): most slices, units of mining work (the miner's
#: count of rows x attributes visited: the same on every machine), bytes of result
MAX_SLICES = 500_000
MAX_WORK = 10_000_000_000
#: seconds of the attribute screen and the mining: a safety net only (the work budget bounds a request deterministically); a
#: scan it cuts is said to depend on the machine's speed and load, on every surface
TIME_LIMIT = 600.0
MEMORY_LIMIT = 2 << 30
#: how a note about a cut by the time limit starts (the surfaces that must say it loudly find it)
TIME_CUT = "The time limit"
#: seconds between progress reports while mining
REPORT_EVERY = 0.25


class Progress(TypedDict, total=False):
    """What a long step says as it goes, the one shape every step reports and every surface reads
    (the command line's ``--verbose``, the dashboard's status line): the stage, the slices so far,
    the length mined completely, the share done (None: not known); a step may add its own keys
    (the dashboard's queue: ``ahead``, ``running``)."""

    stage: str
    slices: int | None
    length: int | None
    fraction: float | None


#: whom a long step tells its :class:`Progress`
ProgressCallback = Callable[[Progress], None]


def progress_report(stage: str, slices: int | None = None, length: int | None = None,
                    fraction: float | None = None, **extra: Any) -> Progress:
    """A :class:`Progress` report (a plain dict, so it crosses a process boundary as it is)."""
    return Progress(stage=stage, slices=slices, length=length, fraction=fraction, **extra)  # type: ignore[typeddict-item]


@dataclass
class Budget:
    """The bounds of one mining request and whom to tell about its progress."""

    max_slices: int = MAX_SLICES
    time_limit: float | None = TIME_LIMIT
    progress: ProgressCallback | None = None
    #: units of mining work (None: no work budget)
    max_work: int | None = MAX_WORK
    start: float = field(default_factory=time.monotonic)
    #: what the time limit counts (from ``start``)
    timed: str = "mining"
    #: the share of the time limit and of the work the current attempt may use
    share: float = 1.0
    #: units of work done so far, every attempt of the request included
    work: int = 0
    #: ``work`` when the budget was last checked (at the end of a quota), and how many checks so far
    checked: int = 0
    checks: int = 0
    _last: float = 0.0

    @property
    def deadline(self) -> float | None:
        return None if self.time_limit is None else self.start + self.share * float(self.time_limit)

    @property
    def work_cap(self) -> float | None:
        return None if self.max_work is None else self.share * float(self.max_work)

    def report(self, slices: int, length: int | None, fraction: float | None, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if force or now - self._last >= REPORT_EVERY:
            self._last = now
            self.progress(progress_report("mining", int(slices), length,
                                          None if fraction is None else float(min(max(fraction, 0.0), 1.0))))


def slice_bytes(n_attr: int, n_tallies: int, n_metrics: int) -> int:
    """About how many bytes one slice takes at the peak of a scan written to CSV (codes, tallies,
    every statistic column in the table and its frame, the itemset text built per attribute,
    the CSV writer's copy), to bound the slice count by memory. Fitted on peak memory of raw
    COMPAS scans: about 1.9 KiB a slice with 20 attributes, 2.7 KiB with 44 (two metrics)."""
    return 400 + 35 * n_attr + 8 * n_tallies + 416 * max(n_metrics, 1)


class Overflow(Exception):
    """A run went past the budget: ``why`` is 'slices', 'work' or 'time'."""

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

    if over.why == "slices":
        what = f"more than {budget.max_slices:,} slices"
    elif over.why == "work":
        what = f"more than {budget.max_work:,} units of mining work (max_work)"
    else:
        what = f"more than {budget.time_limit:g} seconds of {budget.timed}"
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
    timed = (f"{TIME_CUT} ({budget.time_limit:g} s, a safety net) cut this scan: unlike the slice and work "
             "budgets it depends on this machine's speed and load, so the same data and settings may give another "
             "table elsewhere or later. " if over.why == "time" else "")
    if timed:
        remedy += ", or raise the time limit (time_limit, --time-limit)"
    if complete is None or complete == 0:
        return f"{timed}The scan would need {what} even for single items: {remedy}."
    return (f"{timed}Complete up to {complete} item{'s' if complete != 1 else ''}; {complete + 1}-item slices "
            f"would exceed the budget ({what}): to see them, {remedy}.")

"""Each slice against the rest of the rows (:class:`DivergenceTest`: the divergence's interval at
any level, whose inversion is the slice's p-value), and the family of tests its p-value is corrected
over (:func:`testing_family`: one per metric, or one for the whole scan).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ..prepare.tallies import metric_tallies
from .stats import RateDifference, adjust_p, corrected_level, mean_difference_test, rest_skew

__all__ = ["DivergenceTest", "TestingFamily", "testing_family", "correct_p", "tested_p"]


class DivergenceTest:
    """A metric's slices against the rest of the rows: the divergence interval at any level.

    The divergence is the slice's outcome minus the whole dataset's; the whole dataset holds
    the slice, so the divergence is the slice-minus-rest difference times the share of the
    defined rows outside the slice, and its interval is that difference's interval times the
    same share (the whole dataset's uncertainty and the overlap both accounted for). 0/1
    outcomes: Newcombe's interval of a difference of rates; real outcomes: the skew-guarded
    Welch interval of :func:`divergence.stats.stats.mean_difference_test` (whose inversion is the
    slice's p-value).
    """

    def __init__(self, table, k: int, m) -> None:
        self._setup(*metric_tallies(table.tallies, k), m, rest_skew(table.tallies, k, m))

    @classmethod
    def from_tallies(cls, n, s, q, m, skew) -> DivergenceTest:
        test = cls.__new__(cls)
        test._setup(n, s, q, m, skew)
        return test

    def _setup(self, n, s, q, m, skew) -> None:
        n0, s0, q0 = n[0], s[0], q[0]
        self.binary = m.binary
        with np.errstate(invalid="ignore", divide="ignore"):
            self.scale = np.where(n0 > 0, 1.0 - n / n0, np.nan)
        # a slice holding every defined row diverges by exactly 0; an empty one is undefined
        self.exact = (n >= n0) & (n > 0)
        self.empty = n <= 0
        if m.binary:
            ones = np.rint(s)
            self.rates = RateDifference(ones, n, ones[0] - ones, n0 - n)
        else:
            self.md = mean_difference_test(n, s, q, n0 - n, s0 - s, q0 - q, skew)

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        if self.binary:
            low, high = self.rates.interval(level)
        else:
            low, high = self.md.interval(level)
        low, high = self.scale * low, self.scale * high
        low = np.where(self.exact, 0.0, np.where(self.empty, np.nan, low))
        high = np.where(self.exact, 0.0, np.where(self.empty, np.nan, high))
        low[0], high[0] = 0.0, 0.0
        return low, high


@dataclasses.dataclass(frozen=True)
class TestingFamily:
    """The multiple-testing family: per metric its slices' tested p-values, the other slices' counted
    alongside them, the q-values of both (this table's first), the corrected level and the family's size."""

    p: dict
    others: dict
    q: dict
    level: dict
    size: dict


def testing_family(names: list[str], cols: dict, family_p: Mapping[str, np.ndarray] | None, alpha: float,
            correction: str, family: str) -> TestingFamily:
    """One family (every slice of every metric) or one per metric; other slices' p-values tested
    alongside these count in the family (after this table's)."""
    p_all = {name: tested_p(cols[f"{name}_p"]) for name in names}
    others = {}
    for name in names:
        o = np.asarray((family_p or {}).get(name, ()), dtype=float)
        others[name] = o[np.isfinite(o)]
    q_all, level, size = correct_p({n: np.concatenate([p_all[n], others[n]]) for n in names}, alpha, correction,
                                  family)
    return TestingFamily(p=p_all, others=others, q=q_all, level=level, size=size)


def tested_p(p: np.ndarray) -> np.ndarray:
    """The p-values of the slices tested (the whole dataset, row 0, is not a test)."""
    p = np.asarray(p, dtype=float).copy()
    if p.size:
        p[0] = np.nan
    return p


def correct_p(p_by_metric: dict, alpha: float, correction: str,
              family: str) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, int]]:
    """Corrected p-values per metric, the corrected confidence level per metric and the size
    of the family each metric's tests were corrected in."""
    q: dict[str, np.ndarray] = {}
    level: dict[str, float] = {}
    size: dict[str, int] = {}
    if not p_by_metric:
        return q, level, size
    if family == "scan":
        names = list(p_by_metric)
        joined = np.concatenate([np.asarray(p_by_metric[n], dtype=float) for n in names])
        adjusted = adjust_p(joined, correction)
        lev = corrected_level(joined, alpha, correction, adjusted)
        m = int(np.isfinite(joined).sum())
        start = 0
        for n in names:
            k = len(p_by_metric[n])
            q[n], level[n], size[n] = adjusted[start:start + k], lev, m
            start += k
        return q, level, size
    for n, p in p_by_metric.items():
        p = np.asarray(p, dtype=float)
        q[n] = adjust_p(p, correction)
        level[n] = corrected_level(p, alpha, correction, q[n])
        size[n] = int(np.isfinite(p).sum())
    return q, level, size


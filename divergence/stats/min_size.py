"""The method's minimum slice size, worked backwards from delta before any slice is looked at
(n_min: a slice's interval narrower than delta), and the rows a delta divergence needs to be found
among the scan's tests (n_power), each with the sentence deriving it; and the support threshold at
which a slice has that many rows.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..errors import DivergenceInputError
from ..table import MinSize
from .stats import MIN_SIZE_POWER, interval_min_size, min_slice_size, z_value

__all__ = ["min_size_derivation", "support_for_min_size", "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]


#: default smallest divergence worth acting on, for a rate
DEFAULT_DELTA_RATE = 0.05
#: default for a real-valued outcome, in units of its standard deviation
DEFAULT_DELTA_SD = 0.2


_BAR_TEXT = {
    "bonferroni": "Bonferroni's bar",
    "holm": "Holm's first step (Holm declares every p at or below it significant)",
    "bh": "Benjamini–Hochberg declares every p at or below it significant, whatever the other slices "
          "(its realised threshold can only be looser)",
}


def min_size_derivation(overall: float, sigma: float, binary: bool, delta: float | None,
                        confidence: float, name: str, *, n_total: int, tests: int = 1,
                        correction: str = "bonferroni", power: float = MIN_SIZE_POWER,
                        skew: float = 0.0) -> MinSize:
    """n_min, the method's minimum slice size, and n_power, the rows a δ divergence needs to be
    found among the scan's tests, each with a sentence saying how (the method's minimum size: docs/statistics.md).

    **n_min** works backwards from delta: the defined-row count from which the interval the table
    shows for the slice (Wilson's for a rate, Student t's for a mean), at ``confidence`` and at the
    whole dataset's value shifted by delta towards the side where that interval is wider, is
    narrower than delta. One number per metric, fixed before any slice is looked at, independent
    of how many slices are tested. A rate's wider side is the one nearer 1/2; a right-skewed real
    outcome (``skew`` above the skew guard's threshold) with a positive mean keeps its coefficient
    of variation, so its slice above is the wider, sigma * (mean + delta) / mean.

    **n_power** answers another question: the rows at which a slice whose outcome truly differs by
    delta is significant at the bar ``alpha / tests`` with probability ``power`` (every correction
    offered passes a p-value at or below that bar), the scan's own test at the slice's side, the
    larger side. It grows with the number of slices tested.
    """
    if delta is None:
        delta = DEFAULT_DELTA_RATE if binary else DEFAULT_DELTA_SD * sigma
        source = ("default: 5 points of rate" if binary
                  else f"default: {DEFAULT_DELTA_SD:g} standard deviations of the outcome")
    else:
        source = "chosen"
    delta = float(delta)
    alpha = 1.0 - float(confidence)
    tests = max(int(tests), 1)
    bar = alpha / tests
    base: dict[str, Any] = dict(delta=delta, confidence=float(confidence), sigma=float(sigma), power=float(power),
                                bar=bar, tests=tests, correction=correction, n_total=int(n_total))
    if sigma == 0 and source != "chosen":
        return MinSize(**base, n_min=1, n_power=1, width_at=float(overall), power_text="",
                       text=f"{name} does not vary over the whole dataset (σ = 0): every slice meets the minimum size.")
    if not (delta > 0 and math.isfinite(delta)):
        raise DivergenceInputError(f"delta for '{name}' must be a positive number; got {delta!r}.")
    if binary and delta >= 1:
        raise DivergenceInputError(f"delta for '{name}' is a difference of rates, below 1; got {delta!r}.")
    if not math.isfinite(delta * delta * 1e6):
        raise DivergenceInputError(f"delta for '{name}' is too large to compute with; got {delta!r}.")
    N = int(n_total)
    where = f"rows where {name} is defined"
    level = f"{float(confidence):.0%}".replace(".0%", "%")
    bar_text = (f"p ≤ α/m = {alpha:g}/{tests:,} = {bar:.2g} (m: the tests the p-values are corrected over; "
                f"{_BAR_TEXT.get(correction, correction)})")
    z = z_value(confidence)
    if binary:
        s = _rate_sizes(overall, delta, confidence, z, bar, N, power, level, where)
    else:
        s = _mean_sizes(overall, sigma, delta, confidence, z, bar, N, power, level, where, skew)
    n_min, n_power, at, closed, sides = s.n_min, s.n_power, s.at, s.closed, s.sides
    width_text, closed_text, test_text = s.width_text, s.closed_text, s.test_text
    text = (f"n_min = {n_min:,} {where}: from that many, {width_text} is narrower than δ = {delta:.4g} ({source}); "
            f"{closed_text}. Fixed before any slice is looked at, whatever the number of slices tested. A smaller "
            "slice is still shown with its interval: significant, it is a finding marked indicative; not "
            "significant, it is too small to tell."
            + ("" if n_min <= N else f" No slice here has that many ({N:,} {where} in all)."))
    lead = f"To be found among the m = {tests:,} tests at {power:.0%} power, a divergence of δ = {delta:.4g} "
    if n_power is None:
        power_text = (lead + f"would need more than the {N:,} {where} (the bar: {bar_text}; the test: {test_text}).")
    else:
        power_text = (lead + f"needs n_power = {n_power:,} {where}. The bar: {bar_text}. The test: {test_text}; the "
                      "divergence is (1 − n/N) times the slice-minus-rest difference. It grows with the slices tested.")
    return MinSize(**base, n_min=int(n_min), n_power=int(n_power) if n_power is not None else None,
                   width_at=float(at), closed_form=float(closed), sides=sides, text=text, power_text=power_text)


@dataclasses.dataclass(frozen=True)
class _Sizes:
    """n_min and n_power of one kind of outcome, with the parts of the sentences deriving them."""

    n_min: int
    n_power: int | None
    at: float
    closed: float
    sides: dict
    width_text: str
    closed_text: str
    test_text: str


def _rate_sizes(overall: float, delta: float, confidence: float, z: float, bar: float, N: int, power: float,
                level: str, where: str) -> _Sizes:
    """A rate's sizes: Wilson's interval at the shifted rate nearer 1/2, Fisher's test's power."""
    # the wider side: the shifted rate nearer 1/2 (a side beyond 0 or 1 is impossible)
    shifted = [r for r in (overall + delta, overall - delta) if 0.0 <= r <= 1.0] or [min(max(overall, 0.0), 1.0)]
    at = max(shifted, key=lambda r: r * (1.0 - r))
    n_min = interval_min_size(delta, confidence, binary=True, rate=at)
    closed = (2.0 * z) ** 2 * at * (1.0 - at) / delta ** 2
    width_text = (f"the {level} Wilson interval of a slice at the whole dataset's rate {overall:.4g} shifted by δ "
                  f"towards the wider side ({at:.4g})")
    closed_text = f"(2z)²·p(1 − p)/δ² = {closed:,.0f}, the normal approximation"
    sides = {}
    for side, sign in (("above", 1.0), ("below", -1.0)):
        sides[side] = min_slice_size(sign * delta, bar, N, binary=True, overall=overall, power=power)
    found = [v for v in sides.values() if v is not None]
    n_power = max(found) if found else None

    def _side(side, sign):
        rate = overall + sign * delta
        if not 0.0 <= rate <= 1.0:
            return f"{side} impossible (a rate of {rate:.3g})"
        v = sides[side]
        return (f"{side} at the slice's rate p {'+' if sign > 0 else '−'} δ = {rate:.3g}: "
                + (f"{v:,} rows" if v is not None else "no slice of these rows"))

    test_text = ("Fisher's exact test of the slice against the rest of the rows, its power exact given the "
                 "whole dataset's events, at the slice's side (" + "; ".join(
                     _side(s, g) for s, g in (("above", 1.0), ("below", -1.0))) +
                 f"; n_power is the larger), the whole dataset's rate p = {overall:.4g} over {N:,} {where}")
    return _Sizes(n_min, n_power, at, closed, sides, width_text, closed_text, test_text)


def _mean_sizes(overall: float, sigma: float, delta: float, confidence: float, z: float, bar: float, N: int,
                power: float, level: str, where: str, skew: float) -> _Sizes:
    """A real outcome's sizes: Student t's interval (its spread grown above for a right-skewed
    outcome), the skew-guarded Welch test's power."""
    from .stats import SKEW_GUARD

    grows = bool(skew > SKEW_GUARD) and overall > 0 and sigma > 0
    above_sigma = sigma * (overall + delta) / overall if grows else sigma
    at = overall + delta if grows else overall
    n_min = interval_min_size(delta, confidence, binary=False, sigma=above_sigma) if sigma > 0 else 1
    closed = (2.0 * z * above_sigma / delta) ** 2
    width_text = (f"the {level} Student t interval of a slice's mean with the whole dataset's standard deviation "
                  f"σ = {sigma:.4g}" + (f", grown to σ·(μ + δ)/μ = {above_sigma:.4g} on the wider side above "
                                        f"(a right-skewed outcome keeps its spread relative to its mean, "
                                        f"μ = {overall:.4g})" if grows else ""))
    closed_text = f"(2zσ/δ)² = {closed:,.0f}, the normal approximation"
    n_above = (min_slice_size(delta, bar, N, binary=False, sigma=sigma, slice_sigma=above_sigma, power=power)
               if sigma > 0 else 1)
    n_below = min_slice_size(-delta, bar, N, binary=False, sigma=sigma, power=power) if sigma > 0 else 1
    sides = {"above": n_above, "below": n_below}
    found = [v for v in sides.values() if v is not None]
    n_power = (max(found) if len(found) == 2 else None) if sigma > 0 else 1
    spread = (f"σ = {sigma:.4g} (the outcome's standard deviation over the whole dataset) on both sides"
              if not grows else
              f"σ = {sigma:.4g} (the outcome's standard deviation over the whole dataset) for the rest and for a "
              f"slice below (the skew guard's variance), σ·(μ + δ)/μ = {above_sigma:.4g} for a slice above (a "
              f"right-skewed outcome's spread grows with its mean, μ = {overall:.4g}): "
              + "; ".join(f"{side} {v:,} rows" if v is not None else f"{side}: no slice of these rows"
                          for side, v in sides.items()) + "; n_power is the larger")
    test_text = (f"Welch's t-test of the slice against the rest of the rows (skew-guarded), its power from the "
                 f"noncentral t with {spread}, over {N:,} {where}")
    return _Sizes(n_min, n_power, at, closed, sides, width_text, closed_text, test_text)


def support_for_min_size(table, metric: str | None = None, size: str = "n_min") -> float:
    """The support threshold at which a slice with the dataset's share of defined rows has
    ``size`` rows: ``"n_min"`` (its interval narrower than δ: every slice mined is measured
    precisely enough) or ``"n_power"`` (a δ divergence found at 80% power among the scan's tests);
    1 when no slice of these rows reaches it."""
    if size not in ("n_min", "n_power"):
        raise DivergenceInputError(f"size must be 'n_min' or 'n_power'; got {size!r}.")
    info = table.assessment.min_size[table.metric(metric).name]
    n_def = float(table.columns[f"{table.metric(metric).name}_count"][0])
    rows = getattr(info, size)
    if rows is None or rows > n_def:  # no slice of these rows reaches it
        return 1.0
    return float(min(1.0, max(rows / max(n_def, 1.0), 1.0 / table.n_rows)))


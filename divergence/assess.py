"""Worst-slice statistics: intervals, derived minimum size, multiple-testing control, slice
baselines and lift, replication, and one verdict per slice and metric.

The verdict rule (``alpha = 1 - confidence``), applied in this order:

1. ``too small``: the slice's defined rows are below ``n_min`` (its interval is wider than
   the smallest divergence worth acting on).
2. ``noise``: not significant after correction (``q > alpha``, or no test possible).
3. ``not replicated``: replication data was given and the slice did not replicate (same
   direction, and the replication interval at the Bonferroni-corrected level excluding the
   replication's whole-dataset value).
4. Error metrics with a slice baseline (``error``, ``brier``, ``abs_error``,
   ``squared_error``): ``better`` when the error is below the whole dataset's. When it is
   above: ``hard cohort`` if the slice's own baseline error (its best constant prediction)
   is above the whole dataset's baseline error too and the slice's lift over its baseline
   is not reliably below the whole dataset's lift (the bootstrap interval of the lift
   shortfall reaches 0 or below): the cohort is harder to predict, the model no worse
   there. Otherwise ``defect``: the lift is reliably lower, or the baseline is not elevated
   (nothing about the cohort explains the excess error).
5. Other metrics: ``above`` or ``below`` the whole dataset.

The whole dataset (row 0) gets the empty verdict ``""``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Literal, Mapping

import numpy as np
import pandas as pd

from .errors import DivergenceInputError
from .lattice import walk_bootstrap, walk_median_abs, walk_order
from .stats import CORRECTIONS, adjust_p, min_slice_size, t_interval, wilson_interval, z_value

__all__ = ["assess", "support_for_min_size", "VERDICTS", "DEFAULT_DELTA_RATE", "DEFAULT_DELTA_SD"]

VERDICTS = ("too small", "noise", "not replicated", "defect", "hard cohort", "better", "above", "below")
#: default smallest divergence worth acting on, for a rate
DEFAULT_DELTA_RATE = 0.05
#: default for a real-valued outcome, in units of its standard deviation
DEFAULT_DELTA_SD = 0.2
#: bootstrap replicates used to decide defect against hard cohort when none were asked for
VERDICT_BOOTSTRAP = 200
#: cap on rows x replicates held in memory for the bootstrap weights
MAX_BOOTSTRAP_CELLS = 400_000_000

_BASELINE_CODE = {"mean": 1, "median": 2, "majority": 3, "base_rate": 4}
_BASELINE_TEXT = {"mean": "the slice's mean target", "median": "the slice's median target",
                  "majority": "the slice's majority class", "base_rate": "the slice's base rate"}


def _delta_for(delta, name: str):
    if isinstance(delta, Mapping):
        return delta.get(name)
    return delta


def _check(confidence: float, correction: str, bootstrap: int, holdout, top_k) -> None:
    if not (0.5 <= float(confidence) < 1.0):
        raise DivergenceInputError(f"confidence must be in [0.5, 1); got {confidence!r}.")
    if correction not in CORRECTIONS:
        raise DivergenceInputError(f"correction must be one of {', '.join(CORRECTIONS)}; got {correction!r}.")
    if int(bootstrap) < 0 or (0 < int(bootstrap) < 20):
        raise DivergenceInputError(f"bootstrap must be 0 (none) or at least 20 replicates; got {bootstrap!r}.")
    if holdout is not None and not (0.0 < float(holdout) < 1.0):
        raise DivergenceInputError(f"holdout must be a share in (0, 1); got {holdout!r}.")
    if top_k is not None and int(top_k) < 1:
        raise DivergenceInputError(f"top_k must be a positive integer; got {top_k!r}.")


def min_size_derivation(overall: float, sigma: float, binary: bool, delta: float | None,
                        confidence: float, name: str) -> dict:
    """n_min from delta, the confidence and the outcome's spread, with a sentence saying how."""
    if delta is None:
        delta = DEFAULT_DELTA_RATE if binary else DEFAULT_DELTA_SD * sigma
        source = ("default: 5 points of rate" if binary
                  else f"default: {DEFAULT_DELTA_SD:g} standard deviations of the outcome")
    else:
        source = "chosen"
    delta = float(delta)
    if sigma == 0 and source != "chosen":
        return {"delta": delta, "confidence": float(confidence), "z": z_value(confidence), "sigma": 0.0,
                "n_min": 1, "text": f"{name} does not vary over the whole dataset (σ = 0): "
                                    "every slice meets the minimum size."}
    if not (delta > 0 and math.isfinite(delta)):
        raise DivergenceInputError(f"delta for '{name}' must be a positive number; got {delta!r}.")
    z = z_value(confidence)
    n_min = max(1, min_slice_size(delta, confidence, sigma)) if sigma > 0 else 1
    spread = (f"σ = √(p(1−p)) = {sigma:.4g} at the whole-dataset rate p = {overall:.4g}" if binary
              else f"σ = {sigma:.4g}, the outcome's standard deviation over the whole dataset")
    text = (f"To resolve a divergence of δ = {delta:.4g} ({source}) at {confidence:.0%} confidence "
            f"(z = {z:.3f}), with {spread}, a slice needs n_min = ⌈(z·σ/δ)²⌉ = {n_min:,} rows "
            f"where {name} is defined; smaller slices are kept but marked indicative.")
    return {"delta": delta, "confidence": float(confidence), "z": z, "sigma": float(sigma),
            "n_min": int(n_min), "text": text}


def support_for_min_size(table, metric: str | None = None) -> float:
    """The support threshold at which a slice with the dataset's share of defined rows has n_min."""
    info = table.assessment["min_size"][table.metric(metric).name]
    n_def = float(table.columns[f"{table.metric(metric).name}_count"][0])
    return float(min(1.0, max(info["n_min"] / max(n_def, 1.0), 1.0 / table.n_rows)))


def _percentile(x: np.ndarray, q: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(x).sum(axis=1) > 0
        out = np.full(x.shape[0], np.nan)
        if ok.any():
            out[ok] = np.nanpercentile(x[ok], q, axis=1)
    return out


def assess(
    table,
    *,
    delta: float | Mapping[str, float] | None = None,
    confidence: float = 0.95,
    correction: Literal["bh", "bonferroni", "holm"] = "bh",
    bootstrap: int = 0,
    seed: int = 0,
    top_k: int | None = None,
    sort_by: str | None = None,
    replicate: pd.DataFrame | None = None,
    replication_label: str | None = None,
    holdout: float | None = None,
    exploratory: bool = True,
    family_p: Mapping[str, np.ndarray] | None = None,
):
    """Add the worst-slice statistics to a scan result (a new SliceTable; nothing is re-mined).

    Parameters
    ----------
    delta : the smallest divergence worth acting on (one number, or per metric); default
        0.05 for a rate, 0.2 standard deviations for a real-valued outcome.
    confidence : the confidence level of every interval and of the significance bar.
    correction : how p-values are corrected over the slices tested: Benjamini-Hochberg
        q-values (``"bh"``), ``"bonferroni"`` or ``"holm"``.
    bootstrap : replicates for bootstrap intervals (0: none); the slices bootstrapped are
        the ``top_k`` under ``sort_by`` for each metric (all slices when ``top_k`` is None
        and that is cheap), seeded by ``seed``.
    replicate : a second table with the same columns, on which every slice is re-measured.
    holdout : for bookkeeping only (scan() splits the rows); describes the replication.
    exploratory : False for a scan from a pre-registered slice plan.
    family_p : per metric, the p-values of other slices tested alongside these (e.g. the mined
        slices, when a slice typed by hand is measured): the correction and the replication bar
        count them as members of the same family.
    """
    _check(confidence, correction, bootstrap, holdout, top_k)
    alpha = 1.0 - float(confidence)
    cols = dict(table.columns)
    n_items = len(table)
    min_size: dict = {}
    n_tested: dict = {}
    rem = None
    if replicate is not None:
        from .replication import remeasure

        rem = remeasure(table, replicate)
    walk = None
    boot_cells = table.n_rows * max(int(bootstrap), VERDICT_BOOTSTRAP)
    for k, m in enumerate(table.metrics):
        name = m.name
        n = table.tallies[:, 1 + 3 * k]
        s = table.tallies[:, 2 + 3 * k]
        q2 = table.tallies[:, 3 + 3 * k]
        mean = cols[name]
        overall = float(mean[0])
        div = cols[f"{name}_divergence"]
        # ---- analytic intervals
        if m.binary:
            low, high = wilson_interval(np.rint(s), n, confidence)
            sigma = math.sqrt(max(overall * (1.0 - overall), 0.0))
        else:
            low, high = t_interval(n, s, q2, m.shift, confidence)
            n0 = n[0]
            sigma = math.sqrt(max(q2[0] / n0 - (s[0] / n0) ** 2, 0.0))
        cols[f"{name}_ci_low"], cols[f"{name}_ci_high"] = low, high
        cols[f"{name}_divergence_ci_low"], cols[f"{name}_divergence_ci_high"] = low - overall, high - overall
        # ---- multiple testing over every slice with a p-value
        p = cols[f"{name}_p"].copy()
        p[0] = np.nan
        others = np.asarray((family_p or {}).get(name, ()), dtype=float)
        others = others[np.isfinite(others)]
        q_all = adjust_p(np.concatenate([p, others]), correction)
        qv = q_all[:n_items]
        cols[f"{name}_q"] = qv
        n_tested[name] = int(np.isfinite(p).sum()) + int(others.size)
        others_significant = int((q_all[n_items:] <= alpha).sum())
        # ---- minimum size
        info = min_size_derivation(overall, sigma, m.binary, _delta_for(delta, name), confidence, name)
        min_size[name] = info
        meets = n >= info["n_min"]
        cols[f"{name}_meets_min_size"] = meets
        significant = np.isfinite(qv) & (qv <= alpha)
        # ---- slice baseline and lift (error metrics)
        lift_reliably_below = np.zeros(n_items, dtype=bool)
        has_rows = table.outcomes is not None and table.row_codes is not None
        if m.baseline is not None and (has_rows or m.aux >= 0):
            if walk is None and has_rows:
                walk = walk_order(table.parent, table.codes)
            base = _baseline(table, m, walk)
            with np.errstate(invalid="ignore", divide="ignore"):
                lift = np.where(base > 0, 1.0 - mean / np.where(base > 0, base, 1.0),
                                np.where(mean > 0, -np.inf, np.nan))
            lift[~np.isfinite(mean) | np.isnan(base)] = np.nan
            cols[f"{name}_baseline"] = base
            cols[f"{name}_lift"] = lift
            cols[f"{name}_lift_shortfall"] = lift[0] - lift
            # decide defect against hard cohort with a bootstrap of the lift
            candidates = significant & meets & (div > 0)
            candidates[0] = True
            if has_rows and boot_cells <= MAX_BOOTSTRAP_CELLS and candidates[1:].any():
                outcome = table.outcome(name)
                target = np.where(np.isnan(outcome.values), np.nan, outcome.target)
                b = max(int(bootstrap), VERDICT_BOOTSTRAP)
                means, bases = _bootstrap(table, walk, candidates, outcome.values, target,
                                          _BASELINE_CODE[m.baseline], b, seed)
                with np.errstate(invalid="ignore", divide="ignore"):
                    boot_lift = 1.0 - means / bases
                shortfall = boot_lift[0][None, :] - boot_lift
                low_sf = _percentile(shortfall, 100 * alpha / 2)
                lift_reliably_below = candidates & (low_sf > 0)
            elif not has_rows:
                # tallies only (no rows to resample): the point estimate decides
                lift_reliably_below = lift[0] - lift > 0
            lift_reliably_below |= (base == 0) & (mean > 0)
            # without an elevated baseline, nothing about the cohort explains its excess error
            lift_reliably_below |= ~(base > base[0])
        # ---- replication
        replicated = None
        if rem is not None:
            replicated = _replication_columns(cols, name, m, rem, significant, confidence, others_significant)
        # ---- bootstrap intervals for the slices looked at
        cols[f"{name}_boot_low"] = np.full(n_items, np.nan)
        cols[f"{name}_boot_high"] = np.full(n_items, np.nan)
        if bootstrap and table.outcomes is not None and table.row_codes is not None \
                and boot_cells <= MAX_BOOTSTRAP_CELLS:
            wanted = _slices_to_bootstrap(table, cols, name, top_k, sort_by)
            if walk is None:
                walk = walk_order(table.parent, table.codes)
            means, _ = _bootstrap(table, walk, wanted, table.outcome(name).values,
                                  table.outcome(name).values, 0, int(bootstrap), seed)
            cols[f"{name}_boot_low"] = _percentile(means, 100 * alpha / 2)
            cols[f"{name}_boot_high"] = _percentile(means, 100 * (1 - alpha / 2))
        # ---- verdicts
        verdict = np.full(n_items, "", dtype=object)
        rest = np.ones(n_items, dtype=bool)
        rest[0] = False
        verdict[rest & ~meets] = "too small"
        rest &= meets
        verdict[rest & ~significant] = "noise"
        rest &= significant
        if replicated is not None:
            verdict[rest & ~replicated] = "not replicated"
            rest &= replicated
        if m.baseline is not None and f"{name}_lift" in cols:
            verdict[rest & (div < 0)] = "better"
            verdict[rest & (div > 0) & lift_reliably_below] = "defect"
            verdict[rest & (div > 0) & ~lift_reliably_below] = "hard cohort"
        else:
            verdict[rest & (div > 0)] = "above"
            verdict[rest & (div < 0)] = "below"
        verdict[rest & (div == 0)] = "noise"
        cols[f"{name}_verdict"] = verdict
    assessment = {
        "confidence": float(confidence), "correction": correction, "bootstrap": int(bootstrap),
        "seed": int(seed), "top_k": top_k, "n_tested": n_tested, "min_size": min_size,
        "exploratory": bool(exploratory),
        "replication": (replication_label or ("held-out rows" if holdout else "second table"))
        if rem is not None else None,
        "replication_rows": rem.n_rows if rem is not None else None,
        "bootstrap_skipped": bool(bootstrap) and (boot_cells > MAX_BOOTSTRAP_CELLS or table.row_codes is None),
        "intervals": "analytic and bootstrap" if (bootstrap and table.row_codes is not None
                                                  and boot_cells <= MAX_BOOTSTRAP_CELLS) else "analytic",
    }
    return dataclasses.replace(table, columns=cols, assessment=assessment)


def _baseline(table, m, walk) -> np.ndarray:
    """Error of each slice's best constant prediction (NaN where it cannot be computed)."""
    if m.baseline == "median":
        if walk is None:
            return np.full(len(table), np.nan)
        outcome = table.outcome(m.name)
        target = np.where(np.isnan(outcome.values), np.nan, outcome.target)
        _, mad = walk_median_abs(*walk, table.row_codes, target)
        return mad
    k = table.metric_names.index(m.name)
    n = table.tallies[:, 1 + 3 * k]
    ys, yq = table.tallies[:, m.aux], table.tallies[:, m.aux + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = ys / n
        if m.baseline == "mean":
            return np.where(n > 0, np.maximum(yq / n - mu * mu, 0.0), np.nan)
        p = m.target_shift + mu
        if m.baseline == "majority":
            return np.where(n > 0, np.minimum(p, 1.0 - p), np.nan)
        return np.where(n > 0, p * (1.0 - p), np.nan)


def _bootstrap(table, walk, wanted, values, target, kind, replicates, seed):
    rng = np.random.default_rng(seed)
    weights = rng.poisson(1.0, size=(table.n_rows, int(replicates))).astype(np.float32)
    target = np.asarray(target, dtype=float)
    return walk_bootstrap(*walk, table.row_codes, wanted.astype(np.bool_), weights,
                          np.asarray(values, dtype=float), target, kind)


def _slices_to_bootstrap(table, cols, name, top_k, sort_by) -> np.ndarray:
    n_items = len(table)
    wanted = np.zeros(n_items, dtype=bool)
    cost = cols["count"].sum()  # rows visited per replicate if every slice is bootstrapped
    if top_k is None and cost * 200 <= 2e8:
        wanted[:] = True
        return wanted
    k = int(top_k or 1000)
    key = sort_by or (f"{name}_lift_shortfall" if f"{name}_lift_shortfall" in cols else f"{name}_divergence")
    if key not in cols:
        raise DivergenceInputError(f"Cannot sort by '{key}': not a column of the result.")
    values = np.asarray(cols[key], dtype=float)
    order = np.argsort(np.where(np.isnan(values), -np.inf, -values), kind="stable")
    wanted[order[:k]] = True
    wanted[0] = True
    return wanted


def _replication_columns(cols, name, m, rem, significant, confidence, others_significant=0) -> np.ndarray:
    n, s, q = rem.n[name], rem.s[name], rem.q[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n > 0, m.shift + s / np.where(n > 0, n, 1), np.nan)
    overall = value[0]
    # the bar scales with the slices being confirmed: Bonferroni over the significant ones
    n_confirm = max(int(significant[1:].sum()) + int(others_significant), 1)
    level = 1.0 - (1.0 - confidence) / n_confirm
    if m.binary:
        low, high = wilson_interval(np.rint(s), n, level)
    else:
        low, high = t_interval(n, s, q, m.shift, level)
    div = cols[f"{name}_divergence"]
    same_direction = np.sign(value - overall) == np.sign(div)
    excludes = (low > overall) | (high < overall)
    replicated = same_direction & excludes & (n > 0)
    replicated[0] = True
    cols[f"{name}_replicated_value"] = value
    cols[f"{name}_replicated_ci_low"] = low
    cols[f"{name}_replicated_ci_high"] = high
    cols[f"{name}_replicated"] = replicated
    return replicated

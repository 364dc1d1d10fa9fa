"""Outcome-aware cut points (``binning="tree"``): bins of a continuous column that follow the
model's errors, chosen on one part of the rows and tested on the rest.

For each continuous attribute and each metric, a regression tree on the outcome (a 0/1 rate or a
real error) against the column, best split first: the split that most reduces the squared error,
kept while its two sides differ by at least :data:`SPLIT_Z` standard errors and each side holds at
least the minimum bin (:data:`MIN_BIN_SHARE` of the cut rows, and the scan's support), up to
:data:`MAX_TREE_BINS` bins. The metrics' cut points are merged (bins too small merged away).

Honesty: a cut chosen on rows and measured on the same rows is optimistic (the tree put it where
those rows' outcome happened to jump). So the rows are split once, seeded: the **cut rows** (a
share :data:`CUT_SHARE`, at most :data:`CUT_MAX_ROWS`) choose every tree column's cut points and
are then set aside; **every number of the table** (the whole dataset's row, each slice's outcome,
divergence, test, interval, correction, verdict) comes from the other rows, which played no part in
the choice. The notes say how many rows did which.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CUT_SHARE", "CUT_MAX_ROWS", "MIN_BIN_SHARE", "MAX_TREE_BINS", "SPLIT_Z", "tree_edges",
           "cut_mask", "cut_fraction", "cut_note", "CutRows", "choose_cuts", "tree_columns"]

#: share of the rows that choose the cut points (the rest are scanned)
CUT_SHARE = 0.3
#: at most this many rows choose the cut points (enough to place an edge; the rest are scanned)
CUT_MAX_ROWS = 200_000
#: the smallest bin, a share of the cut rows
MIN_BIN_SHARE = 0.05
#: the most bins a tree cuts a column into (bins={col: N} sets another number for one column)
MAX_TREE_BINS = 8
#: a split is kept while its two sides differ by at least this many standard errors
SPLIT_Z = 3.0


@dataclass(frozen=True)
class CutRows:
    """Which rows choose the cut points: a boolean mask over the rows, and the counts."""

    mask: np.ndarray
    n_cut: int
    n_rest: int


def cut_fraction(n_rows: int, share: float = CUT_SHARE) -> float:
    """The share of rows that choose the cuts: ``share``, capped at :data:`CUT_MAX_ROWS` rows."""
    return float(min(share, CUT_MAX_ROWS / max(n_rows, 1)))


def cut_mask(n_rows: int, seed: int, share: float = CUT_SHARE) -> CutRows:
    """The cut rows of a table of ``n_rows`` rows, seeded (independent of the holdout's draw)."""
    rng = np.random.default_rng([int(seed), 23])
    mask = rng.random(n_rows) < cut_fraction(n_rows, share)
    n_cut = int(mask.sum())
    return CutRows(mask=mask, n_cut=n_cut, n_rest=n_rows - n_cut)


def _short_between(lo: float, hi: float) -> float:
    """The number with the fewest significant digits in [lo, hi): the edge between two values."""
    if not hi > lo:
        return float(lo)
    mid = (lo + hi) / 2.0
    for digits in range(1, 18):
        r = float(f"{mid:.{digits}g}")
        if lo <= r < hi:
            return r
    return float(lo)


def _groups(x: np.ndarray, y: np.ndarray):
    """Distinct values of x (sorted) with, per value, its rows and the defined outcomes' n, Σ, Σ²."""
    values, inv = np.unique(x, return_inverse=True)
    c = np.bincount(inv, minlength=values.size).astype(float)
    d = ~np.isnan(y)
    yy = np.where(d, y, 0.0)
    n = np.bincount(inv, weights=d.astype(float), minlength=values.size)
    s = np.bincount(inv, weights=yy, minlength=values.size)
    q = np.bincount(inv, weights=yy * yy, minlength=values.size)
    return values, c, n, s, q


def _best_split(c, n, s, q, a: int, b: int, min_bin: float):
    """The best split of groups [a, b): (gain, z, k) with the left side groups [a, k], or None."""
    cc, nn, ss, qq = (np.cumsum(v[a:b]) for v in (c, n, s, q))
    ct, nt, st, qt = cc[-1], nn[-1], ss[-1], qq[-1]
    if b - a < 2 or nt < 4:
        return None
    cl, nl, sl = cc[:-1], nn[:-1], ss[:-1]
    nr, sr = nt - nl, st - sl
    ok = (cl >= min_bin) & (ct - cl >= min_bin) & (nl >= 2) & (nr >= 2)
    if not ok.any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = sl / nl - sr / nr
        gain = np.where(ok, nl * nr / nt * diff * diff, -np.inf)
    j = int(np.argmax(gain))
    if not np.isfinite(gain[j]) or gain[j] <= 0:
        return None
    sse = qt - st * st / nt - gain[j]  # within-sides sum of squares after the split
    var = max(sse / max(nt - 2, 1), 1e-300)
    z = abs(diff[j]) / math.sqrt(var * (1.0 / nl[j] + 1.0 / nr[j]))
    return float(gain[j]), float(z), a + j


def _one_tree(x: np.ndarray, y: np.ndarray, max_bins: int, min_bin: float) -> list[tuple[float, float]]:
    """Cut points of one outcome: (edge, gain) pairs, best split first."""
    finite = np.isfinite(x)
    values, c, n, s, q = _groups(x[finite], y[finite])
    if values.size < 2:
        return []
    heap: list = []

    def push(a: int, b: int) -> None:
        found = _best_split(c, n, s, q, a, b, min_bin)
        if found is not None and found[1] >= SPLIT_Z:
            heapq.heappush(heap, (-found[0], a, b, found[2]))

    push(0, values.size)
    cuts: list[tuple[float, float]] = []
    while heap and len(cuts) + 1 < max_bins:
        neg_gain, a, b, k = heapq.heappop(heap)
        cuts.append((_short_between(float(values[k]), float(values[k + 1])), -neg_gain))
        push(a, k + 1)
        push(k + 1, b)
    return cuts


def tree_edges(x: np.ndarray, outcomes: Sequence[np.ndarray], *, max_bins: int = MAX_TREE_BINS,
               min_bin: float = 1.0) -> np.ndarray:
    """The cut points of a column ``x`` (NaN: missing) for the outcomes (NaN: undefined): each
    outcome's tree, merged; every bin at least ``min_bin`` rows; at most ``max_bins`` bins."""
    x = np.asarray(x, dtype=float)
    found: dict[float, float] = {}
    for y in outcomes:
        for edge, gain in _one_tree(x, np.asarray(y, dtype=float), max_bins, min_bin):
            found[edge] = max(found.get(edge, 0.0), gain)
    # the strongest cuts first, each kept when every bin it leaves holds min_bin rows
    xs = np.sort(x[np.isfinite(x)])
    kept: list[float] = []
    for edge, _ in sorted(found.items(), key=lambda kv: -kv[1]):
        edge = _readable(edge, xs)
        if edge in kept:
            continue
        trial = np.sort(np.array(kept + [edge]))
        counts = np.diff(np.concatenate([[0], np.searchsorted(xs, trial, side="right"), [xs.size]]))
        if counts.min() >= min_bin and len(trial) + 1 <= max_bins:
            kept = list(trial)
    return np.array(sorted(kept), dtype=float)


#: a cut point is rounded to the fewest significant digits within this share of the column's range
ROUNDING = 0.005


def _readable(edge: float, xs: np.ndarray) -> float:
    """The edge with the fewest significant digits within :data:`ROUNDING` of the column's range
    (0.4207 -> 0.42) and inside the values: labels that read (the rounded edge is the one applied)."""
    tol = ROUNDING * float(xs[-1] - xs[0]) if xs.size else 0.0
    for digits in range(1, 17):
        r = float(f"{edge:.{digits}g}")
        if abs(r - edge) <= tol and xs[0] <= r < xs[-1]:
            return r
    return float(edge)


def tree_columns(df, attributes: Sequence[str], bins: dict, quantile_bins: int) -> list[str]:
    """The attributes a tree cuts: numeric, not dates, without explicit edges or a period, and not
    kept as categories (the rule :func:`divergence.prepare.discretize.discretize` applies)."""
    from ..data.column_kinds import is_date_column, is_numeric
    from .discretize import keeps_as_categories

    out = []
    for name in attributes:
        spec = bins.get(name)
        if spec is not None and not isinstance(spec, (int, np.integer)):
            continue
        series = df[name]
        if is_date_column(series) or not is_numeric(series):
            continue
        distinct = np.asarray(series.dropna().unique(), dtype=float)
        if keeps_as_categories(distinct, int(spec) if spec is not None else int(quantile_bins),
                               spec_given=spec is not None):
            continue
        out.append(name)
    return out


def choose_cuts(df, attributes: Sequence[str], bins: dict, quantile_bins: int, outcomes, cut: CutRows,
                min_rest_count: int) -> dict:
    """Cut points of every tree column, from the cut rows only: {column: edges}."""
    columns = tree_columns(df, attributes, bins, quantile_bins)
    # a bin the scan could not mine is no use: at least the support's share of the cut rows
    min_bin = max(MIN_BIN_SHARE * cut.n_cut, min_rest_count * cut.n_cut / max(cut.n_rest, 1), 2.0)
    ys = [np.asarray(o.values, dtype=float)[cut.mask] for o in outcomes]
    out = {}
    for name in columns:
        spec = bins.get(name)
        x = df[name].to_numpy(dtype=float, na_value=np.nan)[cut.mask]
        out[name] = tree_edges(x, ys, max_bins=int(spec) if spec is not None else MAX_TREE_BINS, min_bin=min_bin)
    return out


def cut_note(columns: Sequence[str], n_cut: int, n_rest: int, edges: dict) -> str:
    """The sentence a tree-binned table carries: which rows chose the cuts, which are measured."""
    total = n_cut + n_rest
    where = "; ".join(f"'{c}' at {', '.join(_fmt(e) for e in edges[c]) or 'no cut (the outcome does not change along it)'}"
                      for c in columns)
    return (f"Tree binning: cut points chosen where the outcome changes, on {n_cut:,} of the {total:,} rows "
            f"({n_cut / max(total, 1):.0%}, seeded) and set aside: {where}. Every number of this table (the "
            f"whole dataset's row included) is measured on the other {n_rest:,} rows, which played no part in "
            "choosing the cuts, so a cut's slices are tested honestly.")


def _fmt(x: float) -> str:
    from .discretize import format_number

    return format_number(x)

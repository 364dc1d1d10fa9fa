"""Percentile bootstrap intervals of every slice's outcome, each metric, all at once: Poisson
weights per row summed over each slice's distinct rows by one walk of the lattice
(:func:`bootstrap_intervals`), for every slice or, past a memory cap, the top ones.
"""
from __future__ import annotations

import numpy as np

from ..errors import DivergenceInputError
from ..mining.lattice import walk_boot_means
from ..prepare.compression import compress
from ..prepare.tallies import boot_columns, metric_tallies
from ..scores import is_score, parse_score, score_values
from .stats import wilson_interval

__all__ = ["bootstrap_intervals", "MAX_BOOTSTRAP_CELLS", "BOOTSTRAP_PASS_CELLS"]


#: cap on slices x replicates x metrics of bootstrap means held in memory (float32); beyond
#: it only the top 1,000 slices per metric (under ``sort_by``) are bootstrapped
MAX_BOOTSTRAP_CELLS = 50_000_000
#: cap on rows x replicates of the Poisson weights drawn in one pass
BOOTSTRAP_PASS_CELLS = 20_000_000


def bootstrap_intervals(table, cols, walk, replicates: int, seed: int, confidence: float, top_k, sort_by,
                         on_progress=None) -> dict:
    """Percentile bootstrap interval of every slice's outcome, each metric, all at once.

    Poisson(1) weights per row (the Poisson bootstrap: each slice sees its own rows resampled
    with replacement, and the whole dataset the same weights), summed once per distinct
    discretized row and then over each slice's distinct rows by one walk of the lattice. For
    a 0/1 outcome the sums over a distinct row are drawn directly (Poisson of its ones and of
    its zeros: exact in distribution). A slice with no event (or no non-event) has a
    bootstrap distribution of one value: its interval is widened to the Wilson interval.
    """
    n_items = len(table)
    metrics = table.metrics
    per_metric = {m.name: np.ones(n_items, dtype=bool) for m in metrics}
    if top_k is not None or n_items * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        per_metric = {m.name: _slices_to_bootstrap(table, cols, m.name, top_k or 1000, sort_by) for m in metrics}
    wanted = np.logical_or.reduce(list(per_metric.values()))
    if int(wanted.sum()) * replicates * len(metrics) > MAX_BOOTSTRAP_CELLS:
        return {}
    comp = compress(table.kept_rows.codes, np.ones((table.n_rows, 1)))
    codes = np.asfortranarray(comp.codes.astype(np.int32))
    inverse = comp.inverse
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(comp.codes)))
    n_groups = len(comp.codes)
    rng = np.random.default_rng(seed)
    # replicates in passes, so the per-row weights of one pass stay within BOOTSTRAP_PASS_CELLS
    chunk = max(1, min(replicates, BOOTSTRAP_PASS_CELLS // max(1, table.n_rows)))
    means = np.empty((n_items, len(metrics) * replicates), dtype=np.float32)
    prepared = []
    for m in metrics:
        v = np.asarray(table.outcome(m.name).values, dtype=float)
        d = ~np.isnan(v)
        if m.binary:
            ones = np.bincount(inverse, weights=(d & (v == 1)).astype(float), minlength=n_groups)
            zeros = np.bincount(inverse, weights=(d & (v != 1)).astype(float), minlength=n_groups)
            prepared.append(("binary", ones, zeros))
        else:
            x = np.where(d, v - m.shift, 0.0)[order]
            prepared.append(("real", d[order].astype(float), x))
    shifts = np.array([m.shift for m in metrics], dtype=float)
    for b0 in range(0, replicates, chunk):
        bc = min(chunk, replicates - b0)
        weights = np.empty((n_groups, 2 * len(metrics) * bc), dtype=np.float32)
        for j, (kind, a, b) in enumerate(prepared):
            den, num = (weights[:, cols] for cols in boot_columns(j, bc))
            if kind == "binary":
                num[:] = rng.poisson(a[:, None], size=(n_groups, bc))
                den[:] = rng.poisson(b[:, None], size=(n_groups, bc))
                den += num
            else:
                w = rng.poisson(1.0, size=(table.n_rows, bc)).astype(np.float32)
                den[:] = np.add.reduceat(w * a[:, None].astype(np.float32), starts, axis=0)
                num[:] = np.add.reduceat(w * b[:, None].astype(np.float32), starts, axis=0)
        done = (lambda x, b0=b0, bc=bc: on_progress((b0 + x * bc) / replicates)) if on_progress else None
        part = walk_boot_means(walk(), codes, wanted, weights, bc, shifts, on_progress=done)
        for j in range(len(metrics)):
            means[:, j * replicates + b0:j * replicates + b0 + bc] = part[:, j * bc:(j + 1) * bc]
    alpha = 1.0 - confidence
    out = {}
    for k, m in enumerate(metrics):
        mine = per_metric[m.name]
        low = np.full(n_items, np.nan)
        high = np.full(n_items, np.nan)
        idx = np.nonzero(mine)[0]
        block = means[:, k * replicates:(k + 1) * replicates]
        block = np.ascontiguousarray(block if idx.size == n_items else block[idx])
        low[idx], high[idx] = _percentiles(block, alpha / 2.0, 1.0 - alpha / 2.0)
        if m.binary:
            n, s, _ = metric_tallies(table.tallies, k)
            ones = np.rint(s)
            w_low, w_high = wilson_interval(ones, n, confidence)
            one_valued = mine & (n > 0) & ((ones == 0) | (ones == n))
            low = np.where(one_valued, np.fmin(low, w_low), low)
            high = np.where(one_valued, np.fmax(high, w_high), high)
        out[m.name] = (low, high)
    return out


def _percentiles(x: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row, two percentiles (linear interpolation, as numpy's) of the finite values: rows
    holding every replicate by one partial sort (in place: ``x`` is reordered), the rest by a
    full sort."""
    out_lo, out_hi = np.full(x.shape[0], np.nan), np.full(x.shape[0], np.nan)
    if x.size == 0:
        return out_lo, out_hi
    finite = np.isfinite(x)
    count = finite.sum(axis=1)
    full = count == x.shape[1]
    b = x.shape[1]

    def positions(q, c):
        pos = (c - 1) * q
        i = np.floor(pos).astype(np.int64)
        return i, np.minimum(i + 1, c - 1), pos - i

    (i1, j1, f1), (i2, j2, f2) = positions(lo, b), positions(hi, b)
    kth = sorted({int(i1), int(j1), int(i2), int(j2)})
    if full.all():
        x.partition(kth, axis=1)
        part = x
    elif full.any():
        part = np.partition(x[full], kth, axis=1)
    if full.any():
        sel = slice(None) if full.all() else full
        out_lo[sel] = part[:, i1].astype(float) * (1.0 - f1) + part[:, j1].astype(float) * f1
        out_hi[sel] = part[:, i2].astype(float) * (1.0 - f2) + part[:, j2].astype(float) * f2
    some = ~full & (count > 0)
    if some.any():
        y = np.where(finite[some], x[some], np.inf).astype(float)
        y.sort(axis=1)
        c = count[some]
        rows = np.arange(y.shape[0])
        for q, target in ((lo, out_lo), (hi, out_hi)):
            i, j, f = positions(q, c)
            target[some] = y[rows, i] * (1.0 - f) + y[rows, j] * f
    return out_lo, out_hi


class _Columns:
    """A table's metrics with other columns: what :func:`divergence.scores.score_values` reads."""

    def __init__(self, table, columns) -> None:
        self.columns, self.metric = columns, table.metric


def _slices_to_bootstrap(table, cols, name, top_k, sort_by) -> np.ndarray:
    n_items = len(table)
    wanted = np.zeros(n_items, dtype=bool)
    k = int(top_k or 1000)
    key = sort_by or f"{name}_divergence"
    if key not in cols and is_score(key):  # a peer's score: computed for this choice
        cols = dict(cols, **{key: score_values(_Columns(table, cols), name, parse_score(key))})
    if key not in cols:
        raise DivergenceInputError(f"Cannot sort by '{key}': not a column of the result.")
    values = np.asarray(cols[key], dtype=float)
    order = np.argsort(np.where(np.isnan(values), -np.inf, -values), kind="stable")
    wanted[order[:k]] = True
    wanted[0] = True
    return wanted


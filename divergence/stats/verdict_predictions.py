"""The 0/1 error's second defect test: did the model's predictions move toward chance, or the labels?

Labels flipped at random with probability eta (a noisier target) multiply 1 - 2x of every
predictor's error x by 1 - 2eta and leave the predictions alone; predictions flipped with
probability eta (a defect) multiply 1 - 2x of the model's error and of the predicted classes'
balance by 1 - 2eta and leave the labels alone. On the scale phi(x) = -log(1 - 2x) a slice's

    moved = [phi(E) - phi(B) + phi(P)] - [the same, pooled over its partition]

(E the model's error, B the labels' minority share, P the predictions' minority share) is 0
for noisier labels at any eta and 2(-log(1 - 2eta)) for noisier predictions: the lift shortfall
(phi(E) - phi(B)) plus the predictions' move toward an even split (phi(P)). The lift shortfall
alone carries the labels' balance staying put, a noisy measurement; the predictions' balance
moving is the same evidence again, and the two add (docs/statistics.md, "A classifier defect
that leaves the target alone"). Read by :func:`divergence.stats.assess.assess` for the verdict.
"""
from __future__ import annotations

import numpy as np

from ..mining.lattice import walk_tallies
from .defect_tests import attribute_groups

__all__ = ["predictions_moved_p", "promote_moved_defects", "add_moved_tests", "moved_test"]


def _phi(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x < 0.5, -np.log1p(-2.0 * x), np.nan)


def _dphi(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x < 0.5, 2.0 / (1.0 - 2.0 * x), np.nan)


def confusion_counts(table, name: str, walk) -> np.ndarray | None:
    """Per itemset, its rows per (class, predicted class) of a two-class 0/1 error metric
    (columns: 00, 01, 10, 11 as class * 2 + predicted class); None when the metric's rows are
    not two classes predicted as two classes, or the rows were not kept."""
    if table.kept_rows is None or table.kept_rows.outcomes is None:
        return None
    o = table.outcome(name)
    err = np.asarray(o.values, dtype=float)
    ok = ~np.isnan(err)
    y = np.asarray(o.target, dtype=float)[ok]
    pred = np.asarray(o.prediction, dtype=float)[ok]
    if not (np.isin(y, (0.0, 1.0)).all() and np.isin(pred, (0.0, 1.0)).all() and np.isin(err[ok], (0.0, 1.0)).all()):
        return None
    cell = (2 * y + pred).astype(np.int64)
    onehot = np.zeros((len(err), 4))
    onehot[np.flatnonzero(ok), cell] = 1.0
    return walk_tallies(walk, table.kept_rows.codes, onehot)


def _row_moments(counts: np.ndarray):
    """Per itemset: rows n, the means of (e, b, s) and their per-row covariance (3 x 3), where a
    row's e is 1 when the model errs, b when its class is not the itemset's majority class and s
    when its predicted class is not the itemset's majority predicted class."""
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (counts[:, 2] + counts[:, 3]) / n
        q = (counts[:, 1] + counts[:, 3]) / n
    major, major_pred = (p > 0.5).astype(float), (q > 0.5).astype(float)
    first = np.zeros((len(n), 3))
    second = np.zeros((len(n), 3, 3))
    for k, (y, yhat) in enumerate(((0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0))):
        x = np.stack([np.full(len(n), float(y != yhat)), (y != major).astype(float),
                      (yhat != major_pred).astype(float)], axis=1)
        w = counts[:, k][:, None]
        first += w * x
        second += w[:, :, None] * x[:, :, None] * x[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = first / n[:, None]
        cov = second / n[:, None, None] - mean[:, :, None] * mean[:, None, :]
    return n, mean, cov


def predictions_moved_p(counts: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per itemset, the one-sided test that its predictions, not its labels, moved toward chance:
    (estimate of ``moved``, its standard error, p-value); NaN for the whole dataset (row 0),
    itemsets of fewer than two rows, and where an error or a minority share is within three
    standard errors of 1/2 (the scale ends there, and near it the delta method fails). ``group``: the partition each itemset is a cell of (itemsets on the same
    attributes; :func:`divergence.stats.defect_tests.attribute_groups`), pooled with each cell's own
    majority classes; the variance by the delta method, each row's influence on the slice and on
    the pooled partition (the slice is one of its cells)."""
    from scipy import special as sp

    n, mean, cov = _row_moments(counts)
    ok = (n > 0) & np.isfinite(mean).all(axis=1)
    size = int(group.max(initial=-1)) + 1
    w = np.where(ok, n, 0.0)

    def total(x):
        return np.bincount(group, weights=np.where(ok, x, 0.0), minlength=size)

    with np.errstate(invalid="ignore", divide="ignore"):
        n_part = total(w)
        pooled = np.stack([total(w * np.nan_to_num(mean[:, j])) for j in range(3)], axis=1) / n_part[:, None]
        pooled_cov = np.stack([np.stack([total(w * np.nan_to_num(cov[:, a, b])) for b in range(3)], axis=1)
                               for a in range(3)], axis=1)  # per group: the sum of n_j times cell j's covariance
        sign = np.array([1.0, -1.0, 1.0])
        own = (_phi(mean) * sign).sum(axis=1)
        part = (_phi(pooled) * sign).sum(axis=1)
        est = own - part[group]
        c_s = _dphi(mean) * sign
        c_p = (_dphi(pooled) * sign)[group]
        big = n_part[group]
        var = (np.einsum("ia,iab,ib->i", c_s, cov, c_s) / n
               - 2.0 * np.einsum("ia,iab,ib->i", c_s, cov, c_p) / big
               + np.einsum("ia,iab,ib->i", c_p, pooled_cov[group], c_p) / (big * big))
        se = np.sqrt(np.maximum(var, 0.0))
        dof = np.maximum(n - 1.0, 1.0)
        p = np.where(se > 0, sp.stdtr(dof, -est / np.where(se > 0, se, 1.0)), np.where(est > 0, 0.0, 1.0))
    # the delta method needs each of the slice's 1 - 2x (error, minority shares) at least three
    # standard errors from 0, where the scale ends: near an even split its curvature decides
    with np.errstate(invalid="ignore", divide="ignore"):
        clear = ((1.0 - 2.0 * mean) >= 6.0 * np.sqrt(mean * (1.0 - mean) / n[:, None])).all(axis=1)
    tested = (n >= 2) & np.isfinite(est) & np.isfinite(se) & (big > n) & clear
    p = np.where(tested, p, np.nan)
    if p.size:
        p[0] = est[0] = se[0] = np.nan
    return np.where(tested, est, np.nan), np.where(tested, se, np.nan), p


def promote_moved_defects(verdict: np.ndarray, moved_p: np.ndarray, harder_p: np.ndarray, bar: float) -> np.ndarray:
    """The verdicts with ``undetermined`` slices turned ``defect`` where the predictions moved
    (``moved_p``) and the target is not harder (``harder_p``), both one-sided p-values held to
    ``bar``: the p-value the slice's own divergence test had to reach (the scan's corrected
    level; a follow-up of a selected slice, Benjamini and Bogomolov's bar)."""
    with np.errstate(invalid="ignore"):
        moved = np.asarray(moved_p, dtype=float) <= bar
        harder = np.asarray(harder_p, dtype=float) <= bar
    out = verdict.copy()
    out[(out == "undetermined") & moved & ~harder] = "defect"
    return out


def moved_test(table, name: str, walk) -> np.ndarray | None:
    """Per itemset, the p-value of :func:`predictions_moved_p` for the two-class 0/1 error metric
    ``name`` (``walk``: the lattice's walk order); None where it does not apply (see
    :func:`confusion_counts`)."""
    counts = confusion_counts(table, name, walk)
    if counts is None:
        return None
    return predictions_moved_p(counts, attribute_groups(table.codes))[2]


def add_moved_tests(table, parts: dict, walk) -> None:
    """Add ``moved_p`` (:func:`moved_test`) to the defect tests ``parts`` of each 0/1 error metric
    (``walk``: called for the lattice's walk order when one applies)."""
    for m in table.metrics:
        if m.baseline == "majority" and m.name in parts:
            parts[m.name]["moved_p"] = moved_test(table, m.name, walk())

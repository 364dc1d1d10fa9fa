"""Driving the mining kernel (:func:`divergence.mining.mining_kernel.mine_step`): it is called again
and again, a quota of work each time (a few milliseconds), with the arrays it asks for grown in
between, the budget's slice cap and deadline checked, and progress reported.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..budget import Budget, Overflow
from .mining_kernel import (
    DONE,
    EAGER,
    F_NEXT,
    F_NK,
    FULL,
    N_FRAME,
    N_STATE,
    ROOM,
    ROOT_SCAN,
    S_DEPTH,
    S_EAGER,
    S_NEED_C,
    S_NEED_F,
    S_NEED_HT,
    S_NEED_I,
    S_NEED_OUT,
    S_NEED_R,
    S_NEED_TAB,
    S_NEED_W,
    S_NOUT,
    S_ROOT_SCAN,
    S_WORK,
    fill_tables,
    mine_step,
    mine_step8,
)

__all__ = ["Root", "run", "lengths_out", "pow2", "QUOTA"]

#: how the kernel reads a table (:data:`~divergence.mining.mining_kernel.EAGER`, ``ROOT_SCAN``): the
#: same results whichever it takes (tests set them to take every way)
SIZES = {"eager": EAGER, "root_scan": ROOT_SCAN}
#: work units (rows x columns visited) per kernel call: a few milliseconds, so progress, the
#: time limit and the other threads of the process are served often
QUOTA = 1_000_000


def lengths_out(parent: np.ndarray, n: int) -> np.ndarray:
    """Count of outputs 1..n-1 by length (parents precede their children)."""
    depth = np.zeros(n, np.int64)
    for i in range(1, n):
        depth[i] = depth[parent[i]] + 1
    return np.bincount(depth[1:], minlength=2)


def _grown(arr: np.ndarray, need: int, fill: float | None = None) -> np.ndarray:
    if need <= arr.shape[0]:
        return arr
    size = max(int(need), arr.shape[0] + arr.shape[0] // 2)
    new = np.empty((size,) + arr.shape[1:], dtype=arr.dtype) if fill is None else \
        np.full((size,) + arr.shape[1:], fill, dtype=arr.dtype)
    new[: arr.shape[0]] = arr
    return new


def pow2(n: int) -> int:
    size = 16
    while size < n:
        size *= 2
    return size


@dataclass
class Root:
    """The root's items on the table to mine: outputs 1..m, in attribute order."""

    attr: np.ndarray  # int32
    val: np.ndarray  # int32
    tallies: np.ndarray  # m x T
    fp: np.ndarray  # m x F int64
    ih: np.ndarray  # m int64 (the item's random number)


def run(codes: np.ndarray, weights: np.ndarray, fps: np.ndarray, n_values: np.ndarray, min_count: float,
        max_length: int, exhaustive: bool, root: Root, item_hash: np.ndarray, total: np.ndarray,
        expand: np.ndarray, cap: int, budget: Budget, on_check: Callable[[], None] | None = None) -> tuple:
    """Mine below the root's items listed in ``expand`` (all itemsets up to ``max_length``);
    returns (parent, attr, val, tallies, fp, dead) with row 0 the whole dataset and rows 1..m the
    root's items, or raises :class:`~divergence.budget.Overflow` past ``cap`` outputs, the
    budget's work (counted at each quota: where a run stops depends on the data alone) or its
    deadline (the safety net). ``on_check`` is called after each quota whose check passed."""
    n_attr = codes.shape[1]
    t = weights.shape[1]
    nf = fps.shape[1]
    d = codes.shape[0]
    m = len(root.attr)
    n0 = 1 + m
    size = max(1024, 2 * n0)
    out_parent = np.empty(size, np.int64)
    out_attr = np.empty(size, np.int32)
    out_val = np.empty(size, np.int32)
    out_w = np.empty((size, t), np.float64)
    out_fp = np.zeros((size, nf), np.int64)
    out_ih = np.zeros(size, np.int64)
    out_dead = np.zeros(size, np.bool_)
    out_parent[0], out_attr[0], out_val[0] = -1, -1, -1
    out_w[0] = total
    out_fp[0] = fps.sum(axis=0) if nf else 0
    out_parent[1:n0] = 0
    out_attr[1:n0], out_val[1:n0] = root.attr, root.val
    out_w[1:n0] = root.tallies
    out_fp[1:n0] = root.fp
    out_ih[1:n0] = root.ih
    tab = pow2(4 * n0) if not exhaustive else 2
    gtab = np.full(tab, -1, np.int64)
    ctab = np.full(tab, -1, np.int64)
    if not exhaustive:
        fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n0)
    max_nv = int(n_values.max(initial=1))
    st = np.zeros(N_STATE, np.int64)
    st[S_NOUT] = n0
    st[S_EAGER], st[S_ROOT_SCAN] = SIZES["eager"], SIZES["root_scan"]
    frames = np.zeros((N_FRAME, n_attr + 2), np.int64)
    # the kids' tables, a stack: as large as the root's table, of which only the pages the stack
    # reaches are ever touched (resident), so that growing it (a copy beside the old) is rare; their
    # codes in the root's code type (8 bits when every attribute has at most 127 items: mine_step8),
    # their rows' tallies and fingerprints where they are (a_ref: a root's row, or a row of sums in
    # a_w/a_fp written only when rows merge)
    a_codes = np.empty(max(16, d * n_attr), codes.dtype)
    a_ref = np.empty(max(16, d), np.int32)
    step = mine_step8 if codes.dtype == np.int8 else mine_step
    a_w = np.empty(max(16, d * t), np.float64)
    a_fp = np.empty(max(16, d * nf), np.int64)
    # the kids to expand, the rows' order and the counting sorts' counts (all below 2**31)
    a_int = np.empty(3 * len(expand) + 3 * d + 8 * int(n_values.sum()) + 4 * max_nv + 64, np.int32)
    # the merge's hash table: the kernel asks for as many slots as its largest table needs (at most half full)
    ht = np.empty(16, np.int32)
    deadline = budget.deadline
    n_expand = max(len(expand), 1)
    while True:
        st[S_WORK] = 0
        status = step(codes, weights, fps, n_values, float(min_count), int(max_length), 1 if exhaustive else 0,
                           int(cap), QUOTA, item_hash, expand, st, frames, a_codes, a_w, a_fp, a_int, ht, a_ref,
                           out_parent, out_attr, out_val, out_w, out_fp, out_ih, out_dead, gtab, ctab)
        n_out = int(st[S_NOUT])
        budget.work += int(st[S_WORK])  # counted, not timed: the same at any load
        if status == DONE:
            break
        if status == FULL:
            raise Overflow("slices", n_out - 1, max_length, lengths_out(out_parent, n_out))
        if status == ROOM:
            out_parent = _grown(out_parent, st[S_NEED_OUT])
            out_attr = _grown(out_attr, st[S_NEED_OUT])
            out_val = _grown(out_val, st[S_NEED_OUT])
            out_w = _grown(out_w, st[S_NEED_OUT])
            out_fp = _grown(out_fp, st[S_NEED_OUT], 0)
            out_ih = _grown(out_ih, st[S_NEED_OUT], 0)
            out_dead = _grown(out_dead, st[S_NEED_OUT], False)
            a_codes = _grown(a_codes, st[S_NEED_C])
            a_w = _grown(a_w, st[S_NEED_W])
            a_fp = _grown(a_fp, st[S_NEED_F])
            a_int = _grown(a_int, st[S_NEED_I])
            a_ref = _grown(a_ref, st[S_NEED_R])
            if st[S_NEED_HT] > ht.shape[0]:
                ht = np.empty(pow2(st[S_NEED_HT]), np.int32)  # each table clears its own slots
            if st[S_NEED_TAB] > gtab.shape[0]:
                gtab = np.full(pow2(2 * st[S_NEED_TAB]), -1, np.int64)
                ctab = np.full(gtab.shape[0], -1, np.int64)
                fill_tables(out_ih, out_parent, out_fp, out_attr, out_val, out_dead, gtab, ctab, n_out)
            st[S_NEED_C:S_NEED_R + 1] = 0
            continue
        # YIELD: a quota of work done (a few milliseconds)
        budget.checked, budget.checks = budget.work, budget.checks + 1
        work_cap = budget.work_cap  # read at each check: a caller may lower it while the run goes on
        if work_cap is not None and budget.work > work_cap:
            raise Overflow("work", n_out - 1, max_length, lengths_out(out_parent, n_out))
        if deadline is not None and time.monotonic() > deadline:
            raise Overflow("time", n_out - 1, max_length)
        depth = int(st[S_DEPTH])
        f0 = (frames[F_NEXT, 0] - 1 + (frames[F_NEXT, 1] / max(frames[F_NK, 1], 1) if depth >= 1 else 1.0)) / n_expand
        budget.report(n_out - 1, None if max_length >= n_attr else max_length, f0)
        if on_check is not None:
            on_check()
    n = int(st[S_NOUT])
    return (out_parent[:n].copy(), out_attr[:n].copy(), out_val[:n].copy(), out_w[:n].copy(),
            out_fp[:n].copy(), out_dead[:n].copy())


"""The verdict's walk (verdict_walk.walk_verdict) gives what the walk with one pass per reference
gives, on random tables of every baseline kind: squared error (1), absolute error (2), 0/1
error (3), Brier (4); with undefined errors, ties, rows without an item, slices of 0, 1 and 2
rows. The reference below is that walk as plain Python, one slice at a time (the references as
the walk before 4eab2be computed them, the moment sums over the rows in their order); every
column must agree to the last bit (the walk sums in the same order, or sums 0/1 terms, which
are exact)."""
from __future__ import annotations

import numpy as np
import pytest
from lattice_cases import lattice_of, rows_of

from divergence.mining import lattice
from divergence.mining.lattice import walk_order
from divergence.stats import verdict_walk
from divergence.stats.verdict_walk import VERDICT_COLUMNS, walk_verdict

# ------------------------------------------------------------------ the walk before (reference)

def _ref_sorted_median(x):
    m = x.shape[0]
    if m % 2 == 1:
        return x[m // 2]
    return 0.5 * (x[m // 2 - 1] + x[m // 2])


def _ref_median_without(x, j):
    m = x.shape[0] - 1
    if m <= 0:
        return np.nan
    k = m // 2
    a = x[k] if k < j else x[k + 1]
    if m % 2 == 1:
        return a
    k0 = k - 1
    b = x[k0] if k0 < j else x[k0 + 1]
    return 0.5 * (a + b)


def _ref_loo_median_errors(x, out):
    m = x.shape[0]
    order = np.argsort(x)
    xs = x[order]
    for jj in range(m):
        out[order[jj]] = abs(xs[jj] - _ref_median_without(xs, jj))


def _ref_loo_majority(ones, zeros, y, tie):
    o = ones - (1.0 if y > 0.5 else 0.0)
    z = zeros - (0.0 if y > 0.5 else 1.0)
    if abs(o - z) >= 2.0:
        return 1.0 if o > z else 0.0
    if ones != zeros:  # within one of a tie: the cell's own majority
        return 1.0 if ones > zeros else 0.0
    return tie


def _rows_of(codes_i, row_codes):
    return np.nonzero(rows_of(codes_i, row_codes))[0]


def reference_walk(item_codes, row_codes, n_values, err, target, pred, kind):
    """The walk before (divergence/mining/lattice.py at 4eab2be^), one slice at a time, rows in order."""
    n_items = item_codes.shape[0]
    n_rows, n_attr = row_codes.shape
    out = np.full((n_items, len(VERDICT_COLUMNS)), np.nan)
    whole = np.full(n_rows, np.nan)
    ys, rs, es = (np.empty(n_rows) for _ in range(3))
    free_best = np.empty(n_rows)
    rows = np.empty(n_rows, dtype=np.int64)
    cand = np.empty(n_rows)
    best = np.empty(n_rows)
    max_k = 1
    for a in range(n_attr):
        max_k = max(max_k, n_values[a] + 1)
    cell_n = np.zeros(max_k)
    cell_s = np.zeros(max_k)
    for i in range(n_items):
        m = 0
        for r in _rows_of(item_codes[i], row_codes):
            e = err[r]
            if np.isnan(e):
                continue
            ys[m] = target[r]
            rs[m] = pred[r] - target[r]
            es[m] = e
            rows[m] = r
            m += 1
        if m == 0:
            out[i, 0] = 0.0
            continue
        y = ys[:m]
        ysum = 0.0
        for j in range(m):
            ysum += y[j]
        ymean = ysum / m
        if kind == 2:
            c = _ref_sorted_median(np.sort(y))
        elif kind == 3:
            c = 1.0 if ymean > 0.5 else 0.0
        else:
            c = ymean
        e_sum = 0.0
        b_sum = 0.0
        for j in range(m):
            e_sum += es[j]
            if kind == 2:
                b_sum += abs(y[j] - c)
            elif kind == 3:
                b_sum += 1.0 if y[j] != c else 0.0
            else:
                b_sum += (y[j] - c) * (y[j] - c)
        big_e = e_sum / m
        big_b = min(ymean, 1.0 - ymean) if kind == 3 else b_sum / m
        out[i, 0] = m
        out[i, 1] = big_e
        out[i, 2] = big_b
        if m < 2:
            _reference_moments(out, i, y, c, kind, es[:m], None, None, rows[:m], whole)
            continue
        best_mean = np.inf
        which = -3
        free_mean = np.inf
        which_free = -3
        if kind == 2:
            _ref_loo_median_errors(y, cand)
        else:
            for j in range(m):
                if kind == 3:
                    p = _ref_loo_majority(ysum, m - ysum, y[j], c)
                    cand[j] = 1.0 if p != y[j] else 0.0
                else:
                    p = (ysum - y[j]) / (m - 1.0)
                    cand[j] = (y[j] - p) * (y[j] - p)
        tot = 0.0
        for j in range(m):
            tot += cand[j]
        if tot / m < best_mean:
            best_mean = tot / m
            which = -2
            for j in range(m):
                best[j] = cand[j]
        free_mean, which_free = tot / m, -2
        free_best[:m] = cand[:m]
        if kind == 2:
            _ref_loo_median_errors(rs[:m], cand)
        elif kind == 3:
            n1 = o1 = n0 = o0 = 0.0
            for j in range(m):
                if rs[j] + y[j] > 0.5:
                    n1 += 1.0
                    o1 += y[j]
                else:
                    n0 += 1.0
                    o0 += y[j]
            for j in range(m):
                if rs[j] + y[j] > 0.5:
                    p = _ref_loo_majority(o1, n1 - o1, y[j], 1.0)
                else:
                    p = _ref_loo_majority(o0, n0 - o0, y[j], 0.0)
                cand[j] = 1.0 if p != y[j] else 0.0
        else:
            rsum = 0.0
            for j in range(m):
                rsum += rs[j]
            for j in range(m):
                off = (rsum - rs[j]) / (m - 1.0)
                cand[j] = (rs[j] - off) * (rs[j] - off)
        tot = 0.0
        for j in range(m):
            tot += cand[j]
        if tot / m < best_mean:
            best_mean = tot / m
            which = -1
            for j in range(m):
                best[j] = cand[j]
        for a in range(n_attr):
            if item_codes[i, a] >= 0:
                continue
            for v in range(n_values[a] + 1):
                cell_n[v] = 0.0
                cell_s[v] = 0.0
            for j in range(m):
                v = row_codes[rows[j], a]
                if v < 0:
                    v = n_values[a]
                cell_n[v] += 1.0
                cell_s[v] += y[j]
            tot = 0.0
            for j in range(m):
                v = row_codes[rows[j], a]
                if v < 0:
                    v = n_values[a]
                if cell_n[v] > 1.0:
                    if kind == 3:
                        p = _ref_loo_majority(cell_s[v], cell_n[v] - cell_s[v], y[j], c)
                    else:
                        p = (cell_s[v] - y[j]) / (cell_n[v] - 1.0)
                else:
                    if kind == 3:
                        p = _ref_loo_majority(ysum, m - ysum, y[j], c)
                    else:
                        p = (ysum - y[j]) / (m - 1.0)
                if kind == 3:
                    cand[j] = 1.0 if p != y[j] else 0.0
                elif kind == 2:
                    cand[j] = abs(y[j] - p)
                else:
                    cand[j] = (y[j] - p) * (y[j] - p)
                tot += cand[j]
            if tot / m < best_mean:
                best_mean = tot / m
                which = a
                for j in range(m):
                    best[j] = cand[j]
            if tot / m < free_mean:
                free_mean, which_free = tot / m, a
                free_best[:m] = cand[:m]
        out[i, 3], out[i, 4], out[i, 5], out[i, 6] = best_mean, which, free_mean, which_free
        _reference_moments(out, i, y, c, kind, es[:m], best[:m], free_best[:m], rows[:m], whole)
    return out


def _reference_moments(out, i, y, c, kind, e, ref, free, rows, whole):
    """The moment sums of VERDICT_COLUMNS 7 onwards, row by row in the rows' order; the whole
    dataset (itemset 0, first) keeps its rows' chosen reference's errors in ``whole``."""
    if kind == 2:
        beta = np.abs(y - c)
    elif kind == 3:
        beta = (y != c).astype(float)
    else:
        beta = (y - c) * (y - c)
    if i == 0:
        whole[rows] = ref if ref is not None else np.nan
    r0 = whole[rows]
    cols = {name: j for j, name in enumerate(VERDICT_COLUMNS)}
    sums = {"beta2": beta * beta, "beta_err": beta * e, "err2": e * e}
    if ref is not None:
        sums.update(ref2=ref * ref, ref_err=ref * e, ref_ref0=ref * r0, err_ref0=e * r0, ref0=r0,
                    free2=free * free, free_err=free * e)
    for name, terms in sums.items():
        total = 0.0
        for x in terms:  # in the rows' order, as the walk sums
            total += x
        out[i, cols[name]] = total


# ------------------------------------------------------------------------------ random tables

def random_case(seed: int, kind: int, n_rows: int = 90, n_values=(3, 2, 4, 3), min_count: int = 1):
    """Rows with codes (some -1: no item), target, prediction and error of the given kind,
    about 20% of errors undefined; ties by construction (few distinct values)."""
    rng = np.random.default_rng(seed)
    n_values = np.array(n_values, dtype=np.int64)
    row_codes = np.column_stack([rng.integers(-1 if a % 2 else 0, k, n_rows) for a, k in enumerate(n_values)]) \
        if len(n_values) else np.zeros((n_rows, 0), dtype=np.int64)
    if kind == 3:
        target = (rng.random(n_rows) < 0.35).astype(float)
        pred = np.where(rng.random(n_rows) < 0.25, 1.0 - target, target)
        err = (pred != target).astype(float)
    elif kind == 4:
        target = (rng.random(n_rows) < 0.4).astype(float)
        pred = rng.choice([0.1, 0.3, 0.5, 0.8], n_rows)
        err = (pred - target) ** 2
    else:
        target = rng.integers(0, 6, n_rows).astype(float) + np.where(rng.random(n_rows) < 0.3,
                                                                    rng.normal(size=n_rows), 0.0)
        pred = target + rng.choice([-1.0, 0.0, 0.5, 2.0], n_rows) + 0.2 * (row_codes[:, 0] if len(n_values) else 0)
        err = np.abs(pred - target) if kind == 2 else (pred - target) ** 2
    err[rng.random(n_rows) < 0.2] = np.nan
    item_codes, parent = lattice_of(row_codes, n_values, min_count)
    return dict(item_codes=item_codes, parent=parent, row_codes=np.asfortranarray(row_codes.astype(np.int32)),
                n_values=n_values, err=err, target=target, pred=pred, kind=kind)


def run_new(case) -> np.ndarray:
    if case["item_codes"].shape[1] == 0:  # the whole dataset alone
        walk = lattice.Walk(*(np.array([x], dtype=np.int64) for x in (0, -1, -1, 0, -1)))
    else:
        walk = walk_order(case["parent"], case["item_codes"])
    return walk_verdict(walk, case["row_codes"], case["item_codes"],
                        case["n_values"], case["err"], case["target"], case["pred"], case["kind"])


def run_reference(case) -> np.ndarray:
    return reference_walk(case["item_codes"], case["row_codes"], case["n_values"], case["err"], case["target"],
                          case["pred"], case["kind"])


def assert_same(new: np.ndarray, ref: np.ndarray) -> None:
    for j, name in enumerate(VERDICT_COLUMNS):
        np.testing.assert_array_equal(new[:, j], ref[:, j], err_msg=name)


# ------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("kind", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_as_one_pass_per_reference(kind, seed):
    case = random_case(seed, kind)
    ref = run_reference(case)
    new = run_new(case)
    n = ref[:, 0]
    # the cases hold what the walk must get right: tiny slices, empty ones, every reference chosen
    assert (n == 0).any() and (n == 1).any() and (n == 2).any()
    which, which_free = (ref[:, VERDICT_COLUMNS.index(c)] for c in ("which", "which_free"))
    assert {-2, -1} <= set(which[~np.isnan(which)].astype(int))
    assert (which >= 0).any() and (which_free >= 0).any() and (which_free == -2).any()
    assert_same(new, ref)


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
def test_larger_slices_and_no_attributes(kind):
    big = random_case(10 + kind, kind, n_rows=400, n_values=(2, 3, 2), min_count=5)
    assert_same(run_new(big), run_reference(big))
    bare = random_case(20 + kind, kind, n_rows=40, n_values=())
    assert bare["item_codes"].shape == (1, 0)
    assert_same(run_new(bare), run_reference(bare))


def test_zero_one_error_on_rows_and_on_distinct_rows_agree():
    """The 0/1 error takes the distinct rows' path; the walk over rows gives it too."""
    case = random_case(7, 3, n_rows=300, n_values=(2, 3, 2, 2), min_count=2)
    d = ~np.isnan(case["err"])
    grouped = verdict_walk._distinct_01_rows(case["row_codes"][d], case["err"][d], case["target"][d], case["pred"][d])
    assert grouped is not None and len(grouped[1]) < d.sum() and grouped[1].sum() == d.sum()
    walk = walk_order(case["parent"], case["item_codes"])
    out = np.full((len(walk.order), len(VERDICT_COLUMNS)), np.nan)
    whole = np.full(int(d.sum()), np.nan)
    lattice.run_walk(verdict_walk._verdict_rows_step, walk, case["row_codes"][d], np.ascontiguousarray(case["item_codes"]),
                  np.ascontiguousarray(case["n_values"], dtype=np.int64), case["err"][d], case["target"][d],
                  case["pred"][d], 3, whole, out)
    assert_same(out, run_new(case))
    assert_same(out, run_reference(case))


def test_zero_one_labels_that_are_not_zero_one_walk_the_rows():
    """A 'majority' kind whose values are not 0/1 cannot be counted: the rows' walk serves."""
    case = random_case(3, 3)
    case["target"] = case["target"] * 2.0
    case["err"] = np.where(np.isnan(case["err"]), np.nan, (case["pred"] != case["target"]).astype(float))
    d = ~np.isnan(case["err"])
    assert verdict_walk._distinct_01_rows(case["row_codes"][d], case["err"][d], case["target"][d],
                                     case["pred"][d]) is None
    assert_same(run_new(case), run_reference(case))


def test_counts_match_the_slices():
    """Independent of the reference: n is the count of defined rows, the error their mean."""
    case = random_case(5, 3, n_rows=200)
    out = run_new(case)
    for i, codes_i in enumerate(case["item_codes"]):
        rows = _rows_of(codes_i, case["row_codes"])
        e = case["err"][rows]
        e = e[~np.isnan(e)]
        assert out[i, 0] == len(e)
        if len(e):
            assert out[i, 1] == pytest.approx(e.mean(), abs=1e-15)


def test_majority_reference_on_a_balanced_cell_errs_like_a_coin():
    """Plain leave-one-out gives a majority class an error of 1 on a balanced cell (each row
    sees the other class ahead); within one of a tie the cell's own majority decides."""
    from divergence.stats.verdict_walk import _loo_majority
    # 5 ones and 5 zeros: every row gets the tie-breaker (class 1): the zeros err, half the rows
    assert [_loo_majority(5.0, 5.0, y, 1.0) for y in (1.0, 0.0)] == [1.0, 1.0]
    # 6 ones, 5 zeros: the ones are right, the zeros wrong: 5 of 11
    assert [_loo_majority(6.0, 5.0, y, 0.0) for y in (1.0, 0.0)] == [1.0, 1.0]
    # far from a tie, plain leave-one-out
    assert [_loo_majority(9.0, 2.0, y, 0.0) for y in (1.0, 0.0)] == [1.0, 1.0]
    assert _loo_majority(2.0, 9.0, 1.0, 1.0) == 0.0

"""What an error metric's verdict rests on when a slice's error is above the whole dataset's: the
slice's constant baseline and its partition's, the lift on the metric's natural scale, the references
fitted within the slice, and the three one-sided tests (``harder``, ``short``, ``beaten``) that tell
a defect from a hard cohort (:func:`measure_defects`, :func:`error_verdicts`).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..mining.lattice import walk_order, walk_tallies
from ..prepare.tallies import metric_tallies
from .slice_tests import correct_p
from .verdict_walk import VERDICT_COLUMNS, walk_verdict

__all__ = ["DEFECT_TESTS", "Defects", "measure_defects", "error_verdicts", "with_interval", "attribute_groups"]


_BASELINE_CODE = {"mean": 1, "median": 2, "majority": 3, "base_rate": 4, "entropy": 5, "majority_class": 6}
_BASELINE_TEXT = {"mean": "the slice's mean target", "median": "the slice's median target",
                  "majority": "the slice's majority class", "base_rate": "the slice's base rate",
                  "entropy": "the slice's base rate (its log loss: the entropy of the slice's labels)",
                  "majority_class": "the slice's majority class (of every class)"}


@dataclasses.dataclass(frozen=True)
class Defects:
    """The defect test of error metrics (harder cohort, lift shortfall, beaten by a reference), per
    metric, and its q-values and corrected levels over every slice it is applied to."""

    parts: dict
    q: dict
    level: dict


def measure_defects(table, walk, alpha: float, correction: str, family: str) -> Defects:
    """The defect test of each error metric (``walk``: the lattice's walk when the rows are kept)."""
    parts = {m.name: _defect_test(table, k, m, walk) for k, m in enumerate(table.metrics) if m.baseline is not None}
    q, level = {}, {}
    for test in DEFECT_TESTS + ("normal",):
        q[test], level[test], _ = correct_p(
            {n: d["p"][test] if test in d["p"] else d.get("p_normal", np.full(len(d["baseline"]), np.nan))
             for n, d in parts.items()}, alpha, correction, family)
    return Defects(parts=parts, q=q, level=level)


def error_verdicts(q: dict, alpha: float, rows: bool) -> np.ndarray:
    """The verdict of error slices significantly above the whole dataset, from the corrected
    q-values of the tests of :func:`_defect_test` (NaN: not shown, as not significant).

    With rows: ``defect`` when a reference fitted within the slice beats the model by more than
    on the whole dataset (``beaten``), or when the lift is reliably short of its partition's
    while the baseline is not reliably harder; ``hard cohort`` when, not beaten, the baseline is
    reliably harder and the lift, compared, not reliably short; otherwise ``undetermined`` (both,
    neither, or a 0/1 target's lift not compared because its baseline is at chance). Without rows
    (tallies): ``hard cohort`` when the baseline is reliably harder and the lift reliably no lower,
    else ``undetermined``."""
    def sig(name):
        return np.asarray(q[name], dtype=float) <= alpha

    harder, short = sig("harder"), sig("short")
    out = np.full(harder.shape[0], "undetermined", dtype=object)
    if not rows:
        out[harder & sig("normal")] = "hard cohort"
        return out
    beaten = sig("beaten")
    tested = np.isfinite(np.asarray(q["short"], dtype=float))  # the lift compared (not at chance)
    out[~beaten & harder & tested & ~short] = "hard cohort"
    out[beaten | (short & ~harder)] = "defect"
    return out


def with_interval(cols: dict, column: str, part: dict, test: str, level, estimate: bool = True) -> None:
    """A defect test's estimate (``column``, unless ``estimate`` is False) and its interval at the
    level its q-values are corrected to (``column_low``, ``column_high``: each end the one-sided
    bound at that level, so the q-value is at most alpha exactly when the low end is above 0)."""
    from scipy import special as sp

    est, se, dof = part["est"][test], part["se"][test], part["dof"]
    if estimate:
        cols[column] = est
    a = 1.0 - (level if level is not None else 0.95)
    with np.errstate(invalid="ignore"):
        t = sp.stdtrit(dof, 1.0 - a)
        cols[f"{column}_low"] = np.where(np.isfinite(se), est - t * se, np.nan)
        cols[f"{column}_high"] = np.where(np.isfinite(se), est + t * se, np.nan)


def _baseline(table, m) -> np.ndarray:
    """Error of each slice's best constant prediction from the tallies (mean target, majority
    class, base rate); NaN for the median (absolute error), which needs the rows."""
    if m.baseline == "majority_class":
        return _majority_class_error(table, m)
    if m.baseline == "median" or m.aux < 0:
        return np.full(len(table), np.nan)
    k = table.metric_names.index(m.name)
    n = metric_tallies(table.tallies, k)[0]
    ys, yq = table.tallies[:, m.aux], table.tallies[:, m.aux + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = ys / n
        if m.baseline == "mean":
            return np.where(n > 0, np.maximum(yq / n - mu * mu, 0.0), np.nan)
        p = m.target_shift + mu
        if m.baseline == "majority":
            return np.where(n > 0, np.minimum(p, 1.0 - p), np.nan)
        if m.baseline == "entropy":
            return np.where(n > 0, _entropy(p), np.nan)
        return np.where(n > 0, p * (1.0 - p), np.nan)


def _majority_class_error(table, m) -> np.ndarray:
    """Per slice, the error of predicting its majority class on its rows: 1 - (the largest class's
    rows) / (rows), the class counts walked over the kept rows (NaN without them)."""
    if table.kept_rows is None or table.kept_rows.outcomes is None:
        return np.full(len(table), np.nan)
    o = table.outcome(m.name)
    y = np.where(np.isnan(o.values), np.nan, np.asarray(o.target, dtype=float))
    ok = ~np.isnan(y)
    onehot = np.zeros((len(y), int(np.nanmax(y)) + 1 if ok.any() else 1))
    onehot[np.flatnonzero(ok), y[ok].astype(np.int64)] = 1.0
    counts = walk_tallies(walk_order(table.lattice.parent, table.codes), table.kept_rows.codes, onehot)
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, 1.0 - counts.max(axis=1) / n, np.nan)


def _entropy(p: np.ndarray) -> np.ndarray:
    """The log loss of predicting the share ``p`` of positives on rows with that share: -p log p -
    (1 - p) log(1 - p) (0 at p = 0 or 1)."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return -(np.where(p > 0, p * np.log(p), 0.0) + np.where(p < 1, (1.0 - p) * np.log1p(-p), 0.0))


#: the tests behind a defect or a hard cohort (each one-sided, corrected over every slice)
DEFECT_TESTS = ("harder", "short", "beaten")
#: where the 0/1 error's and Brier's natural scale ends (the error of a coin flip)
_CHANCE = {3: 0.5, 4: 0.25}


def _natural_scale(kind: int):
    """The scale on which an error metric's lift is compared (a function and its derivative):
    the one on which a noisier target moves the baseline's error and the model's alike, so a
    noisier target leaves the lift unchanged. Squared error: the error itself (independent noise
    adds its variance to both); absolute error: its square (exact for normal errors, whose mean
    absolute value is proportional to their standard deviation); 0/1 error: -log(1 - 2 error)
    (labels flipped with probability eta multiply 1 - 2 error of every predictor by 1 - 2 eta);
    Brier: -log(1 - 4 Brier) (for calibrated scores, 1 - 4 Brier is multiplied by (1 - 2 eta)^2).
    The two logs end at chance (an error of 1/2, a Brier score of 1/4): NaN there."""
    if kind == 2:
        return (lambda x: x * x), (lambda x: 2.0 * x)
    if kind in _CHANCE:
        k = 1.0 / _CHANCE[kind]

        def phi(x):
            x = np.asarray(x, dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(x < 1.0 / k, -np.log1p(-k * x), np.nan)

        def dphi(x):
            x = np.asarray(x, dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(x < 1.0 / k, k / (1.0 - k * x), np.nan)

        return phi, dphi
    return (lambda x: x), (lambda x: np.ones_like(np.asarray(x, dtype=float)))


def attribute_groups(codes: np.ndarray) -> np.ndarray:
    """Per itemset, the id of its set of attributes: itemsets with the same id are cells of one
    partition of the rows (the whole dataset's id is that of the empty set)."""
    present = np.ascontiguousarray(codes >= 0)
    if present.shape[1] == 0:
        return np.zeros(present.shape[0], dtype=np.int64)
    packed = np.packbits(present, axis=1)
    view = packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]
    return np.unique(view, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _elsewhere(group, n, base, err, c_bb, c_be, c_ee, dphi) -> dict:
    """Per itemset, its partition's pooled baseline and error (the slices on the same attributes,
    each with its own constant: the slice compared with the other values of its attributes) and
    the variances and covariances the tests need (each row's influence, cell by cell)."""
    ok = (n > 0) & np.isfinite(base) & np.isfinite(err) & np.isfinite(c_bb) & np.isfinite(c_ee)
    w = np.where(ok, n, 0.0)
    g = group
    size = int(g.max(initial=-1)) + 1

    def total(x):
        return np.bincount(g, weights=np.where(ok, x, 0.0), minlength=size)

    nj = total(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        bj = total(w * np.nan_to_num(base)) / nj
        ej = total(w * np.nan_to_num(err)) / nj
        aj, gj = dphi(bj), dphi(ej)
        db = np.nan_to_num(base) - bj[g]
        de = np.nan_to_num(err) - ej[g]
        var_b = (total(c_bb) + total(w * db * db)) / (nj * nj)
        dl = aj[g] * db - gj[g] * de
        var_l = (aj * aj * total(c_bb) - 2.0 * aj * gj * total(c_be) + gj * gj * total(c_ee) + total(w * dl * dl)) \
            / (nj * nj)
    return {"n": nj[g], "base": bj[g], "err": ej[g], "a": aj[g], "g": gj[g], "var_base": var_b[g],
            "var_lift": var_l[g]}


def _part_base(group: np.ndarray, n: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Per itemset, its partition's pooled baseline (see :func:`_elsewhere`)."""
    ok = (n > 0) & np.isfinite(base)
    w = np.where(ok, n, 0.0)
    size = int(group.max(initial=-1)) + 1
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.bincount(group, weights=w * np.nan_to_num(base), minlength=size) / \
            np.bincount(group, weights=w, minlength=size)
    return pooled[group]


def _defect_test(table, k: int, m, walk) -> dict:
    """Per slice: the constant baseline, the achievable errors and the three one-sided tests
    behind the verdict of an error metric (see :func:`error_verdicts`), from the moment sums of
    :func:`divergence.stats.verdict_walk.walk_verdict`. "Elsewhere" is the slice's partition: the slices on
    the same attributes (the other values of its items), each with its own constant, pooled; a
    comparison with the whole dataset instead would credit the whole dataset's constant with the
    variance between those values, and a slice on a feature the model uses would always look
    easier than it is. Each difference has its variance by the delta method from each row's
    influence (the slice is one of the pooled cells; the whole dataset holds the slice).

    The baseline is the slice's constant for a real-valued target (its error measures how much
    the target varies); for a 0/1 target (0/1 error, Brier) the constant's error is the class
    balance only, blind to noisier labels, so the baseline there is the best model-free
    reference fitted within the slice (its constant, or one majority class or base rate per
    item of an attribute it does not fix, leave-one-out).

    ``harder``: the baseline's error minus the partition's; ``short``: the lift shortfall, the
    partition's lift minus the slice's, the lift being phi(baseline) - phi(model error) on the
    metric's natural scale phi (:func:`_natural_scale`; the difference itself where the scale
    ends); ``beaten``: phi(E) - phi(A) (A the achievable error, any reference, the model's offset
    removed included) minus the whole dataset's: the model falls short of a reference fitted
    within the slice by more than it does on the whole dataset.
    """
    kind = _BASELINE_CODE[m.baseline]
    if walk is None or kind in (5, 6):  # the log loss's and the classes' references are not walked: from the tallies
        return _defect_from_tallies(table, k, m, kind)
    o = table.outcome(m.name)
    e = np.asarray(o.values, dtype=float)
    y = np.where(np.isnan(e), np.nan, np.asarray(o.target, dtype=float))
    pr = np.where(np.isnan(e), np.nan, np.asarray(o.prediction, dtype=float))
    n_values = np.array([b.n_items for b in table.bins], dtype=np.int64)
    out = walk_verdict(walk(), table.kept_rows.codes, np.ascontiguousarray(table.codes, dtype=np.int64), n_values,
                       np.ascontiguousarray(e), np.ascontiguousarray(np.nan_to_num(y)),
                       np.ascontiguousarray(np.nan_to_num(pr)), int(kind))
    c = {name: out[:, j] for j, name in enumerate(VERDICT_COLUMNS)}
    n, big_e, ach, free = c["n"], c["error"], c["achievable"], c["free"]
    binary = kind in _CHANCE
    phi, dphi = _natural_scale(kind)
    ident, one = _natural_scale(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if binary:
            base = np.where(n >= 2, free, np.nan)
            c_bb = c["free2"] - n * free * free
            c_be = c["free_err"] - n * free * big_e
        else:
            base = c["baseline"]
            c_bb = c["beta2"] - n * base * base
            c_be = c["beta_err"] - n * base * big_e
        c_ee = c["err2"] - n * big_e * big_e
        group = attribute_groups(table.codes)
        est, se = {}, {}
        # harder: the baseline against its partition's
        part = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, one)
        est["harder"] = base - part["base"]
        se["harder"] = np.sqrt(np.maximum(c_bb / (n * n) + part["var_base"] - 2.0 * c_bb / (n * part["n"]), 0.0))

        def shortfall(phi, dphi):
            p = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, dphi)
            a_s, g_s = dphi(base), dphi(big_e)
            lift = phi(base) - phi(big_e)
            own = a_s * a_s * c_bb - 2.0 * a_s * g_s * c_be + g_s * g_s * c_ee
            cross = a_s * p["a"] * c_bb - (a_s * p["g"] + g_s * p["a"]) * c_be + g_s * p["g"] * c_ee
            var = np.maximum(own / (n * n) + p["var_lift"] - 2.0 * cross / (n * p["n"]), 0.0)
            return lift, (phi(p["base"]) - phi(p["err"])) - lift, np.sqrt(var)

        lift, short, short_se = shortfall(phi, dphi)
        if binary:
            # where the model's error reaches chance (the baselines below it), the difference
            # itself; where a baseline does, these columns predict nothing there and the lift is
            # not compared (noise would shrink a difference on any other scale)
            lift_i, short_i, short_se_i = shortfall(ident, one)
            chance = _CHANCE[kind]
            informed = (base < chance) & (_part_base(group, n, base) < chance)
            use = np.isfinite(short) & np.isfinite(short_se)
            lift, short, short_se = (np.where(use, x, np.where(informed, y, np.nan))
                                     for x, y in ((lift, lift_i), (short, short_i), (short_se, short_se_i)))
        est["short"], se["short"] = short, short_se

        est["beaten"], se["beaten"] = _beaten(c, c_ee, phi, dphi)
        if binary:
            b_i, s_i = _beaten(c, c_ee, ident, one)
            use = np.isfinite(est["beaten"]) & np.isfinite(se["beaten"])
            est["beaten"], se["beaten"] = np.where(use, est["beaten"], b_i), np.where(use, se["beaten"], s_i)
    dof, p = _one_sided_p(est, se, n)
    # the constant baseline of the additive kinds as the tallies give it (every path alike)
    constant = np.where(n > 0, c["baseline"], np.nan) if kind == 2 else _baseline(table, m)
    return {"baseline": constant, "reference": np.where(n >= 2, ach, np.nan), "free": np.where(n >= 2, free, np.nan),
            "lift": lift, "est": est, "se": se, "dof": dof, "p": p, "rows": True}


def _beaten(c: dict, c_ee: np.ndarray, phi, dphi) -> tuple[np.ndarray, np.ndarray]:
    """``beaten``'s estimate, (phi(E) - phi(A)) of the slice minus the whole dataset's (E the
    model's error, A the achievable one), and its standard error, from the walk's sums ``c``."""
    n, big_e, ach = c["n"], c["error"], c["achievable"]
    ge, ga = dphi(big_e), dphi(ach)
    c_rr = c["ref2"] - n * ach * ach
    c_re = c["ref_err"] - n * ach * big_e
    x_rr0 = c["ref_ref0"] - ach * c["ref0"]
    x_er0 = c["err_ref0"] - big_e * c["ref0"]
    own = ge * ge * c_ee - 2.0 * ge * ga * c_re + ga * ga * c_rr
    cross = ge * ge[0] * c_ee - ge * ga[0] * x_er0 - ga * ge[0] * c_re + ga * ga[0] * x_rr0
    n0 = n[0]
    var = np.maximum(own / (n * n) + own[0] / (n0 * n0) - 2.0 * cross / (n * n0), 0.0)
    gap = phi(big_e) - phi(ach)
    return gap - gap[0], np.sqrt(var)


def _one_sided_p(est: dict, se: dict, n: np.ndarray) -> tuple[np.ndarray, dict]:
    """The degrees of freedom and each defect test's one-sided p-value (NaN for the whole dataset
    and where a slice has fewer than 2 rows or no estimate)."""
    dof = np.maximum(n - 1.0, 1.0)
    p = {}
    for name in DEFECT_TESTS:
        q = _one_sided_t(est[name], se[name], dof)
        q = np.where((n >= 2) & np.isfinite(est[name]) & np.isfinite(se[name]), q, np.nan)
        q[0] = np.nan
        p[name] = q
    return dof, p


def _one_sided_t(diff: np.ndarray, se: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """P(T >= diff / se), T Student's t with ``dof`` degrees of freedom (0 or 1 where se is 0)."""
    from scipy import special as sp

    with np.errstate(invalid="ignore", divide="ignore"):
        p = sp.stdtr(dof, -diff / np.where(se > 0, se, 1.0))
        return np.where(se > 0, p, np.where(diff > 0, 0.0, 1.0))


def _defect_from_tallies(table, k: int, m, kind: int) -> dict:
    """Without rows: the constant baseline from the tallies and, for 0/1 error and Brier (the
    target's tallies give their constant baseline's variance), the baseline against its
    partition's and the lift shortfall, the latter with a conservative variance (Minkowski's
    bound on the covariances the rows would give). The references need the rows; so does the
    variance of a real target's baseline."""
    base = _baseline(table, m)
    n, s, q = metric_tallies(table.tallies, k)
    big_e = np.asarray(table.columns[m.name], dtype=float)
    nan = np.full(len(table), np.nan)
    est = {name: nan.copy() for name in DEFECT_TESTS}
    se = {name: nan.copy() for name in DEFECT_TESTS}
    lift = base - big_e
    if kind in (3, 4, 5, 6):
        with np.errstate(invalid="ignore", divide="ignore"):
            ones = m.target_shift * n + table.tallies[:, m.aux] if m.aux >= 0 else np.full(len(n), np.nan)
            zeros = n - ones
            p = ones / n
            # a row's baseline error: 1 off the slice's majority class; (y - p)^2 for the base rate;
            # -log p on a positive and -log(1 - p) on a negative for the log loss's
            if kind in (3, 6):  # a row's baseline error is 0 or 1
                s_bb = n * base
            elif kind == 4:
                s_bb = ones * (1 - p) ** 4 + zeros * p ** 4
            else:
                s_bb = (ones * np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0) ** 2
                        + zeros * np.where(p < 1, np.log1p(-np.where(p < 1, p, 0.0)), 0.0) ** 2)
            c_bb = s_bb - n * base * base
            c_ee = np.maximum(q - s * s / n, 0.0)
            c_be = -np.sqrt(np.maximum(c_bb, 0.0) * c_ee)  # the worst case for the variance below
            group = attribute_groups(table.codes)
            one = _natural_scale(1)[1]
            part = _elsewhere(group, n, base, big_e, c_bb, c_be, c_ee, one)
            est["harder"] = base - part["base"]
            se["harder"] = np.sqrt(np.maximum(c_bb / (n * n) + part["var_base"] - 2.0 * c_bb / (n * part["n"]), 0.0))
            lift = base - big_e
            est["short"] = (part["base"] - part["err"]) - lift
            sd = (np.sqrt(np.maximum(c_ee, 0.0)) + np.sqrt(np.maximum(c_bb, 0.0))) / n
            se["short"] = sd + np.sqrt(np.maximum(part["var_lift"], 0.0))
    dof, p = _one_sided_p(est, se, n)
    # the lift reliably no lower: the shortfall reliably below 0
    p_normal = _one_sided_t(-est["short"], se["short"], dof)
    p_normal = np.where(np.isfinite(p["short"]), p_normal, np.nan)
    return {"baseline": base, "reference": nan, "free": nan, "lift": lift, "est": est, "se": se, "dof": dof, "p": p,
            "p_normal": p_normal, "rows": False}


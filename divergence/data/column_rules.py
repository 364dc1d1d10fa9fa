"""Columns measured against the model: read the target better than it, another model's outputs, near copies.

Three rules of the attribute screen (:mod:`divergence.data.columns`) that need the model's output, all
measured on the values (never on names), on a sample of :data:`SAMPLE_ROWS` rows:

- **after the outcome**: a column from which the target is read far better than from the model
  (the best guess per value of the column alone, scored leave-one-out so that many rare values
  gain nothing by chance, has at most :data:`READ_ERROR_SHARE` of the model's errors and of the
  errors of always guessing the commonest class), or one of whose values (or its presence, or
  its absence) marks a group of rows nearly all one class (at least :data:`MARK_PURITY`) where the
  model predicts that class on fewer than half of them: ``event``, ``end``, ``r_days_from_arrest``,
  ``is_violent_recid`` in the raw COMPAS file, recorded after the outcome.
- **another model**: a column on the prediction's labels that agrees with it far beyond chance
  (Cohen's kappa at least :data:`OTHER_LABELS_KAPPA`), or a numeric column that orders the rows like
  the prediction (AUC at least :data:`OTHER_SCORE_AUC` against the predicted labels; rank correlation
  :data:`OTHER_SCORE_RHO` with a score or a regressor's prediction); a column the prediction is a
  threshold of is the model's own score.
- **near copy**: a column that another attribute gives on at least :data:`COPY_AGREEMENT` of rows
  and that gives it back as well (one kept, the first in the table).

Where the line is, and why (docs/discretization.md, "Default attributes"): a genuine attribute a weak model
ignores stays an attribute (its slices are findings) until it is sharper than anything measured
on real attributes: it would have to halve both the model's errors and the commonest-class guess's
errors on its own, or mark a group of rows 90% one class that the model gets wrong on most of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .roles import label_key
from .screen_sample import (
    BINS,
    MANY_VALUES,
    SAMPLE_ROWS,
    Sample,
    binned,
    coded_values,
    factorized,
    groups,
    numeric_values,
    sample_index,
)

#: fewer rows than this and no column is left out by a dependency (too few to tell it from chance)
MIN_ROWS = 20

__all__ = ["model_rules", "near_copies", "ScreenTimeout", "screen_timeout_message", "check_deadline", "Found", "READ_ERROR_SHARE", "MARK_PURITY", "MARK_ROWS",
           "MARK_SHARE", "MARK_AUC_MARGIN", "most_accurate_threshold", "OTHER_LABELS_KAPPA", "RIVAL_KAPPA", "RIVAL_SHARE", "RIVAL_RHO", "scores_behind", "OTHER_SCORE_AUC", "OTHER_SCORE_RHO", "COPY_AGREEMENT", "COPY_ERROR_SHARE",
           "SAMPLE_ROWS", "BINS", "MIN_ROWS", "MANY_VALUES", "groups", "sample_index", "auc_of", "Sample", "binned",
           "coded_values", "factorized",
           "model_of", "numeric_values", "rank_rho"]

#: alone, the column has at most this share of the model's errors and of the commonest-class guess's errors
READ_ERROR_SHARE = 0.5
#: a value marking rows of which at least this share are one class (and the other class at most half as
#: common there as in the whole table) ...
MARK_PURITY = 0.9
#: ... on at least this many rows and this share of rows, where the model predicts that class on fewer than
#: half of them
MARK_ROWS = 30
MARK_SHARE = 0.01
#: ... or, for a score, where it tells them from the other class at most this much better (AUC) than it
#: tells any rows of their class: whatever the threshold, it misses what marks them
MARK_AUC_MARGIN = 0.05
#: labels agreeing with the prediction with at least this Cohen's kappa are another model's
OTHER_LABELS_KAPPA = 0.6
#: labels at least as good a guess of the target as the model's (Cohen's kappa with the target), agreeing
#: with the prediction with at least this kappa, are another model's too
RIVAL_KAPPA = 0.2
#: "as good a guess": at least this share of the model's kappa with the target
RIVAL_SHARE = 0.9
#: a regressor's rival: values as close to the target as the prediction, rank correlation with it at least this
RIVAL_RHO = 0.7
#: a numeric column whose AUC against the predicted labels is at least this (or at most 1 minus it) ...
OTHER_SCORE_AUC = 0.95
#: ... or whose rank correlation with the score (or a regressor's prediction) is at least this in size
OTHER_SCORE_RHO = 0.9
#: two columns each giving the other on at least this share of rows (leave-one-out) ...
COPY_AGREEMENT = 0.95
#: ... with at most this share of the errors of guessing the other's commonest value, are near copies
COPY_ERROR_SHARE = 0.25


@dataclass(frozen=True)
class Found:
    """A column left out by a rule: its kind (``after the outcome``, ``another model``, ``leakage``
    or ``near copy``), the reason in one sentence, and what it is another model's output of
    (``labels``/``score``) or a copy of."""

    kind: str
    reason: str
    output: str = ""   # "labels" or "score" for another model's outputs
    of: str = ""       # the column a near copy copies


def _label_codes(s: pd.Series, index: dict) -> np.ndarray:
    """The column's values as codes of the labels in ``index`` (by :func:`.roles.label_key`), -1 where missing or
    not a label."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    lookup = np.array([index.get(label_key(u), -1) for u in uniques] + [-1], dtype=np.int64)
    return lookup[codes]


def loo_accuracy(codes: np.ndarray, k: int, y: np.ndarray, ky: int) -> float:
    """Share of rows whose class is the commonest one among the other rows with their code (a tie, a
    value seen once included, falls back to the commonest class overall): the best guess per value,
    scored without the row it guesses, so that many rare values gain nothing by chance."""
    if k * ky > 8 * len(codes):  # many values on both sides: the pairs seen, not every cell
        return _loo_accuracy_sparse(codes, y, ky)
    table = np.bincount(codes * ky + y, minlength=k * ky).reshape(k, ky).astype(float)
    overall = int(table.sum(axis=0).argmax())
    order = np.argsort(-table, axis=1, kind="stable")
    first = order[:, 0]
    a = table[np.arange(k), first]
    b = table[np.arange(k), order[:, 1]] if ky > 1 else np.zeros(k)
    # a row of the commonest class, left out, leaves a - 1 against b; any other row leaves a against b - 1
    tie_right = np.where(first == overall, a, 0.0)
    right = np.where(a - 1 > b, a, np.where(a - 1 == b, tie_right, 0.0))
    return float(right.sum() / len(codes))


def _loo_accuracy_sparse(codes: np.ndarray, y: np.ndarray, ky: int) -> float:
    """:func:`loo_accuracy` from the (code, class) pairs that occur: the same count, without a table of
    every code by every class."""
    joint, count = np.unique(codes.astype(np.int64) * ky + y, return_counts=True)
    xs, ys = joint // ky, joint % ky
    order = np.lexsort((ys, -count, xs))  # per code: commonest class first, the lowest class among ties
    xs, ys, count = xs[order], ys[order], count[order]
    first_of = np.r_[True, xs[1:] != xs[:-1]]
    starts = np.nonzero(first_of)[0]
    a = count[starts].astype(float)
    first = ys[starts]
    nxt = starts + 1
    has_second = (nxt < len(xs)) & ~np.r_[first_of, True][np.minimum(nxt, len(xs))]
    b = np.where(has_second, count[np.minimum(nxt, len(xs) - 1)], 0).astype(float)
    overall = int(np.bincount(y, minlength=ky).argmax())
    tie_right = np.where(first == overall, a, 0.0)
    right = np.where(a - 1 > b, a, np.where(a - 1 == b, tie_right, 0.0))
    return float(right.sum() / len(codes))


def _kappa(a: np.ndarray, b: np.ndarray, k: int) -> tuple[float, float]:
    agree = float(np.mean(a == b))
    pa = np.bincount(a, minlength=k) / len(a)
    pb = np.bincount(b, minlength=k) / len(b)
    chance = float(pa @ pb)
    return agree, (agree - chance) / (1 - chance) if chance < 1 else 0.0


def auc_of(x: np.ndarray, labels: np.ndarray) -> float | None:
    ok = ~np.isnan(x)
    x, lab = x[ok], labels[ok]
    n1 = int(lab.sum())
    n0 = len(lab) - n1
    if n1 == 0 or n0 == 0 or len(x) < MARK_ROWS:
        return None
    r = pd.Series(x).rank(method="average").to_numpy()
    return float((r[lab == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def rank_rho(x: np.ndarray, y: np.ndarray) -> float | None:
    ok = ~np.isnan(x) & ~np.isnan(y)
    if ok.sum() < MARK_ROWS or len(np.unique(x[ok])) < 3:
        return None
    r = pd.Series(x[ok]).rank().corr(pd.Series(y[ok]).rank())
    return None if pd.isna(r) else float(r)


def _pct(x: float) -> str:
    return f"{x:.1%}"


@dataclass
class _Model:
    """The target and the model's output on the rows measured."""

    name: str              # "the prediction 'pred_gb'" / "the prediction ('decile_score' >= 8)"
    target_name: str
    y: np.ndarray          # target codes
    ky: int
    labels: list           # target values, in code order
    p: np.ndarray | None   # predicted labels as target codes (classification)
    p_raw: pd.Series | None  # the prediction's values (labels), for the label-set check
    score: np.ndarray | None  # the score, or a regressor's prediction
    score_name: str = ""
    regression: bool = False
    t: np.ndarray | None = None  # a regressor's target
    threshold_free: bool = False  # the labels are the score at its most accurate threshold (no labels given)


def model_of(df: pd.DataFrame, target, prediction, score, threshold) -> _Model | None:
    """The target and the model's output as the rules measure them, or None (no model, or labels
    the target does not share)."""
    if target is None or target not in df.columns:
        return None
    t = df[target]
    ok = t.notna().to_numpy()
    t_num = numeric_values(t)
    p_series = df[prediction] if prediction is not None and prediction in df.columns else None
    s_num = numeric_values(df[score]) if score is not None and score in df.columns else None
    distinct_t = pd.unique(t[ok])
    if t_num is not None and len(distinct_t) > 10:  # a regressor
        pred = numeric_values(p_series) if p_series is not None else None
        if pred is None:
            return None
        return _Model(f"the prediction '{prediction}'", str(target), np.zeros(0, np.int64), 0, [], None, None,
                      pred, f"the prediction '{prediction}'", regression=True, t=t_num)
    if len(distinct_t) < 2 or len(distinct_t) > 10:
        return None
    labels = sorted(distinct_t.tolist(), key=label_key)
    index = {label_key(v): i for i, v in enumerate(labels)}
    y = _label_codes(t, index)
    if p_series is not None:
        p = _label_codes(p_series, index)
        name = f"the prediction '{prediction}'"
    elif s_num is not None and threshold is not None and len(labels) == 2:
        # the rules read the model at its most accurate threshold, not the one chosen: whether a column
        # leaks the target or is another model's output is a property of the columns, the same at
        # every threshold (issue 30 point 6)
        best = most_accurate_threshold(s_num, y)
        with np.errstate(invalid="ignore"):
            p = np.where(np.isnan(s_num), -1, (s_num >= best).astype(np.int64))
        p_series = pd.Series(np.where(p < 0, np.nan, p), index=df.index)
        name = f"the score '{score}' at its most accurate threshold ({best:g})"
    else:
        return None
    return _Model(name, str(target), y, len(labels), labels, p, p_series, s_num,
                  f"the score '{score}'" if s_num is not None else "",
                  threshold_free=prediction is None or prediction not in df.columns)


def most_accurate_threshold(score: np.ndarray, y: np.ndarray) -> float:
    """The threshold t of ``score >= t`` predicting class 1 of ``y`` (codes 0/1; -1 unknown) right on the
    most rows (the lowest such t), over the score's values; rows without a score or a class skipped."""
    ok = ~np.isnan(score) & (y >= 0)
    s, yy = score[ok], y[ok]
    if s.size == 0:
        return float("inf")
    values, inverse = np.unique(s, return_inverse=True)
    pos = np.bincount(inverse, weights=(yy == 1).astype(float), minlength=values.size)
    neg = np.bincount(inverse, weights=(yy == 0).astype(float), minlength=values.size)
    # predicting 1 from values[j] on: the positives at or above it, the negatives below it
    right = pos[::-1].cumsum()[::-1] + np.concatenate([[0.0], neg.cumsum()[:-1]])
    right = np.append(right, neg.sum())  # nothing predicted 1
    j = int(np.argmax(right))
    return float(values[j]) if j < values.size else float("inf")


def model_rules(df: pd.DataFrame, candidates: list[str], *, target=None, prediction=None, score=None,
                threshold=None, deadline: float | None = None, sample: Sample | None = None) -> dict[str, Found]:
    """The candidate columns another model's outputs, or read the target far better than the model
    (see the module), each with its reason; measured on a seeded sample of large tables (``sample``:
    that of ``df``, its columns read once for every rule of the screen)."""
    rows = sample if sample is not None else Sample(df)
    m = model_of(rows.roles(target, prediction, score), target, prediction, score, threshold)
    if m is None:
        return {}
    out: dict[str, Found] = {}
    for done, col in enumerate(candidates):
        if done % 16 == 0:
            check_deadline(deadline, f"measured {done:,} of {len(candidates):,} attributes against the model")
        found = (_other_model(rows, col, m) or _after_outcome(rows, col, m)
                 or _other_model(rows, col, m, late=True))
        if found is not None:
            out[col] = found
    return out


def _other_model(sample: Sample, col, m: _Model, late: bool = False) -> Found | None:
    x = sample.numeric(col)
    if m.regression:
        t, pred = m.t, m.score
        assert t is not None and pred is not None  # a regressor has both (model_of)
        rho = rank_rho(x, pred) if x is not None else None
        if rho is not None and abs(rho) >= OTHER_SCORE_RHO:
            return Found("another model", f"another model's predictions: orders the rows like {m.name} "
                                          f"(rank correlation {rho:.2f})", output="prediction")
        # on the target's scale, as close to it as the model
        if late and x is not None and rho is not None and rho >= RIVAL_RHO:
            ok = ~np.isnan(x) & ~np.isnan(t) & ~np.isnan(pred)
            col_sse = float(np.sum((t[ok] - x[ok]) ** 2))
            model_sse = float(np.sum((t[ok] - pred[ok]) ** 2))
            if col_sse <= model_sse:
                return Found("another model", f"another model's predictions: as close to '{m.target_name}' as "
                                              f"{m.name} ({col_sse / model_sse:.0%} of its squared error), ranking "
                                              f"the rows like it (rank correlation {rho:.2f})", output="prediction")
        return None
    mp = m.p
    assert mp is not None  # a classifier's labels (model_of)
    ok = (m.y >= 0) & (mp >= 0)
    # on the prediction's labels: agrees with it far beyond chance
    # its distinct values counted once for every rule (pd.unique of the values present counts as many)
    values = {label_key(v) for v in sample.distinct(col)} if len(sample.factorized(col)[1]) <= m.ky else set()
    label_set = {label_key(v) for v in m.labels}
    if len(values) >= 2 and values <= label_set and sample.present(col).mean() >= 0.5:
        codes = _label_codes(sample.series(col), {label_key(v): i for i, v in enumerate(m.labels)})
        both = ok & (codes >= 0)
        if both.sum() >= MARK_ROWS:
            agree, kappa = _kappa(codes[both], mp[both], m.ky)
            if kappa >= OTHER_LABELS_KAPPA:
                return Found("another model", f"another model's labels: agrees with {m.name} on {_pct(agree)} "
                                              f"of rows (Cohen's kappa {kappa:.2f})", output="labels")
            if late:  # as good a guess of the target as the model, and agreeing with it beyond chance
                acc, k_col = _kappa(codes[both], m.y[both], m.ky)
                model_acc, k_model = _kappa(mp[both], m.y[both], m.ky)
                if kappa >= RIVAL_KAPPA and k_col >= RIVAL_SHARE * k_model:
                    return Found("another model", f"another model's labels: right about '{m.target_name}' on "
                                                  f"{_pct(acc)} of rows (the model: {_pct(model_acc)}), agreeing with "
                                                  f"{m.name} on {_pct(agree)} (Cohen's kappa {kappa:.2f})",
                                 output="labels")
        return None
    if late or x is None or len(np.unique(x[~np.isnan(x)])) <= MANY_VALUES // 4:
        return None
    if m.score is not None:
        rho = rank_rho(x, m.score)
        if rho is not None and abs(rho) >= OTHER_SCORE_RHO:
            return Found("another model", f"another model's score: orders the rows like {m.score_name} "
                                          f"(rank correlation {rho:.2f})", output="score")
    if m.ky == 2:
        auc = auc_of(x[ok], mp[ok].astype(float))
        if auc is not None and max(auc, 1 - auc) >= OTHER_SCORE_AUC:
            if max(auc, 1 - auc) == 1.0:
                return Found("leakage", f"the model's own score: {m.name} is a threshold of it")
            return Found("another model", f"another model's score: orders the rows like {m.name} "
                                          f"(AUC {max(auc, 1 - auc):.3f})", output="score")
    return None


def scores_behind(df: pd.DataFrame, candidates: list[str], labels: list[str],
                  sample: Sample | None = None) -> dict[str, Found]:
    """Numeric candidates that another model's labels are a threshold of (its score); ``sample`` as in
    :func:`model_rules`."""
    rows = sample if sample is not None else Sample(df)
    out: dict[str, Found] = {}
    for col in candidates:
        x = rows.numeric(col)
        if x is None or len(np.unique(x[~np.isnan(x)])) <= MANY_VALUES // 4:
            continue
        for lab in labels:
            codes, k, missing = rows.groups(lab)
            if k - int(missing.any()) != 2:
                continue
            ok = ~missing
            auc = auc_of(x[ok], codes[ok].astype(float))
            if auc is not None and max(auc, 1 - auc) == 1.0:
                out[col] = Found("another model", f"another model's score: the labels of '{lab}' are a threshold "
                                                  "of it", output="score")
                break
    return out


def _after_outcome(sample: Sample, col, m: _Model) -> Found | None:
    if m.regression:
        return _reads_numeric_target(sample, col, m)
    assert m.p is not None  # a classifier's labels (model_of)
    ok = (m.y >= 0) & (m.p >= 0)
    y, p = m.y[ok], m.p[ok]
    n = len(y)
    if n < MARK_ROWS:
        return None
    every = n == len(ok)  # the column's groups on every row measured: those shared by the rules
    codes, k, missing = sample.groups(col) if every else groups(sample.series(col)[ok])
    model_acc = float(np.mean(y == p))
    class_share = np.bincount(y, minlength=m.ky) / n
    base_acc = float(class_share.max())
    acc = loo_accuracy(codes, k, y, m.ky)
    err, model_err, base_err = 1 - acc, 1 - model_acc, 1 - base_acc
    if err <= READ_ERROR_SHARE * model_err and err <= READ_ERROR_SHARE * base_err:
        model = m.name if m.threshold_free else "the model"
        return Found("after the outcome", f"the target '{m.target_name}' is read from it alone on {_pct(acc)} of "
                                          f"rows, from {model} on {_pct(model_acc)} (recorded after the outcome?)")
    # a value, the column's presence or its absence marking rows nearly all one class the model misses:
    # labels miss them when they predict that class on fewer than half of them; a score, when it ranks
    # them against the other class no better than it ranks any rows of their class (whatever threshold)
    scores = m.score[ok] if m.score is not None and m.ky == 2 and m.threshold_free else None
    auc_1 = None
    if scores is not None:
        auc_1 = auc_of(scores, (y == 1).astype(float))
        scores = None if auc_1 is None else scores
    # each value's rows by class, from one count (a value's rows are read only when they are nearly all one class)
    by_value = np.bincount(codes * m.ky + y, minlength=k * m.ky).reshape(k, m.ky)
    marks: list[tuple[int, str | None]] = [(c, None) for c in range(k)]
    if missing.any() and (~missing).sum() > 0:
        marks.append((-1, "present"))
    best = None
    for code, what in marks:
        if code < 0:
            rows = ~missing
            size = int(rows.sum())
            counts = np.bincount(y[rows], minlength=m.ky)
        else:
            counts = by_value[code]
            size = int(counts.sum())
        if size < max(MARK_ROWS, MARK_SHARE * n) or size == n:
            continue
        c = int(counts.argmax())
        purity = counts[c] / size
        if purity < MARK_PURITY or 1 - purity > 0.5 * (1 - class_share[c]):
            continue
        if code >= 0:
            rows = codes == code
        predicted = float(np.mean(p[rows] == c))
        if scores is not None:  # the score singles the group out no better than any rows of that class
            assert auc_1 is not None  # scores are kept only with their AUC
            lift = _group_auc(scores, y, rows, c)
            if lift is None or lift > (auc_1 if c == 1 else 1.0 - auc_1) + MARK_AUC_MARGIN:
                continue
        elif predicted >= 0.5:
            continue
        gain = size * (purity - predicted)
        if best is None or gain > best[0]:
            s = sample.series(col)
            label = what or _value_label(s if every else s[ok], codes, int(codes[rows][0]))
            best = (gain, label, size, purity, c, predicted)
    if best is None:
        return None
    _, label, size, purity, c, predicted = best
    where = "where it is present" if label == "present" else f"where it is {label}"
    if scores is not None:
        return Found("after the outcome", f"{where} ({size:,} rows), {_pct(purity)} of rows are "
                                          f"'{m.target_name}'={m.labels[c]!r}, and {m.score_name} ranks them no "
                                          "higher than any rows of that class (recorded after the outcome?)")
    return Found("after the outcome", f"{where} ({size:,} rows), {_pct(purity)} of rows are "
                                      f"'{m.target_name}'={m.labels[c]!r}, and the model predicts that on "
                                      f"{_pct(predicted)} of them (recorded after the outcome?)")


def _group_auc(scores: np.ndarray, y: np.ndarray, rows: np.ndarray, c: int) -> float | None:
    """How well the score tells the group's rows of class ``c`` from the rows of the other class (the
    AUC, oriented so that 1 is perfect for class c); None where either side is empty."""
    inside = rows & (y == c)
    sel = inside | (y != c)
    auc = auc_of(scores[sel], inside[sel].astype(float))
    if auc is None:
        return None
    return auc if c == 1 else 1.0 - auc


def _value_label(s: pd.Series, codes: np.ndarray, code: int) -> str:
    """How a group code reads: the value, missing, or a numeric bin's range."""
    vals = s[codes == code]
    if vals.isna().all():
        return "missing"
    x = numeric_values(s)
    if x is not None and len(pd.unique(x[~np.isnan(x)])) > MANY_VALUES:
        v = x[codes == code]
        return f"between {np.nanmin(v):g} and {np.nanmax(v):g}"
    return repr(vals.iloc[0].item() if isinstance(vals.iloc[0], np.generic) else vals.iloc[0])


def _reads_numeric_target(sample: Sample, col, m: _Model) -> Found | None:
    """A regressor's target read from the column alone (group means, leave-one-out) with at most
    READ_ERROR_SHARE of the model's squared error and of the variance."""
    assert m.t is not None and m.score is not None  # a regressor has both (model_of)
    ok = ~np.isnan(m.t) & ~np.isnan(m.score)
    t, pred = m.t[ok], m.score[ok]
    if len(t) < MARK_ROWS:
        return None
    codes, k, _ = sample.groups(col) if len(t) == len(ok) else groups(sample.series(col)[ok])
    n = np.bincount(codes, minlength=k).astype(float)
    total = np.bincount(codes, weights=t, minlength=k)
    squares = np.bincount(codes, weights=t * t, minlength=k)
    within = squares - np.divide(total * total, n, out=np.zeros(k), where=n > 0)
    loo = np.where(n > 1, (n / np.maximum(n - 1, 1)) ** 2 * within, 0.0)
    single = n == 1  # a value seen once is guessed by the mean of the other rows
    loo_single = ((t - (t.sum() - t) / max(len(t) - 1, 1)) ** 2)[single[codes]].sum()
    col_sse = float(loo.sum() + loo_single)
    model_sse = float(np.sum((t - pred) ** 2))
    var_sse = float(np.sum((t - t.mean()) ** 2))
    if var_sse > 0 and col_sse <= READ_ERROR_SHARE * model_sse and col_sse <= READ_ERROR_SHARE * var_sse:
        return Found("after the outcome", f"the target '{m.target_name}' is read from it alone with "
                                          f"{col_sse / model_sse:.0%} of the model's squared error and "
                                          f"{col_sse / var_sse:.0%} of its variance (recorded after the outcome?)")
    return None


def near_copies(df: pd.DataFrame, columns: list[str], *, deadline: float | None = None,
                sample: Sample | None = None) -> dict[str, Found]:
    """Columns another (earlier) column gives on at least COPY_AGREEMENT of rows and that give it back
    as well, each left out as a near copy of the first such column kept.

    Every pair is decided exactly; the pairs that cannot be near copies are told apart first, many
    at once, by a bound (:func:`_pair_signatures`), so a table of thousands of columns is not
    compared pair by pair. ``deadline`` (``time.monotonic()``): past it, :class:`ScreenTimeout`; ``sample`` as
    in :func:`model_rules`."""
    rows = sample if sample is not None else Sample(df)
    n = rows.n
    if n < MARK_ROWS:
        return {}
    pairs = _pair_matchings(n)
    coded, text, values, sig = {}, {}, {}, {}
    for done, c in enumerate(columns):
        if done % 16 == 0:
            check_deadline(deadline, f"read {done:,} of {len(columns):,} attributes to compare them for near copies")
        coded[c] = rows.groups(c)[:2]
        values[c] = rows.numeric(c)
        sig[c] = _pair_signatures(coded[c][0], _text_codes_of(rows, c, coded[c][0]), values[c], pairs)

    def text_of(c: str) -> np.ndarray:  # the values as text, missing as "\u0001": read for a pair compared
        if c not in text:
            text[c] = rows.series(c).astype("string").fillna("\u0001").to_numpy()
        return text[c]

    def same_text(a: str, b: str) -> float:  # the share of rows on which a and b read alike as text
        same = _same_text(rows, a, b)
        return float(np.mean(text_of(a) == text_of(b))) if same is None else same
    width = pairs.shape[0] * _words(pairs.shape[2])
    kept_sig = {k: np.zeros((len(columns), width), dtype=np.uint64) for k in ("codes", "text", "numeric")}
    kept_numeric = np.zeros(len(columns), dtype=bool)
    kept_plain = np.zeros(len(columns), dtype=bool)
    # a near copy differs from its column on at most (1 - COPY_AGREEMENT) of rows either way (a
    # copy of values) or twice that (each gives the other): on at most that many pairs of a matching
    bound = 2.0 * (1.0 - COPY_AGREEMENT) * n + 1e-9
    kept: list[str] = []
    out: dict[str, Found] = {}
    for done, col in enumerate(columns):
        if done % 64 == 0:
            check_deadline(deadline, f"compared {done:,} of {len(columns):,} attributes with the others for near copies")
        cx, kx = coded[col]
        hit, what = None, ""
        m = len(kept)
        if m:
            candidates = [kept[i] for i in _possible(kept_sig, kept_plain[:m], kept_numeric[:m], sig[col],
                                                     values[col] is not None, pairs.shape[0], bound)]
        else:
            candidates = []
        for other in candidates:
            co, ko = coded[other]
            base = max(np.bincount(cx, minlength=kx).max(), np.bincount(co, minlength=ko).max()) / n
            x, y = values[col], values[other]
            same = (float(np.mean((x == y) | (np.isnan(x) & np.isnan(y)))) if x is not None and y is not None
                    else same_text(col, other))
            if same == 1.0:
                hit, what = other, f"a copy of attribute '{other}'"
            elif same >= COPY_AGREEMENT and 1 - same <= COPY_ERROR_SHARE * (1 - base):
                hit, what = other, f"a near copy of attribute '{other}': the same value on {_pct(same)} of rows"
            elif _gives(co, ko, cx, kx) and _gives(cx, kx, co, ko):
                a = min(loo_accuracy(co, ko, cx, kx), loo_accuracy(cx, kx, co, ko))
                hit, what = other, f"a near copy of attribute '{other}': each gives the other on {_pct(a)} of rows"
            if hit is not None:
                break
        if hit is None:
            for k, v in sig[col].items():
                kept_sig[k][m] = v
            kept_numeric[m] = values[col] is not None
            kept_plain[m] = _plain(sig[col], values[col] is not None)
            kept.append(col)
        else:
            out[col] = Found("near copy", what, of=hit)
    return out


def _same_text(rows: Sample, a, b) -> float | None:
    """The share of rows on which two columns read alike as text (missing as "\u0001"), each distinct text
    numbered once for both and the rows compared by number (:meth:`Sample.texts`): the same equalities as
    comparing their texts row by row. None unless both columns are text or plain numbers."""
    ta, tb = rows.texts(a), rows.texts(b)
    if ta is None or tb is None:
        return None
    ids: dict[str, int] = {}
    keyed = []
    for codes, listed in (ta, tb):
        key = np.array([ids.setdefault(t, len(ids)) for t in listed], dtype=np.int64)
        keyed.append(key[codes])
    return float(np.mean(keyed[0] == keyed[1]))


class ScreenTimeout(Exception):
    """The attribute screen went past its deadline; ``where`` says how far it got ("checked 1,200 of
    50,000 columns")."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


def screen_timeout_message(where: str, time_limit: float) -> str:
    """The one line of a scan whose attribute screen the time limit cut (every engine says it so)."""
    return (f"The attribute screen did not finish within the time limit ({float(time_limit):g} s, a safety net): "
            f"it had {where}. Name the attributes to slice by (attributes, --attributes), or raise the time limit "
            "(time_limit, --time-limit).")


def check_deadline(deadline: float | None, where: str) -> None:
    """Raise :class:`ScreenTimeout` (saying ``where``) when ``deadline`` (``time.monotonic()``) has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise ScreenTimeout(where)


#: row matchings a pair of columns is compared on before any exact test (fewer rows: more matchings)
MATCHING_ROWS = 2_000


def _pair_matchings(n: int) -> np.ndarray:
    """Seeded matchings of the rows into disjoint pairs: (matchings, 2, pairs) row positions."""
    count = int(min(4, max(1, np.ceil(MATCHING_ROWS / n))))
    rng = np.random.default_rng(0)
    half = n // 2
    return np.stack([rng.permutation(n)[:2 * half].reshape(half, 2).T for _ in range(count)])


def _words(bits: int) -> int:
    return max(1, -(-bits // 64))


def _pack(same: np.ndarray) -> np.ndarray:
    """(matchings, pairs) booleans as (matchings × words) uint64."""
    count, bits = same.shape
    packed = np.packbits(same, axis=1, bitorder="little")
    padded = np.zeros((count, _words(bits) * 8), dtype=np.uint8)
    padded[:, :packed.shape[1]] = packed
    return padded.view(np.uint64).reshape(-1)


def _text_codes_of(rows: Sample, col, codes: np.ndarray) -> np.ndarray:
    """:func:`_text_codes` of a column of ``rows``, text checked on its distinct values (one of them is
    "\u0001" when a value is)."""
    if rows.text(col) and not bool((rows.factorized(col)[1] == "\u0001").any()):
        return codes
    texts = rows.texts(col)
    if texts is None:
        return _text_codes(rows.series(col), codes)
    ids: dict[str, int] = {}
    key = np.array([ids.setdefault(t, len(ids)) for t in texts[1]], dtype=np.int64)
    return pd.factorize(key[texts[0]])[0]  # numbered by first appearance, as the texts themselves


def _text_codes(s: pd.Series, codes: np.ndarray) -> np.ndarray:
    """The column's values as text (missing as "\u0001"), factorized; for a column of text none of whose
    values is "\u0001", its group codes ``codes`` (:func:`groups`: the same rows share a code)."""
    if isinstance(s.dtype, pd.StringDtype) and not bool((s == "\u0001").any()):
        return codes
    return pd.factorize(s.astype("string").fillna("\u0001").to_numpy())[0]


def _pair_signatures(codes: np.ndarray, text_codes: np.ndarray, values: np.ndarray | None,
                     pairs: np.ndarray) -> dict[str, np.ndarray]:
    """Which pairs of each matching hold one value twice, under each of the three ways columns are
    compared (group codes, text: ``text_codes`` from :func:`_text_codes`, numbers).

    Why it bounds: if x gives y and y gives x on at least a share A of rows each, then on the rows
    where both guesses are right (all but at most 2(1 − A) of them) equal x means equal y and back;
    a pair of a matching whose two rows are both there holds one x value twice exactly when it holds
    one y value twice, and each other row is in one pair. So at most 2(1 − A)·n pairs differ (for
    values equal on A of rows, (1 − A)·n). A pair of columns differing on more pairs of any
    matching cannot be near copies; the rest are tested exactly."""
    a, b = pairs[:, 0], pairs[:, 1]
    out = {"codes": _pack(codes[a] == codes[b]), "text": _pack(text_codes[a] == text_codes[b])}
    if values is not None:
        num = pd.factorize(values + 0.0, use_na_sentinel=False)[0]  # -0.0 is 0.0; NaN one value
        out["numeric"] = _pack(num[a] == num[b])
    else:
        out["numeric"] = np.zeros_like(out["codes"])
    return out


def _plain(sig: dict[str, np.ndarray], numeric: bool) -> bool:
    """The column's three ways of comparing split every matching alike (most columns)."""
    return bool(np.array_equal(sig["codes"], sig["text"])
                and (not numeric or np.array_equal(sig["codes"], sig["numeric"])))


def _possible(kept_sig: dict[str, np.ndarray], plain: np.ndarray, numeric: np.ndarray, mine: dict[str, np.ndarray],
              mine_numeric: bool, matchings: int, bound: float) -> np.ndarray:
    """The positions of the kept columns that may be near copies of this one (:func:`_pair_signatures`):
    within the bound on the first matching's group codes, or, for a column that is not plain, by
    its values; then on every matching."""
    m = len(plain)
    words = kept_sig["codes"].shape[1] // matchings
    mine_plain = _plain(mine, mine_numeric)
    first = np.bitwise_count(kept_sig["codes"][:m, :words] ^ mine["codes"][None, :words]).sum(axis=1) <= bound
    maybe = np.nonzero(first | ~(plain & mine_plain))[0]
    if maybe.size == 0:
        return maybe
    ok = _within(kept_sig["codes"][maybe], mine["codes"], matchings, bound)
    by_value = np.where(numeric[maybe] & mine_numeric,
                        _within(kept_sig["numeric"][maybe], mine["numeric"], matchings, bound),
                        _within(kept_sig["text"][maybe], mine["text"], matchings, bound))
    return maybe[ok | by_value]


def _within(kept: np.ndarray, mine: np.ndarray, matchings: int, bound: float) -> np.ndarray:
    """For each kept column's signature, whether it differs from ``mine`` on at most ``bound`` pairs of
    every matching."""
    diff = np.bitwise_count(kept ^ mine[None, :]).reshape(kept.shape[0], matchings, -1).sum(axis=2)
    return (diff <= bound).all(axis=1)


def _gives(cx: np.ndarray, kx: int, cy: np.ndarray, ky: int) -> bool:
    """x gives y: the commonest y per x value (leave-one-out) is right on COPY_AGREEMENT of rows, with at
    most COPY_ERROR_SHARE of the errors of guessing y's commonest value."""
    acc = loo_accuracy(cx, kx, cy, ky)
    base = float(np.bincount(cy, minlength=ky).max() / len(cy))
    return acc >= COPY_AGREEMENT and 1 - acc <= COPY_ERROR_SHARE * (1 - base)

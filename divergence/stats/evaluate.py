"""Any metric per slice, as Fairlearn's MetricFrame computes it: each on the slice's own rows (never
from the tallies, so AUC and F1 are exact), with a seeded bootstrap interval and its divergence from
the whole dataset (:func:`evaluate`, offered as ``SliceTable.evaluate``).

The known names (``auc``, ``f1``, ``balanced_accuracy``, ``average_precision``) are computed here with
numpy, equal to scikit-learn's functions (``tests/stats/test_evaluate.py`` checks them):
scikit-learn stays a development dependency."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..outcome_rules import REGRESSION_METRICS, canonical_metric
from ..prepare.outcomes import is_multiclass, positive_labels

__all__ = ["KNOWN_METRICS", "SCORE_METRICS", "SCORE_FUNCTIONS", "evaluate", "auc", "average_precision", "f1",
           "balanced_accuracy", "evaluation_slices", "parse_names", "known_names"]


def _ones(y) -> np.ndarray:
    return np.ones((1, len(y)))


def auc(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """The area under the ROC curve of 0/1 labels by a score: the chance that a positive outranks a
    negative, ties counting half (scikit-learn's ``roc_auc_score``); NaN without both classes."""
    return float(_auc_weighted(y_true, y_score, _ones(y_true))[0])


def average_precision(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """The precision at each score threshold weighted by the recall it adds, Σ (R_k − R_k−1)·P_k
    (scikit-learn's ``average_precision_score``); NaN without a positive."""
    return float(_ap_weighted(y_true, y_score, _ones(y_true))[0])


def f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """F1 of the positive class for 0/1 labels, 2·TP / (2·TP + FP + FN); over more classes the mean of
    each class's F1 (macro, the classes of either column), as scikit-learn's ``f1_score``. NaN for
    0/1 labels with no positive row and no positive prediction."""
    return float(_f1_weighted(y_true, y_pred, _ones(y_true))[0])


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The mean over the true classes of each class's recall (scikit-learn's ``balanced_accuracy_score``)."""
    return float(_balanced_weighted(y_true, y_pred, _ones(y_true))[0])


def _groups(s: np.ndarray, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The order of the rows by score and the first position of each distinct score in it."""
    order = np.argsort(-s if descending else s, kind="mergesort")
    ss = s[order]
    return order, np.r_[0, np.flatnonzero(np.diff(ss)) + 1]


def _auc_weighted(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`auc` of the rows counted ``w`` times (replicates x rows): each positive's weight times the
    negatives' weight below its score, ties half."""
    y = np.asarray(y, dtype=bool)
    order, starts = _groups(np.asarray(s, dtype=float), False)
    pos = np.add.reduceat(w[:, order] * y[order], starts, axis=1)
    neg = np.add.reduceat(w[:, order] * ~y[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    num, den = (pos * (below + 0.5 * neg)).sum(axis=1), pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _ap_weighted(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`average_precision` of the rows counted ``w`` times: per distinct score from the highest,
    the positives it adds (as a share of all) times the precision down to it."""
    y = np.asarray(y, dtype=bool)
    order, starts = _groups(np.asarray(s, dtype=float), True)
    pos = np.add.reduceat(w[:, order] * y[order], starts, axis=1)
    tot = np.add.reduceat(w[:, order], starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tot > 0, np.cumsum(pos, axis=1) / np.cumsum(tot, axis=1), 0.0)
        total = pos.sum(axis=1)
        return np.where(total > 0, (pos * precision).sum(axis=1) / total, np.nan)


def _per_class(y: np.ndarray, p: np.ndarray, w: np.ndarray, classes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per replicate and class, the weighted true positives, the rows of the class and those predicted it."""
    tp = np.stack([w @ ((y == c) & (p == c)).astype(float) for c in classes], axis=1)
    true = np.stack([w @ (y == c).astype(float) for c in classes], axis=1)
    pred = np.stack([w @ (p == c).astype(float) for c in classes], axis=1)
    return tp, true, pred


def _f1_weighted(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`f1` of the rows counted ``w`` times."""
    y, p = np.asarray(y), np.asarray(p)
    classes = pd.unique(np.r_[y, p])
    binary = set(classes.tolist()) <= {0, 1, True, False}
    tp, true, pred = _per_class(y, p, w, [1] if binary else classes)
    den = true + pred
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(den > 0, 2 * tp / den, np.nan if binary else 0.0)
        if binary:
            return per[:, 0]
        present = den > 0  # a class in neither column of a replicate is not averaged
        return np.where(present.any(axis=1), np.where(present, per, 0.0).sum(axis=1) / present.sum(axis=1), np.nan)


def _balanced_weighted(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:func:`balanced_accuracy` of the rows counted ``w`` times."""
    y, p = np.asarray(y), np.asarray(p)
    tp, true, _ = _per_class(y, p, w, pd.unique(y))
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(true > 0, tp / true, 0.0)
        n = (true > 0).sum(axis=1)
        return np.where(n > 0, recall.sum(axis=1) / n, np.nan)


#: each known metric's form over rows counted by weights (replicates x rows), for the bootstrap at once
_WEIGHTED = {auc: _auc_weighted, average_precision: _ap_weighted, f1: _f1_weighted,
             balanced_accuracy: _balanced_weighted}
#: the most replicates x rows of bootstrap counts held at once
_BLOCK_CELLS = 4_000_000


#: the known names and what each is computed from: ``score`` (the model's score) or ``pred`` (its labels)
KNOWN_METRICS: dict[str, tuple[Callable, str]] = {"auc": (auc, "score"), "average_precision": (average_precision, "score"),
                                                  "f1": (f1, "pred"), "balanced_accuracy": (balanced_accuracy, "pred")}
#: the known names that need a score
SCORE_METRICS = tuple(k for k, (_, needs) in KNOWN_METRICS.items() if needs == "score")
#: scikit-learn's functions of a score, recognized by name: a callable of one of these names receives
#: ``(y_true, y_score)``; any other callable ``(y_true, y_pred)`` (or say which: ``(callable, "score")``)
SCORE_FUNCTIONS = ("roc_auc_score", "average_precision_score", "log_loss", "brier_score_loss", "top_k_accuracy_score",
                   "ndcg_score", "dcg_score", "label_ranking_average_precision_score", "d2_log_loss_score")


def _resolve(name: str, metric) -> tuple[Callable, str]:
    """(function, 'score' or 'pred') of one metric as given."""
    if isinstance(metric, str):
        key = metric.strip().lower()
        if key not in KNOWN_METRICS:
            raise DivergenceInputError(f"Metric {name!r}: unknown name {metric!r}; give a callable or one of "
                                       f"{', '.join(KNOWN_METRICS)}.")
        return KNOWN_METRICS[key]
    if isinstance(metric, tuple) and len(metric) == 2 and callable(metric[0]) and metric[1] in ("score", "pred"):
        return metric[0], metric[1]
    if callable(metric):
        return metric, "score" if getattr(metric, "__name__", "") in SCORE_FUNCTIONS else "pred"
    raise DivergenceInputError(f"Metric {name!r} is neither a callable (y_true, y_pred), a pair (callable, 'score'), "
                               f"nor a known name ({', '.join(KNOWN_METRICS)}).")


def _model_arrays(table) -> dict:
    """The labels and the model's output as the metrics receive them: for a binary classifier 0/1 labels
    (1 the positive label), 0/1 predictions (the prediction, or the score at the threshold) and the
    score; over more classes the classes as the columns hold them; a regressor's numbers."""
    kept = table.kept_rows
    if kept is None or kept.model is None or "target" not in kept.model:
        raise DivergenceInputError("evaluate needs the rows of an in-memory scan with a target (a classifier or a "
                                   "regressor): this result did not keep them (DuckDB, Spark, a comparison).")
    params = table.params or {}
    model = kept.model
    y = model["target"]
    pred = model.get("prediction")
    score = model.get("score")
    score = None if score is None else pd.to_numeric(pd.Series(score), errors="coerce").to_numpy(dtype=float)
    metrics = list(params.get("metrics") or [])
    if params.get("regression"):
        return {"y": pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype=float),
                "pred": pd.to_numeric(pd.Series(pred), errors="coerce").to_numpy(dtype=float), "score": None,
                "known": ~pd.isna(y) & ~pd.isna(pred)}
    positive = params.get("positive")
    if is_multiclass(metrics, positive) or positive is None:
        known = ~pd.isna(y) & (~pd.isna(pred) if pred is not None else True)
        return {"y": y, "pred": pred, "score": None, "known": np.asarray(known, dtype=bool)}
    ys = pd.Series(y)
    hits = positive_labels(list(pd.unique(ys.dropna())), positive, params.get("target") or "target", "target")
    y01 = ys.isin(hits).to_numpy().astype(int)
    known = ys.notna().to_numpy().copy()
    if pred is not None:
        ps = pd.Series(pred)
        p01 = ps.isin(hits).to_numpy().astype(int)
        known &= ps.notna().to_numpy()
    else:
        assert score is not None  # a classifier without labels is read by its score
        p01 = (np.nan_to_num(score, nan=-np.inf) >= float(params.get("threshold", 0.5))).astype(int)
        known &= ~np.isnan(score)
    if score is not None:
        known &= ~np.isnan(score)
    return {"y": y01, "pred": p01, "score": score, "known": known}


def evaluation_slices(table, slices) -> list[int]:
    """The table indices of the slices to evaluate, the whole dataset (0) first: ``None`` the distinct
    findings of every metric, then the first 20 of the default order; ``"findings"`` the findings only;
    a count, the first that many of the default order; a list of itemsets, those."""
    if slices is None or isinstance(slices, str):
        if isinstance(slices, str) and slices != "findings":
            raise DivergenceInputError(f"slices {slices!r}: give 'findings', a count or a list of itemsets.")
        found = []
        for m in table.metric_names:
            col = f"{m}_finding"
            if col in table.columns:
                mask = np.asarray(table.columns[col], dtype=bool)
                order = np.asarray(table.columns[f"{m}_order"], dtype=float) if f"{m}_order" in table.columns \
                    else np.arange(len(table), dtype=float)
                found += [int(i) for i in np.flatnonzero(mask)[np.argsort(order[mask], kind="stable")]]
        if slices is None:
            found += [int(i) for i in table.default_order(None) if i != 0][:20]
        out = found
    elif isinstance(slices, (int, np.integer)) and not isinstance(slices, bool):
        if slices < 0:
            raise DivergenceInputError(f"slices {slices}: a count is 0 or more.")
        out = [int(i) for i in table.default_order(None) if i != 0][: int(slices)]
    else:
        out = [int(table.lookup(s)) for s in slices]
    return [0] + [i for i in dict.fromkeys(out) if i != 0]


def _value(fn: Callable, y, x) -> float:
    try:
        return float(fn(y, x))
    except ValueError:  # scikit-learn's refusal of a slice with one class: undefined there
        return float("nan")


def evaluate(table, metrics: Mapping[str, object], slices=None, bootstrap: int = 200, seed: int = 0,
             confidence: float | None = None) -> pd.DataFrame:
    """One row per slice, the whole dataset first: ``itemset``, ``rows`` (the rows used: target and the
    model's output known), and per metric NAME its value on the slice's rows, ``NAME_low`` and
    ``NAME_high`` (the percentile interval of ``bootstrap`` resamples of the slice's own rows, seeded by
    ``seed`` and the slice; none when ``bootstrap`` is 0) and ``NAME_divergence`` (the value minus the
    whole dataset's). ``metrics``: name -> a callable with scikit-learn's signature, ``(y_true, y_pred)``
    (``(y_true, y_score)`` for scikit-learn's score functions, or say so: ``(callable, "score")``), or a
    known name (``auc``, ``f1``, ``balanced_accuracy``, ``average_precision``). ``slices``: see
    :func:`evaluation_slices`."""
    if not isinstance(metrics, Mapping) or not metrics:
        raise DivergenceInputError("metrics is a dict of name -> metric, e.g. {'auc': 'auc', 'f1': f1_score}.")
    if bootstrap and not 20 <= int(bootstrap) <= 100_000:
        raise DivergenceInputError(f"bootstrap must be 0 (none) or 20 to 100,000 resamples, got {bootstrap}.")
    fns = {name: _resolve(name, m) for name, m in metrics.items()}
    data = _model_arrays(table)
    for name, (_, needs) in fns.items():
        if needs == "score" and data["score"] is None:
            raise DivergenceInputError(f"Metric {name!r} needs the model's score (a binary classifier scanned with "
                                       "--score); this scan has labels only.")
    level = float(confidence if confidence is not None else (table.assessment.confidence if table.assessment
                                                             else 0.95))
    alpha = 1.0 - level
    rows_out = []
    for index in evaluation_slices(table, slices):
        mask = (table.rows_of(index) if index else np.ones(len(data["known"]), dtype=bool)) & data["known"]
        y = data["y"][mask]
        row: dict = {"itemset": table.itemsets[index], "rows": int(mask.sum())}
        xs = {name: data[needs][mask] for name, (_, needs) in fns.items()}
        for name, (fn, _) in fns.items():
            row[name] = _value(fn, y, xs[name]) if len(y) else float("nan")
        if bootstrap:
            # the slice's own rows resampled (the Poisson bootstrap, as the slice table's: each row counted
            # Poisson(1) times), the same resamples for every metric; the known metrics weigh the rows by
            # their counts, every resample at once
            rng = np.random.default_rng([int(seed), int(index)])
            reps: dict = {name: [] for name in fns}
            n = len(y)
            block = max(1, _BLOCK_CELLS // max(n, 1))
            for start in range(0, int(bootstrap) if n else 0, block):
                counts = rng.poisson(1.0, size=(min(block, int(bootstrap) - start), n))
                for name, (fn, _) in fns.items():
                    if fn in _WEIGHTED:
                        reps[name] += list(_WEIGHTED[fn](y, xs[name], counts.astype(float)))
                    else:
                        for c in counts:
                            d = np.repeat(np.arange(n), c)
                            reps[name].append(_value(fn, y[d], xs[name][d]))
            for name in fns:
                r = np.asarray(reps[name], dtype=float)
                r = r[np.isfinite(r)]
                enough = len(y) > 0 and len(r) >= 0.5 * int(bootstrap)
                row[f"{name}_low"] = float(np.quantile(r, alpha / 2)) if enough else float("nan")
                row[f"{name}_high"] = float(np.quantile(r, 1 - alpha / 2)) if enough else float("nan")
        rows_out.append(row)
    out = pd.DataFrame(rows_out)
    for name in fns:
        out[f"{name}_divergence"] = out[name] - out[name].iloc[0]
        out.loc[0, f"{name}_divergence"] = 0.0 if np.isfinite(out[name].iloc[0]) else np.nan
    order = ["itemset", "rows"] + [c for n in fns for c in (n, f"{n}_low", f"{n}_high", f"{n}_divergence")
                                   if c in out.columns]
    out = out[order]
    out.attrs.update(bootstrap=int(bootstrap), seed=int(seed), confidence=level)
    return out


def parse_names(text: str | Sequence[str]) -> dict:
    """``"auc,f1"`` -> {"auc": "auc", "f1": "f1"} (the command line's ``--evaluate``), each a known name."""
    names = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t and t.strip()]
    for n in names:
        if n.lower() not in KNOWN_METRICS:
            raise DivergenceInputError(f"--evaluate {n!r}: choose from {', '.join(KNOWN_METRICS)}.")
    return {n.lower(): n.lower() for n in names}


def known_names(table) -> list[str]:
    """The known names a result can evaluate: a classifier's F1 and balanced accuracy, and with a score
    AUC and average precision; none for a regressor, an outcome column or a result without its rows."""
    kept = table.kept_rows
    params = table.params or {}
    if kept is None or kept.model is None or "target" not in kept.model or params.get("regression"):
        return []
    if any(canonical_metric(str(m)) in REGRESSION_METRICS for m in params.get("metrics") or []):
        return []  # a regressor's metrics asked for without the regression flag: no classifier's names
    if params.get("outcome") or params.get("rank") or params.get("rank_by") or params.get("query"):
        return []
    binary = params.get("positive") is not None and not is_multiclass(list(params.get("metrics") or []),
                                                                       params.get("positive"))
    return [n for n in KNOWN_METRICS if KNOWN_METRICS[n][1] == "pred" or (binary and "score" in kept.model)]

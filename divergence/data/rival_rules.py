"""Another model's outputs on any scale, and what follows from a column left out (issue 44).

Three rules of the attribute screen (:mod:`divergence.data.columns`), after those of
:mod:`divergence.data.column_rules`, all measured on the values (never on names):

- **a rival score**: a numeric column that tells the target's classes apart nearly as well as the
  model does (its AUC's distance from 0.5 at least :data:`RIVAL_SCORE_SHARE` of the model's) and ranks
  the rows like the model's output (rank correlation at least :data:`RIVAL_SCORE_RHO`): another model's
  score on its own scale, such as COMPAS's ``decile_score`` beside a fitted model's probabilities.
- **on another model's scale**: a numeric column on the scale of a column left out as another model's
  score, ranking the rows like it (``v_decile_score`` beside ``decile_score``).
- **follows a column left out**: a copy of a column left out, or a column whose every value goes with
  one value of it (``score_text`` of ``decile_score``, the repeated header ``priors_count.1`` of
  ``priors_count``): left out with it, so that a column left out never returns through its copy.

Why the line is where it is (docs/discretization.md, "Default attributes"): a genuine attribute a model
does not read rarely tells the classes apart nearly as well as the model and ranks the rows like it;
one the model reads is among its features (a fitted model's numeric features are left out anyway).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .column_rules import (
    MANY_VALUES,
    MIN_ROWS,
    Found,
    auc_of,
    check_deadline,
    model_of,
    numeric_values,
    rank_rho,
    sample_index,
)
from .screen_sample import Sample

__all__ = ["rival_scores", "on_their_scale", "followers", "same_scale", "equal_as_text", "RIVAL_SCORE_RHO", "RIVAL_SCORE_SHARE", "SAME_SCALE_RHO"]

#: a numeric column whose AUC for the target is at least this share of the model's as far from 0.5 ...
RIVAL_SCORE_SHARE = 0.75
#: ... and whose rank correlation with the model's output is at least this, is a rival model's score
RIVAL_SCORE_RHO = 0.5
#: rows per value a column needs for "its every value goes with one value of it" to mean anything
GROUP_ROWS = 5


def rival_scores(df: pd.DataFrame, candidates: list[str], *, target=None, prediction=None, score=None,
                 threshold=None, deadline: float | None = None) -> dict[str, Found]:
    """Numeric candidates that are a rival model's score (see the module), each with its reason."""
    idx = sample_index(len(df))
    sub = df if idx is None else df.iloc[idx]
    m = model_of(sub, target, prediction, score, threshold)
    if m is None or m.regression or m.ky != 2 or m.p is None:
        return {}
    known = m.y >= 0
    y1 = (m.y == 1).astype(float)
    output = m.score if m.score is not None else np.where(m.p >= 0, m.p, np.nan).astype(float)
    model_auc = auc_of(output[known], y1[known])
    if model_auc is None or abs(model_auc - 0.5) < 0.05:
        return {}
    model_excess = abs(model_auc - 0.5)
    what = m.score_name or m.name
    out: dict[str, Found] = {}
    seen: dict[str, np.ndarray] = {}
    for done, col in enumerate(candidates):
        if done % 16 == 0:
            check_deadline(deadline, f"measured {done:,} of {len(candidates):,} attributes against the model's output")
        x = numeric_values(sub[col])
        if x is None or len(np.unique(x[~np.isnan(x)])) <= MANY_VALUES // 4:
            continue
        copied = next((c for c, v in seen.items() if np.array_equal(v, x, equal_nan=True)), None)
        if copied is not None:
            out[col] = Found("another model", f"a copy of column '{copied}', itself left out (another model)",
                             output="score", of=copied)
            continue
        auc = auc_of(x[known], y1[known])
        if auc is None or abs(auc - 0.5) < RIVAL_SCORE_SHARE * model_excess:
            continue
        rho = rank_rho(x, output)
        if rho is None or abs(rho) < RIVAL_SCORE_RHO:
            continue
        seen[col] = x
        out[col] = Found("another model", f"another model's score: tells the classes of '{m.target_name}' apart "
                                          f"nearly as well as {what} (AUC {max(auc, 1 - auc):.3f}, the model's "
                                          f"{max(model_auc, 1 - model_auc):.3f}) and ranks the rows like it (rank "
                                          f"correlation {rho:.2f})", output="score")
    return out


def on_their_scale(df: pd.DataFrame, candidates: list[str], scores: list[str],
                   sample: Sample | None = None) -> dict[str, Found]:
    """Numeric candidates on the scale of a column left out as another model's score, ranking the rows
    like it (:func:`same_scale`); ``sample``: that of ``df``, its columns read once for every rule."""
    rows = sample if sample is not None else Sample(df)
    out: dict[str, Found] = {}
    for col in candidates:
        x = rows.numeric(col)
        if x is None:
            continue
        for other in scores:
            s = rows.numeric(other)
            rho = None if s is None else same_scale(x, s)
            if rho is not None:
                out[col] = Found("another model", f"another model's score: on the scale of column '{other}' (itself "
                                                  f"another model's score), ranking the rows like it (rank correlation "
                                                  f"{rho:.2f})", output="score", of=other)
                break
    return out


def followers(df: pd.DataFrame, candidates: list[str], left: dict[str, str],
              deadline: float | None = None, full: Sample | None = None) -> dict[str, Found]:
    """Candidates that follow a column left out (``left``: column -> its kind): a copy of it, or a column
    whose every value goes with one value of it; each left out with the same kind, repeatedly (a column
    that follows one of these is left out too). ``full``: the table's columns on every row, read once for
    every rule of the screen."""
    n = len(df)
    if n < GROUP_ROWS * 2 or not left:
        return {}
    rows = full if full is not None else Sample(df, None)
    coded: dict[str, tuple[np.ndarray, int]] = {}
    numbers: dict[str, np.ndarray | None] = {}

    def code(c: str) -> tuple[np.ndarray, int]:
        if c not in coded:
            coded[c] = rows.codes(c)  # what _codes gives
            numbers[c] = rows.numeric(c)
        return coded[c]

    out: dict[str, Found] = {}
    sources = dict(left)
    rest = list(candidates)
    while True:
        found: dict[str, Found] = {}
        for done, col in enumerate(rest):
            if done % 16 == 0:
                check_deadline(deadline, f"compared {done:,} of {len(rest):,} attributes with the columns left out")
            cx, kx = code(col)
            if kx < 2:
                continue
            for name, kind in sources.items():
                co, ko = code(name)
                x, o = numbers[col], numbers[name]
                if x is not None and o is not None:
                    same = np.array_equal(x, o, equal_nan=True)
                else:
                    same = (x is None) == (o is None) and equal_as_text(rows, col, name)
                if same:
                    found[col] = Found(kind, f"a copy of column '{name}', itself left out ({kind})", of=name)
                    break
                if 2 <= ko <= n / GROUP_ROWS and len(pd.unique(co * kx + cx)) == ko:
                    found[col] = Found(kind, f"determined by column '{name}' (a function of its values), itself "
                                             f"left out ({kind})", of=name)
                    break
        if not found:
            return out
        out.update(found)
        sources = {c: f.kind for c, f in found.items()}
        rest = [c for c in rest if c not in found]


def equal_as_text(rows: Sample, a, b) -> bool:
    """The two columns are equal as text (``astype("string").equals``: every row the same text, or
    missing in both); two text columns compared by their distinct values, numbered once for both."""
    if not (rows.text(a) and rows.text(b)):
        return rows.series(a).astype("string").equals(rows.series(b).astype("string"))
    ids: dict[str, int] = {}
    keyed = []
    for c in (a, b):
        codes, uniques = rows.factorized(c)
        key = np.array([ids.setdefault(u, len(ids)) for u in uniques] + [-1], dtype=np.int64)
        keyed.append(key[codes])  # missing (code -1): -1, equal only to missing
    return bool(np.array_equal(keyed[0], keyed[1]))


#: a numeric column on the score's scale with at least this rank correlation is a second score
SAME_SCALE_RHO = 0.7


def same_scale(x: np.ndarray, score: np.ndarray) -> float | None:
    """The rank correlation of a numeric column with the score when it looks like a second score
    on the same scale (its values within the score's range; integer scores: among its values)."""
    both = ~np.isnan(x) & ~np.isnan(score)
    xs, ys = x[both], score[both]
    if len(xs) < MIN_ROWS or len(np.unique(xs)) < 5:
        return None
    if np.all(np.mod(ys, 1) == 0):
        if not np.isin(np.unique(xs), np.unique(ys)).all():
            return None
    elif xs.min() < ys.min() or xs.max() > ys.max():
        return None
    rho = float(pd.Series(xs).rank().corr(pd.Series(ys).rank()))
    return rho if abs(rho) >= SAME_SCALE_RHO else None

"""The attribute screen of an outcome alone (no model to measure columns against): columns read after
the outcome, and sibling outcomes (issue 44).

With a model, a column is "after the outcome" when the target is read from it far better than from the
model (:mod:`divergence.data.column_rules`). An outcome alone (``--outcome ZFYA``) has no model, so the
other attributes stand in for it. How well a column ``b`` is read from a column ``a`` is the share of
``b``'s variance that ``a``'s values explain, scored leave-one-out (a numeric ``a`` with many values in
equal-count bins; a ``b`` with few values as its classes' indicators), so many rare values gain nothing:

- **read far better**: the outcome is read from the column on at least :data:`FAR_SHARE` of its variance,
  :data:`FAR_RATIO` times or more as well as from any other attribute;
- **a sibling outcome**: the column and the outcome are each read from the other better (at least
  :data:`SIBLING_RATIO` times) than from any other attribute, and the other attributes read the column about
  as well as they read the outcome (at least :data:`SIBLING_LIKE` of it, and the outcome at least
  :data:`SIBLING_FLOOR`): an outcome of the same rows, such as ``first_pf`` (passed the first year) beside
  ``ZFYA`` (the first year's grade) in the law school data. A genuine attribute the outcome depends on is
  read from the other attributes far better than from the outcome, or not at all where the outcome is.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .column_rules import Found, check_deadline, groups
from .screen_sample import Sample

__all__ = ["outcome_rules", "explained", "FAR_SHARE", "FAR_RATIO", "SIBLING_RATIO", "SIBLING_LIKE", "SIBLING_FLOOR"]

#: the outcome read from one column on at least this share of its variance ...
FAR_SHARE = 0.5
#: ... and this many times as well as from any other attribute: recorded after the outcome
FAR_RATIO = 2.0
#: a sibling outcome: each read from the other at least this many times as well as from any other attribute
SIBLING_RATIO = 1.1
#: ... the other attributes reading it at least this share as well as they read the outcome ...
SIBLING_LIKE = 0.8
#: ... and reading the outcome on at least this share of its variance (else nothing tells the two apart)
SIBLING_FLOOR = 0.01
#: sibling outcomes looked for at most (one per pass)
MAX_SIBLINGS = 5


def _reads(codes: np.ndarray, k: int, t: np.ndarray) -> float:
    """Leave-one-out share of the variance of ``t`` (no missing) explained by the groups ``codes``."""
    n = np.bincount(codes, minlength=k).astype(float)
    total = np.bincount(codes, weights=t, minlength=k)
    squares = np.bincount(codes, weights=t * t, minlength=k)
    within = squares - np.divide(total * total, n, out=np.zeros(k), where=n > 0)
    loo = np.where(n > 1, (n / np.maximum(n - 1, 1)) ** 2 * within, 0.0)
    single = n == 1  # a value seen once is guessed by the mean of the other rows
    loo_single = ((t - (t.sum() - t) / max(len(t) - 1, 1)) ** 2)[single[codes]].sum()
    var = float(np.sum((t - t.mean()) ** 2))
    return 1.0 - float(loo.sum() + loo_single) / var if var > 0 else 0.0


class _Read:
    """A column as something read (its values as numbers, or its classes' indicators) and as something
    read from (group codes)."""

    def __init__(self, s: pd.Series, grouped: tuple[np.ndarray, int, np.ndarray] | None = None):
        self.codes, self.k, _ = grouped if grouped is not None else groups(s)  # grouped: groups(s) when read
        present = s.notna().to_numpy()
        num = None
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and s[present].nunique() > 10:
            num = s.to_numpy(dtype=float, na_value=np.nan)
        if num is not None:
            self.targets = [(num, 1.0)]
        else:
            cls, uniques = pd.factorize(s, use_na_sentinel=True)
            ind = [(np.where(cls < 0, np.nan, (cls == j).astype(float)), 1.0) for j in range(len(uniques))]
            ind = ind if len(ind) > 2 else ind[:1]  # two classes: one indicator says it all
            self.targets = [(t, float(np.nanvar(t))) for t, _ in ind if np.nanvar(t) > 0] if len(uniques) > 1 else []


def explained(a: _Read, b: _Read) -> float:
    """How well ``b`` is read from ``a`` (the module's measure; 0 where ``b`` does not vary)."""
    shares, weights = [], []
    for t, w in b.targets:
        ok = ~np.isnan(t)
        if ok.sum() < 2 * a.k:
            continue
        codes = a.codes[ok]
        shares.append(_reads(codes, a.k, t[ok]))
        weights.append(w)
    return float(np.average(shares, weights=weights)) if shares and sum(weights) > 0 else 0.0


def _pct(x: float) -> str:
    return f"{x:.1%}"


def outcome_rules(df: pd.DataFrame, candidates: list[str], outcome: str,
                  deadline: float | None = None, sample: Sample | None = None) -> dict[str, Found]:
    """The candidates read far better from the outcome, or sibling outcomes (see the module), each with its
    reason; measured on a seeded sample of large tables (``sample``: that of ``df``, its columns read once
    for every rule of the screen)."""
    if outcome not in df.columns or len(candidates) < 2:
        return {}
    rows = sample if sample is not None else Sample(df)
    y = _Read(rows.series(outcome), rows.groups(outcome))
    if not y.targets:
        return {}
    read: dict[str, _Read] = {}
    from_col: dict[str, float] = {}
    for done, col in enumerate(candidates):
        if done % 16 == 0:
            check_deadline(deadline, f"read the outcome from {done:,} of {len(candidates):,} attributes")
        read[col] = _Read(rows.series(col), rows.groups(col))
        from_col[col] = explained(read[col], y)
    out: dict[str, Found] = {}
    rest = list(candidates)
    for _ in range(MAX_SIBLINGS):
        if len(rest) < 2:
            break
        ranked = sorted(rest, key=lambda c: -from_col[c])
        best, second = ranked[0], ranked[1]
        share, other = from_col[best], from_col[second]
        if share >= FAR_SHARE and share >= FAR_RATIO * other:
            out[best] = Found("after the outcome", f"the outcome '{outcome}' is read from it alone on {_pct(share)} "
                                                   f"of its variance, {share / max(other, 1e-12):.1f} times as well as "
                                                   f"from any other attribute ('{second}': {_pct(other)}; recorded "
                                                   "after the outcome?)")
            rest.remove(best)
            continue
        if share < SIBLING_RATIO * other or other < SIBLING_FLOOR:
            break
        check_deadline(deadline, f"read attribute '{best}' from the other attributes")
        back = explained(y, read[best])
        peers = {c: explained(read[c], read[best]) for c in rest if c != best}
        peer = max(peers, key=lambda c: peers[c])
        if back < SIBLING_RATIO * peers[peer] or peers[peer] < SIBLING_LIKE * other:
            break
        out[best] = Found("after the outcome", f"an outcome of the same rows, a sibling of '{outcome}'? The outcome is "
                                               f"read from it on {_pct(share)} of its variance, {share / other:.1f} "
                                               f"times as well as from any other attribute ('{second}': {_pct(other)}), "
                                               f"and it is read from the outcome on {_pct(back)}, "
                                               f"{back / max(peers[peer], 1e-12):.1f} times as well as from any other "
                                               f"attribute ('{peer}': {_pct(peers[peer])})")
        rest.remove(best)
    return out

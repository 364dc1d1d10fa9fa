"""Which columns a careful analyst would slice by: the default attributes, and why others are left out.

A raw table holds columns no analyst would slice by: row numbers, identifiers and case
numbers, person names and other personal identifiers (by header or value, :mod:`.personal`),
dates, free text, constant and all-missing columns, and columns that
leak the outcome (a copy or a deterministic function of the target, the prediction or the
score, such as ``decile_score.1`` and ``score_text`` in the raw COMPAS file). Each is
recognised from the data itself (leakage is checked on the values, never guessed from a
name); everything else is an attribute. A numeric code with few values (a 1-5 rating, a
region code) stays an attribute. :func:`screen_attributes` returns the decision with a
reason per column, so the command line and the dashboard can say what was left out and why.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from .column_kinds import is_date_column, is_datetime, is_row_index, is_text, text_sample
from .column_rules import MIN_ROWS, check_deadline, model_rules, near_copies, scores_behind
from .nested import nested_notes, unsupported_kind
from .personal import OVERRIDES, PERSONAL, personal_kind, personal_notes
from .rival_rules import equal_as_text, same_scale
from .screen_more import later_rules, which_screen
from .screen_sample import BINS, Sample, factorized

__all__ = ["MODEL_FEATURES", "role_columns", "default_attributes", "check_frame", "AttributeScreen", "screen_attributes", "screen_summary", "check_attributes", "screen", "screen_notes", "shape_kind", "row_index_kind", "KINDS",
           "DATE_REASON", "MIN_ROWS", "NEAR_UNIQUE_SHARE", "UNIQUE_INT_SHARE"]

#: ``DataFrame.attrs`` key naming a fitted model's features (set by :mod:`divergence.prepare.model_outputs`)
MODEL_FEATURES = "divergence.model_features"
#: why a column is left out, in the order the checks run
KINDS = ("all missing", "constant", "row index", "date", PERSONAL, "free text", "name", "identifier", "leakage",
         "another model", "after the outcome", "near copy")
#: kinds whose columns are listed one by one in the notes (each has its own measured reason)
ONE_BY_ONE = ("leakage", "another model", "after the outcome", "near copy")

#: a text column with more distinct values than this share of its non-missing rows is an identifier
NEAR_UNIQUE_SHARE = 0.5
#: an integer column with at least this share of distinct values is an identifier (ids, case numbers)
UNIQUE_INT_SHARE = 0.95
#: rows a column needs before identifier, name or free-text rules apply (tiny tables keep everything)
#: a column with at most n / GROUP_ROWS distinct values has groups large enough for leakage checks
GROUP_ROWS = 5
#: rows sampled for the first pass of leakage checks (the shape checks sample SAMPLE distinct values)
LEAK_SAMPLE = 20_000

_NAME_VALUE = re.compile(r"^[^\W\d_]+(?:[ '’.\-][^\W\d_]+){0,4}\.?$")
_NAME_HINT = re.compile(
    r"(^|[_\s.])(name|names|first|last|firstname|lastname|surname|forename|given|fname|lname|"
    r"full_?name|middle)($|[_\s.])", re.IGNORECASE)


@dataclass(frozen=True)
class AttributeScreen:
    """The default attributes of a table and the columns left out, with the reason for each.

    ``attributes`` are in column order; ``left_out`` maps a column to a one-sentence reason;
    ``kinds`` maps it to one of :data:`KINDS`; ``notes`` are the sentences a result's notes
    and the command line's ``--verbose`` print (one per kind); ``models`` maps a column holding
    another model's output to ``"labels"``, ``"score"`` or ``"prediction"`` (a comparison's
    reference); ``copies`` maps a near copy to the attribute kept in its place.
    """

    attributes: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)
    copies: dict[str, str] = field(default_factory=dict)


def _free_text(present: pd.Series, distinct: int) -> tuple[bool, str]:
    """Long strings, most of them distinct."""
    if distinct <= NEAR_UNIQUE_SHARE * len(present):
        return False, ""
    sample = text_sample(present)
    length = float(np.mean([len(s) for s in sample]))
    words = float(np.mean([len(s.split()) for s in sample]))
    if length >= 30 or words >= 5:
        return True, (f"free text: {distinct:,} distinct values in {len(present):,} rows, "
                      f"{length:.0f} characters on average")
    return False, ""


def _person_names(name: str, present: pd.Series, distinct: int, commonest: Callable[[], int]) -> tuple[bool, str]:
    """Many distinct short alphabetic values (one to five words), each rare (``commonest()``: the count of
    the commonest value)."""
    if distinct < 50:
        return False, ""
    top = commonest() / len(present)
    if top > 0.05:
        return False, ""
    sample = text_sample(present)
    shaped = sum(1 for s in sample if _NAME_VALUE.match(s.strip()))
    if shaped < 0.9 * len(sample):
        return False, ""
    hinted = bool(_NAME_HINT.search(str(name)))
    if not (hinted or distinct >= 0.2 * len(present)):
        return False, ""
    return True, (f"person names: {distinct:,} distinct values, the most common on {_share(top)} of rows")


def _share(x: float) -> str:
    return f"{x:.1%}" if x >= 0.001 else f"{100 * x:.2g}%"


def _identifier(series: pd.Series, present: pd.Series, distinct: int) -> tuple[bool, str]:
    n = len(present)
    if is_text(series):
        if distinct > NEAR_UNIQUE_SHARE * n:
            return True, f"{distinct:,} distinct values in {n:,} rows (an identifier)"
        return False, ""
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return False, ""
    values = present.to_numpy(dtype=float)
    if not np.all(np.mod(values, 1) == 0):
        return False, ""  # a continuous measurement, binned as usual
    if distinct >= UNIQUE_INT_SHARE * n:
        what = "unique integers" if distinct == n else f"{distinct:,} distinct integers in {n:,} rows"
        return True, f"{what} (an identifier)"
    return False, ""


# ----------------------------------------------------------------------------- leakage
@dataclass
class _Role:  # a role column's values, as the leakage checks use them
    label: str  # "the score 'decile_score'"
    codes: np.ndarray  # factorized, missing as its own code
    k: int  # distinct codes
    numeric: np.ndarray | None  # float values (NaN missing) when numeric
    values: pd.Series
    #: ("column", name) or ("threshold", score column, threshold): what an engine re-checks
    source: tuple = ()
    #: "target", "prediction", "score", or "leak" (a column already left out as leakage)
    kind: str = "target"
    _text: pd.Series | None = None

    def text(self) -> pd.Series:
        """The values as text (computed once)."""
        if self._text is None:
            self._text = self.values.astype("string")
        return self._text


def _factorize(values) -> tuple[np.ndarray, int]:
    return factorized(values)


def _n_pairs(a: np.ndarray, b: np.ndarray, kb: int, ka: int | None = None) -> int:
    """Distinct (a, b) pairs (codes below ``ka`` and ``kb``): counted in a table when it is small."""
    if ka is not None and ka * kb <= 4 * len(a):
        return int(np.count_nonzero(np.bincount(a * kb + b, minlength=ka * kb)))
    return len(pd.unique(a * kb + b))


def _determines(cx: np.ndarray, kx: int, cy: np.ndarray, ky: int) -> bool:
    """Every value of x goes with one value of y."""
    return _n_pairs(cx, cy, ky, kx) == kx


def _numeric(series: pd.Series) -> np.ndarray | None:
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return None
    return series.to_numpy(dtype=float, na_value=np.nan)


def _monotone(x: np.ndarray, y: np.ndarray) -> int:
    """+1 (or -1) when x is a strictly increasing (decreasing) function of y, missing alike; else 0."""
    mx, my = np.isnan(x), np.isnan(y)
    if not np.array_equal(mx, my):
        return 0
    x, y = x[~mx], y[~my]
    if len(x) < 3:
        return 0
    order = np.argsort(y, kind="stable")
    dy, dx = np.diff(y[order]), np.diff(x[order])
    if np.any((dy == 0) & (dx != 0)):
        return 0
    step = dy > 0
    if not step.any():
        return 0
    if np.all(dx[step] > 0):
        return 1
    if np.all(dx[step] < 0):
        return -1
    return 0


def _binning_of(cx: np.ndarray, kx: int, y: np.ndarray) -> bool:
    """x cuts the numeric y into intervals: constant on ties of y, changing at most kx - 1
    times along increasing y (missing y rows must share one x value)."""
    missing = np.isnan(y)
    if missing.any() and len(np.unique(cx[missing])) > 1:
        return False
    x, yv = cx[~missing], y[~missing]
    if len(x) < 3:
        return False
    order = np.argsort(yv, kind="stable")
    xs, ys = x[order], yv[order]
    tie = np.diff(ys) == 0
    change = np.diff(xs) != 0
    if np.any(tie & change):
        return False
    return int(change.sum()) <= len(np.unique(xs)) - 1


def _leak_reason(name: str, rows: Sample, role: _Role) -> tuple[str, tuple[str, ...]] | None:
    """Why the column leaks this role, and the dependencies that say so (``copy``: equal values;
    ``x->y``: the column determines the role; ``y->x``: the role determines the column;
    ``x->y present``: where the column is present), or None. Checked on the values, on the rows of
    ``rows`` (the role's values on the same rows)."""
    (cx, kx), x_num, n = rows.codes(name), rows.numeric(name), rows.n
    if kx < 2:
        return None
    # an exact copy (numbers equal as numbers, text equal as text)
    if role.numeric is not None and x_num is not None:
        if np.array_equal(x_num, role.numeric, equal_nan=True):
            return f"a copy of {role.label}", ("copy",)
    elif x_num is None and role.numeric is None and (
            equal_as_text(rows, name, role.source[1]) if role.source[0] == "column"  # the role's column on these rows
            else rows.series(name).astype("string").equals(role.text())):
        return f"a copy of {role.label}", ("copy",)
    if n < MIN_ROWS:  # too few rows to tell a dependency from chance
        return None
    few_x = kx <= n / GROUP_ROWS
    few_y = 2 <= role.k <= n / GROUP_ROWS
    x_to_y = few_x and _determines(cx, kx, role.codes, role.k)
    y_to_x = few_y and _determines(role.codes, role.k, cx, kx)
    if (y_to_x and role.kind == "score" and role.numeric is not None and role.k > SCORE_VALUES
            and not _binning_of(cx, kx, role.numeric)):
        # a score of many values that gives a column, but not in intervals of it, is a function of that
        # column (one of a model's inputs: every input of a score on categories is "given" by it), not the
        # reverse (issue 44: capital-gain beside a boosted model's probability on Adult)
        y_to_x = False
    if x_to_y and y_to_x:
        return f"a relabelling of {role.label} (one value of it for each of its values)", ("x->y", "y->x")
    if y_to_x:
        return f"determined by {role.label} (a function of its values)", ("y->x",)
    if role.numeric is not None and not few_y and kx <= n / GROUP_ROWS and _binning_of(cx, kx, role.numeric):
        return f"determined by {role.label} (intervals of its values)", ("y->x",)
    if role.numeric is not None and x_num is not None and role.k >= 3:
        sign = _monotone(x_num, role.numeric)
        if sign:
            return (f"a{'n increasing' if sign > 0 else ' decreasing'} transform of {role.label}",
                    ("x->y", "y->x"))
    if x_to_y and role.k >= 2:
        return f"its values determine {role.label} exactly", ("x->y",)
    # determines the role where the column is present (a partial copy), present on most rows
    present = rows.present(name)
    if few_x and role.k >= 2 and 0.5 * n <= present.sum() < n:
        cxp, kxp = _factorize(rows.series(name)[present])
        cyp, kyp = _factorize(role.codes[present])
        if kyp >= 2 and _determines(cxp, kxp, cyp, kyp):
            return f"its values determine {role.label} exactly where it is present", ("x->y present",)
    if role.kind in ("target", "prediction") and 2 <= role.k <= 10 and (few_x or x_num is not None):
        acc, base = _agreement(x_num, cx, kx, role, rows.binned(name) if x_num is not None and kx > 50 else None)
        if acc >= NEAR_COPY and 1 - acc <= NEAR_COPY_ERROR * (1 - base):
            return (f"a near copy of {role.label}: guessing it from this column is right on {acc:.1%} "
                    "of rows", ())
    if role.kind == "score" and role.numeric is not None and x_num is not None:
        rho = same_scale(x_num, role.numeric)
        if rho is not None:
            return (f"{OTHER_SCORE}: on the scale of {role.label}, ranking the rows like it (rank "
                    f"correlation {rho:.2f})", ())
    return None


#: a column whose values give the target (or prediction) on this share of rows, cutting the
#: error of always guessing the commonest value by NEAR_COPY_ERROR or more, is a near copy of it
NEAR_COPY = 0.95
NEAR_COPY_ERROR = 0.2
#: a score with more distinct values than this leaks a column it gives only in intervals of its values
SCORE_VALUES = 20
#: how a reason naming another model's score begins (its kind is "another model")
OTHER_SCORE = "another model's score"


def _agreement(x_num, cx: np.ndarray, kx: int, role: _Role,
               bins: tuple[np.ndarray, int, np.ndarray] | None = None) -> tuple[float, float]:
    """Share of rows whose role value is the commonest one for their column value (numbers with
    many values in ten equal-count bins, so small groups do not agree by chance), and the share
    of the commonest role value overall. ``bins``: the column's groups when binned
    (:func:`~.column_rules.binned` of ``x_num``: the same ten bins when BINS is 10)."""
    if x_num is not None and kx > 50:
        if bins is not None and BINS == 10:
            cx, kx = bins[0], bins[1]
        else:
            ranks = pd.Series(x_num).rank(method="average", pct=True).to_numpy()
            cx = np.where(np.isnan(ranks), 10, np.minimum((np.nan_to_num(ranks) * 10).astype(np.int64), 9))
            kx = 11
    table = np.bincount(cx * role.k + role.codes, minlength=kx * role.k).reshape(kx, role.k)
    n = len(cx)
    return float(table.max(axis=1).sum() / n), float(table.sum(axis=0).max() / n)


def _roles(df: pd.DataFrame, target, prediction, score, threshold, full: Sample | None = None) -> list[_Role]:
    """The roles whose copies and functions leak, on every row (``full``: the table's columns read once)."""
    full = full if full is not None else Sample(df, None)
    roles = []
    for kind, col in (("the target", target), ("the prediction", prediction), ("the score", score)):
        if col is None or col not in df.columns:
            continue
        s = df[col]
        codes, k = full.codes(col)
        roles.append(_Role(f"{kind} '{col}'", codes, k, full.numeric(col), s, ("column", col), kind.split()[-1]))
    if score is not None and prediction is None and threshold is not None and score in df.columns:
        num = _numeric(df[score])
        if num is not None:
            with np.errstate(invalid="ignore"):
                pred = np.where(np.isnan(num), np.nan, (num >= float(threshold)).astype(float))
            s = pd.Series(pred, index=df.index)
            codes, k = _factorize(s)
            roles.append(_Role(f"the prediction ('{score}' >= {threshold:g})", codes, k, pred, s,
                               ("threshold", score, float(threshold)), "prediction"))
    return roles


def _leakage(df: pd.DataFrame, candidates: list[str], roles: list[_Role], deadline: float | None = None,
             sample: Sample | None = None) -> dict[str, tuple]:
    """Columns that leak a role: column -> (reason, role source, dependencies); a first pass on
    a sample rules most columns out cheaply (``sample``: the table's columns read once for every rule
    of the screen)."""
    n = len(df)
    out: dict[str, tuple] = {}
    if not roles:
        return out
    rows = (sample if sample is not None else Sample(df, None)).sized(LEAK_SAMPLE)
    idx = rows.idx
    if idx is not None:
        small = [_Role(r.label, *(rows.codes(r.source[1]) if r.source[0] == "column" else _factorize(r.values.iloc[idx])),
                       None if r.numeric is None else r.numeric[idx], r.values.iloc[idx], r.source, r.kind)
                 for r in roles]
    else:
        small = roles
    for done, col in enumerate(candidates):
        if done % 16 == 0:
            check_deadline(deadline, f"checked {done:,} of {len(candidates):,} attributes for leaks")
        for k, role in enumerate(roles):  # the column read once for every role (rows)
            found = _leak_reason(col, rows, small[k])
            if found is not None and idx is not None:
                found = _leak_reason(col, rows.full, role)  # confirmed on every row
            if found is not None:
                out[col] = (found[0], role.source, found[1])
                break
    # a function of a column left out as leakage leaks too (score_text beside a second score)
    while out:
        found_more = {}
        for col in candidates:
            if col in out:
                continue
            cx, kx = rows.full.codes(col)
            for name in out:
                codes, k = rows.full.codes(name)
                if not 2 <= k <= n / GROUP_ROWS:
                    continue
                if kx >= 2 and _determines(codes, k, cx, kx):
                    found_more[col] = (f"determined by column '{name}', itself left out as leakage",
                                       ("column", name), ("y->x",))
                    break
        if not found_more:
            return out
        out.update(found_more)
    return out


# ----------------------------------------------------------------------------- the screen
def _classify(name: str, series: pd.Series, full: Sample | None = None) -> tuple[str, str] | None:
    """(kind, reason) for a column left out whatever the roles are, or None. ``full``: the table's
    columns read once for the screen (``series`` is its column ``name``)."""
    n = len(series)
    present = series.dropna() if series.hasnans else series  # the same values: no copy of a full column
    if len(present) == 0:
        return "all missing", "missing on every row"
    if is_row_index(name, series):
        return row_index_kind(name, float(present.min()), float(present.max()), len(series))
    if is_datetime(series) or is_date_column(series, present):
        return "date", DATE_REASON
    if full is not None and isinstance(series.dtype, pd.StringDtype):
        # text: its distinct values and the commonest one's count from the factorize every rule shares (equal
        # values are equal strings, so value_counts counts the same)
        codes, uniques = full.factorized(name)
        distinct, top = len(uniques), lambda: np.bincount(codes[codes >= 0]).max()
    else:
        counts = present.value_counts()
        distinct, top = len(counts), lambda: counts.iloc[0]
    if distinct == 1 and len(present) == n:
        return "constant", f"one value ({present.iloc[0]!r}) on every row"
    return _shape_kind(name, series, present, distinct, top)


def row_index_kind(name: object, lo: float, hi: float, n: int) -> tuple[str, str]:
    """Unique integers: a row number when unnamed or counting 0..n-1 (1..n), else an identifier."""
    text = str(name)
    if text.strip() == "" or text.startswith("Unnamed:") or (lo in (0, 1) and hi - lo == n - 1):
        return "row index", "it only numbers the rows"
    return "identifier", "unique integers (an identifier)"


DATE_REASON = "dates or times (name it as an attribute to bin it by month, quarter or year)"


def shape_kind(name: str, series: pd.Series, present: pd.Series, counts: pd.Series) -> tuple[str, str] | None:
    """Free text, person names or an identifier, from the values (or a sample of them); ``counts``: the
    values' counts present (``value_counts``)."""
    return _shape_kind(name, series, present, len(counts), lambda: counts.iloc[0])


def _shape_kind(name: str, series: pd.Series, present: pd.Series, distinct: int,
                top: Callable[[], int]) -> tuple[str, str] | None:
    """:func:`shape_kind` from the number of distinct values and the commonest one's count (``top()``)."""
    if len(present) < MIN_ROWS:
        return None
    if is_text(series):
        free, why = _free_text(present, distinct)
        if free:
            return "free text", why
        is_name, why = _person_names(name, present, distinct, top)
        if is_name:
            return "name", why
    is_id, why = _identifier(series, present, distinct)
    if is_id:
        return "identifier", why
    return None


_PLURAL = {
    "all missing": "columns missing on every row",
    "constant": "constant columns",
    "row index": "row-number columns",
    "date": "date and time columns",
    PERSONAL: "columns of personal identifiers",
    "free text": "free-text columns",
    "name": "person-name columns",
    "identifier": "identifier columns",
    "leakage": "columns that leak the outcome",
    "another model": "columns holding another model's outputs",
    "after the outcome": "columns that read the target far better than the model",
    "near copy": "near copies of another attribute",
}


def screen_notes(left_out: dict[str, str], kinds: dict[str, str]) -> list[str]:
    notes = []
    for kind in KINDS:
        cols = [c for c in left_out if kinds[c] == kind]
        if not cols:
            continue
        if kind == PERSONAL:
            notes += personal_notes(cols, left_out)
            continue
        if len(cols) == 1 or kind in ONE_BY_ONE:
            for c in cols:
                notes.append(f"Left out column '{c}' from the attributes: {left_out[c]}.")
            continue
        listed = ", ".join(f"'{c}'" for c in cols)
        extra = ""
        if kind == "date":
            extra = " (name one as an attribute to bin it by month, quarter or year)"
        elif kind in ("identifier", "name", "free text"):
            extra = " (name one as an attribute to include it)"
        notes.append(f"Left out {len(cols)} {_PLURAL[kind]} from the attributes: {listed}{extra}.")
    return notes


#: what each measured kind means, for the one-line summaries of :func:`screen_summary`
_SUMMARY = {
    "after the outcome": "Read after the outcome (the target is read from them far better than from the model or any "
                         "other attribute, or they are outcomes of the same rows)",
    "another model": "Another model's outputs",
    "near copy": "Near copies of another attribute",
    "leakage": "Copies or functions of the target, the prediction or the score",
}


def screen_summary(screen: AttributeScreen) -> list[str]:
    """One line per measured kind of column left out (after the outcome, another model, near copy,
    leakage), naming its columns: what an analyst checks first, above the full list of reasons."""
    lines = []
    for kind, what in _SUMMARY.items():
        cols = [c for c, k in screen.kinds.items() if k == kind]
        if cols:
            named = ", ".join(f"`{c}`" + (f" (of `{screen.copies[c]}`)" if c in screen.copies else "") for c in cols)
            lines.append(f"{what}: {named}.")
    return lines


def screen_attributes(
    df: pd.DataFrame,
    roles: Sequence[str] = (),
    *,
    target: str | None = None,
    prediction: str | None = None,
    score: str | None = None,
    threshold: float | None = None,
) -> AttributeScreen:
    """The default attributes of ``df``: every column not in ``roles``, less the columns a
    careful analyst would not slice by, each with its reason.

    Parameters
    ----------
    df : the table.
    roles : the columns used as target, prediction, score, rank or outcome (never attributes).
    target, prediction, score : the role columns whose copies and deterministic functions
        are left out as leakage (checked on the values: an exact copy, a relabelling, a
        function of the role's values or intervals of them, a monotone transform, or a
        column whose values determine the role exactly).
    threshold : with ``score`` and no ``prediction``, the predicted labels ``score >=
        threshold`` are checked for leakage too.
    """
    return screen(df, roles, target=target, prediction=prediction, score=score, threshold=threshold)[0]


def screen(df: pd.DataFrame, roles: Sequence[str], *, target=None, prediction=None, score=None,
            threshold=None, classify=None, deadline: float | None = None) -> tuple[AttributeScreen, dict[str, tuple]]:
    """screen_attributes(), with the leakage found: column -> (reason, role source, dependencies).
    ``classify(name, series)`` may replace the role-free checks (an engine's exact counts).
    ``deadline`` (``time.monotonic()``): past it, :class:`~divergence.data.column_rules.ScreenTimeout`."""
    sample = Sample(df)  # the columns on the rows the rules measure, each read once for every rule
    classify = classify or (lambda name, series: _classify(name, series, sample.full))
    used = set(roles) | {c for c in (target, prediction, score) if c is not None}
    kinds: dict[str, str] = {}
    left_out: dict[str, str] = {}
    kept: list[str] = []
    for done, col in enumerate(df.columns):
        if done % 16 == 0:
            check_deadline(deadline, f"checked {done:,} of {len(df.columns):,} columns")
        if col in used:
            continue
        found = unsupported_kind(df[col]) or classify(col, df[col])  # lists, structs, bytes: never sliced by
        if found is None or found[0] in OVERRIDES:  # a name, an email, a phone: said so (divergence.data.personal)
            found = personal_kind(col, df[col], MIN_ROWS) or found
        if found is None:
            kept.append(col)
        else:
            kinds[col], left_out[col] = found
    # a fitted model's features are its inputs: a function of them is the model, not a leak (issue 44)
    inputs = set(df.attrs.get(MODEL_FEATURES, ())) & set(kept)
    leaks = _leakage(df, [c for c in kept if c not in inputs],
                     _roles(df, target, prediction, score, threshold, sample.full), deadline, sample)
    models: dict[str, str] = {}
    for col, (why, source, _) in leaks.items():
        kinds[col], left_out[col] = "leakage", why
        if why.startswith(OTHER_SCORE):
            kinds[col], models[col] = "another model", "score"
    for col, (why, source, _) in leaks.items():  # a function of another model's output is one too
        if source[0] == "column" and kinds.get(source[1]) == "another model" and kinds[col] == "leakage":
            kinds[col] = "another model"
            left_out[col] = f"determined by column '{source[1]}', itself another model's output"
    rest = [c for c in kept if c not in leaks and c not in inputs]
    measured = model_rules(df, rest, target=target, prediction=prediction, score=score, threshold=threshold,
                           deadline=deadline, sample=sample)
    rest = [c for c in rest if c not in measured]
    measured.update(scores_behind(df, rest, [c for c, f in measured.items() if f.output == "labels"], sample))
    rest = [c for c in rest if c not in measured]
    measured.update(later_rules(df, rest, {**{c: kinds[c] for c in leaks}, **{c: f.kind for c, f in measured.items()}},
                                models={**models, **{c: f.output for c, f in measured.items() if f.output}},
                                target=target, prediction=prediction, score=score, threshold=threshold,
                                fitted=MODEL_FEATURES in df.attrs, deadline=deadline, sample=sample))
    rest = [c for c in kept if c not in leaks and c not in measured]  # the model's inputs too: near copies
    copies = near_copies(df, rest, deadline=deadline, sample=sample)
    for col, f in {**measured, **copies}.items():
        kinds[col], left_out[col] = f.kind, f.reason
        if f.output:
            models[col] = f.output
    leaks = {**leaks, **{c: (f.reason, (), ()) for c, f in {**measured, **copies}.items()}}
    order = {c: i for i, c in enumerate(df.columns)}
    left_out = dict(sorted(left_out.items(), key=lambda kv: order[kv[0]]))
    attributes = [c for c in kept if c not in leaks]
    result = AttributeScreen(attributes=attributes, left_out=left_out,
                             kinds={c: kinds[c] for c in left_out},
                             notes=[which_screen(df, target=target, prediction=prediction, score=score,
                                                 threshold=threshold)]
                             + screen_notes(left_out, kinds) + nested_notes(left_out, kinds),
                             models={c: models[c] for c in left_out if c in models},
                             copies={c: f.of for c, f in copies.items()})
    return result, leaks


def check_attributes(attributes: Sequence[str], columns: Container[str], taken: Sequence[str],
                     role: str = "an outcome role") -> list[str]:
    """Attributes chosen by the user, checked against the data's ``columns`` and the columns
    ``taken`` by a role (which cannot also be sliced by)."""
    attrs = list(attributes)
    missing = [a for a in attrs if a not in columns]
    if missing:
        raise DivergenceInputError(f"Attribute column '{missing[0]}' is not in the data.")
    clash = [a for a in attrs if a in taken]
    if clash:
        raise DivergenceInputError(f"Column '{clash[0]}' is used as {role} and cannot also be an attribute.")
    return attrs


def role_columns(**roles: object) -> list[str]:
    """The columns used as target, prediction, score, rank or outcome (not attributes)."""
    out: list[str] = []
    for value in roles.values():
        if value is None:
            continue
        # a role holds a column or a list of them
        for col in ([value] if isinstance(value, str) else list(value)):  # type: ignore[call-overload]
            if col not in out:
                out.append(col)
    return out


def default_attributes(df: pd.DataFrame, exclude: Sequence[str], *, target: str | None = None,
                       prediction: str | None = None, score: str | None = None,
                       threshold: float | None = None, deadline: float | None = None) -> tuple[list[str], list[str]]:
    """Every column not in ``exclude``, less those a careful analyst would not slice by (see
    :func:`divergence.data.columns.screen_attributes`); with the notes saying which and why.
    ``deadline`` as in :func:`screen`."""
    found = screen(df, exclude, target=target, prediction=prediction, score=score, threshold=threshold,
                   deadline=deadline)[0]
    return found.attributes, found.notes


def check_frame(df: object) -> pd.DataFrame:
    """The table itself, checked: a DataFrame with rows, columns and no name twice."""
    if not isinstance(df, pd.DataFrame):
        raise DivergenceInputError(f"Expected a pandas DataFrame; got {type(df).__name__}.")
    if len(df) == 0:
        raise DivergenceInputError("The table is empty: it has no rows.")
    if len(df.columns) == 0:
        raise DivergenceInputError("The table has no columns.")
    dups = df.columns[df.columns.duplicated()]
    if len(dups):
        raise DivergenceInputError(f"Column name '{dups[0]}' appears more than once.")
    return df

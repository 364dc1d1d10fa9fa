"""The slice view: a SliceTable's rows sorted, filtered and cut to the top N, and formatted for
people (labels, intervals, verdicts in words). Pure functions (no Streamlit); nothing here computes a
statistic: it reads the table's columns. Cards, figures and export live beside it (``cards``,
``figures``, ``export``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..table import MetricStatistics, SliceTable
from .formats import (
    DASH,
    finding_labels,
    format_count,
    format_divergence,
    format_interval,
    format_number,
    format_p,
    format_percent,
    format_value,
    is_undefined,
    metric_label,
    verdict_label,
)

__all__ = ["COLUMN_LABELS", "SliceView", "slice_view", "sort_options", "DEFAULT_ORDER_LABEL", "default_ascending",
           "display_frame", "display_sort_columns", "redundancy_epsilon"]


#: People's names of the per-metric columns (suffix after ``M_``; '' is the metric itself).
COLUMN_LABELS = {
    "itemset": "Slice", "length": "Items", "count": "Rows", "support": "Support",
    "": "{M}", "count_m": "Rows measured", "divergence": "Divergence", "ci": "Interval",
    "t": "t", "p": "p", "q": "q", "meets_min_size": "Min size", "baseline": "Slice baseline",
    "lift": "Lift", "lift_shortfall": "Lift shortfall", "boot": "Bootstrap interval",
    "replicated": "Replicated", "replicated_value": "Replication value", "verdict": "Verdict",
    "divergence_shrunk": "Shrunk divergence", "divergence_bound": "Divergence bound nearest zero",
    "reference": "Achievable error", "replicated_divergence": "Replicated divergence",
}


@dataclass(frozen=True)
class SliceView:
    """The top rows of a sorted, filtered slice table, and how many rows matched."""

    rows: pd.DataFrame
    n_matching: int
    n_slices: int
    sort_by: str
    ascending: bool


#: the columns :meth:`SliceTable.default_sort_column` may choose, by suffix, and their labels
_SORT_LABELS = {"order": "Default order (distinct findings first)", "divergence": "Divergence"}
#: the label of the default order in a sort box
DEFAULT_ORDER_LABEL = _SORT_LABELS["order"]


def sort_options(table: SliceTable, metric: str) -> dict[str, str]:
    """Sortable columns of a metric's view: {people's label: frame column}, default first."""
    stats = table.statistics(metric)
    opts: dict[str, str] = {}
    default = table.default_sort_column(stats.name)
    # the default first
    opts[next(label for key, label in _SORT_LABELS.items() if stats.column(key) == default)] = default
    for key, label in (*_SORT_LABELS.items(), ("lift_shortfall", "Lift shortfall"),
                       ("divergence_shrunk", "Shrunk divergence"),
                       ("divergence_bound", "Divergence bound nearest zero")):
        if stats.get(key) is not None:
            opts[label] = stats.column(key)
    opts.update(_score_options(table, stats))
    opts[stats.name.upper() if len(stats.name) <= 4 else stats.name] = stats.name
    for key, label in [("t", "t"), ("p", "p"), ("q", "q"), ("ci_low", "Interval low"),
                       ("ci_high", "Interval high"), ("divergence_ci_low", "Divergence interval low"),
                       ("baseline", "Slice baseline"), ("lift", "Lift"), ("boot_low", "Bootstrap low"),
                       ("reference", "Achievable error"), ("replicated_value", "Replication value"),
                       ("replicated_divergence", "Replicated divergence"), ("replicated", "Replicated"),
                       ("meets_min_size", "Min size"), ("verdict", "Verdict"), ("count", "Rows measured")]:
        if stats.get(key) is not None:
            opts[label] = stats.column(key)
    opts["Rows"] = "count"
    opts["Support"] = "support"
    opts["Items"] = "length"
    opts["Slice"] = "itemset"
    return opts


def _score_options(table: SliceTable, stats: MetricStatistics) -> dict[str, str]:
    """The peers' scores as sort keys (computed when chosen: :mod:`divergence.scores`)."""
    from ..scores import SLICELINE_ALPHA, parse_score

    alpha = next((parse_score(sp).alpha for sp in (table.params.get("scores") or [])
                  if parse_score(sp).kind == "sliceline"), SLICELINE_ALPHA)
    return {f"SliceLine score (α = {alpha:g})": stats.column("sliceline"),
            "WRAcc (support × divergence)": stats.column("wracc"),
            "Lift (slice / whole dataset)": stats.column("ratio")}


def _with_score(table: SliceTable, stats: MetricStatistics, col: str) -> SliceTable:
    """``table`` with the peer's score behind ``col`` (``M_sliceline``, ``M_wracc``, ``M_ratio``) added."""
    from ..scores import add_scores

    spec = {stats.column(key): score for key, score in _SCORES.items()}.get(col)
    return add_scores(table, [spec], [stats.name]) if spec and col not in table.columns else table


#: the peers' scores a view sorts by: the suffix of their column, the score computing it (:mod:`divergence.scores`)
_SCORES = {"sliceline": "sliceline", "wracc": "wracc", "ratio": "lift"}


def default_ascending(column: str) -> bool:
    """Ascending for p- and q-values and the slice's name; largest first otherwise. The default
    order's position column reads its "largest first" as from its first slice (see
    :func:`slice_view`), so every sort starts the same way."""
    return column.endswith(("_p", "_q")) or column == "itemset"


def slice_view(
    table: SliceTable,
    *,
    metric: str | None = None,
    sort_by: str | None = None,
    ascending: bool | None = None,
    verdicts: Sequence[str] | None = None,
    meets_min_size: bool | None = None,
    lengths: tuple[int, int] | None = None,
    attributes: Sequence[str] | None = None,
    top_n: int = 50,
    exclude: np.ndarray | None = None,
) -> SliceView:
    """The ``top_n`` slices (never the whole dataset) under a sort and filters.

    ``verdicts``: keep these verdicts (needs the statistics columns); ``meets_min_size``:
    keep only slices at or above the minimum size (True) or below it (False);
    ``lengths``: (fewest, most) items; ``attributes``: keep slices that use any of them;
    ``exclude``: a boolean mask of slices to leave out (e.g. redundant ones).
    Fast on 100,000 slices: one boolean mask, then a partial sort of the matching rows.
    """
    stats = table.statistics(metric)
    col = sort_by or table.default_sort_column(stats.name)
    table = _with_score(table, stats, col)
    frame = table.frame
    if col not in frame.columns:
        raise DivergenceInputError(f"Cannot sort by '{col}': the table has no such column.")
    asc = default_ascending(col) if ascending is None else bool(ascending)
    # the default order's positions: "largest first" (not ascending) is from its first slice
    by_position = col.endswith("_order")
    keep = np.ones(len(frame), dtype=bool)
    keep[0] = False
    if verdicts is not None and stats.verdict is not None:
        keep &= pd.Series(stats.verdict).isin(list(verdicts)).to_numpy()
    if meets_min_size is not None and stats.meets_min_size is not None:
        keep &= np.asarray(stats.meets_min_size, dtype=bool) == bool(meets_min_size)
    if lengths is not None:
        lo, hi = lengths
        keep &= (table.lengths >= lo) & (table.lengths <= hi)
    if attributes:
        idx = [table.attributes.index(a) for a in attributes if a in table.attributes]
        keep &= (table.codes[:, idx] >= 0).any(axis=1) if idx else False
    if exclude is not None:
        keep &= ~np.asarray(exclude, dtype=bool)
    matching = np.nonzero(keep)[0]
    values = frame[col].to_numpy()[matching]
    order = _order(values, (not asc) if by_position else asc, frame["support"].to_numpy()[matching], top_n)
    rows = frame.iloc[matching[order]]
    return SliceView(rows=rows, n_matching=int(matching.size), n_slices=len(table) - 1,
                     sort_by=col, ascending=asc)


def _order(values: np.ndarray, ascending: bool, support: np.ndarray, top_n: int) -> np.ndarray:
    """Positions of the first ``top_n`` values in order, NaN last, ties by larger support."""
    n = values.size
    if values.dtype == object or values.dtype.kind in "US":
        s = pd.Series(values)
        key = s.rank(method="dense", ascending=ascending, na_option="bottom").to_numpy()
    else:
        v = values.astype(float)
        key = np.where(np.isnan(v), np.inf, v if ascending else -v)
    # lexsort: last key first; a partial sort first when there are many rows
    if top_n < n // 4:
        cut = np.partition(key, top_n)[top_n] if top_n < n else np.inf
        cand = np.nonzero(key <= cut)[0]
    else:
        cand = np.arange(n)
    order = cand[np.lexsort((-support[cand], key[cand]))]
    return order[:top_n]




def display_frame(table: SliceTable, rows: pd.DataFrame, metric: str | None = None, *,
                  also: Sequence[str] = ()) -> pd.DataFrame:
    """The rows as text for people (formats from :mod:`divergence.present.formats`): the slice, its
    rows, the metric with its interval, the divergence, q, and every statistics column the
    table has for the metric (slice baseline, lift, bootstrap interval, replication, verdict).
    A significant slice below the minimum size keeps its verdict, marked in the verdict cell
    ('above · indicative').

    Support, length, t, p and the min-size flag are left out (the CSV and the slice detail
    have them) unless named in ``also`` (e.g. the column the rows are sorted by).
    """
    stats = table.statistics(metric)
    m, binary = stats.name, stats.info.binary
    f = rows
    at = f.index.to_numpy()  # the rows' positions in the table

    def has(key: str) -> bool:
        return stats.get(key) is not None

    def col(key: str) -> pd.Series:
        """The statistic ``key`` at the rows (as the frame's column there)."""
        return pd.Series(np.asarray(stats.get(key))[at], index=f.index)

    shown_also = set(also)
    out: dict[str, Iterable[str]] = {"Slice": f["itemset"].astype(str)}
    if "length" in also:
        out["Items"] = f["length"].map(str)
    out["Rows"] = f["count"].map(format_count)
    if "support" in also:
        out["Support"] = f["support"].map(format_percent)
    if (col("count") != f["count"]).any() or stats.column("count") in shown_also:
        out["Measured"] = col("count").map(format_count)
    out[metric_label(m)] = col("value").map(lambda x: format_value(x, binary))
    if has("ci_low"):
        out["Interval"] = [format_interval(a, b, binary) for a, b in zip(col("ci_low"), col("ci_high"))]
    out["Divergence"] = col("divergence").map(lambda x: format_divergence(x, binary))
    if has("finding"):
        out["Finding"] = finding_labels(f, m, binary)
    if has("order"):  # the slice's place in the default order
        out["Order"] = col("order").map(format_count)
    for key, label in (("divergence_shrunk", "Shrunk divergence"),
                       ("divergence_bound", "Divergence bound nearest zero")):
        if stats.column(key) in shown_also and has(key):  # shown when the rows are sorted by it
            out[label] = col(key).map(lambda x: format_divergence(x, binary))
    from ..scores import SCORE_LABELS

    for suffix, label in SCORE_LABELS.items():
        name = stats.column(suffix)
        if name in shown_also and name in f:  # a peer's score, computed for the rows when sorted by it
            out[label] = f[name].map(lambda x: format_number(x))
    if stats.column("t") in shown_also:
        out["t"] = col("t").map(lambda x: format_number(x))
    if stats.column("p") in shown_also or not has("q"):
        out["p"] = col("p").map(format_p)
    if has("q"):
        out["q"] = col("q").map(format_p)
    if has("meets_min_size") and stats.column("meets_min_size") in shown_also:
        out["Min size"] = col("meets_min_size").map(lambda b: "yes" if bool(b) else "no")
    if has("baseline"):
        out["Baseline"] = col("baseline").map(lambda x: format_value(x, binary))
    if has("harder"):
        out["Harder"] = col("harder").map(lambda x: format_divergence(x, binary))
    if has("reference"):
        out["Achievable"] = col("reference").map(lambda x: format_value(x, binary))
    if has("lift"):  # on the metric's natural scale (see the glossary)
        out["Lift"] = col("lift").map(format_number)
    if has("lift_shortfall"):
        out["Lift shortfall"] = col("lift_shortfall").map(format_number)
    if has("boot_low") and col("boot_low").notna().any():
        out["Bootstrap"] = [format_interval(a, b, binary) for a, b in zip(col("boot_low"), col("boot_high"))]
    if has("replicated_value"):
        out["Replication"] = [
            DASH if is_undefined(v) else f"{format_value(v, binary)} {format_interval(a, b, binary)}"
            for v, a, b in zip(col("replicated_value"), col("replicated_ci_low"), col("replicated_ci_high"))]
        if has("replicated_divergence"):
            out["Replicated divergence"] = col("replicated_divergence").map(lambda x: format_divergence(x, binary))
        out["Replicated"] = col("replicated").map(lambda b: "yes" if bool(b) else "no")
    if has("verdict"):
        q = col("q") if has("q") else col("p")
        meets = col("meets_min_size") if has("meets_min_size") else [None] * len(f)
        out["Verdict"] = [verdict_label(v, d, p, k) for v, d, p, k in zip(col("verdict"), col("divergence"), q, meets)]
    return pd.DataFrame({k: list(v) for k, v in out.items()}, index=f.index)


def display_sort_columns(table: SliceTable, metric: str | None = None) -> dict[str, str]:
    """The frame column each column of :func:`display_frame` sorts by (a click on its header)."""
    stats = table.statistics(metric)
    keys = {"Measured": "count", metric_label(stats.name): "value", "Interval": "ci_low", "Divergence": "divergence",
            "t": "t", "p": "p", "q": "q", "Min size": "meets_min_size", "Baseline": "baseline", "Harder": "harder",
            "Lift": "lift", "Lift shortfall": "lift_shortfall", "Bootstrap": "boot_low",
            "Replication": "replicated_value", "Replicated": "replicated", "Verdict": "verdict",
            "Finding": "finding", "Order": "order"}
    cols = {"Slice": "itemset", "Items": "length", "Rows": "count", "Support": "support"}
    cols.update({label: stats.column(key) for label, key in keys.items() if stats.get(key) is not None})
    from ..scores import SCORE_LABELS

    scores = {label: stats.column(suffix) for suffix, label in SCORE_LABELS.items()}  # computed when sorted by
    return cols | scores


def redundancy_epsilon(table: SliceTable, metric: str | None, eps: float) -> float:
    """ε for redundancy in the metric's units: ``eps`` standard deviations of the outcome over
    the whole dataset (σ = √(p(1−p)) for a rate), so one setting means as much for a rate, an
    absolute error or a ranking's gain. Without statistics, ``eps`` as it is."""
    info = table.assessment.min_size.get(table.metric(metric).name) if table.assessment is not None else None
    if info is None:
        return float(eps)
    return float(eps) * float(info.sigma or 0.0)

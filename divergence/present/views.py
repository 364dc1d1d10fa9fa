"""What a person sees of a SliceTable: numbers formatted for people, the sorted and
filtered slice view, role guesses for a new file, and the slice-table and interval figures.

Pure functions (no Streamlit): the dashboard and exported reports draw the same
pictures from them. Nothing here computes a statistic; it reads the table's columns.
"""
from __future__ import annotations

import html as _html
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import DivergenceInputError

if TYPE_CHECKING:
    from datetime import datetime
from ..data.roles import distinct_values, guess_positive
from ..table import SliceTable

__all__ = [
    "verdict_evidence",
    "COLUMN_LABELS", "VERDICT_COLORS", "SliceView",
    "slice_view", "sort_options", "DEFAULT_ORDER_LABEL", "default_ascending", "metric_label", "display_frame", "display_sort_columns", "redundancy_epsilon",
    "headline", "headline_tiles", "Tile", "findings", "findings_header", "Finding", "FINDING_CARDS", "guess_positive",
    "distinct_values", "describe_columns", "preview_frame", "parse_bin_spec",
    "slice_table_figure", "interval_figure", "add_interval_traces", "axis_range", "interval_layout",
    "table_csv", "figure_html", "figure_png", "export_caption", "titled_figure", "png_supported", "warm_png_exporter",
    "PNG_EXPORTER",
]

from .formats import (DASH, FINDING_VERDICTS, VERDICT_COLORS, family_sentence, finding_label, is_undefined,  # noqa: F401
                      format_count,
                      format_divergence,
                      format_divergence_interval, format_interval, format_number, format_p, format_percent, format_value, plotly_text, rgba,
                      verdict_color, verdict_label, wrap_itemset)

# ----------------------------------------------------------------------------- the slice view

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


def _has(table: SliceTable, col: str) -> bool:
    return col in table.frame.columns


#: the columns :meth:`SliceTable.default_sort_column` may choose, by suffix, and their labels
_SORT_LABELS = {"order": "Default order (distinct findings first)", "divergence": "Divergence"}
#: the label of the default order in a sort box
DEFAULT_ORDER_LABEL = _SORT_LABELS["order"]


def sort_options(table: SliceTable, metric: str) -> dict[str, str]:
    """Sortable columns of a metric's view: {people's label: frame column}, default first."""
    m = table.metric(metric).name
    opts: dict[str, str] = {}
    default = table.default_sort_column(m)
    opts[_SORT_LABELS[default.removeprefix(m + "_")]] = default  # the default first
    for suffix, label in (*_SORT_LABELS.items(), ("lift_shortfall", "Lift shortfall")):
        if _has(table, f"{m}_{suffix}"):
            opts[label] = f"{m}_{suffix}"
    if _has(table, f"{m}_divergence_shrunk"):
        opts["Shrunk divergence"] = f"{m}_divergence_shrunk"
    if _has(table, f"{m}_divergence_bound"):
        opts["Divergence bound nearest zero"] = f"{m}_divergence_bound"
    opts.update(_score_options(table, m))
    opts[m.upper() if len(m) <= 4 else m] = m
    for suffix, label in [("t", "t"), ("p", "p"), ("q", "q"), ("ci_low", "Interval low"),
                          ("ci_high", "Interval high"), ("divergence_ci_low", "Divergence interval low"),
                          ("baseline", "Slice baseline"), ("lift", "Lift"), ("boot_low", "Bootstrap low"),
                          ("reference", "Achievable error"), ("replicated_value", "Replication value"),
                          ("replicated_divergence", "Replicated divergence"), ("replicated", "Replicated"),
                          ("meets_min_size", "Min size"), ("verdict", "Verdict"), ("count", "Rows measured")]:
        if _has(table, f"{m}_{suffix}"):
            opts[label] = f"{m}_{suffix}"
    opts["Rows"] = "count"
    opts["Support"] = "support"
    opts["Items"] = "length"
    opts["Slice"] = "itemset"
    return opts


def _score_options(table: SliceTable, m: str) -> dict[str, str]:
    """The peers' scores as sort keys (computed when chosen: :mod:`divergence.scores`)."""
    from ..scores import SLICELINE_ALPHA, parse_score

    alpha = next((parse_score(sp).alpha for sp in (table.params.get("scores") or [])
                  if parse_score(sp).kind == "sliceline"), SLICELINE_ALPHA)
    return {f"SliceLine score (α = {alpha:g})": f"{m}_sliceline", "WRAcc (support × divergence)": f"{m}_wracc",
            "Lift (slice / whole dataset)": f"{m}_ratio"}


def _with_score(table: SliceTable, m: str, col: str) -> SliceTable:
    """``table`` with the peer's score behind ``col`` (``M_sliceline``, ``M_wracc``, ``M_ratio``) added."""
    from ..scores import add_scores

    spec = {f"{m}_sliceline": "sliceline", f"{m}_wracc": "wracc", f"{m}_ratio": "lift"}.get(col)
    return add_scores(table, [spec], [m]) if spec and col not in table.columns else table


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
    m = table.metric(metric).name
    col = sort_by or table.default_sort_column(m)
    table = _with_score(table, m, col)
    frame = table.frame
    if col not in frame.columns:
        raise DivergenceInputError(f"Cannot sort by '{col}': the table has no such column.")
    asc = default_ascending(col) if ascending is None else bool(ascending)
    # the default order's positions: "largest first" (not ascending) is from its first slice
    by_position = col.endswith("_order")
    keep = np.ones(len(frame), dtype=bool)
    keep[0] = False
    if verdicts is not None and f"{m}_verdict" in frame.columns:
        keep &= frame[f"{m}_verdict"].isin(list(verdicts)).to_numpy()
    if meets_min_size is not None and f"{m}_meets_min_size" in frame.columns:
        keep &= frame[f"{m}_meets_min_size"].to_numpy(dtype=bool) == bool(meets_min_size)
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


def metric_label(m: str, *, long: bool = False) -> str:
    """A metric's name for people: 'fpr' -> 'FPR' (long: 'FPR: false-positive rate')."""
    from ..vocabulary import METRIC_LABELS

    short = m.upper() if len(m) <= 4 else m.replace("_", " ")
    desc = METRIC_LABELS.get(m)
    return f"{short}: {desc}" if long and desc and desc != short else short


def _metric_label(table: SliceTable, m: str) -> str:
    return metric_label(m)


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
    info = table.metric(metric)
    m, binary = info.name, info.binary
    f = rows
    out: dict[str, Iterable[str]] = {"Slice": f["itemset"].astype(str)}
    if "length" in also:
        out["Items"] = f["length"].map(str)
    out["Rows"] = f["count"].map(format_count)
    if "support" in also:
        out["Support"] = f["support"].map(format_percent)
    if (f[f"{m}_count"] != f["count"]).any() or f"{m}_count" in also:
        out["Measured"] = f[f"{m}_count"].map(format_count)
    out[_metric_label(table, m)] = f[m].map(lambda x: format_value(x, binary))
    if f"{m}_ci_low" in f:
        out["Interval"] = [format_interval(a, b, binary) for a, b in zip(f[f"{m}_ci_low"], f[f"{m}_ci_high"])]
    out["Divergence"] = f[f"{m}_divergence"].map(lambda x: format_divergence(x, binary))
    if f"{m}_finding" in f:
        within = f[f"{m}_within"] if f"{m}_within" in f else [""] * len(f)
        out["Finding"] = [finding_label(a, b, w) for a, b, w in zip(f[f"{m}_finding"], f[f"{m}_explained_by"], within)]
    if f"{m}_order" in f:  # the slice's place in the default order
        out["Order"] = f[f"{m}_order"].map(format_count)
    for col, label in ((f"{m}_divergence_shrunk", "Shrunk divergence"),
                       (f"{m}_divergence_bound", "Divergence bound nearest zero")):
        if col in also and col in f:  # shown when the rows are sorted by it
            out[label] = f[col].map(lambda x: format_divergence(x, binary))
    from ..scores import SCORE_LABELS

    for suffix, label in SCORE_LABELS.items():
        if f"{m}_{suffix}" in also and f"{m}_{suffix}" in f:  # a peer's score, when the rows are sorted by it
            out[label] = f[f"{m}_{suffix}"].map(lambda x: format_number(x))
    if f"{m}_t" in also:
        out["t"] = f[f"{m}_t"].map(lambda x: format_number(x))
    if f"{m}_p" in also or f"{m}_q" not in f:
        out["p"] = f[f"{m}_p"].map(format_p)
    if f"{m}_q" in f:
        out["q"] = f[f"{m}_q"].map(format_p)
    if f"{m}_meets_min_size" in f and f"{m}_meets_min_size" in also:
        out["Min size"] = f[f"{m}_meets_min_size"].map(lambda b: "yes" if bool(b) else "no")
    if f"{m}_baseline" in f:
        out["Baseline"] = f[f"{m}_baseline"].map(lambda x: format_value(x, binary))
    if f"{m}_harder" in f:
        out["Harder"] = f[f"{m}_harder"].map(lambda x: format_divergence(x, binary))
    if f"{m}_reference" in f:
        out["Achievable"] = f[f"{m}_reference"].map(lambda x: format_value(x, binary))
    if f"{m}_lift" in f:  # on the metric's natural scale (see the glossary)
        out["Lift"] = f[f"{m}_lift"].map(format_number)
    if f"{m}_lift_shortfall" in f:
        out["Lift shortfall"] = f[f"{m}_lift_shortfall"].map(format_number)
    if f"{m}_boot_low" in f and f[f"{m}_boot_low"].notna().any():
        out["Bootstrap"] = [format_interval(a, b, binary)
                            for a, b in zip(f[f"{m}_boot_low"], f[f"{m}_boot_high"])]
    if f"{m}_replicated_value" in f:
        out["Replication"] = [
            DASH if is_undefined(v) else f"{format_value(v, binary)} {format_interval(a, b, binary)}"
            for v, a, b in zip(f[f"{m}_replicated_value"], f[f"{m}_replicated_ci_low"],
                               f[f"{m}_replicated_ci_high"])]
        if f"{m}_replicated_divergence" in f:
            out["Replicated divergence"] = f[f"{m}_replicated_divergence"].map(lambda x: format_divergence(x, binary))
        out["Replicated"] = f[f"{m}_replicated"].map(lambda b: "yes" if bool(b) else "no")
    if f"{m}_verdict" in f:
        q = f[f"{m}_q"] if f"{m}_q" in f else f[f"{m}_p"]
        meets = f[f"{m}_meets_min_size"] if f"{m}_meets_min_size" in f else [None] * len(f)
        out["Verdict"] = [verdict_label(v, d, p, k) for v, d, p, k in zip(f[f"{m}_verdict"], f[f"{m}_divergence"], q,
                                                                          meets)]
    return pd.DataFrame({k: list(v) for k, v in out.items()}, index=f.index)


def display_sort_columns(table: SliceTable, metric: str | None = None) -> dict[str, str]:
    """The frame column each column of :func:`display_frame` sorts by (a click on its header)."""
    m = table.metric(metric).name
    cols = {"Slice": "itemset", "Items": "length", "Rows": "count", "Support": "support", "Measured": f"{m}_count",
            _metric_label(table, m): m, "Interval": f"{m}_ci_low", "Divergence": f"{m}_divergence", "t": f"{m}_t",
            "p": f"{m}_p", "q": f"{m}_q", "Min size": f"{m}_meets_min_size", "Baseline": f"{m}_baseline",
            "Harder": f"{m}_harder",
            "Lift": f"{m}_lift", "Lift shortfall": f"{m}_lift_shortfall", "Bootstrap": f"{m}_boot_low",
            "Replication": f"{m}_replicated_value", "Replicated": f"{m}_replicated", "Verdict": f"{m}_verdict",
            "Finding": f"{m}_finding", "Order": f"{m}_order"}
    from ..scores import SCORE_LABELS

    scores = {label: f"{m}_{suffix}" for suffix, label in SCORE_LABELS.items()}  # computed when sorted by
    return {k: v for k, v in cols.items() if _has(table, v)} | scores


def redundancy_epsilon(table: SliceTable, metric: str | None, eps: float) -> float:
    """ε for redundancy in the metric's units: ``eps`` standard deviations of the outcome over
    the whole dataset (σ = √(p(1−p)) for a rate), so one setting means as much for a rate, an
    absolute error or a ranking's gain. Without statistics, ``eps`` as it is."""
    info = ((table.assessment or {}).get("min_size") or {}).get(table.metric(metric).name)
    if not info:
        return float(eps)
    return float(eps) * float(info.get("sigma") or 0.0)


def headline(table: SliceTable, metric: str | None = None) -> dict:
    """The numbers above the slice table: whole-dataset value (and interval), slices
    tested, significant after correction, and the count of each verdict.

    Keys: ``metric``, ``label``, ``binary``, ``overall``, ``overall_low``, ``overall_high``
    (NaN without statistics), ``n_slices``, ``n_tested``, ``n_significant`` (None without
    statistics), ``verdicts`` ({verdict: count}), ``min_size`` (the assessment's entry or None),
    ``family`` ("scan": q-values corrected over every metric's slices, "metric": this metric's),
    ``n_family`` (the tests the q-values were corrected over), ``family_sentence`` (the family in
    words, :func:`divergence.present.formats.family_sentence`) and the counts of distinct findings
    (:func:`_finding_counts`: ``n_findings``, ``n_explained``, ``n_unexplained``, per verdict, and
    with replication ``n_replicated``, ``n_not_replicated``).
    """
    info = table.metric(metric)
    m, f = info.name, table.frame
    assessment = getattr(table, "assessment", None) or {}
    low = high = float("nan")
    if hasattr(table, "overall_interval"):
        low, high = table.overall_interval(m)
    tested = (assessment.get("n_tested") or {}).get(m)
    if tested is None:
        tested = int(f[f"{m}_p"].iloc[1:].notna().sum())
    significant = None
    if f"{m}_q" in f.columns:
        alpha = 1.0 - float(assessment.get("confidence", 0.95))
        sig = f[f"{m}_q"].iloc[1:] <= alpha
        if f"{m}_divergence_adj_low" in f.columns:  # a finding's corrected interval excludes 0 too
            sig &= (f[f"{m}_divergence_adj_low"].iloc[1:] > 0) | (f[f"{m}_divergence_adj_high"].iloc[1:] < 0)
        significant = int(sig.sum())
    else:
        sig = None
    verdicts: dict[str, int] = {}
    if f"{m}_verdict" in f.columns:
        verdicts = {str(k): int(v) for k, v in f[f"{m}_verdict"].iloc[1:].value_counts().items() if k}
    out = dict(metric=m, label=_metric_label(table, m), binary=info.binary, description=info.description,
               overall=table.overall(m), overall_low=float(low), overall_high=float(high),
               n_slices=len(table) - 1, n_tested=int(tested), n_significant=significant,
               verdicts=verdicts, min_size=(assessment.get("min_size") or {}).get(m),
               family=assessment.get("family"),
               n_family=int((assessment.get("family_size") or {}).get(m, tested)),
               family_sentence=family_sentence(assessment, m) if assessment.get("n_tested") else "")
    out.update(_finding_counts(table, m, sig.to_numpy() if significant is not None else None))
    return out


def _finding_counts(table: SliceTable, m: str, sig: np.ndarray | None) -> dict:
    """The headline's counts of distinct findings: ``n_findings``, ``n_explained`` (significant
    slices a finding accounts for), ``n_unexplained`` (significant, neither a finding nor
    explained), ``findings_by_verdict``, ``significant_by_verdict`` and, with replication,
    ``n_replicated`` / ``n_not_replicated`` among the significant slices and the findings."""
    f = table.frame.iloc[1:]
    out: dict = {"n_findings": None, "n_explained": None, "n_unexplained": None, "findings_by_verdict": {},
                 "significant_by_verdict": {}, "n_replicated": None, "n_not_replicated": None,
                 "findings_replicated": None, "n_not_significant": None}
    if sig is None:
        return out
    verdict = f[f"{m}_verdict"].astype(str).to_numpy() if f"{m}_verdict" in f.columns else np.full(len(f), "")
    out["significant_by_verdict"] = {str(k): int(v) for k, v in pd.Series(verdict[sig]).value_counts().items() if k}
    tested = f[f"{m}_p"].notna().to_numpy()
    out["n_not_significant"] = int((tested & ~sig).sum())
    out["not_significant_by_verdict"] = {str(k): int(v) for k, v in
                                         pd.Series(verdict[tested & ~sig]).value_counts().items() if k}
    if f"{m}_finding" in f.columns:
        finding = f[f"{m}_finding"].to_numpy(dtype=bool)
        explained = (f[f"{m}_explained_by"].astype(str) != "").to_numpy()
        out["n_findings"] = int(finding.sum())
        out["n_explained"] = int((explained & sig).sum())
        out["n_unexplained"] = int((sig & ~finding & ~explained).sum())
        out["findings_by_verdict"] = {str(k): int(v) for k, v in pd.Series(verdict[finding]).value_counts().items()
                                      if k}
    if f"{m}_replicated" in f.columns:
        rep = f[f"{m}_replicated"].to_numpy(dtype=bool)
        out["n_replicated"] = int((sig & rep).sum())
        out["n_not_replicated"] = int((sig & ~rep).sum())
        if f"{m}_finding" in f.columns:
            out["findings_replicated"] = int((f[f"{m}_finding"].to_numpy(dtype=bool) & rep).sum())
    return out


@dataclass(frozen=True)
class Tile:
    """One number of the headline: its label, the number as text, a caption under it and the
    text shown on hover."""

    label: str
    value: str
    caption: str = ""
    help: str = ""


def headline_tiles(table: SliceTable, metric: str | None = None) -> list[Tile]:
    """The headline as tiles, the same in the dashboard, the report and the command line: the whole
    dataset's value, slices tested (significant plus not significant), significant after correction,
    the distinct findings and the significant slices they cover, the findings per verdict, with
    replication the significant slices that did not replicate, and the slices not significant (noise
    plus too small to tell). The counts add up: tested = significant + not significant; significant
    = covered by the findings + neither; significant = replicated + not replicated."""
    from ..vocabulary import CORRECTION_NAMES
    from .formats import GLOSSARY, VERDICT_TEXT

    h = headline(table, metric)
    a = table.assessment or {}
    b = h["binary"]
    tiles = [Tile(f"{h['label']}, whole dataset", format_value(h["overall"], b),
                  format_interval(h["overall_low"], h["overall_high"], b),
                  f"{h['description']} over every row, with its interval")]
    if h["n_significant"] is None:
        tiles.append(Tile("Slices tested", format_count(h["n_tested"]), "", "Slices with a p-value."))
        return tiles
    alpha = 1.0 - float(a.get("confidence", 0.95))
    correction = CORRECTION_NAMES.get(a.get("correction", "bh"), "")
    sig, not_sig = h["n_significant"], h["n_not_significant"]
    tiles.append(Tile("Slices tested", format_count(h["n_tested"]),
                      f"{format_count(sig)} significant + {format_count(not_sig)} not",
                      f"Slices with a p-value. q-values: {h['family_sentence']}." if h["family_sentence"]
                      else "Slices with a p-value."))
    tiles.append(Tile("Significant", format_count(sig), f"after correction, q ≤ {alpha:.2g}",
                      f"{GLOSSARY['q']} Here: {correction}, q ≤ {alpha:.2g}, and the corrected interval excludes 0."))
    if h["n_findings"] is not None:
        covered = h["n_findings"] + h["n_explained"]
        cap = f"cover {format_count(covered)} of the {format_count(sig)} significant"
        tip = ("A distinct finding is a significant slice that no stronger finding explains: with the findings' rows "
               "accounted for, it still diverges. A slice explained by a finding is grouped under it (a refinement "
               "no different from it, a wider slice holding its rows, a slice that only looks low or high because "
               "it lifts or lowers the whole dataset).")
        if h["n_unexplained"]:
            tip += (f" {format_count(h['n_unexplained'])} significant slices are neither: they still diverge with the "
                    "findings' rows accounted for, but not by enough to count as a different cohort after the "
                    "correction for the follow-up tests.")
        tiles.append(Tile("Distinct findings", format_count(h["n_findings"]), cap, tip))
        pairs = ([("Defects", "defect"), ("Hard cohorts", "hard cohort")] if table.metric(metric).baseline
                 else [("Above", "above"), ("Below", "below")])
        for label, verdict in pairs:
            n_f = h["findings_by_verdict"].get(verdict, 0)
            n_s = h["significant_by_verdict"].get(verdict, 0)
            tiles.append(Tile(label, format_count(n_f), f"finding{'s' if n_f != 1 else ''} · {format_count(n_s)} "
                              f"significant slice{'s' if n_s != 1 else ''}",
                              f"{VERDICT_TEXT[verdict]} Distinct findings with this verdict, and the significant "
                              "slices with it (the findings and the slices they explain)."))
    if h["n_not_replicated"] is not None:
        tiles.append(Tile("Not replicated", format_count(h["n_not_replicated"]),
                          f"of {format_count(sig)} significant; {format_count(h['n_replicated'])} replicated",
                          VERDICT_TEXT["not replicated"] + f" Replication on {a.get('replication') or 'other rows'}."))
    ns = h.get("not_significant_by_verdict") or {}
    small = ns.get("too small", 0)
    tiles.append(Tile("Not significant", format_count(not_sig),
                      f"{format_count(ns.get('noise', 0))} noise + {format_count(small)} too small to tell",
                      " ".join(t for t in ((h["min_size"] or {}).get("text", ""),
                                           (h["min_size"] or {}).get("power_text", "")) if t)
                      or "Not significant after correction."))
    return tiles


#: the natural scale of each error metric's lift, in words (see divergence.stats.assess._natural_scale)
_LIFT_SCALE = {"squared_error": "baseline − error", "abs_error": "baseline² − error²",
               "error": "−log(1 − 2·error), over the best model-free reference",
               "brier": "−log(1 − 4·Brier), over the best model-free reference"}


def verdict_evidence(table: SliceTable, row: pd.Series, metric: str | None = None) -> str | None:
    """The three tests behind an error metric's verdict, in words with their numbers (Markdown):
    is the target harder here than across the values of the slice's attributes, is the
    model's lift short of theirs, does a reference fitted to these rows beat the model. None for
    a metric without a baseline."""
    m = table.metric(metric).name
    info = table.metric(m)
    if f"{m}_harder" not in row.index:
        return None
    b = info.binary
    alpha = 1.0 - float((table.assessment or {}).get("confidence", 0.95))

    def sure(q, yes, no):
        return f"**{yes}** (q = {format_p(q)})" if not is_undefined(q) and float(q) <= alpha else \
            f"{no} (q = {format_p(q)})"

    binary_target = info.baseline in ("majority", "base_rate")
    base = row[f"{m}_columns_reference"] if binary_target else row[f"{m}_baseline"]
    what = ("the best reference without the model (its constant, or a constant per item of another attribute)"
            if binary_target else "the best constant guess from its own rows")
    harder, short = row[f"{m}_harder"], row[f"{m}_lift_shortfall"]
    elsewhere = base - harder if not (is_undefined(base) or is_undefined(harder)) else float("nan")
    lift_there = row[f"{m}_lift"] + short if not (is_undefined(row[f"{m}_lift"]) or is_undefined(short)) \
        else float("nan")
    parts = [
        f"**Is the target harder here?** {what.capitalize()} errs {format_value(base, b)} here against "
        f"{format_value(elsewhere, b)} across the values of the slice's attributes (each with its own): "
        f"{format_divergence(harder, b)} {format_interval(row[f'{m}_harder_low'], row[f'{m}_harder_high'], b)}, "
        + sure(row[f"{m}_harder_q"], "reliably harder", "not reliably harder") + ".",
        f"**Does the model gain less here?** Its lift over that baseline ({_LIFT_SCALE.get(m, 'on its scale')}): "
        f"{format_number(row[f'{m}_lift'])} here against {format_number(lift_there)} across them, a shortfall of "
        f"{format_number(short)} [{format_number(row[f'{m}_lift_shortfall_low'])}, "
        f"{format_number(row[f'{m}_lift_shortfall_high'])}], "
        + sure(row[f"{m}_lift_shortfall_q"], "reliably short", "not reliably short") + ".",
    ]
    if f"{m}_reference" in row.index and not is_undefined(row[f"{m}_reference"]):
        parts.append(f"**Can these rows do better?** The best reference fitted to them errs "
                     f"{format_value(row[f'{m}_reference'], b)} against the model's {format_value(row[m], b)}: "
                     + sure(row[f"{m}_worse_q"], "it beats the model, by more than on the whole dataset",
                            "not reliably better than the model, beyond the whole dataset") + ".")
    else:
        parts.append("**Can these rows do better?** Not known: the references need the rows (this result keeps "
                     "tallies only), so no defect is claimed.")
    return " ".join(parts)


@dataclass(frozen=True)
class Finding:
    """One finding in plain words: who (the slice, its rows), what (the metric against the
    whole dataset), how sure (q over the slices tested, replication) and what to do."""

    index: int
    itemset: str
    verdict: str
    color: str
    who: str
    what: str
    sure: str
    todo: str
    #: the significant slices it accounts for (itself included); 1 for a slice not a distinct finding
    covers: int = 1
    #: whether it is a distinct finding (no stronger finding explains it)
    distinct: bool = False
    #: whether it has n_min measured rows (below: the verdict is marked indicative)
    meets: bool = True
    #: the finding holding every row it is measured on ('' for none): it is distinct for how it differs
    #: from the rest of that one, which ``what`` says first
    within: str = ""
    #: the number of the card showing that finding (0: not among the cards)
    within_card: int = 0

    @property
    def inside(self) -> str:
        """Where the card sits, for a finding inside another ('' otherwise): shown above its words."""
        if not self.within:
            return ""
        return (f"Inside finding {self.within_card} (“{self.within}”)" if self.within_card
                else f"Inside the finding “{self.within}”")

    @property
    def badge(self) -> str:
        """The verdict as the table shows it: 'above · indicative' below the minimum size."""
        return verdict_label(self.verdict, None, None, self.meets)


#: findings summarised as cards, in the app and in the report
FINDING_CARDS = 3
#: the verdicts summarised as findings
_FINDING_ORDER = tuple(v for v in FINDING_VERDICTS if v != "better")  # better needs no action


def findings(table: SliceTable, metric: str | None = None, *, top: int = FINDING_CARDS,
             exclude: np.ndarray | None = None, max_shared: float = 0.5) -> tuple[list[Finding], int]:
    """The findings to show first, as cards, and how many findings there are in all.

    The cards are the distinct findings (``M_finding``: no stronger finding explains them; see
    :mod:`divergence.stats.findings`) in the default order, each with the count of significant slices it
    accounts for; ``better`` needs no action and gets no card. A result without distinct findings
    (assessed before they existed) falls back to the slices whose verdict is a defect, a hard
    cohort, above or below, by the strength of their evidence, skipping one that refines a card
    already taken, that one refines, or that shares more than ``max_shared`` of its rows with one.
    ``exclude``: slices to leave out of that fallback (e.g. redundant ones).
    """
    from .formats import ACTIONS, family_sentence, verdict_color

    info = table.metric(metric)
    m, binary = info.name, info.binary
    f = table.frame
    if f"{m}_verdict" not in f.columns:
        return [], 0
    verdict = f[f"{m}_verdict"].to_numpy().astype(str)
    distinct = f"{m}_finding" in f.columns
    covers = {}
    if distinct:
        flag = f[f"{m}_finding"].to_numpy(dtype=bool)
        # a finding whose own honest estimate (replicated, else shrunk) is about zero says nothing to act
        # on: significant, but the estimate a meeting reads is 0 (issue 30): no card
        flag = flag & ~_about_zero(table, m)
        order = np.array([i for i in table.default_order(m) if flag[i] and verdict[i] not in ("better", "noise")],
                         dtype=np.int64)
        candidates = order
        counts = f[f"{m}_explained_by"].value_counts()
        covers = {int(i): 1 + int(counts.get(f["itemset"].iat[i], 0)) for i in order}
    else:
        keep = np.isin(verdict, _FINDING_ORDER)
        keep[0] = False
        if exclude is not None:
            keep &= ~np.asarray(exclude, dtype=bool)
        candidates = np.nonzero(keep)[0]
        rank = np.array([_FINDING_ORDER.index(v) for v in verdict[candidates]])
        size = np.abs(f[f"{m}_divergence"].to_numpy()[candidates])
        qcol = f[f"{m}_q"] if f"{m}_q" in f.columns else f[f"{m}_p"]
        evidence = np.nan_to_num(qcol.to_numpy(dtype=float)[candidates], nan=1.0)
        order = candidates[np.lexsort((rank, -size, evidence))]
    a = table.assessment or {}
    # the q-values' family: every metric's slices (the default) or this metric's
    family = family_sentence(a, m)
    overall = table.overall(m)
    first = f.iloc[0]
    label = _metric_label(table, m)
    unit = "queries" if (table.params or {}).get("query") else "rows"  # a query-level slice is a set of queries
    taken: list[int] = []
    rows_of: dict[int, np.ndarray] = {}
    cards: list[Finding] = []
    for i in order:
        if len(cards) >= top:
            break
        codes = table.codes[i]
        if not distinct and any(np.all((table.codes[j] < 0) | (table.codes[j] == codes))
                                or np.all((codes < 0) | (codes == table.codes[j])) for j in taken):
            continue  # a refinement of a finding already shown, or a wider slice holding it
        if not distinct and table.row_codes is not None:
            mine = rows_of.setdefault(i, table.rows_of(i))
            if any((mine & rows_of[j]).sum() > max_shared * max(mine.sum(), 1) for j in taken):
                continue
        taken.append(i)
        r = f.iloc[i]
        who = f"{format_count(r['count'])} {unit} ({format_percent(r['support'])} of all)"
        if r[f"{m}_count"] != r["count"]:
            who += f"; {label} measured on {format_count(r[f'{m}_count'])}"
        holder = str(r.get(f"{m}_within") or "") if distinct else ""
        value = f"{label} {format_value(r[m], binary)} {format_interval(r.get(f'{m}_ci_low'), r.get(f'{m}_ci_high'), binary)}"
        if holder and not is_undefined(r.get(f"{m}_within_difference")):
            # distinct for how it differs from the rest of the finding holding it: that first, then the whole dataset
            diff, div = float(r[f"{m}_within_difference"]), float(r[f"{m}_divergence"])
            what = (f"{value}, {'higher' if diff > 0 else 'lower'} than the rest of “{holder}” "
                    f"({label} {format_value(r[f'{m}_within_rest'], binary)} on its other rows; difference "
                    f"{format_divergence(diff, binary)}, interval "
                    f"{format_divergence_interval(r[f'{m}_within_ci_low'], r[f'{m}_within_ci_high'], binary)}), "
                    f"{'though' if (diff > 0) != (div > 0) else 'and'} {'above' if div > 0 else 'below'} "
                    f"{format_value(overall, binary)} for the whole dataset ({format_divergence(div, binary)}")
        else:
            what = (f"{value} against {format_value(overall, binary)} for the whole dataset "
                    f"({format_divergence(r[f'{m}_divergence'], binary)}")
        rep = r.get(f"{m}_replicated_divergence")
        shrunk = r.get(f"{m}_divergence_shrunk")
        if not is_undefined(rep):
            what += f"; {format_divergence(rep, binary)} on the replication rows"
        elif not is_undefined(shrunk):
            # shrinkage pulls a slice's step beyond the slices holding it towards 0: towards them, which
            # can read farther from the whole dataset than the raw value when they diverge more
            farther = abs(float(shrunk)) > abs(float(r[f"{m}_divergence"]))
            what += (f"; {format_divergence(shrunk, binary)} "
                     + ("after shrinking towards the wider slices holding it, which diverge more" if farther
                        else "shrunk for the winner's curse"))
        what += ")"
        if f"{m}_baseline" in f.columns and not is_undefined(r[f"{m}_baseline"]):
            what += (f"; the best constant guess from its own rows errs {format_value(r[f'{m}_baseline'], binary)} "
                     f"(whole dataset {format_value(first[f'{m}_baseline'], binary)})")
        sure = f"q = {format_p(r.get(f'{m}_q'))} ({family})"
        if f"{m}_replicated" in f.columns:
            sure += (f"; {'replicated' if bool(r[f'{m}_replicated']) else 'not replicated'} on "
                     f"{a.get('replication') or 'the replication rows'}: "
                     f"{format_value(r[f'{m}_replicated_value'], binary)} "
                     f"{format_interval(r[f'{m}_replicated_ci_low'], r[f'{m}_replicated_ci_high'], binary)}")
        else:
            sure += "; not checked on other rows (no replication data)"
        if distinct and covers.get(int(i), 1) > 1:
            who += (f"; accounts for {format_count(covers[int(i)] - 1)} other significant slice"
                    f"{'s' if covers[int(i)] > 2 else ''} (refinements, wider slices holding its rows, slices it "
                    "lifts or lowers)")
        meets = bool(r[f"{m}_meets_min_size"]) if f"{m}_meets_min_size" in f.columns else True
        if not meets:
            n_min = ((a.get("min_size") or {}).get(m) or {}).get("n_min")
            sure += (f"; indicative: {format_count(r[f'{m}_count'])} measured rows, below the minimum size "
                     f"n_min = {format_count(n_min)} (its interval is wider than δ)")
        todo = ACTIONS.get(str(r[f"{m}_verdict"]), "")
        if holder and not is_undefined(r.get(f"{m}_within_difference")):
            # what to do follows what makes it distinct: how it differs from the rest of the finding holding it
            diff, low, high = (float(r[f"{m}_within_{k}"]) for k in ("difference", "ci_low", "ci_high"))
            sure_side = (low > 0) or (high < 0)
            todo = (f"Review these rows as part of “{holder}”: the metric is {'reliably ' if sure_side else ''}"
                    f"{'higher' if diff > 0 else 'lower'} here than on the rest of it"
                    + (f", though {'higher' if float(r[f'{m}_divergence']) > 0 else 'lower'} than overall"
                       if (diff > 0) != (float(r[f'{m}_divergence']) > 0) else "") + ".")
        cards.append(Finding(index=int(i), itemset=str(r["itemset"]), verdict=str(r[f"{m}_verdict"]),
                             color=verdict_color(r[f"{m}_verdict"]), who=who, what=what, sure=sure,
                             todo=todo, covers=covers.get(int(i), 1),
                             distinct=distinct, meets=meets, within=holder))
    return _under_their_holders(cards), int(candidates.size)


def _under_their_holders(cards: list[Finding]) -> list[Finding]:
    """The cards with each one inside another card placed right after it, numbered by its holder's card."""
    import dataclasses

    by_itemset = {c.itemset: c for c in cards}
    top = [c for c in cards if c.within not in by_itemset]
    out: list[Finding] = []

    def place(card: Finding) -> None:
        out.append(card)
        for inner in cards:
            if inner.within == card.itemset and inner not in out:
                place(inner)

    for card in top:
        place(card)
    number = {c.itemset: n for n, c in enumerate(out, 1)}
    return [dataclasses.replace(c, within_card=number.get(c.within, 0)) if c.within else c for c in out]


#: a finding's honest estimate within this share of δ of zero is "about zero": no card
ABOUT_ZERO = 0.1


def _about_zero(table: SliceTable, m: str) -> np.ndarray:
    """Per slice: its honest estimate (the replicated divergence where measured, else the shrunk one)
    lies within :data:`ABOUT_ZERO` · δ of 0 (False where there is none, or no δ)."""
    f = table.frame
    delta = (((table.assessment or {}).get("min_size") or {}).get(m) or {}).get("delta")
    if not delta or f"{m}_divergence_shrunk" not in f.columns:
        return np.zeros(len(f), dtype=bool)
    honest = f[f"{m}_divergence_shrunk"].to_numpy(dtype=float)
    if f"{m}_replicated_divergence" in f.columns:
        rep = f[f"{m}_replicated_divergence"].to_numpy(dtype=float)
        honest = np.where(np.isfinite(rep), rep, honest)
    return np.isfinite(honest) & (np.abs(honest) < ABOUT_ZERO * float(delta))


def findings_header(cards: Sequence[Finding], total: int) -> str:
    """The sentence above the finding cards (markdown), the same in the app and the report: how
    many distinct findings there are, that each is a different cohort (only when the cards are
    distinct findings: none explains another), and how many significant slices they account for."""
    if not cards:
        return ""
    if not cards[0].distinct:
        return (f"**Findings** · the {len(cards)} with the strongest evidence"
                + (f" ({format_count(total)} slices are findings in all; the others refine or overlap these: "
                   "Intervals page)" if total > len(cards) else ""))
    shown = (f"the first {len(cards)} of {format_count(total)}" if total > len(cards)
             else ("both" if len(cards) == 2 else f"all {len(cards)}" if len(cards) > 1 else "the one"))
    covered = sum(c.covers for c in cards)
    many = len(cards) > 1
    inside = [c for c in cards if c.within]
    others = ("refinements no different from them, wider slices holding their rows, or slices they lift or lower"
              if many else "refinements no different from it, wider slices holding its rows, or slices it lifts or "
                           "lowers")
    if inside:  # not "each a different cohort": some lie inside another finding, distinct from the rest of it
        relation = (f"; {format_count(len(inside))} of {'them' if many else 'it'} lie{'s' if len(inside) == 1 else ''} "
                    f"inside another finding and {'differs' if len(inside) == 1 else 'differ'} from the rest of it")
    else:
        relation = ", each a different cohort: none is explained by another" if many else ""
    lead = "**One distinct finding**" if total == 1 and len(cards) == 1 else f"**Distinct findings** · {shown}"
    return (lead + relation
            + f"; {'they account' if many else 'it accounts'} for {format_count(covered)} significant "
              f"slice{'s' if covered != 1 else ''}, {'themselves' if many else 'itself'} included"
            + (f" (the others are {others})." if covered > len(cards) else "."))


# ----------------------------------------------------------------------------- roles of a new file
# guessed by divergence.data.roles (guess_roles, guess_positive)


def preview_frame(df: pd.DataFrame, rows: int = 200) -> pd.DataFrame:
    """The first ``rows`` rows to show, a nested or binary column as text (a table widget cannot
    draw lists, structs or bytes)."""
    from ..data.nested import unsupported_columns

    head = df.head(rows)
    nested = unsupported_columns(head)
    if not nested:
        return head
    return head.assign(**{c: head[c].map(lambda v: v if v is None else str(v)[:200]) for c in nested})


def describe_columns(df: pd.DataFrame) -> pd.DataFrame:
    """One line per column: its type, distinct and missing values, and an example value."""
    from ..data.nested import unsupported_kind

    rows = []
    for col in df.columns:
        s = df[col]
        first = s.dropna()
        nested = unsupported_kind(s) is not None  # lists, structs, bytes: their values cannot be counted
        rows.append({"column": str(col), "type": "nested (not sliced by)" if nested else str(s.dtype),
                     "distinct": DASH if nested else format_count(s.nunique(dropna=True)),
                     "missing": format_count(int(s.isna().sum())),
                     "example": str(first.iloc[0])[:200] if len(first) else DASH})
    return pd.DataFrame(rows)


def parse_bin_spec(text: str | None, column: str) -> int | list[float] | None:
    """A column's binning typed by a person: '' (the default), '4' (bins), '30, 50' (edges)."""
    text = (text or "").strip()
    if not text:
        return None
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise DivergenceInputError(
            f"Bins of '{column}': write a number of bins (4) or increasing edges (30, 50); got {text!r}."
        ) from None
    if len(numbers) == 1 and "." not in parts[0] and "," not in text:
        n = int(numbers[0])
        if n < 1:
            raise DivergenceInputError(f"Bins of '{column}': the number of bins must be at least 1; got {n}.")
        return n
    if any(b <= a for a, b in zip(numbers, numbers[1:])) or not all(map(math.isfinite, numbers)):
        raise DivergenceInputError(f"Bins of '{column}': edges must be finite and increasing; got {text!r}.")
    return numbers


# ----------------------------------------------------------------------------- figures


#: a table cell's characters at Plotly's default 12 px font (the widest digits and capitals), its
#: padding, and the longest text a column keeps on one line before it wraps at its spaces
TABLE_CHAR_PX = 7.6
TABLE_CELL_PAD_PX = 18
TABLE_WRAP_CHARS = 34


def slice_table_figure(display: pd.DataFrame, *, verdict_column: str = "Verdict",
                       height: int | None = None, color_of=verdict_color) -> go.Figure:
    """The slice table (already formatted with :func:`display_frame`) as a Plotly table.

    The slice column is wide and left-aligned, numbers right-aligned; the verdict cell is
    coloured like the interval plot (``color_of``: a verdict's colour). Transparent cells
    follow the page's light or dark theme.
    """
    cols = list(display.columns)
    # widths from the content, in characters: every column as wide as its longest cell or header word, so
    # no number is cut; only long text (a slice, a finding's words) is capped, and it wraps at spaces
    widths = []
    for c in cols:
        cells = display[c].astype(str)
        longest = int(cells.str.len().max()) if len(cells) else 0
        width = max(max(len(w) for w in str(c).split()) + 1, longest + 1, 4)
        # a piece without a space cannot wrap: the column is never narrower than the longest one
        piece = max((len(p) for v in cells for p in v.split(" ")), default=0) + 1
        widths.append(min(width, max(TABLE_WRAP_CHARS, piece)))
    align = ["left" if c in ("Slice", "Verdict", "Finding") else "right" for c in cols]
    n = len(display)
    fills = []
    for c in cols:
        if c == verdict_column:
            fills.append([rgba(color_of(v), 0.28) for v in display[c]])
        else:
            fills.append(["rgba(134,142,150,0.08)" if i % 2 else "rgba(0,0,0,0)" for i in range(n)])
    fig = go.Figure(go.Table(
        columnwidth=widths,
        header=dict(values=[f"<b>{plotly_text(c)}</b>" for c in cols], align=align, fill_color="rgba(59,91,219,0.18)",
                    line_color="rgba(134,142,150,0.35)", height=30),
        cells=dict(values=[[plotly_text(v) if isinstance(v, str) else v for v in display[c]] for c in cols], align=align, fill_color=fills,
                   line_color="rgba(134,142,150,0.25)", height=26),
    ))
    # the width and height at which every cell shows in full (a text wraps to more lines in its column):
    # an exported image is drawn at least this wide and this tall, whatever the page shows
    natural_width = int(sum(widths) * TABLE_CHAR_PX + TABLE_CELL_PAD_PX * len(widths))
    # Plotly shares the width out in proportion to columnwidth: the characters a line of each column holds
    fits = [int((w / max(sum(widths), 1) * natural_width - 10) / TABLE_MEAN_CHAR_PX) for w in widths]
    lines = [max((_wrapped_lines(str(display[c].iat[i]), k) for c, k in zip(cols, fits)), default=1)
             for i in range(n)]
    natural_height = TABLE_HEADER_PX + sum(TABLE_ROW_PX + TABLE_LINE_PX * (k - 1) for k in lines)
    fig.update_layout(margin=dict(l=0, r=0, t=4, b=0),
                      height=height or min(80 + 27 * max(n, 1), 760),
                      meta={"natural_width": natural_width, "natural_height": int(natural_height)})
    return fig


#: a table's header, a one-line row and each further line of a wrapped cell, in pixels (Plotly's table
#: at its 12 px font, the heights given to it above)
TABLE_HEADER_PX = 34
TABLE_ROW_PX = 27
TABLE_LINE_PX = 17
#: the mean width of a character of text at that font (narrower than the widest, TABLE_CHAR_PX): how
#: much a line of a column holds, a little less than it shows, so a row is never drawn taller than counted
TABLE_MEAN_CHAR_PX = 6.3


def _wrapped_lines(text: str, width: int) -> int:
    """The lines ``text`` takes in a column of ``width`` characters, wrapped at its spaces."""
    count, used = 1, 0
    for word in text.split(" "):
        need = len(word) if used == 0 else used + 1 + len(word)
        if used and need > width - 1:
            count, used = count + 1, len(word)
        else:
            used = need
    return count


def interval_figure(table: SliceTable, rows: pd.DataFrame, metric: str | None = None, *,
                    level_label: str | None = None) -> go.Figure:
    """The interval overlap plot: each slice's interval against the whole-dataset value and band.

    One line per slice (top to bottom in the order of ``rows``), its interval as a bar and its
    value as a dot, coloured by verdict; slices below the minimum size ('indicative') drawn as
    open dots. The whole dataset's value is a vertical line, its interval a shaded band. The
    x axis names the interval level (``level_label``, e.g. '95% intervals, BH-adjusted').
    Needs the statistics columns ``M_ci_low`` and ``M_ci_high``.
    """
    info = table.metric(metric)
    m, binary = info.name, info.binary
    if f"{m}_ci_low" not in rows.columns:
        raise DivergenceInputError(f"The interval plot needs the statistics of metric '{m}' (run assess).")
    labels = [wrap_itemset(s) for s in rows["itemset"]]
    verdicts = rows[f"{m}_verdict"].astype(str) if f"{m}_verdict" in rows else pd.Series([""] * len(rows), index=rows.index)
    meets = (rows[f"{m}_meets_min_size"].astype(bool) if f"{m}_meets_min_size" in rows
             else pd.Series([True] * len(rows), index=rows.index))
    scale = 100.0 if binary else 1.0
    fig = go.Figure()
    overall = table.overall(m) * scale
    low = high = float("nan")
    if hasattr(table, "overall_interval"):
        low, high = (x * scale for x in table.overall_interval(m))
    if not (is_undefined(low) or is_undefined(high)):
        fig.add_vrect(x0=low, x1=high, fillcolor="rgba(134,142,150,0.25)", line_width=0, layer="below")
    fig.add_vline(x=overall, line_color="#868e96", line_dash="dash", line_width=1.5)
    value, lo, hi = (rows[c].to_numpy() * scale for c in (m, f"{m}_ci_low", f"{m}_ci_high"))
    itemsets, counts = rows["itemset"].to_numpy(), rows[f"{m}_count"].to_numpy()
    add_interval_traces(
        fig, rows, labels, verdicts, meets, value, lo, hi, color_of=verdict_color,
        name_of=lambda v, indicative: (v or "slice") + (" (indicative: below minimum size)" if indicative else ""),
        hover=lambda sel, v, a, b: [
            f"{plotly_text(s)}<br>{format_value(x / scale, binary)} {format_interval(y / scale, z / scale, binary)}"
            f"<br>{format_count(k)} rows · {verdict or '–'}"
            for s, x, y, z, k, verdict in zip(itemsets[sel], v, a, b, counts[sel], verdicts.to_numpy()[sel])])
    # the axis spans every interval and the whole dataset's band (autorange ignores shapes)
    fig.update_xaxes(range=axis_range([overall, low, high] + list(lo) + list(hi)))
    unit = " (%)" if binary else ""
    level = level_label or "intervals"
    interval_layout(fig, labels, f"{_metric_label(table, m)}{unit}: {level}; dashed line and band: whole dataset "
                                 f"{format_value(overall / scale, binary)}")
    return fig


def add_interval_traces(fig: go.Figure, rows: pd.DataFrame, labels: Sequence[str], verdicts: pd.Series,
                        meets: pd.Series, value: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, color_of,
                        name_of, hover) -> None:
    """One trace per verdict and side of the minimum size: each slice's value as a dot (open
    below the minimum size) and its interval as a bar, on the line of its label. ``value``,
    ``lo``, ``hi`` are per row of ``rows``; ``hover(sel, value, lo, hi)`` gives the selected
    rows' hover texts. Shared by the slice and the comparison interval plots."""
    shown = set()
    y = np.array(labels, dtype=object)
    meet = meets.to_numpy()
    for verdict in dict.fromkeys(verdicts):
        for indicative in (False, True):
            sel = (verdicts == verdict).to_numpy() & (~meet if indicative else meet)
            if not sel.any():
                continue
            color, name = color_of(verdict), name_of(verdict, indicative)
            v, a, b = value[sel], lo[sel], hi[sel]
            fig.add_trace(go.Scatter(
                x=v, y=y[sel], mode="markers", name=name,
                marker=dict(color=color, size=9, symbol="circle-open" if indicative else "circle",
                            line=dict(width=2, color=color)),
                error_x=dict(type="data", symmetric=False, array=b - v, arrayminus=v - a,
                             color=color, thickness=2, width=4),
                customdata=rows.index.to_numpy()[sel], hovertext=hover(sel, v, a, b), hoverinfo="text",
                showlegend=name not in shown,
            ))
            shown.add(name)


def axis_range(ends: Sequence[float]) -> list[float]:
    """An axis range spanning the defined ``ends``, with a 4% margin."""
    ends = [e for e in ends if not is_undefined(e)]
    pad = 0.04 * ((max(ends) - min(ends)) or 1.0)
    return [min(ends) - pad, max(ends) + pad]


def interval_layout(fig: go.Figure, labels: Sequence[str], xaxis_title: str) -> None:
    """The interval plots' layout: one line per label, top to bottom, the legend above."""
    fig.update_layout(
        xaxis_title=xaxis_title,
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels, automargin=True),
        height=max(260, 60 + 30 * len(labels)), margin=dict(l=10, r=10, t=30, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
    )


# ----------------------------------------------------------------------------- export

def table_csv(frame: pd.DataFrame, *, neutralise_formulas: bool = True) -> bytes:
    """A slice table as CSV bytes (full precision, undefined values as empty cells; text a
    spreadsheet would run as a formula gets a leading apostrophe unless told otherwise)."""
    import io

    from ..table import write_csv

    buffer = io.BytesIO()
    write_csv(frame.reset_index(drop=True), buffer, neutralise_formulas=neutralise_formulas)
    return buffer.getvalue()


def export_caption(table: SliceTable, metric: str | None = None, *, data_label: str = "",
                   when: "datetime | None" = None) -> str:
    """What an exported figure came from, in one line: the data, the metric, the settings (support,
    longest slice, kind of search, confidence and correction, replication) and the time it was
    exported (UTC), e.g. ``raw.csv · FPR (fpr) · support ≥ 0.02, up to 3 items, exploratory,
    95% confidence, Benjamini–Hochberg · exported 2026-12-01 18:10 UTC``."""
    from datetime import datetime, timezone

    from ..vocabulary import CORRECTION_NAMES

    a = table.assessment or {}
    m = table.metric(metric)
    label = _metric_label(table, m.name) if m.name else ""
    parts = [data_label or "data", (label if label == m.name else f"{label} ({m.name})") if m.name else ""]
    settings = [f"support ≥ {table.min_support:g}"]
    if table.max_length:
        settings.append(f"up to {table.max_length} items")
    if a:
        settings.append("exploratory" if a.get("exploratory", True) else "pre-registered plan")
        settings.append(f"{a.get('confidence', 0.95):.0%} confidence, "
                        f"{CORRECTION_NAMES.get(a.get('correction', 'bh'), a.get('correction', ''))}")
        settings.append(f"replicated on {a['replication']}" if a.get("replication") else "no replication")
    parts.append(", ".join(settings))
    stamp = (when or datetime.now(timezone.utc)).astimezone(timezone.utc)
    parts.append(f"exported {stamp:%Y-%m-%d %H:%M} UTC")
    return " · ".join(p for p in parts if p)


def titled_figure(fig: go.Figure, heading: str, caption: str) -> go.Figure:
    """A copy of ``fig`` for export, titled with ``heading`` (or the figure's own title) and the
    ``caption`` line of :func:`export_caption` under it: a PNG or HTML file says what it shows."""
    out = go.Figure(fig)
    own = out.layout.title.text if out.layout.title and out.layout.title.text else ""
    text = own if own else plotly_text(heading)
    out.update_layout(title=dict(text=f"{text}<br><sup>{plotly_text(caption)}</sup>", x=0.01, xanchor="left"))
    top = out.layout.margin.t if out.layout.margin and out.layout.margin.t is not None else 0
    out.update_layout(margin=dict(t=max(int(top), 110 if "<br>" in own else 90)))
    return out


def figure_html(fig: go.Figure, *, title: str = "divergence") -> str:
    """A figure as a self-contained HTML page (plotly.js inlined: opens offline)."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    natural = int(meta.get("natural_width", 0))  # a table: at least as wide as its cells (the page scrolls)
    if meta.get("natural_height"):  # and as tall as its rows, wrapped: none hidden behind a scroll bar
        margin = fig.layout.margin
        tall = int(meta["natural_height"]) + int(margin.t or 0) + int(margin.b or 0) + 8
        if tall > int(fig.layout.height or 0):
            fig = go.Figure(fig).update_layout(height=tall)
    return fig.to_html(include_plotlyjs=True, full_html=True, default_width=f"{natural}px" if natural else "100%",
                       config={"displaylogo": False}).replace("<head>", f"<head><title>{_html.escape(title)}</title>", 1)


#: where Debian's chromium lives; kaleido draws static images with it
CHROMIUM = "/usr/bin/chromium"


def png_supported() -> bool:
    """Whether static images can be drawn here: kaleido installed and a Chromium to drive."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return bool(os.environ.get("BROWSER_PATH") or os.path.exists(CHROMIUM)
                or shutil.which("chromium") or shutil.which("google-chrome"))


#: kaleido's persistent Chromium serves one image at a time: calls from several sessions queue here
_PNG_LOCK = threading.Lock()
#: guards the exporter's state (never held while an image is drawn)
_STATE_LOCK = threading.Lock()
#: the exporter's state in this process: 'cold', 'warming', 'ready', 'failed' (then also 'error')
PNG_EXPORTER: dict = {"state": "cold"}


#: the exporter's Chromium reaches nothing outside this machine: every request it would make on its own
#: (sign-in, updates, a start page) goes to a proxy address where nothing listens (the discard port), so
#: no outside name is even looked up; and no MathJax is fetched from a CDN (plotly.js is read from the
#: plotly package on disk)
NO_PROXY = "127.0.0.1:9"
EXPORTER_OPTIONS = {"mathjax": False}


def _use_machine_chromium() -> None:
    import os

    if not os.environ.get("BROWSER_PATH") and os.path.exists(CHROMIUM):
        os.environ["BROWSER_PATH"] = CHROMIUM
    os.environ["CHOREO_PROXY_SERVER"] = NO_PROXY  # read by kaleido's browser driver (choreographer)


def _start_exporter() -> None:
    """kaleido's persistent Chromium with :data:`EXPORTER_OPTIONS` (a no-op when it runs already)."""
    import kaleido

    _use_machine_chromium()
    kaleido.start_sync_server(silence_warnings=True, **EXPORTER_OPTIONS)


def warm_png_exporter() -> str:
    """Start kaleido's Chromium in a background thread, once per process, and draw a first tiny
    image with it: the first PNG a person asks for then takes about a second instead of the
    10-15 s of a cold start. Returns the exporter's state ('unsupported' without kaleido or
    Chromium)."""
    if not png_supported():
        return "unsupported"
    with _STATE_LOCK:
        if PNG_EXPORTER["state"] != "cold":
            return PNG_EXPORTER["state"]
        PNG_EXPORTER["state"] = "warming"

    def work() -> None:
        import warnings

        try:
            with _PNG_LOCK, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _start_exporter()
                go.Figure().to_image(format="png", width=16, height=16)
            PNG_EXPORTER["state"] = "ready"
        except Exception as exc:  # noqa: BLE001 - reported beside the PNG buttons
            PNG_EXPORTER.update(state="failed", error=str(exc))

    threading.Thread(target=work, name="png-exporter-warm-up", daemon=True).start()
    return "warming"


def figure_png(fig: go.Figure, *, width: int = 1280, height: int | None = None, scale: float = 2.0) -> bytes:
    """A figure as PNG bytes through kaleido and the machine's Chromium (never a download);
    the persistent exporter when :func:`warm_png_exporter` started it."""
    import warnings

    if not png_supported():
        raise DivergenceInputError("PNG export needs the kaleido package and Chromium (/usr/bin/chromium).")
    h = height or int(fig.layout.height or 600)
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    width = max(int(width), int(meta.get("natural_width", 0)))  # a table is never drawn narrower than its cells
    if meta.get("natural_height"):  # nor shorter: every row, wrapped, under its title's margin
        margin = fig.layout.margin
        h = max(h, int(meta["natural_height"]) + int(margin.t or 0) + int(margin.b or 0) + 8)
    with _PNG_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kaleido's server ignores per-call browser options, and says so
        _start_exporter()  # never plotly's own start, which would fetch MathJax from a CDN
        for attempt in range(2):
            done, png = _within(PNG_TIMEOUT, lambda: fig.to_image(format="png", width=width, height=h, scale=scale))
            if done:
                return png
            # kaleido's persistent Chromium can get stuck on a call (plotly/Kaleido#441): start it again
            PNG_EXPORTER.update(state="cold")
            _within(PNG_TIMEOUT, _restart_exporter)
    raise DivergenceInputError(f"PNG export did not answer within {PNG_TIMEOUT:g} s, twice; try again, or "
                               "download the figure as HTML.")


#: seconds one image may take before the exporter is started again (a cold start takes 10-15 s)
PNG_TIMEOUT = 45.0


def _within(seconds: float, work) -> tuple[bool, object]:
    """(True, what ``work()`` returned) if it ends within ``seconds``, else (False, None); the
    work's error is raised. A call that never ends is left behind in a daemon thread."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, name="png-export", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box.get("value")


def _restart_exporter() -> None:
    import kaleido

    try:
        kaleido.stop_sync_server(silence_warnings=True)
    finally:
        _start_exporter()

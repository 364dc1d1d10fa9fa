"""What a person sees of a model comparison: the headline, the slices sorted worst first, the
table and the interval figure of the change against zero, the Shapley chart of a slice's change.

Pure functions (no Streamlit): the dashboard and the HTML report draw the same pictures. No
statistic is computed here; everything is read from a :class:`~divergence.comparison.compare.Comparison`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..comparison.compare import Comparison
from ..errors import DivergenceInputError
from .figures import add_interval_traces, axis_range, interval_layout, slice_table_figure
from .formats import (
    COMPARE_VERDICT_COLORS,
    figure_label,
    finding_label,
    format_count,
    format_divergence,
    format_interval,
    format_p,
    format_value,
    is_undefined,
    metric_label,
    plotly_text,
    verdict_label,
    wrap_itemset,
)

__all__ = ["worst_slice", "COMPARE_VERDICT_COLORS", "compare_headline", "headline_change_caption", "compare_view", "compare_display_frame",
           "compare_table_figure", "change_interval_figure", "change_contribution_figure"]


def compare_headline(c: Comparison, metric: str | None = None) -> dict:
    """The whole dataset's numbers for one metric and the count of slices per verdict
    (:meth:`Comparison.headline`), with the metric's label."""
    head = c.headline(metric)
    return {**head, "label": metric_label(head["metric"])}


def headline_change_caption(h: dict) -> str:
    """The line under the whole dataset's change (markdown): its interval and the verdict, e.g.
    ``interval \\[−3.09 pp, −1.03 pp\\] · **better**``. The brackets are escaped: ``[a, b]: word``
    at the start of a line is a markdown link-reference definition, which shows nothing."""
    b = h["binary"]
    return (f"interval \\[{format_divergence(h['change_low'], b)}, {format_divergence(h['change_high'], b)}\\] · "
            f"**{h['verdict']}**")


def compare_view(c: Comparison, metric: str | None = None, *, verdicts: Sequence[str] | None = None,
                 top_n: int | None = 25, min_length: int = 1) -> pd.DataFrame:
    """The slices in the default order (:meth:`Comparison.top`: the distinct findings, the other
    significant slices and the rest, each at least the minimum size first, the change in the bad
    direction first), optionally only some verdicts, at most ``top_n`` rows."""
    m = c.metric(metric).name
    return c.top(len(c) if top_n is None else int(top_n), metric=m, verdict=verdicts, min_length=min_length)


def worst_slice(c: Comparison, metric: str | None = None) -> pd.DataFrame:
    """The slice to name first: of those called ``worse`` (the distinct findings among them when
    there are any: a slice worse only because it holds a finding's rows is not named first), the one
    whose interval guarantees the largest change in the bad direction (its end nearest zero), so a
    small refinement whose point estimate is larger but indicative does not displace its cohort
    (one row, or none)."""
    s = c.statistics(metric)
    worse = compare_view(c, s.name, verdicts=["worse"], top_n=None)
    if not len(worse):
        return worse
    if s.finding is not None:
        finding = np.asarray(s.finding, dtype=bool)[worse.index.to_numpy()]
        if finding.any():
            worse = worse[finding]
    at = worse.index.to_numpy()
    bound = pd.Series(s.change_ci_low[at] if s.metric.worse_when == "up" else -s.change_ci_high[at], index=worse.index)
    return worse.loc[[bound.astype(float).idxmax()]]


def compare_display_frame(c: Comparison, rows: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """``rows`` formatted for people: rates as percentages, the change in points."""
    s = c.statistics(metric)
    b = s.metric.binary
    label = metric_label(s.name)
    at = rows.index.to_numpy()  # the rows' positions in the comparison

    def col(key: str) -> list:
        """The statistic ``key`` at the rows, as the table's column holds it."""
        return pd.Series(getattr(s, key)).iloc[at].tolist()

    return pd.DataFrame({
        "Slice": [i or "(whole dataset)" for i in rows["itemset"]],
        "Rows": [format_count(x) for x in rows["count"]],
        f"{label} rows": [format_count(x) for x in s.count[at]],
        f"Model {label}": [format_value(x, b) for x in col("value")],
        f"Reference {label}": [format_value(x, b) for x in col("reference")],
        "Change": [format_divergence(x, b) for x in col("change")],
        "Change interval": [_signed_interval(lo, hi, b) for lo, hi in zip(col("change_ci_low"), col("change_ci_high"))],
        "q": [format_p(x) for x in col("change_q")],
        "Min size": ["yes" if x else "no" for x in col("meets_min_size")],
        # the one word for a verdict below the minimum size, as the slice table says it: 'worse · indicative'
        "Verdict": [verdict_label(v, None, None, ok) for v, ok in zip(col("verdict"), col("meets_min_size"))],
        **({"Finding": [finding_label(a, e) for a, e in zip(col("finding"), col("explained_by"))]}
           if s.finding is not None else {}),
    }, index=rows.index)


def _signed_interval(low: object, high: object, binary: bool) -> str:
    if is_undefined(low) or is_undefined(high):
        return format_interval(low, high, binary)
    return f"[{format_divergence(low, binary)}, {format_divergence(high, binary)}]"


def compare_table_figure(display: pd.DataFrame, *, height: int | None = None) -> go.Figure:
    """The comparison table (from :func:`compare_display_frame`) as a Plotly table, the verdict
    cell coloured by verdict (the slice table's figure with the comparison's colours)."""
    return slice_table_figure(display, height=height,
                              color_of=lambda v: COMPARE_VERDICT_COLORS.get(str(v).split(" · ")[0], "#868e96"))


def change_interval_figure(c: Comparison, rows: pd.DataFrame, metric: str | None = None, *,
                           level_label: str | None = None) -> go.Figure:
    """Each slice's change (model − reference) with its interval, against zero.

    One line per slice (top to bottom in the order of ``rows``), coloured by verdict; slices
    below the minimum size as open dots. Zero is a solid line, the band ±δ (no change worth
    acting on) is shaded, the whole dataset's change is a dashed line. Rates in points.
    """
    s = c.statistics(metric)
    info = s.metric
    m, binary = info.name, info.binary
    if not len(rows):
        raise DivergenceInputError("No slice to draw.")
    scale = 100.0 if binary else 1.0
    delta = float(c.assessment.min_size[m].delta) * scale
    overall = float(s.change[0]) * scale
    labels = [wrap_itemset(i or "(whole dataset)") for i in rows["itemset"]]
    at = rows.index.to_numpy()  # the rows' positions in the comparison
    verdicts = pd.Series(s.verdict, dtype=object).iloc[at].set_axis(rows.index).astype(str)
    meets = pd.Series(s.meets_min_size).iloc[at].set_axis(rows.index).astype(bool)
    counts = s.count[at]
    fig = go.Figure()
    fig.add_vrect(x0=-delta, x1=delta, fillcolor="rgba(28,126,214,0.10)", line_width=0, layer="below")
    fig.add_vline(x=0.0, line_color="#495057", line_width=1.5)
    fig.add_vline(x=overall, line_color="#868e96", line_dash="dash", line_width=1.5)
    unit = " pp" if binary else ""
    value, lo, hi = (np.asarray(x, dtype=float)[at] * scale for x in (s.change, s.change_ci_low, s.change_ci_high))
    itemsets, model, ref = rows["itemset"].to_numpy(), s.value[at], s.reference[at]
    add_interval_traces(
        fig, rows, labels, verdicts, meets, value, lo, hi,
        color_of=lambda v: COMPARE_VERDICT_COLORS.get(v, "#868e96"),
        name_of=lambda v, indicative: v + (" (below the minimum size)" if indicative else ""),
        hover=lambda sel, v, a, b: [
            f"{plotly_text(s or '(whole dataset)')}<br>model {format_value(x, binary)}, reference {format_value(y, binary)}"
            f"<br>change {format_divergence(d / scale, binary)} {_signed_interval(e / scale, f / scale, binary)}"
            f"<br>{format_count(k)} rows · {verdict}"
            for s, x, y, d, e, f, k, verdict in zip(itemsets[sel], model[sel], ref[sel], v, a, b, counts[sel],
                                                     verdicts.to_numpy()[sel])])
    fig.update_xaxes(range=axis_range([0.0, overall, -delta, delta] + list(lo) + list(hi)), zeroline=False)
    level = level_label or f"{c.assessment.confidence:.0%} intervals"
    worse = "right" if info.worse_when == "up" else "left"
    interval_layout(fig, labels,
                    f"change in {figure_label(m)} (model − reference){unit}, {level}; worse to the {worse}. "
                    f"Band: ±δ = {format_divergence(delta / scale, binary).lstrip('+')}; dashed: whole dataset "
                    f"{format_divergence(overall / scale, binary)}")
    return fig


def change_contribution_figure(contributions: pd.DataFrame, *, binary: bool = False) -> go.Figure:
    """The Shapley contributions of a slice's items to its change beyond the whole dataset's
    (from :meth:`Comparison.contributions`), as bars, largest on top."""
    from .figures import contribution_figure

    a = contributions.attrs
    m = a.get("metric", "metric")
    change, overall = a.get("change", float("nan")), a.get("overall_change", float("nan"))
    title = (f"{plotly_text(a.get('itemset', ''))}<br><sup>change in {figure_label(m)}: "
             f"{format_divergence(change, binary)} here, {format_divergence(overall, binary)} over the whole dataset "
             f"(items sum to the difference, {format_divergence(change - overall, binary)})</sup>")
    shown = contributions.copy()
    if binary:  # rates in percentage points, as everywhere else
        for col in ("contribution", "contribution_low", "contribution_high"):
            if col in shown:
                shown[col] = 100.0 * shown[col]
    shown.attrs = dict(a, metric="the change")  # the legend: "raises the change", "lowers the change"
    fig = contribution_figure(shown, title=title)
    fig.update_traces(hovertemplate="%{y}: %{x:+.4g}" + (" pp" if binary else "") + "<extra></extra>")
    fig.update_xaxes(title_text=f"contribution to the change in {figure_label(m)} beyond the whole dataset's"
                                + (" (pp)" if binary else ""))
    return fig
